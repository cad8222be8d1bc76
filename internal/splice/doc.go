// Package splice lays a tool's output into the prompt copy under the engine's reminder
// blocks: the two parts of streamrules.Splice, which the root package returns joined and
// the middleware keeps apart, so the clean view of a prompt (callbacks) drops exactly the
// blocks the engine wrote.
//
//	blocks := splice.Blocks(reminders)                  // each reminder's block and a newline
//	body := splice.Body(output, blocks != "", max, marker) // marker gone under blocks, cut, neutralised
//	promptCopy := blocks + body                          // streamrules.Splice(output, reminders, opt)
//
// Both are deterministic, so the same call spliced in every later tour is byte-identical.
package splice
