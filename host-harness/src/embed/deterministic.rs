//! A deterministic embedder for tests and conformance scenarios: each content
//! word (lowercased, light suffixes stripped) adds ±1 to a hashed dimension.
//! Texts that share words are close; the same text always gives the same
//! vector, on every machine.

use super::{Backend, EmbedderInfo};
use sha2::{Digest, Sha256};

pub const DIMENSIONS: usize = 256;

pub fn info(model: &str) -> EmbedderInfo {
    EmbedderInfo {
        provider: "test".into(),
        model: model.into(),
        dimensions: DIMENSIONS as u32,
        max_batch: 64,
    }
}

pub struct HashEmbedder;

impl HashEmbedder {
    pub fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0f32; DIMENSIONS];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
        {
            let word = word.to_lowercase();
            let word = word
                .strip_suffix('s')
                .filter(|w| w.len() > 2)
                .unwrap_or(&word);
            let digest = Sha256::digest(word.as_bytes());
            let slot = u16::from_le_bytes([digest[0], digest[1]]) as usize % DIMENSIONS;
            v[slot] += if digest[2] & 1 == 0 { 1.0 } else { -1.0 };
        }
        v
    }
}

impl Backend for HashEmbedder {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| HashEmbedder::vector(t)).collect())
    }
}

/// A faulty embedder for fault scenarios: `nan` answers vectors holding NaN,
/// `wrong-dims` answers vectors of the wrong length. The component must
/// refuse both and fall back to lexical recall.
pub struct FaultyEmbedder {
    pub nan: bool,
}

impl Backend for FaultyEmbedder {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = HashEmbedder::vector(t);
                if self.nan {
                    v[0] = f32::NAN;
                } else {
                    v.truncate(DIMENSIONS / 2);
                }
                v
            })
            .collect())
    }
}

/// `slow`: the test embedder's vectors after `SLOW_DELAY` per call, a
/// stand-in for a real model on a busy machine (the call deadline must not
/// count the time the guest waits on it).
pub struct SlowEmbedder;

pub const SLOW_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

impl Backend for SlowEmbedder {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        std::thread::sleep(SLOW_DELAY);
        Ok(texts.iter().map(|t| HashEmbedder::vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    #[test]
    fn shared_words_are_closer_and_results_repeat() {
        let a = HashEmbedder::vector("keep the gateway on loopback");
        let b = HashEmbedder::vector("gateway loopback settings");
        let c = HashEmbedder::vector("favourite pasta recipe");
        assert!(cosine(&a, &b) > cosine(&a, &c));
        assert_eq!(a, HashEmbedder::vector("keep the gateway on loopback"));
    }
}
