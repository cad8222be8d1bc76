package middleware_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// compliantRussian2K is a compliant Telegram reply of about 2 KB in Russian: two bytes a
// letter, so 8-byte chunks end mid-word everywhere.
func compliantRussian2K() string {
	return strings.Repeat("Погода в Париже сегодня мягкая, дует лёгкий ветерок. ", 22) + "\n\n↩ #4711"
}

// chatMove is one move of a chat in the given environments, the nine seeded rules
// loaded and message_id 4711 set, through the stock functions agent over llm (wrapped
// in a chunk counter) and a shell tool; it returns the output, the client's chunks, the
// rig and the shell tool.
func chatMove(t *testing.T, llm llms.Model, cfg *streamrules.Config, env ...string) (string, []clientChunk, *rig, *echoTool) {
	t.Helper()
	return chatMoveOn(t, llm, true, cfg, env...)
}

// chatMoveOn is chatMove; count false leaves out the chunk counter, so the guard wraps the
// provider's client itself and applies its shims (compat.go); the chunks' at is then 0.
func chatMoveOn(t *testing.T, llm llms.Model, count bool, cfg *streamrules.Config, env ...string) (string, []clientChunk, *rig, *echoTool) {
	t.Helper()
	r := newRig(t, cfg, allSeedRules(t)...)
	counter := &chunkCounter{Model: llm}
	if !count {
		counter = &chunkCounter{}
	} else {
		llm = counter
	}
	shell := &echoTool{name: "shell"}
	exec, _ := r.executor(kindFunctions, llm, shell)
	ctx, move := r.eng.BeginMove(context.Background(), "chat-"+strings.Join(env, "-"), env...)
	move.SetVar("message_id", "4711")
	var mu sync.Mutex
	var got []clientChunk
	stream := chains.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		mu.Lock()
		got = append(got, clientChunk{string(chunk), counter.count()})
		mu.Unlock()
		r.rec.HandleStreamingFunc(ctx, chunk)
		return nil
	})
	out, err := chains.Call(ctx, exec, map[string]any{"input": "hi"}, stream)
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	s, _ := out["output"].(string)
	mu.Lock()
	defer mu.Unlock()
	return s, append([]clientChunk(nil), got...), r, shell
}

// TestReleaseClientChats: the seeds are armed and a compliant 2 KB answer streams in
// 8-byte chunks in each chat a user meets, through the stock functions agent, the scripted
// model and LangChainGo's openai client against the local server. In every one, a client
// chat (telegram, client_ops) with destructive_shell armed included, the client's first
// chunk comes within 4 provider chunks, at least 95 % comes before the provider's last
// chunk, and the client's bytes are the answer.
func TestReleaseClientChats(t *testing.T) {
	t.Parallel()
	tg, ops, master := seeds.EnvTelegram, seeds.EnvClientOps, seeds.EnvMaster
	coding := strings.Repeat("Use a buffered channel here, then range over it until it is closed. ", 30)
	tests := []struct {
		name string
		env  []string
		text string
	}{
		{"master", []string{tg, master}, compliant2K()},
		{"plain", nil, coding},
		{"client", []string{tg, ops}, compliant2K()},
		{"client-russian", []string{tg, ops}, compliantRussian2K()},
	}
	for _, tt := range tests {
		for _, provider := range []string{"scripted", "openai"} {
			t.Run(tt.name+"/"+provider, func(t *testing.T) {
				t.Parallel()
				reply := scripted.Reply{Text: tt.text, Chunk: 8}
				var llm llms.Model = scripted.New(reply)
				if provider == "openai" {
					llm = openaitest.New(t, reply).LLM(t)
				}
				out, got, _, _ := chatMove(t, llm, nil, tt.env...)
				if out != tt.text || joined(got) != tt.text {
					t.Fatalf("output %q\nclient %q", out, joined(got))
				}
				total := len(scripted.SplitChunks(tt.text, 8))
				before := 0
				for _, c := range got {
					if c.at < total {
						before += len(c.text)
					}
				}
				t.Logf("%d provider chunks; client's first at %d; %.1f%% before the last", total, got[0].at, 100*float64(before)/float64(len(tt.text)))
				if got[0].at > 4 {
					t.Errorf("client's first chunk came at provider chunk %d of %d", got[0].at, total)
				}
				if before*100 < 95*len(tt.text) {
					t.Errorf("%d of %d bytes before the provider's last chunk", before, len(tt.text))
				}
			})
		}
	}
}

