//! An OpenAI-compatible `/embeddings` endpoint as the embedder (Ollama,
//! llama.cpp's server, LM Studio, a cloud API), over HTTP or HTTPS
//! (`crate::http`). Its vectors are normalised here, so cosine similarity
//! is the dot product the component takes; their length is the
//! embedder's dimensions, configured or learnt once from the endpoint and
//! kept in the cache directory.

use super::{Backend, EmbedderInfo};
use crate::http::{Client, HttpFailure};
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest the probe for an endpoint's dimensions may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Texts sent in one request.
pub const MAX_BATCH: u32 = 64;

/// Where and what to embed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEmbedder {
    /// Base URL (`http://127.0.0.1:11434/v1`, `https://api.openai.com/v1`).
    pub url: String,
    pub model: String,
    /// The environment variable holding the API key, if the endpoint
    /// needs one.
    pub api_key_env: Option<String>,
    /// The vectors' length, when the configuration says it.
    pub dimensions: Option<u32>,
}

impl RemoteEmbedder {
    fn api_key(&self) -> anyhow::Result<Option<String>> {
        self.api_key_env
            .as_ref()
            .map(|var| {
                std::env::var(var)
                    .with_context(|| format!("the embedder's API key variable {var} is not set"))
            })
            .transpose()
    }

    pub fn client(&self) -> anyhow::Result<Client> {
        Client::new(&self.url, self.api_key()?)
    }

    /// The embedder as the component sees it, its dimensions configured,
    /// remembered from an earlier run (`cache`), or asked of the endpoint
    /// with one short text (and then remembered).
    pub fn info(
        &self,
        client: &Client,
        cache: &Path,
        timeout: Duration,
    ) -> anyhow::Result<EmbedderInfo> {
        let dimensions = match self.dimensions {
            Some(d) => d,
            None => match learnt_dimensions(cache, &self.cache_key()) {
                Some(d) => d,
                None => {
                    // Asked at start-up: an endpoint that is down must not
                    // hold every command for the whole embedder deadline.
                    let probe_timeout = timeout.min(PROBE_TIMEOUT);
                    let probe = embed(
                        client,
                        &self.model,
                        &["dimensions".to_string()],
                        probe_timeout,
                    )
                    .with_context(|| {
                        format!(
                            "the embedder {} at {} did not answer a probe for its dimensions",
                            self.model, self.url
                        )
                    })?;
                    let d = probe[0].len() as u32;
                    remember_dimensions(cache, &self.cache_key(), d);
                    d
                }
            },
        };
        if dimensions == 0 {
            bail!("the embedder's dimensions must be above 0");
        }
        Ok(EmbedderInfo {
            provider: "openai".into(),
            model: self.model.clone(),
            dimensions,
            max_batch: MAX_BATCH,
        })
    }

    fn cache_key(&self) -> String {
        format!("{} {}", self.url.trim_end_matches('/'), self.model)
    }
}

/// The worker's backend: one request per batch.
pub struct Remote {
    pub client: Client,
    pub model: String,
    pub dimensions: u32,
    pub timeout: Duration,
}

impl Backend for Remote {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let vectors = embed(&self.client, &self.model, texts, self.timeout)?;
        if let Some(v) = vectors.iter().find(|v| v.len() != self.dimensions as usize) {
            bail!(
                "the embedder answered {}-dimensional vectors, not {} (memory.search.remote.dimensions)",
                v.len(),
                self.dimensions
            );
        }
        Ok(vectors)
    }
}

/// `POST {base}/embeddings`: one normalised vector per text, in order.
fn embed(
    client: &Client,
    model: &str,
    texts: &[String],
    timeout: Duration,
) -> anyhow::Result<Vec<Vec<f32>>> {
    let answer = client
        .post_json(
            "embeddings",
            &json!({"model": model, "input": texts}),
            timeout,
        )
        .and_then(|reply| reply.json())
        .map_err(|failure: HttpFailure| anyhow::anyhow!("{failure}"))?;
    vectors_of(&answer, texts.len())
}

