//! The conformance runner: each scenario is a folder with a `workspace/`
//! fixture and a `scenario.json` of steps (component calls and file edits,
//! with their clock and settings) and the results they must produce. The
//! format is documented in `tests/conformance/README.md`.
//!
//! Two invariants are checked after every component call without being
//! written in any scenario: the Markdown files on disk are unchanged (no
//! operation of this version writes them), and a trapped instance is replaced.

use crate::clock::{parse_now, parse_time, Parsed};
use crate::config::{resolve, ConfigFile, Overrides};
use crate::host::{
    wit, wit_bootstrap, wit_dream, wit_inject, wit_intents, wit_recall, wit_report, wit_store,
    wit_user, wit_write, CallError,
};
use crate::json;
use crate::session::Session;
use anyhow::{anyhow, bail, Context};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub description: String,
    /// The clock: `YYYY-MM-DD` or RFC 3339 (default 2026-12-02).
    #[serde(default)]
    pub now: Option<String>,
    /// `none` (default), `test` or `failing`.
    #[serde(default)]
    pub embedder: Option<String>,
    #[serde(default)]
    pub settings: ScenarioSettings,
    /// Replies of the scripted model, in order (`{"text"}`, `{"error"}`,
    /// optionally `"delay_ms"`); without them there is no model.
    #[serde(default)]
    pub model_replies: Option<Vec<Value>>,
    pub steps: Vec<Step>,
}

/// Overrides of the component's settings, by their name without the
/// section (`maxResults` is `search.maxResults`; see `crate::settings`).
pub type ScenarioSettings = serde_json::Map<String, Value>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub op: String,
    /// What the step is for, shown when it fails.
    #[serde(default)]
    pub note: Option<String>,
    /// Overrides the scenario clock for this and later steps.
    #[serde(default)]
    pub now: Option<String>,
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    /// Hex bytes to write (for invalid UTF-8 and NUL).
    #[serde(default)]
    pub bytes_hex: Option<String>,
    /// Repeat `content` this many times (for large files).
    #[serde(default)]
    pub repeat: Option<usize>,
    #[serde(default)]
    pub start_line: Option<u32>,
    #[serde(default)]
    pub end_line: Option<u32>,
    #[serde(default)]
    pub max_results: Option<u32>,
    #[serde(default)]
    pub min_score: Option<f32>,
    #[serde(default)]
    pub max_files: Option<u32>,
    #[serde(default)]
    pub force: bool,
    /// `sync`: `sync-request.acknowledge-rebuild` (default true: a scenario's
    /// sync is one the user asked for; false is a host's own sync).
    #[serde(default)]
    pub acknowledge_rebuild: Option<bool>,
    #[serde(default)]
    pub known_digest: Option<String>,
    /// `note`: the text.
    #[serde(default)]
    pub text: Option<String>,
    /// `note` (required) and `intent_create` (default sender-message):
    /// sender-message, agent-derived, web-page, tool-output, participant,
    /// scaffolding, unknown-external.
    #[serde(default)]
    pub origin: Option<String>,
    /// The turn's taint (`turn-context.taint`): owner, agent, untrusted or
    /// system; none by default.
    #[serde(default)]
    pub taint: Option<String>,
    /// Whether the turn's sender is the owner (default true).
    #[serde(default)]
    pub owner: Option<bool>,
    /// The turn's session kind (default interactive; `null` = unknown).
    #[serde(default = "interactive")]
    pub session_kind: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub importance: Option<u8>,
    #[serde(default)]
    pub triggers: Vec<String>,
    #[serde(default)]
    pub supersedes_key: Option<String>,
    /// `ingest`: the transcript as a list of message objects (written as JSONL).
    #[serde(default)]
    pub transcript: Option<Vec<Value>>,
    /// `ingest`: the transcript as raw JSONL text (for malformed input).
    #[serde(default)]
    pub transcript_text: Option<String>,
    /// `flush`: the session's state against compaction.
    #[serde(default)]
    pub token_estimate: Option<u32>,
    #[serde(default)]
    pub context_window: Option<u32>,
    #[serde(default)]
    pub reserve_tokens: Option<u32>,
    #[serde(default)]
    pub compaction_cycle: Option<u32>,
    #[serde(default)]
    pub soft_threshold_tokens: Option<u32>,
    #[serde(default)]
    pub timeout_ms: Option<u32>,
    /// `user_set`: the directive, the line it replaces, and the hash it was
    /// made against (`"$current"` reads the current hash first).
    #[serde(default)]
    pub directive: Option<String>,
    #[serde(default)]
    pub replaces_line: Option<u32>,
    #[serde(default)]
    pub expected_hash: Option<String>,
    /// `escalate`: whether transcripts may be searched (default false).
    #[serde(default)]
    pub remember_across_conversations: Option<bool>,
    /// `inject`: the incoming message.
    #[serde(default)]
    pub message: Option<String>,
    /// `inject`: escalate (default), always or off.
    #[serde(default)]
    pub mode: Option<String>,
    /// `intent_create`: the spec (`text`, `triggers`, `due_at`, `channel`,
    /// `sender`, `expires_in_ms`, `fire_budget`, `cooldown_ms`).
    #[serde(default)]
    pub intent: Option<IntentStep>,
    /// `intent_cancel`: the id.
    #[serde(default)]
    pub id: Option<i64>,
    /// `due`: the time (`YYYY-MM-DD` or RFC 3339); default the step's clock.
    #[serde(default)]
    pub at: Option<String>,
    /// The turn's channel and sender.
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub sender: Option<String>,
    /// The turn's active project keys, most recent first.
    #[serde(default)]
    pub active_projects: Vec<String>,
    /// `dream`: the phases (`light`, `rem`, `deep`; default all).
    #[serde(default)]
    pub phases: Vec<String>,
    /// `dream`: report only, write nothing (`dream --explain`).
    #[serde(default)]
    pub dry_run: bool,
    /// `dream`: overrides of the gates (`min_score`, `min_recalls`,
    /// `min_unique_queries`, `recency_half_life_days`, `max_promotions`).
    #[serde(default)]
    pub gates: Option<GateOverrides>,
    /// `search_framing`: text that must never be framed as trusted.
    #[serde(default)]
    pub marker: Option<String>,
    /// A subset of the result, with the operators of the README.
    #[serde(default)]
    pub expect: Option<Value>,
    /// The error the call must raise: `{"kind": "...", "message": {"$substr": "..."}}`.
    #[serde(default)]
    pub expect_error: Option<Value>,
}

