//! The `write` family: `note`, `flush`, `ingest` and `forget`. Every write
//! records its provenance in the ledger before it touches a file, appends
//! only (a line already there is not written twice, earlier lines are never
//! rewritten; `forget` alone removes, through a rename), and leaves the file
//! as it was when it fails.

mod append;
mod flush;
mod forget;
mod ingest;
mod note;

pub(in crate::ops) use append::NewEntry;
pub use append::WriteReport;
pub use flush::{FlushReport, FlushRequest};
pub use forget::{ForgetReport, ForgetRequest};
pub use ingest::{IngestReport, IngestRequest};
pub use note::{NoteRequest, MAX_NOTE_CHARS};
