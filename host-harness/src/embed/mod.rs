//! Embedders the harness lends to the component: a real local model
//! (all-MiniLM-L6-v2 by default, or all-mpnet-base-v2; `encoder`), an
//! OpenAI-compatible endpoint (`remote`), none (lexical only), and test
//! doubles — a deterministic bag-of-words embedder, one that always fails,
//! and faulty ones.
//!
//! Every backend runs behind `Lender`, which puts a host-side timeout on each
//! call: an epoch deadline does not interrupt a blocking host import. The
//! `Lender` also starts a search's query embedding as the call arrives
//! (`embed_ahead`), and remembers the last single texts' vectors.

pub mod deterministic;
pub mod encoder;
mod pinned;
pub mod remote;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedderInfo {
    pub provider: String,
    pub model: String,
    pub dimensions: u32,
    pub max_batch: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedFailure {
    Unavailable(String),
    Timeout(String),
    Failed(String),
}

/// Which embedder to lend (`--embedder`, `memory.search.provider`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderChoice {
    None,
    /// A model run here on the CPU (`encoder`), from `model_dir`.
    Local {
        model: encoder::LocalModel,
        model_dir: PathBuf,
    },
    /// An OpenAI-compatible `/embeddings` endpoint.
    Remote(remote::RemoteEmbedder),
    /// Deterministic hashing embedder for tests and scenarios.
    Test,
    /// Always fails, for testing the lexical fallback.
    Failing,
    /// The deterministic embedder, slowly (`deterministic::SLOW_DELAY` a call).
    Slow,
    /// Vectors holding NaN (fault scenarios).
    Nan,
    /// Vectors of the wrong length (fault scenarios).
    WrongDims,
}

impl EmbedderChoice {
    /// The embedder named; `openai` takes the endpoint `remote` describes,
    /// a local model its files from `model_dir`, else from
    /// `LocalModel::default_dir`.
    pub fn parse(
        name: &str,
        model_dir: Option<PathBuf>,
        remote: Option<remote::RemoteEmbedder>,
    ) -> anyhow::Result<EmbedderChoice> {
        let local = |model: encoder::LocalModel| EmbedderChoice::Local {
            model,
            model_dir: model_dir
                .clone()
                .unwrap_or_else(|| model.default_dir(&crate::config::cache_home())),
        };
        if let Some(model) = encoder::LocalModel::named(name) {
            return Ok(local(model));
        }
        Ok(match name {
            "none" => EmbedderChoice::None,
            "openai" | "remote" => EmbedderChoice::Remote(remote.ok_or_else(|| {
                anyhow::anyhow!(
                    "the openai embedder needs [memory.search.remote] baseUrl and memory.search.model in the configuration"
                )
            })?),
            "test" => EmbedderChoice::Test,
            "failing" => EmbedderChoice::Failing,
            "slow" => EmbedderChoice::Slow,
            "nan" => EmbedderChoice::Nan,
            "wrong-dims" => EmbedderChoice::WrongDims,
            other => anyhow::bail!(
                "unknown embedder {other:?}; use minilm, mpnet, openai, none, test, slow, failing, nan or wrong-dims"
            ),
        })
    }
}

type Answer = Result<Vec<Vec<f32>>, String>;
type Job = (Vec<String>, mpsc::Sender<Answer>);
/// Loads a backend inside its worker thread.
type Loader = Box<dyn FnOnce() -> Result<Box<dyn Backend>, String> + Send>;

/// An embedder behind a worker thread with a per-call timeout. The model is
/// loaded lazily, on the first call, so commands that never embed never pay
/// for loading it.
pub struct Lender {
    info: Described,
    jobs: Option<mpsc::Sender<Job>>,
    timeout: Duration,
    failing: bool,
    /// A search's query, sent to the worker as the call arrived
    /// ([`Lender::embed_ahead`]), and where its answer will come.
    ahead: Mutex<Option<(String, mpsc::Receiver<Answer>)>>,
    /// Single texts' vectors, the most recent last: a query asked again is
    /// not embedded again, nor embedded ahead for nothing.
    recent: Mutex<VecDeque<(String, Vec<f32>)>>,
}

/// What the lender says the embedder is: known from the start, or an
/// endpoint's, settled when first needed.
enum Described {
    Fixed(Option<EmbedderInfo>),
    Remote(Arc<remote::Endpoint>),
}

