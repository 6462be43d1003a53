// The workspace filesystem under Node (lib/workspace-fs.js): paths are
// opened beneath the workspace, and an append racing another process's
// append loses neither, whether the component appends (note, ingest) or a
// descriptor is used directly.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { workspaceFilesystem } from "../lib/workspace-fs.js";
import { MemoryComponent, turnContext } from "../lib/component.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-fs-"));
after(() => fs.rmSync(base, { recursive: true, force: true }));

/** A workspace beside an `outside` directory holding a secret, with symlinks leading out and staying in. */
function workspace(name) {
  const ws = path.join(base, name, "ws");
  const outside = path.join(base, name, "outside");
  fs.mkdirSync(path.join(ws, "notes"), { recursive: true });
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
  fs.writeFileSync(path.join(ws, "notes", "a.md"), "inside\n");
  const links = {
    "to-secret": path.join(outside, "secret.txt"),
    "to-secret-relative": "../outside/secret.txt",
    "to-outside": outside,
    "to-outside-relative": "../outside",
    "to-inside-absolute": path.join(ws, "notes", "a.md"),
    "to-a": "notes/a.md",
    "to-notes": "notes",
    "notes/to-a-again": "../notes/a.md",
  };
  for (const [link, target] of Object.entries(links)) fs.symlinkSync(target, path.join(ws, link));
  const [[root]] = workspaceFilesystem(ws, "/workspace").preopens.getDirectories();
  return { ws, outside, root };
}

const openFlags = (o = {}) => ({ create: false, directory: false, exclusive: false, truncate: false, ...o });
const descriptorFlags = (o = {}) => ({
  read: false,
  write: false,
  fileIntegritySync: false,
  dataIntegritySync: false,
  requestedWriteSync: false,
  mutateDirectory: false,
  ...o,
});
function open(dir, guestPath, { follow = true, create = false, directory = false, read = !directory, write = false } = {}) {
  return dir.openAt({ symlinkFollow: follow }, guestPath, openFlags({ create, directory }), descriptorFlags({ read, write }));
}
function contents(descriptor) {
  const [bytes] = descriptor.read(4096n, 0n);
  return Buffer.from(bytes).toString();
}
const refused = (e) => e === "not-permitted";

test("paths that lead out of the workspace are refused, by every call that takes one", () => {
  const { outside, root } = workspace("escape");
  for (const guestPath of [
    "../outside/secret.txt",
    "notes/../../outside/secret.txt",
    "/etc/passwd",
    "to-secret",
    "to-secret-relative",
    "to-outside/secret.txt",
    "to-outside-relative/secret.txt",
    "to-notes/../../outside/secret.txt",
    "to-inside-absolute", // cap-std refuses an absolute target wherever it points
  ]) {
    assert.throws(() => open(root, guestPath), refused, guestPath);
    assert.throws(() => root.statAt({ symlinkFollow: true }, guestPath), refused, guestPath);
  }
  assert.throws(() => open(root, "to-outside/new.txt", { create: true, write: true }), refused);
  assert.throws(() => open(root, "to-outside", { directory: true }), refused);
  assert.throws(() => root.createDirectoryAt("to-outside/made"), refused);
  assert.throws(() => root.unlinkFileAt("to-outside/secret.txt"), refused);
  assert.throws(() => root.renameAt("to-outside/secret.txt", root, "stolen.txt"), refused);
  assert.throws(() => root.renameAt("notes/a.md", root, "to-outside/a.md"), refused);
  assert.throws(() => root.linkAt({ symlinkFollow: true }, "to-secret-relative", root, "linked.txt"), refused);
  assert.throws(() => root.readlinkAt("to-outside/anything"), refused);
  assert.throws(() => root.symlinkAt("/etc/passwd", "made-link"), refused);
  assert.throws(() => root.setTimesAt({ symlinkFollow: true }, "to-secret", { tag: "now" }, { tag: "now" }), refused);
  assert.deepEqual(fs.readdirSync(outside), ["secret.txt"]);
  assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), "secret\n");
  // The link itself is inside: it can be looked at and removed.
  assert.equal(root.statAt({ symlinkFollow: false }, "to-secret").type, "symbolic-link");
  assert.equal(root.readlinkAt("to-outside"), outside);
  root.unlinkFileAt("to-secret");
  assert.equal(fs.existsSync(path.join(outside, "secret.txt")), true);
});

