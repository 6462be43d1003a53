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

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
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
    fn bad_answers_are_refused() {
        let texts = vec!["a".to_string(), "b".to_string()];
        assert!(embed_checked(&Fixed(vec![vec![1.0, 0.0]]), &info(2), &texts).is_err());
        assert!(embed_checked(&Fixed(vec![vec![1.0]; 2]), &info(2), &texts).is_err());
        assert!(embed_checked(&Fixed(vec![vec![f32::NAN, 1.0]; 2]), &info(2), &texts).is_err());
    }
}