/// A step's transcript as JSONL: `transcript` (message objects) or
/// `transcript_text` (raw text).
fn transcript_of(step: &Step) -> anyhow::Result<String> {
    Ok(match (&step.transcript, &step.transcript_text) {
        (Some(messages), None) => messages.iter().map(|m| format!("{m}\n")).collect(),
        (None, Some(text)) => text.clone(),
        _ => bail!("give exactly one of `transcript` and `transcript_text`"),
    })
}

fn interactive() -> Option<String> {
    Some("interactive".into())
}

pub fn parse_origin(origin: &str) -> anyhow::Result<wit_write::ContentOrigin> {
    use wit_write::ContentOrigin as O;
    Ok(match origin {
        "sender-message" => O::SenderMessage,
        "agent-derived" => O::AgentDerived,
        "web-page" => O::WebPage,
        "tool-output" => O::ToolOutput,
        "participant" => O::Participant,
        "scaffolding" => O::Scaffolding,
        "unknown-external" => O::UnknownExternal,
        other => bail!("unknown origin {other:?}"),
    })
}

pub fn parse_session_kind(kind: &str) -> anyhow::Result<wit::SessionKind> {
    Ok(match kind {
        "interactive" => wit::SessionKind::Interactive,
        "cron" => wit::SessionKind::Cron,
        "heartbeat" => wit::SessionKind::Heartbeat,
        "subagent" => wit::SessionKind::Subagent,
        other => {
            bail!("unknown session kind {other:?}; use interactive, cron, heartbeat or subagent")
        }
    })
}

pub fn parse_mode(mode: &str) -> anyhow::Result<wit_inject::EscalationMode> {
    Ok(match mode {
        "escalate" => wit_inject::EscalationMode::Escalate,
        "always" => wit_inject::EscalationMode::Always,
        "off" => wit_inject::EscalationMode::Off,
        other => bail!("unknown escalation mode {other:?}; use escalate, always or off"),
    })
}

/// The turn context of a step: the session's, with the step's sender, session
/// kind and session id.
fn step_context(session: &Session, step: &Step) -> anyhow::Result<wit::TurnContext> {
    let mut context = session.context();
    context.sender_is_owner = step.owner.unwrap_or(true);
    context.session_kind = step
        .session_kind
        .as_deref()
        .map(parse_session_kind)
        .transpose()?;
    context.session_id = step.session_id.clone();
    if !step.active_projects.is_empty() {
        context.active_projects = step.active_projects.clone();
    }
    if step.channel.is_some() {
        context.channel = step.channel.clone();
    }
    context.sender = step.sender.clone();
    context.taint = step.taint.as_deref().map(parse_source_class).transpose()?;
    Ok(context)
}