test("symlinks that stay inside the workspace are followed", () => {
  const { root } = workspace("inside");
  for (const guestPath of ["to-a", "to-notes/a.md", "notes/to-a-again", "to-notes/to-a-again", "notes/../to-a"]) {
    assert.equal(contents(open(root, guestPath)), "inside\n", guestPath);
  }
  assert.equal(root.statAt({ symlinkFollow: true }, "to-notes").type, "directory");
  assert.throws(() => open(root, "to-a", { follow: false }), (e) => e === "loop"); // O_NOFOLLOW, as wasmtime
});

test("nested directories and files are made, written, listed, renamed and removed", () => {
  const { ws, root } = workspace("nested");
  root.createDirectoryAt("a");
  root.createDirectoryAt("a/b");
  const file = root.openAt(
    { symlinkFollow: true },
    "a/b/c.md",
    openFlags({ create: true }),
    descriptorFlags({ write: true, mutateDirectory: true }), // Rust's std asks for it; it is granted
  );
  assert.equal(file.write(Buffer.from("one\n"), 0n), 4n);
  assert.equal(file.write(Buffer.from("ONE\n"), 0n), 4n, "a positional write is positional");
  file[Symbol.dispose]();
  assert.equal(fs.readFileSync(path.join(ws, "a/b/c.md"), "utf8"), "ONE\n");
  assert.equal(root.statAt({ symlinkFollow: false }, "a/b/c.md").size, 4n);

  const dir = open(root, "a", { directory: true });
  const entries = dir.readDirectory();
  assert.deepEqual(entries.readDirectoryEntry(), { name: "b", type: "directory" });
  assert.equal(entries.readDirectoryEntry(), undefined);
  entries[Symbol.dispose]();
  assert.equal(contents(open(dir, "b/c.md")), "ONE\n");
  assert.throws(() => open(dir, "../notes/a.md"), refused, "`..` may not climb above the directory it is given to");

  dir.renameAt("b/c.md", root, "notes/c.md");
  assert.equal(fs.readFileSync(path.join(ws, "notes/c.md"), "utf8"), "ONE\n");
  root.unlinkFileAt("notes/c.md");
  root.removeDirectoryAt("a/b");
  dir[Symbol.dispose]();
  assert.throws(() => open(root, "missing/x.md"), (e) => e === "no-entry");
  assert.throws(() => open(root, "notes/a.md/"), (e) => e === "not-directory");
  assert.throws(() => open(root, "notes/a\0.md"), (e) => e === "invalid");
});

test("a directory swapped for a symlink after it was opened is still the directory opened", () => {
  const { ws, outside, root } = workspace("swapped");
  const notes = open(root, "notes", { directory: true });
  fs.renameSync(path.join(ws, "notes"), path.join(ws, "notes-moved"));
  fs.symlinkSync(outside, path.join(ws, "notes"));
  assert.throws(() => open(notes, "secret.txt"), (e) => e === "no-entry");
  assert.equal(contents(open(notes, "a.md")), "inside\n");
  const entries = notes.readDirectory();
  const names = [];
  for (let entry; (entry = entries.readDirectoryEntry()); ) names.push(entry.name);
  entries[Symbol.dispose]();
  assert.deepEqual(names.sort(), ["a.md", "to-a-again"]);
});

test("a write at the end the descriptor just reported appends after another process's append", () => {
  const { ws, root } = workspace("positional");
  const file = open(root, "notes/a.md", { write: true, read: false });
  const end = file.stat().size;
  fs.appendFileSync(path.join(ws, "notes/a.md"), "outside\n");
  assert.equal(file.write(Buffer.from("mine\n"), end), 5n);
  assert.equal(file.write(Buffer.from("more\n"), end + 5n), 5n, "and on from there");
  assert.equal(fs.readFileSync(path.join(ws, "notes/a.md"), "utf8"), "inside\noutside\nmine\nmore\n");
});

test("an append stream appends at the end as it is at each write", () => {
  const { ws, root } = workspace("stream");
  const file = open(root, "notes/a.md", { write: true });
  const stream = file.appendViaStream();
  stream.blockingWriteAndFlush(Buffer.from("A\n"));
  fs.appendFileSync(path.join(ws, "notes/a.md"), "B\n");
  stream.blockingWriteAndFlush(Buffer.from("C\n"));
  stream[Symbol.dispose]();
  assert.equal(fs.readFileSync(path.join(ws, "notes/a.md"), "utf8"), "inside\nA\nB\nC\n");
  assert.throws(() => open(root, "notes/a.md").appendViaStream(), (e) => e === "bad-descriptor", "a file opened to read is not written");
});

