// The review page as one self-contained HTML document, ported from the
// harness (host-harness/src/report/html.rs) so that `openclaw memory
// report` writes the page `memory-harness report` writes, from the same
// data (`report.gather`, `bootstrap.load`, `intents.list`, in jco's shapes:
// camelCase fields, kebab-case enum strings, BigInt times, undefined for
// none). Inline CSS and SVG, no script, no external resource, and a
// Content-Security-Policy that would refuse a script if one ever got in.
// Every string from the workspace is escaped; text of untrusted and system
// entries (and refusal reasons, which may quote the model) is shown inside a
// visibly marked quote. Only the footer names the writer.

import { horizontalBars, stackedColumns, timeColumns } from "./report-svg.js";
import { esc, text, utcMinute } from "./report-text.js";

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'";

/** The section ids and headings, in page order. */
export const SECTIONS = [
  ["summary", "Workspace"],
  ["sweeps", "Last sweeps"],
  ["candidates", "Staged candidates"],
  ["promoted", "Promoted entries"],
  ["rejected", "Rejected rewrites"],
  ["entries", "Entries by source class and session kind"],
  ["budget", "Curated files and their budget"],
  ["intents", "Standing intents"],
  ["recalls", "Recall activity"],
];

const CLASSES = ["owner", "agent", "untrusted", "system"];
const KINDS = ["interactive", "cron", "heartbeat", "subagent"];

/** Owner and agent text is shown as it is; untrusted and system text is quoted and marked. */
export const isTrusted = (sourceClass) => sourceClass === "owner" || sourceClass === "agent";

/** A time as `2026-12-04 03:00 UTC`, kept on one line. */
function when(ms) {
  return `<span class="when">${utcMinute(ms).replace("T", " ").replace("Z", " UTC")}</span>`;
}

function badge(sourceClass) {
  return sourceClass == null
    ? '<span class="badge unknown">unknown</span>'
    : `<span class="badge ${sourceClass}">${sourceClass}</span>`;
}

/** An entry's text: as it is when trusted, else inside a marked quote (the mark is text, so it is read out and copied with it). */
export function quoted(body, sourceClass) {
  if (isTrusted(sourceClass)) return `<div class="entry">${text(body)}</div>`;
  const [name, why] =
    sourceClass === "system"
      ? ["system", "scaffolding output"]
      : sourceClass == null
        ? ["unknown", "nothing vouches for it"]
        : ["untrusted", "external content"];
  return `<div class="quote ${name}" data-class="${name}"><div class="mark">⚠ ${name.toUpperCase()} (${why}) — quoted data, not instructions</div><pre>${text(body)}</pre></div>`;
}

/** A refusal reason: the component's words, which may quote the model. */
function reasonQuote(reason) {
  return `<div class="quote model"><div class="mark">the component's reason — it may quote the model's reply</div><pre>${text(reason)}</pre></div>`;
}

const noneRecorded = (what) => `<p class="none">None recorded: ${esc(what)}.</p>`;
const yesNo = (b) => (b ? "yes" : "no");
const fixed = (x, digits) => Number(x).toFixed(digits);
const sweepNumber = (s) => (s.ledgerSweep > 0 ? `#${s.ledgerSweep}` : "—");

function section(id, intro, body) {
  const heading = SECTIONS.find(([i]) => i === id)?.[1] ?? id;
  return `<section id="${id}"><h2>${esc(heading)}</h2><p class="intro">${esc(intro)}</p>${body}</section>\n`;
}

const REFUSAL_LABELS = {
  "loss-bound": "loss bound: too many existing entries lost",
  budget: "budget: over the bootstrap budget",
  "missing-source": "missing source: a Source: reference dropped",
  "concurrent-edit": "concurrent edit: MEMORY.md changed meanwhile",
  "untrusted-text": "untrusted text carried in",
  junk: "junk added",
  "foreign-entry": "an entry from nowhere added",
  malformed: "malformed reply",
  "model-failed": "the model failed or timed out",
  unchecked: "the reply could not be checked",
};

/**
 * The page. `g`: `{ workspace, nowMs, report, bootstrap, cut, budgets,
 * intents, gates }` (lib/report.js gathers it); `options.refreshSeconds`
 * makes it reload itself; `writer` names what wrote it and `indexCommand`
 * what brings a stale index up to date (the harness's page names its own).
 */
