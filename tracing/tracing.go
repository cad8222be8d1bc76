package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/middleware"
)

// ScopeName is the instrumentation scope of every span this package makes.
const ScopeName = "github.com/streamrules/streamrules/tracing"

// Span names and the event name.
const (
	MoveSpanName = "streamrules.move"
	EventName    = "gen_ai.guardrail.result"
)

// Options tunes a Tracer. A nil *Options means all defaults.
type Options struct {
	// RecordContent records prompts, answers, tool arguments and tool results on the
	// spans (gen_ai.input.messages, gen_ai.output.messages, gen_ai.tool.call.arguments,
	// gen_ai.tool.call.result). Default false: no content, as the GenAI conventions ask.
	RecordContent bool
	// RecordRuleText records each firing rule's text on its event (streamrules.rule.text).
	// Rule texts are the host's, not the user's: not content. Default false.
	RecordRuleText bool
	// Model names the model when a call's options do not (llms.WithModel): the model
	// the host configured its client with. It goes into gen_ai.request.model and the
	// span name. Default "": the span is named "chat".
	Model string
}

// Tracer makes OpenTelemetry spans of a guard's moves, model calls and tool calls, and a
// gen_ai.guardrail.result event per firing. Give it to middleware.Config.Tracer. It is
// safe for concurrent use.
type Tracer struct {
	tr       trace.Tracer
	opts     Options
	chatName string // "chat {Options.Model}", made once

	// The start of a chat span per kind of call and of a tool span per tool, made on
	// first use (starts.go): a span then starts with no allocation of this package.
	chats startCache[chatKey]
	tools startCache[string]
}

var _ middleware.Tracer = (*Tracer)(nil)

// New returns a Tracer on tp; a nil tp means the global provider (otel.GetTracerProvider).
func New(tp trace.TracerProvider, opts *Options) *Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	t := &Tracer{tr: tp.Tracer(ScopeName)}
	if opts != nil {
		t.opts = *opts
	}
	t.chatName = "chat"
	if t.opts.Model != "" {
		t.chatName = "chat " + t.opts.Model
	}
	return t
}

// Attribute keys: the GenAI conventions' where they have one, ours prefixed streamrules.
const (
	keyConversation = attribute.Key("gen_ai.conversation.id")
	keyOperation    = attribute.Key("gen_ai.operation.name")
	keyProvider     = attribute.Key("gen_ai.provider.name")
	keyReqModel     = attribute.Key("gen_ai.request.model")
	keyInTokens     = attribute.Key("gen_ai.usage.input_tokens")
	keyOutTokens    = attribute.Key("gen_ai.usage.output_tokens")
	keyFinish       = attribute.Key("gen_ai.response.finish_reasons")
	keyInMessages   = attribute.Key("gen_ai.input.messages")
	keyOutMessages  = attribute.Key("gen_ai.output.messages")
	keyToolName     = attribute.Key("gen_ai.tool.name")
	keyToolCallID   = attribute.Key("gen_ai.tool.call.id")
	keyToolArgs     = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult   = attribute.Key("gen_ai.tool.call.result")
	keyRuleID       = attribute.Key("gen_ai.guardrail.policy.rule.id")
	keyErrorType    = attribute.Key("error.type")

	keyMoveNumber   = attribute.Key("streamrules.move.number")
	keyEnvironments = attribute.Key("streamrules.environments")
	keyMoveOutcome  = attribute.Key("streamrules.move.outcome")
	keyFirings      = attribute.Key("streamrules.firings")
	keySpeech       = attribute.Key("streamrules.speech")
	keyJudged       = attribute.Key("streamrules.judged")
	keyReplay       = attribute.Key("streamrules.replay")
	keyDiscarded    = attribute.Key("streamrules.discarded")
	keyCutEarly     = attribute.Key("streamrules.cut_early")
	keyCutAt        = attribute.Key("streamrules.cut_at_bytes")
	keyThinking     = attribute.Key("streamrules.thinking") // a thinking rule's firing, or a cut in the reasoning
	keyReleased     = attribute.Key("streamrules.released_early_bytes")
	keyFixed        = attribute.Key("streamrules.fixed")
	keyRules        = attribute.Key("streamrules.rules")
	keyReminders    = attribute.Key("streamrules.reminders")
	keyReminderOf   = attribute.Key("streamrules.reminder.rules")
	keyRefused      = attribute.Key("streamrules.refused")
	keyMode         = attribute.Key("streamrules.mode")
	keyOutcome      = attribute.Key("streamrules.outcome")
	keySeverity     = attribute.Key("streamrules.severity")
	keyEarly        = attribute.Key("streamrules.early")
	keyShadow       = attribute.Key("streamrules.shadow")
	keyRetry        = attribute.Key("streamrules.retry")
	keyTool         = attribute.Key("streamrules.tool")
	keyDiffLines    = attribute.Key("streamrules.fix.diff_lines")
	keyRuleText     = attribute.Key("streamrules.rule.text")
)

