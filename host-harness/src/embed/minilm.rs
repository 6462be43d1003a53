//! Local sentence embeddings with all-MiniLM-L6-v2 (Apache-2.0), run on the CPU.
//! This module owns loading the model files that `scripts/fetch-model.sh`
//! installs, checking them against pinned hashes, and turning texts into the
//! same 384-dimensional unit vectors that sentence-transformers produces for
//! this model. Nothing here touches the network.
//!
//! The BERT forward pass is written out here (matrix products by
//! `matrixmultiply` over the f32 weights, or, for a batch of up to
//! `FEW_ROWS` tokens such as a query, dot products over a half-precision
//! copy of them) rather than taken from candle: candle adds about 310
//! CPU-seconds to a clean release build against about 95 for these
//! dependencies, and gave the same vectors more slowly. Sequences are packed end
//! to end instead of padded: padding only adds positions that the attention
//! mask and the pooling then ignore, so leaving them out gives the same result
//! for less work. The two paths' vectors differ by the half weights (a
//! cosine of at least 0.99999, tested), so a text's vector can depend on the
//! batch it came in by that much.

use std::ops::Deref;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, ensure, Context, Result};
use half::f16;
use half::slice::HalfFloatSliceExt;
use memmap2::Mmap;
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::pinned;
use tokenizers::{Tokenizer, TruncationParams};

/// sha256 of each file `load` reads, pinned to the same values as
/// `scripts/fetch-model.sh` (hub revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41).
/// The tokenizer and config are checked too: a mismatched vocabulary would give
/// wrong vectors without any error.
const PINNED_FILES: [(&str, &str); 3] = [
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
];

/// sentence-transformers' `max_seq_length` for this model (its
/// sentence_bert_config.json), counting [CLS] and [SEP]. tokenizer.json itself
/// says 128, which sentence-transformers overrides, so we must too.
const MAX_SEQ_LEN: usize = 256;

/// Texts per forward pass: activations grow with the tokens in flight, so this
/// bounds memory however many texts a caller hands over.
const BATCH_SIZE: usize = 32;

/// The fields of config.json that shape the forward pass.
#[derive(Deserialize)]
struct Config {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    vocab_size: usize,
    layer_norm_eps: f32,
    hidden_act: String,
}

pub struct MiniLm {
    tokenizer: Tokenizer,
    word_embeddings: Floats,
    position_embeddings: Vec<f32>,
    /// Every token is segment 0, so only that row of the token-type table is kept.
    token_type_embedding: Vec<f32>,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

struct Layer {
    /// Query, key and value projections, written side by side into one row
    /// per token.
    qkv: [Linear; 3],
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// `y = x W^T + b` with `W` kept as stored: `outputs` rows of `inputs`.
struct Linear {
    weight: Floats,
    /// The weight in half precision, made at the first few-row product of
    /// this layer: a query's few tokens read every weight once, so its
    /// forward pass is bound by memory traffic, which this halves.
    halves: OnceLock<Vec<f16>>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// A run of weights: a view of the mapped model file. Viewing the file
/// instead of copying it out spares a one-query process ~90 MB of fresh
/// pages, which cost more than the query's own forward pass.
struct Floats {
    file: Arc<Mmap>,
    /// Byte offset in `file`, a multiple of 4 (checked at load).
    start: usize,
    len: usize,
}

impl Deref for Floats {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        // SAFETY: the map is page-aligned and `start` a multiple of 4, so the
        // pointer is aligned for f32; `start + 4 * len` lies inside the map
        // (safetensors checked the tensor's extent); the map lives as long as
        // `self`; every bit pattern is an f32, and the host is little-endian
        // like the file (checked at load). The map is shared with the file:
        // this relies on nobody writing or truncating model.safetensors in
        // place while a process runs (it is only ever replaced by a rename;
        // see `pinned::map`).
        unsafe {
            std::slice::from_raw_parts(self.file[self.start..].as_ptr().cast::<f32>(), self.len)
        }
    }
}

struct LayerNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl MiniLm {
    pub const MODEL_NAME: &'static str = "all-MiniLM-L6-v2";
    pub const DIMENSIONS: usize = 384;

