//! memory-core: OpenClaw's agent memory over plain Markdown files, built as a
//! WASI preview-2 component (see `wit/`) and natively for tests.
//!
//! The logic is plain Rust over the workspace files, a SQLite index and a small
//! embedder trait; `component` (wasm only) is the one module that touches the
//! generated bindings.

pub mod annotations;
pub mod api;
pub mod bootstrap;
pub mod config;
pub mod dreaming;
pub mod embedding;
pub mod error;
pub mod flush;
pub mod framing;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod intents;
pub mod layout;
pub mod ledger;
pub mod markdown;
pub mod memory;
pub mod model;
pub mod provenance;
pub mod rank;
pub mod recall_agent;
pub mod recall_intent;
pub mod sqlite;
pub mod statement;
pub mod text;
pub mod transcript;
pub mod triggers;
pub mod user_model;
pub mod workspace;

#[cfg(target_arch = "wasm32")]
mod component;

pub use api::*;
pub use error::MemoryError;
pub use memory::Memory;
