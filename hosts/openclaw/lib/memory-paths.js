// OpenClaw's generic file tools must not write memory: a line the component
// did not write has no provenance record, and the index reads such a line as
// the owner's own hand — promotable, whoever dictated it. So `write`, `edit`
// and `apply_patch` calls that target `memory/`, `.memory/`, `MEMORY.md` or
// `USER.md` are refused before they run (`before_tool_call`), with a reason
// that tells the model which memory tool to use instead. `exec` is checked on
// a best-effort basis: a shell command that both mentions a memory path and
// writes (a redirection, tee, sed -i, cp, mv, rm, …) is refused; a shell can
// always hide a write, which is why the reason says so plainly.

import fs from "node:fs";
import path from "node:path";

/** The file tools whose parameters name the files they write. */
const FILE_TOOLS = new Set(["write", "edit", "apply_patch"]);
/** Shell tools, checked on a best-effort basis. */
const SHELL_TOOLS = new Set(["exec", "bash", "shell"]);

/**
 * Whether a workspace-relative path (with `/` separators) is memory:
 * `MEMORY.md`, `USER.md`, or anything under `memory/` or `.memory/`.
 * Case-insensitive, as a case-insensitive file system would resolve it.
 */
export function isMemoryPath(relative) {
  const p = String(relative).replace(/\\/g, "/").replace(/^(\.\/)+/, "").toLowerCase();
  if (p === "" || p === "." || p.startsWith("../") || p === "..") return false;
  const [first] = p.split("/");
  return p === "memory.md" || p === "user.md" || first === "memory" || first === ".memory";
}

/** The paths an `apply_patch` input writes: added, updated, deleted and moved-to files. */
export function patchTargets(input) {
  const targets = [];
  for (const line of String(input ?? "").split(/\r?\n/)) {
    const match = /^\*\*\* (?:Add File|Update File|Delete File|Move to):\s*(.+?)\s*$/.exec(line);
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
 * The memory paths among `targets` (as the tool was given them: relative to
 * the workspace or absolute), each workspace-relative. A target is memory
 * when its path as written is, or when its real path is (a symlink such as
 * `notes -> memory` does not hide it).
 */
export function memoryTargets(targets, workspaceDir) {
  const workspace = path.resolve(workspaceDir);
  const realWorkspace = realPathOf(workspace);
  const found = [];
  for (const target of targets) {
    const absolute = path.resolve(workspace, String(target));
    const asWritten = path.relative(workspace, absolute);
    const real = path.relative(realWorkspace, realPathOf(absolute));
    if (isMemoryPath(asWritten)) found.push(asWritten);
    else if (isMemoryPath(real)) found.push(real);
  }
  return found;
}

/** Whether a shell command both names a memory path and looks like it writes. */
export function shellWritesMemory(command) {
  const text = String(command ?? "");
  const names = /(^|[\s'"=/(])(\.?memory\/|MEMORY\.md\b|USER\.md\b)/i.test(text);
  const writes = /(>|\btee\b|\bsed\s+(-[a-z]*i|--in-place)|\b(cp|mv|rm|truncate|dd|touch|ln|install|rsync|perl\s+-[a-z]*i)\b)/i.test(text);
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
export function guardMemoryWrite({ toolName, params, derivedPaths }, workspaceDir) {
  if (FILE_TOOLS.has(toolName)) {
    const paths = memoryTargets(writtenPaths(toolName, params, derivedPaths), workspaceDir);
    return paths.length ? { block: true, blockReason: refusalOf(paths) } : undefined;
  }
  if (SHELL_TOOLS.has(toolName) && shellWritesMemory(params?.command ?? params?.cmd)) {
    return {
      block: true,
      blockReason: `${refusalOf([])}\n(A shell command that writes memory files is refused; read them with memory_get or memory_search.)`,
    };
  }
  return undefined;
}
