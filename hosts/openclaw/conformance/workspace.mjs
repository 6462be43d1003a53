// The runner's side of the workspace: the fixture copy, the snapshots behind
// the invariants (Markdown files unchanged by reads, only appended to by
// writes), and the host-side file edits of the steps. Ported from
// host-harness/src/conformance/fixture.rs.

import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { compareUtf8 } from "./json.mjs";

/**
 * Rust's `Path::join`: an absolute `child` replaces the base, and nothing is
 * normalised (`a/link/..` is left for the kernel to resolve, as in Rust).
 * Step paths go through it so that they reach exactly the file the Rust
 * runner reaches.
 */
export function joinPath(base, child) {
  if (child.startsWith("/")) return child;
  return base.endsWith("/") ? base + child : `${base}/${child}`;
}

/** The length recorded for a link or FIFO: compared by kind only, never opened. */
const SPECIAL_FILE = -1;

const sha256Hex = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** Copies the fixture: directories recursively, anything else as a file (as `copy_tree`). */
export function copyTree(from, to) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      fs.mkdirSync(target, { recursive: true });
      copyTree(source, target);
    } else {
      fs.copyFileSync(source, target);
    }
  }
}

function kindOf(entry) {
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isFIFO()) return "fifo";
  if (entry.isSocket()) return "socket";
  if (entry.isCharacterDevice()) return "char-device";
  if (entry.isBlockDevice()) return "block-device";
  return "unknown";
}

/**
 * sha-256 and length of every file outside `.memory/`, by relative path:
 * a Map in path order (a BTreeMap of `[hash, len]`).
 */
export function snapshot(root, { withMemory = false } = {}) {
  const files = new Map();
  const visit = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(root, full);
      if (relative === ".memory" && !withMemory) continue;
      // No host's lock file: each host writes its own.
      if (relative.startsWith(".memory/") && relative.endsWith(".lock")) continue;
      if (entry.isDirectory()) {
        visit(full);
      } else if (entry.isFile()) {
        const bytes = fs.readFileSync(full);
        files.set(relative, [sha256Hex(bytes), bytes.length]);
      } else {
        files.set(relative, [kindOf(entry), SPECIAL_FILE]);
      }
    }
  };
  visit(root);
  return new Map([...files].sort(([a], [b]) => compareUtf8(a, b)));
}

const sameEntry = (a, b) => a !== undefined && b !== undefined && a[0] === b[0] && a[1] === b[1];

/** The paths that differ between two snapshots (as `changed_paths`: each side's keys in turn). */
export function changedPaths(a, b) {
  return [...a.keys(), ...b.keys()].filter((key) => !sameEntry(a.get(key), b.get(key)));
}

/** Rust's `{:?}` of a Vec<String>, for messages naming paths. */
export const debugList = (items) => `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;

/** Every file that existed before still starts with exactly its old bytes. */
export function checkAppendOnly(root, before) {
  for (const [relative, [hash, length]] of before) {
    if (length === SPECIAL_FILE) continue;
    let bytes;
    try {
      bytes = fs.readFileSync(path.join(root, relative));
    } catch (error) {
      throw new Error(`${relative} disappeared during a write: ${error.message}`);
    }
    if (bytes.length < length || sha256Hex(bytes.subarray(0, length)) !== hash) {
      throw new Error(`${relative} was rewritten, not appended to`);
    }
  }
}

/** Hex to bytes, whitespace ignored (`bytes_hex`). */
export function decodeHex(hex) {
  const clean = hex.replace(/\p{White_Space}/gu, "");
  if (clean.length % 2 !== 0) throw new Error("odd number of hex digits");
  if (!/^[0-9a-fA-F]*$/.test(clean)) throw new Error("bad hex: invalid digit found in string");
  return Buffer.from(clean, "hex");
}

/** A file as a person would see it: `{exists, text}`, invalid UTF-8 replaced (as `from_utf8_lossy`, a BOM kept). */
export function readFileForPerson(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return { exists: false, text: "" };
  }
  return { exists: true, text: new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes) };
}

/** `write` / `append`: the bytes (times `repeat`) into the file, its parent directories created. */
export function writeBytes(file, bytes, { append }) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (append) fs.appendFileSync(file, bytes);
  else fs.writeFileSync(file, bytes);
}

/** `mkfifo`: a named pipe, made by the mkfifo(1) command as the Rust runner does. */
export function makeFifo(file) {
  const result = spawnSync("mkfifo", [file], { stdio: "inherit" });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error("mkfifo failed");
}

/** `corrupt_index`'s bytes: 0x5a as long as the index was, at least 4096. */
export function corruptIndexBytes(index) {
  let length = 0;
  try {
    length = fs.statSync(index).size;
  } catch {
    // No index yet: the minimum.
  }
  return Buffer.alloc(Math.max(length, 4096), 0x5a);
}

/** `list_files`: the workspace-relative paths starting with `prefix` (in its directory, not below), sorted as Rust sorts strings. */
export function listFiles(root, prefix) {
  const cut = prefix.lastIndexOf("/");
  const dir = cut < 0 ? "" : prefix.slice(0, cut);
  const start = cut < 0 ? prefix : prefix.slice(cut + 1);
  let names = [];
  try {
    names = fs.readdirSync(joinPath(root, dir || "."));
  } catch {
    // No such directory: nothing listed.
  }
  return names
    .filter((name) => name.startsWith(start))
    .map((name) => (dir ? `${dir}/${name}` : name))
    .sort(compareUtf8);
}
