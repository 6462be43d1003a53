//! `memory-harness bench`: deterministic synthetic workloads timed through
//! the real sandbox. Figures are printed as JSON; nothing here asserts a
//! time (benchmarks measure, tests check behaviour).

pub mod life;
pub mod subject;
pub mod supersession;
pub mod vectors;

use serde_json::{json, Value};
use std::time::Instant;
pub use subject::{Subject, SweepOutcome, Turn};

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

/// Lane 1 per message: `intents` armed intents, then `messages` messages
/// of fifteen words; median, p95 and mean of the whole call as the host
/// sees it.
pub fn lane1(
    subject: &mut Subject,
    intents: usize,
    messages: usize,
    now_ms: i64,
) -> anyhow::Result<Value> {
    let mut rng = Rng(11);
    for _ in 0..intents {
        let text = format!("bring up {}", rng.words(6, 1_000).join(" "));
        let trigger = rng.words(3, 1_000).join(" ");
        subject.create_intent(text, trigger, now_ms)?;
    }
    let mut times = Vec::with_capacity(messages);
    let mut blocks = 0usize;
    for i in 0..messages {
        let message = rng.words(15, 1_000).join(" ");
        let started = Instant::now();
        blocks += subject.inject(message, now_ms + i as i64 * 1_000)?;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    let (median, p95) = median_p95(&mut times);
    Ok(json!({
        "inject_median_ms": round3(median),
        "inject_p95_ms": round3(p95),
        "inject_mean_ms": round3(times.iter().sum::<f64>() / times.len().max(1) as f64),
        "blocks_per_message": round3(blocks as f64 / messages.max(1) as f64),
    }))
}

fn round3(x: f64) -> f64 {
    (x * 1_000.0).round() / 1_000.0
}

fn mib(bytes: u64) -> f64 {
    round3(bytes as f64 / (1024.0 * 1024.0))
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
/// sweep and a real one (deterministic consolidation).
pub fn dream(
    subject: &mut Subject,
    entries: usize,
    recalled: usize,
    now_ms: i64,
) -> anyhow::Result<Value> {
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
            recording.push(timed(|| {
                subject.search(&query, Some(1), Turn::Owner, now_ms + offset)
            })?);
        }
    }
    // The same searches in a cron session record nothing: the difference is
    // the cost of recording.
    let mut unrecorded = Vec::new();
    for k in 0..recalled.min(300) {
        let query = format!("zq{} first", k * step);
        unrecorded.push(timed(|| {
            subject.search(&query, Some(1), Turn::Cron, now_ms)
        })?);
    }
    let started = Instant::now();
    let explained = subject.dream(true, now_ms)?;
    let explain_ms = ms_since(started);
    let started = Instant::now();
    let swept = subject.dream(false, now_ms)?;
    let sweep_ms = ms_since(started);
    let again_ms = timed(|| subject.dream(false, now_ms))?;
    Ok(json!({
        "recall_records": explained.candidates,
        "passing_the_gate": explained.passing,
        "promoted": swept.promoted,
        "explain_ms": round3(explain_ms),
        "sweep_ms": round3(sweep_ms),
        "second_sweep_ms": round3(again_ms),
        "search_recorded_median_ms": round3(median(&mut recording)),
        "search_unrecorded_median_ms": round3(median(&mut unrecorded)),
    }))
}

/// Note-then-search rounds timed for the first search after a write.
const AFTER_WRITE_ROUNDS: usize = 20;

/// The embedder's own speed on `texts`, texts per second: the same batches
/// of `batch` the component sends, straight to the embedder (no component,
/// no index). The bound a first index with this embedder can approach.
pub fn embedding_bound(
    lender: &crate::embed::Lender,
    texts: &[String],
    batch: usize,
) -> anyhow::Result<f64> {
    // Loading the model is paid once per process, not per text: not timed.
    lender
        .embed(texts.iter().take(1).cloned().collect())
        .map_err(|e| anyhow::anyhow!("the embedder failed: {e:?}"))?;
    let started = Instant::now();
    for chunk in texts.chunks(batch.max(1)) {
        lender
            .embed(chunk.to_vec())
            .map_err(|e| anyhow::anyhow!("the embedder failed: {e:?}"))?;
    }
    Ok(texts.len() as f64 / started.elapsed().as_secs_f64())
}

