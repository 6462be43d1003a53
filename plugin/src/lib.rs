//! memory-core: OpenClaw's agent memory over plain Markdown files, built as a
//! WASI preview-2 component (see `wit/`) and natively for tests.
//!
//! The crate is laid out in layers; each may use the layers above it in this
//! list and none below (`tests/layers.rs` checks it, and that no modules
//! import each other in a cycle):
//!
//! - [`contract`]: the vocabulary of the WIT boundary — the shared records
//!   and settings (`api`), the error, and (wasm only) `component`, the one
//!   module that touches the generated bindings.
//! - [`text`]: pure text handling — words, Markdown entries and their
//!   annotations, transcripts, framing, statements, the workspace layout and
//!   content hashes.
//! - [`host`]: what the host lends, as small traits: the embedder and the
//!   language model.
//! - [`logic`]: pure decisions, one module per feature and named after its
//!   operation (recall ranking, provenance, lane-1 triggers, escalation,
//!   intents, the flush, bootstrap, the user model, dreaming).
//! - [`storage`]: the SQLite index (a projection of the files), the
//!   provenance ledger, the SQLite layer and the workspace's file I/O.
//! - [`ops`]: [`Memory`], the operations behind the WIT exports, one module
//!   per export family: they read and write through `storage` and decide
//!   through `logic`.
//!
//! `component` sits on top of `ops`: it converts the WIT shapes to the
//! crate's own types and back.

pub mod contract;
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod logic;
pub mod ops;
pub mod storage;
pub mod text;

pub use contract::api::*;
pub use contract::error::MemoryError;
pub use logic::config;
pub use logic::dream::sweep::{
    CandidateView, Consolidation, DreamReport, DreamRequest, Phase, RollbackReport, Verdict,
};
pub use ops::inject::escalate::{EscalateRequest, Escalation};
pub use ops::inject::trigger::{ContextBlock, InjectRequest, InjectResult};
pub use ops::intents::{CreateResult, IntentSpec, IntentView};
pub use ops::report::{
    DayCount, PromotedEntry, RecallDay, RecalledEntry, ReportRequest, StagedCandidate, SweepView,
    WorkspaceReport,
};
pub use ops::user::UserModel;
pub use ops::write::{
    FlushReport, FlushRequest, ForgetReport, ForgetRequest, IngestReport, IngestRequest,
    NoteRequest, WriteReport,
};
pub use ops::Memory;

/// This crate's version, which `memory-harness --version` reads from a built
/// component's custom section `memory-core-version` (the WIT package names
/// the interface, not the build).
pub const COMPONENT_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(target_arch = "wasm32")]
#[used]
#[link_section = "memory-core-version"]
static COMPONENT_VERSION_SECTION: [u8; COMPONENT_VERSION.len()] = {
    let bytes = COMPONENT_VERSION.as_bytes();
    let mut out = [0u8; COMPONENT_VERSION.len()];
    let mut i = 0;
    while i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
};
