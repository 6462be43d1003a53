// Atomic, durable file replacement: a temporary file beside the target,
// fsync, rename, fsync of the directory, so a crash leaves the old file or
// the new one, never a torn one.

import fs from "node:fs";
import path from "node:path";

/** Writes `text` to `file` atomically and durably (creating its directory). */
export function writeDurably(file, text) {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const fd = fs.openSync(temporary, "w");
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  const dirFd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}
