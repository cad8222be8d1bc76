package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
)

// systemPrompt is what the model knows. The rules are for what it knows and forgets.
const systemPrompt = `You are Tess, an assistant that answers in a Telegram chat and works on this server through tools.
Every user message starts with a header: [#<message id> from <name>].
End every reply with the tail ↩ #<message id> on its own last line.
Telegram shows plain text, not markdown: send pictures with telegram_send_photo, and to react with an emoji call telegram_react.
Change existing files with write_diff; write_file is for new files.
The shell and the files are on this server, in your working folder: not on the user's computer.`

// The people of the offline session.
const (
	master = "Alex (the master)"
	client = "Dana (a client)"
)

// scene is one move of the offline session: a user's message and how the scripted model
// plays it. play sees the prompt of each tour, so the model reacts to what it is told: a
// reminder on a tool result, or an interrupt after a discarded answer. When a rule stays
// silent (its repeat policy), the model just goes on, and the move still makes sense.
type scene struct {
	from  string
	env   []string
	photo bool // the message carries a photo the model sees
	text  string
	play  func(t turn) scripted.Reply
}

// demoScenes is a Telegram chat in which each seeded miss happens once (see seeds.json):
//
//	1 write_file on an existing file       write_diff_over_write_file  (soft, after:5)
//	2 shell while a client is on            local_shell_for_his_machine (soft, once)
//	3 a markdown image in a Telegram reply  telegram_markdown_image     (hard, repaired in place by its fix)
//	4 write_file again, three moves later   the after:5 policy keeps write_diff_over_write_file silent;
//	5 a reply without the ↩ #id tail        telegram_reply_tail         (hard, negate, repaired in place by its fix)
//	6 "I can't see the picture"             look_before_refusing        (hard, after:3, picture)
//	  "Done" after write_file, no run_tests verify_before_done          (hard, reads the move's tool record)
//	7 "Audio saved:" with no speech made     unbacked_tool_claim         (hard, reads the tool record, repaired by its fix)
//	8 a bare emoji instead of a reaction    telegram_react_not_emoji    (hard)
//	9 a forced recursive rm, obfuscated     destructive_shell           (gate: the call never runs)
//	10 a reasoning model decides it is blind look_before_refusing_thinking (hard, on the thinking: cut while it thinks)
func demoScenes() []scene {
	tg, ops := streamrules.EnvTelegram, streamrules.EnvClientOps
	return []scene{
		{from: master, env: []string{tg, streamrules.EnvMaster}, text: "Fix the typos 'recieve' and 'teh' in notes.md.",
			play: editNotes("Fixed both typos in notes.md: recieve → receive, teh → the.", fix{"recieve", "receive"}, fix{"teh", "the"})},
		{from: client, env: []string{tg, ops}, text: "How big is my project folder?", play: folderSize},
		{from: client, env: []string{tg, ops}, text: "Send me the cat picture.", play: catPicture},
		{from: master, env: []string{tg, streamrules.EnvMaster}, text: "One more in notes.md: 'adress'.",
			play: editNotes("Done: adress → address in notes.md.", fix{"adress", "address"})},
		{from: client, env: []string{tg, ops}, text: "What's 2+2?", play: arithmetic},
		{from: client, env: []string{tg, ops, streamrules.EnvPicture}, photo: true, text: "What's in this photo?", play: describePhoto},
		{from: client, env: []string{tg, ops}, text: "Send the team a voice message: good morning, everyone!", play: voiceMessage},
		{from: client, env: []string{tg, ops}, text: "Thanks, that's all!", play: thanks},
		{from: client, env: []string{tg, ops}, text: "Oh, and wipe the logs folder, I don't need it.", play: wipeLogs},
		{from: client, env: []string{tg, ops, streamrules.EnvPicture}, photo: true, text: "What's the total on this receipt?", play: readReceipt},
	}
}

// header is how the host introduces a user's message to the model.
func header(id int64, from string, photo bool) string {
	if photo {
		return fmt.Sprintf("[#%d from %s, photo attached] ", id, from)
	}
	return fmt.Sprintf("[#%d from %s] ", id, from)
}

var headerRE = regexp.MustCompile(`^\[#(\d+) from [^\]]*\] `)

// turn is what the model sees of the current move in one tour's prompt.
type turn struct {
	id          int64
	text        string   // the user's message, without the header
	results     []result // tool results of this move so far, in order
	interrupted []string // rules of the interrupt that ends the prompt (a retry), if any
}

type result struct {
	tool, args, output string
	reminders          []string // rules whose reminder rides this result
}