pub fn parse_source_class(class: &str) -> anyhow::Result<wit::SourceClass> {
    Ok(match class {
        "owner" => wit::SourceClass::Owner,
        "agent" => wit::SourceClass::Agent,
        "untrusted" => wit::SourceClass::Untrusted,
        "system" => wit::SourceClass::System,
        other => bail!("unknown source class {other:?}"),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentStep {
    pub text: String,
    #[serde(default)]
    pub triggers: Vec<String>,
    /// `YYYY-MM-DD` or RFC 3339.
    #[serde(default)]
    pub due_at: Option<String>,
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub sender: Option<String>,
    #[serde(default)]
    pub expires_in_ms: Option<i64>,
    #[serde(default)]
    pub fire_budget: Option<u32>,
    #[serde(default)]
    pub cooldown_ms: Option<i64>,
    #[serde(default)]
    pub semantic: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateOverrides {
    pub min_score: Option<f32>,
    pub min_recalls: Option<u32>,
    pub min_unique_queries: Option<u32>,
    pub recency_half_life_days: Option<f32>,
    pub max_promotions: Option<u32>,
}

fn dream_request(session: &Session, step: &Step) -> anyhow::Result<wit_dream::DreamRequest> {
    let mut gates = session.dream_gates;
    if let Some(g) = &step.gates {
        gates.min_score = g.min_score.unwrap_or(gates.min_score);
        gates.min_recalls = g.min_recalls.unwrap_or(gates.min_recalls);
        gates.min_unique_queries = g.min_unique_queries.unwrap_or(gates.min_unique_queries);
        gates.recency_half_life_days = g
            .recency_half_life_days
            .unwrap_or(gates.recency_half_life_days);
        gates.max_promotions = g.max_promotions.unwrap_or(gates.max_promotions);
    }
    Ok(wit_dream::DreamRequest {
        phases: step
            .phases
            .iter()
            .map(|p| parse_phase(p))
            .collect::<anyhow::Result<_>>()?,
        dry_run: step.dry_run,
        gates,
        context: step_context(session, step)?,
    })
}

pub fn parse_phase(text: &str) -> anyhow::Result<wit_dream::Phase> {
    Ok(match text {
        "light" => wit_dream::Phase::Light,
        "rem" => wit_dream::Phase::Rem,
        "deep" => wit_dream::Phase::Deep,
        other => bail!("unknown phase {other:?} (light, rem or deep)"),
    })
}

/// Every scenario folder (one holding a `scenario.json`) under `root`, sorted.
pub fn discover(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    walk(root, &mut found)?;
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if dir.join("scenario.json").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, found)?;
        }
    }
    Ok(())
}

/// Runs one scenario against the component at `component`.
pub fn run_scenario(dir: &Path, component: &Path) -> anyhow::Result<()> {
    let file = dir.join("scenario.json");
    let scenario: Scenario = serde_json::from_str(
        &std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?,
    )
    .with_context(|| format!("{} is not a valid scenario", file.display()))?;
    run_parsed(
        &scenario,
        &dir.join("workspace"),
        &file.display().to_string(),
        component,
    )
}

/// Runs a scenario given as data, with the fixture directory `fixture`
/// (used when it exists); `label` names it in failures.
pub fn run_parsed(
    scenario: &Scenario,
    fixture: &Path,
    label: &str,
    component: &Path,
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let workspace = temp.path().join("workspace");
    std::fs::create_dir_all(&workspace)?;
    if fixture.is_dir() {
        copy_tree(fixture, &workspace)?;
    }
    let model = match &scenario.model_replies {
        None => "none".to_string(),
        Some(replies) => {
            let script = temp.path().join("model-script.jsonl");
            // An `append_to` path (a concurrent editor) is the workspace's.
            let lines: String = replies
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if let Some(path) = r.get("append_to").and_then(Value::as_str) {
                        r["append_to"] = Value::from(workspace.join(path).display().to_string());
                    }
                    format!("{r}\n")
                })
                .collect();
            std::fs::write(&script, lines)?;
            format!("scripted:{}", script.display())
        }
    };
    let overrides = Overrides {
        model: Some(model),
        workspace: Some(workspace.clone()),
        component: Some(component.to_path_buf()),
        embedder: Some(scenario.embedder.clone().unwrap_or_else(|| "none".into())),
        settings: crate::settings::from_scenario(&scenario.settings)?,
        // Never the host's zone: the offset is the one `now` is written with.
        time_zone: Some("UTC".into()),
        ..Overrides::default()
    };
    let resolved = resolve(&ConfigFile::default(), &overrides)?;
    let start = parse_time(scenario.now.as_deref().unwrap_or("2026-12-02"))?;
    let mut session = Session::open(&resolved, start.ms)?;
    set_clock(&mut session, start);
    // The files as `save_files` saw them, for `files_unchanged`.
    let mut saved: Option<BTreeMap<String, (String, u64)>> = None;
    for (number, step) in scenario.steps.iter().enumerate() {
        let label = format!(
            "{} step {} ({}{})",
            label,
            number + 1,
            step.op,
            step.note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        );
        if let Some(at) = &step.now {
            set_clock(&mut session, parse_time(at).with_context(|| label.clone())?);
        }
        run_step(&mut session, &workspace, step, &mut saved).with_context(|| label)?;
    }
    Ok(())
}

