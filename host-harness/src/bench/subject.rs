//! What a benchmark drives: the component in the wasmtime sandbox, or the
//! same `memory-core` crate compiled natively into this process — the two
//! drivers of the conformance runner (`crate::driver`), called by name the
//! same way. Every workload runs unchanged on each, so the cost of the
//! sandbox is a measured ratio.

use crate::driver::{Calls, Driver, Native, Run, Sandboxed, Turn as Clock};
use crate::embed::{EmbedderChoice, Lender};
use crate::model::{ModelChoice, ModelLender};
use crate::session::pacing::Pace;
use crate::session::Session;
use anyhow::anyhow;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// Who a benchmark turn is, for what the component records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// The owner in an interactive session: searches count as recalls.
    Owner,
    /// A cron session: nothing is recorded.
    Cron,
    /// No session kind at all (an evaluation): nothing is recorded.
    Unattributed,
}

/// What a dreaming sweep reported, reduced to what a benchmark prints.
#[derive(Debug, Clone, Copy, Default)]
pub struct SweepOutcome {
    pub candidates: usize,
    pub passing: usize,
    pub promoted: usize,
}

/// What a full sync did, for a benchmark's figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncTotals {
    pub calls: u32,
    pub files_indexed: u32,
    pub embedded: u32,
    pub cached: u32,
}

/// A driver and the calls it knows.
pub struct Subject {
    run: Run,
    calls: Calls,
}

impl Subject {
    /// The component, through the sandbox.
    pub fn sandboxed(session: Session) -> Subject {
        let utc_offset_minutes = session.utc_offset_minutes;
        Subject::over(Box::new(Sandboxed::new(session)), utc_offset_minutes)
    }

    /// The same crate, compiled natively: no sandbox, the component's
    /// default settings (which are also the harness's), the same embedder
    /// as the sandboxed side, no model.
    pub fn native(workspace: &Path, embedder: &EmbedderChoice) -> anyhow::Result<Subject> {
        let driver = Native::new(
            workspace.to_path_buf(),
            &Map::new(),
            Lender::new(embedder, Duration::from_secs(30)),
            ModelLender::new(&ModelChoice::None, Duration::from_secs(60))?,
        );
        Ok(Subject::over(Box::new(driver), 0))
    }

    fn over(driver: Box<dyn Driver>, utc_offset_minutes: i32) -> Subject {
        let run = Run {
            driver,
            turn: Clock {
                now_ms: 0,
                utc_offset_minutes,
                projects: Default::default(),
            },
        };
        Subject {
            run,
            calls: Calls::new(),
        }
    }

    /// The call's value; the component's error is a failure of the benchmark.
    fn call(&mut self, name: &str, now_ms: i64, args: Value) -> anyhow::Result<Value> {
        self.run.turn.now_ms = now_ms;
        let args = args.as_object().cloned().unwrap_or_default();
        self.calls
            .answer(&mut self.run, name, &args)?
            .map_err(|error| anyhow!("{name}: {error}"))
    }

    /// A turn's `context`: the owner at a terminal, in `turn`'s session kind.
    fn context(turn: Turn) -> Value {
        let kind = match turn {
            Turn::Owner => json!("interactive"),
            Turn::Cron => json!("cron"),
            Turn::Unattributed => Value::Null,
        };
        json!({ "session_kind": kind })
    }

    /// Indexes the workspace until nothing is pending (vectors included),
    /// in calls sized by time as the CLI's `index` does (`pacing`).
    pub fn sync(&mut self, force: bool) -> anyhow::Result<SyncTotals> {
        let mut pace = Pace::default();
        let mut first = true;
        let mut totals = SyncTotals::default();
        loop {
            let started = Instant::now();
            let request = json!({"max_files": pace.files, "max_embeddings": pace.embeddings, "force": force && first});
            let report = self.call("store.sync", 0, json!({ "request": request }))?;
            first = false;
            let number = |key: &str| report[key].as_u64().unwrap_or(0) as u32;
            let (indexed, embedded) = (number("files_indexed"), number("embeddings_computed"));
            pace = pace.next(indexed, embedded, started.elapsed());
            totals.calls += 1;
            totals.files_indexed += indexed;
            totals.embedded += embedded;
            totals.cached += number("embeddings_cached");
            let advanced = indexed > 0 || embedded > 0 || number("embeddings_cached") > 0;
            let vectors_wanted =
                number("vectors_pending") > 0 && report["embedding_problem"].is_null();
            if !(number("files_pending") > 0 || vectors_wanted) || !advanced {
                return Ok(totals);
            }
        }
    }

