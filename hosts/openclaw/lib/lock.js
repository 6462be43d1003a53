// One process at a time per workspace: the index runs SQLite in exclusive
// locking mode over a VFS without cross-process locks, so a second process
// must be refused, not let in. Node has no flock, so the lock is a file
// created exclusively that names its holder; a holder that is gone leaves a
// stale file, which the next process takes over.

import fs from "node:fs";
import path from "node:path";

const LOCK_NAME = "js-host.lock";

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
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      fs.writeFileSync(file, `pid ${process.pid}\n`, { flag: "wx" });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
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
      const holder = Number(/pid (\d+)/.exec(safeRead(file))?.[1]);
      if (holder && holder !== process.pid && alive(holder)) {
        throw new Error(
          `another process (pid ${holder}) is using the memory index of ${workspaceDir}; wait for it to finish, then retry`,
        );
      }
      if (holder === process.pid) {
        throw new Error(`this process already has ${workspaceDir} open; share that instance`);
      }
      fs.rmSync(file, { force: true }); // stale: its holder is gone
    }
  }
  throw new Error(`cannot take the lock ${file}`);
}

function safeRead(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
