//! `memory-harness bench-life`: a month in the life of an always-on agent,
//! generated from a seed (`generate`), replayed day by day through the real
//! command line (`replay`) and scored against its labels (`score`): does
//! what the owner kept needing reach `MEMORY.md`, and nothing else; does
//! lane 1 bring a repeated problem's fix; does nothing untrusted, nothing of
//! another repository and no superseded directive get injected.
//!
//! A benchmark, not a test: it measures and reports, and exits non-zero
//! only when a call of the CLI failed (or the replay could not run).

pub mod generate;
pub mod phrases;
pub mod replay;
pub mod score;

use generate::{Event, Month, Step};
use score::{Ratio, Score};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;

pub struct Options {
    pub seed: u64,
    pub days: usize,
    /// Keep the run (workspace, repositories, transcripts, month.json,
    /// result.json) here instead of a temporary directory.
    pub keep: Option<PathBuf>,
    /// Global flags passed on to every call (embedder, component, …).
    pub forward: Vec<String>,
    /// Only the JSON on stdout (the summary goes to stderr).
    pub json: bool,
}

pub fn run(options: &Options) -> anyhow::Result<i32> {
    let month = generate::generate(options.seed, options.days);
    let temp = tempfile::tempdir()?;
    let dir = match &options.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => temp.path().to_path_buf(),
    };
    if options.keep.is_some() {
        std::fs::write(
            dir.join("month.json"),
            serde_json::to_string_pretty(&month)?,
        )?;
    }
    eprintln!("bench-life: {}", persona_line(&month));
    let days = month.days;
    let (obs, stats) = replay::replay(&month, &dir, &options.forward, |day, stats| {
        eprintln!(
            "bench-life: day {}/{days}: {} CLI calls, {:.0} s",
            day + 1,
            stats.calls,
            stats.wall_seconds
        );
    })?;
    let score = score::score(&month.labels, &obs);
    let report = report(&month, &score, &obs, &stats, options.keep.as_ref());
    if options.keep.is_some() {
        std::fs::write(
            dir.join("result.json"),
            serde_json::to_string_pretty(&report)?,
        )?;
        std::fs::write(dir.join("observations.json"), serde_json::to_string(&obs)?)?;
    }
    let summary = summary(&month, &score, &obs, &stats);
    if options.json {
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    println!("{report}");
    Ok(if stats.failures.is_empty() { 0 } else { 1 })
}

fn persona_line(m: &Month) -> String {
    let p = &m.persona;
    let repos: Vec<String> = p
        .repos
        .iter()
        .map(|r| format!("{}/{}", r.org, r.name))
        .collect();
    format!(
        "seed {}, {} days from {}: {} ({}, UTC{:+}h, {}), repos {}",
        m.seed,
        m.days,
        m.start_date,
        p.name,
        p.city,
        p.utc_offset_minutes as f64 / 60.0,
        p.habit,
        repos.join(", ")
    )
}

/// What the month holds, counted.
fn month_counts(m: &Month) -> Value {
    let sessions: Vec<&generate::Session> = m.sessions().collect();
    let count = |kind: &str| sessions.iter().filter(|s| s.kind == kind).count();
    let steps = || sessions.iter().flat_map(|s| s.steps.iter());
    let background = |kind: &str| {
        m.events
            .iter()
            .filter(|e| matches!(e, Event::Background(b) if b.kind == kind))
            .count()
    };
    json!({
        "sessions": {"chat": count("chat"), "work": count("work"), "long_with_flush": count("long"), "group": count("group")},
        "messages": m.messages().count(),
        "owner_messages": m.messages().filter(|x| x.owner).count(),
        "incoming_messages": m.messages().filter(|x| x.role == "user").count(),
        "searches": steps().filter(|s| matches!(s, Step::Search { .. })).count(),
        "flushes": steps().filter(|s| matches!(s, Step::Flush { .. })).count(),
        "user_sets": steps().filter(|s| matches!(s, Step::UserSet { .. })).count(),
        "web_pages": m.messages().filter(|x| x.origin == Some("web-page")).count(),
        "cron_runs": background("cron"),
        "heartbeat_runs": background("heartbeat"),
        "sweeps": m.events.iter().filter(|e| matches!(e, Event::Sweep { .. })).count(),
        "durable_facts": m.facts.iter().filter(|f| f.should_promote).count(),
        "facts_said_in_passing": m.facts.iter().filter(|f| !f.should_promote).count(),
        "problems": m.problems.len(),
        "eligible_occurrences": m.labels.problems.iter().flat_map(|p| &p.occurrences).filter(|o| o.eligible).count(),
        "directives": m.labels.directives.len(),
        "directives_superseded": m.labels.directives.iter().filter(|d| d.superseded_at.is_some()).count(),
        "poisoned_inputs": m.labels.items.iter().filter(|i| i.kind == score::ItemKind::Poisoned).count(),
    })
}