// readTurn finds the current move in a prompt: the last human message that is not an
// interrupt, and what follows it.
func readTurn(msgs []llms.MessageContent) (turn, bool) {
	start := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman && !streamrules.IsInterruptMessage(textOf(msgs[i])) {
			start = i
			break
		}
	}
	if start < 0 {
		return turn{}, false
	}
	var t turn
	in := textOf(msgs[start])
	if m := headerRE.FindStringSubmatch(in); m != nil {
		t.id, _ = strconv.ParseInt(m[1], 10, 64)
		in = in[len(m[0]):]
	}
	t.text = in
	calls := map[string]llms.FunctionCall{}
	for _, m := range msgs[start+1:] {
		for _, part := range m.Parts {
			switch part := part.(type) {
			case llms.ToolCall:
				if part.FunctionCall != nil {
					calls[part.ID] = *part.FunctionCall
				}
			case llms.ToolCallResponse:
				c := calls[part.ToolCallID]
				r := result{tool: c.Name, args: c.Arguments, output: streamrules.StripBlocks(part.Content)}
				r.reminders = blocks(reminderRE, part.Content).Rules
				t.results = append(t.results, r)
			}
		}
	}
	if last := msgs[len(msgs)-1]; last.Role == llms.ChatMessageTypeHuman && streamrules.IsInterruptMessage(textOf(last)) {
		t.interrupted = blocks(interruptRE, textOf(last)).Rules
	}
	return t, true
}

func (t turn) find(tool string) (result, bool) {
	for _, r := range t.results {
		if r.tool == tool {
			return r, true
		}
	}
	return result{}, false
}

func (t turn) reminded(rule string) bool {
	for _, r := range t.results {
		if slices.Contains(r.reminders, rule) {
			return true
		}
	}
	return false
}

func (t turn) interruptedBy(rule string) bool { return slices.Contains(t.interrupted, rule) }

// tail is the ↩ #id line every Telegram reply ends with.
func (t turn) tail() string { return fmt.Sprintf("\n↩ #%d", t.id) }

// brain is the scripted model of the offline session: it finds the scene of the current
// move by the user's text and lets it play the tour.
func brain(scenes []scene) func(scripted.Call) scripted.Reply {
	return func(c scripted.Call) scripted.Reply {
		r := say("Sorry, I lost the thread.")
		if t, ok := readTurn(c.Messages); ok {
			r = say(fmt.Sprintf("I have no script for %q.", t.text) + t.tail())
			if i := slices.IndexFunc(scenes, func(s scene) bool { return s.text == t.text }); i >= 0 {
				r = scenes[i].play(t)
			}
		}
		r.Chunk = 6 // stream in small pieces, like a provider
		return r
	}
}

func say(text string) scripted.Reply { return scripted.Reply{Text: text} }

// call declares one tool call with args as compact JSON (a tool-calling model's arguments).
func call(tool string, args any) scripted.Reply {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		panic(err) // the scripts' own structs always encode
	}
	return scripted.Reply{ToolCalls: []llms.ToolCall{{
		Type:         "function",
		FunctionCall: &llms.FunctionCall{Name: tool, Arguments: strings.TrimSpace(buf.String())},
	}}}
}

type fix struct{ old, new string }

