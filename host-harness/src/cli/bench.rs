//! The benchmarks: `bench` (the general suite on synthetic workspaces),
//! `bench-corpus` (the same on an existing corpus), `bench-lane1`,
//! `bench-dream` and `bench-life` (a month of an always-on agent, replayed
//! through this CLI). Each but `bench-life` runs sandboxed and then natively
//! (`bench_both`) and prints JSON figures.

use super::global::Global;
use super::workspace::open;
use anyhow::{bail, Context};
use clap::Args;
use memory_harness::bench::Subject;
use memory_harness::clock::parse_now;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `bench-lane1`'s flags.
#[derive(Args)]
pub struct Lane1Args {
    /// Curated entries with triggers in MEMORY.md.
    #[arg(long, default_value_t = 1_000)]
    entries: usize,
    /// Armed standing intents.
    #[arg(long, default_value_t = 1_000)]
    intents: usize,
    /// Messages to time.
    #[arg(long, default_value_t = 500)]
    messages: usize,
    /// Only the sandboxed component, not the native build as well.
    #[arg(long)]
    no_native: bool,
}

/// `bench`'s flags.
#[derive(Args)]
pub struct NotesArgs {
    /// Workspace sizes, in daily notes.
    #[arg(long, value_delimiter = ',', default_value = "100,1000,10000")]
    notes: Vec<usize>,
    /// Search queries per size.
    #[arg(long, default_value_t = 200)]
    queries: usize,
    /// Build the workspaces under DIR (DIR/n<NOTES>/{wasm,native},
    /// queries in DIR/n<NOTES>.queries.jsonl) and keep them.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Only the sandboxed component, not the native build as well.
    #[arg(long)]
    no_native: bool,
}

/// `bench-corpus`'s flags.
#[derive(Args)]
pub struct CorpusArgs {
    /// The corpus: a workspace directory (copied, never changed).
    corpus: PathBuf,
    /// The queries: a text file, one query per line.
    #[arg(long)]
    queries: PathBuf,
    /// Times every query is run.
    #[arg(long, default_value_t = 20)]
    repeat: usize,
    /// Skip the native run (the crate without wasm): sandboxed figures only.
    #[arg(long)]
    no_native: bool,
    /// Start each copy from the corpus's own index file
    /// (.memory/index.sqlite), for the vectors in its embedding cache: the
    /// cold index then re-reads every file but embeds nothing it holds.
    #[arg(long)]
    with_embedding_cache: bool,
}

/// `bench-dream`'s flags.
#[derive(Args)]
pub struct DreamArgs {
    /// Daily-note entries in the workspace.
    #[arg(long, default_value_t = 10_000)]
    entries: usize,
    /// Entries recalled before the sweep (three searches each).
    #[arg(long, default_value_t = 1_000)]
    recalled: usize,
    /// Skip the native run (the crate without wasm): sandboxed figures only.
    #[arg(long)]
    no_native: bool,
}

/// `bench-life`'s flags.
#[derive(Args)]
pub struct LifeArgs {
    /// Seed of the month: the owner, projects, facts, phrasings and days.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Days replayed.
    #[arg(long, default_value_t = 30)]
    days: usize,
    /// Run in DIR and keep it (workspace, repositories, transcripts,
    /// month.json, result.json); default: a temporary directory.
    #[arg(long)]
    keep: Option<PathBuf>,
}

/// `bench-supersession`'s flags.
#[derive(Args)]
pub struct SupersessionArgs {
    /// Seed of the corpus: people, subjects, values, phrasings and dates.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Facts whose value changes (two to four values each).
    #[arg(long, default_value_t = 40)]
    changed: usize,
    /// Facts said once and never changed.
    #[arg(long, default_value_t = 40)]
    unchanged: usize,
    /// Write the workspace and its labels (labels.json) in DIR and keep them.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Write the lines as an agent would, through memory_note on their day,
    /// each fact's values under one supersedes key, instead of as files.
    #[arg(long)]
    keyed: bool,
}

