package middleware

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
)

// The tool-call gate in the model wrapper: the calls a response declares are judged with
// its text, before the agent gets the response (streamrules.Move.CheckResponse). A gate
// never holds the text: it streams as the text rules' release lets it. While nothing of
// the response was shown, a call a gate matches is discarded with the response and never
// runs. Once some text was shown (streamrules.Move.CheckShownResponse), or after the
// retry ceiling, the response goes on and the tool wrapper refuses the call
// (guardedTool.Call): it never runs, and the model gets the refusal as its result.

// checkResponse judges a finished response: its answer target and its declared calls;
// shown: the client has seen part of its text.
func checkResponse(ctx context.Context, move *streamrules.Move, format AnswerFormat, resp *llms.ContentResponse, shown bool) streamrules.Verdict {
	if shown {
		return move.CheckShownResponse(ctx, AnswerTarget(format, resp), DeclaredCalls(format, resp))
	}
	return move.CheckResponse(ctx, AnswerTarget(format, resp), DeclaredCalls(format, resp))
}

// mustHold reports whether this tour's response must be held until its verdict: a text
// rule could discard it, or a gate could (its tool-call chunks and agent events are then
// held; its text streams as the text rules let it).
func mustHold(move *streamrules.Move) bool {
	return move.Armed() || move.ThinkingArmed() // thinking.go
}

// DeclaredCalls returns the tool calls a response declares, each with the input its tool
// will be called with, per format: the tool-calling agents' ToolCalls (or, when a choice
// has none, its legacy FuncCall, as the functions agent reads it), with {"__arg1": s} unwrapped to s as the functions agent does; the MRKL and
// conversational agents' "Action:" / "Action Input:". Every choice is read.
func DeclaredCalls(f AnswerFormat, resp *llms.ContentResponse) []streamrules.DeclaredCall {
	if resp == nil {
		return nil
	}
	var out []streamrules.DeclaredCall
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		switch f {
		case FormatToolCalling:
			for _, tc := range c.ToolCalls {
				if tc.FunctionCall != nil {
					out = append(out, streamrules.DeclaredCall{Tool: tc.FunctionCall.Name, Input: unwrapArg1(tc.FunctionCall.Arguments)})
				}
			}
			// The functions agent runs FuncCall only when the choice has no ToolCalls; the
			// openai client mirrors the first tool call into it, which is not a second call.
			if c.FuncCall != nil && len(c.ToolCalls) == 0 {
				out = append(out, streamrules.DeclaredCall{Tool: c.FuncCall.Name, Input: unwrapArg1(c.FuncCall.Arguments)})
			}
		default:
			if choiceTarget(f, c.Content) != "" {
				continue // a final answer: the agent runs no action
			}
			if m := actionRE.FindStringSubmatch(c.Content); m != nil {
				in := strings.TrimSuffix(strings.TrimSpace(m[2]), "\nObservation:")
				out = append(out, streamrules.DeclaredCall{Tool: strings.TrimSpace(m[1]), Input: strings.TrimSpace(in)})
			}
		}
	}
	return out
}

// actionRE reads an action as agents.OneShotZeroAgent does (the conversational agent's
// stricter form is a case of it).
var actionRE = regexp.MustCompile(`(?i)Action:\s*(.+?)\s*Action\s+Input:\s*(?s)(.+)`)

// unwrapArg1 is the functions agent's reading of arguments (agents.OpenAIFunctionsAgent
// ParseOutput): the arguments decoded into a map, and its "__arg1" key, when a string, is
// the tool's input; anything else calls the tool with the arguments as they are. The key
// is looked up after decoding, so an escaped spelling ({"\u005f_arg1": s}) is the same
// key, and of duplicates the last wins.
func unwrapArg1(args string) string {
	if !strings.Contains(args, "__arg1") && !strings.Contains(args, `\u`) {
		return args // no key that decodes to __arg1
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return args
	}
	if s, ok := m["__arg1"].(string); ok {
		return s
	}
	return args
}
