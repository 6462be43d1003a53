//! A workspace of daily notes made of the benchmark's real texts, with
//! their MiniLM vectors already in the index's embedding cache, so the
//! component indexes it without a forward pass and searches through it can
//! be timed sandboxed (`memory-harness index`, `search`).

use memory_core::contract::api::FtsTokenizer;
use memory_core::host::embedding::{embedding_text, EmbedderInfo};
use memory_core::storage::index::Index;
use memory_core::text::hash::sha256_hex;
use std::path::Path;

/// Entries per daily note (about what a busy day of an agent writes).
pub const ENTRIES_PER_NOTE: usize = 20;

/// Writes `notes` daily notes of `ENTRIES_PER_NOTE` list items from
/// `texts` (one-line texts a list item keeps as they are; as many notes as
/// there are texts for) and caches their vectors. Returns the entries
/// written.
pub fn write(
    dir: &Path,
    texts: &[String],
    vectors: &[Vec<f32>],
    notes: usize,
) -> anyhow::Result<usize> {
    let memory = dir.join("memory");
    std::fs::create_dir_all(&memory)?;
    std::fs::create_dir_all(dir.join(".memory"))?;
    let usable: Vec<(&String, &Vec<f32>)> = texts
        .iter()
        .zip(vectors)
        .filter(|(t, _)| {
            embedding_text(&format!("- {t}")) == **t
                && !t.starts_with(['#', '>', '|', '`', '*', '-', '+'])
        })
        .collect();
    let index = Index::open(&dir.join(".memory/index.sqlite"), FtsTokenizer::Unicode61)
        .map_err(|e| anyhow::anyhow!("opening the index: {e}"))?
        .0;
    let info = EmbedderInfo {
        provider: "local".into(),
        model: "all-MiniLM-L6-v2".into(),
        dimensions: 384,
        max_batch: 32,
    };
    let mut written = 0;
    let start = crate::clock::parse_now("2020-01-01T00:00:00Z")?;
    for (n, day) in usable.chunks(ENTRIES_PER_NOTE).take(notes).enumerate() {
        let date = crate::bench::life::generate::date_of(start + n as i64 * 86_400_000);
        let body: String = day.iter().map(|(t, _)| format!("- {t}\n")).collect();
        std::fs::write(
            memory.join(format!("{date}.md")),
            format!("# {date}\n\n{body}"),
        )?;
        let hashes: Vec<String> = day.iter().map(|(t, _)| sha256_hex(t.as_bytes())).collect();
        let items: Vec<(&str, &[f32])> = hashes
            .iter()
            .zip(day)
            .map(|(h, (_, v))| (h.as_str(), v.as_slice()))
            .collect();
        index
            .cache_embeddings(&info, &items)
            .map_err(|e| anyhow::anyhow!("caching vectors: {e}"))?;
        written += day.len();
    }
    Ok(written)
}
