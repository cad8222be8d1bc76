// Package ruleinput gives the module's own readers of outside input (the rule tools'
// model input, replay's transcripts, the command's standard input) rulefile's strict
// JSON decoding, without making it part of rulefile's API: rule authors read rule files
// with rulefile.Parse and rulefile.Load; these serve the packages beside it.
//
// The functions run rulefile's code, which registers itself here when it is
// initialized, as golang.org/x/tools' go/packages fills its internal packagesinternal.
// So a package that calls them imports rulefile too (ruletools, replay and the command
// do, for rulefile.Error); without it they panic saying so. Their errors are
// *rulefile.Error values naming the field.
//
//	var in struct{ Rule string `json:"rule"` }
//	if err := ruleinput.DecodeJSON(input, &in); err != nil {
//		return ruleinput.Excerpt(err.Error())
//	}
package ruleinput
