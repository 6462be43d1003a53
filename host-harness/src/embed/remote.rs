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
use std::sync::OnceLock;
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
    pub fn client(&self) -> anyhow::Result<Client> {
        Client::new(
            &self.url,
            crate::http::api_key(self.api_key_env.as_deref())?,
        )
    }

    fn cache_key(&self) -> String {
        format!("{} {}", self.url.trim_end_matches('/'), self.model)
    }
}

/// An endpoint as the lender uses it: its description is settled on first
/// need (the component asking, or a search's query embedded ahead), not when
/// a command starts, so a command that never embeds never asks the
/// endpoint anything.
pub struct Endpoint {
    spec: RemoteEmbedder,
    client: Client,
    /// The file of learnt dimensions (`dimensions_file`).
    cache: PathBuf,
    timeout: Duration,
    described: OnceLock<Result<EmbedderInfo, String>>,
    /// Whether learnt dimensions that stopped holding were forgotten (once:
    /// another process may have learnt them anew since).
    forgotten: std::sync::atomic::AtomicBool,
}

impl Endpoint {
    pub fn new(
        spec: RemoteEmbedder,
        client: Client,
        cache: PathBuf,
        timeout: Duration,
    ) -> Endpoint {
        Endpoint {
            spec,
            client,
            cache,
            timeout,
            described: OnceLock::new(),
            forgotten: Default::default(),
        }
    }

