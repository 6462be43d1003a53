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

/** Takes the workspace's lock; returns the function that releases it. */
export function acquireWorkspaceLock(workspaceDir) {
  const dir = path.join(workspaceDir, ".memory");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_NAME);
  const harness = Number(/^pid (\d+)\s*$/.exec(safeRead(path.join(dir, HARNESS_LOCK_NAME)))?.[1]);
  if (harness && harness !== process.pid && alive(harness)) {
    throw new Error(
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
        throw new Error(`another process is opening the memory index of ${workspaceDir}; retry`);
      }
      if (holder && holder !== process.pid && alive(holder)) {
        throw new Error(
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
