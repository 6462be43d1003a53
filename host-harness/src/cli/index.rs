//! `index` (bring the index up to date with the memory files) and `status`
//! (what the index holds, and the host's health record).

use super::global::Global;
use super::print;
use super::workspace::{open, open_as};
use clap::Args;
use memory_harness::host::wit_store;
use memory_harness::json;
use memory_harness::session::Purpose;
use std::io::{IsTerminal, Write};

/// `index`'s flags.
#[derive(Args)]
pub struct IndexArgs {
    /// Re-read every file even if unchanged.
    #[arg(long)]
    force: bool,
}

pub fn index(g: &Global, IndexArgs { force }: IndexArgs) -> anyhow::Result<i32> {
    let mut session = open(g)?;
    let progress = !g.json && std::io::stderr().is_terminal();
    let report = session.sync_all(force, true, |r| {
        if progress {
            draw_progress(r);
        }
    })?;
    if progress {
        eprintln!();
    }
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

/// The progress bar on a terminal: files indexed of those to index.
fn draw_progress(r: &wit_store::SyncReport) {
    let done = r.files_indexed;
    let total = r.files_indexed + r.files_pending;
    let width = 30usize;
    let filled = if total == 0 {
        width
    } else {
        (done as usize * width) / total as usize
    };
    eprint!(
        "\rindexing [{}{}] {done}/{total} files",
        "#".repeat(filled),
        " ".repeat(width - filled)
    );
    let _ = std::io::stderr().flush();
}
