//! Pure decisions: plain functions from what was read to a plan or an answer,
//! with no I/O. Each module is named after the operation it decides for
//! (`logic::recall` ranks for `ops::recall`, `logic::dream` gates and
//! consolidates for `ops::dream`, …), so a feature's two halves are found
//! under the same name.

pub mod bootstrap;
pub mod config;
pub mod dream;
pub mod inject;
pub mod intents;
pub mod lexical;
pub mod provenance;
pub mod recall;
pub mod user;
pub mod vectors;
pub mod write;