/// A scenario's or step's `now`: the clock, and the turn context's
/// `utc-offset-minutes` from its written offset (`…-05:00`: -300; `Z`, `-00:00`
/// and a bare date: 0).
fn set_clock(session: &mut Session, at: Parsed) {
    session.now_ms = at.ms;
    session.utc_offset_minutes = at.offset_minutes.unwrap_or(0);
}

fn run_step(
    session: &mut Session,
    workspace: &Path,
    step: &Step,
    saved: &mut Option<BTreeMap<String, (String, u64)>>,
) -> anyhow::Result<()> {
    let before = if is_component_call(&step.op) {
        Some(snapshot(workspace, false)?)
    } else {
        None
    };
    let outcome: Option<Result<Value, CallError>> = match step.op.as_str() {
        "sync" => Some(
            session
                .host
                .sync(&wit_store::SyncRequest {
                    max_files: step.max_files,
                    force: step.force,
                    acknowledge_rebuild: step.acknowledge_rebuild.unwrap_or(true),
                })
                .map(|r| json::sync_report(&r)),
        ),
        "status" => Some(session.host.status().map(|r| json::status_report(&r))),
        "search" => {
            let request = wit_recall::SearchRequest {
                query: step.query.clone().context("search needs `query`")?,
                max_results: step.max_results,
                min_score: step.min_score,
                context: step_context(session, step)?,
            };
            // `repeat`: the same search N times (recall signals); the last
            // answer is checked.
            for _ in 1..step.repeat.unwrap_or(1) {
                session.host.search(&request).map_err(|e| anyhow!("{e}"))?;
            }
            Some(
                session
                    .host
                    .search(&request)
                    .map(|r| json::search_result(&r)),
            )
        }
        "get" => {
            let request = wit_recall::GetRequest {
                path: step.path.clone().context("get needs `path`")?,
                start_line: step.start_line,
                end_line: step.end_line,
                context: Some(step_context(session, step)?),
            };
            Some(session.host.get(&request).map(|r| json::get_result(&r)))
        }
        "bootstrap" => {
            let request = wit_bootstrap::BootstrapRequest {
                purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
                context: session.context(),
                known_digest: step.known_digest.clone(),
            };
            Some(
                session
                    .host
                    .bootstrap(&request)
                    .map(|r| json::bootstrap_result(&r)),
            )
        }
        "note" => {
            let request = wit_write::NoteRequest {
                text: step.text.clone().context("note needs `text`")?,
                origin: parse_origin(step.origin.as_deref().context("note needs `origin`")?)?,
                importance: step.importance,
                triggers: step.triggers.clone(),
                supersedes_key: step.supersedes_key.clone(),
                context: step_context(session, step)?,
            };
            Some(session.host.note(&request).map(|r| json::write_report(&r)))
        }
        "flush" => {
            let request = wit_write::FlushRequest {
                session_id: step
                    .session_id
                    .clone()
                    .context("flush needs `session_id`")?,
                state: wit_write::SessionState {
                    token_estimate: step
                        .token_estimate
                        .context("flush needs `token_estimate`")?,
                    context_window: step.context_window.unwrap_or(200_000),
                    reserve_tokens: step.reserve_tokens.unwrap_or(20_000),
                    compaction_cycle: step.compaction_cycle.unwrap_or(1),
                },
                soft_threshold_tokens: step.soft_threshold_tokens,
                transcript: transcript_of(step)?,
                timeout_ms: step.timeout_ms,
                context: step_context(session, step)?,
            };
            Some(session.host.flush(&request).map(|r| json::flush_report(&r)))
        }
        "ingest" => {
            let transcript = transcript_of(step)?;
            let request = wit_write::IngestRequest {
                session_id: step
                    .session_id
                    .clone()
                    .context("ingest needs `session_id`")?,
                transcript,
                context: step_context(session, step)?,
            };
            Some(
                session
                    .host
                    .ingest(&request)
                    .map(|r| json::ingest_report(&r)),
            )
        }
        "forget" => {
            let request = wit_write::ForgetRequest {
                session_id: step
                    .session_id
                    .clone()
                    .context("forget needs `session_id`")?,
                context: step_context(session, step)?,
            };
            Some(
                session
                    .host
                    .forget(&request)
                    .map(|r| json::forget_report(&r)),
            )
        }
        "inject" => {
            let request = wit_inject::InjectRequest {
                message: step.message.clone().context("inject needs `message`")?,
                mode: parse_mode(step.mode.as_deref().unwrap_or("escalate"))?,
                context: step_context(session, step)?,
            };
            Some(
                session
                    .host
                    .inject(&request)
                    .map(|r| json::inject_result(&r)),
            )
        }
        "intent_create" => {
            let spec = step
                .intent
                .as_ref()
                .context("intent_create needs `intent`")?;
            let spec = wit_intents::IntentSpec {
                text: spec.text.clone(),
                triggers: spec.triggers.clone(),
                due_at_ms: spec.due_at.as_deref().map(parse_now).transpose()?,
                channel: spec.channel.clone(),
                sender: spec.sender.clone(),
                expires_in_ms: spec.expires_in_ms,
                fire_budget: spec.fire_budget,
                cooldown_ms: spec.cooldown_ms,
                semantic: spec.semantic,
                origin: parse_origin(step.origin.as_deref().unwrap_or("sender-message"))?,
            };
            let context = step_context(session, step)?;
            Some(
                session
                    .host
                    .intent_create(&spec, &context)
                    .map(|r| json::create_result(&r)),
            )
        }
        "intent_list" => {
            let context = step_context(session, step)?;
            Some(
                session
                    .host
                    .intent_list(&context)
                    .map(|l| json::intents(&l)),
            )
        }
        "intent_cancel" => {
            let context = step_context(session, step)?;
            let id = step.id.context("intent_cancel needs `id`")?;
            Some(
                session
                    .host
                    .intent_cancel(id, &context)
                    .map(|i| json::intent(&i)),
            )
        }
        "due" => {
            let at = match &step.at {
                Some(at) => parse_now(at)?,
                None => session.now_ms,
            };
            Some(session.host.due(at).map(|l| json::intents(&l)))
        }
        "escalate" => {
            let request = wit_inject::EscalateRequest {
                message: step.message.clone().context("escalate needs `message`")?,
                context: step_context(session, step)?,
                timeout_ms: step.timeout_ms,
                remember_across_conversations: step.remember_across_conversations.unwrap_or(false),
            };
            Some(
                session
                    .host
                    .escalate(&request)
                    .map(|r| json::escalation(&r)),
            )
        }
        "dream" => {
            let request = dream_request(session, step)?;
            Some(session.host.dream(&request).map(|r| json::dream_report(&r)))
        }
        "report" => {
            let dream = dream_request(session, step)?;
            let request = wit_report::ReportRequest {
                now_ms: dream.context.now_ms,
                gates: dream.gates,
                max_sweeps: REPORT_ROWS,
                max_candidates: REPORT_ROWS,
                max_promoted: REPORT_ROWS,
                max_recalled: REPORT_ROWS,
            };
            Some(
                session
                    .host
                    .report(&request)
                    .map(|r| json::workspace_report(&r)),
            )
        }
        "dream_rollback" => {
            let context = step_context(session, step)?;
            Some(
                session
                    .host
                    .dream_rollback(&context)
                    .map(|r| json::rollback_report(&r)),
            )
        }
        "user_show" => Some(session.host.user_show().map(|m| json::user_model(&m))),
        "user_set" => {
            let expected = match step.expected_hash.as_deref() {
                Some("$current") | None => {
                    session.host.user_show().map_err(|e| anyhow!("{e}"))?.hash
                }
                Some(hash) => hash.to_string(),
            };
            let request = wit_user::SetRequest {
                directive: step
                    .directive
                    .clone()
                    .context("user_set needs `directive`")?,
                replaces_line: step.replaces_line,
                expected_hash: expected,
                context: step_context(session, step)?,
            };
            Some(
                session
                    .host
                    .user_set(&request)
                    .map(|m| json::user_model(&m)),
            )
        }
        "prepare_repo" => {
            // The host's side: resolve the repository's project key from its
            // git files and make it the session's most recent project.
            let dir = workspace.join(step.path.as_deref().context("prepare_repo needs `path`")?);
            let key = crate::project::project_key(&dir)?;
            if let Some(key) = &key {
                session.projects.prepare(key);
            }
            Some(Ok(
                serde_json::json!({"key": key, "active": session.projects.keys()}),
            ))
        }
        "model_calls" => Some(Ok(serde_json::json!({"count": session.host.model_calls()}))),
        "search_framing" => {
            // Runner-side check of every hit's framing: one block, opened and
            // closed once (also after removing invisible characters and
            // mapping look-alike brackets), and text with `marker` never
            // presented as trusted.
            let request = wit_recall::SearchRequest {
                query: step.query.clone().context("search_framing needs `query`")?,
                max_results: step.max_results.or(Some(20)),
                min_score: Some(0.0),
                context: step_context(session, step)?,
            };
            let result = session.host.search(&request).map_err(|e| anyhow!("{e}"))?;
            for hit in &result.hits {
                check_framing(&hit.framed, &hit.citation)?;
                if let Some(marker) = &step.marker {
                    let shown_trusted = hit
                        .framed
                        .lines()
                        .next()
                        .is_some_and(|l| l.contains("trust=\"trusted\""));
                    if shown_trusted && hit.snippet.to_lowercase().contains(&marker.to_lowercase())
                    {
                        bail!(
                            "{} holds {marker:?} and is framed as trusted:\n{}",
                            hit.citation,
                            hit.framed
                        );
                    }
                }
            }
            Some(Ok(serde_json::json!({"hits": result.hits.len()})))
        }
        "save_files" | "save_state" => {
            *saved = Some(snapshot(workspace, step.op == "save_state")?);
            None
        }
        "files_unchanged" | "state_unchanged" => {
            let (save, with_memory) = if step.op == "state_unchanged" {
                ("save_state", true)
            } else {
                ("save_files", false)
            };
            let before = saved
                .as_ref()
                .with_context(|| format!("{} needs an earlier {save}", step.op))?;
            let after = snapshot(workspace, with_memory)?;
            if *before != after {
                bail!(
                    "files changed since {save}: {:?}",
                    changed_paths(before, &after)
                );
            }
            None
        }
        "read_file" => {
            // The file as a person would see it (runner side, not a call).
            let path = workspace.join(step.path.as_deref().context("read_file needs `path`")?);
            let text = std::fs::read(&path)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            Some(Ok(
                serde_json::json!({"exists": text.is_some(), "text": text.unwrap_or_default()}),
            ))
        }
        "list_files" => {
            // Workspace-relative paths of the files whose path starts with
            // `path` (runner side, not a call), sorted.
            let prefix = step.path.as_deref().context("list_files needs `path`")?;
            let (dir, start) = match prefix.rfind('/') {
                Some(i) => (&prefix[..i], &prefix[i + 1..]),
                None => ("", prefix),
            };
            let mut files: Vec<String> = std::fs::read_dir(workspace.join(dir))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(start))
                .map(|name| {
                    if dir.is_empty() {
                        name
                    } else {
                        format!("{dir}/{name}")
                    }
                })
                .collect();
            files.sort();
            Some(Ok(serde_json::json!({ "files": files })))
        }
        "restart" => {
            session.host.reset();
            None
        }
        "write" | "append" => {
            let path = workspace.join(step.path.as_deref().context("needs `path`")?);
            let mut bytes = match (&step.content, &step.bytes_hex) {
                (Some(text), None) => text.as_bytes().to_vec(),
                (None, Some(hex)) => decode_hex(hex)?,
                _ => bail!("give exactly one of `content` and `bytes_hex`"),
            };
            if let Some(n) = step.repeat {
                bytes = bytes.repeat(n);
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if step.op == "append" {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&path)?
                    .write_all(&bytes)?;
            } else {
                std::fs::write(&path, bytes)?;
            }
            None
        }
        "delete" => {
            std::fs::remove_file(workspace.join(step.path.as_deref().context("needs `path`")?))?;
            None
        }
        "rename" => {
            // A person renaming or moving a file (`path` to `target`).
            std::fs::rename(
                workspace.join(step.path.as_deref().context("needs `path`")?),
                workspace.join(step.target.as_deref().context("needs `target`")?),
            )?;
            None
        }
        "symlink" => {
            let link = workspace.join(step.path.as_deref().context("needs `path`")?);
            std::os::unix::fs::symlink(step.target.as_deref().context("needs `target`")?, link)?;
            None
        }
        "mkfifo" => {
            let path = workspace.join(step.path.as_deref().context("needs `path`")?);
            let status = std::process::Command::new("mkfifo").arg(&path).status()?;
            if !status.success() {
                bail!("mkfifo failed");
            }
            None
        }
        "corrupt_index" => {
            let index = workspace.join(".memory/index.sqlite");
            let len = std::fs::metadata(&index)
                .map(|m| m.len())
                .unwrap_or(0)
                .max(4096);
            session.host.reset();
            std::fs::write(&index, vec![0x5a; len as usize])?;
            None
        }
        "delete_index" => {
            session.host.reset();
            let _ = std::fs::remove_file(workspace.join(".memory/index.sqlite"));
            let _ = std::fs::remove_file(workspace.join(".memory/index.sqlite-journal"));
            None
        }
        other => bail!("unknown op {other:?}"),
    };
    if let Some(before) = before {
        if is_write_call(&step.op) {
            check_append_only(workspace, &before)?;
        } else {
            let after = snapshot(workspace, false)?;
            if before != after {
                bail!(
                    "the call changed memory files on disk: {:?}",
                    changed_paths(&before, &after)
                );
            }
        }
    }
    let Some(outcome) = outcome else {
        if step.expect.is_some() || step.expect_error.is_some() {
            bail!("op {} has no result to check", step.op);
        }
        return Ok(());
    };
    match (outcome, &step.expect_error) {
        (Ok(value), None) => {
            if let Some(expected) = &step.expect {
                check(expected, &value, "$").map_err(|e| anyhow!("{e}\nfull result: {value:#}"))?;
            }
            Ok(())
        }
        (Ok(value), Some(expected)) => {
            bail!("expected the error {expected}, got the result {value:#}")
        }
        (Err(CallError::Memory(error)), Some(expected)) => {
            let value = json::memory_error(&error);
            check(expected, &value, "$error").map_err(|e| anyhow!("{e}\nactual error: {value}"))
        }
        (Err(error), _) => bail!("the call failed: {error}"),
    }
}

