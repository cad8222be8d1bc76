package streamrules_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"
)

// TestReleaseShortInvalidUTF8: a first chunk of a few stray continuation bytes is held or
// released like any other text, never read past its start.
func TestReleaseShortInvalidUTF8(t *testing.T) {
	t.Parallel()
	sign := streamrules.Rule{Name: "signed", Scope: "text", Mode: streamrules.ModeInterrupt, Negate: true,
		Condition: `signed$`, Text: "End with your signature.", Fix: &streamrules.Fix{AppendIfMissing: " -- signed"}}
	for _, chunk := range []string{"\x80", "\x80\x80", "\xbf\xbf\xbf"} {
		_, m := quietEngine(t, nil, sign).BeginMove(context.Background(), "c")
		if final := m.HeldScanner().Release([]byte(chunk)); len(final) > len(chunk) {
			t.Errorf("Release(%q) = %q", chunk, final)
		}
	}
}

// TestReleaseTwoRepairs: two replace repairs armed in one tour stream together, each
// over the text the one before it left, when their patterns share no rune; against the
// final check on random answers (checkRelease), and with something released early. A
// third whose pattern shares runes with them is watched: its rewrite could make or break
// their matches.
func TestReleaseTwoRepairs(t *testing.T) {
	rule := func(name, pattern string) streamrules.Rule {
		return streamrules.Rule{Name: name, Scope: "text", Text: "no", When: []string{"telegram"},
			Condition: strings.ReplaceAll(strings.ReplaceAll(pattern, "(", "(?:"), `\(?:`, `\(`),
			Fix:       &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: pattern, With: "$1"}}}
	}
	pieces := []string{"<a>", "{1}", "<", ">", "{", "}", "x ", "<<b>>", "{{2}}", "a", "1", "<{1}>", "[b]", " "}
	for _, set := range [][]streamrules.Rule{
		{rule("angle", `<([a-z]+)>`), rule("curly", `\{([0-9]+)\}`)},
		{rule("angle", `<([a-z]+)>`), rule("curly", `\{([0-9]+)\}`), rule("square", `\[([a-z0-9<>]+)\]`)},
	} {
		eng := quietEngine(t, nil, set...) // gate_test.go
		r := rand.New(rand.NewPCG(1, 2))
		early := 0
		for range 2000 {
			var b strings.Builder
			for n := 1 + r.IntN(14); n > 0; n-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if msg := checkRelease(t, eng, r, b.String(), false); msg != "" {
				t.Fatalf("%d rules, answer %q: %s", len(set), b.String(), msg)
			}
			_, move := eng.BeginMove(context.Background(), "c", "telegram")
			if s := move.HeldScanner(); s != nil && released(s, b.String()+strings.Repeat(" x", 8)) != "" {
				early++
			}
		}
		if two := len(set) == 2; two != (early > 0) {
			t.Errorf("%d rules: %d of 2000 answers released early", len(set), early)
		}
		eng.Close()
	}
}

// TestReleaseClaimShapes: random claim-shaped repairs (a literal, maybe case-folded, maybe
// led by \b, maybe run on by a class, replaced by a plain text), one or two to a tour,
// against the final check on random answers; and some must stream.
func TestReleaseClaimShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lits := []string{"ab", "a b", "b:", "k:", "ba"}
	classes := []string{"", `[^\n]*`, `[a-z ]*`, `[^\n.]*`}
	withs := []string{"x", "no.", "Q", "b a", "zz", "a"}
	pieces := []string{"ab", "AB", "a b", "K:", "\u212a:", "b:", " ", "\n", "x", "za", ".", "ba", "Ba", "k"}
	streamed := 0
	for range 150 {
		var rules []streamrules.Rule
		for i := r.IntN(2); i >= 0; i-- {
			lit := lits[r.IntN(len(lits))]
			if r.IntN(2) == 0 {
				lit = "(?i)" + lit
			}
			if r.IntN(2) == 0 {
				lit = `\b` + lit
			}
			rules = append(rules, streamrules.Rule{Name: "c" + string(rune('a'+i)), Scope: "text", Text: "no", Condition: lit,
				Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: lit + classes[r.IntN(len(classes))], With: withs[r.IntN(len(withs))]}}})
		}
		eng := quietEngine(t, nil, rules...) // gate_test.go
		for range 40 {
			var b strings.Builder
			for n := 1 + r.IntN(12); n > 0; n-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if msg := checkRelease(t, eng, r, b.String(), false, "picture"); msg != "" {
				t.Fatalf("rules %+v %+v, answer %q: %s", rules[0].Fix.ReplaceRegex, rules[len(rules)-1].Fix.ReplaceRegex, b.String(), msg)
			}
			_, move := eng.BeginMove(context.Background(), "c", "picture")
			if released(move.HeldScanner(), b.String()+"\n"+strings.Repeat("x ", 12)) != "" {
				streamed++
			}
		}
		eng.Close()
	}
	if streamed == 0 {
		t.Error("no claim-shaped repair streamed")
	}
	t.Logf("%d of %d answers streamed", streamed, 150*40)
}