/// Up to `limit` entry texts of a workspace's daily notes, as the embedder
/// sees them (list markers stripped), spread over the notes.
pub fn entry_texts(workspace: &std::path::Path, limit: usize) -> anyhow::Result<Vec<String>> {
    let mut notes: Vec<std::path::PathBuf> = std::fs::read_dir(workspace.join("memory"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    notes.sort();
    let step = (notes.len() / limit.max(1)).max(1);
    let mut texts = Vec::new();
    for note in notes.iter().step_by(step) {
        for line in std::fs::read_to_string(note)?.lines() {
            if let Some(text) = line.strip_prefix("- ") {
                texts.push(text.to_string());
            }
        }
        if texts.len() >= limit {
            break;
        }
    }
    texts.truncate(limit);
    Ok(texts)
}

/// Milliseconds `f` took.
fn timed<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<f64> {
    let started = Instant::now();
    f()?;
    Ok(ms_since(started))
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1_000.0
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

/// The load of the general benchmark besides the notes.
#[derive(Debug, Clone, Copy)]
pub struct SuiteLoad {
    /// Armed standing intents (the workspace's MEMORY.md holds the
    /// annotated entries, see `write_lane1_memory`).
    pub intents: usize,
    /// Lane-1 messages timed.
    pub messages: usize,
    /// Session-start bootstraps timed.
    pub bootstraps: usize,
    /// Cold starts timed.
    pub cold_starts: usize,
}

/// The general benchmark over one workspace, on one subject: indexing
/// (cold, no-op, one file changed), search as the agent's memory_search
/// (recorded as recalls), bootstrap, lane 1 with armed intents, a dreaming
/// sweep over the recalls the searches left, cold start (a new subject over
/// the same workspace, its index opened, the session-start bootstrap) and
/// peak guest memory (and the memory after indexing and after the
/// searches, to tell which phase set it). `changed_file` gets one line appended between the
/// no-op re-sync and the next one.
pub fn suite(
    open: &mut dyn FnMut() -> anyhow::Result<Subject>,
    files: usize,
    changed_file: &std::path::Path,
    queries: &[String],
    load: SuiteLoad,
    now_ms: i64,
) -> anyhow::Result<Value> {
    let mut subject = open()?;
    let started = Instant::now();
    let indexed = subject.sync(true)?;
    let cold = ms_since(started);
    let noop = timed(|| subject.sync(false))?;
    let mut text = std::fs::read_to_string(changed_file)?;
    text.push_str("- A new line about the harbour crane schedule.\n");
    std::fs::write(changed_file, text)?;
    let one_changed = timed(|| subject.sync(false))?;
    // Linear memory only grows: its size after each phase says which
    // phase set the peak.
    let after_index = subject.peak_memory_bytes();
    let mut search_times = Vec::new();
    let mut hits = 0usize;
    for query in queries {
        let started = Instant::now();
        hits += subject.search(query, None, Turn::Owner, now_ms)?;
        search_times.push(ms_since(started));
    }
    // The first search after a write: a live host searches right after the
    // agent's note, which the index (and its vectors) must take in first.
    let mut after_write_times = Vec::new();
    for (i, query) in queries.iter().take(AFTER_WRITE_ROUNDS).enumerate() {
        subject.note(
            &format!("Checked the harbour crane log, round {i}."),
            now_ms,
        )?;
        // A query not searched before: its embedding is part of the time.
        let query = format!("{query} since then");
        let started = Instant::now();
        subject.search(&query, None, Turn::Owner, now_ms)?;
        after_write_times.push(ms_since(started));
    }
    let after_search = subject.peak_memory_bytes();
    let mut bootstrap_times = Vec::new();
    for _ in 0..load.bootstraps {
        bootstrap_times.push(timed(|| subject.bootstrap(now_ms))?);
    }
    let mut figures = lane1(&mut subject, load.intents, load.messages, now_ms)?;
    let started = Instant::now();
    let sweep = subject.dream(false, now_ms + 3_600_000)?;
    let sweep_ms = ms_since(started);
    let peak = subject.peak_memory_bytes();
    // One instance per workspace: let go of it before starting new ones.
    drop(subject);
    let mut cold_starts = Vec::new();
    for _ in 0..load.cold_starts {
        let started = Instant::now();
        let mut fresh = open()?;
        fresh.bootstrap(now_ms)?;
        cold_starts.push(ms_since(started));
    }
    let (search_median, search_p95) = median_p95(&mut search_times);
    let (bootstrap_median, _) = median_p95(&mut bootstrap_times);
    let (after_write_median, _) = median_p95(&mut after_write_times);
    let (cold_start_median, _) = median_p95(&mut cold_starts);
    let more = json!({
        "index_cold_ms": round3(cold),
        "index_files_per_s": round3(files as f64 / (cold / 1_000.0)),
        "index_sync_calls": indexed.calls,
        "index_embedded": indexed.embedded,
        "index_embedded_per_s": round3(indexed.embedded as f64 / (cold / 1_000.0)),
        "resync_noop_ms": round3(noop),
        "resync_one_changed_ms": round3(one_changed),
        "search_median_ms": round3(search_median),
        "search_p95_ms": round3(search_p95),
        "search_after_write_median_ms": round3(after_write_median),
        "hits_per_query": round3(hits as f64 / queries.len().max(1) as f64),
        "bootstrap_median_ms": round3(bootstrap_median),
        "dream_sweep_ms": round3(sweep_ms),
        "dream_recall_records": sweep.candidates,
        "dream_promoted": sweep.promoted,
        "cold_start_median_ms": round3(cold_start_median),
        "peak_guest_memory_mib": peak.map(mib),
        "guest_memory_after_index_mib": after_index.map(mib),
        "guest_memory_after_searches_mib": after_search.map(mib),
    });
    merge(&mut figures, more);
    Ok(figures)
}

/// Adds `from`'s fields to `into`.
pub fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        into.extend(from);
    }
}

/// The sandboxed and the native figures side by side, with the cost of the
/// sandbox per figure: wasm ÷ native for times, native ÷ wasm for rates
/// (both read "times slower in the sandbox").
pub fn compare(wasm: &Value, native: &Value) -> Value {
    let mut ratio = serde_json::Map::new();
    if let (Some(w), Some(n)) = (wasm.as_object(), native.as_object()) {
        for (key, w) in w {
            let (Some(w), Some(n)) = (w.as_f64(), n.get(key).and_then(Value::as_f64)) else {
                continue;
            };
            let r = if key.ends_with("_ms") && n > 0.0 {
                w / n
            } else if key.ends_with("_per_s") && w > 0.0 {
                n / w
            } else {
                continue;
            };
            ratio.insert(key.clone(), json!(round3(r)));
        }
    }
    json!({ "wasm": wasm, "native": native, "sandbox_cost": ratio })
}

fn median_p95(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    if times.is_empty() {
        return (0.0, 0.0);
    }
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    (pick(0.5), pick(0.95))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_cost_reads_times_slower_for_times_and_rates() {
        let wasm = json!({"search_median_ms": 2.0, "index_files_per_s": 1_000.0, "hits_per_query": 6.0, "peak_guest_memory_mib": 4.0});
        let native = json!({"search_median_ms": 1.0, "index_files_per_s": 3_000.0, "hits_per_query": 6.0, "peak_guest_memory_mib": null});
        let both = compare(&wasm, &native);
        assert_eq!(both["sandbox_cost"]["search_median_ms"], json!(2.0));
        assert_eq!(both["sandbox_cost"]["index_files_per_s"], json!(3.0));
        // Counts and figures only one side has are not ratios.
        assert!(both["sandbox_cost"].get("hits_per_query").is_none());
        assert!(both["sandbox_cost"].get("peak_guest_memory_mib").is_none());
        assert_eq!(both["wasm"], wasm);
        assert_eq!(both["native"], native);
    }

    #[test]
    fn a_vocabulary_has_as_many_distinct_words_as_it_says() {
        let mut rng = Rng(1);
        let words: std::collections::HashSet<String> =
            (0..200_000).map(|_| rng.word(5_000)).collect();
        assert_eq!(words.len(), 5_000);
        let mut rng = Rng(1);
        let small: std::collections::HashSet<String> =
            (0..50_000).map(|_| rng.word(1_000)).collect();
        assert_eq!(small.len(), 1_000);
        assert!(
            small.iter().all(|w| w.len() <= 10),
            "1,000 keeps three syllables"
        );
    }
}
