// Package cleanview holds the records one tour (one model call of a guarded agent) carries in
// its context between the middleware, which writes them, and package clientview, whose
// clean handler reads them: [Inserted], what the engine put into the prompt copy, and
// [Hold], the callback events held back while the tour's speech is held.
//
// They are internal because only those two packages meet here; a host sees their effect
// through clientview.Clean and clientview.CleanMessages.
//
//	ins := &cleanview.Inserted{}
//	ins.AddSplice(blocks+body, body)                 // middleware: a tool result it spliced
//	ctx = cleanview.WithInserted(ctx, ins)
//	clean := cleanview.InsertedFrom(ctx).CleanMessages(ms) // callbacks: what the client sees
//
// # Held events
//
// The middleware gives each held tour a Hold (cleanview.WithHold); the clean handler adds the
// provider's answer events to it, and the middleware calls Release on an accepted answer
// and Drop on a discarded one, so a discarded answer never reaches the client's handler.
package cleanview