// TestReleaseRepairsThatMeet: two repairs whose patterns share no rune still cannot
// chain when one reads \b (the other's rewrite changes the rune before a match: <9cd
// becomes <cd, a claim) or puts a replacement the other reads (cd becomes <1>, an
// image): each pair here discards an answer, so nothing may be released before it.
func TestReleaseRepairsThatMeet(t *testing.T) {
	fix := func(name, cond, pattern, with string) streamrules.Rule {
		return streamrules.Rule{Name: name, Scope: "text", Text: "no", Condition: cond,
			Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: pattern, With: with}}}
	}
	for _, tt := range []struct {
		rules  []streamrules.Rule
		answer string
	}{
		{[]streamrules.Rule{fix("a", `(?:[<>]+)9`, `([<>]+)9`, "$1"), fix("b", `\bcd`, `\bcd`, "x")}, "<9cd"},
		{[]streamrules.Rule{fix("a", `<(?:[0-9]+)>`, `<([0-9]+)>`, "$1"), fix("b", `cd`, `cd`, "<1>")}, "cd"},
	} {
		eng := quietEngine(t, nil, tt.rules...) // gate_test.go
		ctx, move := eng.BeginMove(context.Background(), "c")
		head := strings.Repeat("Nothing here to repair, and a lot of it. ", 3)
		got := released(move.HeldScanner(), head+tt.answer)
		if v := move.CheckAnswer(ctx, head+tt.answer); !v.Discard || got != "" {
			t.Errorf("%q: released %q, verdict %+v; want a discard and nothing released", tt.answer, got, v)
		}
		eng.Close()
	}
}

// releasedAt streams answer in 8-byte chunks through a held scanner of m and returns how
// many bytes were released by the time the whole answer had arrived (before its verdict).
func releasedAt(m *streamrules.Move, answer string) int {
	s := m.HeldScanner()
	n := 0
	for i := 8; i < len(answer)+8; i += 8 {
		n = len(s.Release([]byte(answer[:min(i, len(answer))])))
	}
	return n
}

// TestReleaseOverHolding: tours where no rule left in them could discard, repair or cut
// the answer stream. With replays off, look_before_refusing (no fix) cannot discard, so a
// Telegram tour with a picture streams under its repairs alone; so does the replay tour
// after a discard spent the move's retry; and a max_words bound the answer has passed
// settles its all_of.
func TestReleaseOverHolding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answer := strings.Repeat("The picture shows a cat asleep on a warm windowsill. ", 8) + "\n\n↩ #4711"
	picture := []string{seeds.EnvTelegram, seeds.EnvPicture}

	off := quietEngine(t, &streamrules.Config{MaxRetriesPerMove: -1}, seedRules(t)...)
	_, m := off.BeginMove(ctx, "off", picture...)
	m.SetVar("message_id", "4711")
	if !m.Armed() {
		t.Fatal("the Telegram repairs are not armed with replays off")
	}
	if n := releasedAt(m, answer); n < len(answer)-len("\n\n↩ #4711")-8 {
		t.Errorf("replays off: %d of %d bytes released before the end", n, len(answer))
	}

	eng := quietEngine(t, nil, seedRules(t)...)
	mctx, m := eng.BeginMove(ctx, "replay", picture...)
	m.SetVar("message_id", "4711")
	if v := m.CheckAnswer(mctx, "👍"); !v.Discard {
		t.Fatalf("the bare emoji was not discarded: %+v", v)
	}
	if n := releasedAt(m, answer); n < len(answer)-len("\n\n↩ #4711")-8 {
		t.Errorf("the replay: %d of %d bytes released before the end", n, len(answer))
	}

	short := streamrules.AllOf(streamrules.MaxWords(5), streamrules.Contains(`(?i)\bbye\b`))
	rule := streamrules.Rule{Name: "no_curt_bye", Scope: "text", Predicate: &short, Text: "Say more than bye."}
	_, m = quietEngine(t, nil, rule).BeginMove(ctx, "count")
	if n := releasedAt(m, answer); n < len(answer)-streamrulestest.ReleaseBatchBytes-8 {
		t.Errorf("max_words passed: %d of %d bytes released before the end", n, len(answer))
	}
	_, m = quietEngine(t, nil, rule).BeginMove(ctx, "count2")
	if n := releasedAt(m, "Bye now."); n != 0 {
		t.Errorf("an answer still within max_words released %d bytes", n)
	}
}

