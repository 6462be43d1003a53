//! The command line: the top-level clap definitions and the dispatch. Each
//! command (or group of commands) has its module here, its flags beside its
//! code; the plumbing they share is `global` (the global flags and what they
//! resolve to), `workspace` (opening a session), `spool` (a busy workspace),
//! `exit` (exit codes and failures) and `print` (what several commands
//! print). Commands work through `memory_harness::session::Session`, which
//! builds every request; they only read the records the component returns.

mod bench;
mod conformance;
mod demo;
mod dream;
mod exit;
mod global;
mod index;
mod inject;
mod intent;
mod print;
mod read;
mod report;
mod search;
mod serve;
mod settings;
mod spool;
mod user;
mod workspace;
mod write;

use self::global::Global;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "memory-harness",
    version,
    about = "Host the memory-core component over an agent workspace."
)]
pub struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a workspace (the directory and memory/, when missing) and index
    /// it; reading commands refuse a workspace that does not exist.
    Init,
    /// Bring the index up to date with the memory files.
    Index(index::IndexArgs),
    /// Show what the index holds.
    Status,
    /// Ranked, cited recall (memory_search).
    Search(search::SearchArgs),
    /// Append an observation to today's daily note, with its provenance.
    Note(write::NoteArgs),
    /// The pre-compaction memory flush: when due, the model writes down what
    /// the transcript holds that would be lost, into today's daily note.
    Flush(write::FlushArgs),
    /// Take a finished session's transcript (JSONL) in as evidence.
    Ingest(write::IngestArgs),
    /// Remove everything a session wrote and never ingest it again.
    Forget(write::ForgetArgs),
    /// Lane 1 for an incoming message: the hidden blocks to prepend and the
    /// escalation decision (no model calls).
    Inject(inject::InjectArgs),
    /// Standing intents: create, list, cancel (as the owner at this terminal).
    Intent {
        #[command(subcommand)]
        action: intent::IntentAction,
    },
    /// The user model (USER.md): show it, or set a directive.
    User {
        #[command(subcommand)]
        action: user::UserAction,
    },
    /// Time-based intents due now (or --at a time), for a scheduler; each
    /// returned intent spends a fire.
    Due(intent::DueArgs),
    /// Read a memory file or lines of it (memory_get): PATH[:FROM[-TO]].
    Get(read::GetArgs),
    /// The curated context a session starts with.
    Bootstrap,
    /// Build a sample workspace, index it and show bootstrap, search and get.
    Demo(demo::DemoArgs),
    /// Time lane 1 (trigger injection and intents) per message on a
    /// deterministic synthetic workspace, sandboxed and natively; prints JSON.
    BenchLane1(bench::Lane1Args),
    /// Facts that change over a year of daily notes beside facts that never
    /// change: how often the latest value outranks the stale ones, and the
    /// recall of unchanged old facts, with the configured ranking and
    /// time-neutral; prints a summary and one JSON object.
    BenchSupersession(bench::SupersessionArgs),
    /// Run a dreaming sweep: light and REM write their blocks in DREAMS.md,
    /// deep promotes gated candidates into MEMORY.md.
    Dream(dream::DreamArgs),
    /// Write the review page: the last sweeps and their phases, staged
    /// candidates with every gate, promoted entries with their sources,
    /// refused rewrites and why, entries by class over time, budget use,
    /// standing intents and recall activity. Reads the workspace, changes
    /// nothing in it.
    Report(report::ReportArgs),
    /// Keep running: deliver time-based intents as they fall due (checked
    /// every --due-every seconds; printed, and handed to --deliver-command
    /// and --deliver-file), and sweep on a schedule (cron on the local wall
    /// clock of the time zone; default `[memory.dreaming] frequency`, else
    /// `0 3 * * *`). The workspace is opened only for each check and sweep.
    Serve(serve::ServeOptions),
    /// Benchmark the component on deterministic workspaces of NOTES daily
    /// notes of ~2 KB each plus a MEMORY.md of 1,000 annotated entries and
    /// 1,000 armed intents: indexing (cold, no-op, one file changed), search
    /// median/p95, lane-1 inject, bootstrap, a dreaming sweep, cold start,
    /// peak guest memory. Each size runs sandboxed and then natively (the
    /// same crate, no wasm) on its own copy; prints one JSON line per size
    /// with both sets of figures and the sandbox's cost per figure.
    Bench(bench::NotesArgs),
    /// The general benchmark on an existing corpus (e.g. the OpenClaw
    /// peer's /tmp/peer/ws/n1000), copied first so it stays untouched and
    /// the index starts cold; QUERIES is a text file, one query per line.
    BenchCorpus(bench::CorpusArgs),
    /// Time a dreaming sweep on a deterministic synthetic workspace:
    /// ENTRIES daily-note entries, RECALLED of them recalled (three searches
    /// each, two queries over two days); sandboxed and natively; prints JSON.
    BenchDream(bench::DreamArgs),
    /// A month in the life of an always-on agent, generated from a seed and
    /// replayed day by day through this CLI (ingest at session end, flush
    /// before compaction, searches, lane 1 on every message, the nightly
    /// sweep); reports promotion recall and precision, untrusted and
    /// cross-project injections, superseded directives and whether lane 1
    /// brings a repeated problem's fix. Prints a summary and one JSON object.
    BenchLife(bench::LifeArgs),
    /// The vector leg on real all-MiniLM-L6-v2 vectors of bench-life text:
    /// recall of the compact-code shortlist against exact search at several
    /// table sizes, time per query (sandboxed and native), load time and
    /// memory. Prints one JSON object.
    BenchVectors(bench::VectorsArgs),
    /// Write the poisoning suite's cases (tests/poisoning) as conformance
    /// scenario folders under OUT, for another host's conformance runner.
    PoisoningScenarios(conformance::PoisoningArgs),
    /// Run the conformance scenarios under DIR.
    Conformance(conformance::ConformanceArgs),
    /// The component's settings: each one's key, where the configuration
    /// sets it, its values, its default and what it does (--json: the
    /// component's `config.describe`; --markdown: as the README shows it).
    Settings(settings::SettingsArgs),
}

