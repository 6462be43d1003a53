//! The JSON shapes of the CLI's `--json` answers, one function per result
//! type. (The conformance scenarios use the generic rule of
//! `driver::wit_json` instead.)

use crate::host::{
    error_kind, error_message, wit, wit_bootstrap, wit_dream, wit_inject, wit_intents, wit_recall,
    wit_report, wit_store, wit_user, wit_write,
};
use serde_json::{json, Value};

pub fn source_class(c: wit::SourceClass) -> &'static str {
    match c {
        wit::SourceClass::Owner => "owner",
        wit::SourceClass::Agent => "agent",
        wit::SourceClass::Untrusted => "untrusted",
        wit::SourceClass::System => "system",
    }
}

pub fn session_kind(k: wit::SessionKind) -> &'static str {
    match k {
        wit::SessionKind::Interactive => "interactive",
        wit::SessionKind::Cron => "cron",
        wit::SessionKind::Heartbeat => "heartbeat",
        wit::SessionKind::Subagent => "subagent",
    }
}

fn tokenizer(t: wit_store::FtsTokenizer) -> &'static str {
    match t {
        wit_store::FtsTokenizer::Unicode61 => "unicode61",
        wit_store::FtsTokenizer::Trigram => "trigram",
    }
}

fn problems(list: &[wit_store::FileProblem]) -> Value {
    list.iter()
        .map(|p| json!({"path": p.path, "problem": p.problem}))
        .collect()
}

pub fn sync_report(r: &wit_store::SyncReport) -> Value {
    json!({
        "files_seen": r.files_seen,
        "files_indexed": r.files_indexed,
        "files_unchanged": r.files_unchanged,
        "files_removed": r.files_removed,
        "files_pending": r.files_pending,
        "chunks_indexed": r.chunks_indexed,
        "embeddings_computed": r.embeddings_computed,
        "embeddings_cached": r.embeddings_cached,
        "vectors_pending": r.vectors_pending,
        "embedding_problem": r.embedding_problem,
        "rebuilt": r.rebuilt,
        "problems": problems(&r.problems),
    })
}

pub fn status_report(s: &wit_store::StatusReport) -> Value {
    json!({
        "index_path": s.index_path,
        "schema_version": s.schema_version,
        "revision": s.revision,
        "files": s.files,
        "entries": s.entries,
        "windows": s.windows,
        "embedded": s.embedded,
        "embedder": s.embedder,
        "search_mode": s.search_mode,
        "fts_tokenizer": tokenizer(s.fts_tokenizer),
        "embedding_cache_entries": s.embedding_cache_entries,
        "files_stale": s.files_stale,
        "by_source_class": s.by_source_class.iter().map(|c| (source_class(c.source_class).to_string(), json!(c.entries))).collect::<serde_json::Map<_, _>>(),
        "by_session_kind": s.by_session_kind.iter().map(|k| (session_kind(k.session_kind).to_string(), json!(k.entries))).collect::<serde_json::Map<_, _>>(),
        "problems": problems(&s.problems),
        "provenance_lost": s.provenance_lost,
        "promotions_deferred": s.promotions_deferred,
        "sweep_problem": s.sweep_problem,
        "index_rebuilt": s.index_rebuilt,
    })
}

pub fn search_hit(h: &wit_recall::SearchHit) -> Value {
    json!({
        "path": h.path,
        "start_line": h.lines.start,
        "end_line": h.lines.end,
        "score": round(h.score),
        "citation": h.citation,
        "heading": h.heading,
        "snippet": h.snippet,
        "source_class": source_class(h.provenance.source_class),
        "session_kind": session_kind(h.provenance.session_kind),
        "provenance_basis": match h.provenance.basis {
            wit::ProvenanceBasis::Recorded => "recorded",
            wit::ProvenanceBasis::OperatorFile => "operator-file",
            wit::ProvenanceBasis::Lost => "lost",
            wit::ProvenanceBasis::Copied => "copied",
        },
        "file_class": source_class(h.provenance.file_class),
        "promotable": h.provenance.promotable,
        "session_id": h.provenance.session_id,
        "framed": h.framed,
        "observed_at_ms": h.provenance.observed_at_ms,
        "supersedes_key": h.provenance.supersedes_key,
        "parts": {
            "text": round(h.parts.text),
            "vector": h.parts.vector.map(round),
            "relevance": round(h.parts.relevance),
            "recency": round(h.parts.recency),
            "importance": round(h.parts.importance),
            "project": round(h.parts.project),
        },
    })
}