// TestReleaseNeverSplitsARune: the seeded image and tail rules armed, message_id 4711,
// and an answer ending in a multi-byte space cut inside it by the chunking. The client
// must never get part of a rune: what it is streamed, joined, is the accepted answer
// byte for byte. Before, the image rule's fast path moved the release point past the cut
// rune and the tail's trailing-space trim saw a non-space byte: the client got
// "Merci\xc2", then the rest sent from the wrong offset.
func TestReleaseNeverSplitsARune(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, nil, seedRules(t)...)
	ctx := context.Background()
	// Every multi-byte space of Unicode's White_Space property (PropList.txt, as Go's
	// unicode tables carry it), not only the three the bug was found with.
	var spaces []string
	for _, rg := range unicode.White_Space.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			if utf8.RuneLen(r) > 1 {
				spaces = append(spaces, string(r))
			}
		}
	}
	if len(spaces) < 15 {
		t.Fatalf("only %d multi-byte spaces in unicode.White_Space", len(spaces))
	}
	for _, space := range spaces {
		answer := "Merci" + space
		for cut := len("Merci") + 1; cut < len(answer); cut++ {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			m.SetVar("message_id", "4711")
			s := m.HeldScanner()
			var sent []byte
			for _, text := range []string{answer[:cut], answer} {
				got := s.Release([]byte(text))
				if !strings.HasPrefix(string(got), string(sent)) {
					t.Fatalf("%q cut at %d: release went back from %q to %q", answer, cut, sent, got)
				}
				sent = append(sent[:0], got...)
				if !utf8.Valid(sent) {
					t.Errorf("%q cut at %d: released %q, part of a rune", answer, cut, sent)
				}
			}
			v := m.CheckAnswer(ctx, answer)
			if v.Discard || v.Fixed != "Merci\n\n↩ #4711" {
				t.Fatalf("%q: verdict %+v", answer, v)
			}
			if !strings.HasPrefix(v.Fixed, string(sent)) {
				t.Errorf("%q cut at %d: released %q, the accepted answer is %q", answer, cut, sent, v.Fixed)
			}
		}
	}
}

// TestReleaseTailOnlyWhenTheFixCures: a rule that must end the answer (its condition
// anchored at the end) streams as a tail only when its append fix makes the answer end right; with a fix that does not, the rule
// may still discard the answer, so nothing is released before the end.
func TestReleaseTailOnlyWhenTheFixCures(t *testing.T) {
	t.Parallel()
	text := []byte("Here is the whole answer, long enough to be read by now. ")
	for _, tt := range []struct {
		cond, add string
		released  bool
	}{
		{`signed$`, " -- signed", true},
		{`signed$`, " -- bye", false},
		// Not anchored at the end: the answer may say it anywhere, so the rule is watched.
		{`signed`, " -- signed", false},
		{`sign(ed)?`, " -- signed", false},
	} {
		sign := streamrules.Rule{Name: "signed", Scope: "text", Mode: streamrules.ModeInterrupt, Negate: true,
			Condition: tt.cond, Text: "End with your signature.", Fix: &streamrules.Fix{AppendIfMissing: tt.add}}
		eng := quietEngine(t, nil, sign)
		_, m := eng.BeginMove(context.Background(), "c")
		final := m.HeldScanner().Release(text)
		if got := len(final) > 0; got != tt.released {
			t.Errorf("condition %q, fix %q: released %q", tt.cond, tt.add, final)
		}
	}
}

