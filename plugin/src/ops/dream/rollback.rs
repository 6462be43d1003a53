//! `dream.rollback`: `MEMORY.md` restored to its pre-image from before the
//! last sweep that changed it, by the owner only and only if the file is
//! still what that sweep wrote; its promotions are never made again.

use crate::contract::api::{SyncRequest, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::dream::sweep::RollbackReport;
use crate::ops::Memory;
use crate::text::hash::sha256_hex;
use crate::text::layout::{self, Date};
use crate::text::markdown;

impl Memory {
    /// See the WIT `dream.rollback`.
    pub fn dream_rollback(&mut self, context: &TurnContext) -> Result<RollbackReport> {
        self.writable("dream.rollback")?;
        if !context.sender_is_owner {
            return Err(MemoryError::AccessDenied(
                "only the owner can roll back a sweep".into(),
            ));
        }
        self.finish_interrupted_sweeps()?;
        let Some(change) = self.ledger.last_memory_change()? else {
            return Err(MemoryError::NotFound(
                "no sweep has changed MEMORY.md (or every change was rolled back)".into(),
            ));
        };
        let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
        let current_hash = current.as_deref().map(sha256_hex);
        if current_hash.as_deref() != Some(change.post_hash.as_str()) {
            return Err(MemoryError::InvalidInput(format!(
                "MEMORY.md was edited after sweep {}; nothing was overwritten (the pre-image is kept in the ledger)",
                change.sweep
            )));
        }
        let entries =
            |text: Option<&str>| text.map_or(0, |t| markdown::parse(t).entries.len() as u32);
        let current_text = current
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let replaced = self.workspace.replace_root_file(
            layout::MEMORY_FILE,
            current_hash.as_deref(),
            change.pre_text.as_deref().map(str::as_bytes),
            context.now_ms,
        )?;
        if !replaced {
            return Err(MemoryError::InvalidInput(
                "MEMORY.md changed during the rollback; nothing was overwritten".into(),
            ));
        }
        self.ledger.mark_rolled_back(change.sweep, context.now_ms)?;
        let report = RollbackReport {
            sweep: change.sweep as u32,
            entries_before: entries(current_text.as_deref()),
            entries_after: entries(change.pre_text.as_deref()),
        };
        let note = format!(
            "### Rollback {}\n\n- MEMORY.md restored to its state before sweep {} ({} entries, was {}); its promotions will not be made again.\n",
            Date::of_turn(context),
            report.sweep,
            report.entries_after,
            report.entries_before
        );
        self.write_dreams(&[], Some(&note), context.now_ms)?;
        self.sync(SyncRequest::default())?;
        Ok(report)
    }
}
