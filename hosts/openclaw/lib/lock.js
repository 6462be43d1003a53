// One process at a time per workspace, of either host: the index runs SQLite
// in exclusive locking mode over a VFS without cross-process locks, so a
// second process must be refused, not let in. The protocol is shared with
// memory-harness (host-harness/src/host/workspace_lock.rs) and described
// once, in docs/ARCHITECTURE.md ("The workspace lock"): `.memory/workspace.lock`,
// created exclusively, holds one JSON line naming its holder (pid, host, boot
// id, process start time, program, since); it holds while that process runs
// (same host, same boot, the pid alive and started when the line says); a
// stale lock is taken over under `.memory/workspace.lock.break`, never
// removed blindly. The refusals use the harness's words.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const LOCK_FILE = "workspace.lock";
const BREAK_FILE = "workspace.lock.break";
/** A lock naming no holder is being written by it, for this long. */
export const UNNAMED_GRACE_MS = 10000;
/** A break file older than this was left by a process that died taking over. */
const BREAK_STALE_MS = 10000;
/** Earlier versions' lock files ("pid N"): honoured while they name a live process, removed once they do not. */
const LEGACY = [
  ["harness.lock", "an older memory-harness"],
  ["js-host.lock", "an older OpenClaw host"],
];
/** Lock files this process holds: a lock naming our pid that is not here is an earlier process's. */
const heldHere = new Set();

/** How long a busy workspace is waited for by default (memory-harness's `limits.lockWaitMs`). */
export const DEFAULT_LOCK_WAIT_MS = 10000;

/** The error codes that say the workspace may not be written. */
const READ_ONLY_CODES = new Set(["EROFS", "EACCES", "EPERM"]);

/** The holder a lock file names, if it is one well-formed line; else null. */
export function parseHolder(text) {
  let holder;
  try {
    holder = JSON.parse(text.trim());
  } catch {
    return null;
  }
  if (holder === null || typeof holder !== "object") return null;
  const { pid, host, boot = null, start = null, program, since } = holder;
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0xffffffff) return null;
  if (typeof host !== "string" || typeof program !== "string" || typeof since !== "string") return null;
  if (boot !== null && typeof boot !== "string") return null;
  if (start !== null && !(Number.isInteger(start) && start >= 0)) return null;
  return { pid, host, boot, start, program, since };
}

/**
 * Whether the lock `record` (unparseable: null, `ageMs` old) still holds
 * against `me`, a process that holds it already (`mine`) or not.
 * `probe(pid)` is null (gone) or `{ start }` (running; start null when unknown).
 * Returns `{ held: "held" | "elsewhere" | "mine" | "opening", holder }` or `{ stale: why }`.
 */
export function judge(record, ageMs, me, mine, probe) {
  if (!record) return ageMs < UNNAMED_GRACE_MS ? { held: "opening" } : { stale: "it names no holder and is old" };
  if (record.host !== me.host) return { held: "elsewhere", holder: record };
  if (record.boot && me.boot && record.boot !== me.boot) return { stale: "it was taken before the machine restarted" };
  if (record.pid === me.pid) {
    // No other live process has our pid: ours, or an earlier process's that had it.
    return mine ? { held: "mine", holder: record } : { stale: "it names this process's pid, left by an earlier process" };
  }
  const running = probe(record.pid);
  if (!running) return { stale: "its holder is gone" };
  if (running.start != null && record.start != null && running.start !== record.start) {
    return { stale: "its pid was reused by a process started later" };
  }
  return { held: "held", holder: record };
}

/** "openclaw gateway (pid 1234 on host box, since 2026-12-04T17:20:03Z)". */
export function describeHolder(holder) {
  return `${holder.program} (pid ${holder.pid} on host ${holder.host}, since ${holder.since})`;
}