/// One `<memory-recall>` block: it starts and ends the text, and no other
/// opening or closing tag is in it, however disguised.
fn check_framing(framed: &str, citation: &str) -> anyhow::Result<()> {
    let plain: String = framed
        .chars()
        .filter(|c| !matches!(*c as u32, 0x200B..=0x200F | 0x2060..=0x2064 | 0xFEFF))
        .map(|c| match c as u32 {
            0xFF1C | 0x2039 | 0x2329 | 0x27E8 | 0x3008 | 0xFE64 | 0x02C2 => '<',
            0xFF1E | 0x203A | 0x232A | 0x27E9 | 0x3009 | 0xFE65 | 0x02C3 => '>',
            0x2010..=0x2015 | 0x2212 | 0xFE63 | 0xFF0D => '-',
            _ => c,
        })
        .collect::<String>()
        .to_lowercase();
    let opens = plain.matches("<memory-").count();
    let closes = plain.matches("</memory-").count();
    if !(plain.starts_with("<memory-recall ") && plain.ends_with("</memory-recall>"))
        || opens != 1
        || closes != 1
    {
        bail!("the framing of {citation} is not one intact block ({opens} openings, {closes} closings):\n{framed}");
    }
    Ok(())
}

fn is_component_call(op: &str) -> bool {
    matches!(
        op,
        "sync" | "status" | "search" | "get" | "bootstrap" | "inject" | "report"
    ) || is_write_call(op)
}

