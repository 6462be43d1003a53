//! The WIT functions over the crate, in the generated bindings' types: each
//! converts its request to the crate's types, calls the operation on
//! `Memory` and converts the answer back. The guest's exports are one-line
//! calls of these; they are plain Rust, so they also run natively.

use super::bindings::{
    wit, wit_bootstrap, wit_config, wit_dream, wit_inject, wit_intents, wit_recall, wit_report,
    wit_store, wit_user, wit_write,
};
use crate::contract::api as core;
use crate::contract::error::MemoryError;
use crate::Memory;

/// What `store.memory.open` takes, as the crate's settings.
pub fn settings(settings: wit_store::Settings) -> core::Settings {
    core::Settings {
        workspace: settings.workspace.into(),
        search: core::SearchSettings {
            max_results: settings.search.max_results,
            min_score: settings.search.min_score,
            candidates_per_leg: settings.search.candidates_per_leg,
            vector_weight: settings.search.vector_weight,
            recency_half_life_days: settings.search.recency_half_life_days,
            recency_floor: settings.search.recency_floor,
            mmr_lambda: settings.search.mmr_lambda,
        },
        chunking: core::ChunkSettings {
            tokens: settings.chunking.tokens,
            overlap: settings.chunking.overlap,
        },
        fts_tokenizer: match settings.fts_tokenizer {
            wit_store::FtsTokenizer::Unicode61 => core::FtsTokenizer::Unicode61,
            wit_store::FtsTokenizer::Trigram => core::FtsTokenizer::Trigram,
        },
        bootstrap: crate::contract::api::Budgets {
            max_file_chars: settings.bootstrap.max_file_chars as usize,
            max_user_file_chars: settings.bootstrap.max_user_file_chars as usize,
            max_total_chars: settings.bootstrap.max_total_chars as usize,
        },
    }
}

/// A budget in the WIT's `u32`: a larger one is as good as unlimited.
fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The WIT `store.sync`.
pub fn sync(
    memory: &mut Memory,
    request: wit_store::SyncRequest,
) -> Result<wit_store::SyncReport, wit::Error> {
    let report = memory
        .sync(core::SyncRequest {
            max_files: request.max_files,
            max_embeddings: request.max_embeddings,
            force: request.force,
            acknowledge_rebuild: request.acknowledge_rebuild,
        })
        .map_err(to_wit_error)?;
    Ok(wit_store::SyncReport {
        files_seen: report.files_seen,
        files_indexed: report.files_indexed,
        files_unchanged: report.files_unchanged,
        files_removed: report.files_removed,
        files_pending: report.files_pending,
        chunks_indexed: report.chunks_indexed,
        embeddings_computed: report.embeddings_computed,
        embeddings_cached: report.embeddings_cached,
        vectors_pending: report.vectors_pending,
        embedding_problem: report.embedding_problem,
        rebuilt: report.rebuilt,
        problems: report.problems.into_iter().map(file_problem).collect(),
    })
}

/// The WIT `store.status`.
pub fn status(memory: &mut Memory) -> Result<wit_store::StatusReport, wit::Error> {
    let s = memory.status().map_err(to_wit_error)?;
    Ok(wit_store::StatusReport {
        index_path: s.index_path,
        schema_version: s.schema_version,
        revision: s.revision,
        files: s.files,
        entries: s.entries,
        windows: s.windows,
        embedded: s.embedded,
        embedder: s.embedder,
        search_mode: s.search_mode.as_str().to_string(),
        fts_tokenizer: match s.fts_tokenizer {
            core::FtsTokenizer::Unicode61 => wit_store::FtsTokenizer::Unicode61,
            core::FtsTokenizer::Trigram => wit_store::FtsTokenizer::Trigram,
        },
        embedding_cache_entries: s.embedding_cache_entries,
        files_stale: s.files_stale,
        by_source_class: s
            .by_source_class
            .into_iter()
            .map(|(c, n)| wit_store::ClassCount {
                source_class: source_class(c),
                entries: n,
            })
            .collect(),
        by_session_kind: s
            .by_session_kind
            .into_iter()
            .map(|(k, n)| wit_store::KindCount {
                session_kind: session_kind(k),
                entries: n,
            })
            .collect(),
        problems: s.problems.into_iter().map(file_problem).collect(),
        provenance_lost: s.provenance_lost,
        promotions_deferred: s.promotions_deferred,
        sweep_problem: s.sweep_problem,
        index_rebuilt: s.index_rebuilt,
    })
}