/// Annotated entries in the general benchmark's MEMORY.md.
const LANE1_ENTRIES: usize = 1_000;

/// The general benchmark's load besides its notes.
const SUITE_LOAD: memory_harness::bench::SuiteLoad = memory_harness::bench::SuiteLoad {
    intents: 1_000,
    messages: 500,
    bootstraps: 50,
    cold_starts: 5,
};

pub fn life(g: &Global, LifeArgs { seed, days, keep }: LifeArgs) -> anyhow::Result<i32> {
    memory_harness::bench::life::run(&memory_harness::bench::life::Options {
        seed,
        days,
        keep,
        forward: forwarded_flags(g),
        json: g.json,
    })
}

pub fn lane1(g: &Global, args: Lane1Args) -> anyhow::Result<i32> {
    let Lane1Args {
        entries,
        intents,
        messages,
        no_native,
    } = args;
    let mut figures = bench_synced(
        g,
        "2026-12-02",
        no_native,
        &|dir| memory_harness::bench::write_lane1_workspace(dir, entries),
        &|subject, now| memory_harness::bench::lane1(subject, intents, messages, now),
    )?;
    figures["benchmark"] = json!("lane1-inject");
    figures["entries"] = json!(entries);
    figures["intents"] = json!(intents);
    figures["messages"] = json!(messages);
    println!("{figures}");
    Ok(0)
}

pub fn notes(g: &Global, args: NotesArgs) -> anyhow::Result<i32> {
    let NotesArgs {
        notes,
        queries,
        keep,
        no_native,
    } = args;
    for n in notes {
        let write = |dir: &Path| -> anyhow::Result<Vec<String>> {
            let queries = memory_harness::bench::write_notes_workspace(dir, n, queries)?;
            memory_harness::bench::write_lane1_workspace(dir, LANE1_ENTRIES)?;
            Ok(queries)
        };
        let keep_dir = keep.as_ref().map(|base| base.join(format!("n{n}")));
        let mut figures = bench_both(
            g,
            "2026-12-02T09:00:00Z",
            !no_native,
            keep_dir.clone(),
            &write,
            &mut |open, dir, queries, now| {
                let changed = dir.join("memory").join("2026-12-01.md");
                memory_harness::bench::suite(open, n + 1, &changed, queries, SUITE_LOAD, now)
            },
        )?;
        if let (Some(base), Some(dir)) = (&keep, &keep_dir) {
            keep_queries(&base.join(format!("n{n}.queries.jsonl")), dir, &write)?;
        }
        let scratch = tempfile::tempdir()?;
        if let Some(more) = embedder_figures(g, &write(scratch.path())?)? {
            memory_harness::bench::merge(&mut figures, more);
        }
        figures["benchmark"] = json!("notes");
        figures["notes"] = json!(n);
        figures["memory_entries"] = json!(LANE1_ENTRIES);
        figures["intents"] = json!(SUITE_LOAD.intents);
        println!("{figures}");
    }
    Ok(0)
}

/// Texts whose embedding speed bounds a first index: entries of the same
/// generator's notes.
const BOUND_TEXTS: usize = 2_000;
/// Queries embedded one at a time for the query embedding's own time.
const TIMED_QUERIES: usize = 50;

