package tracing

import (
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamrules/streamrules/middleware"
)

// spanStart is how a kind of span starts: its name, its start attributes and the
// option that carries them, made once and shared by every span of its kind (the SDK
// copies what it keeps).
type spanStart struct {
	name  string
	attrs []attribute.KeyValue
	opt   trace.SpanStartOption
}

func newSpanStart(name string, attrs []attribute.KeyValue) *spanStart {
	return &spanStart{name: name, attrs: attrs, opt: trace.WithAttributes(attrs...)}
}

// maxStarts bounds each cache: past it, a new kind of span builds its start each time.
// Model names and tool names are few in practice; the bound keeps a host that makes
// them up per call from growing the cache without end.
const maxStarts = 256

// startCache maps a kind of span to its start. Reads take no lock: the map is replaced
// whole (copy on write) when a kind is added, which happens once per kind.
type startCache[K comparable] struct {
	mu sync.Mutex // serialises writers
	m  atomic.Pointer[map[K]*spanStart]
}

func (c *startCache[K]) get(k K, build func() *spanStart) *spanStart {
	if m := c.m.Load(); m != nil {
		if st, ok := (*m)[k]; ok {
			return st
		}
	}
	st := build()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if have, ok := (*old)[k]; ok {
			return have
		}
		if len(*old) >= maxStarts {
			return st
		}
	}
	m := map[K]*spanStart{k: st}
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	c.m.Store(&m)
	return st
}

// chatKey is a kind of model call: what its span's name and start attributes depend on.
type chatKey struct {
	client                         reflect.Type // the provider client's type: gen_ai.provider.name
	model                          string       // the call's model option
	held, streamed, judged, replay bool
}

// chatStart is the start of c's chat span.
func (t *Tracer) chatStart(c middleware.ModelCall) *spanStart {
	k := chatKey{client: reflect.TypeOf(c.Model), model: c.Options.Model,
		held: c.Held, streamed: c.Streamed, judged: c.Judged, replay: c.Replay}
	return t.chats.get(k, func() *spanStart {
		model, name := k.model, t.chatName
		switch {
		case model == "":
			model = t.opts.Model
		case model != t.opts.Model:
			name = "chat " + model
		}
		speech := "whole"
		switch {
		case k.held:
			speech = "held"
		case k.streamed:
			speech = "streamed"
		}
		attrs := []attribute.KeyValue{keyOperation.String("chat")}
		if p := providerName(c.Model); p != "" {
			attrs = append(attrs, keyProvider.String(p))
		}
		if model != "" {
			attrs = append(attrs, keyReqModel.String(model))
		}
		attrs = append(attrs, keySpeech.String(speech))
		if k.judged {
			attrs = append(attrs, judgedTrue)
		}
		if k.replay {
			attrs = append(attrs, replayTrue)
		}
		return newSpanStart(name, attrs)
	})
}

// toolStart is the start of a call of tool name, without its call id.
func (t *Tracer) toolStart(name string) *spanStart {
	return t.tools.get(name, func() *spanStart {
		return newSpanStart("execute_tool "+name,
			[]attribute.KeyValue{keyOperation.String("execute_tool"), keyToolName.String(name)})
	})
}

// finishOne holds gen_ai.response.finish_reasons for one choice, made once for the
// reasons LangChainGo's clients report; other reasons are made per call.
var finishOne = func() map[string]attribute.KeyValue {
	m := map[string]attribute.KeyValue{}
	for _, r := range []string{"stop", "length", "tool_calls", "function_call", "content_filter",
		"end_turn", "max_tokens", "stop_sequence", "tool_use", "STOP", "MAX_TOKENS", "SAFETY"} {
		m[r] = keyFinish.StringSlice([]string{r})
	}
	return m
}()

// finishReason is gen_ai.response.finish_reasons of one choice.
func finishReason(reason string) attribute.KeyValue {
	if kv, ok := finishOne[reason]; ok {
		return kv
	}
	return keyFinish.StringSlice([]string{reason})
}
