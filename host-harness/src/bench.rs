//! `memory-harness bench`: deterministic synthetic workloads timed through
//! the real sandbox. Figures are printed as JSON; nothing here asserts a
//! time (benchmarks measure, tests check behaviour).

use crate::host::{wit, wit_inject, wit_intents};
use crate::session::Session;
use serde_json::{json, Value};
use std::time::Instant;

/// A small deterministic generator (64-bit LCG), so every run builds the
/// same workspace and messages.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn word(&mut self, vocabulary: u64) -> String {
        let n = self.next() % vocabulary;
        // Pronounceable, distinct, never a stop word.
        let syllables = [
            "ka", "lo", "mi", "ru", "ten", "vos", "zar", "pel", "dun", "fig",
        ];
        let mut w = String::from("q");
        let mut v = n;
        // One syllable per decimal digit of the vocabulary, so all of its
        // words are distinct (three at least: 1,000 keeps its old words).
        let digits = (vocabulary.max(2) - 1).ilog10() + 1;
        for _ in 0..digits.max(3) {
            w.push_str(syllables[(v % 10) as usize]);
            v /= 10;
        }
        w
    }

    fn words(&mut self, count: usize, vocabulary: u64) -> Vec<String> {
        (0..count).map(|_| self.word(vocabulary)).collect()
    }
}

/// Writes the lane-1 workspace: a MEMORY.md of `entries` annotated entries.
pub fn write_lane1_workspace(dir: &std::path::Path, entries: usize) -> anyhow::Result<()> {
    let mut rng = Rng(7);
    let mut memory = String::from("# Memory\n\n");
    for i in 0..entries {
        let text = rng.words(12, 1_000).join(" ");
        let t1 = rng.words(2, 1_000).join(" ");
        let t2 = rng.words(2, 1_000).join(" ");
        memory.push_str(&format!(
            "- Entry {i}: {text}. <!-- trigger: {t1}, {t2} --> <!-- importance: {} -->\n",
            1 + i % 10
        ));
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("MEMORY.md"), memory)?;
    Ok(())
}