    /// One search; returns the number of hits.
    pub fn search(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        turn: Turn,
        now_ms: i64,
    ) -> anyhow::Result<usize> {
        let request =
            json!({"query": query, "max_results": max_results, "context": Self::context(turn)});
        let result = self.call("recall.search", now_ms, json!({ "request": request }))?;
        Ok(count(&result["hits"]))
    }

    /// One search's hits, where each is, and the search's mode (an
    /// evaluation: nothing recorded).
    pub fn hits(
        &mut self,
        query: &str,
        max_results: u32,
        now_ms: i64,
    ) -> anyhow::Result<(Vec<super::supersession::Hit>, String)> {
        let request = json!({"query": query, "max_results": max_results, "context": Self::context(Turn::Unattributed)});
        let result = self.call("recall.search", now_ms, json!({ "request": request }))?;
        let mode = match (&result["mode"], &result["degraded"]) {
            (Value::String(mode), Value::String(why)) => format!("{mode} ({why})"),
            (Value::String(mode), _) => mode.clone(),
            _ => "unknown".into(),
        };
        let hits = result["hits"].as_array().cloned().unwrap_or_default();
        let hits = hits
            .iter()
            .map(|h| super::supersession::Hit {
                path: h["path"].as_str().unwrap_or_default().to_string(),
                start_line: h["lines"]["start"].as_u64().unwrap_or(0) as u32,
                end_line: h["lines"]["end"].as_u64().unwrap_or(0) as u32,
            })
            .collect();
        Ok((hits, mode))
    }

    /// The owner's note, as the agent's `memory_note` writes it.
    pub fn note(&mut self, text: &str, now_ms: i64) -> anyhow::Result<()> {
        let request = json!({"text": text, "origin": "sender-message", "context": Self::context(Turn::Owner)});
        self.call("write.note", now_ms, json!({ "request": request }))?;
        Ok(())
    }

    /// The owner's note under a supersedes key, as `memory_note` with
    /// `supersedes` writes it: where its line landed (path, line), or `None`
    /// when the day already held the same line (merged as a duplicate).
    pub fn keyed_note(
        &mut self,
        text: &str,
        key: Option<&str>,
        now_ms: i64,
    ) -> anyhow::Result<Option<(String, u32)>> {
        let request = json!({"text": text, "origin": "sender-message", "supersedes_key": key, "context": Self::context(Turn::Owner)});
        let report = self.call("write.note", now_ms, json!({ "request": request }))?;
        let path = report["path"].as_str().unwrap_or_default().to_string();
        Ok(report["lines"][0].as_u64().map(|line| (path, line as u32)))
    }

    pub fn bootstrap(&mut self, now_ms: i64) -> anyhow::Result<()> {
        let request = json!({"purpose": "session-start"});
        self.call("bootstrap.load", now_ms, json!({ "request": request }))?;
        Ok(())
    }

    pub fn create_intent(
        &mut self,
        text: String,
        trigger: String,
        now_ms: i64,
    ) -> anyhow::Result<()> {
        let spec = json!({"text": text, "triggers": [trigger], "origin": "sender-message"});
        self.call("intents.create", now_ms, json!({ "spec": spec }))?;
        Ok(())
    }

    /// Lane 1 for one message; returns the number of blocks injected.
    pub fn inject(&mut self, message: String, now_ms: i64) -> anyhow::Result<usize> {
        let request = json!({"message": message, "mode": "escalate"});
        let result = self.call(
            "inject.trigger-inject",
            now_ms,
            json!({ "request": request }),
        )?;
        Ok(count(&result["blocks"]))
    }

    pub fn dream(&mut self, dry_run: bool, now_ms: i64) -> anyhow::Result<SweepOutcome> {
        let request = json!({"dry_run": dry_run});
        let report = self.call("dream.run", now_ms, json!({ "request": request }))?;
        let candidates = report["candidates"].as_array().cloned().unwrap_or_default();
        Ok(SweepOutcome {
            candidates: candidates.len(),
            passing: candidates
                .iter()
                .filter(|c| matches!(c["verdict"].as_str(), Some("promoted" | "over-limit")))
                .count(),
            promoted: count(&report["added"]),
        })
    }

    /// The most linear memory the guest has held, when it is measurable.
    pub fn peak_memory_bytes(&self) -> Option<u64> {
        self.run.driver.peak_memory_bytes()
    }
}

fn count(list: &Value) -> usize {
    list.as_array().map_or(0, Vec::len)
}
