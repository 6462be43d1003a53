// `openclaw memory report`: the review page of a workspace, as the harness's
// `report` gathers and writes it (host-harness/src/report/mod.rs): the
// component's read-only exports (`report.gather`, `bootstrap.load`,
// `intents.list`) and, for the text a budget cut off, the curated file
// itself. Nothing syncs, records a recall or calls a model, and the page is
// never written inside the workspace it reports on.

import fs from "node:fs";
import path from "node:path";

/** How much of each list the page shows (the harness's figures). */
export const LIMITS = { maxSweeps: 30, maxCandidates: 200, maxPromoted: 100, maxRecalled: 20 };
/** Characters of a budget's cut-off tail shown. */
const TAIL_PREVIEW_CHARS = 600;
/** Where the bootstrap's kept head ends (the component's `bootstrap::TRUNCATION_MARKER`). */
export const TRUNCATION_MARKER = "\n[… truncated: ";

/**
 * The part of `file` a budget left out, given the injected text (the kept
 * head followed by the truncation marker): `{ fromLine, chars, preview }`,
 * or null when the injected text is not a head of the file (`USER.md` is
 * injected without its superseded directives, so only the counts say what
 * was cut).
 */
export function cutTail(file, injected) {
  const at = injected.lastIndexOf(TRUNCATION_MARKER);
  const head = at < 0 ? "" : injected.slice(0, at);
  if (!file.startsWith(head)) return null;
  let tail = file.slice(head.length);
  // A tail that starts at a line break begins on the next line.
  const fromLine = head.split("\n").length + (tail.startsWith("\n") ? 1 : 0);
  if (tail.startsWith("\n")) tail = tail.slice(1);
  const chars = [...tail];
  return { fromLine, chars: chars.length, preview: chars.slice(0, TAIL_PREVIEW_CHARS).join("") };
}

/**
 * Refuses a workspace with nothing to review before anything opens it
 * (opening would create `.memory/`).
 */
export function assertReviewable(workspaceDir) {
  for (const file of [".memory/provenance.sqlite", ".memory/index.sqlite"]) {
    if (!fs.existsSync(path.join(workspaceDir, file))) {
      throw new Error(`${workspaceDir} has no ${file}: there is no memory to review yet (\`openclaw memory index\` creates it)`);
    }
  }
}

/**
 * The page's data from an open memory (lib/component.js) at `nowMs`:
 * `resolved` is the component's resolution of the plugin's settings
 * (`{ settings, dreamGates }`), `context` the owner's turn context.
 */
export async function gather(memory, { workspaceDir, nowMs, resolved, context }) {
  const gates = resolved.dreamGates;
  const report = await memory.report({ nowMs: BigInt(nowMs), gates, ...LIMITS });
  const bootstrap = await memory.bootstrap({ purpose: "session-start", context, knownDigest: undefined });
  const intents = await memory.intentList(context);
  const cut = bootstrap.files.map((f) => {
    if (f.truncated == null) return null;
    let file;
    try {
      file = fs.readFileSync(path.join(workspaceDir, f.path), "utf8");
    } catch {
      return null;
    }
    return cutTail(file, f.text);
  });
  const { maxFileChars, maxUserFileChars, maxTotalChars } = resolved.settings.bootstrap;
  return { workspace: workspaceDir, nowMs, report, bootstrap, cut, budgets: { maxFileChars, maxUserFileChars, maxTotalChars }, intents, gates };
}

/**
 * Writes `page` to `out` through a temporary file and a rename, so a reader
 * never sees half a page; refuses a path inside the workspace. Returns the
 * absolute path written.
 */
export function writePage(out, workspaceDir, page) {
  const target = path.resolve(out);
  const dir = fs.realpathSync(path.dirname(target));
  const root = fs.realpathSync(workspaceDir);
  if (dir === root || dir.startsWith(`${root}${path.sep}`)) {
    throw new Error(`${out} is inside the workspace; the report is written elsewhere so that it changes nothing it reports on`);
  }
  const file = path.join(dir, path.basename(target));
  const temp = path.join(dir, `.${path.basename(target)}.tmp-${process.pid}`);
  fs.writeFileSync(temp, page);
  fs.renameSync(temp, file);
  return file;
}

/** The page's figures in one line, as the harness prints them after writing it. */
export function reportSummary(g) {
  const r = g.report;
  return `${r.sweeps.length} sweeps, ${r.candidatesTotal} candidates, ${r.promoted.length} promoted, ${r.recalledTotal} recalled entries, ${g.intents.length} intents`;
}
