//! What a benchmark drives: the component in the wasmtime sandbox, or the
//! same `memory-core` crate compiled natively into this process. Both are
//! driven through one small trait, so every workload runs unchanged on each
//! and the cost of the sandbox is a measured ratio.

use crate::host::{wit, wit_bootstrap, wit_dream, wit_inject, wit_recall};
use crate::session::Session;
use anyhow::anyhow;

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

pub trait Subject {
    /// Indexes the workspace until nothing is pending.
    fn sync(&mut self, force: bool) -> anyhow::Result<()>;
    /// One search; returns the number of hits.
    fn search(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        turn: Turn,
        now_ms: i64,
    ) -> anyhow::Result<usize>;
    fn bootstrap(&mut self, now_ms: i64) -> anyhow::Result<()>;
    fn create_intent(&mut self, text: String, trigger: String, now_ms: i64) -> anyhow::Result<()>;
    /// Lane 1 for one message; returns the number of blocks injected.
    fn inject(&mut self, message: String, now_ms: i64) -> anyhow::Result<usize>;
    fn dream(&mut self, dry_run: bool, now_ms: i64) -> anyhow::Result<SweepOutcome>;
    /// The most linear memory the guest has held, when it is measurable.
    fn peak_memory_bytes(&self) -> Option<u64>;
}

/// The component, through the sandbox.
pub struct Sandboxed(pub Session);

impl Sandboxed {
    fn context(&self, turn: Turn, now_ms: i64) -> wit::TurnContext {
        let base = self.0.context();
        wit::TurnContext {
            now_ms,
            session_kind: match turn {
                Turn::Owner => Some(wit::SessionKind::Interactive),
                Turn::Cron => Some(wit::SessionKind::Cron),
                Turn::Unattributed => None,
            },
            ..base
        }
    }
}

fn failed(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{e}")
}

impl Subject for Sandboxed {
    fn sync(&mut self, force: bool) -> anyhow::Result<()> {
        self.0.sync_all(force, false, |_| {}).map_err(failed)?;
        Ok(())
    }

    fn search(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        turn: Turn,
        now_ms: i64,
    ) -> anyhow::Result<usize> {
        let request = wit_recall::SearchRequest {
            query: query.to_string(),
            max_results,
            min_score: None,
            context: self.context(turn, now_ms),
        };
        Ok(self.0.host.search(&request).map_err(failed)?.hits.len())
    }

    fn bootstrap(&mut self, now_ms: i64) -> anyhow::Result<()> {
        let request = wit_bootstrap::BootstrapRequest {
            purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
            context: self.context(Turn::Owner, now_ms),
            known_digest: None,
        };
        self.0.host.bootstrap(&request).map_err(failed)?;
        Ok(())
    }

    fn create_intent(&mut self, text: String, trigger: String, now_ms: i64) -> anyhow::Result<()> {
        let spec = crate::session::NewIntent::on_trigger(text, vec![trigger]).spec();
        let context = self.context(Turn::Owner, now_ms);
        self.0.host.intent_create(&spec, &context).map_err(failed)?;
        Ok(())
    }

    fn inject(&mut self, message: String, now_ms: i64) -> anyhow::Result<usize> {
        let request = wit_inject::InjectRequest {
            message,
            mode: wit_inject::EscalationMode::Escalate,
            context: self.context(Turn::Owner, now_ms),
        };
        Ok(self.0.host.inject(&request).map_err(failed)?.blocks.len())
    }

    fn dream(&mut self, dry_run: bool, now_ms: i64) -> anyhow::Result<SweepOutcome> {
        let request = wit_dream::DreamRequest {
            phases: Vec::new(),
            dry_run,
            gates: self.0.dream_gates,
            context: self.context(Turn::Owner, now_ms),
        };
        let report = self.0.host.dream(&request).map_err(failed)?;
        Ok(SweepOutcome {
            candidates: report.candidates.len(),
            passing: report
                .candidates
                .iter()
                .filter(|c| {
                    matches!(
                        c.verdict,
                        wit_dream::Verdict::Promoted | wit_dream::Verdict::OverLimit
                    )
                })
                .count(),
            promoted: report.added.len(),
        })
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        Some(self.0.host.peak_guest_memory() as u64)
    }
}