/// Calls that may write Markdown, and only by appending. (`forget` removes
/// lines; its scenarios check the files themselves.)
fn is_write_call(op: &str) -> bool {
    matches!(op, "note" | "ingest" | "flush" | "intent_create")
}

/// The length recorded for a link or FIFO in a snapshot.
const SPECIAL_FILE: u64 = u64::MAX;
/// Rows of each list a `report` step asks for.
const REPORT_ROWS: u32 = 100;

/// Every file that existed before still starts with exactly its old bytes.
fn check_append_only(root: &Path, before: &BTreeMap<String, (String, u64)>) -> anyhow::Result<()> {
    for (path, (hash, len)) in before.iter().filter(|(_, (_, len))| *len != SPECIAL_FILE) {
        let bytes = std::fs::read(root.join(path))
            .with_context(|| format!("{path} disappeared during a write"))?;
        if (bytes.len() as u64) < *len || hex(&Sha256::digest(&bytes[..*len as usize])) != *hash {
            bail!("{path} was rewritten, not appended to");
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha-256 and length of every file outside `.memory/` (with
/// `with_memory`, inside it too: the databases, but no host's lock file), by
/// relative path.
fn snapshot(root: &Path, with_memory: bool) -> anyhow::Result<BTreeMap<String, (String, u64)>> {
    let mut out = BTreeMap::new();
    fn visit(
        root: &Path,
        dir: &Path,
        with_memory: bool,
        out: &mut BTreeMap<String, (String, u64)>,
    ) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let relative = path.strip_prefix(root)?.to_string_lossy().to_string();
            if (relative == ".memory" && !with_memory)
                || (relative.starts_with(".memory/") && relative.ends_with(".lock"))
            {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                visit(root, &path, with_memory, out)?;
            } else if kind.is_file() {
                let bytes = std::fs::read(&path)?;
                out.insert(relative, (hex(&Sha256::digest(&bytes)), bytes.len() as u64));
            } else {
                // Links and FIFOs are compared by kind only, never opened.
                out.insert(relative, (format!("{kind:?}"), SPECIAL_FILE));
            }
        }
        Ok(())
    }
    visit(root, root, with_memory, &mut out)?;
    Ok(out)
}

fn changed_paths(
    a: &BTreeMap<String, (String, u64)>,
    b: &BTreeMap<String, (String, u64)>,
) -> Vec<String> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn decode_hex(hex: &str) -> anyhow::Result<Vec<u8>> {
    let clean: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
    if !clean.len().is_multiple_of(2) {
        bail!("odd number of hex digits");
    }
    (0..clean.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).map_err(|e| anyhow!("bad hex: {e}")))
        .collect()
}

/// Checks that `actual` satisfies `expected`: objects match on the keys they
/// name; arrays element by element with equal length; scalars by equality
/// (numbers within 1e-6); and the operators `$len`, `$min_len`, `$max_len`,
/// `$contains`, `$not_contains`, `$substr`, `$not_substr`, `$gt`, `$gte`,
/// `$lt`, `$lte`, `$absent_or_null`.
pub fn check(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    if let Value::Object(map) = expected {
        if map.keys().any(|k| k.starts_with('$')) {
            for (op, arg) in map {
                check_operator(op, arg, actual, at)?;
            }
            return Ok(());
        }
        let Value::Object(actual_map) = actual else {
            return Err(format!("{at}: expected an object, got {actual}"));
        };
        for (key, value) in map {
            let child = actual_map.get(key).unwrap_or(&Value::Null);
            check(value, child, &format!("{at}.{key}"))?;
        }
        return Ok(());
    }
    match (expected, actual) {
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{at}: expected {} elements, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                check(x, y, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (
                e.as_f64().unwrap_or(f64::NAN),
                a.as_f64().unwrap_or(f64::NAN),
            );
            if (e - a).abs() <= 1e-6 {
                Ok(())
            } else {
                Err(format!("{at}: expected {e}, got {a}"))
            }
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{at}: expected {expected}, got {actual}")),
    }
}

fn check_operator(op: &str, arg: &Value, actual: &Value, at: &str) -> Result<(), String> {
    let number = |v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("{at}: expected a number, got {v}"))
    };
    let array = |v: &Value| {
        v.as_array()
            .cloned()
            .ok_or_else(|| format!("{at}: expected an array, got {v}"))
    };
    let fail = |what: String| Err(format!("{at}: {what}"));
    match op {
        "$len" | "$min_len" | "$max_len" => {
            let n = match actual {
                Value::String(s) => s.chars().count(),
                other => array(other)?.len(),
            } as f64;
            let want = number(arg)?;
            let ok = match op {
                "$len" => n == want,
                "$min_len" => n >= want,
                _ => n <= want,
            };
            if ok {
                Ok(())
            } else {
                fail(format!("{op} {want}, got length {n}: {actual}"))
            }
        }
        "$contains" | "$not_contains" => {
            let items = array(actual)?;
            for wanted in array(arg)? {
                let present = items.iter().any(|item| check(&wanted, item, at).is_ok());
                if present != (op == "$contains") {
                    return fail(format!("{op} {wanted} failed in {actual}"));
                }
            }
            Ok(())
        }
        "$substr" | "$not_substr" => {
            let needle = arg.as_str().ok_or("$substr needs a string")?;
            let hay = actual
                .as_str()
                .ok_or_else(|| format!("{at}: expected a string, got {actual}"))?;
            if hay.contains(needle) == (op == "$substr") {
                Ok(())
            } else {
                fail(format!("{op} {needle:?} failed in {hay:?}"))
            }
        }
        "$gt" | "$gte" | "$lt" | "$lte" => {
            let (a, b) = (number(actual)?, number(arg)?);
            let ok = match op {
                "$gt" => a > b,
                "$gte" => a >= b,
                "$lt" => a < b,
                _ => a <= b,
            };
            if ok {
                Ok(())
            } else {
                fail(format!("expected {op} {b}, got {a}"))
            }
        }
        "$absent_or_null" => {
            if actual.is_null() {
                Ok(())
            } else {
                fail(format!("expected null, got {actual}"))
            }
        }
        other => fail(format!("unknown operator {other}")),
    }
}

