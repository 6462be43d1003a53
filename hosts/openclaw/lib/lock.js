// One process at a time per workspace: the index runs SQLite in exclusive
// locking mode over a VFS without cross-process locks, so a second process
// must be refused, not let in. Node has no flock, so the lock is a file
// created exclusively that names its holder; a holder that is gone leaves a
// stale file, which the next process takes over. The wasmtime harness
// (memory-harness) takes its own lock, `.memory/harness.lock`, an OS file
// lock whose file names its holder while held: a workspace it is using is
// refused here, as it refuses one this host is using.

import fs from "node:fs";
import path from "node:path";

const LOCK_NAME = "js-host.lock";
const HARNESS_LOCK_NAME = "harness.lock";
/** Lock files this process holds: a file naming our pid that is not here is a previous process's (same pid after a restart). */
const heldHere = new Set();

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** How long a busy workspace is waited for by default (memory-harness's `limits.lockWaitMs`). */
export const DEFAULT_LOCK_WAIT_MS = 10000;

/** The error codes that say the workspace may not be written. */
const READ_ONLY_CODES = new Set(["EROFS", "EACCES", "EPERM"]);

/** An error of kind `kind` (`workspace-read-only`, `busy`), as the component's errors carry one. */
function kindError(kind, message) {
  const error = new Error(message);
  error.kind = kind;
  return error;
}

/**
 * Takes the workspace's lock, waiting up to `waitMs` for another process
 * (memory-harness, another gateway) to let go; resolves to the function that
 * releases it. Rejects with kind `busy` after the wait, and with kind
 * `workspace-read-only` when the workspace cannot be written.
 */
export async function acquireWorkspaceLockWaiting(workspaceDir, waitMs = DEFAULT_LOCK_WAIT_MS) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return acquireWorkspaceLock(workspaceDir);
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
export function acquireWorkspaceLock(workspaceDir) {
  try {
    return takeLock(workspaceDir);
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
  const error = new Error(message);
  error.busy = true;
  return error;
}

function takeLock(workspaceDir) {
  const dir = path.join(workspaceDir, ".memory");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_NAME);
  const harness = Number(/^pid (\d+)\s*$/.exec(safeRead(path.join(dir, HARNESS_LOCK_NAME)))?.[1]);
  if (harness && harness !== process.pid && alive(harness)) {
    throw busyError(
      `memory-harness (pid ${harness}) is using the memory index of ${workspaceDir}; wait for it to finish, then retry`,
    );
  }
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      fs.writeFileSync(file, `pid ${process.pid}\n`, { flag: "wx" });
      heldHere.add(file);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        heldHere.delete(file);
        process.off("exit", release);
        try {
          if (fs.readFileSync(file, "utf8").trim() === `pid ${process.pid}`) fs.unlinkSync(file);
        } catch {
          // Already gone.
        }
      };
      process.on("exit", release);
      return release;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (heldHere.has(file)) {
        throw new Error(`this process already has ${workspaceDir} open; share that instance`);
      }
      const holder = Number(/pid (\d+)/.exec(safeRead(file))?.[1]);
      if (!holder && ageMs(file) < 5000) {
        // Created, not yet written: its holder is taking it right now.
        throw busyError(`another process is opening the memory index of ${workspaceDir}; retry`);
      }
      if (holder && holder !== process.pid && alive(holder)) {
        throw busyError(
          `another process (pid ${holder}) is using the memory index of ${workspaceDir}; wait for it to finish, then retry`,
        );
      }
      fs.rmSync(file, { force: true }); // stale: its holder is gone (or had our pid before a restart)
    }
  }
  throw new Error(`cannot take the lock ${file}`);
}

function ageMs(file) {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

function safeRead(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