/** The refusal for a lock that holds; memory-harness's words. */
export function refusal(workspaceDir, verdict) {
  const ws = workspaceDir;
  switch (verdict.held) {
    case "held":
      return `the memory of ${ws} is in use by ${describeHolder(verdict.holder)}; wait for it to finish, then retry`;
    case "elsewhere":
      return `the memory of ${ws} is in use by ${describeHolder(verdict.holder)}, on another host sharing this file system; wait for it to finish, or remove .memory/${LOCK_FILE} if it no longer runs there`;
    case "mine":
      return `the memory of ${ws} is already open in this process (${describeHolder(verdict.holder)}); share that instance`;
    case "opening":
      return `the memory of ${ws} is being opened by another process (its lock names no holder yet); wait for it to finish, then retry`;
    default:
      return `the memory of ${ws} is being taken over from a stale lock by another process; retry`;
  }
}

/** The state and start time in a `/proc/<pid>/stat` line (fields 3 and 22, past the command name). */
export function parseStat(line) {
  const close = line.lastIndexOf(")");
  if (close < 0) return null;
  const fields = line.slice(close + 1).trim().split(/\s+/);
  if (fields.length < 20 || !/^\d+$/.test(fields[19])) return null;
  return { state: fields[0], start: Number(fields[19]) };
}

const hasProc = () => fs.existsSync("/proc/self/stat");

/** null when `pid` is gone (a zombie too), else `{ start }` (null without /proc). */
function probe(pid) {
  if (hasProc()) {
    const stat = parseStat(safeRead(`/proc/${pid}/stat`));
    return stat && stat.state !== "Z" && stat.state !== "X" ? { start: stat.start } : null;
  }
  try {
    process.kill(pid, 0);
    return { start: null };
  } catch (error) {
    return error.code === "EPERM" ? { start: null } : null;
  }
}

/** What runs: the script's name and its subcommand words ("openclaw gateway", "openclaw memory search"). */
export function programName(argv = process.argv) {
  const script = argv[1] ? path.basename(argv[1]).replace(/\.[cm]?js$/, "") : "node";
  const words = [];
  for (const arg of argv.slice(2)) {
    if (words.length === 2 || !/^[a-z][a-z0-9-]*$/.test(arg)) break;
    words.push(arg);
  }
  return [script, ...words].join(" ");
}

