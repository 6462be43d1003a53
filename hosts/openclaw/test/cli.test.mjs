// `openclaw memory …` (lib/cli.js) on commander, as OpenClaw registers it,
// over the real component on a temporary workspace: `--json` in OpenClaw's
// shapes, `forget`, `report`, and a failure's envelope and exit code.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Command } from "commander";
import { Memories } from "../lib/memories.js";
import { agentIdsOf, forgetJson, jsonFailure, registerCli, searchJson } from "../lib/cli.js";

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-cli-"));
fs.mkdirSync(path.join(workspace, "memory"));
fs.writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- The staging server is atlas-2.\n");
const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-cli-out-"));

const api = {
  config: {},
  pluginConfig: { syncIntervalMs: 0, timeZone: "UTC", model: { enabled: false } },
  logger: { info() {}, warn() {}, debug() {}, error() {} },
  runtime: { agent: { resolveAgentWorkspaceDir: () => workspace } },
  registerCli(fn) {
    this.cli = fn;
  },
};
const memories = new Memories(api);
const io = { out: [], err: [] };
registerCli(api, memories, { stdout: { write: (s) => io.out.push(s) }, stderr: { write: (s) => io.err.push(s) } });
after(() => memories.closeAll());

/** Runs `openclaw memory <args>`: its stdout, stderr and exit code. */
async function cli(...args) {
  const program = new Command().exitOverride();
  api.cli({ program, config: {} });
  io.out = [];
  io.err = [];
  process.exitCode = undefined;
  await program.parseAsync(["memory", ...args], { from: "user" });
  const code = process.exitCode ?? 0;
  process.exitCode = undefined;
  return { stdout: io.out.join(""), stderr: io.err.join(""), code };
}

test("the --json shapes' pure parts", () => {
  assert.deepEqual(jsonFailure("memory get failed (main): nope", { agentId: "main", kind: "not-found" }), {
    ok: false,
    error: { type: "cli_error", message: "memory get failed (main): nope", code: "not-found" },
    agentId: "main",
  });
  assert.deepEqual(jsonFailure("x"), { ok: false, error: { type: "cli_error", message: "x" } });
  assert.deepEqual(agentIdsOf({ agents: { list: [{ id: "a" }, { id: "b", default: true }] } }), ["a", "b"]);
  assert.deepEqual(agentIdsOf({}, "ops"), ["ops"]);
  assert.deepEqual(agentIdsOf({}), ["main"]);
  const json = searchJson({ mode: "fts-only", hits: [], indexRebuilt: "the index was rebuilt" });
  assert.deepEqual(Object.keys(json), ["results", "warning", "mode", "hits"]);
  const forgot = forgetJson("main", [
    { sessionId: "s1", report: { filesChanged: ["memory/a.md"], entriesRemoved: 2 } },
    { sessionId: "s2", report: { filesChanged: ["memory/a.md", "memory/b.md"], entriesRemoved: 1 } },
  ]);
  assert.deepEqual(forgot.artifacts, { memoryFiles: 2, memoryEntries: 3 });
  assert.deepEqual(forgot.sessionIds, ["s1", "s2"]);
});

test("status and search answer in OpenClaw's --json shapes", async () => {
  assert.equal((await cli("index")).code, 0);
  const status = JSON.parse((await cli("status", "--json")).stdout);
  assert.ok(Array.isArray(status) && status.length === 1);
  assert.equal(status[0].agentId, "main");
  assert.equal(status[0].status.backend, "builtin");
  assert.equal(status[0].status.workspaceDir, workspace);
  assert.equal(status[0].status.files, 1);
  assert.equal(status[0].component.files, 1);
  const search = JSON.parse((await cli("search", "staging server", "--json")).stdout);
  assert.deepEqual(
    [search.results[0].path, search.results[0].startLine, search.results[0].source],
    ["MEMORY.md", 3, "memory"],
  );
  assert.equal(search.hits[0].provenance.sourceClass, "owner");
});

test("forget removes what a session wrote, as the harness's forget does", async () => {
  const { memory } = await memories.forWorkspace({ workspaceDir: workspace });
  const context = memories.context({ senderIsOwner: true, sessionId: "chat-7" });
  const written = await memory.note({ text: "The deploy key rotates monthly.", origin: "sender-message", sessionId: "chat-7", triggers: [], context });
  assert.ok(fs.readFileSync(path.join(workspace, written.path), "utf8").includes("deploy key"));
  const forgot = await cli("forget", "--session", "chat-7", "--json");
  assert.equal(forgot.code, 0, forgot.stderr);
  const report = JSON.parse(forgot.stdout);
  assert.deepEqual([report.sessionIds, report.dryRun, report.entriesRemoved, report.filesChanged], [["chat-7"], false, 1, [written.path]]);
  const left = path.join(workspace, written.path);
  assert.ok(!fs.existsSync(left) || !fs.readFileSync(left, "utf8").includes("deploy key"), "its line is gone");
  const again = await cli("forget", "--session", "chat-7");
  assert.match(again.stdout, /^session chat-7 forgotten: 0 entries removed from 0 files/);
});

test("report writes the page outside the workspace and prints its path", async () => {
  const out = path.join(elsewhere, "review.html");
  const human = await cli("report", "--out", out);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: 0 sweeps, \\d+ candidates`));
  assert.match(fs.readFileSync(out, "utf8"), /<section id="budget">[\s\S]*MEMORY\.md/);
  const json = JSON.parse((await cli("report", "--out", out, "--json")).stdout);
  assert.deepEqual([json.agentId, json.path, json.sweeps], ["main", out, 0]);
});

test("a failure: on stderr, under --json OpenClaw's envelope on stdout, exit code 1", async () => {
  const inside = await cli("report", "--out", path.join(workspace, "review.html"), "--json");
  assert.equal(inside.code, 1);
  const failure = JSON.parse(inside.stdout);
  assert.equal(failure.ok, false);
  assert.equal(failure.agentId, "main");
  assert.equal(failure.error.type, "cli_error");
  assert.match(failure.error.message, /^memory report failed \(main\): .* is inside the workspace/);
  assert.equal(inside.stderr.trim(), failure.error.message);
  const missing = await cli("get", "memory/none.md", "--json");
  assert.equal(missing.code, 1);
  assert.equal(JSON.parse(missing.stdout).error.code, "not-found");
  const plain = await cli("get", "memory/none.md");
  assert.equal(plain.stdout, "");
  assert.match(plain.stderr, /^memory get failed \(main\): /);
});