    /// Loads config.json, tokenizer.json and model.safetensors from `dir`,
    /// refusing any file whose sha256 is not the pinned one.
    pub fn load(dir: &Path) -> Result<MiniLm> {
        ensure!(
            cfg!(target_endian = "little"),
            "all-MiniLM-L6-v2's weights are little-endian; this host is not"
        );
        let [config, tokenizer, weights] = PINNED_FILES;
        let hint = format!(
            "run scripts/fetch-model.sh {} to install {}",
            dir.display(),
            Self::MODEL_NAME
        );
        let config = pinned::read(&dir.join(config.0), config.1, &hint);
        let tokenizer = pinned::read(&dir.join(tokenizer.0), tokenizer.1, &hint);
        let weights = pinned::map(&dir.join(weights.0), weights.1, &hint);
        let config: Config =
            serde_json::from_slice(&config?).context("parsing all-MiniLM-L6-v2 config.json")?;
        ensure!(
            config.hidden_size == Self::DIMENSIONS
                && config
                    .hidden_size
                    .is_multiple_of(config.num_attention_heads)
                && config.max_position_embeddings >= MAX_SEQ_LEN
                && config.hidden_act == "gelu",
            "config.json does not describe all-MiniLM-L6-v2"
        );

        let mut tokenizer = Tokenizer::from_bytes(tokenizer?)
            .map_err(|e| anyhow!("parsing all-MiniLM-L6-v2 tokenizer.json: {e}"))?;
        // tokenizer.json pads every text to 128 and truncates there; we need
        // no padding and truncate where sentence-transformers does.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_SEQ_LEN,
                ..TruncationParams::default()
            }))
            .map_err(|e| anyhow!("configuring truncation: {e}"))?;

