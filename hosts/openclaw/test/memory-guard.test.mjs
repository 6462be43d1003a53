// The pure parts of the file-tool guard (lib/memory-paths.js) and of the
// session taint (lib/taint.js).

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { guardMemoryWrite, isMemoryPath, memoryTargets, pathSpellings, patchTargets, shellWritesMemory, writtenPaths } from "../lib/memory-paths.js";
import { isGroupSession, keptMarks, lowerTaint, SessionTaint, TAINT_FILE, taintOfFramed, taintOfTool } from "../lib/taint.js";

test("memory paths: MEMORY.md, USER.md, Markdown under memory/, anything under .memory/, any case; nothing else", () => {
  for (const p of ["MEMORY.md", "user.md", "memory/2026-01-01.md", "Memory/x/y.MD", "./memory/a.md", ".memory/index.sqlite", "memory", "memory/"]) {
    assert.ok(isMemoryPath(p), p);
  }
  for (const p of ["", ".", "..", "../memory/a.md", "src/memory/a.md", "MEMORY.md.bak", "memoryx/a.md", "docs/USER.md", "memory/alloc.ts"]) {
    assert.ok(!isMemoryPath(p), p);
  }
});

test("a path in every spelling OpenClaw's file tools accept", () => {
  const home = os.homedir();
  assert.deepEqual(pathSpellings("@MEMORY.md"), ["@MEMORY.md", "MEMORY.md"]);
  assert.ok(pathSpellings("MEMORY.md</arg_value>>").includes("MEMORY.md"));
  assert.ok(pathSpellings("file:///ws/memory/a.md").includes("/ws/memory/a.md"));
  assert.ok(pathSpellings("~/ws/USER.md").includes(path.join(home, "ws/USER.md")));
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "memory-spell-"));
  try {
    for (const p of ["@MEMORY.md", `file://${ws}/MEMORY.md`, "MEMORY.md</arg_value>>", "@memory/x.md"]) {
      assert.equal(guardMemoryWrite({ toolName: "write", params: { path: p, content: "x" } }, [ws])?.block, true, p);
    }
    // Relative to another directory the run may use (its working directory, a sandbox copy).
    const cwd = path.join(ws, "repo");
    fs.mkdirSync(cwd);
    assert.equal(guardMemoryWrite({ toolName: "edit", params: { path: "../USER.md", edits: [] } }, [ws], [cwd])?.block, true);
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "memory-copy-"));
    assert.equal(guardMemoryWrite({ toolName: "write", params: { path: path.join(copy, "memory", "a.md") } }, [ws, copy])?.block, true);
    fs.rmSync(copy, { recursive: true, force: true });
    assert.equal(guardMemoryWrite({ toolName: "write", params: { path: "memory/alloc.ts" } }, [ws])?.block, undefined);
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test("a patch's targets: added, updated, deleted and moved-to files", () => {
  const input = "*** Begin Patch\n*** Update File: src/a.js\n*** Move to: memory/a.md\n@@\n-x\n+y\n  *** Delete File: USER.md\n*** Add File: b.txt\n+hi\n*** End Patch";
  assert.deepEqual(patchTargets(input), ["src/a.js", "memory/a.md", "USER.md", "b.txt"]);
  assert.deepEqual(writtenPaths("apply_patch", { input }, ["c.md"]), ["src/a.js", "memory/a.md", "USER.md", "b.txt", "c.md"]);
  assert.deepEqual(writtenPaths("write", { file_path: "x" }), ["x"]);
  assert.deepEqual(writtenPaths("edit", {}), []);
});

