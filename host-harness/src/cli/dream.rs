//! `dream`: a dreaming sweep (or its explanation), or `--rollback` of the
//! latest sweep that changed MEMORY.md.

use super::global::Global;
use super::print;
use super::workspace::open;
use clap::Args;
use memory_harness::json;
use memory_harness::names::parse_phase;

/// `dream`'s flags.
#[derive(Args)]
pub struct DreamArgs {
    /// Only this phase: light, rem or deep (repeat for several).
    #[arg(long)]
    phase: Vec<String>,
    /// Show every candidate with its signals and the gate it passed or
    /// failed; write nothing and call no model.
    #[arg(long)]
    explain: bool,
    /// Restore MEMORY.md to its state before the latest sweep that changed it.
    #[arg(long, conflicts_with_all = ["explain", "phase"])]
    rollback: bool,
}

pub fn dream(g: &Global, args: DreamArgs) -> anyhow::Result<i32> {
    let mut session = open(g)?;
    if args.rollback {
        let report = session.rollback()?;
        if g.json {
            println!("{}", json::rollback_report(&report));
        } else {
            println!(
                "MEMORY.md restored to its state before sweep {} ({} entries, was {})",
                report.sweep, report.entries_after, report.entries_before
            );
        }
        return Ok(0);
    }
    let phases = args
        .phase
        .iter()
        .map(|p| parse_phase(p))
        .collect::<anyhow::Result<_>>()?;
    let report = session.sweep(phases, args.explain)?;
    if g.json {
        println!("{}", json::dream_report(&report));
    } else {
        print::dream(&report, args.explain);
    }
    Ok(0)
}
