// The component's embedder and model imports, lent from OpenClaw's
// configured providers: the embedding provider of `memory.search` and the
// agent's model through `api.runtime.llm.complete`.

import { DEFAULT_EMBED_TIMEOUT_MS, withDeadline } from "./component.js";
import { importSdk } from "./openclaw-sdk.js";

/** Texts per `embed` call the component may send (its batches stay small). */
const MAX_BATCH = 64;

/**
 * The embedder OpenClaw's `memory.search` configures for `agentId`, or
 * `null` when there is none (`provider: "none"`, or search disabled): the
 * component then recalls lexically and says so in `status`.
 */
export async function openclawEmbedder(cfg, agentId, { log, timeoutMs = DEFAULT_EMBED_TIMEOUT_MS } = {}) {
  const core = await importSdk("memory-core-host-runtime-core");
  const search = core.resolveMemorySearchConfig(cfg, agentId);
  if (!search || !search.provider || search.provider === "none") return null;
  const registry = await importSdk("memory-core-host-engine-embeddings");
  const adapter = registry.getMemoryEmbeddingProvider(search.provider, cfg);
  if (!adapter) {
    log?.warn?.(`memory-wasm: no embedding provider "${search.provider}"; recall stays lexical`);
    return null;
  }
  // As OpenClaw's memory-core asks for its provider, without a fallback:
  // a failing provider is the component's to report (lexical recall).
  const created = await adapter.create({
    config: cfg,
    provider: search.provider,
    model: search.model || adapter.defaultModel || "",
    remote: search.remote,
    inputType: search.inputType,
    queryInputType: search.queryInputType,
    documentInputType: search.documentInputType,
    local: search.local,
    fallback: "none",
  });
  const provider = created?.provider ?? created;
  if (!provider?.embedBatch) return null;
  // `describe` is synchronous in the component: learn the length now.
  const dimensions =
    provider.dimensions ?? (await withDeadline(provider.embedBatch(["dimensions"]), timeoutMs))[0]?.length;
  if (!dimensions) throw new Error(`embedding provider "${search.provider}" returned no vector`);
  return {
    info: {
      provider: String(provider.id ?? search.provider),
      model: String(provider.model ?? search.model ?? "default"),
      dimensions,
      maxBatch: Math.min(MAX_BATCH, provider.maxBatch ?? MAX_BATCH),
    },
    embed: (texts) => provider.embedBatch(texts),
  };
}

/**
 * The agent's model, through `api.runtime.llm.complete`. The call names no
 * agent: OpenClaw refuses a plugin that picks its target agent unless
 * `llm.allowAgentIdOverride` is set, and uses the current agent's model.
 */
export function openclawModel(api) {
  return {
    async complete(request, signal) {
      const { systemPrompt, messages } = llmMessagesOf(request);
      const reply = await api.runtime.llm.complete({
        messages,
        systemPrompt,
        maxTokens: request.maxOutputTokens,
        signal,
        purpose: `memory-wasm.${request.purpose}`,
      });
      return parseReply(reply?.text ?? "", request.tools);
    },
  };
}

/**
 * The tool protocol for a model host without tool calls: OpenClaw's plugin
 * LLM call is text in, text out, so the tools are described in the system
 * prompt and a call is a JSON reply. The component validates every call, as
 * it does a native one.
 */
export function toolProtocol(tools) {
  const list = tools
    .map((t) => `- ${t.name}: ${t.description}\n  arguments (JSON Schema): ${t.parametersSchema}`)
    .join("\n");
  return [
    "You may call these tools:",
    list,
    'To call tools, reply with only a JSON object and nothing else: {"tool_calls": [{"name": "<tool>", "arguments": {...}}]}.',
    "Tool results come back in the next user message. When you have the answer, reply with plain text, not JSON.",
  ].join("\n");
}

/** A completion request as `{systemPrompt, messages}` of `api.runtime.llm.complete`. */
export function llmMessagesOf(request) {
  const system = [];
  const messages = [];
  for (const m of request.messages) {
    if (m.role === "system") {
      system.push(m.content);
    } else if (m.role === "tool") {
      messages.push({ role: "user", content: `Tool result (call ${m.toolCallId ?? "?"}):\n${m.content}` });
    } else if (m.role === "assistant" && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => ({ name: c.name, arguments: safeParse(c.arguments) }));
      const text = [m.content, JSON.stringify({ tool_calls: calls })].filter(Boolean).join("\n");
      messages.push({ role: "assistant", content: text });
    } else {
      messages.push({ role: m.role, content: m.content });
    }
  }
  if (request.tools?.length) system.push(toolProtocol(request.tools));
  return { systemPrompt: system.join("\n\n") || undefined, messages };
}

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A model's text as the component's completion: a JSON reply naming tool
 * calls (optionally in a code fence) when tools were offered, else text.
 */
export function parseReply(text, tools = []) {
  if (tools.length) {
    const body = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, "$1");
    if (body.startsWith("{")) {
      const parsed = safeParse(body);
      if (parsed && Array.isArray(parsed.tool_calls)) {
        const toolCalls = parsed.tool_calls.map((call, index) => ({
          id: `call_${index + 1}`,
          name: String(call?.name ?? ""),
          arguments: typeof call?.arguments === "string" ? call.arguments : JSON.stringify(call?.arguments ?? {}),
        }));
        return { text: "", toolCalls };
      }
    }
  }
  return { text, toolCalls: [] };
}