/// The vectors of an embeddings answer (`data[].embedding`, placed by
/// `data[].index`), each scaled to length 1.
fn vectors_of(answer: &Value, expected: usize) -> anyhow::Result<Vec<Vec<f32>>> {
    let data = answer["data"]
        .as_array()
        .context("the answer has no `data` list of embeddings")?;
    if data.len() != expected {
        bail!(
            "the answer holds {} embeddings for {expected} texts",
            data.len()
        );
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().map_or(position, |i| i as usize);
        let values = item["embedding"]
            .as_array()
            .context("an embedding is not a list of numbers (base64 answers are not asked for)")?;
        let mut vector = values
            .iter()
            .map(|v| v.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .context("an embedding holds something other than numbers")?;
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if vector.is_empty() || !norm.is_finite() || norm == 0.0 {
            bail!("an embedding is empty, zero or not finite");
        }
        vector.iter_mut().for_each(|x| *x /= norm);
        let slot = vectors
            .get_mut(index)
            .with_context(|| format!("an embedding's index {index} is out of range"))?;
        if slot.replace(vector).is_some() {
            bail!("two embeddings have the index {index}");
        }
    }
    Ok(vectors.into_iter().map(|v| v.unwrap_or_default()).collect())
}

/// The file of dimensions learnt from endpoints, by "URL model".
pub fn dimensions_file(cache_home: &Path) -> PathBuf {
    cache_home.join("embedder-dimensions.json")
}

fn learnt_dimensions(file: &Path, key: &str) -> Option<u32> {
    let text = std::fs::read_to_string(file).ok()?;
    let known: BTreeMap<String, u32> = serde_json::from_str(&text).ok()?;
    known.get(key).copied()
}

/// Keeps what a probe learnt; a cache that cannot be written costs only a
/// probe next time.
fn remember_dimensions(file: &Path, key: &str, dimensions: u32) {
    let mut known: BTreeMap<String, u32> = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    known.insert(key.to_string(), dimensions);
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_string_pretty(&known) {
        let temp = file.with_extension("json.tmp");
        if std::fs::write(&temp, text).is_ok() {
            let _ = std::fs::rename(&temp, file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::fake::{self, Answer};

    /// An embeddings endpoint: each text's vector is its length and its
    /// vowel count, unnormalised, answered in reverse order.
    fn endpoint(texts: &str) -> Answer {
        let request: Value = serde_json::from_str(texts).unwrap();
        let inputs = request["input"].as_array().unwrap();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| {
                let t = t.as_str().unwrap();
                let vowels = t.chars().filter(|c| "aeiou".contains(*c)).count();
                json!({"index": i, "embedding": [t.len() as f32, vowels as f32, 1.0]})
            })
            .collect();
        Answer::json(
            200,
            &json!({"data": data, "model": request["model"]}).to_string(),
        )
    }

    fn remote(url: &str, dimensions: Option<u32>) -> RemoteEmbedder {
        RemoteEmbedder {
            url: url.to_string(),
            model: "tiny-embed".into(),
            api_key_env: None,
            dimensions,
        }
    }

    #[test]
    fn vectors_come_back_in_order_and_normalised() {
        let server = fake::http_with("127.0.0.1:0", endpoint);
        let r = remote(&server.url, Some(3));
        let backend = Remote {
            client: r.client().unwrap(),
            model: r.model.clone(),
            dimensions: 3,
            timeout: Duration::from_secs(5),
        };
        let vectors = backend
            .embed(&["kafka".to_string(), "a".to_string()])
            .unwrap();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm(&vectors[0]) - 1.0).abs() < 1e-5);
        assert!(
            vectors[0][0] > vectors[1][0],
            "the longer text first: {vectors:?}"
        );
        let request = server.requests.recv().unwrap();
        assert!(request.contains(r#""model":"tiny-embed""#), "{request}");
    }

    #[test]
    fn dimensions_are_learnt_once_and_remembered() {
        let cache = tempfile::tempdir().unwrap();
        let file = dimensions_file(cache.path());
        let server = fake::http_with("127.0.0.1:0", endpoint);
        let r = remote(&server.url, None);
        let client = r.client().unwrap();
        let info = r.info(&client, &file, Duration::from_secs(5)).unwrap();
        assert_eq!((info.provider.as_str(), info.dimensions), ("openai", 3));
        server.requests.recv().unwrap();
        assert_eq!(
            r.info(&client, &file, Duration::from_secs(5))
                .unwrap()
                .dimensions,
            3
        );
        assert!(
            server
                .requests
                .recv_timeout(Duration::from_millis(200))
                .is_err(),
            "asked again"
        );
        // Configured dimensions win without a probe; a mismatch is refused
        // when the vectors come.
        let configured = remote(&server.url, Some(8));
        assert_eq!(
            configured
                .info(&client, &file, Duration::from_secs(5))
                .unwrap()
                .dimensions,
            8
        );
        let backend = Remote {
            client,
            model: configured.model.clone(),
            dimensions: 8,
            timeout: Duration::from_secs(5),
        };
        let error = backend.embed(&["x".to_string()]).unwrap_err();
        assert!(
            format!("{error:#}").contains("3-dimensional vectors, not 8"),
            "{error:#}"
        );
    }

    #[test]
    fn an_endpoint_that_is_down_fails_the_probe_with_its_address() {
        let cache = tempfile::tempdir().unwrap();
        let url = format!("http://127.0.0.1:{}/v1", fake::closed_port());
        let r = remote(&url, None);
        let error = r
            .info(
                &r.client().unwrap(),
                &dimensions_file(cache.path()),
                Duration::from_secs(2),
            )
            .unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.contains(&url) && message.contains("probe"),
            "{message}"
        );
    }

    #[test]
    fn nonsense_answers_are_refused() {
        for (answer, expected) in [
            (json!({"error": "x"}), "no `data`"),
            (json!({"data": []}), "0 embeddings for 1"),
            (json!({"data": [{"embedding": "AAAA"}]}), "not a list"),
            (
                json!({"data": [{"embedding": [1, "x"]}]}),
                "other than numbers",
            ),
            (json!({"data": [{"embedding": [0.0, 0.0]}]}), "zero"),
            (
                json!({"data": [{"index": 5, "embedding": [1.0]}]}),
                "out of range",
            ),
        ] {
            let error = vectors_of(&answer, 1).unwrap_err().to_string();
            assert!(error.contains(expected), "{answer}: {error}");
        }
        let twice =
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]});
        assert!(vectors_of(&twice, 2)
            .unwrap_err()
            .to_string()
            .contains("two embeddings"));
    }
}
