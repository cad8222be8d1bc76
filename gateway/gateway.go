package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/streamrules/streamrules"
)

// The identity headers. They are read by the gateway and never sent upstream.
const (
	HeaderChat = "X-Streamrules-Chat"
	HeaderEnv  = "X-Streamrules-Env"
	HeaderVars = "X-Streamrules-Vars"
)

// DefaultMaxBody is the default bound on a request body: 8 MiB.
const DefaultMaxBody = 8 << 20

// DefaultIdleTimeout is how long an open move waits for its next tour by default.
const DefaultIdleTimeout = 10 * time.Minute

// DefaultMaxIdleConnsPerHost is how many idle connections to the upstream the default
// client keeps: one per concurrent client, up to this many, are reused, not redialled.
const DefaultMaxIdleConnsPerHost = 256

// UpstreamTransport is the default client's transport: http.DefaultTransport's settings,
// keeping up to DefaultMaxIdleConnsPerHost idle connections to the upstream.
func UpstreamTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no overall bound: the per-host one bounds a gateway's one upstream
	tr.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	return tr
}

// Config sets up a Gateway. Upstream is required.
type Config struct {
	// Upstream is the provider's OpenAI-compatible base URL, with its version path
	// ("https://api.openai.com/v1", "http://localhost:11434/v1"); the gateway appends
	// "/chat/completions" and "/models".
	Upstream string
	// UpstreamKey, if set, is sent upstream as "Authorization: Bearer <key>" in place of
	// the client's Authorization. Required with Keys (the client's bearer is then a
	// gateway key). Never logged.
	UpstreamKey string
	// Client makes the upstream calls. Default: a client with no overall timeout (a
	// stream lasts as long as it lasts; UpstreamTimeout bounds the waits) over
	// DefaultTransport's settings with up to DefaultMaxIdleConnsPerHost idle connections
	// kept to the upstream (net/http's default keeps 2: under concurrent clients every
	// other call would dial a new connection).
	Client *http.Client
	// UpstreamTimeout bounds the wait for the upstream's response headers, and, while it
	// streams, for each next chunk. Default 0: no bound.
	UpstreamTimeout time.Duration
	// MaxBody bounds a request body in bytes; larger bodies get 413. Default 8 MiB.
	MaxBody int64
	// IdleTimeout ends a move whose next tour has not come for this long (a client that
	// gave up): it is ended unanswered and counted. Default 10 minutes.
	IdleTimeout time.Duration
	// Keys, if set, are the gateway keys a client must present as its bearer token, and
	// the environments each may claim. Nil: no authentication (bind to loopback only).
	Keys *Keys
	// Logger gets the gateway's warnings. Default: the engine's logger.
	Logger *slog.Logger
}

// Gateway is an http.Handler that speaks the OpenAI Chat Completions protocol to
// clients and to an upstream, with the engine's stream rules acting in between.
type Gateway struct {
	eng   *streamrules.Engine
	cfg   Config
	base  string
	log   *slog.Logger
	mu    sync.Mutex
	chats map[string]*chat  // by chat id
	calls map[string]string // tool call id → chat id, for clients without a chat header
	done  chan struct{}
	once  sync.Once
}

