//! `serve`: keep running, checking for due intents every `--due-every`
//! seconds and delivering them (`delivery`), and sweeping on a cron
//! schedule. Each check and each sweep opens the workspace and lets go of it
//! again, so the CLI can be used in between.

mod delivery;

use self::delivery::Delivery;
use super::global::Global;
use super::print;
use anyhow::{bail, Context};
use clap::Args;
use memory_harness::config::Resolved;
use memory_harness::json;
use memory_harness::session::Session;
use std::path::PathBuf;

/// `serve`'s flags.
#[derive(Args)]
pub struct ServeOptions {
    /// The schedule, e.g. "0 3 * * *" or "*/30 * * * *" (local time).
    #[arg(long)]
    cron: Option<String>,
    /// Stop after this many sweeps (default: run until stopped).
    #[arg(long)]
    max_sweeps: Option<u32>,
    /// Seconds between due checks, the first at start (default
    /// `[serve] dueEverySeconds`, else 60; 0 = no checks, dreaming only).
    #[arg(long, value_name = "SECONDS")]
    due_every: Option<u64>,
    /// Stop after this many due checks (default: run until stopped).
    #[arg(long)]
    max_ticks: Option<u32>,
    /// Also deliver each fired intent to this command, run through
    /// `sh -c` with the intent as one JSON object on its stdin (default
    /// `[serve] deliverCommand`); stopped after 60 s. A failure is
    /// reported on stderr.
    #[arg(long, value_name = "CMD")]
    deliver_command: Option<String>,
    /// Also append each fired intent to this file as a JSON line, synced
    /// to disk before the command runs, so it keeps what a failing
    /// command lost (default `[serve] deliverFile`).
    #[arg(long, value_name = "PATH")]
    deliver_file: Option<PathBuf>,
}

/// When serve checks and sweeps, on its clock.
struct Timetable {
    schedule: memory_harness::cron::Schedule,
    /// The schedule as written.
    expression: String,
    zone: jiff::tz::TimeZone,
    /// Seconds between due checks; 0: none.
    due_every: u64,
    every_ms: i64,
    /// `--now` was given: the clock starts there, and each check and sweep
    /// happens at exactly its scheduled time, so that a run is reproducible.
    fixed: bool,
    start: i64,
    started: std::time::Instant,
}

impl Timetable {
    fn new(g: &Global, resolved: &Resolved, options: &ServeOptions) -> anyhow::Result<Timetable> {
        let expression = options
            .cron
            .clone()
            .unwrap_or_else(|| resolved.dream_schedule.clone());
        let schedule = memory_harness::cron::Schedule::parse(&expression)
            .with_context(|| format!("bad schedule {expression:?}"))?;
        let due_every = options
            .due_every
            .or(resolved.serve.due_every_seconds)
            .unwrap_or(memory_harness::config::DEFAULT_DUE_EVERY_SECONDS);
        if due_every == 0 && options.max_ticks.is_some() {
            bail!("--max-ticks counts due checks, and --due-every 0 turns them off");
        }
        Ok(Timetable {
            schedule,
            expression,
            zone: resolved.time_zone.clone(),
            due_every,
            every_ms: i64::try_from(due_every.saturating_mul(1000)).unwrap_or(i64::MAX),
            fixed: g.now.is_some(),
            start: g.now_ms(resolved)?,
            started: std::time::Instant::now(),
        })
    }

    /// Now: from `--now` on, else the system clock.
    fn clock(&self) -> i64 {
        match self.fixed {
            true => self.start + self.started.elapsed().as_millis() as i64,
            false => memory_harness::clock::system_now_ms(),
        }
    }

    /// The time of the next sweep after `at`, announced on stderr.
    fn next_sweep_after(&self, at: i64) -> anyhow::Result<i64> {
        let next = self
            .schedule
            .next_after(at, &self.zone)
            .with_context(|| format!("the schedule {:?} never fires", self.expression))?;
        eprintln!(
            "memory-harness serve: next sweep at {} ({})",
            memory_harness::clock::format_local_minute(next, &self.zone),
            memory_harness::clock::zone_name(&self.zone)
        );
        Ok(next)
    }

    /// The due check after the one at `due`: checks missed while this one
    /// ran are not made up.
    fn next_due_after(&self, due: i64) -> i64 {
        let mut next = due.saturating_add(self.every_ms);
        let after = self.clock();
        while next <= after {
            next = next.saturating_add(self.every_ms);
        }
        next
    }
}

/// Checks for due intents every `due_every` seconds and sweeps on the
/// schedule until stopped; fired intents are delivered after the workspace
/// is let go.
pub fn serve(g: &Global, options: ServeOptions) -> anyhow::Result<i32> {
    let resolved = g.resolved(None)?;
    super::workspace::ensure_workspace(&resolved.workspace, true)?;
    let timetable = Timetable::new(g, &resolved, &options)?;
    let delivery = Delivery {
        command: options
            .deliver_command
            .or_else(|| resolved.serve.deliver_command.clone()),
        file: options
            .deliver_file
            .or_else(|| resolved.serve.deliver_file.clone()),
        zone: timetable.zone.clone(),
        json: g.json,
    };
    let mut next_sweep = timetable.next_sweep_after(timetable.start)?;
    let mut next_due = (timetable.due_every > 0).then_some(timetable.start);
    if timetable.due_every > 0 {
        eprintln!(
            "memory-harness serve: checking for due intents every {} s",
            timetable.due_every
        );
    }
    let (mut sweeps, mut ticks) = (0u32, 0u32);
    loop {
        if options.max_sweeps.is_some_and(|max| sweeps >= max)
            || options.max_ticks.is_some_and(|max| ticks >= max)
        {
            break;
        }
        let now = timetable.clock();
        if let Some(due) = next_due.filter(|due| now >= *due) {
            check_due(
                &resolved,
                if timetable.fixed { due } else { now },
                &delivery,
            );
            ticks += 1;
            next_due = Some(timetable.next_due_after(due));
            continue;
        }
        if now >= next_sweep {
            let at = if timetable.fixed { next_sweep } else { now };
            sweep(&resolved, at, g.json);
            sweeps += 1;
            next_sweep = timetable.next_sweep_after(timetable.clock())?;
            continue;
        }
        let wake = next_due.map_or(next_sweep, |due| due.min(next_sweep));
        std::thread::sleep(std::time::Duration::from_millis((wake - now).max(1) as u64));
    }
    Ok(0)
}

/// One due check at `at`; the workspace is let go before delivering. A
/// failed check is reported, and the next one still runs.
fn check_due(resolved: &Resolved, at: i64, delivery: &Delivery) {
    let outcome = Session::open(resolved, at)
        .and_then(|mut session| session.host.due(at).map_err(anyhow::Error::from));
    match outcome {
        Ok(fired) => {
            for intent in &fired {
                delivery.deliver(intent, at);
            }
        }
        Err(error) => eprintln!("memory-harness serve: the due check failed: {error:#}"),
    }
}

/// One sweep at `at`, printed. A failed sweep is reported, and the next one
/// still runs.
fn sweep(resolved: &Resolved, at: i64, as_json: bool) {
    let outcome = Session::open(resolved, at).and_then(|mut session| {
        session
            .sweep(Vec::new(), false)
            .map_err(anyhow::Error::from)
    });
    match outcome {
        Ok(report) if as_json => println!("{}", json::dream_report(&report)),
        Ok(report) => print::dream(&report, false),
        Err(error) => eprintln!("memory-harness serve: the sweep failed: {error:#}"),
    }
}