        let weights = Arc::new(weights?);
        let tensors = SafeTensors::deserialize(&weights)
            .context("parsing all-MiniLM-L6-v2 model.safetensors")?;
        let hidden = config.hidden_size;
        let tensor = |name: &str, shape: &[usize]| load_tensor(&weights, &tensors, name, shape);
        let linear = |prefix: &str, outputs: usize, inputs: usize| -> Result<Linear> {
            Ok(Linear {
                weight: tensor(&format!("{prefix}.weight"), &[outputs, inputs])?,
                halves: OnceLock::new(),
                bias: tensor(&format!("{prefix}.bias"), &[outputs])?.to_vec(),
                inputs,
                outputs,
            })
        };
        let layer_norm = |prefix: &str| -> Result<LayerNorm> {
            Ok(LayerNorm {
                weight: tensor(&format!("{prefix}.weight"), &[hidden])?.to_vec(),
                bias: tensor(&format!("{prefix}.bias"), &[hidden])?.to_vec(),
                eps: config.layer_norm_eps,
            })
        };

        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                let [q, k, v] = ["query", "key", "value"]
                    .map(|name| linear(&format!("{p}.attention.self.{name}"), hidden, hidden));
                Ok(Layer {
                    qkv: [q?, k?, v?],
                    attention_out: linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
                    attention_norm: layer_norm(&format!("{p}.attention.output.LayerNorm"))?,
                    intermediate: linear(
                        &format!("{p}.intermediate.dense"),
                        config.intermediate_size,
                        hidden,
                    )?,
                    output: linear(
                        &format!("{p}.output.dense"),
                        hidden,
                        config.intermediate_size,
                    )?,
                    output_norm: layer_norm(&format!("{p}.output.LayerNorm"))?,
                })
            })
            .collect::<Result<_>>()?;

        let token_types = tensor("embeddings.token_type_embeddings.weight", &[2, hidden])?;
        Ok(MiniLm {
            tokenizer,
            word_embeddings: tensor(
                "embeddings.word_embeddings.weight",
                &[config.vocab_size, hidden],
            )?,
            position_embeddings: tensor(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, hidden],
            )?
            .to_vec(),
            token_type_embedding: token_types[..hidden].to_vec(),
            embeddings_norm: layer_norm("embeddings.LayerNorm")?,
            layers,
            heads: config.num_attention_heads,
        })
    }

    /// One L2-normalised, mean-pooled vector per text, in input order. Texts
    /// longer than 256 word pieces (including [CLS] and [SEP]) are truncated.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH_SIZE) {
            let encodings = self
                .tokenizer
                .encode_batch(chunk.iter().map(String::as_str).collect(), true)
                .map_err(|e| anyhow!("tokenizing: {e}"))?;
            let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
            // Inside the pool, so each of the pass's fifty-odd parallel steps
            // is shared with an idle worker directly, rather than handed over
            // from outside while this thread sleeps (two context switches a
            // step: a fifth of a query's forward pass).
            out.extend(rayon::scope(|_| self.forward(&ids)));
        }
        Ok(out)
    }

    /// Runs BERT over the sequences packed one after another (a row per
    /// token), then mean-pools and normalises each sequence's rows.
    fn forward(&self, sequences: &[&[u32]]) -> Vec<Vec<f32>> {
        let hidden = Self::DIMENSIONS;
        let spans: Vec<(usize, usize)> = sequences
            .iter()
            .scan(0, |start, ids| {
                let span = (*start, ids.len());
                *start += ids.len();
                Some(span)
            })
            .collect();

        let mut x: Vec<f32> = sequences
            .iter()
            .flat_map(|ids| ids.iter().enumerate())
            .flat_map(|(position, &id)| {
                let word = &self.word_embeddings[id as usize * hidden..][..hidden];
                let place = &self.position_embeddings[position * hidden..][..hidden];
                (0..hidden).map(move |i| word[i] + place[i] + self.token_type_embedding[i])
            })
            .collect();
        self.embeddings_norm.apply(&mut x, None);

        for layer in &self.layers {
            let mut qkv = vec![0.0f32; x.len() * 3];
            for (i, projection) in layer.qkv.iter().enumerate() {
                projection.apply_into(&x, &mut qkv, 3 * hidden, i * hidden);
            }
            let context = self.attention(&qkv, &spans);
            let attended = layer.attention_out.apply(&context);
            layer.attention_norm.apply(&mut x, Some(&attended));
            let mut inner = layer.intermediate.apply(&x);
            inner.par_iter_mut().for_each(|v| *v = gelu(*v));
            let output = layer.output.apply(&inner);
            layer.output_norm.apply(&mut x, Some(&output));
        }

        spans
            .iter()
            .map(|&(start, len)| {
                // sentence-transformers' Pooling(mean) then Normalize. The
                // division by the token count cancels in the normalisation, and
                // its floors (count >= 1e-9, norm >= 1e-12) never bite, as every
                // sequence holds at least [CLS] and [SEP]: a sum is enough.
                let mut sum = vec![0.0f32; hidden];
                for row in x[start * hidden..(start + len) * hidden].chunks_exact(hidden) {
                    sum.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
                sum.iter_mut().for_each(|v| *v /= norm);
                sum
            })
            .collect()
    }

    /// Multi-head self-attention of each sequence over itself. `qkv` holds a
    /// row per token: its query, key and value side by side.
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)]) -> Vec<f32> {
        let hidden = Self::DIMENSIONS;
        let head_size = hidden / self.heads;
        let scale = 1.0 / (head_size as f32).sqrt();
        let mut context = vec![0.0f32; qkv.len() / 3];

        // Hand each sequence its own rows of `context`, so sequences can run
        // in parallel without sharing anything writable.
        let mut rest = context.as_mut_slice();
        let mut jobs = Vec::with_capacity(spans.len());
        for &(start, len) in spans {
            let (rows, tail) = rest.split_at_mut(len * hidden);
            jobs.push((start, len, rows));
            rest = tail;
        }
        jobs.into_par_iter().for_each(|(start, len, rows)| {
            let seq = &qkv[start * 3 * hidden..(start + len) * 3 * hidden];
            let mut scores = vec![0.0f32; len * len];
            for head in 0..self.heads {
                let (q, k, v) = (
                    head * head_size,
                    hidden + head * head_size,
                    2 * hidden + head * head_size,
                );
                let stride = 3 * hidden as isize;
                // scores = scale * Q K^T, then a row-wise softmax.
                // SAFETY: every pointer, extent and stride below stays inside
                // `seq` (len rows of 3 * hidden), `scores` (len x len) or
                // `rows` (len rows of hidden).
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        head_size,
                        len,
                        scale,
                        seq[q..].as_ptr(),
                        stride,
                        1,
                        seq[k..].as_ptr(),
                        1,
                        stride,
                        0.0,
                        scores.as_mut_ptr(),
                        len as isize,
                        1,
                    );
                }
                for row in scores.chunks_exact_mut(len) {
                    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    row.iter_mut().for_each(|s| *s = (*s - max).exp());
                    let sum: f32 = row.iter().sum();
                    row.iter_mut().for_each(|s| *s /= sum);
                }
                // This head's slice of the context = scores V.
                // SAFETY: as above.
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        len,
                        head_size,
                        1.0,
                        scores.as_ptr(),
                        len as isize,
                        1,
                        seq[v..].as_ptr(),
                        stride,
                        1,
                        0.0,
                        rows[head * head_size..].as_mut_ptr(),
                        hidden as isize,
                        1,
                    );
                }
            }
        });
        context
    }
}