/// Single texts [`Lender`] remembers the vectors of (~0.4 MB at 384
/// dimensions).
const RECENT_TEXTS: usize = 256;

impl Lender {
    pub fn new(choice: &EmbedderChoice, timeout: Duration) -> Lender {
        let (info, worker): (Option<EmbedderInfo>, Option<Loader>) = match choice {
            EmbedderChoice::None => (None, None),
            // Described when first needed, not here.
            EmbedderChoice::Remote(endpoint) => {
                let (described, worker) = remote_worker(endpoint, timeout);
                return Lender::described(described, worker, false, timeout);
            }
            EmbedderChoice::Failing => (Some(deterministic::info("failing")), None),
            EmbedderChoice::Test => (
                Some(deterministic::info("test")),
                Some(Box::new(|| {
                    Ok(Box::new(deterministic::HashEmbedder) as Box<dyn Backend>)
                })),
            ),
            EmbedderChoice::Slow => (
                Some(deterministic::info("slow")),
                Some(Box::new(|| {
                    Ok(Box::new(deterministic::SlowEmbedder) as Box<dyn Backend>)
                })),
            ),
            EmbedderChoice::Nan | EmbedderChoice::WrongDims => {
                let nan = matches!(choice, EmbedderChoice::Nan);
                (
                    Some(deterministic::info(if nan { "nan" } else { "wrong-dims" })),
                    Some(Box::new(move || {
                        Ok(Box::new(deterministic::FaultyEmbedder { nan }) as Box<dyn Backend>)
                    }) as Loader),
                )
            }
            EmbedderChoice::Local { model, model_dir } => {
                let (model, dir) = (*model, model_dir.clone());
                (
                    Some(EmbedderInfo {
                        provider: "local".into(),
                        model: model.name().into(),
                        dimensions: model.dimensions() as u32,
                        max_batch: 32,
                    }),
                    Some(Box::new(move || {
                        encoder::Encoder::load(model, &dir)
                            .map(|m| Box::new(m) as Box<dyn Backend>)
                            .map_err(|e| format!("{e:#}"))
                    })),
                )
            }
        };
        Lender::over(
            info,
            worker,
            matches!(choice, EmbedderChoice::Failing),
            timeout,
        )
    }

    fn over(
        info: Option<EmbedderInfo>,
        worker: Option<Loader>,
        failing: bool,
        timeout: Duration,
    ) -> Lender {
        Lender::described(Described::Fixed(info), worker, failing, timeout)
    }

    fn described(
        info: Described,
        worker: Option<Loader>,
        failing: bool,
        timeout: Duration,
    ) -> Lender {
        Lender {
            failing,
            info,
            jobs: worker.map(spawn_worker),
            timeout,
            ahead: Mutex::default(),
            recent: Mutex::default(),
        }
    }

    /// Starts embedding a search's query as the call arrives, so the
    /// forward pass runs while the guest does its lexical legs; the guest's
    /// own request for the same text then waits only for what is left.
    /// Nothing is started when there is no embedder, the text's vector is
    /// at hand, or the guest will refuse the query (blank, holding NUL, or
    /// longer than it takes). A query the guest does not ask for (it has the
    /// vector, or no entry has one yet) costs the worker one forward pass.
    pub fn embed_ahead(&self, text: &str) {
        let Some(jobs) = &self.jobs else { return };
        let refused = text.trim().is_empty()
            || text.contains('\0')
            || text.trim().chars().count() > memory_core::ops::recall::MAX_QUERY_CHARS;
        if refused || self.knows(text) {
            return;
        }
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        if ahead.as_ref().is_some_and(|(started, _)| started == text) {
            return;
        }
        let (reply, answer) = mpsc::channel();
        if jobs.send((vec![text.to_string()], reply)).is_ok() {
            *ahead = Some((text.to_string(), answer));
        }
    }

    fn knows(&self, text: &str) -> bool {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.iter().any(|(known, _)| known == text)
    }

    /// A remembered text's vector, which becomes the most recent.
    fn recalled(&self, text: &str) -> Option<Vec<f32>> {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let at = recent.iter().position(|(known, _)| known == text)?;
        let entry = recent.remove(at)?;
        let vector = entry.1.clone();
        recent.push_back(entry);
        Some(vector)
    }

