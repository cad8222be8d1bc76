package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

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
	ctx, sp := t.tr.Start(ctx, MoveSpanName, internalKind,
		trace.WithAttributes(keyConversation.String(chatID)))
	return ctx, &moveSpan{t: t, sp: sp}
}

type moveSpan struct {
	t  *Tracer
	sp trace.Span
}

// End records the move's number, environments and outcome, and one event per firing,
// stamped with the firing's time and carrying its final outcome.
func (s *moveSpan) End(move *streamrules.Move, err error) {
	sp := s.sp
	defer sp.End()
	if !recording(sp, err) {
		return
	}
	outcome := "answered"
	if err != nil {
		outcome = "failed"
	}
	firings := move.Firings()
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, keyMoveNumber.Int64(move.Number()), keyEnvironments.StringSlice(move.Environments()),
		keyMoveOutcome.String(outcome))
	if len(firings) > 0 {
		attrs = append(attrs, keyFirings.Int(len(firings)))
	}
	sp.SetAttributes(attrs...)
	for _, f := range firings {
		sp.AddEvent(EventName, trace.WithTimestamp(f.At), trace.WithAttributes(s.t.firingAttrs(move, f)...))
	}
}

func (t *Tracer) firingAttrs(move *streamrules.Move, f streamrules.Firing) []attribute.KeyValue {
	outcome := string(f.Outcome)
	if outcome == "" {
		outcome = "none" // a discard whose replay never came: the move failed first
	}
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		keyRuleID.String(f.Rule),
		keyMode.String(string(f.Mode)),
		keyOutcome.String(outcome),
	)
	if f.Outcome == streamrules.OutcomeShadow {
		attrs = append(attrs, keyShadow.Bool(true))
	}
	if f.Retry {
		attrs = append(attrs, keyRetry.Bool(true))
	}
	if f.Early {
		attrs = append(attrs, keyEarly.Bool(true), keyCutAt.Int(f.CutAtBytes))
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

// StartModelCall implements middleware.Tracer: a client span "chat {model}".
func (t *Tracer) StartModelCall(ctx context.Context, c middleware.ModelCall) (context.Context, middleware.ModelSpan) {
	model, name := c.Options.Model, t.chatName
	switch {
	case model == "":
		model = t.opts.Model
	case model != t.opts.Model:
		name = "chat " + model
	}
	speech := "whole"
	switch {
	case c.Held:
		speech = "held"
	case c.Streamed:
		speech = "streamed"
	}
	ms := &modelSpan{t: t} // its buffer holds the start attributes, then the end's: one allocation
	attrs := append(ms.buf[:0], keyOperation.String("chat"))
	if p := providerName(c.Model); p != "" {
		attrs = append(attrs, keyProvider.String(p))
	}
	if model != "" {
		attrs = append(attrs, keyReqModel.String(model))
	}
	attrs = append(attrs, keySpeech.String(speech))
	if c.Judged {
		attrs = append(attrs, keyJudged.Bool(true))
	}
	if c.Replay {
		attrs = append(attrs, keyReplay.Bool(true))
	}
	if t.opts.RecordContent {
		attrs = append(attrs, keyInMessages.String(inputMessages(c.Messages)))
	}
	ctx, ms.sp = t.tr.Start(ctx, name, clientKind, trace.WithAttributes(attrs...)) // the SDK copies them
	return ctx, ms
}

type modelSpan struct {
	t   *Tracer
	sp  trace.Span
	buf [8]attribute.KeyValue
}

func (s *modelSpan) End(r middleware.ModelResult) {
	sp := s.sp
	defer sp.End()
	if !recording(sp, r.Err) {
		return
	}
	// One SetAttributes: the SDK grows the span's attributes once per call. Flags go on
	// only when true.
	attrs := s.buf[:0]
	if r.Discarded {
		attrs = append(attrs, keyDiscarded.Bool(true))
	}
	if r.CutEarly {
		attrs = append(attrs, keyCutEarly.Bool(true), keyCutAt.Int(r.CutAtBytes))
	}
	if r.Fixed {
		attrs = append(attrs, keyFixed.Bool(true))
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
	sp.SetAttributes(attrs...)
}

// responseAttrs appends the usage, the finish reasons and (opted in) the answer.
func (t *Tracer) responseAttrs(attrs []attribute.KeyValue, resp *llms.ContentResponse) []attribute.KeyValue {
	var in, out int64
	var haveIn, haveOut bool
	var reasons []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.StopReason != "" {
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
	if len(reasons) > 0 {
		attrs = append(attrs, keyFinish.StringSlice(reasons))
	}
	if t.opts.RecordContent {
		attrs = append(attrs, keyOutMessages.String(outputMessages(resp)))
	}
	return attrs
}

// StartToolCall implements middleware.Tracer: an internal span "execute_tool {name}".
func (t *Tracer) StartToolCall(ctx context.Context, c middleware.ToolCall) (context.Context, middleware.ToolSpan) {
	ts := &toolSpan{t: t}
	attrs := append(ts.buf[:0], keyOperation.String("execute_tool"), keyToolName.String(c.Name))
	if c.ID != "" {
		attrs = append(attrs, keyToolCallID.String(c.ID))
	}
	if t.opts.RecordContent {
		attrs = append(attrs, keyToolArgs.String(c.Input))
	}
	ctx, ts.sp = t.tr.Start(ctx, "execute_tool "+c.Name, internalKind, trace.WithAttributes(attrs...))
	return ctx, ts
}

type toolSpan struct {
	t   *Tracer
	sp  trace.Span
	buf [4]attribute.KeyValue
}

func (s *toolSpan) End(r middleware.ToolResult) {
	sp := s.sp
	defer sp.End()
	if !recording(sp, r.Err) {
		return
	}
	attrs := append(s.buf[:0], keyReminders.Int(len(r.Reminders)))
	if r.Refused {
		attrs = append(attrs, keyRefused.Bool(true))
	}
	if len(r.Reminders) > 0 {
		names := make([]string, len(r.Reminders))
		for i, rem := range r.Reminders {
			names[i] = rem.Rule
		}
		attrs = append(attrs, keyReminderOf.StringSlice(names))
	}
	if s.t.opts.RecordContent && r.Err == nil {
		attrs = append(attrs, keyToolResult.String(r.Output))
	}
	sp.SetAttributes(attrs...)
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