/// The WIT `recall.search`.
pub fn search(
    memory: &mut Memory,
    request: wit_recall::SearchRequest,
) -> Result<wit_recall::SearchResult, wit::Error> {
    let result = memory
        .search(&core::SearchRequest {
            query: request.query,
            max_results: request.max_results,
            min_score: request.min_score,
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_recall::SearchResult {
        hits: result
            .hits
            .into_iter()
            .map(|h| wit_recall::SearchHit {
                path: h.path,
                lines: wit::LineRange {
                    start: h.start_line,
                    end: h.end_line,
                },
                score: h.score,
                parts: wit_recall::ScoreParts {
                    text: h.parts.text,
                    vector: h.parts.vector,
                    relevance: h.parts.relevance,
                    recency: h.parts.recency,
                    importance: h.parts.importance,
                    project: h.parts.project,
                },
                snippet: h.snippet,
                heading: h.heading,
                citation: h.citation,
                framed: h.framed,
                provenance: provenance(h.provenance),
            })
            .collect(),
        mode: match result.mode {
            core::SearchMode::Hybrid => wit_recall::SearchMode::Hybrid,
            core::SearchMode::FtsOnly => wit_recall::SearchMode::FtsOnly,
        },
        degraded: result.degraded,
        index_rebuilt: result.index_rebuilt,
    })
}

/// The WIT `recall.get`.
pub fn get(
    memory: &mut Memory,
    request: wit_recall::GetRequest,
) -> Result<wit_recall::GetResult, wit::Error> {
    let got = memory
        .get(&core::GetRequest {
            path: request.path,
            start_line: request.start_line,
            end_line: request.end_line,
            context: request.context.map(turn_context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_recall::GetResult {
        path: got.path,
        lines: wit::LineRange {
            start: got.start_line,
            end: got.end_line,
        },
        total_lines: got.total_lines,
        text: got.text,
        truncated: got.truncated,
        source_class: source_class(got.source_class),
        framed: got.framed,
        index_rebuilt: got.index_rebuilt,
    })
}

/// The WIT `bootstrap.load`.
pub fn load(
    memory: &mut Memory,
    request: wit_bootstrap::BootstrapRequest,
) -> Result<wit_bootstrap::BootstrapResult, wit::Error> {
    let result = memory
        .bootstrap(&core::BootstrapRequest {
            purpose: match request.purpose {
                wit_bootstrap::BootstrapPurpose::SessionStart => {
                    core::BootstrapPurpose::SessionStart
                }
                wit_bootstrap::BootstrapPurpose::TurnRefresh => core::BootstrapPurpose::TurnRefresh,
            },
            context: turn_context(request.context),
            known_digest: request.known_digest,
        })
        .map_err(to_wit_error)?;
    Ok(wit_bootstrap::BootstrapResult {
        files: result
            .files
            .into_iter()
            .map(|f| wit_bootstrap::BootstrapFile {
                path: f.path,
                present: f.present,
                skipped: f.skipped,
                original_chars: f.original_chars as u32,
                injected_chars: f.injected_chars as u32,
                truncated: f.truncated,
                text: f.text,
            })
            .collect(),
        text: result.text,
        total_chars: result.total_chars,
        digest: result.digest,
        changed: result.changed,
    })
}

/// The WIT `write.note`.
pub fn note(
    memory: &mut Memory,
    request: wit_write::NoteRequest,
) -> Result<wit_write::WriteReport, wit::Error> {
    let report = memory
        .note(&crate::ops::write::NoteRequest {
            text: request.text,
            origin: content_origin(request.origin),
            importance: request.importance,
            triggers: request.triggers,
            supersedes_key: request.supersedes_key,
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(write_report(report))
}

/// The WIT `write.flush`.
pub fn flush(
    memory: &mut Memory,
    request: wit_write::FlushRequest,
) -> Result<wit_write::FlushReport, wit::Error> {
    let r = memory
        .flush(&crate::ops::write::FlushRequest {
            session_id: request.session_id,
            state: crate::logic::write::flush::SessionState {
                token_estimate: request.state.token_estimate,
                context_window: request.state.context_window,
                reserve_tokens: request.state.reserve_tokens,
                compaction_cycle: request.state.compaction_cycle,
            },
            soft_threshold_tokens: request.soft_threshold_tokens,
            transcript: request.transcript,
            timeout_ms: request.timeout_ms,
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_write::FlushReport {
        due: r.due,
        reason: r.reason,
        written: r.written.map(write_report),
        model_error: r.model_error,
    })
}

/// The WIT `write.ingest`.
pub fn ingest(
    memory: &mut Memory,
    request: wit_write::IngestRequest,
) -> Result<wit_write::IngestReport, wit::Error> {
    let r = memory
        .ingest(&crate::ops::write::IngestRequest {
            session_id: request.session_id,
            transcript: request.transcript,
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_write::IngestReport {
        path: r.path,
        files: r.files,
        messages_read: r.messages_read,
        messages_written: r.messages_written,
        messages_already_ingested: r.messages_already_ingested,
        injected_blocks_stripped: r.injected_blocks_stripped,
        secrets_redacted: r.secrets_redacted,
        skipped: r.skipped,
        problems: r.problems,
    })
}

/// The WIT `write.forget`.
pub fn forget(
    memory: &mut Memory,
    request: wit_write::ForgetRequest,
) -> Result<wit_write::ForgetReport, wit::Error> {
    let r = memory
        .forget(&crate::ops::write::ForgetRequest {
            session_id: request.session_id,
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_write::ForgetReport {
        files_changed: r.files_changed,
        entries_removed: r.entries_removed,
    })
}

/// The WIT `inject.escalate`.
pub fn escalate(
    memory: &mut Memory,
    request: wit_inject::EscalateRequest,
) -> Result<wit_inject::Escalation, wit::Error> {
    let r = memory
        .escalate(&crate::ops::inject::escalate::EscalateRequest {
            message: request.message,
            context: turn_context(request.context),
            timeout_ms: request.timeout_ms,
            remember_across_conversations: request.remember_across_conversations,
        })
        .map_err(to_wit_error)?;
    Ok(wit_inject::Escalation {
        block: r.block.map(context_block),
        answer: r.answer,
        outcome: r.outcome.to_string(),
        detail: r.detail,
        from_cache: r.from_cache,
        tool_calls: r.tool_calls,
    })
}

/// The WIT `inject.trigger-inject`.
pub fn trigger_inject(
    memory: &mut Memory,
    request: wit_inject::InjectRequest,
) -> Result<wit_inject::InjectResult, wit::Error> {
    use crate::logic::inject::recall_intent::EscalationMode;
    let r = memory
        .inject(&crate::ops::inject::trigger::InjectRequest {
            message: request.message,
            mode: match request.mode {
                wit_inject::EscalationMode::Escalate => EscalationMode::Escalate,
                wit_inject::EscalationMode::Always => EscalationMode::Always,
                wit_inject::EscalationMode::Off => EscalationMode::Off,
            },
            context: turn_context(request.context),
        })
        .map_err(to_wit_error)?;
    Ok(wit_inject::InjectResult {
        blocks: r.blocks.into_iter().map(context_block).collect(),
        recall_intent: r.recall_intent,
        escalate: r.escalate,
        escalation_reason: r.escalation_reason,
    })
}

/// The WIT `intents.create`.
pub fn create(
    memory: &mut Memory,
    spec: wit_intents::IntentSpec,
    context: wit::TurnContext,
) -> Result<wit_intents::CreateResult, wit::Error> {
    let r = memory
        .create_intent(
            &crate::ops::intents::IntentSpec {
                text: spec.text,
                triggers: spec.triggers,
                due_at_ms: spec.due_at_ms,
                channel: spec.channel,
                sender: spec.sender,
                expires_in_ms: spec.expires_in_ms,
                fire_budget: spec.fire_budget,
                cooldown_ms: spec.cooldown_ms,
                semantic: spec.semantic,
                origin: content_origin(spec.origin),
            },
            &turn_context(context),
        )
        .map_err(to_wit_error)?;
    Ok(wit_intents::CreateResult {
        intent: r.intent.map(intent_view),
        wish: r.wish,
    })
}

/// The WIT `intents.list`.
pub fn list(
    memory: &mut Memory,
    context: wit::TurnContext,
) -> Result<Vec<wit_intents::Intent>, wit::Error> {
    let list = memory.list_intents(context.now_ms).map_err(to_wit_error)?;
    Ok(list.into_iter().map(intent_view).collect())
}

/// The WIT `intents.cancel`.
pub fn cancel(
    memory: &mut Memory,
    id: i64,
    context: wit::TurnContext,
) -> Result<wit_intents::Intent, wit::Error> {
    let v = memory
        .cancel_intent(id, &turn_context(context))
        .map_err(to_wit_error)?;
    Ok(intent_view(v))
}

/// The WIT `intents.due`.
pub fn due(memory: &mut Memory, at_ms: i64) -> Result<Vec<wit_intents::Intent>, wit::Error> {
    let list = memory.due_intents(at_ms).map_err(to_wit_error)?;
    Ok(list.into_iter().map(intent_view).collect())
}

/// The WIT `user.show`.
pub fn show(memory: &mut Memory) -> Result<wit_user::UserModel, wit::Error> {
    let m = memory.user_show().map_err(to_wit_error)?;
    Ok(user_model(m))
}

/// The WIT `user.set`.
pub fn set(
    memory: &mut Memory,
    request: wit_user::SetRequest,
) -> Result<wit_user::UserModel, wit::Error> {
    let m = memory
        .user_set(
            &request.directive,
            request.replaces_line,
            &request.expected_hash,
            &turn_context(request.context),
        )
        .map_err(to_wit_error)?;
    Ok(user_model(m))
}

/// The WIT `dream.run`.
pub fn run(
    memory: &mut Memory,
    request: wit_dream::DreamRequest,
) -> Result<wit_dream::DreamReport, wit::Error> {
    use crate::logic::dream::sweep::Phase;
    let request = crate::logic::dream::sweep::DreamRequest {
        phases: request
            .phases
            .into_iter()
            .map(|p| match p {
                wit_dream::Phase::Light => Phase::Light,
                wit_dream::Phase::Rem => Phase::Rem,
                wit_dream::Phase::Deep => Phase::Deep,
            })
            .collect(),
        dry_run: request.dry_run,
        gates: gates(request.gates),
        context: turn_context(request.context),
    };
    let r = memory.dream(&request).map_err(to_wit_error)?;
    Ok(dream_report(r))
}

/// The WIT `dream.rollback`.
pub fn rollback(
    memory: &mut Memory,
    context: wit::TurnContext,
) -> Result<wit_dream::RollbackReport, wit::Error> {
    let r = memory
        .dream_rollback(&turn_context(context))
        .map_err(to_wit_error)?;
    Ok(wit_dream::RollbackReport {
        sweep: r.sweep,
        entries_before: r.entries_before,
        entries_after: r.entries_after,
    })
}

/// The WIT `report.gather`.
pub fn gather(
    memory: &mut Memory,
    request: wit_report::ReportRequest,
) -> Result<wit_report::WorkspaceReport, wit::Error> {
    let request = crate::ops::report::ReportRequest {
        now_ms: request.now_ms,
        gates: gates(request.gates),
        max_sweeps: request.max_sweeps,
        max_candidates: request.max_candidates,
        max_promoted: request.max_promoted,
        max_recalled: request.max_recalled,
    };
    let r = memory.report(&request).map_err(to_wit_error)?;
    Ok(workspace_report(r))
}

/// The WIT `config.describe`.
pub fn describe() -> Vec<wit_config::SettingDoc> {
    use crate::logic::config::Kind;
    crate::logic::config::describe()
        .iter()
        .map(|s| {
            let (value_type, minimum, exclusive_minimum, maximum, choices) = match s.kind {
                Kind::Integer { min, max, .. } => (
                    wit_config::ValueType::Integer,
                    Some(min as f64),
                    None,
                    max.map(|m| m as f64),
                    Vec::new(),
                ),
                Kind::Number {
                    min,
                    min_exclusive,
                    max,
                    ..
                } => (
                    wit_config::ValueType::Number,
                    (!min_exclusive).then_some(min),
                    min_exclusive.then_some(min),
                    max,
                    Vec::new(),
                ),
                Kind::Choice { values, .. } => (
                    wit_config::ValueType::Choice,
                    None,
                    None,
                    None,
                    values.iter().map(|v| v.to_string()).collect(),
                ),
            };
            wit_config::SettingDoc {
                key: s.key.to_string(),
                value_type,
                default_value: s.kind.default().to_string(),
                minimum,
                exclusive_minimum,
                maximum,
                choices,
                doc: s.doc.to_string(),
            }
        })
        .collect()
}

/// The WIT `config.resolve`.
pub fn resolve(
    workspace: String,
    settings_json: String,
) -> Result<wit_config::ResolvedConfig, wit::Error> {
    let user: serde_json::Value = serde_json::from_str(&settings_json)
        .map_err(|e| wit::Error::InvalidInput(format!("the settings are not JSON: {e}")))?;
    let r = crate::logic::config::resolve(workspace, &user).map_err(to_wit_error)?;
    let (s, g) = (r.settings, r.gates);
    Ok(wit_config::ResolvedConfig {
        settings: wit_store::Settings {
            workspace: s.workspace.to_string_lossy().into_owned(),
            search: wit_store::SearchSettings {
                max_results: s.search.max_results,
                min_score: s.search.min_score,
                candidates_per_leg: s.search.candidates_per_leg,
                vector_weight: s.search.vector_weight,
                recency_half_life_days: s.search.recency_half_life_days,
                recency_floor: s.search.recency_floor,
                mmr_lambda: s.search.mmr_lambda,
            },
            chunking: wit_store::ChunkSettings {
                tokens: s.chunking.tokens,
                overlap: s.chunking.overlap,
            },
            fts_tokenizer: match s.fts_tokenizer {
                core::FtsTokenizer::Unicode61 => wit_store::FtsTokenizer::Unicode61,
                core::FtsTokenizer::Trigram => wit_store::FtsTokenizer::Trigram,
            },
            bootstrap: wit_store::BootstrapSettings {
                max_file_chars: saturating_u32(s.bootstrap.max_file_chars),
                max_user_file_chars: saturating_u32(s.bootstrap.max_user_file_chars),
                max_total_chars: saturating_u32(s.bootstrap.max_total_chars),
            },
        },
        dream_gates: wit_dream::DreamGates {
            min_score: g.min_score,
            min_recalls: g.min_recalls,
            min_unique_queries: g.min_unique_queries,
            recency_half_life_days: g.recency_half_life_days,
            max_promotions: g.max_promotions,
            light_lookback_days: g.light_lookback_days,
            rem_lookback_days: g.rem_lookback_days,
            model_timeout_ms: g.model_timeout_ms,
        },
        flush: wit_config::FlushSettings {
            soft_threshold_tokens: r.flush.soft_threshold_tokens,
            timeout_ms: r.flush.timeout_ms,
        },
    })
}

fn context_block(b: crate::ops::inject::trigger::ContextBlock) -> wit_inject::ContextBlock {
    wit_inject::ContextBlock {
        kind: b.kind.to_string(),
        text: b.text,
        sources: b.sources,
        score: b.score,
    }
}

fn intent_view(v: crate::ops::intents::IntentView) -> wit_intents::Intent {
    use crate::logic::intents::State;
    wit_intents::Intent {
        id: v.intent.id,
        text: v.intent.text,
        triggers: v.intent.triggers,
        due_at_ms: v.intent.due_at,
        channel: v.intent.channel,
        sender: v.intent.sender,
        state: match v.state {
            State::Pending => wit_intents::IntentState::Pending,
            State::Armed => wit_intents::IntentState::Armed,
            State::Fired => wit_intents::IntentState::Fired,
            State::Done => wit_intents::IntentState::Done,
            State::Cancelled => wit_intents::IntentState::Cancelled,
            State::Expired => wit_intents::IntentState::Expired,
        },
        fires: v.intent.fires,
        fire_budget: v.intent.fire_budget,
        expires_at_ms: v.intent.expires_at,
        last_fired_at_ms: v.intent.last_fired_at,
        cooldown_ms: v.intent.cooldown_ms,
        semantic: v.intent.trigger_vector.is_some(),
    }
}

fn directive(d: crate::logic::user::Directive) -> wit_user::Directive {
    wit_user::Directive {
        line: d.line,
        text: d.text,
        observed: d.observed.to_string(),
        status: match d.status {
            crate::logic::user::Status::Active => wit_user::DirectiveStatus::Active,
            crate::logic::user::Status::Superseded => wit_user::DirectiveStatus::Superseded,
        },
    }
}

fn user_model(m: crate::ops::user::UserModel) -> wit_user::UserModel {
    wit_user::UserModel {
        text: m.text,
        hash: m.hash,
        directives: m.directives.into_iter().map(directive).collect(),
        replaced: m.replaced.map(directive),
    }
}

fn gates(g: wit_dream::DreamGates) -> crate::logic::dream::signals::Gates {
    crate::logic::dream::signals::Gates {
        min_score: g.min_score,
        min_recalls: g.min_recalls,
        min_unique_queries: g.min_unique_queries,
        recency_half_life_days: g.recency_half_life_days,
        max_promotions: g.max_promotions,
        light_lookback_days: g.light_lookback_days,
        rem_lookback_days: g.rem_lookback_days,
        model_timeout_ms: g.model_timeout_ms,
    }
}

fn phase(p: crate::logic::dream::sweep::Phase) -> wit_dream::Phase {
    use crate::logic::dream::sweep::Phase;
    match p {
        Phase::Light => wit_dream::Phase::Light,
        Phase::Rem => wit_dream::Phase::Rem,
        Phase::Deep => wit_dream::Phase::Deep,
    }
}

fn consolidation(c: crate::logic::dream::sweep::Consolidation) -> wit_dream::Consolidation {
    use crate::logic::dream::sweep::Consolidation;
    match c {
        Consolidation::None => wit_dream::Consolidation::None,
        Consolidation::ModelRewrite => wit_dream::Consolidation::ModelRewrite,
        Consolidation::Deterministic => wit_dream::Consolidation::Deterministic,
        Consolidation::AppendOnly => wit_dream::Consolidation::AppendOnly,
    }
}

fn refusal_kind(k: crate::logic::dream::refusal::RefusalKind) -> wit_dream::RefusalKind {
    use crate::logic::dream::refusal::RefusalKind as K;
    match k {
        K::LossBound => wit_dream::RefusalKind::LossBound,
        K::Budget => wit_dream::RefusalKind::Budget,
        K::MissingSource => wit_dream::RefusalKind::MissingSource,
        K::ConcurrentEdit => wit_dream::RefusalKind::ConcurrentEdit,
        K::UntrustedText => wit_dream::RefusalKind::UntrustedText,
        K::Junk => wit_dream::RefusalKind::Junk,
        K::ForeignEntry => wit_dream::RefusalKind::ForeignEntry,
        K::Malformed => wit_dream::RefusalKind::Malformed,
        K::ModelFailed => wit_dream::RefusalKind::ModelFailed,
        K::Unchecked => wit_dream::RefusalKind::Unchecked,
    }
}

fn candidate(c: crate::logic::dream::sweep::CandidateView) -> wit_dream::Candidate {
    use crate::logic::dream::sweep::Verdict;
    wit_dream::Candidate {
        citation: c.citation,
        text: c.text,
        source_class: source_class(c.source_class),
        signals: wit_dream::Signals {
            recalls: c.signals.recalls,
            distinct_queries: c.signals.distinct_queries,
            days: c.signals.days,
            relevance: c.signals.relevance,
            last_recalled_ms: c.signals.last_recalled_ms,
            frequency: c.signals.frequency,
            diversity: c.signals.diversity,
            recency: c.signals.recency,
            consolidation: c.signals.consolidation,
            richness: c.signals.richness,
            score: c.signals.score,
        },
        verdict: match c.verdict {
            Verdict::SourceVanished => wit_dream::Verdict::SourceVanished,
            Verdict::SourceChanged => wit_dream::Verdict::SourceChanged,
            Verdict::Ineligible => wit_dream::Verdict::Ineligible,
            Verdict::Junk => wit_dream::Verdict::Junk,
            Verdict::Duplicate => wit_dream::Verdict::Duplicate,
            Verdict::AlreadyCurated => wit_dream::Verdict::AlreadyCurated,
            Verdict::BelowGate => wit_dream::Verdict::BelowGate,
            Verdict::OverLimit => wit_dream::Verdict::OverLimit,
            Verdict::Deferred => wit_dream::Verdict::Deferred,
            Verdict::Promoted => wit_dream::Verdict::Promoted,
            Verdict::Merged => wit_dream::Verdict::Merged,
        },
        reason: c.reason,
    }
}

fn dream_report(r: crate::logic::dream::sweep::DreamReport) -> wit_dream::DreamReport {
    wit_dream::DreamReport {
        sweep: r.sweep,
        phases: r.phases.into_iter().map(phase).collect(),
        staged: r.staged,
        themes: r.themes,
        candidates: r.candidates.into_iter().map(candidate).collect(),
        added: r.added,
        merged: r.merged,
        superseded: r.superseded,
        rewritten: r.rewritten,
        consolidation: consolidation(r.consolidation),
        fallback_kind: r.refusal.as_ref().map(|f| refusal_kind(f.kind)),
        fallback_reason: r.refusal.map(|f| f.reason),
        memory_changed: r.memory_changed,
        dreams_changed: r.dreams_changed,
    }
}

fn workspace_report(r: crate::ops::report::WorkspaceReport) -> wit_report::WorkspaceReport {
    wit_report::WorkspaceReport {
        sweeps: r
            .sweeps
            .into_iter()
            .map(|s| wit_report::Sweep {
                id: s.id,
                ledger_sweep: s.ledger_sweep,
                at_ms: s.at_ms,
                phases: s.phases.into_iter().map(phase).collect(),
                phases_recorded: s.phases_recorded,
                staged: s.staged,
                themes: s.themes,
                candidates: s.candidates,
                added: s.added,
                merged: s.merged,
                superseded: s.superseded,
                rewritten: s.rewritten,
                consolidation: consolidation(s.consolidation),
                refusal: s.refusal.map(|f| wit_report::Refusal {
                    kind: refusal_kind(f.kind),
                    reason: f.reason,
                }),
                memory_changed: s.memory_changed,
                dreams_changed: s.dreams_changed,
                rolled_back_at_ms: s.rolled_back_at_ms,
            })
            .collect(),
        candidates: r
            .candidates
            .into_iter()
            .map(|c| wit_report::StagedCandidate {
                candidate: candidate(c.candidate),
                staged: c.staged,
                checks: c
                    .checks
                    .into_iter()
                    .map(|g| wit_report::GateCheck {
                        gate: match g.gate {
                            crate::logic::dream::signals::Gate::Recalls => {
                                wit_report::Gate::Recalls
                            }
                            crate::logic::dream::signals::Gate::DistinctQueries => {
                                wit_report::Gate::DistinctQueries
                            }
                            crate::logic::dream::signals::Gate::Score => wit_report::Gate::Score,
                        },
                        value: g.value,
                        threshold: g.threshold,
                        passed: g.passed,
                    })
                    .collect(),
            })
            .collect(),
        candidates_total: r.candidates_total,
        promoted: r
            .promoted
            .into_iter()
            .map(|p| wit_report::PromotedEntry {
                sweep: p.sweep,
                at_ms: p.at_ms,
                fact: p.fact,
                line: p.line,
                citation: p.citation,
                source_class: p.source_class.map(source_class),
                session_kind: p.session_kind.map(session_kind),
                recorded: p.recorded,
                merged: p.merged,
                rolled_back: p.rolled_back,
            })
            .collect(),
        entries_by_day: r
            .entries_by_day
            .into_iter()
            .map(|d| wit_report::DayCount {
                day: d.day,
                source_class: source_class(d.source_class),
                session_kind: session_kind(d.session_kind),
                entries: d.entries,
            })
            .collect(),
        recall_days: r
            .recall_days
            .into_iter()
            .map(|d| wit_report::RecallDay {
                day: d.day,
                recalls: d.recalls,
                entries: d.entries,
            })
            .collect(),
        top_recalled: r
            .top_recalled
            .into_iter()
            .map(|e| wit_report::RecalledEntry {
                citation: e.citation,
                text: e.text,
                shown_class: source_class(e.shown_class),
                live: e.live,
                recalls: e.recalls,
                distinct_queries: e.distinct_queries,
                days: e.days,
                last_recalled_ms: e.last_recalled_ms,
            })
            .collect(),
        recalled_total: r.recalled_total,
        files_stale: r.files_stale,
        provenance_lost: r.provenance_lost,
    }
}

fn content_origin(o: wit_write::ContentOrigin) -> crate::contract::api::ContentOrigin {
    use crate::contract::api::ContentOrigin as O;
    match o {
        wit_write::ContentOrigin::SenderMessage => O::SenderMessage,
        wit_write::ContentOrigin::AgentDerived => O::AgentDerived,
        wit_write::ContentOrigin::WebPage => O::WebPage,
        wit_write::ContentOrigin::ToolOutput => O::ToolOutput,
        wit_write::ContentOrigin::Participant => O::Participant,
        wit_write::ContentOrigin::Scaffolding => O::Scaffolding,
        wit_write::ContentOrigin::UnknownExternal => O::UnknownExternal,
    }
}

fn write_report(r: crate::ops::write::WriteReport) -> wit_write::WriteReport {
    wit_write::WriteReport {
        path: r.path,
        lines: r.lines,
        duplicates: r.duplicates,
        source_class: source_class(r.source_class),
        session_kind: session_kind(r.session_kind),
    }
}

pub fn to_wit_error(e: MemoryError) -> wit::Error {
    match e {
        MemoryError::InvalidInput(m) => wit::Error::InvalidInput(m),
        MemoryError::NotFound(m) => wit::Error::NotFound(m),
        MemoryError::AccessDenied(m) => wit::Error::AccessDenied(m),
        MemoryError::TooLarge(m) => wit::Error::TooLarge(m),
        MemoryError::Io(m) => wit::Error::Io(m),
        MemoryError::WorkspaceReadOnly(m) => wit::Error::WorkspaceReadOnly(m),
        MemoryError::Index(m) => wit::Error::Index(m),
        MemoryError::Internal(m) => wit::Error::Internal(m),
    }
}

fn file_problem(p: core::FileProblem) -> wit_store::FileProblem {
    wit_store::FileProblem {
        path: p.path,
        problem: p.problem,
    }
}

fn turn_context(c: wit::TurnContext) -> core::TurnContext {
    core::TurnContext {
        now_ms: c.now_ms,
        session_id: c.session_id,
        session_kind: c.session_kind.map(|k| match k {
            wit::SessionKind::Interactive => core::SessionKind::Interactive,
            wit::SessionKind::Cron => core::SessionKind::Cron,
            wit::SessionKind::Heartbeat => core::SessionKind::Heartbeat,
            wit::SessionKind::Subagent => core::SessionKind::Subagent,
        }),
        channel: c.channel,
        sender: c.sender,
        sender_is_owner: c.sender_is_owner,
        active_projects: c.active_projects,
        utc_offset_minutes: c.utc_offset_minutes,
        taint: c.taint.map(|t| match t {
            wit::SourceClass::Owner => core::SourceClass::Owner,
            wit::SourceClass::Agent => core::SourceClass::Agent,
            wit::SourceClass::Untrusted => core::SourceClass::Untrusted,
            wit::SourceClass::System => core::SourceClass::System,
        }),
    }
}

fn source_class(c: core::SourceClass) -> wit::SourceClass {
    match c {
        core::SourceClass::Owner => wit::SourceClass::Owner,
        core::SourceClass::Agent => wit::SourceClass::Agent,
        core::SourceClass::Untrusted => wit::SourceClass::Untrusted,
        core::SourceClass::System => wit::SourceClass::System,
    }
}

fn session_kind(k: core::SessionKind) -> wit::SessionKind {
    match k {
        core::SessionKind::Interactive => wit::SessionKind::Interactive,
        core::SessionKind::Cron => wit::SessionKind::Cron,
        core::SessionKind::Heartbeat => wit::SessionKind::Heartbeat,
        core::SessionKind::Subagent => wit::SessionKind::Subagent,
    }
}

fn provenance(p: core::Provenance) -> wit::Provenance {
    wit::Provenance {
        source_class: source_class(p.source_class),
        session_kind: session_kind(p.session_kind),
        basis: match p.basis {
            core::ProvenanceBasis::Recorded => wit::ProvenanceBasis::Recorded,
            core::ProvenanceBasis::OperatorFile => wit::ProvenanceBasis::OperatorFile,
            core::ProvenanceBasis::Lost => wit::ProvenanceBasis::Lost,
            core::ProvenanceBasis::Copied => wit::ProvenanceBasis::Copied,
        },
        file_class: source_class(p.file_class),
        promotable: p.promotable,
        session_id: p.session_id,
        observed_at_ms: p.observed_at_ms,
        supersedes_key: p.supersedes_key,
    }
}
