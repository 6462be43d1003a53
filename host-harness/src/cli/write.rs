//! Writing memory: `note` (an observation in today's daily note), `flush`
//! (the pre-compaction memory flush), `ingest` (a finished session's
//! transcript as evidence) and `forget` (remove what a session wrote). A
//! flush or ingest that finds the workspace busy is spooled (`super::spool`).

use super::exit::UsageError;
use super::global::Global;
use super::spool::open_or_spool;
use super::workspace::open;
use anyhow::{bail, Context};
use clap::Args;
use memory_harness::json;
use memory_harness::names::{parse_origin, parse_session_kind};
use memory_harness::session::Note;
use memory_harness::settings::flag_help;
use memory_harness::spool::{FlushCall, IngestCall, Spooled};
use std::path::{Path, PathBuf};

/// `note`'s flags.
#[derive(Args)]
pub struct NoteArgs {
    /// The observation, one line of Markdown.
    text: String,
    /// Who it came from: owner, agent, untrusted or system.
    #[arg(long, value_parser = ["owner", "agent", "untrusted", "system"])]
    source: Option<String>,
    /// Or, precisely, where it came from.
    #[arg(long, value_parser = [
        "sender-message", "agent-derived", "web-page", "tool-output", "participant",
        "scaffolding", "unknown-external",
    ])]
    origin: Option<String>,
    /// The kind of session that wrote it.
    #[arg(long, default_value = "interactive", value_parser = ["interactive", "cron", "heartbeat", "subagent"])]
    session_kind: String,
    /// The session the note belongs to (for `forget`).
    #[arg(long)]
    session: Option<String>,
    /// How much it matters, 1..10 (5 is neutral); ranks it and weighs in
    /// dreaming's gate.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=10))]
    importance: Option<u8>,
    /// Trigger phrases, comma-separated.
    #[arg(long)]
    trigger: Option<String>,
    /// Lineage key: a newer note with the same key replaces this one.
    #[arg(long)]
    supersedes: Option<String>,
}

/// `flush`'s flags.
#[derive(Args)]
pub struct FlushArgs {
    /// The unwritten context, as a JSONL transcript.
    #[arg(long)]
    transcript: PathBuf,
    /// The session flushed (what it writes is attributed to it).
    #[arg(long)]
    session: String,
    /// The session's token estimate (default: due now).
    #[arg(long)]
    tokens: Option<u32>,
    /// The model's context window, in tokens.
    #[arg(long, default_value_t = 200_000)]
    context_window: u32,
    /// Tokens kept free below the window (compaction comes at window −
    /// reserve).
    #[arg(long, default_value_t = 20_000)]
    reserve: u32,
    /// The compaction cycle (one flush per cycle).
    #[arg(long, default_value_t = 1)]
    cycle: u32,
    #[arg(long, help = flag_help(
        "How close to the compaction point a flush is due, in tokens \
         (agents.defaults.compaction.memoryFlush.softThresholdTokens)",
        "flush.softThresholdTokens",
    ))]
    soft_threshold: Option<u32>,
}

/// `ingest`'s flags.
#[derive(Args)]
pub struct IngestArgs {
    /// The transcript: one JSON message per line (see the README).
    #[arg(long)]
    transcript: PathBuf,
    /// The session's id (ingested once; `forget` removes it by this).
    #[arg(long)]
    session: String,
    /// The kind of session it was.
    #[arg(long, default_value = "interactive", value_parser = ["interactive", "cron", "heartbeat", "subagent"])]
    session_kind: String,
    /// The session's sender was not the owner (assistant text then counts
    /// as untrusted).
    #[arg(long)]
    not_owner: bool,
}

/// `forget`'s flags.
#[derive(Args)]
pub struct ForgetArgs {
    /// The session whose writings go (and which is never ingested again).
    #[arg(long)]
    session: String,
}

pub fn note(g: &Global, args: NoteArgs) -> anyhow::Result<i32> {
    // Checked before the workspace is opened (or created).
    let origin = parse_origin(note_origin(args.source.as_deref(), args.origin.as_deref())?)?;
    let mut session = open(g)?;
    let note = Note {
        session_kind: parse_session_kind(&args.session_kind)?,
        session_id: args.session,
        importance: args.importance,
        triggers: args
            .trigger
            .map(|t| t.split([',', ';']).map(|p| p.trim().to_string()).collect())
            .unwrap_or_default(),
        supersedes_key: args.supersedes,
        ..Note::new(args.text, origin)
    };
    let report = session.note(note)?;
    if g.json {
        println!("{}", json::write_report(&report));
    } else if report.lines.is_empty() {
        println!("{}: already there, nothing written", report.path);
    } else {
        println!(
            "{}#L{}  [{}/{}]",
            report.path,
            report.lines[0],
            json::source_class(report.source_class),
            json::session_kind(report.session_kind)
        );
    }
    Ok(0)
}