fn report(
    m: &Month,
    s: &Score,
    obs: &score::Observations,
    stats: &replay::Stats,
    kept: Option<&PathBuf>,
) -> Value {
    let p = &m.persona;
    json!({
        "benchmark": "life",
        "seed": m.seed,
        "days": m.days,
        "start_date": m.start_date,
        "persona": {
            "owner": p.owner, "name": p.name, "city": p.city,
            "utc_offset_minutes": p.utc_offset_minutes, "habit": p.habit,
            "repos": p.repos.iter().map(|r| r.url()).collect::<Vec<_>>(),
            "people": p.people.iter().map(|x| &x.handle).collect::<Vec<_>>(),
        },
        "month": month_counts(m),
        "metrics": s.metrics,
        "targets": s.targets,
        "targets_met": s.targets.iter().filter(|t| t.met).count(),
        "problems": s.problems,
        "memory_entries": s.entries,
        "missed": s.missed,
        "cross_project": s.cross_project,
        "superseded_seen": s.superseded_seen,
        "user_sets": obs.user_sets,
        "promoted_per_sweep": obs.sweeps.iter().map(|x| x.added).collect::<Vec<_>>(),
        "writes": writes(obs),
        "wall_seconds": score::round3(stats.wall_seconds),
        "cli_calls": stats.calls,
        "cli_calls_by_command": stats.calls_by_command,
        "cli_seconds_by_command": stats.seconds_by_command.iter().map(|(k, v)| (k.clone(), score::round3(*v))).collect::<std::collections::BTreeMap<_, _>>(),
        "cli_failures": stats.failures,
        "kept": kept.map(|d| d.display().to_string()),
    })
}

fn ratio(r: &Ratio) -> String {
    match r.rate {
        Some(rate) => format!("{rate:.3} ({}/{})", r.hits, r.of),
        None => format!("n/a (0/{})", r.of),
    }
}

/// Flushes and ingests by kind: how many, what they wrote, what was skipped.
fn writes(obs: &score::Observations) -> Value {
    let mut by: std::collections::BTreeMap<String, (u64, u64, u64)> = Default::default();
    for w in &obs.writes {
        let e = by.entry(w.kind.clone()).or_default();
        e.0 += 1;
        e.1 += w.written;
        e.2 += u64::from(w.written == 0);
    }
    let flushes: Vec<Value> = obs
        .writes
        .iter()
        .filter(|w| w.kind == "flush")
        .map(|w| json!({"session": w.session, "lines": w.written, "class": w.class, "skipped": w.skipped}))
        .collect();
    json!({
        "by_kind": by.iter().map(|(k, (n, written, empty))| (k.clone(), json!({"calls": n, "written": written, "wrote_nothing": empty}))).collect::<serde_json::Map<_, _>>(),
        "flushes": flushes,
    })
}

