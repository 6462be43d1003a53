//! Real all-MiniLM-L6-v2 vectors of realistic text for `bench-vectors`: the
//! transcript lines and flush notes `bench-life` writes (many seeds, so no
//! one month's phrasing dominates), embedded once and cached on disk, since
//! embedding runs at about a hundred texts a second.

use crate::bench::life::generate::{derive_query, generate, Step};
use crate::embed::encoder::{Encoder, LocalModel};
use anyhow::{bail, Context};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Distinct texts, and queries derived from other texts, from months of the
/// generator with seeds `first_seed..`, until `entries` texts are found.
pub fn realistic_texts(
    first_seed: u64,
    entries: usize,
    queries: usize,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let mut seen = HashSet::new();
    let mut texts = Vec::new();
    let mut query_texts = Vec::new();
    let mut seed = first_seed;
    while texts.len() < entries || query_texts.len() < queries {
        let month = generate(seed, 30);
        let notes = month.sessions().flat_map(|s| {
            s.steps.iter().flat_map(|step| match step {
                Step::Flush { notes, .. } => notes.clone(),
                _ => Vec::new(),
            })
        });
        let lines: Vec<String> = month
            .messages()
            .map(|m| m.text.clone())
            .chain(notes)
            .collect();
        for (i, text) in lines.into_iter().enumerate() {
            let text = text.trim().to_string();
            if text.is_empty() || !seen.insert(text.clone()) {
                continue;
            }
            // Every seventh line asks instead of being stored: queries are
            // phrased like the agent's, about things the table holds.
            if i % 7 == 3 && query_texts.len() < queries {
                let q = derive_query(&text);
                if !q.trim().is_empty() {
                    query_texts.push(q);
                }
            } else if texts.len() < entries {
                texts.push(text);
            }
        }
        seed += 1;
        if seed > first_seed + 10_000 {
            bail!("the generator gave fewer than {entries} distinct texts");
        }
    }
    Ok((texts, query_texts))
}

/// The vectors of `texts`, read from `cache` when it holds exactly them,
/// else embedded with the model in `model_dir` and written there.
pub fn embedded(model_dir: &Path, texts: &[String], cache: &Path) -> anyhow::Result<Vec<Vec<f32>>> {
    let dims = LocalModel::MiniLm.dimensions();
    let key = crate::bench::vectors::corpus::digest(texts);
    if let Ok(bytes) = std::fs::read(cache) {
        if bytes.len() == 8 + texts.len() * dims * 4 && bytes[..8] == key.to_le_bytes() {
            return Ok(bytes[8..]
                .chunks_exact(dims * 4)
                .map(memory_core::host::embedding::decode)
                .collect());
        }
    }
    let model = Encoder::load(LocalModel::MiniLm, model_dir)
        .with_context(|| format!("loading all-MiniLM-L6-v2 from {}", model_dir.display()))?;
    let mut vectors = Vec::with_capacity(texts.len());
    for (n, chunk) in texts.chunks(512).enumerate() {
        vectors.extend(model.embed(chunk)?);
        eprintln!(
            "bench-vectors: embedded {} of {}",
            (n * 512 + chunk.len()),
            texts.len()
        );
    }
    let mut bytes = key.to_le_bytes().to_vec();
    for v in &vectors {
        bytes.extend(memory_core::host::embedding::encode(v));
    }
    if let Some(dir) = cache.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(cache, bytes).with_context(|| format!("writing {}", cache.display()))?;
    Ok(vectors)
}

/// A fingerprint of a list of texts (FNV-1a), to tell a stale cache.
pub fn digest(texts: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in texts {
        for b in t.bytes().chain([0xff]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The default cache file for a set of texts.
pub fn cache_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.minilm.f32"))
}