// TestReleaseHoldsForAnUnconditionalRule: a text rule without a condition fires on every
// answer, so nothing of the answer is released while it is armed.
func TestReleaseHoldsForAnUnconditionalRule(t *testing.T) {
	t.Parallel()
	always := streamrules.Rule{Name: "always", Scope: "text", Mode: streamrules.ModeInterrupt, Text: "Think again."}
	_, m := quietEngine(t, nil, always).BeginMove(context.Background(), "c")
	if final := m.HeldScanner().Release([]byte("A whole answer that is long enough to be read.")); len(final) != 0 {
		t.Errorf("released %q under a rule that fires on every answer", final)
	}
}

// TestReleaseWatchesTheRepairedText: while an image is repaired into its plain link, a
// watched rule is judged on the text the client would get, not only on what the model
// wrote: a rule (anchored, so it settles on what the model wrote) that only the repaired
// text breaks keeps the answer held.
func TestReleaseWatchesTheRepairedText(t *testing.T) {
	t.Parallel()
	img := streamrules.Rule{Name: "image_as_link", Scope: "text", Mode: streamrules.ModeInterrupt,
		Condition: `!\[[^\]]*\]\(([^)\s]+)\)`, Text: "Send links, not images.",
		Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}}
	bare := streamrules.Rule{Name: "no_bare_link_first", Scope: "text", Mode: streamrules.ModeInterrupt,
		Condition: `^Here it is: https://`, Text: "Introduce a link with words."}
	text := []byte("Here it is: ![cat](https://x/c.png) and some more words to pass the batch size.")
	_, alone := quietEngine(t, nil, img).BeginMove(context.Background(), "c")
	if final := alone.HeldScanner().Release(text); !strings.Contains(string(final), ": https://x/c.png") {
		t.Fatalf("without the watched rule, released %q: want the repaired link", final)
	}
	_, m := quietEngine(t, nil, img, bare).BeginMove(context.Background(), "c")
	if final := m.HeldScanner().Release(text); strings.Contains(string(final), "https://") {
		t.Errorf("released %q, which the watched rule forbids once repaired", final)
	}
}

// TestImageFixAllocLinear: repairing an answer dense with markdown images (the seeded
// telegram_markdown_image, in a Telegram tour) allocates in proportion to the answer, in
// CheckAnswer and in the held stream the guard runs (Release per chunk, then the check):
// the bytes allocated per byte of answer at 256 KB stay within a small factor of those
// at 32 KB. Copying the rest of the answer after each rewrite allocated the answer once
// per image (2 GB for 256 KB) and took seconds; the repair is the same either way.
func TestImageFixAllocLinear(t *testing.T) {
	var rules []streamrules.Rule
	for _, r := range seedRules(t) {
		if r.Name == "telegram_markdown_image" {
			rules = append(rules, r)
		}
	}
	eng := quietEngine(t, nil, rules...)
	ctx := context.Background()
	allocated := func(f func()) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	var perByte [2][2]float64 // [check, stream][32 KB, 256 KB]
	for k, size := range []int{32 << 10, 256 << 10} {
		text := strings.Repeat("![a](b) ", size/8)
		want := strings.Repeat("b ", size/8)
		perByte[0][k] = allocated(func() {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			if v := m.CheckAnswer(ctx, text); v.Fixed != want || v.Discard {
				t.Fatalf("%d bytes: verdict %+v, want the images repaired", size, v.Rules)
			}
		}) / float64(size)
		perByte[1][k] = allocated(func() {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			s := m.HeldScanner()
			buf := []byte(text)
			var released []byte
			for i := 64; i <= len(buf); i += 64 {
				released = s.Release(buf[:i])
			}
			if len(released) < len(want)-16 || !strings.HasPrefix(want, string(released)) {
				t.Fatalf("%d bytes: released %d bytes, not the repair's prefix", size, len(released))
			}
			if v := m.CheckAnswer(ctx, text); v.Fixed != want {
				t.Fatalf("%d bytes: the check after the stream did not repair", size)
			}
		}) / float64(size)
	}
	for j, path := range []string{"CheckAnswer", "held stream"} {
		small, large := perByte[j][0], perByte[j][1]
		t.Logf("%s: %.1f bytes allocated a byte on 32 KB, %.1f on 256 KB", path, small, large)
		if large > 2*small+8 {
			t.Errorf("%s: %.1f bytes allocated a byte on 32 KB, %.1f on 256 KB: it grows with the answer", path, small, large)
		}
	}
}

