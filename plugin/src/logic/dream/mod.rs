//! Dreaming's pure logic: recall signals and the deterministic gate, junk,
//! rehydration and near-duplicates, consolidation and its validation (with
//! the kind of a refusal), the budget on what a sweep writes, the
//! `DREAMS.md` review surface, and a sweep's request, verdicts and report.
//! The sweep itself (I/O, the model call, the hash-checked rename) is
//! `ops::dream`; the ledger keeps its records (`storage::ledger::dreaming`).

pub mod budget;
pub mod candidates;
pub mod consolidate;
pub mod dreams_md;
pub mod junk;
pub mod refusal;
pub mod signals;
pub mod sweep;
