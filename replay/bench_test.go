package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// benchRules are n rules of a realistic mix: half text rules (literals, case-insensitive
// alternations, anchored and negate rules, markdown), half tool rules over ten tools,
// most with a `when`, some with a repeat policy.
func benchRules(n int) []streamrules.Rule {
	envs := [][]string{nil, {"telegram"}, {"client_ops"}, {"telegram", "client_ops"}}
	repeats := []string{"", "", "once", "after:3"}
	var out []streamrules.Rule
	for i := range n {
		r := streamrules.Rule{
			Name: fmt.Sprintf("rule_%03d", i), Text: "Remember the house rule.",
			When: envs[i%len(envs)], Repeat: repeats[i/2%len(repeats)],
		}
		if i%2 == 0 {
			r.Scope = "text"
			switch i / 2 % 5 {
			case 0:
				r.Condition = fmt.Sprintf(`(?i)\b(forbidden|banned|word%d)\b`, i)
			case 1:
				r.Condition = fmt.Sprintf(`literal phrase %d`, i)
			case 2:
				r.Condition, r.Negate = `↩ #\d+\s*$`, true
			case 3:
				r.Condition = `!\[[^\]]*\]\([^)]*\)`
			case 4:
				r.Condition = fmt.Sprintf(`(?m)^\s*TODO %d`, i)
			}
		} else {
			r.Scope = fmt.Sprintf("tool:tool_%d", i%10)
			r.Condition = fmt.Sprintf(`"path":"[^"]*%d`, i%7)
		}
		out = append(out, r)
	}
	return out
}

// benchTranscript is moves lines over 1,000 chats: answers of 200–600 bytes, a third with
// a markdown image or a missing tail, 0–3 tool calls each.
func benchTranscript(moves int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	envs := [][]string{nil, {"telegram"}, {"client_ops"}, {"telegram", "client_ops"}}
	w := &bytes.Buffer{}
	tw := replay.NewWriter(w)
	next := map[string]int64{}
	filler := strings.Repeat("The disk has plenty of room and the service is healthy. ", 12)
	for i := range moves {
		chat := fmt.Sprintf("chat-%d", rng.IntN(1000))
		next[chat]++
		m := replay.Move{Chat: chat, Move: next[chat], Env: envs[rng.IntN(len(envs))]}
		for range rng.IntN(4) {
			m.Tools = append(m.Tools, replay.ToolCall{
				Name: fmt.Sprintf("tool_%d", rng.IntN(12)),
				Args: fmt.Sprintf(`{"path": "/srv/file%d.txt", "mode": "append"}`, rng.IntN(100)),
			})
		}
		answer := filler[:200+rng.IntN(400)]
		switch i % 3 {
		case 0:
			answer += " ![chart](https://example.org/c.png)"
		case 1:
			answer += fmt.Sprintf("\n↩ #%d", i)
		}
		m.Answer = answer
		if err := tw.Write(m); err != nil {
			panic(err)
		}
	}
	return w.Bytes()
}

// BenchmarkRun replays 100,000 moves against 100 rules per op (the goal: at most
// 10 s on a 2-core machine), with a worker per core and with one. parse_only reads the
// same lines without the engine: the baseline that shows what the engine adds.
func BenchmarkRun(b *testing.B) {
	moves := 100_000
	if testing.Short() {
		moves = 10_000
	}
	data := benchTranscript(moves)
	rules := benchRules(100)
	for _, workers := range []int{0, 1} {
		name := fmt.Sprintf("moves=%d/rules=100", moves)
		if workers == 1 {
			name += "/workers=1" // the baseline: one goroutine replays, beside the decoder
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "bench", R: bytes.NewReader(data)}}, &replay.Options{Environments: seeds.Environments(), Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Moves != moves {
					b.Fatalf("%d moves", rep.Moves)
				}
			}
		})
	}
	b.Run(fmt.Sprintf("moves=%d/parse_only", moves), func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			rd := replay.NewReader(bytes.NewReader(data), "bench")
			n := 0
			for {
				if _, err := rd.Next(); err != nil {
					break
				}
				n++
			}
			if n != moves {
				b.Fatalf("%d moves", n)
			}
		}
	})
}