/// Lane 1 per message over `entries` curated entries and `intents` armed
/// intents: median, p95 and mean of the whole call as the host sees it.
pub fn lane1(session: &mut Session, intents: usize, messages: usize) -> anyhow::Result<Value> {
    let mut rng = Rng(11);
    let context = session.context();
    for _ in 0..intents {
        let spec = wit_intents::IntentSpec {
            text: format!("bring up {}", rng.words(6, 1_000).join(" ")),
            triggers: vec![rng.words(3, 1_000).join(" ")],
            due_at_ms: None,
            channel: None,
            sender: None,
            expires_in_ms: None,
            fire_budget: None,
            cooldown_ms: None,
            semantic: false,
        };
        session
            .host
            .intent_create(&spec, &context)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut times = Vec::with_capacity(messages);
    let mut blocks = 0usize;
    for i in 0..messages {
        let message = rng.words(15, 1_000).join(" ");
        let request = wit_inject::InjectRequest {
            message,
            mode: wit_inject::EscalationMode::Escalate,
            context: wit::TurnContext {
                now_ms: context.now_ms + i as i64 * 1_000,
                ..context.clone()
            },
        };
        let started = Instant::now();
        let result = session
            .host
            .inject(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
        blocks += result.blocks.len();
    }
    let (median, p95) = median_p95(&mut times);
    Ok(json!({
        "benchmark": "lane1-inject",
        "intents": intents,
        "messages": messages,
        "median_ms": round3(median),
        "p95_ms": round3(p95),
        "mean_ms": round3(times.iter().sum::<f64>() / times.len() as f64),
        "blocks_per_message": round3(blocks as f64 / messages as f64),
    }))
}

fn round3(x: f64) -> f64 {
    (x * 1_000.0).round() / 1_000.0
}

/// Writes the dreaming workspace: `entries` daily-note entries of ten words
/// from a vocabulary of a thousand, spread over 100 daily notes (the last
/// 100 days before 2026-12-02), each with a unique tag word `zqN` so a
/// search can recall exactly that entry.
pub fn write_dream_workspace(dir: &std::path::Path, entries: usize) -> anyhow::Result<()> {
    let mut rng = Rng(13);
    let notes = 100usize;
    let memory_dir = dir.join("memory");
    std::fs::create_dir_all(&memory_dir)?;
    let per_note = entries.div_ceil(notes);
    for note in 0..notes {
        // 2026-08-24 + note days: within the 100 days before 2026-12-02.
        let date = date_after("2026-08-24", note as i64);
        let mut text = format!("# {date}\n\n");
        for i in note * per_note..((note + 1) * per_note).min(entries) {
            text.push_str(&format!("- {} zq{i}.\n", rng.words(10, 1_000).join(" ")));
        }
        std::fs::write(memory_dir.join(format!("{date}.md")), text)?;
    }
    std::fs::write(
        dir.join("MEMORY.md"),
        "# Memory\n\n- The owner keeps notes in Markdown.\n",
    )?;
    Ok(())
}

fn date_after(start: &str, days: i64) -> String {
    let ms = crate::clock::parse_now(start).expect("a valid date") + days * 86_400_000;
    crate::cron::format_utc_minute(ms)[..10].to_string()
}

/// Records `recalled` entries' recalls through real searches (three each:
/// two queries over two days, one hit per search), then times a dry-run
/// sweep and a real one (deterministic consolidation) through the sandbox.
pub fn dream(
    session: &mut Session,
    entries: usize,
    recalled: usize,
    gates: crate::host::wit_dream::DreamGates,
) -> anyhow::Result<Value> {
    use crate::host::wit_dream;
    let base = session.context();
    let day = 86_400_000;
    let step = (entries / recalled.max(1)).max(1);
    let mut recording = Vec::new();
    for k in 0..recalled {
        let e = k * step;
        for (query, offset) in [
            (format!("zq{e} first"), -2 * day),
            (format!("second zq{e}"), -2 * day + 3_600_000),
            (format!("zq{e} first"), -day),
        ] {
            let context = wit::TurnContext {
                now_ms: base.now_ms + offset,
                ..base.clone()
            };
            recording.push(timed_search(session, query, context)?);
        }
    }
    // The same searches in a cron session record nothing: the difference is
    // the cost of recording.
    let mut unrecorded = Vec::new();
    for k in 0..recalled.min(300) {
        let context = wit::TurnContext {
            session_kind: Some(wit::SessionKind::Cron),
            ..base.clone()
        };
        unrecorded.push(timed_search(
            session,
            format!("zq{} first", k * step),
            context,
        )?);
    }
    let mut sweep = |dry_run: bool| -> anyhow::Result<(f64, wit_dream::DreamReport)> {
        let request = wit_dream::DreamRequest {
            phases: Vec::new(),
            dry_run,
            gates,
            context: base.clone(),
        };
        let started = Instant::now();
        let report = session
            .host
            .dream(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok((started.elapsed().as_secs_f64() * 1_000.0, report))
    };
    let (explain_ms, explained) = sweep(true)?;
    let (sweep_ms, report) = sweep(false)?;
    let (again_ms, _) = sweep(false)?;
    let passing = explained
        .candidates
        .iter()
        .filter(|c| {
            matches!(
                c.verdict,
                wit_dream::Verdict::Promoted | wit_dream::Verdict::OverLimit
            )
        })
        .count();
    Ok(json!({
        "benchmark": "dream-sweep",
        "entries": entries,
        "recall_records": explained.candidates.len(),
        "passing_the_gate": passing,
        "promoted": report.added.len(),
        "explain_ms": round3(explain_ms),
        "sweep_ms": round3(sweep_ms),
        "second_sweep_ms": round3(again_ms),
        "search_recorded_median_ms": round3(median(&mut recording)),
        "search_unrecorded_median_ms": round3(median(&mut unrecorded)),
    }))
}

/// One search with one hit, timed around the call into the sandbox (ms).
fn timed_search(
    session: &mut Session,
    query: String,
    context: wit::TurnContext,
) -> anyhow::Result<f64> {
    let request = crate::host::wit_recall::SearchRequest {
        query,
        max_results: Some(1),
        min_score: None,
        context,
    };
    let started = Instant::now();
    session
        .host
        .search(&request)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(started.elapsed().as_secs_f64() * 1_000.0)
}

fn median(times: &mut [f64]) -> f64 {
    median_p95(times).0
}

/// Writes `notes` daily notes of about 2 KB (20 entries of 12 words from a
/// vocabulary of 5,000, plus common words), one a day going back from
/// 2026-12-01, and returns queries of three words taken from the entries.
pub fn write_notes_workspace(
    dir: &std::path::Path,
    notes: usize,
    queries: usize,
) -> anyhow::Result<Vec<String>> {
    let mut rng = Rng(17);
    let common = [
        "the", "team", "meeting", "project", "agreed", "next", "week", "with",
    ];
    let memory_dir = dir.join("memory");
    std::fs::create_dir_all(&memory_dir)?;
    let mut samples: Vec<Vec<String>> = Vec::new();
    for n in 0..notes {
        let date = date_after("2026-12-01", -(n as i64));
        let suffix = if n >= 3_650 {
            format!("-{n}")
        } else {
            String::new()
        };
        let mut text = format!("# {date}\n\n");
        for _ in 0..20 {
            let words = rng.words(10, 5_000);
            let filler = common[(rng.next() % common.len() as u64) as usize];
            text.push_str(&format!(
                "- {} {filler} {}.\n",
                words[..5].join(" "),
                words[5..].join(" ")
            ));
            if samples.len() < queries * 4 && rng.next().is_multiple_of(7) {
                samples.push(words);
            }
        }
        std::fs::write(memory_dir.join(format!("{date}{suffix}.md")), text)?;
    }
    Ok((0..queries)
        .map(|i| {
            let words = &samples[i % samples.len().max(1)];
            format!(
                "what about {} and {} {}",
                words[1],
                words[6],
                rng.word(5_000)
            )
        })
        .collect())
}

/// The general benchmark over one notes workspace: indexing (cold, no-op,
/// one file changed), search, bootstrap, cold start and peak guest memory.
pub fn notes_suite(
    mut session: Session,
    workspace: &std::path::Path,
    notes: usize,
    queries: &[String],
    reopen: &dyn Fn() -> anyhow::Result<Session>,
) -> anyhow::Result<Value> {
    use crate::host::{wit_bootstrap, wit_recall};
    let timed = |f: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let started = Instant::now();
        f()?;
        Ok(started.elapsed().as_secs_f64() * 1_000.0)
    };
    let cold = timed(&mut || {
        session
            .sync_all(true, |_| {})
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    })?;
    let noop = timed(&mut || {
        session
            .sync_all(false, |_| {})
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    })?;
    let changed_file = workspace
        .join("memory")
        .join(format!("{}.md", date_after("2026-12-01", 0)));
    let mut text = std::fs::read_to_string(&changed_file)?;
    text.push_str("- A new line about the harbour crane schedule.\n");
    std::fs::write(&changed_file, text)?;
    let one_changed = timed(&mut || {
        session
            .sync_all(false, |_| {})
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    })?;
    let context = wit::TurnContext {
        session_kind: None, // a benchmark, not the agent recalling
        ..session.context()
    };
    let mut search_times = Vec::new();
    let mut hits = 0usize;
    for query in queries {
        let request = wit_recall::SearchRequest {
            query: query.clone(),
            max_results: None,
            min_score: None,
            context: context.clone(),
        };
        let started = Instant::now();
        let result = session
            .host
            .search(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        search_times.push(started.elapsed().as_secs_f64() * 1_000.0);
        hits += result.hits.len();
    }
    let mut bootstrap_times = Vec::new();
    for _ in 0..50 {
        let request = wit_bootstrap::BootstrapRequest {
            purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
            context: session.context(),
            known_digest: None,
        };
        let started = Instant::now();
        session
            .host
            .bootstrap(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        bootstrap_times.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    let peak = session.host.peak_guest_memory();
    // One instance per workspace: let go of it before starting new ones.
    drop(session);
    // Cold start: a new host over the same workspace (compiled component
    // from the cache), instantiated, the index opened, the session-start
    // bootstrap.
    let mut cold_starts = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let mut fresh = reopen()?;
        let request = wit_bootstrap::BootstrapRequest {
            purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
            context: fresh.context(),
            known_digest: None,
        };
        fresh
            .host
            .bootstrap(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cold_starts.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    let (search_median, search_p95) = median_p95(&mut search_times);
    let (bootstrap_median, _) = median_p95(&mut bootstrap_times);
    let (cold_start_median, _) = median_p95(&mut cold_starts);
    Ok(json!({
        "benchmark": "notes",
        "notes": notes,
        "index_cold_ms": round3(cold),
        "index_notes_per_s": round3(notes as f64 / (cold / 1_000.0)),
        "resync_noop_ms": round3(noop),
        "resync_one_changed_ms": round3(one_changed),
        "queries": queries.len(),
        "search_median_ms": round3(search_median),
        "search_p95_ms": round3(search_p95),
        "hits_per_query": round3(hits as f64 / queries.len().max(1) as f64),
        "bootstrap_median_ms": round3(bootstrap_median),
        "cold_start_median_ms": round3(cold_start_median),
        "peak_guest_memory_mib": round3(peak as f64 / (1024.0 * 1024.0)),
    }))
}

fn median_p95(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    if times.is_empty() {
        return (0.0, 0.0);
    }
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    (pick(0.5), pick(0.95))
}
