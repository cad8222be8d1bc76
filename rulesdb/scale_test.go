package rulesdb_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// The tables as docs/scale.md distributes them on Citus.
var (
	chatTables      = []string{"stream_chat", "stream_chat_rule", "stream_chat_writer", "stream_rule_stat"}
	referenceTables = []string{"stream_rules", "stream_rules_version"}
	// stream_rule_counter and stream_rule_delivery_counter (migration 0008) are keyed by
	// rule: docs/scale.md keeps them on the coordinator (local tables), written once per
	// batch, never per move.
	batchOnly = []string{"stream_rule_counter", "stream_rule_delivery_counter"}
)

// TestHotPathSingleChat plays moves of several chats at once, on PostgreSQL, and reads off
// every statement the store sends (docs/scale.md):
//
//   - each is in the registry of hot-path statements (rulesdb.HotStatements);
//   - each but the batch names a single chat_id in its arguments, or none and touches only
//     reference data; on Citus with chat_id as the distribution column it is single-shard;
//   - the batch (group commit) is the one statement that writes many chats; each of its
//     rows carries its chat_id, and it is the only one to touch the per-rule counters;
//   - loadChats, the shared read of concurrent BeginMoves (readbatch.go), is the one
//     statement that reads many chats: multi-shard on Citus (TestSharedRead sends it).
func TestHotPathSingleChat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, pgtest.DSN(t), &rulesdb.Config{ReloadInterval: -1})
	createRules(t, s, append(slices.Clone(claimRules), streamrules.Rule{Name: "after_shell", Scope: "tool:shell", Repeat: "after:2", Text: "Now and then."}))
	eng := newEngine(t, s, nil)
	ryw, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger(), ReadYourWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ryw.Close)
	registry := rulesdb.HotStatements(s)
	byText := map[string]string{}
	for name, q := range registry {
		byText[q] = name
	}
	type sent struct {
		query string
		args  []any
	}
	var (
		mu  sync.Mutex
		log []sent
	)
	rulesdb.SetTrace(s, func(q string, args []any) {
		mu.Lock()
		log = append(log, sent{q, args})
		mu.Unlock()
	})
	chats := []string{"scale-a", "scale-b", "scale-c", "scale-d"}
	var wg sync.WaitGroup
	for i, chat := range chats {
		e := eng
		if i%2 == 1 {
			e = ryw
		}
		wg.Go(func() {
			for range 4 {
				mctx, m := e.BeginMove(ctx, chat)
				m.ToolReminders(mctx, "shell", "{}")
				if err := m.End(mctx, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The batch must be among what was sent. The flushers take what is queued when they
	// wake: under load one may take a lone record, written alone (saveMovePG). Records of
	// several chats queued at once then go in one batch.
	sentBatch := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(log, func(st sent) bool { return st.query == registry["saveBatchPG"] })
	}
	for i := int64(1); !sentBatch() && i <= 50; i++ {
		for _, chat := range chats {
			if err := s.QueueMove(streamrules.MoveRecord{ChatID: chat, Move: 100 + i, Answered: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RulesVersion(ctx); err != nil {
		t.Fatal(err)
	}
	rulesdb.SetTrace(s, nil)

	tableRe := regexp.MustCompile(`\bstream_[a-z_]+`)
	seen := map[string]int{}
	for _, st := range log {
		name, ok := byText[st.query]
		if !ok {
			t.Errorf("statement not in the registry of hot-path statements:\n%s", st.query)
			continue
		}
		seen[name]++
		ids := chatIDs(st.args)
		tables := tableRe.FindAllString(st.query, -1)
		for _, tb := range tables {
			switch {
			case slices.Contains(referenceTables, tb):
			case slices.Contains(chatTables, tb):
				if len(ids) == 0 {
					t.Errorf("%s touches %s without a chat_id", name, tb)
				}
			case slices.Contains(batchOnly, tb):
				if name != "saveBatchPG" && name != "saveMovePG" {
					t.Errorf("%s touches %s: only the writes may", name, tb)
				}
			default:
				t.Errorf("%s touches %s, which docs/scale.md does not place", name, tb)
			}
		}
		if name != "saveBatchPG" && name != "loadChats" && len(ids) > 1 {
			t.Errorf("%s names %d chats %v: want one (single-shard)", name, len(ids), ids)
		}
	}
	for _, want := range []string{"loadChat", "saveMovePG", "saveBatchPG", "claimOnce", "claimAfter", "rulesVersion"} {
		if seen[want] == 0 {
			t.Errorf("%s was never sent: the test does not cover it (sent: %v)", want, seen)
		}
	}
	t.Logf("statements sent: %v", seen)
}

// chatIDs returns the distinct chat ids among a statement's arguments (strings and
// string arrays that start with "scale-").
func chatIDs(args []any) []string {
	var out []string
	add := func(v string) {
		if strings.HasPrefix(v, "scale-") && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			add(v)
		case pq.StringArray:
			for _, x := range v {
				add(x)
			}
		}
	}
	return out
}
