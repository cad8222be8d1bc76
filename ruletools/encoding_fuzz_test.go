package ruletools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/rawjson"
	"github.com/streamrules/streamrules/internal/rulewalk"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

// FuzzToolFieldEncoding: one string field of the master's create or edit input, any of
// them (the rule is walked, so every field is a target), set to any value: a rule the
// tool stores holds no NUL and no invalid UTF-8 anywhere, and a NUL written as \u0000 is
// refused with the field named in the tool's output.
func FuzzToolFieldEncoding(f *testing.F) {
	var n int
	base := rulewalk.RichRule()
	rulewalk.Strings(&base, func(string, *string) { n++ })
	for i := range n {
		f.Add(uint16(i), "a\x00b", i%2 == 0)
		f.Add(uint16(i), "a\xffb", i%2 == 1)
	}
	s, err := streamrules.NewMemoryStore(nil, seeds.Environments()...)
	if err != nil {
		f.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(eng.Close)
	tl := map[string]tools.Tool{}
	for _, tool := range ruletools.New(s, eng) {
		tl[tool.Name()] = tool
	}
	ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
	f.Fuzz(func(t *testing.T, index uint16, value string, edit bool) {
		r := rulewalk.RichRule()
		want, i := "", 0
		rulewalk.Strings(&r, func(path string, s *string) {
			if i == int(index)%n {
				want, *s = path, "PLACEHOLDER_VALUE"
			}
			i++
		})
		if strings.HasPrefix(want, "when[") {
			want = "when"
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		input := strings.Replace(string(data), `"PLACEHOLDER_VALUE"`, rawjson.String(value), 1)
		tool := tl["stream_rule_create"]
		if edit {
			if _, err := s.CreateRule(ctx, rulewalk.RichRule()); err != nil {
				t.Fatal(err)
			}
			tool = tl["stream_rule_edit"]
		}
		defer func() {
			for _, name := range []string{"rich_rule", r.Name} {
				_ = s.DeleteRule(ctx, name) // whatever the input renamed it to
			}
		}()
		res := call(t, ctx, tool, input)
		if res.OK {
			stored, err := s.ListRules(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range stored {
				rulewalk.Strings(&stored[i], func(path string, s *string) {
					if strings.IndexByte(*s, 0) >= 0 || !utf8.ValidString(*s) {
						t.Fatalf("%s stored a NUL or invalid UTF-8 in %s: %q", tool.Name(), path, *s)
					}
				})
			}
			return
		}
		if nul := strings.IndexByte(value, 0) >= 0 && utf8.ValidString(value) && !strings.ContainsFunc(value, func(r rune) bool { return r != 0 && r < 0x20 }); nul && res.Field != want {
			t.Fatalf("%s: a NUL in %s was refused naming %q: %+v", tool.Name(), want, res.Field, res)
		}
	})
}
