package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/gateway"
	"github.com/streamrules/streamrules/seeds"
)

// A gateway over the seeded rules in front of an upstream whose answer puts an image in
// markdown, which Telegram does not render: the client gets the answer as the image fix
// and the reply-tail fix repair it, in place, with no second upstream call.
func Example() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"Here: ![cat](https://x/cat.png)"},"finish_reason":"stop"}]}`)
	}))
	defer upstream.Close()

	store, _ := streamrules.NewMemoryStore(seeds.MustDefault().Rules, seeds.Environments()...)
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	gw, err := gateway.New(eng, &gateway.Config{Upstream: upstream.URL + "/v1"})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"show me the cat"}]}`))
	req.Header.Set("Authorization", "Bearer sk-...")
	req.Header.Set(gateway.HeaderChat, "chat-42")
	req.Header.Set(gateway.HeaderEnv, "telegram")
	req.Header.Set(gateway.HeaderVars, "message_id=4711")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	fmt.Println(out.Choices[0].Message.Content)
	// Output:
	// Here: https://x/cat.png
	//
	// ↩ #4711
}