// BenchmarkImageFix: repairing 64 KB, 100 KB and 10 MB of markdown images with the seeded
// image rule in a Telegram tour: "check" is CheckAnswer on the whole answer, "stream" the
// held stream (Release per 64-byte chunk, then the check). Compare cpu-ns/op: 10 MB
// against 100 KB is the growth (100 times the bytes); 64 KB against the 10 ms bound.
//
//	go test . -run '^$' -bench ImageFix -cpu 1 -count 3
func BenchmarkImageFix(b *testing.B) {
	var rules []streamrules.Rule
	for _, r := range seedRules(b) {
		if r.Name == "telegram_markdown_image" {
			rules = append(rules, r)
		}
	}
	eng := quietEngine(b, nil, rules...)
	ctx := context.Background()
	for _, mode := range []string{"check", "stream"} {
		for _, size := range []int{64 << 10, 100 << 10, 10 << 20} {
			text := strings.Repeat("![a](b) ", size/8)
			buf := []byte(text)
			b.Run(fmt.Sprintf("%s/%dKB", mode, size>>10), func(b *testing.B) {
				start := cputime.Process()
				for b.Loop() {
					_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
					if mode == "stream" {
						s := m.HeldScanner()
						for i := 64; i <= len(buf); i += 64 {
							s.Release(buf[:i])
						}
					}
					if v := m.CheckAnswer(ctx, text); len(v.Fixed) != size/4 {
						b.Fatal("not repaired")
					}
				}
				cputime.Report(b, start)
			})
		}
	}
}

// BenchmarkReleasePerChunk: the release logic's cost per chunk beside the early scan's,
// on the ~5 KB clean answer of BenchmarkScanPerChunk in 1,000 chunks, with a Telegram
// tail, the seeded rules all early, in a Telegram tour with no picture and message_id set
// (the image, tail and bare-emoji rules armed): "hold" appends the chunks to a buffer,
// "scan" adds the early scan (Scan), "release" adds Release to it, as the middleware's
// held path calls them per chunk. The move made its speech (a generate_speech call
// succeeded), so unbacked_tool_claim is folded away and the release streams; with the
// claim unbacked it would hold the Telegram tour whole. "release-claim" is a tour without
// the Telegram rules where the claim is live (the user asked for audio, no speech was
// made): the release follows its repair (a literal replace) on the answer. Compare ns/chunk and allocs of scan and release:
//
//	go test . -run '^$' -bench 'ReleasePerChunk|ScanPerChunk' -count 6 -benchmem
func BenchmarkReleasePerChunk(b *testing.B) {
	eng := quietEngine(b, nil, earlySeedRules(b)...) // gate_test.go
	clean := strings.Repeat("A plain answer, sentence after sentence, nothing amiss. ", 90) + "\n\n↩ #4711"
	chunks := make([][]byte, 0, 1000)
	for i := 0; i < len(clean); i += 5 {
		chunks = append(chunks, []byte(clean[i:min(i+5, len(clean))]))
	}
	ctx := context.Background()
	for _, mode := range []string{"hold", "scan", "release", "release-claim"} {
		b.Run(mode, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			released := 0
			for b.Loop() {
				var m *streamrules.Move
				if mode == "release-claim" {
					_, m = eng.BeginMove(ctx, "c")
					m.SetInput("Read this out as audio, please.")
				} else {
					_, m = eng.BeginMove(ctx, "c", seeds.EnvTelegram)
					m.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
				}
				m.SetVar("message_id", "4711")
				var s *streamrules.Scanner
				switch mode {
				case "scan":
					s = m.EarlyScanner()
				case "release", "release-claim":
					s = m.HeldScanner()
				}
				buf = buf[:0]
				for _, c := range chunks {
					buf = append(buf, c...)
					if s != nil {
						if _, cut := s.Scan(ctx, buf); cut {
							b.Fatal("a clean answer was cut")
						}
						if mode != "scan" {
							released = len(s.Release(buf))
						}
					}
				}
			}
			if strings.HasPrefix(mode, "release") && released < len(clean)-len("↩ #4711")-2 {
				b.Fatalf("released %d of %d bytes", released, len(clean))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
		})
	}
}

// earlySeedRules is seedRules, every rule early.
func earlySeedRules(t testing.TB) []streamrules.Rule {
	rules := seedRules(t)
	for i := range rules {
		rules[i].Early = true
	}
	return rules
}

// The release's soundness, proven by test: random rule sets (the seeds, random regexes
// with and without fixes, negates, anchors, trees) judge random answers streamed in
// random chunks. The oracle is "hold everything, then judge" (CheckAnswer on the whole
// answer): whatever Release let go must be a prefix of what the client is finally given
// (the answer, or its repair), and a discarded answer must have had nothing let go.