pub fn search_result(r: &wit_recall::SearchResult) -> Value {
    json!({
        "mode": match r.mode { wit_recall::SearchMode::Hybrid => "hybrid", wit_recall::SearchMode::FtsOnly => "fts-only" },
        "degraded": r.degraded,
        "index_rebuilt": r.index_rebuilt,
        "hits": r.hits.iter().map(search_hit).collect::<Vec<_>>(),
    })
}

pub fn get_result(g: &wit_recall::GetResult) -> Value {
    json!({
        "path": g.path,
        "start_line": g.lines.start,
        "end_line": g.lines.end,
        "total_lines": g.total_lines,
        "text": g.text,
        "truncated": g.truncated,
        "source_class": source_class(g.source_class),
        "framed": g.framed,
        "index_rebuilt": g.index_rebuilt,
    })
}

pub fn bootstrap_result(b: &wit_bootstrap::BootstrapResult) -> Value {
    json!({
        "files": b.files.iter().map(|f| json!({
            "path": f.path,
            "present": f.present,
            "skipped": f.skipped,
            "original_chars": f.original_chars,
            "injected_chars": f.injected_chars,
            "truncated": f.truncated,
            "text": f.text,
        })).collect::<Vec<_>>(),
        "text": b.text,
        "total_chars": b.total_chars,
        "digest": b.digest,
        "changed": b.changed,
    })
}

pub fn write_report(r: &wit_write::WriteReport) -> Value {
    json!({
        "path": r.path,
        "lines": r.lines,
        "duplicates": r.duplicates,
        "source_class": source_class(r.source_class),
        "session_kind": session_kind(r.session_kind),
    })
}

pub fn escalation(e: &wit_inject::Escalation) -> Value {
    json!({
        "block": e.block.as_ref().map(context_block),
        "answer": e.answer,
        "outcome": e.outcome,
        "detail": e.detail,
        "from_cache": e.from_cache,
        "tool_calls": e.tool_calls,
    })
}

fn context_block(b: &wit_inject::ContextBlock) -> Value {
    json!({"kind": b.kind, "text": b.text, "sources": b.sources, "score": round(b.score)})
}

pub fn inject_result(r: &wit_inject::InjectResult) -> Value {
    json!({
        "blocks": r.blocks.iter().map(context_block).collect::<Vec<_>>(),
        "recall_intent": r.recall_intent,
        "escalate": r.escalate,
        "escalation_reason": r.escalation_reason,
    })
}

pub fn intent_state(state: wit_intents::IntentState) -> &'static str {
    use wit_intents::IntentState as S;
    match state {
        S::Pending => "pending",
        S::Armed => "armed",
        S::Fired => "fired",
        S::Done => "done",
        S::Cancelled => "cancelled",
        S::Expired => "expired",
    }
}

pub fn intent(i: &wit_intents::Intent) -> Value {
    json!({
        "id": i.id,
        "text": i.text,
        "triggers": i.triggers,
        "due_at_ms": i.due_at_ms,
        "channel": i.channel,
        "sender": i.sender,
        "state": intent_state(i.state),
        "fires": i.fires,
        "fire_budget": i.fire_budget,
        "expires_at_ms": i.expires_at_ms,
        "last_fired_at_ms": i.last_fired_at_ms,
        "cooldown_ms": i.cooldown_ms,
        "semantic": i.semantic,
    })
}

pub fn intents(list: &[wit_intents::Intent]) -> Value {
    json!({"intents": list.iter().map(intent).collect::<Vec<_>>()})
}

pub fn create_result(r: &wit_intents::CreateResult) -> Value {
    json!({"intent": r.intent.as_ref().map(intent), "wish": r.wish})
}

pub fn directive_status(s: wit_user::DirectiveStatus) -> &'static str {
    match s {
        wit_user::DirectiveStatus::Active => "active",
        wit_user::DirectiveStatus::Superseded => "superseded",
    }
}