// The span kinds as start options, boxed once.
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	clientKind   = trace.WithSpanKind(trace.SpanKindClient)
)

// StartMove implements middleware.Tracer.
func (t *Tracer) StartMove(ctx context.Context, chatID string) (context.Context, middleware.MoveSpan) {
	ms := movePool.Get().(*moveSpan)
	ms.t = t
	attrs := append(ms.kv[:0], keyConversation.String(chatID))
	ctx, ms.sp = t.tr.Start(ctx, MoveSpanName, ms.startOpts(internalKind, ms.option(attrs))...)
	return ctx, ms
}

// attrBuf is a pooled span's buffer of attributes, with the option that carries its
// first n attributes, boxed once per n: refilled and passed again, it allocates nothing.
// That is safe because nothing keeps the buffer past the call: an option's attributes
// are copied out by trace.NewSpanStartConfig and NewEventConfig (the option type is
// the trace package's own), and SetAttributes copies what it keeps, as every variadic
// callee must.
type attrBuf struct {
	kv   [maxAttrs]attribute.KeyValue
	opts [maxAttrs + 1]trace.SpanStartEventOption
	// The options of the call into the SDK: a variadic argument to an interface method
	// would be boxed per call.
	start [2]trace.SpanStartOption
	event [2]trace.EventOption
}

// startOpts is the options of a span of kind with the start attributes opt.
func (b *attrBuf) startOpts(kind, opt trace.SpanStartOption) []trace.SpanStartOption {
	b.start = [2]trace.SpanStartOption{kind, opt}
	return b.start[:]
}

const maxAttrs = 12 // the most one call gives: a firing's event with every flag and the rule text

// option is the option carrying attrs, which were appended to b.kv[:0].
func (b *attrBuf) option(attrs []attribute.KeyValue) trace.SpanStartEventOption {
	n := len(attrs)
	if n == 0 || n > maxAttrs || &attrs[0] != &b.kv[0] {
		return trace.WithAttributes(attrs...) // not in the buffer: boxed now
	}
	if b.opts[n] == nil {
		b.opts[n] = trace.WithAttributes(b.kv[:n]...)
	}
	return b.opts[n]
}

// moveSpan is a move's span. It is pooled, as the chat and tool spans are: End is called
// once (middleware.MoveSpan), then it goes back to its pool.
type moveSpan struct {
	t  *Tracer
	sp trace.Span
	attrBuf
}

var movePool = sync.Pool{New: func() any { return new(moveSpan) }}

// End records the move's number, environments and outcome, and one event per firing,
// stamped with the firing's time and carrying its final outcome.
func (s *moveSpan) End(move *streamrules.Move, err error) {
	sp := s.sp
	if sp == nil {
		return // ended already
	}
	if recording(sp, err) {
		s.record(move, err)
	}
	sp.End()
	s.t, s.sp = nil, nil
	clear(s.kv[:])
	movePool.Put(s)
}

