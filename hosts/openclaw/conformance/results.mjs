// The JSON shapes the expectations are written against, from the WIT results
// jco hands back: a port of host-harness/src/json.rs, one function per
// result type. jco gives camelCase records, BigInt for s64/u64, `undefined`
// for `none`, strings for enums and typed arrays for lists of numbers; the
// Rust side gives snake_case, numbers, `null`, kebab-case strings and arrays.

/** An `option<T>` (undefined for `none`) as the value or null, mapped when present. */
const opt = (value, map = (v) => v) => (value === undefined || value === null ? null : map(value));

/** A u64/s64 (BigInt) as a JSON number. */
const int64 = (value) => Number(value);

/**
 * An f32 as serde_json writes it: non-finite numbers become null
 * (`Value::from(f32::NAN)` is `Null`).
 */
const f32 = (x) => (Number.isFinite(x) ? x : null);

/**
 * Scores rounded to 6 decimals, as `json::round`: `(x as f64 * 1e6).round() / 1e6`,
 * Rust's round being half away from zero (Math.round is half up).
 */
export function round(x) {
  const scaled = x * 1e6;
  const rounded = Math.sign(scaled) * Math.round(Math.abs(scaled));
  return f32(rounded / 1e6);
}

const list = (items, map = (v) => v) => Array.from(items ?? [], map);

const problems = (items) => list(items, (p) => ({ path: p.path, problem: p.problem }));

export function syncReport(r) {
  return {
    files_seen: r.filesSeen,
    files_indexed: r.filesIndexed,
    files_unchanged: r.filesUnchanged,
    files_removed: r.filesRemoved,
    files_pending: r.filesPending,
    chunks_indexed: r.chunksIndexed,
    embeddings_computed: r.embeddingsComputed,
    embeddings_cached: r.embeddingsCached,
    embedding_problem: opt(r.embeddingProblem),
    rebuilt: opt(r.rebuilt),
    problems: problems(r.problems),
  };
}

export function statusReport(s) {
  return {
    index_path: s.indexPath,
    schema_version: s.schemaVersion,
    revision: int64(s.revision),
    files: s.files,
    entries: s.entries,
    windows: s.windows,
    embedded: s.embedded,
    embedder: s.embedder,
    search_mode: s.searchMode,
    fts_tokenizer: s.ftsTokenizer,
    embedding_cache_entries: s.embeddingCacheEntries,
    files_stale: s.filesStale,
    by_source_class: Object.fromEntries(list(s.bySourceClass, (c) => [c.sourceClass, c.entries])),
    by_session_kind: Object.fromEntries(list(s.bySessionKind, (k) => [k.sessionKind, k.entries])),
    problems: problems(s.problems),
    provenance_lost: opt(s.provenanceLost),
    promotions_deferred: s.promotionsDeferred,
    sweep_problem: opt(s.sweepProblem),
    index_rebuilt: opt(s.indexRebuilt),
  };
}

export function searchHit(h) {
  const p = h.provenance;
  return {
    path: h.path,
    start_line: h.lines.start,
    end_line: h.lines.end,
    score: round(h.score),
    citation: h.citation,
    heading: opt(h.heading),
    snippet: h.snippet,
    source_class: p.sourceClass,
    session_kind: p.sessionKind,
    provenance_basis: p.basis,
    file_class: p.fileClass,
    promotable: p.promotable,
    session_id: opt(p.sessionId),
    framed: h.framed,
    observed_at_ms: opt(p.observedAtMs, int64),
    supersedes_key: opt(p.supersedesKey),
    parts: {
      text: round(h.parts.text),
      vector: opt(h.parts.vector, round),
      relevance: round(h.parts.relevance),
      recency: round(h.parts.recency),
      importance: round(h.parts.importance),
      project: round(h.parts.project),
    },
  };
}

export function searchResult(r) {
  return { mode: r.mode, degraded: opt(r.degraded), index_rebuilt: opt(r.indexRebuilt), hits: list(r.hits, searchHit) };
}

export function getResult(g) {
  return {
    path: g.path,
    start_line: g.lines.start,
    end_line: g.lines.end,
    total_lines: g.totalLines,
    text: g.text,
    truncated: g.truncated,
    source_class: g.sourceClass,
    framed: g.framed,
    index_rebuilt: opt(g.indexRebuilt),
  };
}

export function bootstrapResult(b) {
  return {
    files: list(b.files, (f) => ({
      path: f.path,
      present: f.present,
      skipped: opt(f.skipped),
      original_chars: f.originalChars,
      injected_chars: f.injectedChars,
      truncated: opt(f.truncated),
      text: f.text,
    })),
    text: b.text,
    total_chars: b.totalChars,
    digest: b.digest,
    changed: b.changed,
  };
}

export function writeReport(r) {
  return {
    path: r.path,
    lines: list(r.lines),
    duplicates: r.duplicates,
    source_class: r.sourceClass,
    session_kind: r.sessionKind,
  };
}

function contextBlock(b) {
  return { kind: b.kind, text: b.text, sources: list(b.sources), score: round(b.score) };
}

export function escalation(e) {
  return {
    block: opt(e.block, contextBlock),
    answer: opt(e.answer),
    outcome: e.outcome,
    detail: opt(e.detail),
    from_cache: e.fromCache,
    tool_calls: e.toolCalls,
  };
}

export function injectResult(r) {
  return {
    blocks: list(r.blocks, contextBlock),
    recall_intent: r.recallIntent,
    escalate: r.escalate,
    escalation_reason: r.escalationReason,
  };
}