/// With an embedder, what it alone costs, as the bounds of a first index
/// and of a hybrid search: its speed on the benchmark's kind of entries
/// (`bench::embedding_bound`, texts per second) and the median time of one
/// query's embedding; `None` without one.
fn embedder_figures(g: &Global, queries: &[String]) -> anyhow::Result<Option<Value>> {
    // The benchmarks' default is FTS-only, as in `bench_both`.
    if g.embedder.as_deref().is_none_or(|e| e == "none") {
        return Ok(None);
    }
    let scratch = tempfile::tempdir()?;
    let mut g = g.clone();
    g.workspace = Some(scratch.path().to_path_buf());
    let resolved = g.resolved(None)?;
    let lender = memory_harness::embed::Lender::new(&resolved.embedder, resolved.embed_timeout);
    let Some(info) = lender.describe() else {
        return Ok(None);
    };
    memory_harness::bench::write_notes_workspace(scratch.path(), BOUND_TEXTS / 10, 1)?;
    let texts = memory_harness::bench::entry_texts(scratch.path(), BOUND_TEXTS)?;
    let bound = memory_harness::bench::embedding_bound(&lender, &texts, info.max_batch as usize)?;
    let mut times = Vec::new();
    for query in queries.iter().take(TIMED_QUERIES) {
        // Timed alone: embedding_bound would embed it twice (its warm-up).
        let started = std::time::Instant::now();
        lender
            .embed(vec![query.clone()])
            .map_err(|e| anyhow::anyhow!("the embedder failed: {e:?}"))?;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    Ok(Some(json!({
        "embedding_bound_per_s": (bound * 10.0).round() / 10.0,
        "query_embedding_median_ms": (median * 1_000.0).round() / 1_000.0,
    })))
}

/// Writes the queries a kept workspace was benchmarked with to `file`, one
/// JSON line each (`write` builds them in a scratch folder under `dir`).
fn keep_queries(
    file: &Path,
    dir: &Path,
    write: &dyn Fn(&Path) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<()> {
    let queries = write(&dir.join("queries-only"))?;
    std::fs::remove_dir_all(dir.join("queries-only"))?;
    let lines: Vec<String> = queries
        .iter()
        .map(|q| json!({ "query": q }).to_string())
        .collect();
    std::fs::write(file, lines.join("\n") + "\n")?;
    Ok(())
}

pub fn corpus(g: &Global, args: CorpusArgs) -> anyhow::Result<i32> {
    let CorpusArgs {
        corpus,
        queries,
        repeat,
        no_native,
        with_embedding_cache,
    } = args;
    let list: Vec<String> = std::fs::read_to_string(&queries)
        .with_context(|| format!("cannot read {}", queries.display()))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if list.is_empty() {
        bail!("{} holds no queries", queries.display());
    }
    let repeated: Vec<String> = (0..repeat.max(1)).flat_map(|_| list.clone()).collect();
    let write = |dir: &Path| -> anyhow::Result<Vec<String>> {
        copy_corpus(&corpus, dir)?;
        let index = corpus.join(".memory/index.sqlite");
        if with_embedding_cache && index.is_file() {
            std::fs::create_dir_all(dir.join(".memory"))?;
            std::fs::copy(&index, dir.join(".memory/index.sqlite"))?;
        }
        Ok(repeated.clone())
    };
    let mut figures = bench_both(
        g,
        "2026-12-02T09:00:00Z",
        !no_native,
        None,
        &write,
        &mut |open, dir, queries, now| {
            let files = count_markdown(dir)?;
            let changed = first_daily_note(dir)?;
            memory_harness::bench::suite(open, files, &changed, queries, SUITE_LOAD, now)
        },
    )?;
    if let Some(more) = embedder_figures(g, &list)? {
        memory_harness::bench::merge(&mut figures, more);
    }
    figures["benchmark"] = json!("corpus");
    figures["corpus"] = json!(corpus.display().to_string());
    figures["distinct_queries"] = json!(list.len());
    println!("{figures}");
    Ok(0)
}

pub fn dream(g: &Global, args: DreamArgs) -> anyhow::Result<i32> {
    let DreamArgs {
        entries,
        recalled,
        no_native,
    } = args;
    let mut figures = bench_synced(
        g,
        "2026-12-02T03:00:00Z",
        no_native,
        &|dir| memory_harness::bench::write_dream_workspace(dir, entries),
        &|subject, now| memory_harness::bench::dream(subject, entries, recalled, now),
    )?;
    figures["benchmark"] = json!("dream-sweep");
    figures["entries"] = json!(entries);
    println!("{figures}");
    Ok(0)
}

/// The global flags `bench-life` passes on to every call it makes (not
/// the workspace, clock, repository or model, which it sets per call).
fn forwarded_flags(g: &Global) -> Vec<String> {
    let mut flags = Vec::new();
    let mut pass = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            flags.extend([format!("--{name}"), value]);
        }
    };
    pass("embedder", g.embedder.clone());
    pass("config", g.config.as_ref().map(|p| p.display().to_string()));
    pass(
        "component",
        g.component.as_ref().map(|p| p.display().to_string()),
    );
    pass(
        "model-dir",
        g.model_dir.as_ref().map(|p| p.display().to_string()),
    );
    pass("half-life-days", g.half_life_days.map(|d| d.to_string()));
    pass("recency-floor", g.recency_floor.map(|f| f.to_string()));
    pass("tokenizer", g.tokenizer.clone());
    if g.no_cache {
        flags.push("--no-cache".into());
    }
    flags
}