impl Linear {
    /// `x` holds one row of `inputs` per token; returns a row of `outputs` each.
    fn apply(&self, x: &[f32]) -> Vec<f32> {
        let mut y = vec![0.0f32; x.len() / self.inputs * self.outputs];
        self.apply_into(x, &mut y, self.outputs, 0);
        y
    }

    /// Like `apply`, into columns `column..column + outputs` of `y`, whose
    /// rows are `width` wide.
    fn apply_into(&self, x: &[f32], y: &mut [f32], width: usize, column: usize) {
        let rows = x.len() / self.inputs;
        assert!(
            x.len() == rows * self.inputs
                && y.len() == rows * width
                && column + self.outputs <= width
        );
        if rows <= FEW_ROWS {
            return self.apply_to_few_rows(x, y, width, column);
        }
        // Split the rows between threads; each block is one matrix product.
        let block = rows.div_ceil(rayon::current_num_threads()).max(1);
        y.par_chunks_mut(block * width)
            .zip(x.par_chunks(block * self.inputs))
            .for_each(|(y, x)| {
                for row in y.chunks_exact_mut(width) {
                    row[column..column + self.outputs].copy_from_slice(&self.bias);
                }
                // y += x W^T, reading the stored `outputs x inputs` weight as
                // its transpose through swapped strides.
                // SAFETY: x is (y.len() / width) x inputs, W is outputs x
                // inputs, all contiguous; y is as many rows of `width`, of
                // which columns column..column + outputs (inside the row, as
                // asserted) are written.
                unsafe {
                    matrixmultiply::sgemm(
                        x.len() / self.inputs,
                        self.inputs,
                        self.outputs,
                        1.0,
                        x.as_ptr(),
                        self.inputs as isize,
                        1,
                        self.weight.as_ptr(),
                        1,
                        self.inputs as isize,
                        1.0,
                        y[column..].as_mut_ptr(),
                        width as isize,
                        1,
                    );
                }
            });
    }
}

