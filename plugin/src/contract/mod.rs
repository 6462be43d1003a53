//! The WIT boundary as plain Rust: the records and settings the operations
//! take and answer (`api`), the one error type (`error`), and the adapter
//! between the generated bindings and the crate (`component`, wasm only).

pub mod api;
#[cfg(target_arch = "wasm32")]
mod component;
pub mod error;
