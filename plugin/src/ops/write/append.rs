//! The append path every write goes through: the ledger records the entries
//! first, then only the lines not already there are appended (a failed
//! write cuts the file back to what it was), the file's new hash is
//! recorded and the index synced. And where writes go: today's daily note,
//! a session's transcript note.

use crate::contract::api::{SessionKind, SourceClass, SyncRequest, TurnContext};
use crate::contract::error::{io_error, MemoryError, Result};
use crate::logic::dream::consolidate::project_set;
use crate::logic::provenance::Segment;
use crate::ops::{storage_failure, Memory};
use crate::storage::workspace::content_hash;
use crate::text::hash::{entry_hash, sha256_hex};
use crate::text::layout::{self, Date, MemoryPath};
use crate::text::markdown;
use std::collections::HashSet;

/// Daily notes larger than this are not appended to (a clear error instead).
const MAX_APPEND_TARGET_BYTES: u64 = 64 * 1024 * 1024;

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// The daily note written to.
    pub path: String,
    /// Line numbers of the entries appended.
    pub lines: Vec<u32>,
    /// Entries not written because the file already holds them.
    pub duplicates: u32,
    pub source_class: SourceClass,
    pub session_kind: SessionKind,
}

/// One entry to append, with its ledger record.
pub(in crate::ops) struct NewEntry {
    pub line: String,
    pub segment: Segment,
}

/// Who and what the entries of one write are written as.
pub(super) struct Written<'a> {
    pub class: SourceClass,
    pub kind: SessionKind,
    pub session: &'a str,
    pub context: &'a TurnContext,
}

impl Memory {
    /// Appends entries to a daily note: records them in the ledger, appends
    /// the lines not already present, records the file's new hash and
    /// re-indexes. Returns the new lines' numbers and how many were skipped as
    /// duplicates.
    pub(in crate::ops) fn append_entries(
        &mut self,
        path: &MemoryPath,
        entries: Vec<NewEntry>,
        now_ms: i64,
    ) -> Result<(Vec<u32>, u32)> {
        let full = self.workspace.join(path.as_str());
        let existing = self.read_for_append(path)?;
        // The same text tagged for another project is another entry: a
        // workaround learnt in two repositories is kept for each.
        let present: HashSet<(String, Vec<String>)> =
            markdown::parse(&String::from_utf8_lossy(&existing))
                .entries
                .iter()
                .map(|e| (entry_hash(&e.text), project_set(&e.annotations.projects)))
                .collect();
        let mut seen = present;
        let mut fresh: Vec<NewEntry> = Vec::new();
        let mut duplicates = 0;
        for entry in entries {
            let projects = markdown::parse(&entry.line)
                .entries
                .first()
                .map(|e| project_set(&e.annotations.projects))
                .unwrap_or_default();
            if seen.insert((entry.segment.text_hash.clone(), projects)) {
                fresh.push(entry);
            } else {
                duplicates += 1;
            }
        }
        if fresh.is_empty() {
            return Ok((Vec::new(), duplicates));
        }
        let previous_hash = content_hash(&existing);
        if let Some(file) = self.ledger.file(path.as_str()).map_err(storage_failure)? {
            if file.hash != previous_hash && !file.edited_out_of_band {
                self.ledger
                    .mark_edited(path.as_str())
                    .map_err(storage_failure)?;
            }
        }
        let segments: Vec<Segment> = fresh.iter().map(|e| e.segment.clone()).collect();
        // The record goes first: a crash after it leaves a record without a
        // line, never a line without its record.
        // Content already in a file the ledger does not know is the
        // operator's, unless the ledger was lost: then it may be the
        // component's own unvouched writes, and it must not be laundered.
        let prior_lost = self.ledger.lost().is_some() && !existing.is_empty();
        self.ledger
            .record_segments(path.as_str(), &segments, prior_lost, &previous_hash, now_ms)
            .map_err(storage_failure)?;
        let mut appended = String::new();
        if !existing.is_empty() && !existing.ends_with(b"\n") {
            appended.push('\n');
        }
        let first_line = line_count(&existing) + 1;
        for entry in &fresh {
            appended.push_str(&entry.line);
            appended.push('\n');
        }
        append_atomically(&full, path, existing.len() as u64, appended.as_bytes())?;
        let mut after = existing;
        after.extend_from_slice(appended.as_bytes());
        self.ledger
            .set_file_hash(path.as_str(), &content_hash(&after), now_ms)
            .map_err(storage_failure)?;
        self.sync(SyncRequest::default())?;
        let lines = (0..fresh.len() as u32).map(|i| first_line + i).collect();
        Ok((lines, duplicates))
    }

