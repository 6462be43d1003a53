//! Where memory is kept: the SQLite index, a projection of the Markdown
//! files rebuilt from them at need (`index`); the provenance ledger, durable
//! and never rebuilt (`ledger`); the SQLite layer both run on (`sqlite`);
//! and the workspace's files themselves (`workspace`). Storage keeps and
//! finds; it never calls an operation.

pub mod index;
pub mod ledger;
pub mod sqlite;
pub mod workspace;