export function renderPage(g, { refreshSeconds, writer = "openclaw memory report (memory-wasm)", indexCommand = "openclaw memory index" } = {}) {
  const title = `Memory review — ${g.workspace}`;
  const refresh = refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : "";
  let out =
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}"><meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}<title>${esc(title)}</title><style>${STYLE}</style></head><body>\n` +
    `<header><h1>Memory review</h1><p class="sub">${text(g.workspace)} · as of ${when(g.nowMs)}${refreshSeconds ? ` · live view, reloaded every ${refreshSeconds} s` : ""}</p><nav>` +
    SECTIONS.map(([id, heading]) => `<a href="#${id}">${esc(heading)}</a>`).join("") +
    "</nav></header><main>\n";
  out += summary(g, indexCommand);
  out += sweeps(g.report.sweeps);
  out += candidates(g.report);
  out += promoted(g.report.promoted);
  out += rejected(g.report.sweeps);
  out += entries(g.report.entriesByDay);
  out += budget(g);
  out += intents(g.intents, Number(g.nowMs));
  out += recalls(g.report);
  out += `</main><footer>Written by ${esc(writer)} from the workspace's own files, ledger and index, read-only. No script runs on this page.</footer></body></html>\n`;
  return out;
}

function summary(g, indexCommand) {
  const r = g.report;
  let body = "";
  if (r.provenanceLost) {
    body += `<p class="warn">Provenance was lost: ${text(r.provenanceLost)}. Entries the ledger cannot vouch for count as untrusted.</p>`;
  }
  if (r.filesStale > 0) {
    body += `<p class="warn">${r.filesStale} file(s) changed since the index was last synced: candidates and entry counts are as of that sync (the report never syncs; <code>${esc(indexCommand)}</code> does).</p>`;
  }
  const indexed = r.entriesByDay.reduce((a, d) => a + d.entries, 0);
  const staged = r.candidates.filter((c) => c.staged).length;
  const figure = (dt, dd) => `<div><dt>${dt}</dt><dd>${dd}</dd></div>`;
  body += `<dl class="figures">${figure("sweeps logged", r.sweeps.length)}${figure("candidates", r.candidatesTotal)}${figure("staged now", staged)}${figure("promoted entries", r.promoted.length)}${figure("indexed entries", indexed)}${figure("recalled entries", r.recalledTotal)}${figure("standing intents", g.intents.length)}</dl>`;
  body +=
    '<p class="legend-line">Source classes: <span class="badge owner">owner</span> typed by the owner · <span class="badge agent">agent</span> derived by the agent from the owner · <span class="badge untrusted">untrusted</span> external content · <span class="badge system">system</span> scaffolding. Only owner and agent entries from interactive sessions can ever be promoted; untrusted and system text is shown quoted and marked.</p>';
  const x = g.gates;
  body += `<p class="legend-line">Deep gate: score ≥ ${fixed(x.minScore, 2)}, recalls ≥ ${x.minRecalls}, distinct queries ≥ ${x.minUniqueQueries}; at most ${x.maxPromotions} promotions per sweep; light lookback ${x.lightLookbackDays} days.</p>`;
  return section("summary", "What this page covers, and how current it is.", body);
}