    /// The embedder as the component sees it: its dimensions configured,
    /// remembered from an earlier run, or asked of the endpoint with one
    /// short text (then remembered). A failure is settled for the process
    /// (told once) and searches stay lexical.
    pub fn info(&self) -> Result<&EmbedderInfo, String> {
        self.described
            .get_or_init(|| {
                self.describe().inspect_err(|problem| {
                    crate::notes::note(format!(
                        "no embeddings this run, searching FTS-only: {problem}"
                    ))
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn describe(&self) -> Result<EmbedderInfo, String> {
        let key = self.spec.cache_key();
        let dimensions = match self.spec.dimensions {
            Some(d) => d,
            None => match learnt_dimensions(&self.cache, &key) {
                Some(d) => d,
                None => {
                    // An endpoint that is down must not hold a command for
                    // the whole embedder deadline.
                    let probe = embed(
                        &self.client,
                        &self.spec.model,
                        &["dimensions".to_string()],
                        self.timeout.min(PROBE_TIMEOUT),
                    )
                    .map_err(|e| {
                        format!(
                            "the embedder {} at {} did not answer a probe for its dimensions: {e:#}",
                            self.spec.model, self.spec.url
                        )
                    })?;
                    let d = probe[0].len() as u32;
                    remember_dimensions(&self.cache, &key, d);
                    d
                }
            },
        };
        if dimensions == 0 {
            return Err("the embedder's dimensions must be above 0".into());
        }
        Ok(EmbedderInfo {
            provider: "openai".into(),
            model: self.spec.model.clone(),
            dimensions,
            max_batch: MAX_BATCH,
        })
    }
}

/// The worker's backend: one request per batch.
pub struct Remote(pub std::sync::Arc<Endpoint>);

impl Backend for Remote {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let endpoint = &self.0;
        let info = endpoint
            .info()
            .map_err(|problem| anyhow::anyhow!(problem))?;
        let vectors = embed(
            &endpoint.client,
            &endpoint.spec.model,
            texts,
            endpoint.timeout,
        )?;
        if let Some(v) = vectors.iter().find(|v| v.len() != info.dimensions as usize) {
            // Not configured: learnt from the endpoint (or the cache).
            if endpoint.spec.dimensions.is_none() {
                // Another model now answers under the name: learn it anew
                // next run (this run's vectors keep the length they have).
                if !endpoint
                    .forgotten
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
                {
                    forget_dimensions(&endpoint.cache, &endpoint.spec.cache_key());
                }
                bail!(
                    "the embedder now answers {}-dimensional vectors, not the {} learnt before; they are learnt again on the next run",
                    v.len(),
                    info.dimensions
                );
            }
            bail!(
                "the embedder answered {}-dimensional vectors, not {} (memory.search.remote.dimensions)",
                v.len(),
                info.dimensions
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
    update_dimensions(file, |known| {
        known.insert(key.to_string(), dimensions);
    });
}

fn forget_dimensions(file: &Path, key: &str) {
    update_dimensions(file, |known| {
        known.remove(key);
    });
}

/// Rewrites the file through a temporary file of this process's own, so two
/// processes never write one temporary file.
fn update_dimensions(file: &Path, change: impl FnOnce(&mut BTreeMap<String, u32>)) {
    let mut known: BTreeMap<String, u32> = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    change(&mut known);
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_string_pretty(&known) {
        // Unique per process and per write.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = file.with_extension(format!("json.{}.{n}.tmp", std::process::id()));
        if std::fs::write(&temp, text).is_ok() && std::fs::rename(&temp, file).is_err() {
            let _ = std::fs::remove_file(&temp);
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

    fn endpoint_at(url: &str, dimensions: Option<u32>, cache: &Path) -> std::sync::Arc<Endpoint> {
        let spec = remote(url, dimensions);
        let client = spec.client().unwrap();
        std::sync::Arc::new(Endpoint::new(
            spec,
            client,
            dimensions_file(cache),
            Duration::from_secs(5),
        ))
    }

    #[test]
    fn vectors_come_back_in_order_and_normalised() {
        let cache = tempfile::tempdir().unwrap();
        let server = fake::http_with("127.0.0.1:0", endpoint);
        let backend = Remote(endpoint_at(&server.url, Some(3), cache.path()));
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
    fn dimensions_are_learnt_on_first_need_and_remembered() {
        let cache = tempfile::tempdir().unwrap();
        let server = fake::http_with("127.0.0.1:0", endpoint);
        // A lender made for the endpoint (as every command makes one) asks
        // nothing until the embedder is needed.
        let lender = super::super::Lender::new(
            &super::super::EmbedderChoice::Remote(remote(&server.url, None)),
            Duration::from_secs(5),
        );
        assert!(
            server
                .requests
                .recv_timeout(Duration::from_millis(300))
                .is_err(),
            "asked before need"
        );
        drop(lender);
        let first = endpoint_at(&server.url, None, cache.path());
        let info = first.info().unwrap();
        assert_eq!((info.provider.as_str(), info.dimensions), ("openai", 3));
        server.requests.recv().unwrap();
        // Another run: remembered, not asked again.
        let second = endpoint_at(&server.url, None, cache.path());
        assert_eq!(second.info().unwrap().dimensions, 3);
        assert!(
            server
                .requests
                .recv_timeout(Duration::from_millis(200))
                .is_err(),
            "asked again"
        );
        // Configured dimensions win without a probe; a mismatch is refused
        // when the vectors come, and not forgotten (it is the user's).
        let configured = Remote(endpoint_at(&server.url, Some(8), cache.path()));
        let error = configured.embed(&["x".to_string()]).unwrap_err();
        assert!(
            format!("{error:#}").contains("3-dimensional vectors, not 8"),
            "{error:#}"
        );
        assert_eq!(
            learnt_dimensions(
                &dimensions_file(cache.path()),
                &remote(&server.url, None).cache_key()
            ),
            Some(3)
        );
    }

    #[test]
    fn learnt_dimensions_that_no_longer_hold_are_forgotten() {
        let cache = tempfile::tempdir().unwrap();
        let server = fake::http_with("127.0.0.1:0", endpoint);
        let key = remote(&server.url, None).cache_key();
        remember_dimensions(&dimensions_file(cache.path()), &key, 5);
        let backend = Remote(endpoint_at(&server.url, None, cache.path()));
        let error = backend.embed(&["x".to_string()]).unwrap_err();
        assert!(format!("{error:#}").contains("learnt again"), "{error:#}");
        assert_eq!(
            learnt_dimensions(&dimensions_file(cache.path()), &key),
            None
        );
        let next_run = endpoint_at(&server.url, None, cache.path());
        assert_eq!(next_run.info().unwrap().dimensions, 3);
    }

    #[test]
    fn an_endpoint_that_is_down_fails_the_probe_with_its_address_once() {
        let cache = tempfile::tempdir().unwrap();
        let url = format!("http://127.0.0.1:{}/v1", fake::closed_port());
        let down = endpoint_at(&url, None, cache.path());
        let message = down.info().unwrap_err();
        assert!(
            message.contains(&url) && message.contains("probe"),
            "{message}"
        );
        assert_eq!(down.info().unwrap_err(), message, "settled for the process");
        let backend = Remote(down);
        assert!(backend.embed(&["x".to_string()]).is_err());
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