test("targets resolved against the workspace, absolute or relative, through symlinks", () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "memory-guard-"));
  try {
    fs.mkdirSync(path.join(ws, "memory"));
    fs.symlinkSync(path.join(ws, "memory"), path.join(ws, "journal"));
    fs.symlinkSync(path.join(ws, "MEMORY.md"), path.join(ws, "facts.md")); // dangling until MEMORY.md exists
    fs.writeFileSync(path.join(ws, "MEMORY.md"), "# Memory\n");
    assert.deepEqual(memoryTargets(["journal/new.md", path.join(ws, "USER.md"), "facts.md", "src/x.md", "../elsewhere/memory/x.md"], [ws]), [
      "memory/new.md",
      "USER.md",
      "MEMORY.md",
    ]);
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test("shell commands: refused when they write and name memory, not when they only read it", () => {
  for (const c of ["echo x >> memory/a.md", "tee -a MEMORY.md < x", "sed -i s/a/b/ USER.md", "cp /tmp/x memory/a.md", "rm -rf .memory/", "printf x > ./memory/b.md", "echo x >MEMORY.md", "cd memory && echo x >> d.md", "cd .memory; rm session-taint.json"]) {
    assert.ok(shellWritesMemory(c), c);
  }
  for (const c of ["cat memory/a.md", "grep -r staging memory/", "ls", "echo hi > /tmp/out", "wc -l MEMORY.md"]) {
    assert.ok(!shellWritesMemory(c), c);
  }
});

test("taint: only lowered, by tools that bring outside content and by framed recall below agent", () => {
  assert.equal(lowerTaint(undefined, "system"), "system");
  assert.equal(lowerTaint("system", "untrusted"), "untrusted");
  assert.equal(lowerTaint("untrusted", "system"), "untrusted");
  assert.equal(taintOfTool("memory_search"), undefined);
  assert.equal(taintOfTool("write"), undefined);
  for (const tool of ["web_fetch", "browser", "exec", "read", "sessions_history", "some_new_tool"]) assert.equal(taintOfTool(tool)?.taint, "untrusted", tool);
  assert.equal(taintOfFramed(['<memory-recall source="MEMORY.md#L1-L1" class="owner" trust="trusted">x</memory-recall>']), undefined);
  assert.equal(taintOfFramed(['<memory-context kind="escalation" source="a" class="untrusted">…', "x"]), "untrusted");
  assert.equal(taintOfFramed(["class=\"untrusted\" said the web page, outside any header"]), undefined);
  assert.ok(isGroupSession("agent:main:telegram:group:-100") && isGroupSession("agent:main:discord:channel:42"));
  assert.ok(!isGroupSession("agent:main:main") && !isGroupSession("agent:main:telegram:direct:7") && !isGroupSession(undefined));
});

test("taint marks: kept per session on disk, bounded, unreadable files are no marks", () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "memory-taint-"));
  try {
    const marks = new SessionTaint(ws);
    assert.equal(marks.of({ sessionId: "a" }), undefined);
    assert.equal(marks.mark({ sessionId: "a" }, "system", "heartbeat"), "system");
    assert.equal(marks.mark({ sessionId: "a" }, "untrusted", "web_fetch"), "untrusted");
    assert.equal(marks.mark({ sessionId: "a" }, "system", "again"), "untrusted", "never raised");
    assert.equal(new SessionTaint(ws).of({ sessionId: "a" }), "untrusted", "read back by another instance");
    assert.equal(marks.of({ sessionKey: "b" }), undefined);
    assert.equal(marks.mark({}, "untrusted", "no session"), undefined);
    // A mark in use is refreshed, so a session that keeps fetching pages is never forgotten.
    const day = 86400000;
    marks.mark({ sessionId: "c" }, "untrusted", "web_fetch", 1000);
    marks.mark({ sessionId: "c" }, "untrusted", "web_fetch", 1000 + 29 * day);
    const onDisk = JSON.parse(fs.readFileSync(path.join(ws, TAINT_FILE), "utf8")).sessions;
    assert.equal(onDisk.c.atMs, 1000 + 29 * day);
    // A file that cannot be read: every session is taken as tainted, and it is not overwritten.
    fs.writeFileSync(path.join(ws, TAINT_FILE), "{not json");
    assert.equal(marks.of({ sessionId: "never-marked" }), "untrusted");
    assert.throws(() => marks.mark({ sessionId: "d" }, "untrusted", "x"), /cannot be read/);
    assert.equal(fs.readFileSync(path.join(ws, TAINT_FILE), "utf8"), "{not json");
    const now = 100 * 86400000;
    const many = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`s${i}`, { taint: "untrusted", atMs: now - i }]));
    many.old = { taint: "untrusted", atMs: now - 31 * 86400000 };
    const kept = keptMarks(many, now);
    assert.equal(Object.keys(kept).length, 500);
    assert.ok(!("old" in kept) && "s0" in kept && !("s599" in kept));
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
