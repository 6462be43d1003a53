//! Recall and time of the vector leg's shortlist against exact search, on
//! one table of vectors, natively (the same `memory_core::logic::vectors`
//! the component runs).

use memory_core::host::embedding::{dot, normalise};
use memory_core::logic::vectors::{
    best, recall_of, shortlist, shortlist_sizes, Centre, CentreBuilder, CodeTable,
};
use serde_json::{json, Value};
use std::time::Instant;

/// `base` grown to `size` vectors: the real ones first, then blends of two
/// real vectors with Gaussian noise (named in the output: recall on these
/// is an estimate, real text is not this uniform).
pub fn synthesised(base: &[Vec<f32>], size: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut out: Vec<Vec<f32>> = base.iter().take(size).cloned().collect();
    while out.len() < size {
        let a = &base[next() as usize % base.len()];
        let b = &base[next() as usize % base.len()];
        let mix = 0.15 + (next() % 1000) as f32 / 1000.0 * 0.25;
        let mut v: Vec<f32> = a
            .iter()
            .zip(b)
            .map(|(x, y)| {
                // A sum of four uniforms: near enough to Gaussian noise.
                let noise: f32 = (0..4).map(|_| (next() % 2001) as f32 / 1000.0 - 1.0).sum();
                (1.0 - mix) * x + mix * y + 0.02 * noise
            })
            .collect();
        normalise(&mut v);
        out.push(v);
    }
    out
}

/// Recall@k of the shortlist (and of a Hamming-only shortlist of the same
/// exact reads, to show what the asymmetric stage buys), the time per
/// query of exact search and of the shortlist, and the table's memory.
pub fn measure(table: &[Vec<f32>], queries: &[Vec<f32>], ks: &[usize]) -> Value {
    let dims = table[0].len();
    let started = Instant::now();
    let mut builder = CentreBuilder::new(dims);
    table.iter().for_each(|v| builder.add(v));
    let centre = builder.finish().expect("a table of vectors");
    let mut codes = CodeTable::new(centre.words());
    for (id, v) in table.iter().enumerate() {
        codes.push(id as i64, &centre.code(v));
    }
    let coding_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut per_k = Vec::new();
    for &k in ks {
        let (scan, exact_reads) = shortlist_sizes(k);
        let (mut recall, mut hamming_recall) = (0.0, 0.0);
        let (mut exact_ms, mut shortlist_ms) = (Vec::new(), Vec::new());
        for q in queries {
            let t = Instant::now();
            let truth = exact_top(table, q, k);
            exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let found = shortlisted(&centre, &codes, table, q, k);
            shortlist_ms.push(t.elapsed().as_secs_f64() * 1e3);
            recall += recall_of(&truth, &found);
            let near = codes.nearest(&centre.code(q), exact_reads);
            let hamming: Vec<(i64, f32)> = near
                .iter()
                .map(|&i| (i as i64, dot(q, &table[i])))
                .collect();
            let hamming: Vec<i64> = best(hamming, k).into_iter().map(|(id, _)| id).collect();
            hamming_recall += recall_of(&truth, &hamming);
        }
        let n = queries.len() as f64;
        per_k.push(json!({
            "k": k,
            "scan_shortlist": scan,
            "exact_reads": exact_reads.min(table.len()),
            "recall": round(recall / n, 4),
            "recall_hamming_only_same_reads": round(hamming_recall / n, 4),
            "exact_f32_ms_p50": round(median(&mut exact_ms), 3),
            "shortlist_ms_p50": round(median(&mut shortlist_ms), 3),
        }));
    }
    json!({
        "entries": table.len(),
        "code_bytes_per_entry": centre.words() * 8,
        "table_memory_mib": round(codes.memory_bytes() as f64 / 1048576.0, 1),
        "f32_memory_mib": round((table.len() * dims * 4) as f64 / 1048576.0, 1),
        "coding_ms": round(coding_ms, 1),
        "by_k": per_k,
    })
}

/// What the vector leg does (the same `vectors::shortlist`), with
/// `table` standing in for the index's exact vectors.
fn shortlisted(
    centre: &Centre,
    codes: &CodeTable,
    table: &[Vec<f32>],
    q: &[f32],
    k: usize,
) -> Vec<i64> {
    let scored = shortlist(codes, centre, q, k)
        .iter()
        .map(|&id| (id, dot(q, &table[id as usize])))
        .collect();
    best(scored, k).into_iter().map(|(id, _)| id).collect()
}

fn exact_top(table: &[Vec<f32>], q: &[f32], k: usize) -> Vec<i64> {
    let scored = table
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, dot(q, v)))
        .collect();
    best(scored, k).into_iter().map(|(id, _)| id).collect()
}

pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}