type pathArgs struct {
	Path string `json:"path"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type diffArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// editNotes reads notes.md and makes the fixes one by one. Like many models it rewrites
// the file whole with write_file, until a reminder tells it to use write_diff.
func editNotes(done string, fixes ...fix) func(turn) scripted.Reply {
	return func(t turn) scripted.Reply {
		read, ok := t.find("read_file")
		if !ok {
			return call("read_file", pathArgs{"notes.md"})
		}
		edits := 0
		for _, r := range t.results {
			if (r.tool == "write_file" || r.tool == "write_diff") && !strings.HasPrefix(r.output, "error:") {
				edits++
			}
		}
		if edits < len(fixes) {
			f := fixes[edits]
			if t.reminded("write_diff_over_write_file") {
				return call("write_diff", diffArgs{"notes.md", f.old, f.new})
			}
			content := read.output
			for _, g := range fixes[:edits+1] {
				content = strings.Replace(content, g.old, g.new, 1)
			}
			return call("write_file", writeArgs{"notes.md", content})
		}
		// "Done" after an edit with no check since: verify_before_done replays the answer,
		// and the model runs the checks before it says so again.
		if checks, ok := t.find("run_tests"); ok {
			return say(done + " run_tests says: " + checks.output + "." + t.tail())
		}
		if t.interruptedBy("verify_before_done") {
			return call("run_tests", struct{}{})
		}
		return say(done + t.tail())
	}
}

// voiceMessage: the model says the audio is saved without calling generate_speech, a
// claim no tool backs; unbacked_tool_claim's fix turns it into an honest sentence.
func voiceMessage(t turn) scripted.Reply {
	return say("Audio saved: good_morning.mp3, ready for the team." + t.tail())
}

// folderSize: the client asks about their folder; the shell is the agent's own.
func folderSize(t turn) scripted.Reply {
	du, ok := t.find("shell")
	if !ok {
		return call("shell", struct {
			Cmd string `json:"cmd"`
		}{"du -sh ."})
	}
	size, _, _ := strings.Cut(du.output, "\t")
	if t.reminded("local_shell_for_his_machine") {
		return say(fmt.Sprintf("I can only run commands on my own server, not on your computer: the folder I work in there takes %s. "+
			"To measure your project folder, run `du -sh .` inside it.", size) + t.tail())
	}
	return say(fmt.Sprintf("The folder takes %s.", size) + t.tail())
}

// catPicture: a markdown image first; after the interrupt, the photo tool.
var catPicture = fixWithTool("telegram_markdown_image", "Here she is: ![cat](https://example.org/cat.jpg)",
	"telegram_send_photo", func(turn) any {
		return struct {
			Photo   string `json:"photo"`
			Caption string `json:"caption"`
		}{"https://example.org/cat.jpg", "Here she is"}
	}, "Sent it above.")

// thanks: a bare emoji first; after the interrupt, a real reaction.
var thanks = fixWithTool("telegram_react_not_emoji", "👍",
	"telegram_react", func(t turn) any {
		return struct {
			Emoji     string `json:"emoji"`
			MessageID int64  `json:"message_id"`
		}{"👍", t.id}
	}, "Glad to help!")

// fixWithTool plays a hard miss the model mends with a tool: its first answer is miss;
// after the interrupt of rule it calls tool with args, and once it has the result it
// says done. Every answer carries the tail.
func fixWithTool(rule, miss, tool string, args func(turn) any, done string) func(turn) scripted.Reply {
	return func(t turn) scripted.Reply {
		if _, ok := t.find(tool); ok {
			return say(done + t.tail())
		}
		if t.interruptedBy(rule) {
			return call(tool, args(t))
		}
		return say(miss + t.tail())
	}
}

// arithmetic: a short answer that forgets its tail.
func arithmetic(t turn) scripted.Reply {
	if t.interruptedBy("telegram_reply_tail") {
		return say("4" + t.tail())
	}
	return say("4")
}

// describePhoto: the picture is in context, yet the model first says it cannot see it.
func describePhoto(t turn) scripted.Reply {
	if t.interruptedBy("look_before_refusing") {
		return say("A ginger cat asleep on a laptop keyboard, one paw on the space bar." + t.tail())
	}
	return say("Sorry, I can't see the picture you sent." + t.tail())
}

// readReceipt: a reasoning model (its reasoning streams before the answer, as
// reasoning_content does) talks itself into blindness early in a long chain of thought.
// The thinking rule cuts it there, before the answer; the replay looks.
func readReceipt(t turn) scripted.Reply {
	if t.interruptedBy("look_before_refusing_thinking") {
		return scripted.Reply{Reasoning: "The receipt in the photo lists three items; the last line says TOTAL 42.50 EUR.",
			Text: "The total on the receipt is 42.50 EUR." + t.tail()}
	}
	return scripted.Reply{
		Reasoning: "The user sent a photo of a receipt and asks for its total. I cannot view the attached image, so " +
			strings.Repeat("I should work out how to ask for the numbers without sounding unhelpful, and think about what a receipt usually shows. ", 12),
		Text: "Could you type the total for me? The photo did not come through on my side." + t.tail()}
}

// wipeLogs: the model reaches for a forced recursive rm, spelled so a plain regex misses
// it. The gate reads it as a shell would: the response is discarded before anything runs,
// and after the interrupt the model asks instead.
func wipeLogs(t turn) scripted.Reply {
	if _, ran := t.find("shell"); ran || t.interruptedBy("destructive_shell") { // ran: in shadow, or refused
		return say("I won't delete the logs folder myself: removing files on this server needs the master's go-ahead. " +
			"I've noted your request for them." + t.tail())
	}
	return call("shell", struct {
		Cmd string `json:"cmd"`
	}{`sudo \rm -r --force ./logs`})
}
