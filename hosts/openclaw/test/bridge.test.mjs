import { test } from "node:test";
import assert from "node:assert/strict";
import { llmMessagesOf, parseReply } from "../lib/bridge.js";

const tools = [{ name: "memory_search", description: "search", parametersSchema: '{"type":"object"}' }];

test("tool turns become text turns the plugin LLM call accepts", () => {
  const { systemPrompt, messages } = llmMessagesOf({
    messages: [
      { role: "system", content: "You recall.", toolCalls: [] },
      { role: "user", content: "when is the deploy window?", toolCalls: [] },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "memory_search", arguments: '{"query":"deploy"}' }] },
      { role: "tool", content: "Tuesdays", toolCallId: "call_1", toolCalls: [] },
    ],
    tools,
  });
  assert.ok(systemPrompt.startsWith("You recall."));
  assert.ok(systemPrompt.includes("memory_search: search"));
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(JSON.parse(messages[1].content), { tool_calls: [{ name: "memory_search", arguments: { query: "deploy" } }] });
  assert.ok(messages[2].content.includes("call_1") && messages[2].content.includes("Tuesdays"));
});

test("no tools, no protocol", () => {
  const { systemPrompt } = llmMessagesOf({ messages: [{ role: "user", content: "x", toolCalls: [] }], tools: [] });
  assert.equal(systemPrompt, undefined);
});

test("a JSON reply naming tool calls is a tool call, fenced or not", () => {
  const plain = parseReply('{"tool_calls":[{"name":"memory_search","arguments":{"query":"a"}}]}', tools);
  assert.deepEqual(plain, { text: "", toolCalls: [{ id: "call_1", name: "memory_search", arguments: '{"query":"a"}' }] });
  const fenced = parseReply('```json\n{"tool_calls":[{"name":"memory_get","arguments":"{\\"path\\":\\"MEMORY.md\\"}"}]}\n```', tools);
  assert.equal(fenced.toolCalls[0].arguments, '{"path":"MEMORY.md"}');
});

test("anything else is text: prose, broken JSON, JSON without calls, or no tools offered", () => {
  assert.deepEqual(parseReply("Tuesdays.", tools), { text: "Tuesdays.", toolCalls: [] });
  assert.equal(parseReply('{"tool_calls": [', tools).toolCalls.length, 0);
  assert.equal(parseReply('{"answer": 1}', tools).text, '{"answer": 1}');
  assert.equal(parseReply('{"tool_calls":[{"name":"x"}]}', []).toolCalls.length, 0);
});