impl Linear {
    /// `apply_into` for a handful of rows (a query): each output is a dot
    /// product of a row with one of the weight's rows, which reads the
    /// weight once, in half precision. Threads take runs of outputs,
    /// written transposed and then put in place.
    fn apply_to_few_rows(&self, x: &[f32], y: &mut [f32], width: usize, column: usize) {
        const OUTPUTS_PER_TASK: usize = 64;
        let rows = x.len() / self.inputs;
        if rows == 0 {
            return;
        }
        let halves = self.halves();
        let mut transposed = vec![0.0f32; self.outputs * rows];
        transposed
            .par_chunks_mut(OUTPUTS_PER_TASK * rows)
            .enumerate()
            .for_each(|(task, cells)| {
                let first = task * OUTPUTS_PER_TASK;
                let weights = &halves[first * self.inputs..][..cells.len() / rows * self.inputs];
                dot_products(x, weights, self.inputs, cells);
                for (by_row, bias) in cells.chunks_exact_mut(rows).zip(&self.bias[first..]) {
                    by_row.iter_mut().for_each(|cell| *cell += bias);
                }
            });
        for (row, out) in y.chunks_exact_mut(width).enumerate() {
            for (output, cell) in out[column..column + self.outputs].iter_mut().enumerate() {
                *cell = transposed[output * rows + row];
            }
        }
    }

    /// Made on one thread: a parallel loop inside `get_or_init` could let
    /// a pool thread, waiting for its parts, take up another forward pass
    /// that waits on the same lock (rayon-rs/rayon#1251).
    fn halves(&self) -> &[f16] {
        self.halves.get_or_init(|| {
            let mut halves = vec![f16::ZERO; self.weight.len()];
            halves.convert_from_f32_slice(&self.weight);
            halves
        })
    }
}

/// Rows (tokens) up to which `Linear` multiplies by dot products rather than
/// by `sgemm`. For a query's few tokens, sgemm's copying (packing) of every
/// weight matrix in each thread was most of the forward pass (a five-word
/// query: 22 ms, 6 ms by dot products); from ~40 tokens on its kernel wins,
/// and 32 keeps a margin below that.
const FEW_ROWS: usize = 32;

/// Eight lanes: one AVX register of f32s.
const LANES: usize = 8;

