//! memory-harness: a small wasmtime host for the memory-core component, plus
//! the configuration, embedders, CLI plumbing and conformance runner around it.
//! It holds no memory logic: every decision is the component's.

pub mod bench;
pub mod clock;
pub mod config;
pub mod conformance;
pub mod cron;
pub mod driver;
pub mod embed;
pub mod health;
pub mod host;
pub mod http;
pub mod json;
pub mod model;
pub mod names;
pub mod notes;
pub mod poisoning;
pub mod project;
pub mod report;
pub mod session;
pub mod settings;
pub mod spool;
pub mod transcript;
pub mod version;
