package metrics_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/metrics"
)

// TestSpeechMetrics: a held tour's speech, as the middleware reports it through
// Move.SpeechDone, lands in the time-to-first-visible-chunk histogram and the byte
// counters; a tour the client never saw adds no observation; a hook the host had is
// still called.
func TestSpeechMetrics(t *testing.T) {
	t.Parallel()
	col := metrics.NewCollector(nil)
	var host []streamrules.SpeechInfo
	cfg := col.Instrument(&streamrules.Config{
		Logger:   slog.New(slog.DiscardHandler),
		OnSpeech: func(s streamrules.SpeechInfo) { host = append(host, s) },
	})
	eng, err := streamrules.New(context.Background(), memStore(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, move := eng.BeginMove(context.Background(), "c")
	move.SpeechDone(ctx, streamrules.SpeechInfo{HeldBytes: 2000, ReleasedEarlyBytes: 1990, FirstVisible: 300 * time.Microsecond, Visible: true})
	move.SpeechDone(ctx, streamrules.SpeechInfo{HeldBytes: 40, Discarded: true})
	want := `
# HELP streamrules_speech_first_visible_seconds Time from the provider's first chunk to the client's first chunk, in tours whose speech was held and shown.
# TYPE streamrules_speech_first_visible_seconds histogram
streamrules_speech_first_visible_seconds_bucket{le="1e-05"} 0
streamrules_speech_first_visible_seconds_bucket{le="4e-05"} 0
streamrules_speech_first_visible_seconds_bucket{le="0.00016"} 0
streamrules_speech_first_visible_seconds_bucket{le="0.00064"} 1
streamrules_speech_first_visible_seconds_bucket{le="0.00256"} 1
streamrules_speech_first_visible_seconds_bucket{le="0.01024"} 1
streamrules_speech_first_visible_seconds_bucket{le="0.04096"} 1
streamrules_speech_first_visible_seconds_bucket{le="0.16384"} 1
streamrules_speech_first_visible_seconds_bucket{le="0.65536"} 1
streamrules_speech_first_visible_seconds_bucket{le="2.62144"} 1
streamrules_speech_first_visible_seconds_bucket{le="10.48576"} 1
streamrules_speech_first_visible_seconds_bucket{le="41.94304"} 1
streamrules_speech_first_visible_seconds_bucket{le="+Inf"} 1
streamrules_speech_first_visible_seconds_sum 0.0003
streamrules_speech_first_visible_seconds_count 1
# HELP streamrules_speech_held_bytes_total Bytes of answers streamed while text rules were armed (held speech).
# TYPE streamrules_speech_held_bytes_total counter
streamrules_speech_held_bytes_total 2040
# HELP streamrules_speech_released_early_bytes_total Bytes of held speech sent to the client before the answer was complete.
# TYPE streamrules_speech_released_early_bytes_total counter
streamrules_speech_released_early_bytes_total 1990
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want),
		"streamrules_speech_first_visible_seconds", "streamrules_speech_held_bytes_total", "streamrules_speech_released_early_bytes_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(col); err != nil || len(problems) != 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	if len(host) != 2 {
		t.Errorf("the host's own hook got %d calls", len(host))
	}
}