/// The origin a note names: `--source` is shorthand for the origin of a
/// note typed at this terminal (whose sender is the owner); `--origin`
/// names it exactly.
fn note_origin<'a>(source: Option<&str>, origin: Option<&'a str>) -> anyhow::Result<&'a str> {
    Ok(match (source, origin) {
        (Some(_), Some(_)) => {
            return Err(UsageError {
                argument: "--source".into(),
                message: "give --source or --origin, not both".into(),
            }
            .into())
        }
        (None, None) => return Err(UsageError {
            argument: "--source".into(),
            message:
                "say where the note came from: --source owner|agent|untrusted|system (or --origin)"
                    .into(),
        }
        .into()),
        (Some("owner"), None) => "sender-message",
        (Some("agent"), None) => "agent-derived",
        (Some("untrusted"), None) => "unknown-external",
        (Some("system"), None) => "scaffolding",
        (Some(other), None) => {
            bail!("unknown --source {other:?}; use owner, agent, untrusted or system")
        }
        (None, Some(origin)) => origin,
    })
}

pub fn flush(g: &Global, args: FlushArgs) -> anyhow::Result<i32> {
    let (text, unreadable) = read_transcript(&args.transcript)?;
    for problem in &unreadable {
        memory_harness::notes::note(format!("transcript {problem}"));
    }
    let call = Spooled::Flush(FlushCall {
        session: args.session,
        transcript: text,
        now_ms: 0,
        tokens: args.tokens,
        context_window: args.context_window,
        reserve: args.reserve,
        cycle: args.cycle,
        soft_threshold: args.soft_threshold,
    });
    let (mut session, Spooled::Flush(call)) = (match open_or_spool(g, call)? {
        Ok(opened) => opened,
        Err(code) => return Ok(code),
    }) else {
        unreachable!("a flush")
    };
    let report = session.flush(&call)?;
    if g.json {
        println!("{}", json::flush_report(&report));
    } else {
        println!("{}", report.reason);
        if let Some(written) = &report.written {
            println!(
                "{}: lines {:?} [{}]",
                written.path,
                written.lines,
                json::source_class(written.source_class)
            );
        }
        if let Some(error) = &report.model_error {
            println!("model: {error}");
        }
    }
    Ok(0)
}

pub fn ingest(g: &Global, args: IngestArgs) -> anyhow::Result<i32> {
    let (text, unreadable) = read_transcript(&args.transcript)?;
    parse_session_kind(&args.session_kind)?;
    let call = Spooled::Ingest(IngestCall {
        session: args.session,
        transcript: text,
        now_ms: 0,
        session_kind: args.session_kind,
        not_owner: args.not_owner,
    });
    let (mut session, Spooled::Ingest(call)) = (match open_or_spool(g, call)? {
        Ok(opened) => opened,
        Err(code) => return Ok(code),
    }) else {
        unreachable!("an ingest")
    };
    let mut report = session.ingest(&call)?;
    report.problems = memory_harness::transcript::merge_problems(
        std::mem::take(&mut report.problems),
        unreadable,
    );
    if g.json {
        println!("{}", json::ingest_report(&report));
        return Ok(0);
    }
    match (&report.path, &report.skipped) {
        (Some(path), _) => println!(
            "{path}: {} of {} messages written ({} already ingested, {} injected blocks stripped, {} secrets redacted)",
            report.messages_written,
            report.messages_read,
            report.messages_already_ingested,
            report.injected_blocks_stripped,
            report.secrets_redacted
        ),
        (None, Some(why)) => println!("nothing written: {why}"),
        (None, None) => println!("nothing written"),
    }
    for problem in &report.problems {
        println!("  {problem}");
    }
    Ok(0)
}

pub fn forget(g: &Global, ForgetArgs { session }: ForgetArgs) -> anyhow::Result<i32> {
    let mut state = open(g)?;
    let report = state.forget(&session)?;
    if g.json {
        println!("{}", json::forget_report(&report));
    } else {
        println!(
            "session {session} forgotten: {} entries removed from {} files; it will never be ingested again",
            report.entries_removed,
            report.files_changed.len()
        );
    }
    Ok(0)
}

/// A transcript file, line by line: a line that is not UTF-8 is left out
/// (as a blank line, so the others keep their numbers) and returned as a
/// problem; every other line is passed on.
fn read_transcript(path: &Path) -> anyhow::Result<(String, Vec<String>)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the transcript {}", path.display()))?;
    Ok(memory_harness::transcript::decode(&bytes))
}