// Another process: appends marker lines to two files, alternately and a
// random fraction of a millisecond apart, while `go` exists, until `stop`
// exists; prints how many it wrote. The markers are HTML comments, which are
// not entries: re-indexing the grown file at every call stays cheap.
const OUTSIDE_WRITER = `
const fs = require("node:fs");
const [daily, transcript, go, stop] = process.argv.slice(1);
const pause = new Int32Array(new SharedArrayBuffer(4));
let n = 0;
process.stdout.write("ready\\n");
while (!fs.existsSync(stop)) {
  if (fs.existsSync(go)) {
    fs.appendFileSync(n % 2 === 0 ? daily : transcript, "<!-- outside marker " + n + " -->\\n");
    n += 1;
    Atomics.wait(pause, 0, 0, Math.random());
  } else {
    Atomics.wait(pause, 0, 0, 1);
  }
}
process.stdout.write(n + "\\n");
`;

function startOutsideWriter(...args) {
  const child = spawn(process.execPath, ["-e", OUTSIDE_WRITER, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const ready = new Promise((resolve) => child.stdout.once("data", resolve));
  const written = new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(Number(out.split("\n")[1])) : reject(new Error(`writer exited ${code}`))));
  });
  return { ready, written };
}

/** How `file`'s lines differ from `expected`, each line once in any order: a few of each kind of difference. */
function discrepancies(file, expected) {
  const counts = new Map(expected.map((line) => [line, 0]));
  const unexpected = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n").slice(0, -1)) {
    if (counts.has(line)) counts.set(line, counts.get(line) + 1);
    else unexpected.push(line);
  }
  const counted = [...counts];
  return {
    missing: counted.filter(([, n]) => n === 0).map(([line]) => line).slice(0, 5),
    repeated: counted.filter(([, n]) => n > 1).map(([line]) => line).slice(0, 5),
    unexpected: unexpected.slice(0, 5),
  };
}
const NONE = { missing: [], repeated: [], unexpected: [] };

test("notes and ingests racing another process's appends lose neither", { timeout: 120_000 }, async () => {
  const ws = path.join(base, "race");
  fs.mkdirSync(path.join(ws, "memory"), { recursive: true });
  const daily = path.join(ws, "memory", "2025-06-15.md");
  const transcript = path.join(ws, "memory", "2025-06-15-session-race.md");
  const [go, stop] = [path.join(base, "race-go"), path.join(base, "race-stop")];
  const memory = new MemoryComponent({ workspaceDir: ws });
  await memory.open();
  const writer = startOutsideWriter(daily, transcript, go, stop);
  await writer.ready;
  // The other process appends while each call runs, and only then (the
  // files stay small). The component's append is a stat and a write some
  // 30-120 µs apart; over 120 calls the stock shim overwrote markers every
  // time it was tried.
  const racing = async (call) => {
    fs.writeFileSync(go, "");
    try {
      return await call();
    } finally {
      fs.rmSync(go);
    }
  };
  const ROUNDS = 60;
  const context = () => turnContext({ nowMs: 1750000000000 });
  try {
    for (let i = 0; i < ROUNDS; i += 1) {
      await racing(() => memory.note({ text: `component note ${i}`, origin: "sender-message", triggers: [], context: context() }));
      const transcriptLine = JSON.stringify({ role: "user", text: `ingested message ${i}`, owner: true });
      await racing(() => memory.ingest({ sessionId: "race", transcript: `${transcriptLine}\n`, context: context() }));
    }
  } finally {
    fs.writeFileSync(stop, "");
    await memory.close();
  }
  const markers = await writer.written;
  assert.ok(markers > ROUNDS, `the outside writer kept appending (${markers} lines)`);

  const range = (n) => [...Array(n).keys()];
  const outside = (parity) => range(markers).filter((n) => n % 2 === parity).map((n) => `<!-- outside marker ${n} -->`);
  const notes = range(ROUNDS).map((i) => `- component note ${i}`);
  const ingested = range(ROUNDS).map((i) => `- user: ingested message ${i}`);
  assert.deepEqual(discrepancies(daily, [...notes, ...outside(0)]), NONE, "the daily note");
  assert.deepEqual(discrepancies(transcript, [...ingested, ...outside(1)]), NONE, "the transcript note");
});
