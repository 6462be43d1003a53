// The workspace lock (docs/ARCHITECTURE.md, "The workspace lock"): its pure
// parts, what holds and what is stale (a crash, a reused pid, a reboot),
// many processes racing for one stale lock, and memory-harness honouring a
// lock this host holds, naming it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  acquireWorkspaceLock,
  acquireWorkspaceLockWaiting,
  judge,
  parseHolder,
  parseStat,
  programName,
  refusal,
  UNNAMED_GRACE_MS,
} from "../lib/lock.js";
import { harnessBin, harnessExpectedAt } from "./harness-bin.mjs";

const LOCK_JS = fileURLToPath(new URL("../lib/lock.js", import.meta.url));

const holder = (pid, start) => ({
  pid,
  host: "box",
  boot: "b1",
  start,
  program: "openclaw gateway",
  since: "2026-12-04T17:20:03Z",
});

function workspace(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-lock-"));
  fs.mkdirSync(path.join(dir, ".memory"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The start time of a live process (clock ticks since boot). */
const startOf = (pid) => parseStat(fs.readFileSync(`/proc/${pid}/stat`, "utf8")).start;

/** A lock line as a holder on this machine would write it. */
function lockLine(pid, start, program = "memory-harness note") {
  const boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  return `${JSON.stringify({ pid, host: os.hostname(), boot, start, program, since: "2026-12-04T17:20:03Z" })}\n`;
}

test("a holder line parses; junk names none", () => {
  const line = JSON.stringify(holder(1234, 99));
  // The same line memory-harness writes and parses (workspace_lock.rs's tests).
  assert.equal(line, '{"pid":1234,"host":"box","boot":"b1","start":99,"program":"openclaw gateway","since":"2026-12-04T17:20:03Z"}');
  assert.deepEqual(parseHolder(`${line}\n`), holder(1234, 99));
  assert.equal(parseHolder('{"pid":7,"host":"mac","boot":null,"start":null,"program":"p","since":"s"}').start, null);
  for (const junk of ["", "pid 1234", '{"pid":1', '{"pid":0,"host":"h","program":"p","since":"s"}', "null"]) {
    assert.equal(parseHolder(junk), null, junk);
  }
});

test("held while the holder runs as it started; stale when gone, reused, rebooted; another host holds", () => {
  const me = holder(100, 5);
  const h = holder(1234, 99);
  const at = (record, running) => judge(record, 60000, me, false, () => running);
  assert.deepEqual(at(h, { start: 99 }), { held: "held", holder: h });
  assert.deepEqual(at(h, { start: null }), { held: "held", holder: h }); // macOS: liveness only
  assert.ok(at(h, null).stale);
  assert.equal(at(h, { start: 100 }).stale, "its pid was reused by a process started later");
  assert.equal(at({ ...h, boot: "b0" }, { start: 99 }).stale, "it was taken before the machine restarted");
  assert.equal(at({ ...h, host: "other" }, null).held, "elsewhere");
  const never = () => assert.fail("our own pid needs no probe");
  assert.equal(judge(holder(100, 5), 0, me, true, never).held, "mine");
  assert.ok(judge(holder(100, 5), 0, me, false, never).stale); // an earlier process with our pid
  assert.equal(judge(null, 1000, me, false, never).held, "opening");
  assert.ok(judge(null, UNNAMED_GRACE_MS, me, false, never).stale);
});

test("refusals name the holder in memory-harness's words; the program is the script and its subcommand", () => {
  assert.equal(
    refusal("/w", { held: "held", holder: holder(1234, 99) }),
    "the memory of /w is in use by openclaw gateway (pid 1234 on host box, since 2026-12-04T17:20:03Z); wait for it to finish, then retry",
  );
  assert.match(refusal("/w", { held: "elsewhere", holder: holder(1, 1) }), /on another host .* remove \.memory\/workspace\.lock/);
  assert.equal(programName(["/usr/bin/node", "/opt/openclaw/openclaw.mjs", "gateway", "--port", "1"]), "openclaw gateway");
  assert.equal(programName(["node", "/x/openclaw.mjs", "memory", "search", "heron"]), "openclaw memory search");
  assert.equal(programName(["node"]), "node");
  assert.deepEqual(parseStat("42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000"), { state: "S", start: 987654 });
});

test("one holder per workspace; the lock names it and goes on release", (t) => {
  const ws = workspace(t);
  const file = path.join(ws, ".memory", "workspace.lock");
  const release = acquireWorkspaceLock(ws, { program: "openclaw gateway" });
  const named = parseHolder(fs.readFileSync(file, "utf8"));
  assert.equal(named.pid, process.pid);
  assert.equal(named.start, startOf(process.pid));
  assert.equal(named.program, "openclaw gateway");
  assert.throws(() => acquireWorkspaceLock(ws), /already open in this process \(openclaw gateway \(pid \d+ on host/);
  release();
  assert.equal(fs.existsSync(file), false);
});

test("stale locks are taken over: a gone holder, our own pid from an earlier process, a reused pid, an old unnamed file", (t) => {
  const ws = workspace(t);
  const file = path.join(ws, ".memory", "workspace.lock");
  for (const stale of [
    lockLine(999999999, 1),
    lockLine(process.pid, startOf(process.pid)), // an earlier process that had our pid
    lockLine(process.ppid, startOf(process.ppid) + 1), // our parent's pid, reused: it started at another time
  ]) {
    fs.writeFileSync(file, stale);
    acquireWorkspaceLock(ws)();
    assert.equal(fs.existsSync(file), false, stale);
  }
  fs.writeFileSync(file, ""); // created a moment ago, not yet written
  assert.throws(() => acquireWorkspaceLock(ws), (e) => e.busy && /being opened by another process/.test(e.message));
  const old = new Date(Date.now() - UNNAMED_GRACE_MS - 1000);
  fs.utimesSync(file, old, old); // its holder died before naming itself
  acquireWorkspaceLock(ws)();
});

test("a live holder is refused by name; an older version's lock is honoured while its process lives", (t) => {
  const ws = workspace(t);
  const file = path.join(ws, ".memory", "workspace.lock");
  fs.writeFileSync(file, lockLine(process.ppid, startOf(process.ppid), "memory-harness index"));
  assert.throws(
    () => acquireWorkspaceLock(ws),
    (e) => e.busy && e.message.includes(`in use by memory-harness index (pid ${process.ppid} on host ${os.hostname()}, since 2026-12-04T17:20:03Z)`),
  );
  fs.rmSync(file);
  const legacy = path.join(ws, ".memory", "harness.lock");
  fs.writeFileSync(legacy, `pid ${process.ppid}`);
  assert.throws(() => acquireWorkspaceLock(ws), /in use by an older memory-harness \(pid \d+, \.memory\/harness\.lock\)/);
  fs.writeFileSync(legacy, ""); // released
  acquireWorkspaceLock(ws)();
  assert.equal(fs.existsSync(legacy), false, "a dead legacy lock is removed");
});

test("a busy workspace is waited for up to the deadline, then refused as busy; the health record keeps the last failure", async (t) => {
  const { recordFailure, loadHealth } = await import("../lib/health.js");
  const ws = workspace(t);
  const file = path.join(ws, ".memory", "workspace.lock");
  // Held by a live process (our parent), released within the wait.
  fs.writeFileSync(file, lockLine(process.ppid, startOf(process.ppid)));
  setTimeout(() => fs.rmSync(file), 300);
  const started = Date.now();
  const release = await acquireWorkspaceLockWaiting(ws, 5000);
  assert.ok(Date.now() - started >= 250);
  release();
  // Held past the wait: kind busy.
  fs.writeFileSync(file, lockLine(process.ppid, startOf(process.ppid)));
  await assert.rejects(
    acquireWorkspaceLockWaiting(ws, 200),
    (e) => e.kind === "busy" && /in use by memory-harness note \(pid \d+/.test(e.message) && /waited 200 ms/.test(e.message),
  );
  fs.rmSync(file);
  // The health record, in memory-harness's format.
  assert.equal(recordFailure(ws, { command: "search", kind: "trap", message: "boom", trap: true }), null);
  const health = loadHealth(ws);
  assert.equal(health.traps, 1);
  assert.equal(health.deadline_stops, 0);
  assert.equal(health.last_error.command, "search");
  assert.equal(health.last_error.host, "openclaw");
});

/**
 * A Node process that tries the lock once (at `goAt`, so that many try at
 * the same moment), prints `won` or `busy: …`, and holds what it won until
 * its stdin closes.
 */
function contender(ws, goAt = 0) {
  const script = `
    import { acquireWorkspaceLock } from ${JSON.stringify(LOCK_JS)};
    while (Date.now() < ${goAt});
    try {
      acquireWorkspaceLock(${JSON.stringify(ws)}, { program: "contender" });
      console.log("won");
    } catch (error) {
      console.log("busy: " + error.message);
    }
    process.stdin.resume();
    process.stdin.on("end", () => process.exit(0));
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  const said = new Promise((resolve) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.trim());
    });
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return { child, said, exited };
}

test("a holder killed with SIGKILL leaves a lock the next process takes over", async (t) => {
  const ws = workspace(t);
  const holderProcess = contender(ws);
  assert.equal(await holderProcess.said, "won");
  assert.throws(() => acquireWorkspaceLock(ws), new RegExp(`in use by contender \\(pid ${holderProcess.child.pid} `));
  holderProcess.child.kill("SIGKILL");
  await holderProcess.exited;
  acquireWorkspaceLock(ws)();
});

test("many processes racing for one stale lock: exactly one wins", async (t) => {
  const ws = workspace(t);
  fs.writeFileSync(path.join(ws, ".memory", "workspace.lock"), lockLine(999999999, 1));
  const goAt = Date.now() + 1500; // past the time 8 processes take to start
  const racers = Array.from({ length: 8 }, () => contender(ws, goAt));
  const said = await Promise.all(racers.map((r) => r.said));
  for (const r of racers) r.child.stdin.end();
  await Promise.all(racers.map((r) => r.exited));
  assert.equal(said.filter((s) => s === "won").length, 1, said.join("\n"));
  for (const s of said.filter((s) => s !== "won")) {
    assert.match(s, /^busy: the memory of .* is (in use by contender|being taken over|being opened)/);
  }
});

test("memory-harness refuses a workspace this host holds, naming it", (t) => {
  const harness = harnessBin;
  assert.ok(harness, `${harnessExpectedAt} is built first (cargo build --release -p memory-harness)`);
  const ws = workspace(t);
  const config = path.join(ws, "harness.toml");
  fs.writeFileSync(config, "[limits]\nlockWaitMs = 200\n");
  const release = acquireWorkspaceLock(ws, { program: "openclaw gateway" });
  const run = () => spawnSync(harness, ["--workspace", ws, "--config", config, "--embedder", "none", "status"], { encoding: "utf8" });
  const out = run();
  release();
  assert.equal(out.status, 75, out.stderr);
  assert.match(
    out.stderr,
    new RegExp(`busy: the memory of .* is in use by openclaw gateway \\(pid ${process.pid} on host .*; wait for it to finish, then retry \\(waited 200 ms`),
  );
  assert.equal(run().status, 0, "free once released");
});