func (s *moveSpan) record(move *streamrules.Move, err error) {
	outcome := "answered"
	if err != nil {
		outcome = "failed"
	}
	firings := move.Firings()
	attrs := append(s.kv[:0], keyMoveNumber.Int64(move.Number()), keyEnvironments.StringSlice(move.Environments()),
		keyMoveOutcome.String(outcome))
	if len(firings) > 0 {
		attrs = append(attrs, keyFirings.Int(len(firings)))
	}
	s.sp.SetAttributes(attrs...)
	for _, f := range firings {
		s.event = [2]trace.EventOption{trace.WithTimestamp(f.At), s.option(s.t.firingAttrs(s.kv[:0], move, f))}
		s.sp.AddEvent(EventName, s.event[:]...)
	}
}

func (t *Tracer) firingAttrs(attrs []attribute.KeyValue, move *streamrules.Move, f streamrules.Firing) []attribute.KeyValue {
	attrs = append(attrs,
		keyRuleID.String(f.Rule),
		keyMode.String(string(f.Mode)),
		outcomeAttr(f.Outcome),
	)
	if f.Outcome == streamrules.OutcomeShadow {
		attrs = append(attrs, shadowTrue)
	}
	if f.Retry {
		attrs = append(attrs, retryTrue)
	}
	if f.Early {
		attrs = append(attrs, earlyTrue, keyCutAt.Int(f.CutAtBytes))
	}
	if f.Thinking {
		attrs = append(attrs, thinkingTrue)
	}
	if f.Tool != "" {
		attrs = append(attrs, keyTool.String(f.Tool))
	}
	if f.Outcome == streamrules.OutcomeFixed {
		attrs = append(attrs, keyDiffLines.Int(len(f.Diff)))
	}
	if r, ok := move.Rule(f.Rule); ok {
		if r.Severity != "" {
			attrs = append(attrs, keySeverity.String(r.Severity))
		}
		if t.opts.RecordRuleText {
			attrs = append(attrs, keyRuleText.String(r.Text))
		}
	}
	return attrs
}

// outcomeAttr is streamrules.outcome; "none" for a discard whose replay never came (the
// move failed first).
func outcomeAttr(o streamrules.Outcome) attribute.KeyValue {
	if o == "" {
		return keyOutcome.String("none")
	}
	return keyOutcome.String(string(o))
}

// The true flags, made once.
var (
	shadowTrue    = keyShadow.Bool(true)
	retryTrue     = keyRetry.Bool(true)
	earlyTrue     = keyEarly.Bool(true)
	discardedTrue = keyDiscarded.Bool(true)
	cutEarlyTrue  = keyCutEarly.Bool(true)
	thinkingTrue  = keyThinking.Bool(true)
	fixedTrue     = keyFixed.Bool(true)
	refusedTrue   = keyRefused.Bool(true)
	judgedTrue    = keyJudged.Bool(true)
	replayTrue    = keyReplay.Bool(true)
)

// StartModelCall implements middleware.Tracer: a client span "chat {model}". Its start
// attributes (the ones a sampler may read) are made once per kind of call (starts.go).
func (t *Tracer) StartModelCall(ctx context.Context, c middleware.ModelCall) (context.Context, middleware.ModelSpan) {
	st := t.chatStart(c)
	ms := modelPool.Get().(*modelSpan)
	ms.t = t
	start := st.opt
	if t.opts.RecordContent {
		start = ms.option(append(append(ms.kv[:0], st.attrs...), keyInMessages.String(inputMessages(c.Messages))))
	}
	ctx, ms.sp = t.tr.Start(ctx, st.name, ms.startOpts(clientKind, start)...)
	return ctx, ms
}

// modelSpan is a chat span, pooled like moveSpan.
type modelSpan struct {
	t  *Tracer
	sp trace.Span
	attrBuf
}

var modelPool = sync.Pool{New: func() any { return new(modelSpan) }}

func (s *modelSpan) End(r middleware.ModelResult) {
	sp := s.sp
	if sp == nil {
		return // ended already
	}
	if recording(sp, r.Err) {
		s.record(r)
	}
	sp.End()
	s.t, s.sp = nil, nil
	clear(s.kv[:])
	modelPool.Put(s)
}

