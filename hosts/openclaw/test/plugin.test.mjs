// The plugin's registration driven by a stand-in for OpenClaw's plugin API:
// the real component on a temporary workspace, a scripted `llm.complete`,
// and the hooks, tools and manager called as OpenClaw calls them. (The
// end-to-end test, test/e2e.mjs, runs the same plugin in the real OpenClaw.)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import plugin, { DREAM_TOKEN } from "../index.js";

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-plugin-"));
fs.mkdirSync(path.join(workspace, "memory"));
fs.writeFileSync(
  path.join(workspace, "MEMORY.md"),
  "# Memory\n\n- The staging server is atlas-2. <!-- trigger: staging server -->\n",
);
fs.writeFileSync(path.join(workspace, "AGENTS.md"), "# Rules\n- Be brief.\n");

function standInApi(replies) {
  const hooks = new Map();
  const tools = new Map();
  const services = [];
  const llmCalls = [];
  const api = {
    id: "memory-wasm",
    config: {},
    pluginConfig: { syncIntervalMs: 0, timeZone: "UTC" },
    logger: { info() {}, warn() {}, debug() {}, error() {} },
    runtime: {
      agent: { resolveAgentWorkspaceDir: () => workspace },
      llm: {
        async complete(request) {
          llmCalls.push(request);
          return { text: replies.shift() ?? "NO_REPLY" };
        },
      },
    },
    registerMemoryCapability(capability) {
      api.capability = capability;
    },
    registerTool(factory, { names }) {
      tools.set(names[0], factory);
    },
    on(name, handler) {
      hooks.set(name, handler);
    },
    registerService(service) {
      services.push(service);
    },
    registerCli() {},
  };
  plugin.register(api);
  return { api, hooks, tools, services, llmCalls };
}

const replies = ["- The release train ships on Thursdays.", "- The vault code is 1234, says a stranger."];
const host = standInApi(replies);
const ctx = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-1", workspaceDir: workspace, trigger: "user" };
after(async () => {
  await host.api.capability.runtime.closeAllMemorySearchManagers();
  fs.rmSync(workspace, { recursive: true, force: true });
});

test("registers what the memory slot needs", () => {
  assert.deepEqual([...host.tools.keys()].sort(), ["intent", "memory_get", "memory_search"]);
  for (const hook of ["before_model_resolve", "before_prompt_build", "before_agent_run", "before_compaction", "agent_end", "session_end", "before_agent_reply"]) {
    assert.ok(host.hooks.has(hook), hook);
  }
  assert.equal(host.api.capability.flushPlanResolver(), null, "OpenClaw's own flush turn is off");
  assert.deepEqual(host.api.capability.promptBuilder({ availableTools: new Set(["memory_search"]) })[0], "## Memory");
});

test("before a user turn: MEMORY.md bootstrapped (AGENTS.md left to OpenClaw) and the trigger block prepended", async () => {
  const result = await host.hooks.get("before_prompt_build")({ prompt: "is the staging server up?", messages: [] }, ctx);
  assert.match(result.prependSystemContext, /^<memory-file path="MEMORY.md">/);
  assert.ok(!result.prependSystemContext.includes("AGENTS.md"));
  assert.match(result.prependContext, /^<memory-context kind="trigger" source="MEMORY.md#L3-L3" class="owner">/);
  const cron = await host.hooks.get("before_prompt_build")({ prompt: "staging server" }, { ...ctx, trigger: "cron" });
  assert.equal(cron, undefined, "no blocks for scheduled turns");
});

test("tools: memory_search framed hits, memory_get lines, intents owner only", async () => {
  const search = host.tools.get("memory_search")({ ...ctx, senderIsOwner: true });
  const found = (await search.execute("t1", { query: "staging server" })).details;
  assert.equal(found.results[0].citation, "MEMORY.md#L3-L3");
  assert.match(found.results[0].snippet, /^<memory-recall source="MEMORY.md#L3-L3" class="owner" trust="trusted">/);
  const get = host.tools.get("memory_get")({ ...ctx, senderIsOwner: true });
  assert.equal((await get.execute("t2", { path: "MEMORY.md", from: 3, lines: 1 })).details.text, "- The staging server is atlas-2. <!-- trigger: staging server -->");
  await assert.rejects(get.execute("t3", { path: "../etc/passwd" }), /access-denied/);
  const stranger = host.tools.get("intent")({ ...ctx, senderIsOwner: false, channel: "telegram", senderId: "x" });
  await assert.rejects(stranger.execute("t4", { action: "create", text: "ping me", triggers: ["release"] }), /access-denied/);
  const owner = host.tools.get("intent")({ ...ctx, senderIsOwner: true });
  const created = (await owner.execute("t5", { action: "create", text: "mention the changelog", triggers: ["release"] })).details;
  assert.equal(created.intent.state, "armed");
});

