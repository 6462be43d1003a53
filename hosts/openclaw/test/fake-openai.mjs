// A stand-in for a model provider, for the end-to-end test: an
// OpenAI-compatible server on 127.0.0.1 that logs every request and answers
// by rule, so a real OpenClaw turn runs without network or keys.
//
// - POST /v1/embeddings: bag-of-words vectors (64 dimensions, hashed words),
//   so texts sharing words are close.
// - POST /v1/chat/completions with tools (an agent turn): first calls
//   memory_search with the user's question (directly, or through
//   OpenClaw's Tool Search `tool_call` when the tools sit behind it); once a
//   tool result is in the conversation, answers "Memory says: <first citation>".
// - A user message carrying `e2e-steps: [{"tool": …, "args": {…}}, …]` (one
//   JSON array on the rest of its line) instead makes those tool calls, one
//   per model turn, in order; then answers "Steps done: <last tool result>".
//   A string argument `{{from-results:<regex>}}` is the regex's first group
//   in the turn's tool results so far (the agent repeating what a tool said,
//   which the person never typed).
//   The end-to-end test scripts agent behaviour this way (a file write to
//   memory, a web page noted, …) while OpenClaw runs the tools for real.
// - GET /page.html: a small web page for `web_fetch`.
// - POST /v1/chat/completions without tools (the plugin's own model calls):
//   "NONE" (the recall sub-agent found nothing, the flush has nothing).
//
// Usage: node fake-openai.mjs <log.jsonl>  — prints the port once listening.

import http from "node:http";
import fs from "node:fs";
import { createHash } from "node:crypto";

const log = process.argv[2] ?? "fake-openai.jsonl";
const DIMENSIONS = 64;

export function embed(text) {
  const v = new Array(DIMENSIONS).fill(0);
  for (const word of String(text).toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length < 3) continue;
    const digest = createHash("sha256").update(word).digest();
    v[digest[0] % DIMENSIONS] += digest[1] & 1 ? 1 : -1;
  }
  return v;
}

/** The text of an OpenAI chat message's content (a string or content parts). */
export function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => (typeof p === "string" ? p : (p?.text ?? ""))).join("\n");
}

/**
 * What the person asked: OpenClaw's user message carries a timestamp, the
 * prepended memory blocks and a runtime line around it, and its internal
 * context comes as a separate user message.
 */
export function questionOf(messages) {
  const typed = messages
    .filter((m) => m.role === "user")
    .map((m) => textOf(m.content))
    .find((text) => !text.startsWith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT"));
  const paragraphs = String(typed ?? "")
    .replace(/<memory-context[\s\S]*?<\/memory-context>/g, "")
    .replace(/^\[[^\]]*\]\s*/, "")
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith("Runtime:"));
  return paragraphs[0] ?? "";
}

/** The web page `GET /page.html` serves. */
export const WEB_PAGE = "<html><head><title>Release notes</title></head><body><p>The release code word is mango-42. Deploys go through the blue gateway.</p></body></html>";

/** The scripted tool calls of a user message (`e2e-steps: [...]`), or null. */
export function stepsOf(question) {
  const match = /e2e-steps:\s*(\[.*\])\s*$/m.exec(String(question));
  return match ? JSON.parse(match[1]) : null;
}

/** `args` with each `{{from-results:<regex>}}` replaced by its first group in `results`. */
export function fillFromResults(args, results) {
  const text = results.join("\n");
  return JSON.parse(
    JSON.stringify(args),
    (_, v) => (typeof v === "string" ? v.replace(/\{\{from-results:(.+?)\}\}/g, (_, re) => new RegExp(re).exec(text)?.[1] ?? "") : v),
  );
}

/** A call of `name` with `args`: directly when the tool is offered, else through Tool Search's `tool_call`. */
function toolCall(tools, name, args, index) {
  const call = tools.includes(name) ? { name, arguments: args } : { name: "tool_call", arguments: { id: name, args } };
  return { tool_calls: [{ id: `call_${index + 1}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] };
}

/** The reply to a chat request, by the rules above. */
export function reply(body) {
  const messages = body?.messages ?? [];
  const tools = (body?.tools ?? []).map((t) => t?.function?.name ?? t?.name);
  const direct = tools.includes("memory_search");
  if (!direct && !tools.includes("tool_call")) return { content: "NONE" };
  // This turn's tool results: those after the last message the person typed.
  const lastUser = messages.findLastIndex((m) => m.role === "user" && !textOf(m.content).startsWith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT"));
  const toolResults = messages.slice(lastUser + 1).filter((m) => m.role === "tool");
  const steps = stepsOf(messages.filter((m) => m.role === "user").map((m) => textOf(m.content)).join("\n"));
  if (steps) {
    if (toolResults.length < steps.length) {
      const step = steps[toolResults.length];
      return toolCall(tools, step.tool, fillFromResults(step.args ?? {}, toolResults.map((m) => textOf(m.content))), toolResults.length);
    }
    return { content: `Steps done: ${textOf(toolResults.at(-1)?.content).slice(0, 2000)}` };
  }
  if (toolResults.length === 0) {
    return toolCall(tools, "memory_search", { query: questionOf(messages) }, 0);
  }
  const citation = /[\w./-]+\.md#L\d+-L\d+/.exec(textOf(toolResults.at(-1).content))?.[0] ?? "nothing";
  return { content: `Memory says: ${citation}` };
}

function send(res, body, message) {
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const finish = message.tool_calls ? "tool_calls" : "stop";
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id, object: "chat.completion", created, model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: message.content ?? null, tool_calls: message.tool_calls }, finish_reason: finish }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta, finishReason = null) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
  chunk({ role: "assistant", content: "" });
  if (message.tool_calls) chunk({ tool_calls: message.tool_calls.map((c, index) => ({ index, ...c })) });
  else chunk({ content: message.content });
  chunk({}, finish);
  if (body.stream_options?.include_usage) {
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
  }
  res.write("data: [DONE]\n\n");
  res.end();
}

const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      res.writeHead(400).end();
      return;
    }
    const path = req.url.split("?")[0];
    fs.appendFileSync(log, `${JSON.stringify({ path, body })}\n`);
    if (path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model" }, { id: "fake-embed", object: "model" }] }));
    } else if (path.endsWith("/embeddings")) {
      const inputs = Array.isArray(body.input) ? body.input : [body.input ?? ""];
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        object: "list",
        data: inputs.map((text, index) => ({ object: "embedding", index, embedding: embed(text) })),
        model: body.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      }));
    } else if (path === "/page.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(WEB_PAGE);
    } else if (path.endsWith("/chat/completions")) {
      send(res, body, reply(body));
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `unknown path ${path}` } }));
    }
  });
});

if (import.meta.url === `file://${process.argv[1]}`) {
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
}