fn directive(d: &wit_user::Directive) -> Value {
    json!({
        "line": d.line,
        "text": d.text,
        "observed": d.observed,
        "status": directive_status(d.status),
    })
}

pub fn user_model(m: &wit_user::UserModel) -> Value {
    json!({
        "text": m.text,
        "hash": m.hash,
        "directives": m.directives.iter().map(directive).collect::<Vec<_>>(),
        "replaced": m.replaced.as_ref().map(directive),
    })
}

pub fn flush_report(r: &wit_write::FlushReport) -> Value {
    json!({
        "due": r.due,
        "reason": r.reason,
        "written": r.written.as_ref().map(write_report),
        "model_error": r.model_error,
    })
}

pub fn ingest_report(r: &wit_write::IngestReport) -> Value {
    json!({
        "path": r.path,
        "files": r.files,
        "messages_read": r.messages_read,
        "messages_written": r.messages_written,
        "messages_already_ingested": r.messages_already_ingested,
        "injected_blocks_stripped": r.injected_blocks_stripped,
        "secrets_redacted": r.secrets_redacted,
        "skipped": r.skipped,
        "problems": r.problems,
    })
}

pub fn forget_report(r: &wit_write::ForgetReport) -> Value {
    json!({"files_changed": r.files_changed, "entries_removed": r.entries_removed})
}

pub fn memory_error(e: &wit::Error) -> Value {
    json!({"kind": error_kind(e), "message": error_message(e)})
}

/// Scores rounded to 6 decimals, so JSON output is stable across platforms'
/// float printing.
fn round(x: f32) -> f64 {
    (x as f64 * 1e6).round() / 1e6
}

pub fn dream_phase(p: wit_dream::Phase) -> &'static str {
    match p {
        wit_dream::Phase::Light => "light",
        wit_dream::Phase::Rem => "rem",
        wit_dream::Phase::Deep => "deep",
    }
}

pub fn verdict(v: wit_dream::Verdict) -> &'static str {
    use wit_dream::Verdict as V;
    match v {
        V::SourceVanished => "source-vanished",
        V::SourceChanged => "source-changed",
        V::Ineligible => "ineligible",
        V::Junk => "junk",
        V::Duplicate => "duplicate",
        V::AlreadyCurated => "already-curated",
        V::BelowGate => "below-gate",
        V::OverLimit => "over-limit",
        V::Deferred => "deferred",
        V::Promoted => "promoted",
        V::Merged => "merged",
    }
}

pub fn consolidation(c: wit_dream::Consolidation) -> &'static str {
    match c {
        wit_dream::Consolidation::None => "none",
        wit_dream::Consolidation::ModelRewrite => "model-rewrite",
        wit_dream::Consolidation::Deterministic => "deterministic",
        wit_dream::Consolidation::AppendOnly => "append-only",
    }
}

pub fn refusal_kind(k: wit_dream::RefusalKind) -> &'static str {
    use wit_dream::RefusalKind as K;
    match k {
        K::LossBound => "loss-bound",
        K::Budget => "budget",
        K::MissingSource => "missing-source",
        K::ConcurrentEdit => "concurrent-edit",
        K::UntrustedText => "untrusted-text",
        K::Junk => "junk",
        K::ForeignEntry => "foreign-entry",
        K::Malformed => "malformed",
        K::ModelFailed => "model-failed",
        K::Unchecked => "unchecked",
    }
}

fn candidate(c: &wit_dream::Candidate) -> Value {
    json!({
        "citation": c.citation,
        "text": c.text,
        "source_class": source_class(c.source_class),
        "verdict": verdict(c.verdict),
        "reason": c.reason,
        "signals": {
            "recalls": c.signals.recalls,
            "distinct_queries": c.signals.distinct_queries,
            "days": c.signals.days,
            "relevance": c.signals.relevance,
            "last_recalled_ms": c.signals.last_recalled_ms,
            "frequency": c.signals.frequency,
            "diversity": c.signals.diversity,
            "recency": c.signals.recency,
            "consolidation": c.signals.consolidation,
            "richness": c.signals.richness,
            "score": c.signals.score,
        },
    })
}

