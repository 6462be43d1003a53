//! The WIT boundary as plain Rust: the settings and the records every layer
//! speaks (`api`: source classes, the turn context, provenance, and the
//! `store`, `recall` and `bootstrap` records), the one error type (`error`),
//! and the adapter between the generated bindings and the crate
//! (`component`, wasm only). The other families' requests and reports hold
//! types of the layers above, so they live with their operations (`ops::*`)
//! or decisions (`logic::dream::sweep`); the crate root re-exports them all.

pub mod api;
#[cfg(target_arch = "wasm32")]
mod component;
pub mod error;
