package rulesdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
)

func TestFiringsByDayAndLatest(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, nil)
		ctx := context.Background()
		day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		at := []struct {
			rule string
			at   time.Time
		}{
			{"a", day.Add(-time.Minute)},     // before the window
			{"a", day},                       // its first instant
			{"a", day.Add(23 * time.Hour)},   // same day
			{"b", day.Add(24*time.Hour + 1)}, // next day
			{"a", day.Add(47*time.Hour + 59*time.Minute)},
		}
		for i, f := range at {
			rec := streamrules.MoveRecord{ChatID: "c", Move: int64(i + 1), Answered: true, Firings: []streamrules.Firing{
				{Rule: f.rule, ChatID: "c", Move: int64(i + 1), Mode: streamrules.ModeRemind, Outcome: streamrules.OutcomeComplied, At: f.at}}}
			if err := s.SaveMove(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.FiringsByDay(ctx, day)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			rule string
			day  time.Time
			n    int64
		}{{"a", day, 2}, {"a", day.AddDate(0, 0, 1), 1}, {"b", day.AddDate(0, 0, 1), 1}}
		if len(got) != len(want) {
			t.Fatalf("FiringsByDay = %+v", got)
		}
		for i, w := range want {
			if got[i].Rule != w.rule || !got[i].Day.Equal(w.day) || got[i].N != w.n {
				t.Errorf("row %d = %+v, want %+v", i, got[i], w)
			}
		}
		latest, err := s.LatestFirings(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(latest) != 2 || latest[0].Move != 5 || latest[1].Move != 4 || latest[0].Outcome != streamrules.OutcomeComplied || latest[0].ChatID != "c" {
			t.Errorf("LatestFirings(2) = %+v", latest)
		}
		if none, err := s.LatestFirings(ctx, 0); err != nil || len(none) != 0 {
			t.Errorf("LatestFirings(0) = %v, %v", none, err)
		}
	})
}