let fixed;
/** This process as a lock's holder, taken now. */
function me(program) {
  fixed ??= {
    host: os.hostname(),
    boot: safeRead("/proc/sys/kernel/random/boot_id").trim() || null,
    start: parseStat(safeRead("/proc/self/stat"))?.start ?? null,
  };
  return {
    pid: process.pid,
    host: fixed.host,
    boot: fixed.boot,
    start: fixed.start,
    program: program ?? programName(),
    since: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
}

/** An error of kind `kind` (`workspace-read-only`, `busy`), as the component's errors carry one. */
function kindError(kind, message) {
  const error = new Error(message);
  error.kind = kind;
  return error;
}

/**
 * Takes the workspace's lock, waiting up to `waitMs` for another process
 * (memory-harness, another gateway) to let go; resolves to the function that
 * releases it. Rejects with kind `busy` (naming the holder) after the wait,
 * and with kind `workspace-read-only` when the workspace cannot be written.
 * `options.program` names this process in the lock (default: from argv).
 */
export async function acquireWorkspaceLockWaiting(workspaceDir, waitMs = DEFAULT_LOCK_WAIT_MS, options = {}) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return acquireWorkspaceLock(workspaceDir, options);
    } catch (error) {
      if (!error.busy) throw error;
      if (Date.now() >= deadline) {
        throw kindError("busy", `${error.message} (waited ${waitMs} ms, lockWaitMs)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Takes the workspace's lock; returns the function that releases it. */
export function acquireWorkspaceLock(workspaceDir, options = {}) {
  try {
    return takeLock(workspaceDir, options.program);
  } catch (error) {
    if (READ_ONLY_CODES.has(error.code)) {
      const refusal = kindError(
        "workspace-read-only",
        `${workspaceDir} cannot be written (${error.code}: ${error.message}); nothing was written`,
      );
      refusal.why = `${workspaceDir} cannot be written (${error.code})`;
      throw refusal;
    }
    throw error;
  }
}

function busyError(message) {
  const error = kindError("busy", message);
  error.busy = true;
  return error;
}

function takeLock(workspaceDir, program) {
  fs.mkdirSync(path.join(workspaceDir, ".memory"), { recursive: true });
  // One name for the lock however the workspace was named, so that this process knows its own.
  const dir = fs.realpathSync(path.join(workspaceDir, ".memory"));
  const legacy = legacyHolder(workspaceDir, dir);
  if (legacy) throw busyError(legacy);
  const file = path.join(dir, LOCK_FILE);
  // Twice: a stale lock taken over leaves the name free for the next try.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const holder = me(program);
    let fd;
    try {
      fd = fs.openSync(file, "wx");
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
    }
    if (fd !== undefined) return holding(fd, file, holder);
    const found = readWithAge(file);
    if (!found) continue; // released meanwhile
    const verdict = judge(parseHolder(found.text), found.ageMs, holder, heldHere.has(file), probe);
    if (verdict.held === "mine") throw new Error(refusal(workspaceDir, verdict));
    if (verdict.held) throw busyError(refusal(workspaceDir, verdict));
    if (!takeOver(dir, found.text)) throw busyError(refusal(workspaceDir, verdict));
  }
  throw busyError(refusal(workspaceDir, {}));
}

/** The lock just created as `fd`, made to name this process (best effort: unnamed, it still excludes others for a while). */
function holding(fd, file, holder) {
  try {
    fs.writeSync(fd, `${JSON.stringify(holder)}\n`);
  } catch {
    // A full disk: the file holds without a name.
  } finally {
    fs.closeSync(fd);
  }
  const { ino, dev } = fs.statSync(file);
  const content = safeRead(file);
  for (const [name] of LEGACY) fs.rmSync(path.join(path.dirname(file), name), { force: true }); // not naming a live process
  heldHere.add(file);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    heldHere.delete(file);
    process.off("exit", release);
    try {
      const now = fs.statSync(file);
      // Only while it is still the file we wrote: never another's.
      if (now.ino === ino && now.dev === dev && fs.readFileSync(file, "utf8") === content) fs.unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  process.on("exit", release);
  return release;
}

/**
 * Removes the stale lock `seen` unless it changed meanwhile: under the break
 * file, so that of many processes finding one stale lock only one removes it
 * (and none removes the fresh lock another just took). False: another
 * process is taking it over.
 */
function takeOver(dir, seen) {
  const brk = path.join(dir, BREAK_FILE);
  try {
    fs.writeFileSync(brk, `pid ${process.pid}\n`, { flag: "wx" });
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    const found = readWithAge(brk);
    if (found && found.ageMs > BREAK_STALE_MS) fs.rmSync(brk, { force: true });
    return false;
  }
  try {
    if (readWithAge(path.join(dir, LOCK_FILE))?.text === seen) fs.rmSync(path.join(dir, LOCK_FILE), { force: true });
  } finally {
    fs.rmSync(brk, { force: true });
  }
  return true;
}

/** The refusal when an earlier version's lock names a live process. */
function legacyHolder(workspaceDir, dir) {
  for (const [name, who] of LEGACY) {
    const pid = Number(/^pid (\d+)\s*$/.exec(safeRead(path.join(dir, name)))?.[1]);
    if (pid && pid !== process.pid && probe(pid)) {
      return `the memory of ${workspaceDir} is in use by ${who} (pid ${pid}, .memory/${name}); wait for it to finish, then retry`;
    }
  }
  return null;
}

/** A file's text and age, or null when it is not there. */
function readWithAge(file) {
  try {
    const text = fs.readFileSync(file, "utf8");
    return { text, ageMs: Date.now() - fs.statSync(file).mtimeMs };
  } catch (error) {
    if (error.code === "ENOENT") return null;
    throw error;
  }
}

function safeRead(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
