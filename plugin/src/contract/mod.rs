//! The WIT boundary as plain Rust: the settings and the records every layer
//! speaks (`api`: source classes, the turn context, provenance, and the
//! `store`, `recall` and `bootstrap` records), the one error type (`error`),
//! the generated bindings (`bindings`), the conversions between them and the
//! crate (`adapter`, on every target) and the guest's exports (`component`,
//! wasm only). The other families' requests and reports hold types of the
//! layers above, so they live with their operations (`ops::*`) or decisions
//! (`logic::dream::sweep`); the crate root re-exports them all.

pub mod adapter;
pub mod api;
pub mod bindings;
#[cfg(target_arch = "wasm32")]
mod component;
pub mod error;