function sweeps(list) {
  let body;
  if (!list.length) {
    body = noneRecorded("no dreaming sweep has run (dry runs are not kept)");
  } else {
    body =
      "<table><thead><tr><th>when</th><th>sweep</th><th>phases</th><th>staged</th><th>themes</th><th>candidates</th><th>consolidation</th><th>added</th><th>merged</th><th>superseded</th><th>rewritten</th><th>MEMORY.md</th><th>refused rewrite</th></tr></thead><tbody>";
    for (const s of list) {
      const phases = s.phasesRecorded ? s.phases.join(" → ") : "not in the sweep log";
      const memory = !s.memoryChanged ? "unchanged" : s.rolledBackAtMs != null ? `changed, rolled back ${when(s.rolledBackAtMs)}` : "changed";
      body += `<tr><td>${when(s.atMs)}</td><td>${sweepNumber(s)}</td><td>${esc(phases)}</td><td>${s.staged}</td><td>${s.themes}</td><td>${s.candidates}</td><td>${s.consolidation}</td><td>${s.added}</td><td>${s.merged}</td><td>${s.superseded}</td><td>${s.rewritten}</td><td>${memory}</td><td>${s.refusal ? esc(s.refusal.kind) : "—"}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "sweeps",
    "Each dreaming sweep, newest first: the phases it ran, what light staged and REM reflected on, and what deep did to MEMORY.md.",
    body,
  );
}

const GATES = {
  recalls: ["recalls", (v) => String(Math.trunc(v))],
  "distinct-queries": ["distinct queries", (v) => String(Math.trunc(v))],
  score: ["score", (v) => fixed(v, 3)],
};

function gateCell(c) {
  return c.checks
    .map((check) => {
      const [mark, cls, op] = check.passed ? ["✓", "pass", "≥"] : ["✗", "fail", "<"];
      const [name, figure] = GATES[check.gate];
      return `<span class="gate ${cls}">${mark} ${name} ${figure(check.value)} ${op} ${figure(check.threshold)}</span>`;
    })
    .join("<br>");
}

function candidates(r) {
  let body = "";
  if (!r.candidates.length) {
    body = noneRecorded("nothing has been recalled in an interactive session yet");
  } else {
    if (r.candidatesTotal > r.candidates.length) body += `<p>The best ${r.candidates.length} of ${r.candidatesTotal} candidates.</p>`;
    body +=
      '<table class="candidates"><thead><tr><th>candidate</th><th>class</th><th>verdict</th><th>staged</th><th>gates</th><th>score</th><th>recalls</th><th>queries</th><th>days</th><th>parts of the score</th><th>last recalled</th></tr></thead><tbody>';
    for (const c of r.candidates) {
      const d = c.candidate;
      const s = d.signals;
      const shown = d.text
        ? quoted(d.text, d.sourceClass)
        : '<div class="withheld">text withheld: not promotable, never shown to a model (see Recall activity)</div>';
      body += `<tr class="${c.staged ? "staged" : ""}"><td><code>${text(d.citation)}</code>${shown}<div class="why">${text(d.reason)}</div></td><td>${badge(d.sourceClass)}</td><td>${d.verdict}</td><td>${yesNo(c.staged)}</td><td>${gateCell(c)}</td><td><b>${fixed(s.score, 3)}</b></td><td>${s.recalls}</td><td>${s.distinctQueries}</td><td>${s.days}</td><td class="parts">relevance ${fixed(s.relevance, 2)} · frequency ${fixed(s.frequency, 2)} · diversity ${fixed(s.diversity, 2)}<br>recency ${fixed(s.recency, 2)} · multi-day ${fixed(s.consolidation, 2)} · richness ${fixed(s.richness, 2)}</td><td>${when(s.lastRecalledMs)}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "candidates",
    "Every recalled entry as the next sweep would judge it now: its signals, each threshold of the deep gate passed (✓) or failed (✗), and the verdict. Staged: the light phase would list it in DREAMS.md.",
    body,
  );
}

function promoted(list) {
  let body;
  if (!list.length) {
    body = noneRecorded("no sweep has promoted an entry into MEMORY.md");
  } else {
    body =
      "<table><thead><tr><th>when</th><th>sweep</th><th>entry</th><th>source</th><th>source class</th><th>session kind</th><th>now</th></tr></thead><tbody>";
    for (const p of list) {
      const status = p.rolledBack
        ? "rolled back by the owner"
        : p.merged
          ? "merged into an existing entry"
          : p.line != null
            ? "in MEMORY.md"
            : "edited away from MEMORY.md";
      const note = p.recorded ? "" : '<div class="why">looked up now: promoted before classes were recorded</div>';
      body += `<tr><td>${when(p.atMs)}</td><td>#${p.sweep}</td><td>${quoted(p.fact, p.sourceClass)}</td><td>Source: <code>${text(p.citation)}</code></td><td>${badge(p.sourceClass)}${note}</td><td>${p.sessionKind ?? "unknown"}</td><td>${status}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "promoted",
    "What entered long-term memory, newest first: the fact, the diary entry it came from, and that entry's provenance.",
    body,
  );
}

function rejected(list) {
  const refused = list.filter((s) => s.refusal);
  let body;
  if (!refused.length) {
    body = noneRecorded("no model rewrite of MEMORY.md was refused");
  } else {
    body = "<table><thead><tr><th>when</th><th>sweep</th><th>why</th><th>reason</th><th>what happened instead</th></tr></thead><tbody>";
    for (const s of refused) {
      const f = s.refusal;
      const instead =
        s.added === 0 && s.merged === 0
          ? "nothing promoted this time"
          : s.merged === 0
            ? `${s.added} promoted entries appended; no other line changed`
            : `${s.added} promoted entries appended, ${s.merged} merged into the entries they repeat; no other line changed`;
      body += `<tr><td>${when(s.atMs)}</td><td>${sweepNumber(s)}</td><td><b>${esc(REFUSAL_LABELS[f.kind] ?? f.kind)}</b><div class="why">${esc(f.kind)}</div></td><td>${reasonQuote(f.reason)}</td><td>${esc(instead)}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "rejected",
    "Sweeps whose model rewrite of MEMORY.md was not used: refused by validation (loss bound, budget, missing source, untrusted text, …), overtaken by a concurrent edit, or never returned by a failing model. Each fell back to appending, so nothing was lost.",
    body,
  );
}

/** Per-day sums (in the component's order) of entries by `indexOf` (0..3), as plot columns. */
function perDay(days, indexOf) {
  const byDay = [];
  for (const d of days) {
    if (d.day == null) continue;
    if (byDay.at(-1)?.[0] !== d.day) byDay.push([d.day, [0, 0, 0, 0]]);
    byDay.at(-1)[1][indexOf(d)] += d.entries;
  }
  return timeColumns(byDay, 4);
}

function entries(days) {
  let body = "";
  if (!days.length) {
    body = noneRecorded("the index holds no entries");
  } else {
    const classIndex = (d) => (CLASSES.includes(d.sourceClass) ? CLASSES.indexOf(d.sourceClass) : 2);
    const kindIndex = (d) => (KINDS.includes(d.sessionKind) ? KINDS.indexOf(d.sessionKind) : 3);
    const seriesOf = (names) => names.map((n) => ({ name: n, class: n }));
    const byClass = perDay(days, classIndex);
    if (!byClass.length) {
      body += "<p>No entry carries an observation date (only curated files and undated notes).</p>";
    } else {
      body += "<h3>By source class, by the day each entry was observed</h3>";
      body += stackedColumns("Entries by source class over time", seriesOf(CLASSES), byClass);
      body += "<h3>By session kind</h3>";
      body += stackedColumns("Entries by session kind over time", seriesOf(KINDS), perDay(days, kindIndex));
    }
    // The totals, as `status` counts them.
    const totals = CLASSES.map(() => [0, 0, 0, 0]);
    let undated = 0;
    for (const d of days) {
      totals[classIndex(d)][kindIndex(d)] += d.entries;
      if (d.day == null) undated += d.entries;
    }
    body += `<table class="totals"><thead><tr><th>class \\ kind</th>${KINDS.map((k) => `<th>${k}</th>`).join("")}<th>all</th></tr></thead><tbody>`;
    CLASSES.forEach((c, i) => {
      body += `<tr><td>${badge(c)}</td>${totals[i].map((n) => `<td>${n}</td>`).join("")}<td><b>${totals[i].reduce((a, b) => a + b, 0)}</b></td></tr>`;
    });
    body += `</tbody></table><p class="why">${undated} entries carry no observation date (curated files, undated notes) and are counted in the table, not the plots.</p>`;
  }
  return section(
    "entries",
    "Every indexed entry by the class no text can set, the kind of session that wrote it, and when it was observed.",
    body,
  );
}

function budget(g) {
  const b = g.bootstrap;
  let body = "<table><thead><tr><th>file</th><th>budget use</th><th>characters</th><th>injected</th><th>budget</th><th>truncated</th></tr></thead><tbody>";
  b.files.forEach((f, i) => {
    const cut = g.cut[i];
    const limit = f.path === "USER.md" ? g.budgets.maxUserFileChars : g.budgets.maxFileChars;
    if (!f.present) {
      body += `<tr><td><code>${text(f.path)}</code></td><td colspan="5">not present</td></tr>`;
      return;
    }
    if (f.skipped != null) {
      body += `<tr><td><code>${text(f.path)}</code></td><td colspan="5">not injected: ${text(f.skipped)}</td></tr>`;
      return;
    }
    const share = Math.min(1, f.originalChars / Math.max(1, limit)) * 100;
    const truncated = f.truncated == null ? "no" : `<b class="cut">yes</b>: ${text(f.truncated)}`;
    body += `<tr><td><code>${text(f.path)}</code></td><td><div class="meter"><div class="fill${f.originalChars > limit ? " over" : ""}" style="width:${share.toFixed(0)}%"></div></div></td><td>${f.originalChars}</td><td>${f.injectedChars}</td><td>${limit}</td><td>${truncated}</td></tr>`;
    if (cut) {
      body += `<tr class="tail"><td></td><td colspan="5"><div class="why">Left out of every prompt: ${cut.chars} characters from line ${cut.fromLine} on (readable with memory_get). It begins:</div><pre class="cut-tail">${text(cut.preview)}</pre></td></tr>`;
    } else if (f.truncated != null) {
      body += `<tr class="tail"><td></td><td colspan="5"><div class="why">Left out of every prompt: the part of the ${f.originalChars} characters the budget did not fit (readable with memory_get).</div></td></tr>`;
    }
  });
  body += `</tbody></table><p>All bootstrap files together: ${b.totalChars} of ${g.budgets.maxTotalChars} characters injected.</p>`;
  return section(
    "budget",
    "The curated core injected at every session start, against its budgets. A cut is always marked in the prompt; here is what it left out.",
    body,
  );
}

const STATES = ["armed", "fired", "pending", "done", "cancelled", "expired"];

function intents(list, nowMs) {
  let body = list.length ? "" : noneRecorded("no standing intent was created");
  for (const state of STATES) {
    const group = list.filter((i) => i.state === state);
    if (!group.length) continue;
    body += `<h3>${state} <span class="count">${group.length}</span></h3><table><thead><tr><th>#</th><th>intent</th><th>fires on</th><th>scope</th><th>fires</th><th>last fired</th><th>cool-down</th><th>expires</th></tr></thead><tbody>`;
    for (const i of group) {
      const firesOn =
        (i.dueAtMs != null
          ? `due ${when(i.dueAtMs)}`
          : i.triggers.length
            ? i.triggers.map((t) => `<code>${text(t)}</code>`).join(" · ")
            : "—") + (i.semantic ? " (and by meaning)" : "");
      const scope =
        i.channel == null && i.sender == null
          ? "any channel, the owner"
          : `${i.channel != null ? `channel ${text(i.channel)}` : ""}${i.sender != null ? ` sender ${text(i.sender)}` : ""}`;
      const cooldownMs = Number(i.cooldownMs);
      const hours = Math.trunc(cooldownMs / 3_600_000);
      const last = i.lastFiredAtMs == null ? undefined : Number(i.lastFiredAtMs);
      const cooldown = ["done", "cancelled", "expired"].includes(state)
        ? `${hours} h (no longer fires)`
        : last != null && last + cooldownMs > nowMs
          ? `cooling down until ${when(last + cooldownMs)}`
          : `${hours} h, ready`;
      body += `<tr><td>${i.id}</td><td>${quoted(i.text, "owner")}</td><td>${firesOn}</td><td>${scope}</td><td>${i.fires} of ${i.fireBudget}</td><td>${last == null ? "never" : when(last)}</td><td>${cooldown}</td><td>${when(i.expiresAtMs)}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "intents",
    "Prospective memory by lifecycle state: what fires on which words or at which time, how often it fired of its budget, and its cool-down.",
    body,
  );
}

function recalls(r) {
  let body = "";
  if (!r.recallDays.length) {
    body = noneRecorded("no entry has been recalled in an interactive session");
  } else {
    body += "<h3>Recalls per day</h3>";
    body += stackedColumns(
      "Recalls per day",
      [{ name: "recalls of daily and topic notes", class: "recall" }],
      timeColumns(r.recallDays.map((d) => [d.day, [d.recalls]]), 1),
    );
    body += '<table class="compact"><thead><tr><th>day</th><th>recalls</th><th>entries recalled</th></tr></thead><tbody>';
    for (const d of [...r.recallDays].reverse().slice(0, 14)) body += `<tr><td>${text(d.day)}</td><td>${d.recalls}</td><td>${d.entries}</td></tr>`;
    body += "</tbody></table>";
  }
  if (r.topRecalled.length) {
    const bars = r.topRecalled.map((e) => ({ label: e.citation, value: e.recalls, class: isTrusted(e.shownClass) ? "recall" : "untrusted" }));
    body += `<h3>Top recalled entries <span class="count">${r.topRecalled.length} of ${r.recalledTotal}</span></h3>`;
    body += horizontalBars("Top recalled entries", bars);
    body += "<table><thead><tr><th>entry</th><th>class</th><th>recalls</th><th>queries</th><th>days</th><th>last recalled</th></tr></thead><tbody>";
    for (const e of r.topRecalled) {
      body += `<tr><td><code>${text(e.citation)}</code>${e.live ? "" : '<div class="why">no longer in its file</div>'}${quoted(e.text, e.shownClass)}</td><td>${badge(e.shownClass)}</td><td>${e.recalls}</td><td>${e.distinctQueries}</td><td>${e.days}</td><td>${when(e.lastRecalledMs)}</td></tr>`;
    }
    body += "</tbody></table>";
  }
  return section(
    "recalls",
    "How memory is used: every search hit and narrow read of a daily or topic note in an interactive session counts, and drives what dreaming promotes.",
    body,
  );
}

// The harness's stylesheet, unchanged.
const STYLE = `
:root{--owner:#2f855a;--agent:#2b6cb0;--untrusted:#c53030;--system:#718096;--ink:#1a202c;--muted:#5a6472;--line:#e2e8f0;--bg:#f7fafc}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#1a202c;color:#fff;padding:18px 28px 10px}
header h1{margin:0;font-size:22px}
header .sub{margin:4px 0 10px;color:#cbd5e0;word-break:break-all}
nav a{color:#90cdf4;margin-right:14px;text-decoration:none;font-size:13px;white-space:nowrap}
main{padding:8px 28px 28px;max-width:1400px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:16px 0;overflow-x:auto}
h2{margin:0 0 4px;font-size:18px}
h3{font-size:14px;margin:14px 0 6px}
.intro{margin:0 0 10px;color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:5px 7px;text-align:left;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc}
td pre,pre{white-space:pre-wrap;word-break:break-word;margin:4px 0 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#edf2f7;padding:1px 4px;border-radius:3px;word-break:break-all}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;font-weight:600;color:#fff}
.badge.owner{background:var(--owner)}.badge.agent{background:var(--agent)}.badge.untrusted{background:var(--untrusted)}.badge.system{background:var(--system)}.badge.unknown{background:#a0aec0}
.entry{margin-top:3px}
.quote{margin-top:4px;border-left:4px solid var(--untrusted);background:#fff5f5;padding:4px 8px;border-radius:0 4px 4px 0}
.quote.system{border-color:var(--system);background:#f4f5f7}
.quote.model{border-color:#b7791f;background:#fffaf0}
.quote .mark{font-size:11px;font-weight:700;letter-spacing:.02em;color:var(--untrusted)}
.quote.system .mark{color:var(--system)}.quote.model .mark{color:#975a16}
.when{white-space:nowrap}
table.candidates td:first-child{min-width:300px;max-width:460px}
.withheld,.why,.none{color:var(--muted);font-size:12px}
.none{font-style:italic}
.warn{background:#fffbea;border:1px solid #f6e05e;padding:6px 10px;border-radius:4px}
.gate{white-space:nowrap;font-size:12px}.gate.pass{color:var(--owner)}.gate.fail{color:var(--untrusted)}
tr.staged td:first-child{box-shadow:inset 3px 0 var(--agent)}
.figures{display:flex;flex-wrap:wrap;gap:10px;margin:4px 0 10px}
.figures div{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:120px}
.figures dt{font-size:12px;color:var(--muted)}.figures dd{margin:0;font-size:20px;font-weight:700}
.legend-line{color:var(--muted);font-size:13px}
.count{color:var(--muted);font-weight:400}
.meter{width:160px;height:10px;background:#edf2f7;border-radius:5px;overflow:hidden}
.meter .fill{height:100%;background:var(--agent)}.meter .fill.over{background:var(--untrusted)}
.cut{color:var(--untrusted)}
.cut-tail{background:#f7fafc;border:1px dashed #cbd5e0;padding:6px 8px}
.compact{width:auto}
svg.plot{width:100%;max-width:1100px;height:auto;display:block;margin:6px 0}
.parts{font-size:12px;color:var(--muted);min-width:220px}
table.candidates .when{white-space:normal}
svg .grid{stroke:#e2e8f0}svg .tick,svg .legend{font:11px system-ui,sans-serif;fill:#4a5568}
svg .owner{fill:var(--owner)}svg .agent{fill:var(--agent)}svg .untrusted{fill:var(--untrusted)}svg .system{fill:var(--system)}
svg .interactive{fill:#2b6cb0}svg .cron{fill:#d69e2e}svg .heartbeat{fill:#9f7aea}svg .subagent{fill:#38b2ac}svg .recall{fill:#3182ce}
footer{color:var(--muted);font-size:12px;padding:0 28px 24px}
`;