/// The same crate, compiled natively: no sandbox, the reference settings
/// (which are also the harness's defaults), no embedder, no model.
pub struct Native(pub memory_core::Memory);

impl Native {
    pub fn open(workspace: &std::path::Path) -> anyhow::Result<Native> {
        let memory = memory_core::Memory::open(
            memory_core::Settings::reference(workspace),
            Box::new(memory_core::host::embedding::NoEmbedder),
            Box::new(memory_core::host::model::NoModel),
        )
        .map_err(failed)?;
        Ok(Native(memory))
    }

    fn context(turn: Turn, now_ms: i64) -> memory_core::TurnContext {
        memory_core::TurnContext {
            now_ms,
            session_id: None,
            session_kind: match turn {
                Turn::Owner => Some(memory_core::SessionKind::Interactive),
                Turn::Cron => Some(memory_core::SessionKind::Cron),
                Turn::Unattributed => None,
            },
            channel: Some("cli".into()),
            sender: None,
            sender_is_owner: true,
            active_projects: Vec::new(),
            utc_offset_minutes: 0,
            taint: None,
        }
    }
}

impl Subject for Native {
    fn sync(&mut self, force: bool) -> anyhow::Result<()> {
        self.0
            .sync(memory_core::SyncRequest {
                max_files: None,
                force,
                acknowledge_rebuild: false,
            })
            .map_err(failed)?;
        Ok(())
    }

    fn search(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        turn: Turn,
        now_ms: i64,
    ) -> anyhow::Result<usize> {
        let request = memory_core::SearchRequest {
            query: query.to_string(),
            max_results,
            min_score: None,
            context: Self::context(turn, now_ms),
        };
        Ok(self.0.search(&request).map_err(failed)?.hits.len())
    }

    fn bootstrap(&mut self, now_ms: i64) -> anyhow::Result<()> {
        let request = memory_core::BootstrapRequest {
            purpose: memory_core::BootstrapPurpose::SessionStart,
            context: Self::context(Turn::Owner, now_ms),
            known_digest: None,
        };
        self.0.bootstrap(&request).map_err(failed)?;
        Ok(())
    }

    fn create_intent(&mut self, text: String, trigger: String, now_ms: i64) -> anyhow::Result<()> {
        let spec = memory_core::IntentSpec {
            text,
            triggers: vec![trigger],
            due_at_ms: None,
            channel: None,
            sender: None,
            expires_in_ms: None,
            fire_budget: None,
            cooldown_ms: None,
            semantic: false,
            origin: memory_core::ContentOrigin::SenderMessage,
        };
        self.0
            .create_intent(&spec, &Self::context(Turn::Owner, now_ms))
            .map_err(failed)?;
        Ok(())
    }

    fn inject(&mut self, message: String, now_ms: i64) -> anyhow::Result<usize> {
        let request = memory_core::InjectRequest {
            message,
            mode: memory_core::logic::inject::recall_intent::EscalationMode::Escalate,
            context: Self::context(Turn::Owner, now_ms),
        };
        Ok(self.0.inject(&request).map_err(failed)?.blocks.len())
    }

    fn dream(&mut self, dry_run: bool, now_ms: i64) -> anyhow::Result<SweepOutcome> {
        use memory_core::Verdict;
        let request = memory_core::DreamRequest {
            phases: Vec::new(),
            dry_run,
            gates: memory_core::logic::dream::signals::Gates::reference(),
            context: Self::context(Turn::Owner, now_ms),
        };
        let report = self.0.dream(&request).map_err(failed)?;
        Ok(SweepOutcome {
            candidates: report.candidates.len(),
            passing: report
                .candidates
                .iter()
                .filter(|c| matches!(c.verdict, Verdict::Promoted | Verdict::OverLimit))
                .count(),
            promoted: report.added.len(),
        })
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        None
    }
}
