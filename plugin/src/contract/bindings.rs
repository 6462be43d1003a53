//! The generated WIT bindings, the one place they are generated. The guest
//! (`component`, wasm only) implements their exports; `adapter` converts
//! between their types and the crate's on every target, so the same
//! conversions also run natively (and, with serde, behind the harness's
//! native conformance driver).

wit_bindgen::generate!({
    world: "memory-core",
    path: "../wit",
    // serde's default shapes, which the harness's native conformance driver
    // maps to the scenarios' JSON by the one value rule.
    additional_derives: [serde::Serialize, serde::Deserialize],
});

pub use exports::openclaw::memory::bootstrap as wit_bootstrap;
pub use exports::openclaw::memory::config as wit_config;
pub use exports::openclaw::memory::dream as wit_dream;
pub use exports::openclaw::memory::inject as wit_inject;
pub use exports::openclaw::memory::intents as wit_intents;
pub use exports::openclaw::memory::recall as wit_recall;
pub use exports::openclaw::memory::report as wit_report;
pub use exports::openclaw::memory::store as wit_store;
pub use exports::openclaw::memory::user as wit_user;
pub use exports::openclaw::memory::write as wit_write;
pub use openclaw::memory::embedder as host_embedder;
pub use openclaw::memory::model as host_model;
pub use openclaw::memory::types as wit;