pub fn dream_report(r: &wit_dream::DreamReport) -> Value {
    json!({
        "sweep": r.sweep,
        "phases": r.phases.iter().map(|p| dream_phase(*p)).collect::<Vec<_>>(),
        "staged": r.staged,
        "themes": r.themes,
        "candidates": r.candidates.iter().map(candidate).collect::<Vec<_>>(),
        "added": r.added,
        "merged": r.merged,
        "superseded": r.superseded,
        "rewritten": r.rewritten,
        "consolidation": consolidation(r.consolidation),
        "fallback_reason": r.fallback_reason,
        "fallback_kind": r.fallback_kind.map(refusal_kind),
        "memory_changed": r.memory_changed,
        "dreams_changed": r.dreams_changed,
    })
}

pub fn gate(g: wit_report::Gate) -> &'static str {
    match g {
        wit_report::Gate::Recalls => "recalls",
        wit_report::Gate::DistinctQueries => "distinct-queries",
        wit_report::Gate::Score => "score",
    }
}

pub fn workspace_report(r: &wit_report::WorkspaceReport) -> Value {
    json!({
        "sweeps": r.sweeps.iter().map(|s| json!({
            "id": s.id,
            "ledger_sweep": s.ledger_sweep,
            "at_ms": s.at_ms,
            "phases": s.phases.iter().map(|p| dream_phase(*p)).collect::<Vec<_>>(),
            "phases_recorded": s.phases_recorded,
            "staged": s.staged,
            "themes": s.themes,
            "candidates": s.candidates,
            "added": s.added,
            "merged": s.merged,
            "superseded": s.superseded,
            "rewritten": s.rewritten,
            "consolidation": consolidation(s.consolidation),
            "refusal": s.refusal.as_ref().map(|f| json!({
                "kind": refusal_kind(f.kind),
                "reason": f.reason,
            })),
            "memory_changed": s.memory_changed,
            "dreams_changed": s.dreams_changed,
            "rolled_back_at_ms": s.rolled_back_at_ms,
        })).collect::<Vec<_>>(),
        "candidates": r.candidates.iter().map(|c| json!({
            "candidate": candidate(&c.candidate),
            "staged": c.staged,
            "checks": c.checks.iter().map(|g| json!({
                "gate": gate(g.gate),
                "value": g.value,
                "threshold": g.threshold,
                "passed": g.passed,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "candidates_total": r.candidates_total,
        "promoted": r.promoted.iter().map(|p| json!({
            "sweep": p.sweep,
            "at_ms": p.at_ms,
            "fact": p.fact,
            "line": p.line,
            "citation": p.citation,
            "source_class": p.source_class.map(source_class),
            "session_kind": p.session_kind.map(session_kind),
            "recorded": p.recorded,
            "merged": p.merged,
            "rolled_back": p.rolled_back,
        })).collect::<Vec<_>>(),
        "entries_by_day": r.entries_by_day.iter().map(|d| json!({
            "day": d.day,
            "source_class": source_class(d.source_class),
            "session_kind": session_kind(d.session_kind),
            "entries": d.entries,
        })).collect::<Vec<_>>(),
        "recall_days": r.recall_days.iter().map(|d| json!({
            "day": d.day,
            "recalls": d.recalls,
            "entries": d.entries,
        })).collect::<Vec<_>>(),
        "top_recalled": r.top_recalled.iter().map(|e| json!({
            "citation": e.citation,
            "text": e.text,
            "shown_class": source_class(e.shown_class),
            "live": e.live,
            "recalls": e.recalls,
            "distinct_queries": e.distinct_queries,
            "days": e.days,
            "last_recalled_ms": e.last_recalled_ms,
        })).collect::<Vec<_>>(),
        "recalled_total": r.recalled_total,
        "files_stale": r.files_stale,
        "provenance_lost": r.provenance_lost,
    })
}

pub fn rollback_report(r: &wit_dream::RollbackReport) -> Value {
    json!({
        "sweep": r.sweep,
        "entries_before": r.entries_before,
        "entries_after": r.entries_after,
    })
}