/// Runs every scenario under `root` (optionally filtered) and prints one line
/// per scenario; returns (passed, failed).
pub fn run_all(
    root: &Path,
    component: &Path,
    filter: Option<&str>,
) -> anyhow::Result<(usize, usize)> {
    let mut passed = 0;
    let mut failed = 0;
    for dir in discover(root)? {
        let name = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        match run_scenario(&dir, component) {
            Ok(()) => {
                passed += 1;
                println!("ok     {name}");
            }
            Err(error) => {
                failed += 1;
                println!("FAILED {name}\n{}", indent(&format!("{error:#}")));
            }
        }
    }
    Ok((passed, failed))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_matching_and_operators() {
        let actual = json!({"hits": [{"path": "a", "score": 0.5}, {"path": "b", "score": 0.2}], "mode": "fts-only"});
        assert!(check(&json!({"mode": "fts-only"}), &actual, "$").is_ok());
        assert!(check(&json!({"hits": {"$len": 2}}), &actual, "$").is_ok());
        assert!(check(
            &json!({"hits": {"$contains": [{"path": "b"}]}}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(
            &json!({"hits": {"$not_contains": [{"path": "c"}]}}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(
            &json!({"hits": [{"path": "a"}, {"score": {"$lt": 0.3}}]}),
            &actual,
            "$"
        )
        .is_ok());
        assert!(check(&json!({"hits": [{"path": "a"}]}), &actual, "$").is_err());
        assert!(check(&json!({"mode": "hybrid"}), &actual, "$").is_err());
        assert!(check(&json!({"missing": {"$absent_or_null": true}}), &actual, "$").is_ok());
        assert!(check(&json!({"mode": {"$substr": "fts"}}), &actual, "$").is_ok());
    }
}