// New returns a gateway over eng. It starts no goroutine of its own; Close ends the
// moves still open.
func New(eng *streamrules.Engine, cfg *Config) (*Gateway, error) {
	if cfg == nil || cfg.Upstream == "" {
		return nil, errors.New("gateway: Config.Upstream is required")
	}
	c := *cfg
	if c.Client == nil {
		c.Client = &http.Client{Transport: UpstreamTransport()}
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxBody < 0 || c.IdleTimeout < 0 || c.UpstreamTimeout < 0 {
		return nil, errors.New("gateway: MaxBody, IdleTimeout and UpstreamTimeout must not be negative")
	}
	if c.Keys != nil && c.UpstreamKey == "" {
		return nil, errors.New("gateway: with gateway keys, Config.UpstreamKey is required (the client's bearer is its gateway key)")
	}
	if c.Logger == nil {
		c.Logger = eng.Logger()
	}
	return &Gateway{eng: eng, cfg: c, base: strings.TrimSuffix(c.Upstream, "/"), log: c.Logger,
		chats: map[string]*chat{}, calls: map[string]string{}, done: make(chan struct{})}, nil
}

// Close ends every open move, unanswered. Requests still running finish on their own.
func (g *Gateway) Close() {
	g.once.Do(func() { close(g.done) })
	g.mu.Lock()
	chats := make([]*chat, 0, len(g.chats))
	for _, c := range g.chats {
		chats = append(chats, c)
	}
	g.mu.Unlock()
	for _, c := range chats {
		c.mu.Lock()
		g.endOpen(context.Background(), c, errClosed)
		c.mu.Unlock()
	}
}

// ServeHTTP routes POST /v1/chat/completions and GET /v1/models; anything else is 404.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST for "+r.URL.Path)
			return
		}
		g.completions(w, r)
	case "/v1/models", "/models":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use GET for "+r.URL.Path)
			return
		}
		g.models(w, r)
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("unknown path %s %s: the gateway serves POST /v1/chat/completions and GET /v1/models", r.Method, r.URL.Path))
	}
}

// models passes GET /v1/models through.
func (g *Gateway) models(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.authorize(w, r, nil); !ok {
		return
	}
	ctx, cancel := g.headerTimeout(r.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/models", nil)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "gateway: "+err.Error())
		return
	}
	g.upstreamHeaders(req, r)
	resp, err := g.cfg.Client.Do(req)
	if err != nil {
		writeError(w, http.StatusBadGateway, "upstream_error", "gateway: upstream: "+err.Error())
		return
	}
	defer resp.Body.Close()
	copyResponse(w, resp)
}

// copyResponse passes an upstream response through: status, content type, body.
func copyResponse(w http.ResponseWriter, resp *http.Response) {
	for _, h := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	for k, vs := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") || strings.EqualFold(k, "X-Request-Id") {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// hopHeaders are never forwarded.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Host": true,
	"Content-Length": true, "Accept-Encoding": true,
}

// upstreamHeaders copies the client's headers onto an upstream request: all but the
// hop-by-hop ones and the X-Streamrules-* identity; Authorization is the upstream key when
// one is set.
func (g *Gateway) upstreamHeaders(out, in *http.Request) {
	for k, vs := range in.Header {
		if hopHeaders[k] || strings.HasPrefix(strings.ToLower(k), "x-streamrules-") {
			continue
		}
		out.Header[k] = vs
	}
	if g.cfg.UpstreamKey != "" {
		out.Header.Set("Authorization", "Bearer "+g.cfg.UpstreamKey)
	}
}

// headerTimeout bounds ctx by UpstreamTimeout, when set.
func (g *Gateway) headerTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.cfg.UpstreamTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, g.cfg.UpstreamTimeout)
}

// apiError is the OpenAI error body.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// writeError answers with an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

// identity is who a request says it is.
type identity struct {
	chat     string // "" : a chat of its own
	envs     []string
	vars     [][2]string
	envsSent bool
}

// readIdentity reads the X-Streamrules-* headers; an unknown environment is an error
// naming it.
func (g *Gateway) readIdentity(r *http.Request) (identity, error) {
	var id identity
	id.chat = strings.TrimSpace(r.Header.Get(HeaderChat))
	if vs := r.Header.Values(HeaderEnv); len(vs) > 0 {
		id.envsSent = true
		for _, v := range vs {
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" {
					id.envs = append(id.envs, e)
				}
			}
		}
		if err := g.eng.CheckEnvironments(id.envs...); err != nil {
			return id, fmt.Errorf("%s: %w", HeaderEnv, err)
		}
	}
	for _, v := range r.Header.Values(HeaderVars) {
		for _, kv := range strings.Split(v, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, val, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return id, fmt.Errorf("%s: %q is not name=value", HeaderVars, kv)
			}
			id.vars = append(id.vars, [2]string{strings.TrimSpace(k), strings.TrimSpace(val)})
		}
	}
	return id, nil
}

// newChatID names a chat of its own.
func newChatID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "gw-" + hex.EncodeToString(b[:])
}
