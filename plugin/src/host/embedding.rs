//! The embedder the host lends, seen from the memory logic: a small trait,
//! answer validation (a host is not trusted to return well-formed vectors), and
//! the vector encoding stored in the index.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedderInfo {
    pub provider: String,
    pub model: String,
    pub dimensions: u32,
    pub max_batch: u32,
}

impl EmbedderInfo {
    /// `provider/model`, the embedding cache's notion of identity.
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }
}

pub trait Embedder {
    /// The configured embedder, or `None` for lexical-only recall.
    fn describe(&self) -> Option<EmbedderInfo>;
    /// One vector per text, or why not.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
}

/// No embedder: recall is lexical only.
pub struct NoEmbedder;

impl Embedder for NoEmbedder {
    fn describe(&self) -> Option<EmbedderInfo> {
        None
    }
    fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Err("no embedder is configured".into())
    }
}

/// Embeds `texts` in batches of the embedder's size and checks every answer:
/// the count, each vector's length, finiteness; vectors are L2-normalised here
/// so that cosine similarity is a dot product later.
pub fn embed_checked(
    embedder: &dyn Embedder,
    info: &EmbedderInfo,
    texts: &[String],
) -> Result<Vec<Vec<f32>>, String> {
    let batch = info.max_batch.clamp(1, 1024) as usize;
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch) {
        let vectors = embedder.embed(chunk)?;
        if vectors.len() != chunk.len() {
            return Err(format!(
                "the embedder returned {} vectors for {} texts",
                vectors.len(),
                chunk.len()
            ));
        }
        for mut v in vectors {
            if v.len() != info.dimensions as usize {
                return Err(format!(
                    "the embedder returned a vector of {} numbers, expected {}",
                    v.len(),
                    info.dimensions
                ));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err("the embedder returned a non-finite number".into());
            }
            normalise(&mut v);
            out.push(v);
        }
    }
    Ok(out)
}

pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product, over eight independent sums: the compiler turns the
/// inner loop into SIMD (two `f32x4` lanes under wasm `simd128`, SSE or
/// NEON natively), and the fixed order of additions gives the same bits on
/// every target.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sums = [0f32; LANES];
    let (blocks_a, blocks_b) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = blocks_a
        .remainder()
        .iter()
        .zip(blocks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in blocks_a.zip(blocks_b) {
        for lane in 0..LANES {
            sums[lane] += x[lane] * y[lane];
        }
    }
    ((sums[0] + sums[4]) + (sums[1] + sums[5])) + ((sums[2] + sums[6]) + (sums[3] + sums[7])) + tail
}

/// Recent query vectors by embedder and exact query text, so a repeated
/// search (an agent often asks again) skips the forward pass. Small: a
/// vector is 1.5 KB, and only recent repeats are worth keeping.
#[derive(Default)]
pub struct QueryVectors {
    /// Most recently used last.
    recent: Vec<(String, String, Vec<f32>)>,
}

impl QueryVectors {
    pub const CAPACITY: usize = 64;

    /// The vector of `text` under `label`, from the cache or from `embed`
    /// (whose answer is kept only when it succeeds).
    pub fn get_or_embed(
        &mut self,
        label: &str,
        text: &str,
        embed: impl FnOnce() -> Result<Vec<f32>, String>,
    ) -> Result<Vec<f32>, String> {
        if let Some(at) = self
            .recent
            .iter()
            .position(|(l, t, _)| l == label && t == text)
        {
            let hit = self.recent.remove(at);
            let vector = hit.2.clone();
            self.recent.push(hit);
            return Ok(vector);
        }
        let vector = embed()?;
        if self.recent.len() >= Self::CAPACITY {
            self.recent.remove(0);
        }
        self.recent
            .push((label.to_string(), text.to_string(), vector.clone()));
        Ok(vector)
    }
}

pub fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// What the embedder sees of an entry: its text without list markers.
pub fn embedding_text(text: &str) -> String {
    text.lines()
        .map(|l| crate::text::words::strip_list_marker(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<Vec<f32>>);
    impl Embedder for Fixed {
        fn describe(&self) -> Option<EmbedderInfo> {
            Some(info(2))
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            Ok(self.0.iter().take(texts.len()).cloned().collect())
        }
    }

    fn info(dimensions: u32) -> EmbedderInfo {
        EmbedderInfo {
            provider: "t".into(),
            model: "m".into(),
            dimensions,
            max_batch: 8,
        }
    }

    #[test]
    fn vectors_are_normalised_and_round_trip() {
        let got = embed_checked(&Fixed(vec![vec![3.0, 4.0]]), &info(2), &["a".into()]).unwrap();
        assert_eq!(got, vec![vec![0.6, 0.8]]);
        assert_eq!(decode(&encode(&got[0])), got[0]);
    }

    #[test]
    fn dot_matches_the_plain_sum_at_every_length() {
        for n in [0, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "length {n}");
        }
        assert_eq!(
            dot(&[1.0, 2.0, 3.0], &[1.0]),
            1.0,
            "the shorter length counts"
        );
    }

    #[test]
    fn repeated_queries_are_embedded_once_per_embedder() {
        let mut cache = QueryVectors::default();
        let calls = std::cell::Cell::new(0);
        let embed = || {
            calls.set(calls.get() + 1);
            Ok(vec![calls.get() as f32])
        };
        assert_eq!(cache.get_or_embed("a/m", "q", embed), Ok(vec![1.0]));
        assert_eq!(cache.get_or_embed("a/m", "q", embed), Ok(vec![1.0]));
        assert_eq!(cache.get_or_embed("b/m", "q", embed), Ok(vec![2.0]));
        assert_eq!(cache.get_or_embed("a/m", "q ", embed), Ok(vec![3.0]));
        assert!(cache
            .get_or_embed("a/m", "x", || Err("down".into()))
            .is_err());
        assert_eq!(cache.get_or_embed("a/m", "x", embed), Ok(vec![4.0]));
        for i in 0..QueryVectors::CAPACITY {
            cache.get_or_embed("a/m", &i.to_string(), embed).unwrap();
        }
        assert_eq!(
            cache.get_or_embed("a/m", "q", embed),
            Ok(vec![5.0 + QueryVectors::CAPACITY as f32]),
            "the oldest was dropped"
        );
    }

    #[test]
    fn bad_answers_are_refused() {
        let texts = vec!["a".to_string(), "b".to_string()];
        assert!(embed_checked(&Fixed(vec![vec![1.0, 0.0]]), &info(2), &texts).is_err());
        assert!(embed_checked(&Fixed(vec![vec![1.0]; 2]), &info(2), &texts).is_err());
        assert!(embed_checked(&Fixed(vec![vec![f32::NAN, 1.0]; 2]), &info(2), &texts).is_err());
    }
}