// record sets the end's attributes in one SetAttributes: the SDK grows the span's
// attributes once per call. Flags go on only when true.
func (s *modelSpan) record(r middleware.ModelResult) {
	attrs := s.kv[:0]
	if r.Discarded {
		attrs = append(attrs, discardedTrue)
	}
	if r.CutEarly {
		attrs = append(attrs, cutEarlyTrue, keyCutAt.Int(r.CutAtBytes))
	}
	if r.CutInThinking {
		attrs = append(attrs, thinkingTrue)
	}
	if r.Fixed {
		attrs = append(attrs, fixedTrue)
	}
	if r.ReleasedEarlyBytes > 0 {
		attrs = append(attrs, keyReleased.Int(r.ReleasedEarlyBytes))
	}
	if len(r.Rules) > 0 {
		attrs = append(attrs, keyRules.StringSlice(r.Rules))
	}
	if resp := r.Response; resp != nil {
		attrs = s.t.responseAttrs(attrs, resp)
	}
	s.sp.SetAttributes(attrs...)
}

// responseAttrs appends the usage, the finish reasons and (opted in) the answer.
func (t *Tracer) responseAttrs(attrs []attribute.KeyValue, resp *llms.ContentResponse) []attribute.KeyValue {
	var in, out int64
	var haveIn, haveOut bool
	var reason string    // the one finish reason, in the common case of one
	var reasons []string // all of them, when there are more
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		switch {
		case c.StopReason == "":
		case reason == "":
			reason = c.StopReason
		default:
			if reasons == nil {
				reasons = append(reasons, reason)
			}
			reasons = append(reasons, c.StopReason)
		}
		if !haveIn {
			in, haveIn = usage(c.GenerationInfo, "PromptTokens", "InputTokens", "input_tokens")
		}
		if !haveOut {
			out, haveOut = usage(c.GenerationInfo, "CompletionTokens", "OutputTokens", "output_tokens")
		}
	}
	if haveIn {
		attrs = append(attrs, keyInTokens.Int64(in))
	}
	if haveOut {
		attrs = append(attrs, keyOutTokens.Int64(out))
	}
	switch {
	case reasons != nil:
		attrs = append(attrs, keyFinish.StringSlice(reasons))
	case reason != "":
		attrs = append(attrs, finishReason(reason))
	}
	if t.opts.RecordContent {
		attrs = append(attrs, keyOutMessages.String(outputMessages(resp)))
	}
	return attrs
}

// StartToolCall implements middleware.Tracer: an internal span "execute_tool {name}".
func (t *Tracer) StartToolCall(ctx context.Context, c middleware.ToolCall) (context.Context, middleware.ToolSpan) {
	st := t.toolStart(c.Name)
	ts := toolPool.Get().(*toolSpan)
	ts.t = t
	start := st.opt
	if c.ID != "" || t.opts.RecordContent {
		attrs := append(ts.kv[:0], st.attrs...)
		if c.ID != "" {
			attrs = append(attrs, keyToolCallID.String(c.ID))
		}
		if t.opts.RecordContent {
			attrs = append(attrs, keyToolArgs.String(c.Input))
		}
		start = ts.option(attrs)
	}
	ctx, ts.sp = t.tr.Start(ctx, st.name, ts.startOpts(internalKind, start)...)
	return ctx, ts
}

// toolSpan is a tool span, pooled like moveSpan.
type toolSpan struct {
	t     *Tracer
	sp    trace.Span
	names [4]string
	attrBuf
}

var toolPool = sync.Pool{New: func() any { return new(toolSpan) }}

func (s *toolSpan) End(r middleware.ToolResult) {
	sp := s.sp
	if sp == nil {
		return // ended already
	}
	if recording(sp, r.Err) {
		s.record(r)
	}
	sp.End()
	s.t, s.sp = nil, nil
	clear(s.kv[:])
	clear(s.names[:])
	toolPool.Put(s)
}

func (s *toolSpan) record(r middleware.ToolResult) {
	attrs := append(s.kv[:0], keyReminders.Int(len(r.Reminders)))
	if r.Refused {
		attrs = append(attrs, refusedTrue)
	}
	if len(r.Reminders) > 0 {
		names := s.names[:0]
		for _, rem := range r.Reminders {
			names = append(names, rem.Rule)
		}
		attrs = append(attrs, keyReminderOf.StringSlice(names)) // copied into the value
	}
	if s.t.opts.RecordContent && r.Err == nil {
		attrs = append(attrs, keyToolResult.String(r.Output))
	}
	s.sp.SetAttributes(attrs...)
}

