//! Pure text handling, no I/O and no decisions about memory: words and
//! stems, Markdown entries and their annotations, session transcripts, the
//! framing of what memory shows a model, what a line says, the line a write
//! appends, the workspace layout (memory paths, tiers, dates) and content
//! hashes.

pub mod annotations;
pub mod entry;
pub mod framing;
pub mod hash;
pub mod layout;
pub mod markdown;
pub mod statement;
pub mod transcript;
pub mod words;
