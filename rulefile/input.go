package rulefile

import "github.com/streamrules/streamrules/internal/ruleinput"

// The strict JSON readers the packages beside this one use (the rule tools, replay, the
// command) are rulefile's code, reached through internal/ruleinput so that they are not
// part of this package's API.
func init() {
	ruleinput.Register(ruleinput.Impl{
		CheckJSON:    checkJSON,
		DecodeJSON:   decodeJSON,
		DecodeFields: decodeFields,
		ReadAll:      readAll,
	})
}