/// `out[o * rows + r] = x_r · w_o` for every row `x_r` of `x` and `w_o` of
/// `w`, all rows `n` long. With AVX2, FMA and F16C where the CPU has them
/// (found at run time; the build targets the x86-64 baseline).
fn dot_products(x: &[f32], w: &[f16], n: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
    {
        // SAFETY: the CPU has all three features, just checked.
        return unsafe { dot_products_avx2_fma_f16c(x, w, n, out) };
    }
    dot_products_with(
        x,
        w,
        n,
        out,
        |x, y, sum| sum + x * y,
        |w| w.map(f16::to_f32),
    )
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn dot_products_avx2_fma_f16c(x: &[f32], w: &[f16], n: usize, out: &mut [f32]) {
    use std::arch::x86_64::{_mm256_cvtph_ps, _mm_loadu_si128};
    let widen = |w: [f16; LANES]| -> [f32; LANES] {
        // SAFETY: `w` is 16 bytes (f16 is a transparent u16), read unaligned;
        // an __m256 is eight f32s.
        unsafe { std::mem::transmute(_mm256_cvtph_ps(_mm_loadu_si128(w.as_ptr().cast()))) }
    };
    dot_products_with(x, w, n, out, |x, y, sum| x.mul_add(y, sum), widen)
}

/// Tiles of rows by outputs, so each piece of a row loaded into registers
/// serves several outputs and each piece of a weight row several rows: one
/// dot product at a time loads two operands per multiply-add, which bounds
/// it at half the CPU's rate.
#[inline(always)]
fn dot_products_with(
    x: &[f32],
    w: &[f16],
    n: usize,
    out: &mut [f32],
    multiply_add: impl Fn(f32, f32, f32) -> f32 + Copy,
    widen: impl Fn([f16; LANES]) -> [f32; LANES] + Copy,
) {
    let rows = x.len() / n;
    let outputs = w.len() / n;
    assert!(x.len() == rows * n && w.len() == outputs * n && out.len() == rows * outputs);
    let ops = (multiply_add, widen);
    let mut output = 0;
    while output < outputs {
        let wide = outputs - output >= 3;
        let mut row = 0;
        while row < rows {
            let at = (x, w, n, row, output, rows);
            row += match (rows - row, wide) {
                (3.., true) => tile::<3, 3>(at, out, ops),
                (2, true) => tile::<2, 3>(at, out, ops),
                (_, true) => tile::<1, 3>(at, out, ops),
                (3.., false) => tile::<3, 1>(at, out, ops),
                (2, false) => tile::<2, 1>(at, out, ops),
                (_, false) => tile::<1, 1>(at, out, ops),
            };
        }
        output += if wide { 3 } else { 1 };
    }
}

/// The dot products of rows `row..row + R` with outputs
/// `output..output + C`, a register of lanes at a time, with every running
/// sum held in a register: 3 x 3 sums, the three row pieces and a weight
/// piece with its widening fit AVX2's sixteen (3 x 4 spilled). Returns `R`.
#[inline(always)]
fn tile<const R: usize, const C: usize>(
    (x, w, n, row, output, rows): (&[f32], &[f16], usize, usize, usize, usize),
    out: &mut [f32],
    (multiply_add, widen): (
        impl Fn(f32, f32, f32) -> f32 + Copy,
        impl Fn([f16; LANES]) -> [f32; LANES] + Copy,
    ),
) -> usize {
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[(row + r) * n..][..n]);
    let ws: [&[f16]; C] = std::array::from_fn(|c| &w[(output + c) * n..][..n]);
    let x_lanes = xs.map(|x| x.as_chunks::<LANES>().0);
    let w_lanes = ws.map(|w| w.as_chunks::<LANES>().0);
    let whole = n / LANES;
    let mut sums = [[[0.0f32; LANES]; C]; R];
    for k in 0..whole {
        let pieces: [[f32; LANES]; R] = std::array::from_fn(|r| x_lanes[r][k]);
        for c in 0..C {
            let weight = widen(w_lanes[c][k]);
            for r in 0..R {
                for l in 0..LANES {
                    sums[r][c][l] = multiply_add(pieces[r][l], weight[l], sums[r][c][l]);
                }
            }
        }
    }
    for r in 0..R {
        for c in 0..C {
            let rest: f32 = xs[r][whole * LANES..]
                .iter()
                .zip(&ws[c][whole * LANES..])
                .map(|(a, b)| a * b.to_f32())
                .sum();
            out[(output + c) * rows + row + r] = sums[r][c].iter().sum::<f32>() + rest;
        }
    }
    R
}

impl LayerNorm {
    /// `x = LayerNorm(x + residual)` row by row, as BERT's post-norm blocks do.
    fn apply(&self, x: &mut [f32], residual: Option<&[f32]>) {
        let width = self.weight.len();
        x.par_chunks_mut(width).enumerate().for_each(|(i, row)| {
            if let Some(residual) = residual {
                let add = &residual[i * width..][..width];
                row.iter_mut().zip(add).for_each(|(v, r)| *v += r);
            }
            let mean = row.iter().sum::<f32>() / width as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        });
    }
}

/// The exact (erf) GELU that BERT's "gelu" means, not the tanh approximation.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf as a ratio of two polynomials in x² over [-4, 4] (beyond, erf is ±1
/// in f32), the rational approximation XLA and Eigen use for f32: no
/// branches, so the compiler vectorises it, where libm's erff was a tenth
/// of a forward pass. Within 1e-6 of erff (tested).
fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_3e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329_3e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA.iter().fold(0.0f32, |sum, &a| sum * x2 + a);
    let q = BETA.iter().fold(0.0f32, |sum, &b| sum * x2 + b);
    x * p / q
}