fn writes_line(obs: &score::Observations) -> String {
    let w = writes(obs);
    let mut parts: Vec<String> = w["by_kind"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    format!(
                        "{k} {} calls wrote {} ({} wrote nothing)",
                        v["calls"], v["written"], v["wrote_nothing"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let classes: Vec<String> = obs
        .writes
        .iter()
        .filter(|w| w.kind == "flush")
        .map(|w| w.class.clone().unwrap_or_else(|| "nothing".into()))
        .collect();
    parts.push(format!("flush classes [{}]", classes.join(", ")));
    parts.join("; ")
}

fn summary(m: &Month, s: &Score, obs: &score::Observations, stats: &replay::Stats) -> String {
    let x = &s.metrics;
    let mut out = String::new();
    let c = month_counts(m);
    let _ = writeln!(out, "bench-life {}", persona_line(m));
    let _ = writeln!(
        out,
        "month: {} sessions ({} chat, {} work, {} long with a flush, {} group chats), {} messages, {} searches, {} cron and {} heartbeat runs, {} sweeps",
        c["sessions"].as_object().map_or(0, |o| o.values().filter_map(Value::as_u64).sum::<u64>()),
        c["sessions"]["chat"], c["sessions"]["work"], c["sessions"]["long_with_flush"], c["sessions"]["group"],
        c["messages"], c["searches"], c["cron_runs"], c["heartbeat_runs"], c["sweeps"]
    );
    let _ = writeln!(
        out,
        "labels: {} durable facts (+{} said in passing), {} repeated problems ({} eligible occurrences), {} directives ({} superseded), {} poisoned inputs",
        c["durable_facts"], c["facts_said_in_passing"], c["problems"], c["eligible_occurrences"],
        c["directives"], c["directives_superseded"], c["poisoned_inputs"]
    );
    let _ = writeln!(out);
    let verdict = |name: &str| {
        s.targets
            .iter()
            .find(|t| t.name == name)
            .map_or("", |t| if t.met { "met" } else { "MISSED" })
    };
    let _ = writeln!(
        out,
        "promotion recall             {:<22} facts {}, fixes {}   target >= 0.8  {}",
        ratio(&x.promotion_recall),
        ratio(&x.recall_facts),
        ratio(&x.recall_resolutions),
        verdict("promotion_recall")
    );
    let _ = writeln!(
        out,
        "promotion precision          {:<22} of {} entries sweeps added   target >= 0.9  {}",
        ratio(&x.promotion_precision),
        x.entries_added,
        verdict("promotion_precision")
    );
    let _ = writeln!(
        out,
        "lane 1 brings the fix        {:<22} eligible occurrences (all later ones: {}; problems at every eligible one: {})   target >= 0.9  {}",
        ratio(&x.lane1_resolution),
        ratio(&x.lane1_resolution_all_later),
        ratio(&x.lane1_problems_always),
        verdict("lane1_resolution")
    );
    let _ = writeln!(
        out,
        "untrusted promoted           {:<22} target = 0  {}",
        x.untrusted_promoted,
        verdict("untrusted_promoted")
    );
    let _ = writeln!(
        out,
        "cross-project injections     {:<22} target = 0  {}",
        x.cross_project_injections,
        verdict("cross_project_injections")
    );
    let _ = writeln!(
        out,
        "superseded directives injected {:<20} in {} bootstraps and lane-1 results   target = 0  {}",
        x.superseded_directives_injected,
        ratio(&x.superseded_injection_events),
        verdict("superseded_directives_injected")
    );
    let _ = writeln!(
        out,
        "also: user set refused {}; final directives active {}; superseded still active {}; untrusted injected {}; \
         searches found the fact {} and the fix {}; lane 1 brought a fact after its third ask {}; duplicate entries {}",
        x.user_set_refused,
        ratio(&x.final_directives_active),
        x.superseded_still_active,
        x.untrusted_injected,
        ratio(&x.search_found_fact),
        ratio(&x.search_found_resolution),
        ratio(&x.lane1_fact_after_third_ask),
        x.duplicate_entries
    );
    let _ = writeln!(out, "\nper problem (lane 1 at occurrences 2..: + first trigger block holds the fix, - it does not; ( ) not yet eligible):");
    for p in &s.problems {
        let marks: Vec<String> = p
            .occurrences
            .iter()
            .filter(|o| o.occurrence > 1)
            .map(|o| {
                let mark = if o.first_trigger_has_resolution {
                    "+"
                } else {
                    "-"
                };
                if o.eligible {
                    mark.to_string()
                } else {
                    format!("({mark})")
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "  {:<10} {:<16} fix {:<24} promoted {:<3}  {}",
            p.symptom,
            m.persona.repos[p.repo].name,
            p.resolution,
            if p.resolution_promoted { "yes" } else { "no" },
            marks.join(" ")
        );
    }
    let mut classes: std::collections::BTreeMap<String, usize> = Default::default();
    for e in &s.entries {
        let key = match &e.kind {
            Some(k) => format!("{}({k})", e.class),
            None => e.class.clone(),
        };
        *classes.entry(key).or_default() += 1;
    }
    let classes: Vec<String> = classes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        out,
        "\nMEMORY.md: {} entries added by sweeps{}{}",
        s.entries.len(),
        if classes.is_empty() { "" } else { ": " },
        classes.join(", ")
    );
    let _ = writeln!(out, "writes: {}", writes_line(obs));
    let by: Vec<String> = stats
        .calls_by_command
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        out,
        "wall {:.0} s, {} CLI calls ({}), {} failed",
        stats.wall_seconds,
        stats.calls,
        by.join(", "),
        stats.failures.len()
    );
    for f in stats.failures.iter().take(10) {
        let _ = writeln!(
            out,
            "  FAILED {} at {}: {}",
            f.command,
            f.at,
            f.stderr.lines().last().unwrap_or("")
        );
    }
    out
}