impl Command {
    /// The name of a command that works on one workspace (the health
    /// record's `command`); `None` for the others.
    fn label(&self) -> Option<&'static str> {
        Some(match self {
            Command::Init => "init",
            Command::Index(_) => "index",
            Command::Status => "status",
            Command::Search(_) => "search",
            Command::Intent { .. } => "intent",
            Command::User { .. } => "user",
            Command::Due(_) => "due",
            Command::Inject(_) => "inject",
            Command::Note(_) => "note",
            Command::Flush(_) => "flush",
            Command::Ingest(_) => "ingest",
            Command::Forget(_) => "forget",
            Command::Get(_) => "get",
            Command::Dream(_) => "dream",
            Command::Serve(_) => "serve",
            Command::Report(_) => "report",
            Command::Bootstrap => "bootstrap",
            _ => return None,
        })
    }
}

pub use exit::end_by_closed_pipe;

/// A command line clap refused (or `--help`/`--version`, which it prints):
/// with `--json`, a refusal is one JSON object like any other failure.
pub fn usage_error(error: clap::Error) -> i32 {
    let json = std::env::args_os().any(|a| a == "--json");
    if !json || !error.use_stderr() {
        error.exit();
    }
    // What clap says before its usage line (the possible values and its
    // tip included), on one line.
    let rendered = error.to_string();
    let message = rendered
        .lines()
        .take_while(|line| !line.starts_with("Usage:"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string();
    // The flag alone ("--taint", not "--taint <CLASS>").
    let argument = match error.get(clap::error::ContextKind::InvalidArg) {
        Some(clap::error::ContextValue::String(a)) => Some(a.clone()),
        Some(clap::error::ContextValue::Strings(a)) => a.first().cloned(),
        _ => None,
    }
    .map(|a| a.split([' ', '=']).next().unwrap_or_default().to_string());
    let failure = exit::Failure {
        kind: "usage".into(),
        code: exit::EXIT_USAGE,
        path: None,
        argument,
    };
    println!("{}", exit::failure_json(&failure, &message));
    exit::EXIT_USAGE
}

/// Runs the command and returns the process's exit code; a failure is
/// reported on stderr and recorded (see `exit::failed`).
pub fn run(mut cli: Cli) -> i32 {
    memory_harness::notes::set_level(if cli.global.quiet {
        -1
    } else {
        cli.global.verbose.min(i8::MAX as u8) as i8
    });
    cli.global.command_label = cli.command.label().map(str::to_string);
    if let Some(label) = &cli.global.command_label {
        memory_harness::host::set_lock_program(format!("memory-harness {label}"));
    }
    match dispatch(&cli.global, cli.command) {
        Ok(code) => code,
        Err(error) => exit::failed(&cli.global, &error),
    }
}

fn dispatch(g: &Global, command: Command) -> anyhow::Result<i32> {
    match command {
        Command::PoisoningScenarios(args) => conformance::poisoning_scenarios(args),
        Command::Conformance(args) => conformance::conformance(g, args),
        Command::Settings(args) => settings::settings(g, args),
        Command::Demo(args) => demo::demo(g, args),
        Command::BenchLife(args) => bench::life(g, args),
        Command::BenchSupersession(args) => bench::supersession(g, args),
        Command::BenchVectors(args) => bench::vectors(g, args),
        Command::BenchLane1(args) => bench::lane1(g, args),
        Command::Bench(args) => bench::notes(g, args),
        Command::BenchCorpus(args) => bench::corpus(g, args),
        Command::BenchDream(args) => bench::dream(g, args),
        Command::Init => index::init(g),
        Command::Index(args) => index::index(g, args),
        Command::Status => index::status(g),
        Command::Search(args) => search::search(g, args),
        Command::Intent { action } => intent::intent(g, action),
        Command::User { action } => user::user(g, action),
        Command::Due(args) => intent::due(g, args),
        Command::Inject(args) => inject::inject(g, args),
        Command::Note(args) => write::note(g, args),
        Command::Flush(args) => write::flush(g, args),
        Command::Ingest(args) => write::ingest(g, args),
        Command::Forget(args) => write::forget(g, args),
        Command::Get(args) => read::get(g, args),
        Command::Dream(args) => dream::dream(g, args),
        Command::Serve(options) => serve::serve(g, options),
        Command::Report(args) => report::report(g, args),
        Command::Bootstrap => read::bootstrap(g),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument of every command, with its command's path.
    fn arguments(command: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        for arg in command.get_arguments() {
            out.push((path.to_string(), arg.clone()));
        }
        for sub in command.get_subcommands() {
            arguments(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    fn all() -> Vec<(String, clap::Arg)> {
        let mut command = Cli::command();
        command.build();
        let mut out = Vec::new();
        arguments(&command, "memory-harness", &mut out);
        out
    }

    #[test]
    fn every_argument_has_help() {
        let missing: Vec<String> = all()
            .into_iter()
            .filter(|(_, a)| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|(path, a)| format!("{path} {}", a.get_id()))
            .collect();
        assert!(missing.is_empty(), "arguments without help: {missing:#?}");
    }

    #[test]
    fn global_options_stand_apart_from_a_command_s_own() {
        for (path, arg) in all() {
            if arg.is_global_set() {
                assert_eq!(
                    arg.get_help_heading(),
                    Some("Global options"),
                    "{path} {}",
                    arg.get_id()
                );
            } else if !matches!(arg.get_id().as_str(), "help" | "version") {
                assert_ne!(
                    arg.get_help_heading(),
                    Some("Global options"),
                    "{path} {}",
                    arg.get_id()
                );
            }
        }
    }
}