/// A view of a float32 tensor of the mapped file, after checking it has the
/// shape the config implies and lies where it can be read as f32s.
fn load_tensor(
    file: &Arc<Mmap>,
    tensors: &SafeTensors,
    name: &str,
    shape: &[usize],
) -> Result<Floats> {
    let view = tensors
        .tensor(name)
        .with_context(|| format!("model.safetensors lacks {name}"))?;
    ensure!(
        view.dtype() == Dtype::F32 && view.shape() == shape,
        "model.safetensors: {name} is {:?} {:?}, expected F32 {shape:?}",
        view.dtype(),
        view.shape()
    );
    let start = view.data().as_ptr() as usize - file.as_ptr() as usize;
    ensure!(
        start.is_multiple_of(4),
        "model.safetensors: {name} is not 4-byte aligned"
    );
    Ok(Floats {
        file: Arc::clone(file),
        start,
        len: view.data().len() / 4,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    /// Loaded once and shared by the tests, which also proves `MiniLm` is
    /// `Send + Sync` (it is meant to live on a worker thread).
    fn model() -> &'static MiniLm {
        static MODEL: OnceLock<MiniLm> = OnceLock::new();
        MODEL.get_or_init(|| {
            let dir = crate::config::default_model_dir();
            MiniLm::load(&dir).unwrap_or_else(|e| {
                panic!(
                    "all-MiniLM-L6-v2 is not installed in {}: {e:#}\n\
                     Install it with `scripts/fetch-model.sh` (it honours MEMORY_CORE_MODEL_DIR).",
                    dir.display()
                )
            })
        })
    }

    /// Changes topic after ~150 word pieces and runs to ~370, so cutting at
    /// 128, at 256 or not at all gives vectors that differ by more than 0.04.
    fn long_text() -> String {
        let a = "The committee reviewed every clause of the agreement before voting.";
        let b = "Volcanic ash grounded all flights across northern Europe for a week.";
        [vec![a; 12], vec![b; 20]].concat().join(" ")
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn matches_reference_vectors() {
        // First five components from an independent float64 numpy BERT fed by
        // transformers' pure-Python BertTokenizer over vocab.txt; the first two
        // also match published sentence-transformers output to 1e-6.
        let pinned: [(String, [f32; 5]); 4] = [
            (
                "This is an example sentence".into(),
                [0.067657, 0.063496, 0.048713, 0.079305, 0.037448],
            ),
            (
                String::new(),
                [-0.118838, 0.048299, -0.002548, -0.011011, 0.051951],
            ),
            (
                "Naïve café owners in Zürich serve crème brûlée — 東京 too! 🙂".into(),
                [0.072361, -0.002200, 0.054970, -0.043000, -0.008547],
            ),
            (
                long_text(),
                [0.045350, -0.005702, 0.117226, 0.007735, 0.010754],
            ),
        ];
        let texts: Vec<String> = pinned.iter().map(|(text, _)| text.clone()).collect();
        // One call, so the short texts are packed next to the long one and
        // go through sgemm over f32; then each alone, so the short ones take
        // the dot-product path over half-precision weights.
        let mut vectors = model().embed(&texts).unwrap();
        vectors.extend(
            texts
                .iter()
                .flat_map(|text| model().embed(std::slice::from_ref(text)).unwrap()),
        );
        let pinned = [pinned.clone(), pinned].concat();
        assert_eq!(vectors.len(), pinned.len());
        for ((text, expected), vector) in pinned.iter().zip(&vectors) {
            assert_eq!(vector.len(), MiniLm::DIMENSIONS);
            assert!((dot(vector, vector) - 1.0).abs() < 1e-5);
            let worst = vector
                .iter()
                .zip(expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(
                worst < 1e-4,
                "{:?}: got {:?}, expected {expected:?}",
                text.chars().take(40).collect::<String>(),
                &vector[..5]
            );
        }
    }

    #[test]
    fn batching_changes_vectors_only_by_the_half_weights() {
        // More texts than BATCH_SIZE, of varied lengths, so chunking and
        // packing sequences side by side are both exercised; alone, each
        // text is few enough tokens for the dot-product path (FEW_ROWS) over
        // half-precision weights, together they go through sgemm over f32.
        let texts: Vec<String> = (0..40)
            .map(|i| format!("item {i}: {}", "the river bends ".repeat(i % 9)))
            .collect();
        let together = model().embed(&texts).unwrap();
        for (text, batched) in texts.iter().zip(&together) {
            let alone = &model().embed(std::slice::from_ref(text)).unwrap()[0];
            let worst = alone
                .iter()
                .zip(batched)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            // Measured on 60 queries: cosine >= 0.9999994, components within
            // 1.4e-4. A wrong product or a lost bias moves them by far more.
            assert!(
                dot(alone, batched) > 0.99999 && worst < 5e-4,
                "{text:?} differs by {worst} when batched"
            );
        }
    }

    #[test]
    fn tiled_dot_products_match_plain_ones() {
        // Sizes that leave remainders everywhere: rows past a tile of three,
        // outputs past a tile of three, inputs past a register of eight.
        let value = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 250.0;
        for (rows, outputs, n) in [(1, 1, 1), (2, 5, 9), (4, 7, 16), (7, 64, 37), (3, 3, 8)] {
            let x: Vec<f32> = (0..rows * n).map(value).collect();
            let w: Vec<f16> = (0..outputs * n)
                .map(|i| f16::from_f32(value(i + 3)))
                .collect();
            let plain = |o: usize, r: usize| -> f64 {
                (0..n)
                    .map(|i| f64::from(x[r * n + i]) * f64::from(w[o * n + i].to_f32()))
                    .sum()
            };
            let mut fast = vec![0.0f32; rows * outputs];
            dot_products(&x, &w, n, &mut fast);
            let mut portable = vec![0.0f32; rows * outputs];
            dot_products_with(
                &x,
                &w,
                n,
                &mut portable,
                |x, y, s| s + x * y,
                |w| w.map(f16::to_f32),
            );
            for o in 0..outputs {
                for r in 0..rows {
                    let expected = plain(o, r);
                    for got in [fast[o * rows + r], portable[o * rows + r]] {
                        assert!(
                            (f64::from(got) - expected).abs() < 1e-4 * (1.0 + expected.abs()),
                            "{rows}x{outputs}x{n} at ({r}, {o}): {got} vs {expected}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn paraphrase_is_closer_than_unrelated_text() {
        let texts = [
            "The quick brown fox jumps over the lazy dog.",
            "A fast brown fox leaps over a sleepy dog.",
            "Quarterly tax filings are due at the end of the month.",
        ]
        .map(String::from);
        let v = model().embed(&texts).unwrap();
        let (paraphrase, unrelated) = (dot(&v[0], &v[1]), dot(&v[0], &v[2]));
        // Reference: 0.8524 and 0.0847.
        assert!(
            paraphrase > 0.8 && unrelated < 0.2,
            "{paraphrase} vs {unrelated}"
        );
    }

    #[test]
    fn erf_matches_libm() {
        let worst = (-60_000..=60_000)
            .map(|i| i as f32 / 10_000.0)
            .map(|x| (erf(x) - libm::erff(x)).abs())
            .fold(0.0, f32::max);
        assert!(worst < 1e-6, "erf is off by {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(f32::INFINITY), 1.0);
        assert_eq!(erf(-9.0), -1.0);
    }

    #[test]
    fn no_texts_give_no_vectors() {
        assert!(model().embed(&[]).unwrap().is_empty());
    }

    #[test]
    fn refuses_missing_or_altered_files() {
        let dir = std::env::temp_dir().join(format!("minilm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = MiniLm::load(&dir)
            .err()
            .expect("an empty directory must not load");
        std::fs::write(dir.join("config.json"), b"{}").unwrap();
        let altered = MiniLm::load(&dir)
            .err()
            .expect("an altered config.json must not load");
        std::fs::remove_dir_all(&dir).unwrap();

        for e in [&missing, &altered] {
            assert!(format!("{e:#}").contains("scripts/fetch-model.sh"), "{e:#}");
        }
        assert!(format!("{altered:#}").contains("sha256"), "{altered:#}");
    }
}
