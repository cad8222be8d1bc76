package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/gateway"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkGateway measures the gateway's overhead against a direct connection to the
// same upstream in the same run: the default seeds loaded, a Telegram move (text rules armed,
// so a streamed answer is held and released as its plan allows) with a compliant answer
// of 200 chunks. Read the ratios gateway/direct of ns/op, p50-µs and p99-µs, at 1 and at
// 100 concurrent clients. Every request is a move of its own chat.
func BenchmarkGateway(b *testing.B) {
	answer := strings.Repeat("All is well here. ", 44) + "↩ #1" // 800 bytes
	up := openaitest.NewFunc(b, func(openaitest.Request) scripted.Reply { return scripted.Reply{Text: answer, Chunk: 4} })
	store, err := streamrules.NewMemoryStore(seeds.MustDefault().Rules, seeds.Environments()...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	gw, err := gateway.New(eng, &gateway.Config{Upstream: up.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	// The benchmark's client, direct or through the gateway, is configured as the gateway's
	// own upstream client: like with like on both hops.
	client := &http.Client{Transport: gateway.UpstreamTransport()}
	for _, stream := range []bool{false, true} {
		for _, par := range []int{1, 100} {
			for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"gateway", srv.URL}} {
				mode := "complete"
				if stream {
					mode = "stream"
				}
				b.Run(mode+"/clients="+itoa(par)+"/"+target.name, func(b *testing.B) {
					body := `{"model":"m","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
						`,"messages":[{"role":"user","content":"how is it?"}]}`
					var mu sync.Mutex
					var lat []time.Duration
					b.SetParallelism(max(1, par/max(1, runtimeProcs())))
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						var mine []time.Duration
						for pb.Next() {
							start := time.Now()
							req, _ := http.NewRequest(http.MethodPost, target.url+"/v1/chat/completions", strings.NewReader(body))
							req.Header.Set("Authorization", "Bearer test")
							req.Header.Set("X-Streamrules-Env", "telegram")
							req.Header.Set("X-Streamrules-Vars", "message_id=1")
							resp, err := client.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode != 200 {
								b.Errorf("status %d", resp.StatusCode)
								return
							}
							mine = append(mine, time.Since(start))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					})
					b.StopTimer()
					slices.Sort(lat)
					if n := len(lat); n > 0 {
						b.ReportMetric(float64(lat[n/2].Microseconds()), "p50-µs")
						b.ReportMetric(float64(lat[n*99/100].Microseconds()), "p99-µs")
					}
				})
			}
		}
	}
}