var relAtoms = []string{
	"a", "b", "!", `\(`, `\)`, `\[`, `\]`, " ", "#", "↩", "1", `\n`, "👍",
	`[^)\s]`, `[^\]]`, `\d`, `\s`, `\S`, ".", `\w`, "[ab]", `\p{So}`,
}

func relPattern(r *rand.Rand, depth int) string {
	if depth > 2 || r.IntN(3) == 0 {
		var b strings.Builder
		for n := 1 + r.IntN(3); n > 0; n-- {
			b.WriteString(relAtoms[r.IntN(len(relAtoms))])
		}
		return b.String()
	}
	switch r.IntN(6) {
	case 0:
		return relPattern(r, depth+1) + "|" + relPattern(r, depth+1)
	case 1:
		return "(?:" + relPattern(r, depth+1) + ")" + []string{"*", "+", "?", "{0,2}"}[r.IntN(4)]
	case 2:
		return "^" + relPattern(r, depth+1)
	case 3:
		return relPattern(r, depth+1) + `\s*$`
	case 4:
		return `\b` + relPattern(r, depth+1)
	}
	return relPattern(r, depth+1) + relPattern(r, depth+1)
}

func relPredicate(r *rand.Rand, depth int) streamrules.Predicate {
	if depth > 1 || r.IntN(2) == 0 {
		switch r.IntN(11) {
		case 9:
			return streamrules.MinWords(1 + r.IntN(4))
		case 10:
			return streamrules.MaxChars(2 + r.IntN(12))
		case 6:
			return relContext(r)
		case 0:
			return streamrules.NotContains(relPattern(r, 1))
		case 1:
			return streamrules.StartsWith(relPattern(r, 1))
		case 2:
			return streamrules.EndsWith(relPattern(r, 1))
		case 3:
			return streamrules.MaxWords(1 + r.IntN(4))
		}
		return streamrules.Contains(relPattern(r, 1))
	}
	kids := []streamrules.Predicate{relPredicate(r, depth+1), relPredicate(r, depth+1)}
	switch r.IntN(3) {
	case 0:
		return streamrules.AllOf(kids...)
	case 1:
		return streamrules.AnyOf(kids...)
	}
	return streamrules.Not(kids[0])
}

// relTools are the tools of the random tool records and context atoms.
var relTools = []string{"generate_speech", "write_file", "run_tests"}

// relContext returns a random context atom (its value is constant during one answer, so
// the release folds it: release_context.go).
func relContext(r *rand.Rand) streamrules.Predicate {
	tool := relTools[r.IntN(len(relTools))]
	switch r.IntN(6) {
	case 0:
		return streamrules.InputContains("[ab]")
	case 1:
		return streamrules.InputNotContains("a")
	case 2:
		return streamrules.ToolCalled(tool)
	case 3:
		return streamrules.ToolFailed(tool)
	case 4:
		return streamrules.EditedUncheckedBy([]string{"write_file"}, []string{"run_tests"})
	}
	return streamrules.ToolSucceeded(tool)
}

// relFacts gives the move random context: an input or none, and a few tool calls.
func relFacts(ctx context.Context, r *rand.Rand, move *streamrules.Move) {
	if r.IntN(3) > 0 {
		move.SetInput([]string{"", "a", "b", "xyz"}[r.IntN(4)])
	}
	for n := r.IntN(4); n > 0; n-- {
		tool := relTools[r.IntN(len(relTools))]
		if r.IntN(3) == 0 {
			move.ToolError(tool)
		} else {
			move.ToolReminders(ctx, tool, "{}")
		}
	}
}