// recording reports whether sp records, and marks it failed with err (when not nil) if it
// does: the start of every End, which defers sp.End() first.
func recording(sp trace.Span, err error) bool {
	if !sp.IsRecording() {
		return false
	}
	if err != nil {
		setError(sp, err)
	}
	return true
}

// setError marks the span failed: error.type is the error's Go type (context errors by
// name), the status description its message.
func setError(sp trace.Span, err error) {
	typ := fmt.Sprintf("%T", err)
	switch {
	case errors.Is(err, context.Canceled):
		typ = "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		typ = "timeout"
	}
	sp.SetAttributes(keyErrorType.String(typ))
	sp.SetStatus(codes.Error, err.Error())
}

// providerName is gen_ai.provider.name for LangChainGo's clients, by their package; ""
// for a client it does not know.
func providerName(m llms.Model) string {
	if m == nil {
		return ""
	}
	typ := reflect.TypeOf(m)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	pkg := typ.PkgPath()
	const prefix = "github.com/tmc/langchaingo/llms/"
	if !strings.HasPrefix(pkg, prefix) {
		return ""
	}
	switch strings.TrimPrefix(pkg, prefix) {
	case "openai":
		return "openai"
	case "anthropic":
		return "anthropic"
	case "mistral":
		return "mistral_ai"
	case "googleai", "googleai/palm":
		return "gcp.gemini"
	case "googleai/vertex":
		return "gcp.vertex_ai"
	case "bedrock":
		return "aws.bedrock"
	case "ollama":
		return "ollama"
	case "cohere":
		return "cohere"
	case "huggingface":
		return "huggingface"
	}
	return ""
}

// usage reads a token count under the first of keys the provider set.
func usage(info map[string]any, keys ...string) (int64, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return int64(v), true
		case int32:
			return int64(v), true
		case int64:
			return v, true
		case float64:
			return int64(v), true
		}
	}
	return 0, false
}

// message is one message of gen_ai.input.messages / gen_ai.output.messages: its role
// and its text parts.
type message struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Type    string `json:"type"`
	Content string `json:"content,omitempty"`
	Name    string `json:"name,omitempty"`
	ID      string `json:"id,omitempty"`
	Args    string `json:"arguments,omitempty"`
}

func inputMessages(ms []llms.MessageContent) string {
	out := make([]message, 0, len(ms))
	for _, m := range ms {
		msg := message{Role: string(m.Role)}
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				msg.Parts = append(msg.Parts, part{Type: "text", Content: p.Text})
			case llms.ToolCall:
				msg.Parts = append(msg.Parts, part{Type: "tool_call", ID: p.ID, Name: toolName(p), Args: toolArgs(p)})
			case llms.ToolCallResponse:
				msg.Parts = append(msg.Parts, part{Type: "tool_call_response", ID: p.ToolCallID, Content: p.Content})
			}
		}
		out = append(out, msg)
	}
	return marshal(out)
}

func outputMessages(r *llms.ContentResponse) string {
	out := make([]message, 0, len(r.Choices))
	for _, c := range r.Choices {
		if c == nil {
			continue
		}
		msg := message{Role: "assistant"}
		if c.Content != "" {
			msg.Parts = append(msg.Parts, part{Type: "text", Content: c.Content})
		}
		for _, tc := range c.ToolCalls {
			msg.Parts = append(msg.Parts, part{Type: "tool_call", ID: tc.ID, Name: toolName(tc), Args: toolArgs(tc)})
		}
		out = append(out, msg)
	}
	return marshal(out)
}

func toolName(tc llms.ToolCall) string {
	if tc.FunctionCall != nil {
		return tc.FunctionCall.Name
	}
	return ""
}

func toolArgs(tc llms.ToolCall) string {
	if tc.FunctionCall != nil {
		return tc.FunctionCall.Arguments
	}
	return ""
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