    /// Keeps a text's vector, unless it is one the guest will refuse (not
    /// finite, or not of the embedder's dimensions): a passing fault must
    /// not be served again.
    fn remember(&self, text: &str, vector: &[f32]) {
        let dimensions = self.describe().map(|i| i.dimensions as usize);
        if Some(vector.len()) != dimensions || vector.iter().any(|v| !v.is_finite()) {
            return;
        }
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|(known, _)| known != text);
        if recent.len() == RECENT_TEXTS {
            recent.pop_front();
        }
        recent.push_back((text.to_string(), vector.to_vec()));
    }

    pub fn describe(&self) -> Option<EmbedderInfo> {
        match &self.info {
            Described::Fixed(info) => info.clone(),
            Described::Remote(endpoint) => endpoint.info().ok().cloned(),
        }
    }

    pub fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedFailure> {
        if self.failing {
            return Err(EmbedFailure::Failed(
                "the `failing` test embedder always fails".into(),
            ));
        }
        let Some(jobs) = &self.jobs else {
            return Err(EmbedFailure::Unavailable(
                "no embedder is configured".into(),
            ));
        };
        let single = match texts.as_slice() {
            [text] => Some(text.clone()),
            _ => None,
        };
        if let Some(vector) = single.as_deref().and_then(|text| self.recalled(text)) {
            return Ok(vec![vector]);
        }
        let started = single.as_deref().and_then(|text| {
            let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
            ahead
                .take_if(|(started, _)| started == text)
                .map(|(_, answer)| answer)
        });
        let answer = match started {
            Some(answer) => answer,
            None => {
                let (reply, answer) = mpsc::channel();
                jobs.send((texts, reply)).map_err(|_| {
                    EmbedFailure::Unavailable("the embedder worker has stopped".into())
                })?;
                answer
            }
        };
        match answer.recv_timeout(self.timeout) {
            Ok(Ok(vectors)) => {
                if let (Some(text), [vector]) = (&single, vectors.as_slice()) {
                    self.remember(text, vector);
                }
                Ok(vectors)
            }
            Ok(Err(message)) => Err(EmbedFailure::Failed(message)),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(EmbedFailure::Timeout(format!(
                "no answer within {} ms",
                self.timeout.as_millis()
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(EmbedFailure::Unavailable(
                "the embedder worker has stopped".into(),
            )),
        }
    }
}

/// An endpoint's lender parts: its description, settled on first need
/// (`remote::Endpoint`), and its worker. Without a client (a URL refused)
/// searches are lexical, and the reason is told.
fn remote_worker(
    endpoint: &remote::RemoteEmbedder,
    timeout: Duration,
) -> (Described, Option<Loader>) {
    let cache = remote::dimensions_file(&crate::config::cache_home());
    match endpoint.client() {
        Ok(client) => {
            let shared = Arc::new(remote::Endpoint::new(
                endpoint.clone(),
                client,
                cache,
                timeout,
            ));
            let backend = remote::Remote(shared.clone());
            (
                Described::Remote(shared),
                Some(Box::new(move || Ok(Box::new(backend) as Box<dyn Backend>)) as Loader),
            )
        }
        Err(problem) => {
            crate::notes::note(format!(
                "no embeddings this run, searching FTS-only: {problem:#}"
            ));
            (Described::Fixed(None), None)
        }
    }
}

/// What a worker runs.
pub trait Backend: Send {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>>;
}

impl Backend for encoder::Encoder {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        encoder::Encoder::embed(self, texts)
    }
}

fn spawn_worker(load: Loader) -> mpsc::Sender<Job> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::spawn(move || {
        let backend = load();
        for (texts, reply) in rx {
            let answer = match &backend {
                Ok(backend) => backend.embed(&texts).map_err(|e| format!("{e:#}")),
                Err(message) => Err(format!("the embedder could not be loaded: {message}")),
            };
            // The caller may have timed out and gone; that is fine.
            let _ = reply.send(answer);
        }
    });
    tx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// An embedder, counting the texts it is handed.
    struct Counted<B>(Arc<AtomicUsize>, B);

    impl<B: Backend> Backend for Counted<B> {
        fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            self.1.embed(texts)
        }
    }

    fn counting() -> (Lender, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let backend = Counted(count.clone(), deterministic::HashEmbedder);
        let loader: Loader = Box::new(move || Ok(Box::new(backend) as Box<dyn Backend>));
        let info = deterministic::info("test");
        let lender = Lender::over(Some(info), Some(loader), false, Duration::from_secs(30));
        (lender, count)
    }

    #[test]
    fn each_local_model_has_its_own_directory_unless_one_is_given() {
        let cache = crate::config::cache_home();
        let mpnet = EmbedderChoice::parse("mpnet", None, None).unwrap();
        assert_eq!(
            mpnet,
            EmbedderChoice::Local {
                model: encoder::LocalModel::MpNet,
                model_dir: cache.join("models").join("all-mpnet-base-v2"),
            }
        );
        let given = PathBuf::from("/opt/models/minilm");
        for name in ["minilm", "local", "all-MiniLM-L6-v2"] {
            assert_eq!(
                EmbedderChoice::parse(name, Some(given.clone()), None).unwrap(),
                EmbedderChoice::Local {
                    model: encoder::LocalModel::MiniLm,
                    model_dir: given.clone(),
                }
            );
        }
        assert!(EmbedderChoice::parse("bert", None, None).is_err());
    }

    #[test]
    fn a_query_embedded_ahead_is_answered_once_and_then_remembered() {
        let (lender, count) = counting();
        let direct = deterministic::HashEmbedder
            .embed(&["kafka rebalance".to_string()])
            .unwrap();
        lender.embed_ahead("kafka rebalance");
        lender.embed_ahead("kafka rebalance");
        assert_eq!(
            lender.embed(vec!["kafka rebalance".into()]).unwrap(),
            direct
        );
        assert_eq!(
            lender.embed(vec!["kafka rebalance".into()]).unwrap(),
            direct
        );
        lender.embed_ahead("kafka rebalance");
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Another text, or several, are embedded as asked.
        let both = vec!["kafka rebalance".to_string(), "redis pool".to_string()];
        assert_eq!(
            lender.embed(both.clone()).unwrap(),
            deterministic::HashEmbedder.embed(&both).unwrap()
        );
        assert_eq!(count.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_query_embedded_ahead_but_not_asked_for_leaves_the_next_one_alone() {
        let (lender, count) = counting();
        lender.embed_ahead("first query");
        lender.embed_ahead("second query");
        let second = lender.embed(vec!["second query".into()]).unwrap();
        assert_eq!(
            second,
            deterministic::HashEmbedder
                .embed(&["second query".to_string()])
                .unwrap()
        );
        let first = lender.embed(vec!["first query".into()]).unwrap();
        assert_eq!(
            first,
            deterministic::HashEmbedder
                .embed(&["first query".to_string()])
                .unwrap()
        );
        assert_eq!(count.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn only_the_texts_last_used_are_remembered() {
        let (lender, count) = counting();
        for i in 0..RECENT_TEXTS {
            lender.embed(vec![format!("query {i}")]).unwrap();
        }
        // Used again, the first is now the most recent: the second goes.
        lender.embed(vec!["query 0".into()]).unwrap();
        lender.embed(vec!["one more".into()]).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), RECENT_TEXTS + 1);
        lender.embed(vec!["query 0".into()]).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), RECENT_TEXTS + 1);
        lender.embed(vec!["query 1".into()]).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), RECENT_TEXTS + 2);
    }

    #[test]
    fn vectors_the_guest_would_refuse_are_not_remembered() {
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        let loader: Loader = Box::new(move || {
            Ok(Box::new(Counted(
                counted,
                deterministic::FaultyEmbedder { nan: true },
            )) as Box<dyn Backend>)
        });
        let info = deterministic::info("nan");
        let lender = Lender::over(Some(info), Some(loader), false, Duration::from_secs(30));
        lender.embed(vec!["q".into()]).unwrap();
        lender.embed(vec!["q".into()]).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn queries_the_guest_refuses_are_not_embedded_ahead() {
        let (lender, count) = counting();
        let long = "word ".repeat(memory_core::ops::recall::MAX_QUERY_CHARS);
        for query in ["", "   ", "nul\0inside", long.as_str()] {
            lender.embed_ahead(query);
        }
        lender.embed(vec!["asked".into()]).unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn nothing_is_embedded_ahead_without_an_embedder() {
        let none = Lender::new(&EmbedderChoice::None, Duration::from_secs(1));
        none.embed_ahead("anything");
        assert!(matches!(
            none.embed(vec!["anything".into()]),
            Err(EmbedFailure::Unavailable(_))
        ));
        let failing = Lender::new(&EmbedderChoice::Failing, Duration::from_secs(1));
        failing.embed_ahead("anything");
        assert!(matches!(
            failing.embed(vec!["anything".into()]),
            Err(EmbedFailure::Failed(_))
        ));
    }
}
