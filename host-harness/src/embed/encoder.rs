//! Local sentence embeddings on the CPU: all-MiniLM-L6-v2 (Apache-2.0, the
//! default) and all-mpnet-base-v2 (Apache-2.0, larger and slower). This
//! module owns loading the model files that `scripts/fetch-model.sh`
//! installs, checking them against pinned hashes, and turning texts into the
//! same unit vectors that sentence-transformers produces for each model.
//! Nothing here touches the network.
//!
//! The forward pass is written out here (matrix products by
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
//!
//! Both models are post-norm transformer encoders with mean pooling; they
//! differ in three places (`Architecture`): BERT (MiniLM) adds a token-type
//! embedding and counts positions from 0; MPNet counts them past its padding
//! token (`positions`) and adds a learned bias per head and relative-distance
//! bucket to every attention score.

use std::ops::Deref;
use std::path::{Path, PathBuf};
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

/// The local models the harness can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalModel {
    /// sentence-transformers/all-MiniLM-L6-v2: 6 layers, 384 dimensions.
    MiniLm,
    /// sentence-transformers/all-mpnet-base-v2: 12 layers, 768 dimensions.
    MpNet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Architecture {
    Bert,
    MpNet,
}

impl LocalModel {
    /// The model an embedder's name (`--embedder`, `memory.search.provider`)
    /// runs here, if it names a local one.
    pub fn named(name: &str) -> Option<LocalModel> {
        match name {
            "minilm" | "local" | "all-MiniLM-L6-v2" => Some(LocalModel::MiniLm),
            "mpnet" | "all-mpnet-base-v2" => Some(LocalModel::MpNet),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LocalModel::MiniLm => "all-MiniLM-L6-v2",
            LocalModel::MpNet => "all-mpnet-base-v2",
        }
    }

    pub fn dimensions(self) -> usize {
        match self {
            LocalModel::MiniLm => 384,
            LocalModel::MpNet => 768,
        }
    }

    /// sentence-transformers' `max_seq_length` (its
    /// sentence_bert_config.json), counting the start and end tokens.
    /// MiniLM's tokenizer.json says 128, which sentence-transformers
    /// overrides, so we must too.
    fn max_seq_len(self) -> usize {
        match self {
            LocalModel::MiniLm => 256,
            LocalModel::MpNet => 384,
        }
    }

    fn architecture(self) -> Architecture {
        match self {
            LocalModel::MiniLm => Architecture::Bert,
            LocalModel::MpNet => Architecture::MpNet,
        }
    }

    /// sha256 of each file `load` reads, pinned to the same values as
    /// `scripts/fetch-model.sh`: the upstream files at hub revisions
    /// 1110a243fdf4706b3f48f1d95db1a4f5529b4d41 (MiniLM) and
    /// e8c3b32edf5434bc2275fc9bab85f82640a19130 (MPNet). The tokenizer and
    /// config are checked too: a mismatched vocabulary would give wrong
    /// vectors without any error.
    fn pinned_files(self) -> [(&'static str, &'static str); 3] {
        match self {
            LocalModel::MiniLm => [
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
            ],
            LocalModel::MpNet => [
                (
                    "config.json",
                    "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
                ),
                (
                    "tokenizer.json",
                    "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
                ),
                (
                    "model.safetensors",
                    "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                ),
            ],
        }
    }

    /// What installs the model in `dir`.
    fn fetch_hint(self, dir: &Path) -> String {
        let flag = match self {
            LocalModel::MiniLm => String::new(),
            LocalModel::MpNet => format!("--model {} ", self.name()),
        };
        format!(
            "run scripts/fetch-model.sh {flag}{} to install {}",
            dir.display(),
            self.name()
        )
    }

    /// Where the model is looked for unless a directory is given:
    /// `$MEMORY_CORE_MODEL_DIR` for MiniLM (the default model), else
    /// `<cache>/models/<name>`, the directory `scripts/fetch-model.sh`
    /// installs into.
    pub fn default_dir(self, cache_home: &Path) -> PathBuf {
        let env = match self {
            LocalModel::MiniLm => std::env::var_os("MEMORY_CORE_MODEL_DIR"),
            LocalModel::MpNet => None,
        };
        env.map(PathBuf::from)
            .unwrap_or_else(|| cache_home.join("models").join(self.name()))
    }
}

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
    /// MPNet's relative-position buckets (32).
    #[serde(default)]
    relative_attention_num_buckets: Option<usize>,
    /// MPNet counts positions past its padding token (1).
    #[serde(default)]
    pad_token_id: Option<u32>,
}

