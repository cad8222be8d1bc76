// Package statshttp serves an engine's stats summary over HTTP: every loaded rule with its
// firings, outcomes and would-fires, zero included, as JSON. It keeps net/http out of the
// root package; the host mounts the handler on its own mux.
//
//	mux.Handle("/v1/stats", statshttp.Handler(eng))
//
//	GET /v1/stats
//	{"rules":[{"rule":"local_shell_for_his_machine","fired":3,"outcomes":{"complied":2,"repeated":1},"shadow":0,"last_fired_at":"…"}, …]}
//
// Each request calls [streamrules.Engine.Stats], which reads the store's per-rule counters
// (a few rows per rule, however many firings there were; see rulesdb's doc). The store must
// count firings ([streamrules.StatsCounter], or [streamrules.FiringCounter] for fired
// alone); one that cannot gets 500 and an error line on the engine's logger. GET and HEAD are
// served; other methods get 405 with an Allow header.
package statshttp
