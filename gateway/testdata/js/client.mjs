// The official openai SDK against the streamrules gateway: one move, tours until the
// final answer, each tool call answered "ok <name>". gateway/js_test.go runs it and reads
// the JSON line it prints. Environment: GATEWAY_URL (the base URL, ending in /v1),
// GATEWAY_HEADERS (JSON: the identity headers), PROMPT, STREAM ("1": stream with
// client.chat.completions.stream and finalChatCompletion()).
import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: process.env.GATEWAY_URL,
  apiKey: 'test',
  defaultHeaders: JSON.parse(process.env.GATEWAY_HEADERS || '{}'),
  maxRetries: 0,
});
const fn = (name) => ({ type: 'function', function: { name, description: name, parameters: { type: 'object', properties: {} } } });
const tools = [fn('write_file'), fn('shell'), fn('generate_speech')];
const streaming = process.env.STREAM === '1';

async function main() {
  const out = { calls: [], streamed: '', reasoning: '', streamed_reasoning: '' };
  const messages = [{ role: 'user', content: process.env.PROMPT || 'hi' }];
  for (let tour = 0; tour < 6; tour++) {
    const params = { model: 'gpt-test', messages, tools };
    let msg, usage;
    if (streaming) {
      const s = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
      let text = '';
      let reasoning = '';
      s.on('content', (delta) => { text += delta; });
      // The SDK's snapshot keeps only the last reasoning_content delta: sum them here.
      s.on('chunk', (chunk) => { reasoning += chunk.choices?.[0]?.delta?.reasoning_content ?? ''; });
      const done = await s.finalChatCompletion();
      msg = { ...done.choices[0].message, reasoning_content: reasoning };
      usage = done.usage;
      out.streamed = text;
      out.streamed_reasoning += reasoning;
    } else {
      const r = await client.chat.completions.create(params);
      msg = r.choices[0].message;
      usage = r.usage;
    }
    if (!msg.tool_calls || msg.tool_calls.length === 0) {
      out.final = msg.content;
      out.reasoning = msg.reasoning_content ?? '';
      out.usage = usage;
      break;
    }
    messages.push({ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls.map(({ id, type, function: f }) => ({ id, type, function: { name: f.name, arguments: f.arguments } })) });
    for (const tc of msg.tool_calls) {
      out.calls.push(tc.function.name + ' ' + tc.function.arguments);
      messages.push({ role: 'tool', tool_call_id: tc.id, content: 'ok ' + tc.function.name });
    }
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e), status: e.status ?? 0 }));
});