// TestGateAfterShownText: in a client chat the model says what it will do, then declares
// a forced recursive rm. The gate does not hold the text: at least 95 % of it reaches the
// client before the model's last text chunk. The call never runs and sends no tool event;
// the shown text stands; the model gets the refusal block as the call's result and the
// tour goes on with no retry spent (two model calls, no replay), and the firing is one
// refusal.
func TestGateAfterShownText(t *testing.T) {
	t.Parallel()
	said := strings.Repeat("The logs folder has grown past its quota, so I will clear it now. ", 6)
	const final = "I did not remove the logs: removing them needs the master's go-ahead.\n\n↩ #4711"
	for _, tt := range []struct{ name, said, text string }{
		{"scripted", said + "\n\n↩ #4711", said + "\n\n↩ #4711"},
		{"openai", said + "\n\n↩ #4711", said + "\n\n↩ #4711"},
		// Without its tail: the fix appends it to the shown text, and the call is still refused.
		{"openai", said, strings.TrimSpace(said) + "\n\n↩ #4711"},
	} {
		provider, text := tt.name, tt.text
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			first := scripted.Reply{Text: tt.said, Chunk: 8, ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"rm -rf ./logs"}`)}}
			m := newGateModel(t, provider, first, scripted.Reply{Text: final, Chunk: 8})
			var seen outcomes
			out, got, r, shell := chatMove(t, m.llm, &streamrules.Config{OnOutcome: seen.hook}, seeds.EnvTelegram, seeds.EnvClientOps)
			if out != final {
				t.Errorf("output %q, want %q", out, final)
			}
			if in := shell.inputs(); len(in) != 0 {
				t.Errorf("the tool ran %q", in)
			}
			if client := joined(got); client != text+final {
				t.Errorf("the client saw\n%q\nwant the shown text, then the answer\n%q", client, text+final)
			}
			textChunks := len(scripted.SplitChunks(tt.said, 8))
			before := 0
			for _, c := range got {
				if c.at < textChunks {
					before += len(c.text)
				}
			}
			if before*100 < 95*len(text) {
				t.Errorf("%d of %d bytes of the text before the model's last text chunk", before, len(text))
			}
			// The agent's own action event names the call, as for any refused call; what the
			// client is streamed does not, and no tool event is sent.
			assertClean(t, r.rec.all(), "tool start", "tool end")
			assertClean(t, joined(got), "rm -rf", "cmd")
			prompts := m.prompts()
			if len(prompts) != 2 {
				t.Fatalf("%d model calls, want 2 (the refusal is the call's result, no replay)", len(prompts))
			}
			refusal := `<system-reminder rule="destructive_shell">` + streamrulestest.RefusalLead + seedRules(t, "destructive_shell")[0].Text
			if !strings.Contains(prompts[1], refusal) {
				t.Errorf("the model was not told why:\n%s", prompts[1])
			}
			if strings.Contains(prompts[1], "<system-interrupt") {
				t.Errorf("a replay's interrupt was sent:\n%s", prompts[1])
			}
			if got := strings.Join(seen.list(), ","); !strings.Contains(got, "destructive_shell/shell/refused") || strings.Contains(got, "corrected") || strings.Contains(got, "missed_again") {
				t.Errorf("firings %s, want destructive_shell refused", got)
			}
		})
	}
}

// TestGateDiscardsWhenNothingShown: the same response in a client chat with a picture:
// look_before_refusing holds the whole text (an unbounded unanchored discard rule), so
// nothing of it was shown when the gate matches its call. Discard and replay stay as they
// were: the call never runs, the client sees only the replay's answer, and the replay
// carries the interrupt.
func TestGateDiscardsWhenNothingShown(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"scripted", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			doomed := "Cleaning the data directory for you, one moment please. "
			first := scripted.Reply{Text: doomed, Chunk: 8,
				ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"sudo rm -rf /srv/data"}`)}}
			final := "Nothing was removed; tell me which files to delete.\n\n↩ #4711"
			m := newGateModel(t, provider, first, scripted.Reply{Text: final, Chunk: 8})
			var seen outcomes
			out, got, _, shell := chatMove(t, m.llm, &streamrules.Config{OnOutcome: seen.hook},
				seeds.EnvTelegram, seeds.EnvClientOps, seeds.EnvPicture)
			if out != final {
				t.Errorf("output %q, want %q", out, final)
			}
			if in := shell.inputs(); len(in) != 0 {
				t.Errorf("the tool ran %q", in)
			}
			if seen := joined(got); seen != final {
				t.Errorf("the client saw %q; want only the replay's %q", seen, final)
			}
			prompts := m.prompts()
			if len(prompts) != 2 || !strings.Contains(prompts[1], `<system-interrupt reason="rule_violation" rule="destructive_shell">`) {
				t.Errorf("%d model calls; the replay lacks the interrupt", len(prompts))
			}
			if got := strings.Join(seen.list(), ","); !strings.Contains(got, "destructive_shell/shell/corrected") {
				t.Errorf("firings %s, want destructive_shell corrected", got)
			}
		})
	}
}
