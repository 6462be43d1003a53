//! `memory-harness bench-vectors`: how the vector leg's compact codes
//! trade recall for speed and memory, on real all-MiniLM-L6-v2 vectors.

pub mod corpus;
pub mod recall;
pub mod workspace;

use serde_json::{json, Value};
use std::path::PathBuf;

pub struct Options {
    pub model_dir: PathBuf,
    /// Table sizes to measure recall at (beyond the real vectors: blends).
    pub sizes: Vec<usize>,
    pub entries: usize,
    pub queries: usize,
    pub seed: u64,
    pub cache: PathBuf,
    /// Write a workspace of the real texts here (vectors cached) instead.
    pub workspace: Option<(PathBuf, usize)>,
}

pub fn run(options: &Options) -> anyhow::Result<Value> {
    let (texts, queries) = corpus::realistic_texts(options.seed, options.entries, options.queries)?;
    let name = format!("life-s{}-e{}", options.seed, texts.len());
    let entries = corpus::embedded(
        &options.model_dir,
        &texts,
        &corpus::cache_file(&options.cache, &name),
    )?;
    let queries_text = queries;
    let queries = corpus::embedded(
        &options.model_dir,
        &queries_text,
        &corpus::cache_file(&options.cache, &format!("{name}-q{}", queries_text.len())),
    )?;
    if let Some((dir, notes)) = &options.workspace {
        // Beyond the real texts: each again with a numbered suffix, its
        // vector a blend of real ones (as for the recall tables), so a
        // workspace of any size times the same search work.
        let wanted = notes * workspace::ENTRIES_PER_NOTE;
        let real = texts.len();
        let texts: Vec<String> = (0..wanted.max(real))
            .map(|i| match i / real {
                0 => texts[i].clone(),
                round => format!("{} (again, {round})", texts[i % real]),
            })
            .collect();
        let entries = recall::synthesised(&entries, texts.len(), options.seed);
        let written = workspace::write(dir, &texts, &entries, *notes)?;
        let lines: Vec<String> = queries_text
            .iter()
            .map(|q| json!({ "query": q }).to_string())
            .collect();
        std::fs::write(dir.with_extension("queries.jsonl"), lines.join("\n") + "\n")?;
        return Ok(
            json!({ "workspace": dir, "entries": written, "queries": dir.with_extension("queries.jsonl") }),
        );
    }
    let mut tables = Vec::new();
    for &size in &options.sizes {
        let table = recall::synthesised(&entries, size, options.seed);
        eprintln!("bench-vectors: measuring {size} entries");
        let mut figures = recall::measure(&table, &queries, &[24, 40]);
        figures["real_vectors"] = json!(size.min(entries.len()));
        figures["synthesised_vectors"] = json!(size.saturating_sub(entries.len()));
        tables.push(figures);
    }
    Ok(json!({
        "benchmark": "vectors",
        "embedder": "all-MiniLM-L6-v2",
        "texts": format!("bench-life transcript lines and flush notes, seeds {}..", options.seed),
        "real_entries": entries.len(),
        "queries": queries.len(),
        "synthesised": "beyond the real vectors: normalised blends of two real vectors (15-40% of the second) with noise",
        "tables": tables,
    }))
}