func relRule(r *rand.Rand, i int) streamrules.Rule {
	rule := streamrules.Rule{Name: fmt.Sprintf("r%02d", i), Scope: "text", Text: "no", When: []string{"telegram"}}
	switch r.IntN(8) {
	case 0:
		p := relPredicate(r, 0)
		rule.Predicate = &p
	case 1:
		rule.Condition = relPattern(r, 0)
		a := relPredicate(r, 1)
		rule.AppliesWhen = &a
	default:
		rule.Condition = relPattern(r, 0)
	}
	rule.Negate = r.IntN(3) == 0
	switch r.IntN(6) {
	case 0:
		rule.Fix = &streamrules.Fix{AppendIfMissing: []string{"\n\n↩ #{{message_id}}", " ↩ #1", "{{unset}}!", ")"}[r.IntN(4)]}
	case 1:
		rule.Fix = &streamrules.Fix{PrependIfMissing: "a "}
	case 2:
		// A replace over the rule's own condition, its group the replacement: the image
		// rule's shape, on other patterns.
		inner := relPattern(r, 1)
		rule.Condition = relPattern(r, 2) + "(?:" + inner + ")" + relPattern(r, 2)
		rule.Predicate, rule.AppliesWhen, rule.Negate = nil, nil, false
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{
			Pattern: strings.Replace(rule.Condition, "(?:"+inner+")", "("+inner+")", 1), With: "$1"}}
	case 3:
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: relPattern(r, 1), With: "x"}}
	case 4:
		// The claim's shape: a literal, maybe led by \b, maybe run on by a class, replaced
		// by a plain text; the rule fires on the literal, maybe gated by context.
		lit := []string{"a b", "(?i)ab", "!a", "#1", "b)"}[r.IntN(5)]
		if r.IntN(2) == 0 {
			lit = `\b` + lit
		}
		cond := streamrules.Contains(lit)
		if r.IntN(2) == 0 {
			cond = streamrules.AllOf(cond, streamrules.Not(relContext(r)))
		}
		rule.Condition, rule.Predicate, rule.AppliesWhen, rule.Negate = "", &cond, nil, false
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{
			Pattern: lit + []string{"", `[^\n]*`, `[^\n↩]*`, `[a ]*`}[r.IntN(4)], With: []string{"x", "no.", "b", "a b!"}[r.IntN(4)]}}
	}
	if r.IntN(8) == 0 {
		rule.Shadow = true
	}
	rule.Early = r.IntN(3) == 0 // early cuts and release share the scanner: a cut must find nothing shown
	return rule
}

var relPieces = []string{
	"![a](b)", "![x](![y](z))", "!![a]([b](c))", "![", "](", "↩ #42", "↩ #", "👍", " ", "\n", "ab", "a b",
	"!", "(", ")", "[", "]", "1", "#", "word ", "🙂", "done ", "Audio saved: a.ogg", "xaudio saved:",
	"\u00a0", "\u3000", "\u202f", "é", // multi-byte, spaces among them: the chunks cut inside them
	"cannot view the picture", "I ", "![p](q.jpg)", // a refusal another rule's repair may undo
	"so the stream goes on past the early scan's batch of bytes. ",
}

func relAnswer(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12); n >= 0; n-- {
		b.WriteString(relPieces[r.IntN(len(relPieces))])
	}
	if r.IntN(2) == 0 {
		// Long enough for the early scan's batch (earlyBatchBytes): what came before is
		// scanned while the answer still streams.
		b.WriteString(strings.Repeat(relPieces[len(relPieces)-1], 2))
	}
	return b.String()
}

func seedRules(t testing.TB) []streamrules.Rule {
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out []streamrules.Rule
	for _, name := range set.Names() {
		r, _ := set.Rule(name)
		r.Repeat = ""
		out = append(out, r)
	}
	return out
}

// checkRelease streams answer in random chunks through a held scanner of a fresh move
// and judges it whole; it reports what went wrong, or "".
func checkRelease(t testing.TB, eng *streamrules.Engine, r *rand.Rand, answer string, setVar bool, env ...string) string {
	ctx := context.Background()
	if env == nil {
		env = []string{"telegram"}
	}
	begin := func(chat string, facts uint64) *streamrules.Move {
		_, move := eng.BeginMove(ctx, chat, env...)
		if setVar {
			move.SetVar("message_id", "42")
		}
		relFacts(ctx, rand.New(rand.NewPCG(facts, 1)), move)
		return move
	}
	facts := r.Uint64()
	move := begin("c", facts)
	if !move.Armed() {
		return ""
	}
	s := move.HeldScanner()
	var text, released []byte
	for i := 0; i < len(answer); {
		n := 1 + r.IntN(8)
		text = append(text, answer[i:min(i+n, len(answer))]...)
		i += n
		if v, cut := s.Scan(ctx, text); cut {
			if len(released) > 0 {
				return fmt.Sprintf("cut early (%v) after %q was released", v.Rules, released)
			}
			// An early cut must be a verdict the whole answer reaches too, other rules'
			// fixes applied: judged whole in a move with the same facts, it is discarded
			// for the rules the cut named.
			relStats.cuts.Add(1)
			whole := begin("w", facts).CheckAnswer(ctx, answer)
			for _, rule := range v.Rules {
				if !whole.Discard || !slices.Contains(whole.Rules, rule) {
					return fmt.Sprintf("cut early at %d bytes on %v; judged whole: %+v", len(text), v.Rules, whole)
				}
			}
			return ""
		}
		got := s.Release(text)
		if !strings.HasPrefix(string(got), string(released)) {
			return fmt.Sprintf("release went back: %q after %q", got, released)
		}
		if !utf8.Valid(got) {
			return fmt.Sprintf("released part of a rune: %q", got)
		}
		released = append(released[:0], got...)
	}
	v := move.CheckAnswer(ctx, answer)
	relStats.checks.Add(1)
	if len(released) > 0 {
		relStats.released.Add(1)
		if v.Fixed != "" {
			relStats.fixed.Add(1)
		}
	}
	if v.Discard {
		if len(released) > 0 {
			return fmt.Sprintf("discarded (%v) after %q was released", v.Rules, released)
		}
		return ""
	}
	final := answer
	if v.Fixed != "" {
		final = v.Fixed
	}
	if !strings.HasPrefix(final, string(released)) {
		return fmt.Sprintf("released %q, final %q (rules %v)", released, final, v.Rules)
	}
	return ""
}

