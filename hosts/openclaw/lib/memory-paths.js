// OpenClaw's generic file tools must not write memory: a line the component
// did not write has no provenance record, and the index reads such a line as
// the owner's own hand — promotable, whoever dictated it. So `write`, `edit`
// and `apply_patch` calls that target a Markdown file under `memory/`,
// anything under `.memory/`, `MEMORY.md` or `USER.md` are refused before
// they run (`before_tool_call`), with a reason that tells the model which
// memory tool to use instead. A path is checked in every spelling OpenClaw's
// tools accept (`@path`, `file://`, `~/`, a stray `</arg_value>>`) and
// against every directory it may be relative to (the workspace, the run's
// working directory), and through symlinks. Shell tools (`exec`, `process`)
// are checked on a best-effort basis: a command that names a memory path or
// directory and looks like it writes is refused; a shell can always hide a
// write.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The file tools whose parameters name the files they write. */
const FILE_TOOLS = new Set(["write", "edit", "apply_patch"]);
/** Shell tools, checked on a best-effort basis (`process` feeds a running shell). */
const SHELL_TOOLS = new Set(["exec", "bash", "shell", "process"]);

/**
 * Whether a workspace-relative path (with `/` separators) is memory:
 * `MEMORY.md`, `USER.md`, the directory `memory/` itself or a Markdown file
 * under it (the only files the index reads there; a repository's
 * `memory/alloc.ts` is not memory), or anything under `.memory/` (the index
 * and the provenance ledger). Case-insensitive, as a case-insensitive file
 * system would resolve it.
 */
export function isMemoryPath(relative) {
  const p = String(relative).replace(/\\/g, "/").replace(/\/+$/, "").replace(/^(\.\/)+/, "").toLowerCase();
  if (p === "" || p === "." || p.startsWith("../") || p === "..") return false;
  const [first] = p.split("/");
  if (p === "memory.md" || p === "user.md" || first === ".memory" || p === "memory") return true;
  return first === "memory" && p.endsWith(".md");
}

/**
 * The spellings of a tool's path argument as OpenClaw's file tools read it
 * (`resolveToCwd`, the parameter repair): as given, without a trailing
 * `</arg_value>>`, without one leading `@`, a `file://` URL as its path,
 * `~` as the home directory.
 */
export function pathSpellings(raw) {
  const given = String(raw);
  const spellings = new Set([given]);
  let p = given.replace(/(<\/arg_value>>?)+\s*$/, "").trim();
  spellings.add(p);
  if (p.startsWith("@")) spellings.add((p = p.slice(1)));
  if (/^file:\/\//i.test(p)) {
    try {
      spellings.add((p = fileURLToPath(p)));
    } catch {
      // Not a file URL the host can read: the other spellings stand.
    }
  }
  if (p === "~" || p.startsWith("~/")) spellings.add(path.join(os.homedir(), p.slice(1)));
  return [...spellings];
}

/** The paths an `apply_patch` input writes: added, updated, deleted and moved-to files (headers may be indented). */
export function patchTargets(input) {
  const targets = [];
  for (const line of String(input ?? "").split(/\r?\n/)) {
    const match = /^\*\*\* (?:Add File|Update File|Delete File|Move to):\s*(.+?)\s*$/.exec(line.trim());
    if (match) targets.push(match[1]);
  }
  return targets;
}

/** The paths a file tool call writes, from its parameters (`path` or `file_path`; a patch's headers). */
export function writtenPaths(toolName, params = {}, derivedPaths = []) {
  if (toolName === "apply_patch") {
    return [...new Set([...patchTargets(params.input ?? params.patch), ...(derivedPaths ?? [])])];
  }
  const target = params.path ?? params.file_path ?? params.filePath;
  return typeof target === "string" ? [target] : [];
}

/**
 * The real path of `target`: the deepest part of it that exists, resolved
 * through symlinks, then the rest as written (a file about to be created).
 */
function realPathOf(target) {
  let existing = target;
  const rest = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return target;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * The memory paths among `targets` (as the tool was given them, in any
 * spelling `pathSpellings` reads: relative or absolute), each relative to
 * the workspace it is memory of. `workspaces` are the directories whose
 * memory is guarded (the agent's workspace, and the copy a session's tools
 * were given, if another); a relative target is resolved against each of
 * them and each of `bases` (the run's working directory may be another),
 * since the hook is not told which one the tool will use. A target is
 * memory when one of its resolutions is, as written or through symlinks
 * (`notes -> memory` does not hide it).
 */
export function memoryTargets(targets, workspaces, bases = []) {
  const roots = [...new Set([workspaces].flat().map((w) => path.resolve(w)))];
  const realRoots = roots.map(realPathOf);
  const found = [];
  for (const target of targets) {
    const hit = pathSpellings(target)
      .flatMap((p) => [...roots, ...bases].map((base) => path.resolve(base, p)))
      .flatMap((absolute) => {
        const real = realPathOf(absolute);
        return roots.flatMap((root, i) => [path.relative(root, absolute), path.relative(realRoots[i], real)]);
      })
      .find(isMemoryPath);
    if (hit !== undefined) found.push(hit);
  }
  return found;
}

/**
 * Whether a shell command both names a memory path or directory (`memory/…`,
 * `cd memory`, `.memory`, `MEMORY.md`, `USER.md`) and looks like it writes.
 */
export function shellWritesMemory(command) {
  const text = String(command ?? "");
  const names = /(^|[\s'"=/(<>|;&`$:])(\.?memory(\/|\b)|MEMORY\.md\b|USER\.md\b)/i.test(text);
  const writes = /(>|\btee\b|\bsed\s+(-[a-z]*i|--in-place)|\b(cp|mv|rm|truncate|dd|touch|ln|install|rsync|unlink|shred|perl\s+-[a-z]*i)\b)/i.test(text);
  return names && writes;
}

/** The refusal the model reads instead of the tool's result. */
export function refusalOf(paths) {
  const named = paths.length ? paths.join(", ") : "a memory file";
  return [
    `memory-wasm: nothing was written. ${named} is memory, and memory is written only through the memory tools, so that every line records where it came from.`,
    "- To remember an observation (a fact, decision, preference, todo), call memory_note with the text and its origin (owner, agent, web, tool).",
    "- To change how you should behave (a USER.md directive: Always/Never/Prefer …), call memory_directive (the owner only).",
    "- MEMORY.md is curated by dreaming from the daily notes; if it must change now, ask the owner to edit it by hand.",
  ].join("\n");
}

/**
 * The `before_tool_call` answer for a call, or undefined to let it run:
 * `{ block: true, blockReason }` for a write to memory.
 */
export function guardMemoryWrite({ toolName, params, derivedPaths }, workspaces, bases = []) {
  if (FILE_TOOLS.has(toolName)) {
    const paths = memoryTargets(writtenPaths(toolName, params, derivedPaths), workspaces, bases);
    return paths.length ? { block: true, blockReason: refusalOf(paths) } : undefined;
  }
  const shellText = [params?.command, params?.cmd, params?.data, params?.text, params?.input, params?.keys].filter((v) => typeof v === "string").join("\n");
  if (SHELL_TOOLS.has(toolName) && shellWritesMemory(shellText)) {
    return {
      block: true,
      blockReason: `${refusalOf([])}\n(A shell command that writes memory files is refused; read them with memory_get or memory_search.)`,
    };
  }
  return undefined;
}
