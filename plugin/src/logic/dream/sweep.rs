//! What a dreaming sweep is asked and what it answers (the WIT `dream`
//! records): its phases, the verdict each candidate gets at the gates, what
//! a report shows of a candidate, and how `MEMORY.md` was consolidated. The
//! sweep itself is `ops::dream`.

use crate::contract::api::{SourceClass, TurnContext};
use crate::logic::dream::refusal::Refusal;
use crate::logic::dream::signals::{Gates, Scored};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    Light,
    Rem,
    Deep,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Light => "light",
            Phase::Rem => "rem",
            Phase::Deep => "deep",
        }
    }

    pub fn parse(name: &str) -> Option<Phase> {
        [Phase::Light, Phase::Rem, Phase::Deep]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DreamRequest {
    pub phases: Vec<Phase>,
    pub dry_run: bool,
    pub gates: Gates,
    pub context: TurnContext,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    SourceVanished,
    SourceChanged,
    Ineligible,
    Junk,
    Duplicate,
    AlreadyCurated,
    BelowGate,
    OverLimit,
    /// Passed, but `MEMORY.md` has no room within its budget.
    Deferred,
    Promoted,
    Merged,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CandidateView {
    pub citation: String,
    pub text: String,
    pub source_class: SourceClass,
    pub signals: Scored,
    pub verdict: Verdict,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidation {
    None,
    ModelRewrite,
    Deterministic,
    AppendOnly,
}

impl Consolidation {
    /// The name the ledger records (`dream_sweeps`, `sweep_log`).
    pub fn as_str(self) -> &'static str {
        match self {
            Consolidation::None => "none",
            Consolidation::ModelRewrite => "model rewrite",
            Consolidation::Deterministic => "deterministic",
            Consolidation::AppendOnly => "append-only",
        }
    }

    pub fn parse(name: &str) -> Option<Consolidation> {
        [
            Consolidation::None,
            Consolidation::ModelRewrite,
            Consolidation::Deterministic,
            Consolidation::AppendOnly,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DreamReport {
    pub sweep: u32,
    pub phases: Vec<Phase>,
    pub staged: u32,
    pub themes: u32,
    pub candidates: Vec<CandidateView>,
    pub added: Vec<String>,
    pub merged: Vec<String>,
    pub superseded: Vec<String>,
    pub rewritten: Vec<String>,
    /// Existing lines an accepted rewrite dropped (within the loss bound).
    pub dropped: Vec<String>,
    pub consolidation: Consolidation,
    /// Why the model's rewrite was not used, when it was not.
    pub refusal: Option<Refusal>,
    pub memory_changed: bool,
    pub dreams_changed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackReport {
    pub sweep: u32,
    pub entries_before: u32,
    pub entries_after: u32,
}
