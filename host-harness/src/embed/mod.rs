//! Embedders the harness lends to the component: a real local model
//! (all-MiniLM-L6-v2), none (lexical only), and two test doubles — a
//! deterministic bag-of-words embedder and one that always fails.
//!
//! Every backend runs behind `Lender`, which puts a host-side timeout on each
//! call: an epoch deadline does not interrupt a blocking host import.

pub mod deterministic;
pub mod minilm;
mod pinned;

use std::path::PathBuf;
use std::sync::mpsc;
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
    MiniLm {
        model_dir: PathBuf,
    },
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
    pub fn parse(name: &str, model_dir: PathBuf) -> anyhow::Result<EmbedderChoice> {
        Ok(match name {
            "none" => EmbedderChoice::None,
            "minilm" | "local" | "all-MiniLM-L6-v2" => EmbedderChoice::MiniLm { model_dir },
            "test" => EmbedderChoice::Test,
            "failing" => EmbedderChoice::Failing,
            "slow" => EmbedderChoice::Slow,
            "nan" => EmbedderChoice::Nan,
            "wrong-dims" => EmbedderChoice::WrongDims,
            other => anyhow::bail!(
                "unknown embedder {other:?}; use minilm, none, test, slow, failing, nan or wrong-dims"
            ),
        })
    }
}

type Job = (Vec<String>, mpsc::Sender<Result<Vec<Vec<f32>>, String>>);
/// Loads a backend inside its worker thread.
type Loader = Box<dyn FnOnce() -> Result<Box<dyn Backend>, String> + Send>;

/// An embedder behind a worker thread with a per-call timeout. The model is
/// loaded lazily, on the first call, so commands that never embed never pay
/// for loading it.
pub struct Lender {
    info: Option<EmbedderInfo>,
    jobs: Option<mpsc::Sender<Job>>,
    timeout: Duration,
    failing: bool,
}

impl Lender {
    pub fn new(choice: &EmbedderChoice, timeout: Duration) -> Lender {
        let (info, worker): (Option<EmbedderInfo>, Option<Loader>) = match choice {
            EmbedderChoice::None => (None, None),
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
            EmbedderChoice::MiniLm { model_dir } => {
                let dir = model_dir.clone();
                (
                    Some(EmbedderInfo {
                        provider: "local".into(),
                        model: minilm::MiniLm::MODEL_NAME.into(),
                        dimensions: minilm::MiniLm::DIMENSIONS as u32,
                        max_batch: 32,
                    }),
                    Some(Box::new(move || {
                        minilm::MiniLm::load(&dir)
                            .map(|m| Box::new(m) as Box<dyn Backend>)
                            .map_err(|e| format!("{e:#}"))
                    })),
                )
            }
        };
        let jobs = worker.map(spawn_worker);
        Lender {
            failing: matches!(choice, EmbedderChoice::Failing),
            info,
            jobs,
            timeout,
        }
    }

    pub fn describe(&self) -> Option<EmbedderInfo> {
        self.info.clone()
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
        let (reply, answer) = mpsc::channel();
        jobs.send((texts, reply))
            .map_err(|_| EmbedFailure::Unavailable("the embedder worker has stopped".into()))?;
        match answer.recv_timeout(self.timeout) {
            Ok(Ok(vectors)) => Ok(vectors),
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

/// What a worker runs.
pub trait Backend: Send {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>>;
}

impl Backend for minilm::MiniLm {
    fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        minilm::MiniLm::embed(self, texts)
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
