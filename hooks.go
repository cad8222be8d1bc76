package streamrules

import (
	"context"
	"time"
)

// Telemetry hooks. The root package imports no metrics library: a host (or the metrics
// package, which supplies every hook) gets plain calls and counts what it likes.
// Every hook is called synchronously, without any lock of the engine or the move held,
// so it may call back into them; keep it cheap, it runs on the hot path.
//
//   - Config.OnFire: each firing (a would-fire too), when it happens. Its Outcome is set
//     only where it is known at once (kept, shadow); see OnOutcome for the final one.
//   - Config.OnOutcome: each firing once more, from End, with its outcome decided
//     (empty only for a discard whose replay never came: the move failed first).
//   - Config.OnCheck: one check: a tool call's reminders (Move.ToolReminders, mode
//     remind) or an answer's verdict (Move.CheckAnswer, mode interrupt), with the time it
//     took and whether the answer was discarded. Unset, no clock is read.
//   - Config.OnReload: each Reload (the first one in New included), with its duration,
//     its error and what the rule set holds after it.
//   - Config.OnSpeech: each held tour's speech, when the tour ends (see SpeechInfo).
//   - Config.OnSave: each store write of a finished move (Store.SaveMove), with its
//     duration and error.

// LoadSummary is what a compiled rule set made of the store's rows.
type LoadSummary struct {
	Loaded   int // valid, enabled rules in force
	Disabled int // disabled rows the store returned (stores that filter them return none)
	Skipped  int // bad or duplicate rows, skipped with a warning
}

// ReloadInfo is one Reload, as Config.OnReload gets it.
type ReloadInfo struct {
	Duration time.Duration
	Err      error       // the store could not be read: the rules loaded before stay
	Changed  bool        // the rows differed and the set was recompiled
	Rules    LoadSummary // the set in force after the reload
	Names    []string    // the names of the rules in force after the reload, by name
}

// CheckInfo is one check, as Config.OnCheck gets it.
type CheckInfo struct {
	Mode     Mode // ModeRemind: a tool call's reminders; ModeInterrupt: an answer's verdict
	Duration time.Duration
	Discard  bool // the answer was discarded and its tour is replayed
	// Gate: a gate discarded a response whose answer check (reported before, with its
	// Duration) had accepted it. This report counts the discard only: Duration is 0.
	Gate bool
}

// SaveInfo is one store write of a finished move (Store.SaveMove), as Config.OnSave gets
// it.
type SaveInfo struct {
	Duration time.Duration
	Err      error // the write failed, or did not finish within Config.StoreTimeout
}

type hooks struct {
	onOutcome func(context.Context, Firing)
	onCheck   func(CheckInfo)
	onReload  func(ReloadInfo)
	onSave    func(SaveInfo)
	onSpeech  func(SpeechInfo)
}

func hooksOf(cfg *Config) hooks {
	return hooks{onOutcome: cfg.OnOutcome, onCheck: cfg.OnCheck, onReload: cfg.OnReload, onSave: cfg.OnSave, onSpeech: cfg.OnSpeech}
}

// loadSummary returns what the rule set in force made of the store's rows.
func (e *Engine) loadSummary() LoadSummary {
	if set := e.rules.Load(); set != nil {
		return LoadSummary{Loaded: len(set.all), Disabled: set.disabled, Skipped: len(set.skipped)}
	}
	return LoadSummary{}
}

// reloaded reports a Reload to OnReload. Deferred by Reload, under reloadMu.
func (e *Engine) reloaded(start time.Time, changed *bool, err *error) {
	info := ReloadInfo{Duration: time.Since(start), Err: *err, Changed: *changed, Rules: e.loadSummary()}
	if set := e.rules.Load(); set != nil {
		info.Names = make([]string, len(set.all))
		for i, c := range set.all {
			info.Names[i] = c.Name
		}
	}
	e.hooks.onReload(info)
}

// checked reports one check to OnCheck; a no-op (no clock read) when unset.
// Use as: defer m.eng.checked(ModeRemind, m.eng.checkStart(), nil).
func (e *Engine) checked(mode Mode, start time.Time, v *Verdict) {
	if e.hooks.onCheck != nil {
		e.hooks.onCheck(CheckInfo{Mode: mode, Duration: time.Since(start), Discard: v != nil && v.Discard})
	}
}

// gateDiscarded reports a discard a gate made of a response its answer check accepted:
// the answer's own report said Discard false, and a discard must be counted once.
func (e *Engine) gateDiscarded() {
	if e.hooks.onCheck != nil {
		e.hooks.onCheck(CheckInfo{Mode: ModeInterrupt, Discard: true, Gate: true})
	}
}

func (e *Engine) checkStart() time.Time {
	if e.hooks.onCheck == nil {
		return time.Time{}
	}
	return time.Now()
}

// SpeechInfo is one held tour's speech, as Config.OnSpeech gets it and the log line
// "held speech" says it.
type SpeechInfo struct {
	HeldBytes          int  // the answer's bytes the tour held (all it streamed)
	ReleasedEarlyBytes int  // of them, sent to the client before the answer was complete
	Discarded          bool // the answer was thrown away (nothing of it was sent)
	// FirstVisible is the time from the provider's first chunk to the client's first
	// chunk; Visible is false when the client got nothing of this tour.
	FirstVisible time.Duration
	Visible      bool
}

// SpeechDone reports one held tour's speech: a debug log line "held speech" with fields
// held_bytes, released_early_bytes and first_visible_ms, and Config.OnSpeech. The
// middleware calls it once per held tour.
func (m *Move) SpeechDone(ctx context.Context, s SpeechInfo) {
	attrs := []any{"chat", m.chatID, "move", m.number, "held_bytes", s.HeldBytes,
		"released_early_bytes", s.ReleasedEarlyBytes, "discarded", s.Discarded}
	if s.Visible {
		attrs = append(attrs, "first_visible_ms", float64(s.FirstVisible.Microseconds())/1000)
	}
	if s.Discarded && s.ReleasedEarlyBytes > 0 {
		// The release's one promise broken: never expected (the soundness fuzzer's property).
		m.eng.log.ErrorContext(ctx, "held speech: part of a discarded answer was released", attrs...)
	} else {
		m.eng.log.DebugContext(ctx, "held speech", attrs...)
	}
	if m.eng.hooks.onSpeech != nil {
		m.eng.hooks.onSpeech(s)
	}
}
