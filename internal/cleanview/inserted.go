package cleanview

import (
	"context"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// Inserted records what the engine put into one tour's prompt copy, exactly as it put it:
// each tool result laid under reminder blocks, and each retry's interrupt message with the
// discarded answer right before it. The clean view removes exactly these and nothing else,
// so whatever a user typed or a model answered reaches the client byte for byte, even when
// it looks like an engine block. The middleware fills it.
//
// Why record rather than look for blocks: the prompt copy's own text is neutralised, but
// the callbacks also carry what the user and the model said as they said it, and a
// pattern cannot tell a block the engine wrote from the same bytes typed by a user.
//
// An Inserted is safe for concurrent use.
type Inserted struct {
	mu      sync.Mutex
	splices []splice
	retries []retry
}

type splice struct{ prompt, clean string }

type retry struct {
	discarded string // the discarded answer's text as put in the prompt; "" when it said nothing
	interrupt string
}

type insertedKey struct{}

// WithInserted returns a context whose clean handlers read in as what the engine inserted
// into the prompt copies of calls made under it.
func WithInserted(ctx context.Context, in *Inserted) context.Context {
	return context.WithValue(ctx, insertedKey{}, in)
}

// InsertedFrom returns the record ctx carries, or nil.
func InsertedFrom(ctx context.Context) *Inserted {
	in, _ := ctx.Value(insertedKey{}).(*Inserted)
	return in
}

// AddSplice records that a tool result went into the prompt copy as prompt, which is clean
// with the engine's reminder blocks laid in front. Equal strings are recorded once.
func (in *Inserted) AddSplice(prompt, clean string) {
	if prompt == clean {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, s := range in.splices {
		if s.prompt == prompt {
			return
		}
	}
	in.splices = append(in.splices, splice{prompt, clean})
}

// AddRetry records a retry: the human-role interrupt message and, right before it, the
// discarded answer's AI message with text discarded ("" when none was put there).
func (in *Inserted) AddRetry(discarded, interrupt string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.retries = append(in.retries, retry{discarded, interrupt})
}

// Text returns s with every recorded splice replaced by its clean form.
func (in *Inserted) Text(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, sp := range in.splices {
		if strings.Contains(s, sp.prompt) {
			s = strings.ReplaceAll(s, sp.prompt, sp.clean)
		}
	}
	return s
}

// retryOf returns the recorded retry whose interrupt message m is.
func (in *Inserted) retryOf(m llms.MessageContent) (retry, bool) {
	if m.Role != llms.ChatMessageTypeHuman {
		return retry{}, false
	}
	text, ok := onlyText(m)
	if !ok {
		return retry{}, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, r := range in.retries {
		if r.interrupt == text {
			return r, true
		}
	}
	return retry{}, false
}

func onlyText(m llms.MessageContent) (string, bool) {
	if len(m.Parts) != 1 {
		return "", false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return t.Text, ok
}

// CleanMessages returns the messages of a model call as the client should see them: each
// tool result without the reminder blocks the engine laid on it, each retry's interrupt
// message and the discarded answer right before it removed. Only what in records is
// removed; a nil in returns the messages as they are. The input is not modified.
func (in *Inserted) CleanMessages(ms []llms.MessageContent) []llms.MessageContent {
	if in == nil {
		return ms
	}
	out := make([]llms.MessageContent, 0, len(ms))
	for _, m := range ms {
		if r, ok := in.retryOf(m); ok {
			if n := len(out); n > 0 && r.discarded != "" && out[n-1].Role == llms.ChatMessageTypeAI {
				if t, ok := onlyText(out[n-1]); ok && t == r.discarded {
					out = out[:n-1]
				}
			}
			continue
		}
		var parts []llms.ContentPart
		for i, p := range m.Parts {
			var clean llms.ContentPart
			switch p := p.(type) {
			case llms.TextContent:
				if t := in.Text(p.Text); t != p.Text {
					clean = llms.TextContent{Text: t}
				}
			case llms.ToolCallResponse:
				if t := in.Text(p.Content); t != p.Content {
					p.Content = t
					clean = p
				}
			}
			if clean != nil {
				if parts == nil {
					parts = append([]llms.ContentPart(nil), m.Parts...)
				}
				parts[i] = clean
			}
		}
		if parts != nil {
			m = llms.MessageContent{Role: m.Role, Parts: parts}
		}
		out = append(out, m)
	}
	return out
}
