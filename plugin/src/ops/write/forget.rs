//! `write.forget`: everything a session wrote removed (each file rewritten
//! through a rename, a transcript note deleted) and the session
//! tombstoned, so nothing of it is written again.

use crate::contract::api::{SyncRequest, TurnContext};
use crate::contract::error::{io_error, MemoryError, Result};
use crate::ops::{storage_failure, Memory};
use crate::storage::workspace::content_hash;
use crate::text::hash::entry_hash;
use crate::text::layout::{self, MemoryPath};
use crate::text::markdown;

#[derive(Debug, Clone, PartialEq)]
pub struct ForgetRequest {
    pub session_id: String,
    pub context: TurnContext,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgetReport {
    /// Files the session's entries were removed from (transcripts deleted).
    pub files_changed: Vec<String>,
    pub entries_removed: u32,
}

impl Memory {
    /// Removes everything a session wrote and tombstones it. See the WIT
    /// `write.forget`.
    pub fn forget(&mut self, request: &ForgetRequest) -> Result<ForgetReport> {
        self.writable("forget")?;
        let session = request.session_id.trim();
        if session.is_empty() {
            return Err(MemoryError::InvalidInput("the session id is empty".into()));
        }
        let written = self
            .ledger
            .forget_session(session, request.context.now_ms)
            .map_err(storage_failure)?;
        // How many lines of each text the session wrote, per file.
        let mut by_path: std::collections::BTreeMap<
            String,
            std::collections::HashMap<String, u32>,
        > = Default::default();
        for (path, hash) in written {
            *by_path.entry(path).or_default().entry(hash).or_default() += 1;
        }
        let mut report = ForgetReport::default();
        for (path, hashes) in by_path {
            let Ok(memory_path) = layout::memory_path(&path) else {
                continue;
            };
            let removed = self.remove_entries(&memory_path, &hashes, request.context.now_ms)?;
            if removed > 0 {
                report.entries_removed += removed;
                report.files_changed.push(path);
            }
        }
        self.sync(SyncRequest::default())?;
        Ok(report)
    }

    /// Rewrites a file without the entries the session wrote: for each text
    /// hash, as many occurrences as it wrote, earliest first (a write never
    /// duplicates a line already there, so a later identical line is someone
    /// else's). Through a temporary file and a rename, so the file is the old
    /// or the new one, never partial; deleted when only blank lines remain.
    fn remove_entries(
        &mut self,
        path: &MemoryPath,
        counts: &std::collections::HashMap<String, u32>,
        now_ms: i64,
    ) -> Result<u32> {
        let mut counts = counts.clone();
        let bytes = match self.read_for_append(path) {
            Ok(bytes) => bytes,
            Err(MemoryError::NotFound(_)) => return Ok(0),
            Err(error) => return Err(error),
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        let mut drop = vec![false; lines.len()];
        let mut removed = 0;
        for entry in markdown::parse(&text).entries {
            let left = counts.get_mut(&entry_hash(&entry.text)).filter(|n| **n > 0);
            if let Some(left) = left {
                *left -= 1;
                for n in entry.start_line..=entry.end_line {
                    drop[(n - 1) as usize] = true;
                }
                removed += 1;
            }
        }
        if removed == 0 {
            return Ok(0);
        }
        let kept: Vec<&str> = lines
            .iter()
            .zip(&drop)
            .filter(|(_, d)| !**d)
            .map(|(l, _)| *l)
            .collect();
        let full = self.workspace.join(path.as_str());
        // Only what the session wrote was there (a transcript note): delete
        // the file. Anything else, a hand-written heading included, stays.
        if kept.iter().all(|l| l.trim().is_empty()) {
            std::fs::remove_file(&full)
                .map_err(|e| io_error("cannot delete", path.as_str(), &e))?;
            return Ok(removed);
        }
        let mut new_text = kept.join("\n");
        new_text.push('\n');
        let tmp = full.with_extension(format!("md.forget-{now_ms}"));
        std::fs::File::create(&tmp)
            .and_then(|f| crate::storage::workspace::write_all_at(&f, new_text.as_bytes(), 0))
            .and_then(|()| std::fs::rename(&tmp, &full))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io_error("cannot rewrite", path.as_str(), &e)
            })?;
        self.ledger
            .set_file_hash(path.as_str(), &content_hash(new_text.as_bytes()), now_ms)
            .map_err(storage_failure)?;
        Ok(removed)
    }
}