    /// The current bytes of a daily note (empty when it does not exist yet);
    /// refuses symlinks, non-regular files and a symlinked `memory/`.
    pub(super) fn read_for_append(&self, path: &MemoryPath) -> Result<Vec<u8>> {
        let dir = self.workspace.join(layout::DAILY_DIR);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(MemoryError::AccessDenied(
                    "memory/ is a symlink or not a directory; memory never writes through it"
                        .into(),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir)
                    .map_err(|e| io_error("cannot create", layout::DAILY_DIR, &e))?;
            }
            Err(e) => return Err(io_error("cannot read", layout::DAILY_DIR, &e)),
        }
        match self.workspace.read(path, MAX_APPEND_TARGET_BYTES) {
            Ok(content) if content.size > MAX_APPEND_TARGET_BYTES => Err(MemoryError::TooLarge(format!(
                "{path} is {} bytes; memory appends to daily notes up to {MAX_APPEND_TARGET_BYTES} bytes",
                content.size
            ))),
            Ok(_) => std::fs::read(self.workspace.join(path.as_str())).map_err(|e| io_error("cannot read", path.as_str(), &e)),
            Err(MemoryError::NotFound(_)) => Ok(Vec::new()),
            Err(error) => Err(error),
        }
    }
}

/// Appends `bytes` to the file at `full`, creating it if needed; on any
/// failure (a full disk, a read-only file system) the file is cut back to
/// `original_len`, so it is left as it was.
fn append_atomically(
    full: &std::path::Path,
    path: &MemoryPath,
    original_len: u64,
    bytes: &[u8],
) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(full)
        .map_err(|e| io_error("cannot write", path.as_str(), &e))?;
    // A positional write at the end: on WASI it is one `descriptor.write`,
    // whose error names its cause (a stream write reports every failure,
    // a full disk included, as a bare I/O error).
    let written = file
        .metadata()
        .and_then(|meta| crate::storage::workspace::write_all_at(&file, bytes, meta.len()))
        .and_then(|()| file.sync_data());
    if let Err(error) = written {
        let _ = file.set_len(original_len);
        let _ = file.sync_data();
        return Err(io_error("cannot write", path.as_str(), &error));
    }
    Ok(())
}

/// Today's daily note: the owner's local date at the turn.
pub(in crate::ops) fn daily_note(context: &TurnContext) -> MemoryPath {
    layout::memory_path(&format!("memory/{}.md", Date::of_turn(context)))
        .expect("a dated daily-note path is valid")
}

/// A session's transcript note: `memory/YYYY-MM-DD-session-<id>.md` of the
/// owner's local date, the id reduced to safe characters (with a hash when
/// that changed it, so two ids never share a file).
pub(super) fn transcript_note(context: &TurnContext, session: &str) -> MemoryPath {
    let safe: String = session
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .take(48)
        .collect();
    let slug = if safe == session && !safe.is_empty() {
        safe
    } else {
        format!("{safe}-{}", &sha256_hex(session.as_bytes())[..8])
    };
    layout::memory_path(&format!(
        "memory/{}-session-{slug}.md",
        Date::of_turn(context)
    ))
    .expect("a sanitised transcript path is valid")
}

/// Writes fail closed on an unknown session kind: content of unknown origin
/// is never recorded.
pub(super) fn session_kind_of(context: &TurnContext) -> Result<SessionKind> {
    context.session_kind.ok_or_else(|| {
        MemoryError::InvalidInput(
            "the session kind is unknown; memory records nothing of unknown origin".into(),
        )
    })
}

fn line_count(bytes: &[u8]) -> u32 {
    String::from_utf8_lossy(bytes).lines().count() as u32
}
