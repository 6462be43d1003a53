//! `index` (bring the index up to date with the memory files) and `status`
//! (what the index holds, and the host's health record).

use super::global::Global;
use super::print;
use super::workspace::{open, open_as};
use anyhow::Context;
use clap::Args;
use memory_harness::host::wit_store;
use memory_harness::json;
use memory_harness::session::pacing::Progress;
use memory_harness::session::{Purpose, Vectors};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// `index`'s flags.
#[derive(Args)]
pub struct IndexArgs {
    /// Re-read every file even if unchanged.
    #[arg(long)]
    force: bool,
}

pub fn index(g: &Global, IndexArgs { force }: IndexArgs) -> anyhow::Result<i32> {
    let mut session = open(g)?;
    let mut shown = Shown::new(std::io::stderr().is_terminal());
    let report = session.sync_all(force, true, Vectors::All, |r, elapsed| {
        shown.update(&progress_of(r, elapsed));
    })?;
    shown.finish();
    print::sync(&report, g.json);
    Ok(0)
}

/// `init`: the workspace made (when missing), with `memory/` and an index
/// of what it holds.
pub fn init(g: &Global) -> anyhow::Result<i32> {
    let resolved = g.resolved(None)?;
    if resolved.workspace.is_dir() {
        memory_harness::notes::note(format!(
            "the workspace {} exists already; indexing it",
            resolved.workspace.display()
        ));
    }
    super::workspace::ensure_workspace(&resolved.workspace, false)?;
    let daily = resolved.workspace.join("memory");
    std::fs::create_dir_all(&daily)
        .with_context(|| format!("cannot create {}", daily.display()))?;
    let mut session = open(g)?;
    let report = session.sync_all(false, true, Vectors::All, |_, _| {})?;
    print::sync(&report, g.json);
    Ok(0)
}

pub fn status(g: &Global) -> anyhow::Result<i32> {
    let mut session = open_as(g, Purpose::Read)?;
    let status = session.host.status()?;
    let health = memory_harness::health::load(session.host.workspace());
    if g.json {
        let mut out = json::status_report(&status);
        out["host_health"] = serde_json::to_value(health.unwrap_or_default())?;
        print::notes(&session);
        println!("{}", print::with_notes(out, &session));
    } else {
        print::notes(&session);
        print::status(&status);
        if let Some(health) = &health {
            for line in memory_harness::health::describe(health) {
                println!("{line}");
            }
        }
    }
    Ok(0)
}

fn progress_of(r: &wit_store::SyncReport, elapsed: Duration) -> Progress {
    Progress {
        files_indexed: r.files_indexed,
        files_pending: r.files_pending,
        embedded: r.embeddings_computed,
        cached: r.embeddings_cached,
        vectors_pending: r.vectors_pending,
        elapsed,
    }
}

/// Progress on standard error: a bar redrawn in place on a terminal; else
/// (a log, CI) a line every `LINE_EVERY`, and only when the sync is long
/// enough to need one.
struct Shown {
    terminal: bool,
    drawn: bool,
    last_line: Instant,
}

const LINE_EVERY: Duration = Duration::from_secs(5);

impl Shown {
    fn new(terminal: bool) -> Shown {
        Shown {
            terminal,
            drawn: false,
            last_line: Instant::now(),
        }
    }

    fn update(&mut self, p: &Progress) {
        if memory_harness::notes::quiet() {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let width = 30usize;
            let filled = ((p.fraction() * width as f64) as usize).min(width);
            let _ = write!(
                err,
                "\rindexing [{}{}] {}\x1b[K",
                "#".repeat(filled),
                " ".repeat(width - filled),
                p.describe()
            );
            let _ = err.flush();
            self.drawn = true;
        } else if self.last_line.elapsed() >= LINE_EVERY {
            let _ = writeln!(err, "indexing: {}", p.describe());
            self.last_line = Instant::now();
        }
    }

    fn finish(&self) {
        if self.drawn {
            eprintln!();
        }
    }
}