/// A benchmark's work on one subject: (open a subject, workspace, queries,
/// now) to figures.
type BenchWork<'a> =
    dyn FnMut(&mut OpenSubject<'_>, &Path, &[String], i64) -> anyhow::Result<Value> + 'a;
type OpenSubject<'a> = dyn FnMut() -> anyhow::Result<Subject> + 'a;

/// Runs `work` on the sandboxed component and then (with `native`) on the
/// natively built crate, each over its own copy of the workspace `write`
/// builds (which returns the queries), and returns both sets of figures
/// with the sandbox's cost per figure.
fn bench_both(
    g: &Global,
    default_now: &str,
    native: bool,
    keep: Option<PathBuf>,
    write: &dyn Fn(&Path) -> anyhow::Result<Vec<String>>,
    work: &mut BenchWork<'_>,
) -> anyhow::Result<Value> {
    let temp = tempfile::tempdir()?;
    let base = keep.unwrap_or_else(|| temp.path().to_path_buf());
    let mut g = g.clone();
    g.now = g.now.or(Some(default_now.into()));
    g.embedder = g.embedder.or(Some("none".into()));
    // The native side's turns are in UTC: so are the sandboxed side's.
    g.time_zone = Some("UTC".into());
    let now = parse_now(g.now.as_deref().unwrap_or(default_now))?;

    let dir = base.join("wasm");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let queries = write(&dir)?;
    g.workspace = Some(dir.clone());
    let mut open_sandboxed = || -> anyhow::Result<Subject> { Ok(Subject::sandboxed(open(&g)?)) };
    let wasm = work(&mut open_sandboxed, &dir, &queries, now)?;
    if !native {
        return Ok(wasm);
    }
    let dir = base.join("native");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let queries = write(&dir)?;
    let embedder = g.resolved(None)?.embedder;
    let mut open_native = || -> anyhow::Result<Subject> { Subject::native(&dir, &embedder) };
    let native = work(&mut open_native, &dir, &queries, now)?;
    Ok(memory_harness::bench::compare(&wasm, &native))
}

/// `bench_both` for a benchmark on one subject over a workspace without
/// queries: `work` gets the subject, opened and synced, and the time.
fn bench_synced(
    g: &Global,
    default_now: &str,
    no_native: bool,
    write: &dyn Fn(&Path) -> anyhow::Result<()>,
    work: &dyn Fn(&mut Subject, i64) -> anyhow::Result<Value>,
) -> anyhow::Result<Value> {
    let write = |dir: &Path| -> anyhow::Result<Vec<String>> {
        write(dir)?;
        Ok(Vec::new())
    };
    bench_both(
        g,
        default_now,
        !no_native,
        None,
        &write,
        &mut |open, _, _, now| {
            let mut subject = open()?;
            subject.sync(false)?;
            work(&mut subject, now)
        },
    )
}

/// Copies a corpus's Markdown (not its `.memory/`) into `to`.
fn copy_corpus(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_corpus(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

fn count_markdown(dir: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            count += count_markdown(&entry.path())?;
        } else if entry.path().extension().is_some_and(|e| e == "md") {
            count += 1;
        }
    }
    Ok(count)
}

/// The corpus's newest daily note (the file the benchmark changes).
fn first_daily_note(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut notes: Vec<PathBuf> = std::fs::read_dir(dir.join("memory"))
        .with_context(|| format!("{} has no memory/ folder", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    notes.sort();
    notes.pop().context("the corpus has no daily notes")
}

/// `bench-vectors`' flags.
#[derive(Args)]
pub struct VectorsArgs {
    /// Real entry vectors (distinct bench-life texts, embedded with MiniLM).
    #[arg(long, default_value_t = 20_000)]
    entries: usize,
    /// Queries (derived from other bench-life lines, embedded likewise).
    #[arg(long, default_value_t = 200)]
    queries: usize,
    /// The first bench-life seed; texts come from months `seed..`.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Table sizes to measure recall at; beyond the real vectors, blends of
    /// real ones are added (say so in the output).
    #[arg(long, value_delimiter = ',', default_value = "20000,200000,2000000")]
    sizes: Vec<usize>,
    /// Where the embedded vectors are cached between runs.
    #[arg(long, default_value = "/tmp/memory-core-bench-vectors")]
    cache: PathBuf,
    /// Instead of measuring: write a workspace of NOTES daily notes of the
    /// real texts into DIR (beyond them, the texts again with a numbered
    /// suffix and blended vectors), their vectors in its embedding cache
    /// (time it with `bench-corpus DIR --with-embedding-cache`), and the
    /// queries beside it (DIR.queries.jsonl).
    #[arg(long, num_args = 2, value_names = ["DIR", "NOTES"])]
    write_workspace: Option<Vec<String>>,
}

pub fn vectors(g: &Global, args: VectorsArgs) -> anyhow::Result<i32> {
    let model_dir = g
        .model_dir
        .clone()
        .unwrap_or_else(memory_harness::config::default_model_dir);
    let figures = memory_harness::bench::vectors::run(&memory_harness::bench::vectors::Options {
        model_dir,
        sizes: args.sizes,
        entries: args.entries,
        queries: args.queries,
        seed: args.seed,
        cache: args.cache,
        workspace: match args.write_workspace.as_deref() {
            Some([dir, notes]) => Some((
                PathBuf::from(dir),
                notes.parse().context("NOTES is a number")?,
            )),
            _ => None,
        },
    })?;
    println!("{figures}");
    Ok(0)
}

pub fn supersession(g: &Global, args: SupersessionArgs) -> anyhow::Result<i32> {
    use memory_harness::bench::supersession::{generate, Score, HITS, MAX_FACTS};
    let SupersessionArgs {
        seed,
        changed,
        unchanged,
        keep,
        keyed,
    } = args;
    if changed > MAX_FACTS || unchanged > MAX_FACTS {
        bail!("--changed and --unchanged go up to {MAX_FACTS} (five kinds of fact, each on distinct subjects)");
    }
    let now_text = g
        .now
        .clone()
        .unwrap_or_else(|| "2026-12-01T09:00:00Z".into());
    let now = parse_now(&now_text)?;
    let corpus = generate(seed, now.div_euclid(86_400_000), changed, unchanged);
    let temp = tempfile::tempdir()?;
    let dir = keep.unwrap_or_else(|| temp.path().join("workspace"));
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "{} is not empty; give a new or empty directory",
            dir.display()
        );
    }
    let mut g = g.clone();
    g.workspace = Some(dir.clone());
    g.now = Some(now_text);
    g.time_zone = Some("UTC".into());
    let mut corpus = corpus;
    if keyed {
        std::fs::create_dir_all(&dir)?;
        let mut writer = Subject::sandboxed(open(&g)?);
        let mut of_the_day = (i64::MIN, 0);
        for note in &corpus.notes {
            // From 09:00 on its day, a second apart, in the corpus's order.
            of_the_day = if of_the_day.0 == note.day {
                (note.day, of_the_day.1 + 1)
            } else {
                (note.day, 0)
            };
            let at = note.day * 86_400_000 + 9 * 3_600_000 + of_the_day.1 * 1_000;
            let key = note.fact.as_ref().map(|f| f.key.as_str());
            let written = writer.keyed_note(&note.text, key, at)?;
            if let Some(f) = &note.fact {
                // A fact's value is never a duplicate (distinct subjects
                // and values); filler may repeat within a day.
                let Some(written) = written else {
                    bail!("write.note merged the fact {:?} as a duplicate", note.text);
                };
                corpus.questions[f.question].versions[f.version] = written;
            }
        }
    } else {
        for (path, text) in &corpus.files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().expect("a file in a folder"))?;
            std::fs::write(file, text)?;
        }
    }
    let labels: Vec<Value> = corpus
        .questions
        .iter()
        .map(|q| json!({"query": q.query, "versions": q.versions, "latest_age_days": q.latest_age_days}))
        .collect();
    std::fs::write(
        dir.join("labels.json"),
        serde_json::to_string_pretty(&labels)?,
    )?;
    let mut scores = Vec::new();
    // The search modes seen: a configured embedder that failed shows here.
    let mut modes = std::collections::BTreeSet::new();
    for (name, half_life) in [
        ("configured", g.half_life_days),
        ("time_neutral", Some(0.0)),
    ] {
        let mut config = g.clone();
        config.half_life_days = half_life;
        let mut subject = Subject::sandboxed(open(&config)?);
        if scores.is_empty() {
            subject.sync(false)?;
        }
        let mut score = Score::default();
        for q in &corpus.questions {
            let (hits, mode) = subject.hits(&q.query, HITS, now)?;
            score.add(q, &hits);
            modes.insert(mode);
        }
        scores.push((name, score));
    }
    let (configured, neutral) = (scores[0].1, scores[1].1);
    let kept = if neutral.unchanged_found == 0 {
        1.0
    } else {
        configured.unchanged_found as f64 / neutral.unchanged_found as f64
    };
    let round = |x: f64| (x * 1_000.0).round() / 1_000.0;
    let figures = json!({
        "benchmark": "supersession",
        "seed": seed,
        "keyed": keyed,
        "changed_facts": configured.changed,
        "unchanged_facts": configured.unchanged,
        "hits": HITS,
        "modes": modes,
        "latest_first": round(configured.latest_first_rate()),
        "latest_first_time_neutral": round(neutral.latest_first_rate()),
        "latest_found": round(configured.latest_found as f64 / configured.changed.max(1) as f64),
        "unchanged_recall": round(configured.unchanged_recall()),
        "unchanged_recall_time_neutral": round(neutral.unchanged_recall()),
        "unchanged_recall_kept": round(kept),
    });
    if g.json {
        println!("{figures}");
    } else {
        println!(
            "supersession, seed {seed}: {} changed facts, {} unchanged, {}, top {HITS} hits, search {}",
            configured.changed,
            configured.unchanged,
            if keyed {
                "written through memory_note under supersedes keys"
            } else {
                "hand-written daily notes"
            },
            modes.iter().cloned().collect::<Vec<_>>().join(" and ")
        );
        println!(
            "latest value first      {:.3}  (time-neutral {:.3})   target >= 0.95",
            configured.latest_first_rate(),
            neutral.latest_first_rate()
        );
        println!(
            "unchanged facts found   {:.3}  (time-neutral {:.3}; kept {:.3})   target kept >= 0.9",
            configured.unchanged_recall(),
            neutral.unchanged_recall(),
            kept
        );
        println!("{figures}");
    }
    Ok(0)
}