async function classOf(query) {
  const { manager } = await host.api.capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
  const [hit] = await manager.search(query);
  return hit?.provenance.originClass;
}

test("before compaction (OpenClaw says only the session key): the component's flush, as the owner the run said", async () => {
  await host.hooks.get("before_agent_run")({ senderIsOwner: true }, ctx);
  const messages = [
    { role: "user", content: "we ship the release train on Thursdays" },
    { role: "assistant", content: [{ type: "text", text: "Noted." }] },
  ];
  await host.hooks.get("before_compaction")({ messageCount: 2, messages }, { sessionKey: ctx.sessionKey });
  const today = new Date().toISOString().slice(0, 10);
  const note = fs.readFileSync(path.join(workspace, "memory", `${today}.md`), "utf8");
  assert.ok(note.includes("The release train ships on Thursdays."));
  assert.equal(host.llmCalls.length, 1);
  assert.equal(host.llmCalls[0].purpose, "memory-wasm.flush");
  assert.equal(host.llmCalls[0].agentId, undefined, "the call names no agent (OpenClaw refuses that)");
  assert.equal(await classOf("release train Thursdays"), "agent", "the model's notes from the owner's session");
});

test("after a run: the transcript is ingested once, with the owner's turns as the owner's", async () => {
  const messages = [
    { role: "user", content: "my favourite editor is Helix" },
    { role: "assistant", content: "Good to know." },
  ];
  await host.hooks.get("agent_end")({ messages, success: true }, ctx);
  await host.hooks.get("agent_end")({ messages, success: true }, ctx);
  await host.hooks.get("session_end")({ sessionId: ctx.sessionId }, { agentId: "main", sessionId: ctx.sessionId, sessionKey: ctx.sessionKey });
  const files = fs.readdirSync(path.join(workspace, "memory")).filter((f) => f.includes("-session-"));
  assert.equal(files.length, 1);
  const text = fs.readFileSync(path.join(workspace, "memory", files[0]), "utf8");
  assert.equal(text.split("my favourite editor is Helix").length - 1, 1, "ingested once");
  assert.equal(await classOf("favourite editor Helix"), "owner");
  const { manager } = await host.api.capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
  assert.equal(manager.status().backend, "builtin");
  assert.ok(manager.status().files >= 3);
});

test("a stranger on a channel: their run and their session's compaction are never the owner's", async () => {
  const stranger = { agentId: "main", sessionKey: "agent:main:telegram:42", sessionId: "s-42", workspaceDir: workspace, trigger: "user", channel: "telegram", senderId: "42" };
  // The owner's intent (trigger "release") must not fire, nor be spent, for a stranger.
  const blocks = await host.hooks.get("before_prompt_build")({ prompt: "what about the release?" }, stranger);
  assert.ok(!String(blocks?.prependContext ?? "").includes('kind="intent"'), "no owner intents for a stranger");
  const mine = await host.hooks.get("before_prompt_build")({ prompt: "what about the release?" }, ctx);
  assert.ok(mine.prependContext.includes('kind="intent"'), "the same message fires it for the owner");
  await host.hooks.get("before_agent_run")({ senderIsOwner: false }, stranger);
  await host.hooks.get("agent_end")({ messages: [{ role: "user", content: "the wifi password is hunter2" }] }, stranger);
  assert.equal(await classOf("wifi password hunter2"), "untrusted");
  await host.hooks.get("before_compaction")(
    { messageCount: 1, messages: [{ role: "user", content: "remember the vault code 1234" }] },
    { sessionKey: stranger.sessionKey },
  );
  assert.equal(await classOf("vault code 1234 stranger"), "untrusted");
});

test("the cron turn carrying the dreaming token runs a sweep and answers it", async () => {
  const handler = host.hooks.get("before_agent_reply");
  assert.equal(await handler({ cleanedBody: "hello" }, { ...ctx, trigger: "cron" }), undefined, "other cron turns pass");
  assert.equal(await handler({ cleanedBody: DREAM_TOKEN }, { ...ctx, trigger: "user" }), undefined, "only cron");
  const result = await handler({ cleanedBody: DREAM_TOKEN }, { ...ctx, trigger: "cron" });
  assert.equal(result.handled, true);
  assert.match(result.reply.text, /^memory-wasm dreaming: sweep \d+/);
});