/// MPNet's `relative_position_bucket` reaches its last bucket at this
/// distance (transformers' default, which MPNet's encoder uses).
const RELATIVE_MAX_DISTANCE: usize = 128;

pub struct Encoder {
    model: LocalModel,
    tokenizer: Tokenizer,
    word_embeddings: Floats,
    position_embeddings: Vec<f32>,
    /// How positions are counted: from 0 for BERT; for MPNet from one past
    /// its padding token's id, skipping that token wherever it occurs (a
    /// literal `<pad>` in a text), which keeps position `pad`, as
    /// transformers' `create_position_ids_from_input_ids` does.
    padding: Option<u32>,
    /// Every token is segment 0, so only that row of BERT's token-type table
    /// is kept; zeros for MPNet, which has none.
    token_type_embedding: Vec<f32>,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    /// MPNet's bias per (relative-distance bucket, head), added to every
    /// attention score; empty for BERT.
    relative_bias: Vec<f32>,
    relative_buckets: usize,
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

impl Encoder {
    /// Loads config.json, tokenizer.json and model.safetensors of `model`
    /// from `dir`, refusing any file whose sha256 is not the pinned one.
    pub fn load(model: LocalModel, dir: &Path) -> Result<Encoder> {
        let name = model.name();
        ensure!(
            cfg!(target_endian = "little"),
            "{name}'s weights are little-endian; this host is not"
        );
        let [config, tokenizer, weights] = model.pinned_files();
        let hint = model.fetch_hint(dir);
        let config = pinned::read(&dir.join(config.0), config.1, &hint);
        let tokenizer = pinned::read(&dir.join(tokenizer.0), tokenizer.1, &hint);
        let weights = pinned::map(&dir.join(weights.0), weights.1, &hint);
        let config: Config = serde_json::from_slice(&config?)
            .with_context(|| format!("parsing {name} config.json"))?;
        let architecture = model.architecture();
        let padding = match architecture {
            Architecture::Bert => None,
            Architecture::MpNet => config.pad_token_id,
        };
        ensure!(
            config.hidden_size == model.dimensions()
                && config
                    .hidden_size
                    .is_multiple_of(config.num_attention_heads)
                && (architecture == Architecture::Bert) == padding.is_none()
                && config.max_position_embeddings
                    > padding.unwrap_or(0) as usize + model.max_seq_len()
                && config.hidden_act == "gelu"
                && (architecture == Architecture::Bert)
                    == config.relative_attention_num_buckets.is_none(),
            "config.json does not describe {name}"
        );

        let mut tokenizer = Tokenizer::from_bytes(tokenizer?)
            .map_err(|e| anyhow!("parsing {name} tokenizer.json: {e}"))?;
        // tokenizer.json may pad every text and truncate at its own length;
        // we need no padding and truncate where sentence-transformers does.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: model.max_seq_len(),
                ..TruncationParams::default()
            }))
            .map_err(|e| anyhow!("configuring truncation: {e}"))?;

        let weights = Arc::new(weights?);
        let tensors = SafeTensors::deserialize(&weights)
            .with_context(|| format!("parsing {name} model.safetensors"))?;
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
        // Where each architecture keeps the attention's weights.
        let (projections, attention_out, attention_norm) = match architecture {
            Architecture::Bert => (
                [
                    "attention.self.query",
                    "attention.self.key",
                    "attention.self.value",
                ],
                "attention.output.dense",
                "attention.output.LayerNorm",
            ),
            Architecture::MpNet => (
                ["attention.attn.q", "attention.attn.k", "attention.attn.v"],
                "attention.attn.o",
                "attention.LayerNorm",
            ),
        };

        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                let [q, k, v] =
                    projections.map(|name| linear(&format!("{p}.{name}"), hidden, hidden));
                Ok(Layer {
                    qkv: [q?, k?, v?],
                    attention_out: linear(&format!("{p}.{attention_out}"), hidden, hidden)?,
                    attention_norm: layer_norm(&format!("{p}.{attention_norm}"))?,
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

        let token_type_embedding = match architecture {
            Architecture::Bert => {
                tensor("embeddings.token_type_embeddings.weight", &[2, hidden])?[..hidden].to_vec()
            }
            Architecture::MpNet => vec![0.0; hidden],
        };
        let relative_buckets = config.relative_attention_num_buckets.unwrap_or(0);
        let relative_bias = match architecture {
            Architecture::Bert => Vec::new(),
            Architecture::MpNet => tensor(
                "encoder.relative_attention_bias.weight",
                &[relative_buckets, config.num_attention_heads],
            )?
            .to_vec(),
        };
        Ok(Encoder {
            model,
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
            padding,
            token_type_embedding,
            embeddings_norm: layer_norm("embeddings.LayerNorm")?,
            layers,
            heads: config.num_attention_heads,
            relative_bias,
            relative_buckets,
        })
    }

    /// One L2-normalised, mean-pooled vector per text, in input order. Texts
    /// longer than the model's sequence length (256 word pieces for MiniLM,
    /// 384 for MPNet, counting the start and end tokens) are truncated.
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

    /// Runs the encoder over the sequences packed one after another (a row per
    /// token), then mean-pools and normalises each sequence's rows.
    fn forward(&self, sequences: &[&[u32]]) -> Vec<Vec<f32>> {
        let hidden = self.model.dimensions();
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
            .flat_map(|ids| ids.iter().zip(positions(self.padding, ids)))
            .flat_map(|(&id, position)| {
                let word = &self.word_embeddings[id as usize * hidden..][..hidden];
                let place = &self.position_embeddings[position * hidden..][..hidden];
                (0..hidden).map(move |i| word[i] + place[i] + self.token_type_embedding[i])
            })
            .collect();
        self.embeddings_norm.apply(&mut x, None);

        // MPNet: the relative-distance bucket of every distance in the
        // longest sequence, from −(longest − 1) on; the same in every layer.
        let longest = spans.iter().map(|&(_, len)| len).max().unwrap_or(0);
        let buckets: Vec<usize> = if self.relative_bias.is_empty() {
            Vec::new()
        } else {
            buckets_by_distance(longest, self.relative_buckets)
        };
        for layer in &self.layers {
            let mut qkv = vec![0.0f32; x.len() * 3];
            for (i, projection) in layer.qkv.iter().enumerate() {
                projection.apply_into(&x, &mut qkv, 3 * hidden, i * hidden);
            }
            let context = self.attention(&qkv, &spans, &buckets, longest);
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
    /// row per token: its query, key and value side by side. `buckets`
    /// (MPNet; empty for BERT) holds the relative-distance bucket of each
    /// distance from −(longest − 1) on.
    fn attention(
        &self,
        qkv: &[f32],
        spans: &[(usize, usize)],
        buckets: &[usize],
        longest: usize,
    ) -> Vec<f32> {
        let hidden = self.model.dimensions();
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
                if !buckets.is_empty() {
                    // Row = query, column = key: the distance is column − row.
                    for (row, scores) in scores.chunks_exact_mut(len).enumerate() {
                        for (score, &bucket) in scores
                            .iter_mut()
                            .zip(buckets_of_row(buckets, longest, row, len))
                        {
                            *score += self.relative_bias[bucket * self.heads + head];
                        }
                    }
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

/// The position of each token of a sequence: 0, 1, 2, … without a padding
/// token (BERT); with one (MPNet), one past its id onwards, the padding
/// token itself, wherever it occurs, keeping its id, as transformers'
/// `create_position_ids_from_input_ids` counts them.
fn positions(padding: Option<u32>, ids: &[u32]) -> impl Iterator<Item = usize> + '_ {
    ids.iter().scan(0usize, move |seen, &id| {
        Some(match padding {
            None => {
                *seen += 1;
                *seen - 1
            }
            Some(pad) if id == pad => pad as usize,
            Some(pad) => {
                *seen += 1;
                pad as usize + *seen
            }
        })
    })
}

/// The relative-distance bucket of every distance a sequence of up to
/// `longest` tokens holds, from −(longest − 1) to longest − 1.
fn buckets_by_distance(longest: usize, buckets: usize) -> Vec<usize> {
    (0..(2 * longest).saturating_sub(1))
        .map(|at| {
            relative_bucket(
                at as i64 - (longest as i64 - 1),
                buckets,
                RELATIVE_MAX_DISTANCE,
            )
        })
        .collect()
}

/// The buckets of one query row (`row`) of a sequence of `len` tokens, by
/// key (column): the distance is column − row.
fn buckets_of_row(table: &[usize], longest: usize, row: usize, len: usize) -> &[usize] {
    let from = longest - 1 - row;
    &table[from..from + len]
}

/// MPNet's `relative_position_bucket` for a key `relative` positions after
/// the query (negative: before it): half the buckets for each direction;
/// in each, distances below a quarter of the buckets exactly, the rest
/// logarithmically up to `max_distance`, beyond which they share the last.
/// In f32, as transformers computes it, so a distance on a boundary lands
/// in the same bucket.
fn relative_bucket(relative: i64, buckets: usize, max_distance: usize) -> usize {
    let half = buckets / 2;
    let n = -relative;
    let side = if n < 0 { half } else { 0 };
    let n = n.unsigned_abs() as usize;
    let max_exact = half / 2;
    if n < max_exact {
        return side + n;
    }
    let scale = ((max_distance as f64) / (max_exact as f64)).ln() as f32;
    let large = max_exact
        + ((n as f32 / max_exact as f32).ln() / scale * (half - max_exact) as f32) as usize;
    side + large.min(half - 1)
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

    /// Loaded once and shared by the tests, which also proves `Encoder` is
    /// `Send + Sync` (it is meant to live on a worker thread).
    fn model() -> &'static Encoder {
        static MODEL: OnceLock<Encoder> = OnceLock::new();
        MODEL.get_or_init(|| {
            let dir = crate::config::default_model_dir();
            Encoder::load(LocalModel::MiniLm, &dir).unwrap_or_else(|e| {
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

    /// all-mpnet-base-v2 when it is installed (`scripts/fetch-model.sh
    /// --model all-mpnet-base-v2`), else `None`; with
    /// MEMORY_CORE_REQUIRE_MPNET=1 (CI) a missing model fails instead.
    fn mpnet() -> Option<&'static Encoder> {
        static MODEL: OnceLock<Option<Encoder>> = OnceLock::new();
        MODEL
            .get_or_init(|| {
                let dir = LocalModel::MpNet.default_dir(&crate::config::cache_home());
                match Encoder::load(LocalModel::MpNet, &dir) {
                    Ok(model) => Some(model),
                    Err(e) if std::env::var_os("MEMORY_CORE_REQUIRE_MPNET").is_some() => {
                        panic!(
                            "all-mpnet-base-v2 is not installed in {}: {e:#}",
                            dir.display()
                        )
                    }
                    Err(e) => {
                        eprintln!("skipped: all-mpnet-base-v2 is not installed: {e:#}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The largest difference between matching components (over the shorter).
    fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// A unit vector of `dimensions` whose first components are `expected`
    /// to 1e-4.
    fn assert_near(text: &str, vector: &[f32], expected: &[f32], dimensions: usize) {
        assert_eq!(vector.len(), dimensions);
        assert!((dot(vector, vector) - 1.0).abs() < 1e-5);
        let worst = largest_difference(vector, expected);
        assert!(
            worst < 1e-4,
            "{:?}: got {:?}, expected {expected:?}",
            text.chars().take(40).collect::<String>(),
            &vector[..5]
        );
    }

    #[test]
    fn mpnet_matches_reference_vectors() {
        let Some(model) = mpnet() else { return };
        // transformers' MPNetModel over the same files, mean-pooled and
        // normalised as sentence-transformers does; the first is the model
        // card's example. The last runs to 654 word pieces: cut at 384, as
        // sentence-transformers cuts it (and past the relative-position
        // buckets' 128-token reach).
        let c = "Tide tables for the harbour are printed every Sunday in the local paper.";
        let longer = format!("{} {}", long_text(), vec![c; 20].join(" "));
        let pinned: [(String, [f32; 5]); 6] = [
            (
                "This is an example sentence".into(),
                [0.022503, -0.078292, -0.023031, -0.005100, -0.080340],
            ),
            (
                String::new(),
                [-0.012503, 0.061439, -0.006735, 0.025238, 0.014758],
            ),
            (
                "Naïve café owners in Zürich serve crème brûlée — 東京 too! 🙂".into(),
                [0.008883, -0.000407, -0.010197, 0.006764, 0.009300],
            ),
            (
                long_text(),
                [0.004667, 0.066659, -0.012603, 0.075769, -0.030597],
            ),
            (
                longer,
                [-0.013214, 0.034676, -0.025057, 0.026128, -0.065967],
            ),
            // A literal `<pad>` is the padding token, which MPNet's positions
            // skip.
            (
                "The literal <pad> token sits mid-sentence.".into(),
                [0.051440, 0.001676, -0.012495, -0.003592, -0.008652],
            ),
        ];
        let texts: Vec<String> = pinned.iter().map(|(text, _)| text.clone()).collect();
        let together = model.embed(&texts).unwrap();
        for (i, (text, expected)) in pinned.iter().enumerate() {
            let alone = model.embed(std::slice::from_ref(text)).unwrap();
            for vector in [&together[i], &alone[0]] {
                assert_near(text, vector, expected, 768);
            }
        }
        let v = model
            .embed(&[
                "The quick brown fox jumps over the lazy dog.".into(),
                "A fast brown fox leaps over a sleepy dog.".into(),
                "Quarterly tax filings are due at the end of the month.".into(),
            ])
            .unwrap();
        // Reference: 0.8756 and -0.0225.
        let (paraphrase, unrelated) = (dot(&v[0], &v[1]), dot(&v[0], &v[2]));
        assert!((paraphrase - 0.8756).abs() < 1e-3 && (unrelated + 0.0225).abs() < 1e-3);
    }

    #[test]
    fn positions_count_from_zero_or_past_the_padding_token() {
        let bert: Vec<usize> = positions(None, &[101, 7, 1, 102]).collect();
        assert_eq!(bert, [0, 1, 2, 3]);
        // MPNet: <s>=0, a word, <pad>=1, two words, </s>=2.
        let mpnet: Vec<usize> = positions(Some(1), &[0, 5, 1, 6, 7, 2]).collect();
        assert_eq!(mpnet, [2, 3, 1, 4, 5, 6]);
    }

    #[test]
    fn every_row_of_a_shorter_sequence_reads_its_own_distances() {
        let longest = 9;
        let table = buckets_by_distance(longest, 32);
        assert_eq!(table.len(), 2 * longest - 1);
        for len in [1, 4, longest] {
            for row in 0..len {
                let expected: Vec<usize> = (0..len)
                    .map(|column| relative_bucket(column as i64 - row as i64, 32, 128))
                    .collect();
                assert_eq!(
                    buckets_of_row(&table, longest, row, len),
                    expected,
                    "{len} {row}"
                );
            }
        }
        assert!(buckets_by_distance(0, 32).is_empty());
    }

    #[test]
    fn relative_buckets_match_transformers() {
        // transformers' MPNet relative_position_bucket(32 buckets, reach
        // 128) at these distances (key position minus query position).
        let cases = [
            (0, 0),
            (-1, 1),
            (1, 17),
            (-7, 7),
            (7, 23),
            (-8, 8),
            (-15, 9),
            (-16, 10),
            (-31, 11),
            (-32, 12),
            (-63, 13),
            (-64, 14),
            (-127, 15),
            (-128, 15),
            (-383, 15),
            (8, 24),
            (16, 26),
            (64, 30),
            (383, 31),
        ];
        for (relative, bucket) in cases {
            assert_eq!(
                relative_bucket(relative, 32, 128),
                bucket,
                "distance {relative}"
            );
        }
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
            assert_near(text, vector, expected, LocalModel::MiniLm.dimensions());
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
            let worst = largest_difference(alone, batched);
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
        let dir = std::env::temp_dir().join(format!("encoder-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = Encoder::load(LocalModel::MiniLm, &dir)
            .err()
            .expect("an empty directory must not load");
        std::fs::write(dir.join("config.json"), b"{}").unwrap();
        let altered = Encoder::load(LocalModel::MiniLm, &dir)
            .err()
            .expect("an altered config.json must not load");
        std::fs::remove_dir_all(&dir).unwrap();

        for e in [&missing, &altered] {
            assert!(format!("{e:#}").contains("scripts/fetch-model.sh"), "{e:#}");
        }
        // Each model names the command that installs it.
        let mpnet = Encoder::load(LocalModel::MpNet, &dir)
            .err()
            .expect("an empty directory must not load");
        assert!(
            format!("{mpnet:#}").contains("scripts/fetch-model.sh --model all-mpnet-base-v2"),
            "{mpnet:#}"
        );
        assert!(format!("{altered:#}").contains("sha256"), "{altered:#}");
    }
}