export function intent(i) {
  return {
    id: int64(i.id),
    text: i.text,
    triggers: list(i.triggers),
    due_at_ms: opt(i.dueAtMs, int64),
    channel: opt(i.channel),
    sender: opt(i.sender),
    state: i.state,
    fires: i.fires,
    fire_budget: i.fireBudget,
    expires_at_ms: int64(i.expiresAtMs),
    last_fired_at_ms: opt(i.lastFiredAtMs, int64),
    cooldown_ms: int64(i.cooldownMs),
    semantic: i.semantic,
  };
}

export function intents(items) {
  return { intents: list(items, intent) };
}

export function createResult(r) {
  return { intent: opt(r.intent, intent), wish: opt(r.wish) };
}

const directive = (d) => ({ line: d.line, text: d.text, observed: d.observed, status: d.status });

export function userModel(m) {
  return {
    text: m.text,
    hash: m.hash,
    directives: list(m.directives, directive),
    replaced: opt(m.replaced, directive),
  };
}

export function flushReport(r) {
  return {
    due: r.due,
    reason: r.reason,
    written: opt(r.written, writeReport),
    model_error: opt(r.modelError),
  };
}

export function ingestReport(r) {
  return {
    path: opt(r.path),
    files: list(r.files),
    messages_read: r.messagesRead,
    messages_written: r.messagesWritten,
    messages_already_ingested: r.messagesAlreadyIngested,
    injected_blocks_stripped: r.injectedBlocksStripped,
    secrets_redacted: r.secretsRedacted,
    skipped: opt(r.skipped),
    problems: list(r.problems),
  };
}

export function forgetReport(r) {
  return { files_changed: list(r.filesChanged), entries_removed: r.entriesRemoved };
}

/** The WIT `error` variant, from the MemoryError component.js throws. */
export function memoryError(error) {
  return { kind: error.kind, message: error.detail };
}

/** A dreaming candidate (dream reports and the review report). */
function candidate(c) {
  return {
    citation: c.citation,
    text: c.text,
    source_class: c.sourceClass,
    verdict: c.verdict,
    reason: c.reason,
    // Not rounded in json.rs: the f32 as f64, as jco gives it.
    signals: {
      recalls: c.signals.recalls,
      distinct_queries: c.signals.distinctQueries,
      days: c.signals.days,
      relevance: f32(c.signals.relevance),
      last_recalled_ms: int64(c.signals.lastRecalledMs),
      frequency: f32(c.signals.frequency),
      diversity: f32(c.signals.diversity),
      recency: f32(c.signals.recency),
      consolidation: f32(c.signals.consolidation),
      richness: f32(c.signals.richness),
      score: f32(c.signals.score),
    },
  };
}

export function dreamReport(r) {
  return {
    sweep: r.sweep,
    phases: list(r.phases),
    staged: r.staged,
    themes: r.themes,
    candidates: list(r.candidates, candidate),
    added: list(r.added),
    merged: list(r.merged),
    superseded: list(r.superseded),
    rewritten: list(r.rewritten),
    consolidation: r.consolidation,
    fallback_reason: opt(r.fallbackReason),
    fallback_kind: opt(r.fallbackKind),
    memory_changed: r.memoryChanged,
    dreams_changed: r.dreamsChanged,
  };
}

export function workspaceReport(r) {
  return {
    sweeps: list(r.sweeps, (s) => ({
      id: s.id,
      ledger_sweep: s.ledgerSweep,
      at_ms: int64(s.atMs),
      phases: list(s.phases),
      phases_recorded: s.phasesRecorded,
      staged: s.staged,
      themes: s.themes,
      candidates: s.candidates,
      added: s.added,
      merged: s.merged,
      superseded: s.superseded,
      rewritten: s.rewritten,
      consolidation: s.consolidation,
      refusal: opt(s.refusal, (f) => ({ kind: f.kind, reason: f.reason })),
      memory_changed: s.memoryChanged,
      dreams_changed: s.dreamsChanged,
      rolled_back_at_ms: opt(s.rolledBackAtMs, int64),
    })),
    candidates: list(r.candidates, (c) => ({
      candidate: candidate(c.candidate),
      staged: c.staged,
      checks: list(c.checks, (g) => ({
        gate: g.gate,
        value: f32(g.value),
        threshold: f32(g.threshold),
        passed: g.passed,
      })),
    })),
    candidates_total: r.candidatesTotal,
    promoted: list(r.promoted, (p) => ({
      sweep: p.sweep,
      at_ms: int64(p.atMs),
      fact: p.fact,
      line: opt(p.line),
      citation: p.citation,
      source_class: opt(p.sourceClass),
      session_kind: opt(p.sessionKind),
      recorded: p.recorded,
      merged: p.merged,
      rolled_back: p.rolledBack,
    })),
    entries_by_day: list(r.entriesByDay, (d) => ({
      day: opt(d.day),
      source_class: d.sourceClass,
      session_kind: d.sessionKind,
      entries: d.entries,
    })),
    recall_days: list(r.recallDays, (d) => ({ day: d.day, recalls: d.recalls, entries: d.entries })),
    top_recalled: list(r.topRecalled, (e) => ({
      citation: e.citation,
      text: e.text,
      shown_class: e.shownClass,
      live: e.live,
      recalls: e.recalls,
      distinct_queries: e.distinctQueries,
      days: e.days,
      last_recalled_ms: int64(e.lastRecalledMs),
    })),
    recalled_total: r.recalledTotal,
    files_stale: r.filesStale,
    provenance_lost: opt(r.provenanceLost),
  };
}

export function rollbackReport(r) {
  return { sweep: r.sweep, entries_before: r.entriesBefore, entries_after: r.entriesAfter };
}
