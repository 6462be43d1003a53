// Busy and read-only workspaces under the JavaScript host: an ingest refused
// because another process holds the workspace past `lockWaitMs` is spooled,
// never dropped, and replayed when this host gets the workspace; a read-only
// workspace is read as it is (with a note) and refuses writes with kind
// `workspace-read-only`, changing nothing; failures land in the health record.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryComponent, turnContext } from "../lib/component.js";
import { loadHealth } from "../lib/health.js";
import { parseStat } from "../lib/lock.js";

const NOW = Date.UTC(2026, 11, 2, 12);

function seed(dir) {
  fs.mkdirSync(path.join(dir, "memory"), { recursive: true });
  fs.writeFileSync(path.join(dir, "MEMORY.md"), "# Memory\n\n- Dana owns the billing service.\n");
  fs.writeFileSync(path.join(dir, "memory/2026-12-01.md"), "- The gateway stays on loopback.\n");
}

test("an ingest refused as busy is spooled and replayed when the workspace is free", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-spool-"));
  try {
    seed(dir);
    fs.mkdirSync(path.join(dir, ".memory"));
    // memory-harness holds it: its lock names a live process (our parent, as it started).
    const boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const start = parseStat(fs.readFileSync(`/proc/${process.ppid}/stat`, "utf8")).start;
    const holder = { pid: process.ppid, host: os.hostname(), boot, start, program: "memory-harness index", since: "2026-12-02T12:00:00Z" };
    fs.writeFileSync(path.join(dir, ".memory/workspace.lock"), `${JSON.stringify(holder)}\n`);
    const busy = new MemoryComponent({ workspaceDir: dir, lockWaitMs: 200, health: true });
    const request = {
      sessionId: "spooled-js",
      transcript: '{"role":"user","text":"heron: the staging port is 8443","owner":true}\n',
      context: turnContext({ nowMs: NOW, sessionId: "spooled-js" }),
    };
    await assert.rejects(busy.ingest(request), (e) => e.kind === "busy" && Boolean(e.spooled) && /spooled/.test(e.message));
    const spooled = fs.readdirSync(path.join(dir, ".memory/spool"));
    assert.equal(spooled.length, 1);
    assert.match(spooled[0], /^js-.*-ingest\.json$/);
    assert.equal(loadHealth(dir).last_error.kind, "busy");
    await busy.close();

    fs.rmSync(path.join(dir, ".memory/workspace.lock")); // released
    const memory = new MemoryComponent({ workspaceDir: dir, lockWaitMs: 200 });
    await memory.open();
    assert.equal(memory.replayed.length, 1);
    assert.equal(memory.replayed[0].error, undefined);
    assert.equal(fs.readdirSync(path.join(dir, ".memory/spool")).length, 0);
    const note = fs.readFileSync(path.join(dir, "memory/2026-12-02-session-spooled-js.md"), "utf8");
    assert.match(note, /the staging port is 8443/);
    await memory.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a spooled call the component refuses as invalid is set aside, not retried forever", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-spool-bad-"));
  try {
    seed(dir);
    fs.mkdirSync(path.join(dir, ".memory/spool"), { recursive: true });
    // An ingest with an empty session id: invalid input, every time.
    const bad = { call: "ingest", request: { sessionId: "", transcript: '{"role":"user","text":"hi","owner":true}\n', context: turnContext({ nowMs: NOW, sessionId: "" }) } };
    const name = "js-0000000000000001-1-abcdef-ingest.json";
    fs.writeFileSync(path.join(dir, ".memory/spool", name), JSON.stringify(bad, (_, v) => (typeof v === "bigint" ? { $bigint: v.toString() } : v)));
    const memory = new MemoryComponent({ workspaceDir: dir, lockWaitMs: 200 });
    await memory.open();
    assert.equal(memory.replayed.length, 1);
    assert.equal(memory.replayed[0].error.kind, "invalid-input");
    assert.ok(memory.replayed[0].rejected.endsWith(path.join("rejected", name)));
    assert.deepEqual(fs.readdirSync(path.join(dir, ".memory/spool")), ["rejected"]);
    await memory.close();
    // Not replayed again.
    const again = new MemoryComponent({ workspaceDir: dir, lockWaitMs: 200 });
    await again.open();
    assert.equal(again.replayed.length, 0);
    await again.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function snapshot(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out.push([p, fs.readFileSync(p).toString("base64")]);
    }
  };
  walk(dir);
  return out;
}

test("a read-only workspace is read as it is and refuses writes with workspace-read-only", { skip: process.getuid?.() !== 0 && "mounting a tmpfs needs root (CI runs as root)" }, async () => {
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-ro-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mount]);
  try {
    const dir = path.join(mount, "ws");
    seed(dir);
    const writer = new MemoryComponent({ workspaceDir: dir });
    await writer.sync({});
    await writer.close();
    execFileSync("mount", ["-o", "remount,ro", mount]);
    const before = snapshot(dir);
    const memory = new MemoryComponent({ workspaceDir: dir, health: true });
    const found = await memory.search({ query: "loopback", context: turnContext({ nowMs: NOW }) });
    assert.equal(found.hits[0].path, "memory/2026-12-01.md");
    assert.match(memory.notes[0], /cannot be written \(EROFS\).*may be stale/);
    const status = await memory.status();
    assert.equal(status.files, 2);
    await assert.rejects(
      memory.note({ text: "a line", origin: "sender-message", triggers: [], context: turnContext({ nowMs: NOW }) }),
      (e) => e.kind === "workspace-read-only",
    );
    await memory.close();
    assert.deepEqual(snapshot(dir), before, "not one byte changed");
  } finally {
    try {
      execFileSync("umount", [mount]);
    } catch {}
    fs.rmSync(mount, { recursive: true, force: true });
  }
});