func runReleaseCase(t testing.TB, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var rules []streamrules.Rule
	if r.IntN(2) == 0 {
		for _, s := range seedRules(t) {
			if r.IntN(4) > 0 {
				rules = append(rules, s)
			}
		}
	}
	for i := r.IntN(4); i >= 0; i-- {
		rule := relRule(r, i)
		if _, err := regexp.Compile(rule.Condition); err != nil {
			continue
		}
		if streamrules.Validate(&rule, seeds.Environments()) != nil {
			continue
		}
		rules = append(rules, rule)
	}
	cfg := &streamrules.Config{EarlyInterrupt: r.IntN(3) == 0}
	if r.IntN(5) == 0 {
		cfg.MaxRetriesPerMove = -1 // replays off: only the fixes can change an answer
	}
	eng := quietEngine(t, cfg, rules...) // gate_test.go
	for range 20 {
		answer := relAnswer(r)
		env := []string{"telegram"}
		switch r.IntN(4) {
		case 0:
			env = []string{"picture"} // a tour without the Telegram rules: the claim streams alone
		case 1:
			env = []string{"telegram", "picture"} // look_before_refusing beside the Telegram repairs
		}
		if msg := checkRelease(t, eng, r, answer, r.IntN(4) > 0, env...); msg != "" {
			var desc []string
			for _, rule := range rules {
				desc = append(desc, fmt.Sprintf("%s neg=%v cond=%q pred=%v applies=%v fix=%+v", rule.Name, rule.Negate, rule.Condition, rule.Predicate, rule.AppliesWhen, rule.Fix))
			}
			t.Fatalf("seed %d, answer %q: %s\nrules:\n%s", seed, answer, msg, strings.Join(desc, "\n"))
		}
	}
}

var relStats struct{ checks, released, fixed, cuts atomic.Int64 }

// TestReleaseSound runs the differential over a fixed series of random rule sets. It
// fails too when the release never let anything go, or never through a fix: a proof
// that holds everything proves nothing.
func TestReleaseSound(t *testing.T) {
	n := uint64(400)
	if testing.Short() {
		n = 60
	}
	c0, r0, f0, k0 := relStats.checks.Load(), relStats.released.Load(), relStats.fixed.Load(), relStats.cuts.Load()
	for seed := range n {
		runReleaseCase(t, seed)
	}
	c, rel, fx, k := relStats.checks.Load()-c0, relStats.released.Load()-r0, relStats.fixed.Load()-f0, relStats.cuts.Load()-k0
	t.Logf("%d answers judged, %d with speech released early, %d of them repaired; %d cut early", c, rel, fx, k)
	if rel < c/10 || fx == 0 || k == 0 {
		t.Errorf("too little released or cut to prove anything: %d of %d answers, %d repaired, %d cut", rel, c, fx, k)
	}
}

// FuzzReleaseSound is TestReleaseSound over the fuzzer's seeds:
//
//	go test . -run '^$' -fuzz FuzzReleaseSound -fuzztime 60s
func FuzzReleaseSound(f *testing.F) {
	for s := range uint64(8) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { runReleaseCase(t, seed) })
}
