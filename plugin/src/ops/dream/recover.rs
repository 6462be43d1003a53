//! Interrupted sweeps: on open (and before a sweep or a rollback), a sweep
//! an interruption left unfinished is completed when its change reached
//! `MEMORY.md`, or abandoned (its candidates tried again) when it did not,
//! and `DREAMS.md` and status say which.

use crate::contract::error::Result;
use crate::logic::dream::sweep::{Consolidation, Phase};
use crate::ops::{storage_failure, Memory};
use crate::storage::ledger::dreaming::{SweepChange, SweepLogEntry, SweepState};
use crate::text::hash::{entry_hash, sha256_hex};
use crate::text::layout::{self, Date};
use crate::text::markdown;
use std::collections::HashSet;

impl Memory {
    /// Completes or abandons the sweeps an interruption (a kill, a crash, a
    /// failed write) left unfinished, so rollback always has the pre-image
    /// of a `MEMORY.md` a sweep changed and `DREAMS.md` always gets the
    /// summary. A sweep whose file reached `MEMORY.md` (the file is the one
    /// it wrote, or holds every line it added) is completed: its summary is
    /// appended. One whose file never got there is forgotten, its candidates
    /// left for the next sweep, and `DREAMS.md` says so. Either is reported
    /// in status until the next sweep succeeds. Returns what it did.
    pub fn finish_interrupted_sweeps(&mut self) -> Result<Vec<String>> {
        let mut done = Vec::new();
        for sweep in self.ledger.unfinished_sweeps()? {
            let date = Date::from_ms(sweep.at_ms);
            let landing = match (&sweep.change, sweep.state) {
                (_, SweepState::Committed | SweepState::Done) | (None, _) => Landing::Landed,
                (Some(change), SweepState::Pending) => {
                    let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
                    change_landed(change, current.as_deref(), &sweep.line_hashes)
                }
            };
            let what = match landing {
                Landing::NotLanded => {
                    // The note and the log first: a kill or a full disk before
                    // the record is forgotten leaves the sweep pending, and the
                    // next open does this again (the note is not repeated).
                    let note = format!(
                        "### Sweep {date}\n\n- Interrupted before it changed MEMORY.md: nothing was promoted; its candidates are tried again by the next sweep.\n"
                    );
                    self.append_to_dreams_once(&note, sweep.at_ms)?;
                    let entry = SweepLogEntry {
                        at_ms: sweep.at_ms,
                        phases: vec![Phase::Deep.as_str().to_string()],
                        consolidation: Consolidation::None.as_str().to_string(),
                        refusal: Some((
                            "interrupted".to_string(),
                            "stopped before the rename that commits MEMORY.md".to_string(),
                        )),
                        dreams_changed: true,
                        ..Default::default()
                    };
                    self.ledger.log_sweep(&entry).map_err(storage_failure)?;
                    self.ledger
                        .abandon_sweep(sweep.sweep)
                        .map_err(storage_failure)?;
                    format!(
                        "the sweep of {date} was interrupted before it changed MEMORY.md; nothing was promoted"
                    )
                }
                Landing::Unknown => {
                    // MEMORY.md was edited since and holds none of the sweep's
                    // lines: whether its change landed cannot be told. Its
                    // record and pre-image are kept (rollback refuses an
                    // edited file and says the pre-image is kept).
                    let note = format!(
                        "### Sweep {date}\n\n- Interrupted around the moment it replaced MEMORY.md, which has been edited since and holds none of the lines it added: whether its change landed cannot be told. Its record and the file as it was before are kept in the ledger.\n"
                    );
                    self.append_to_dreams_once(&note, sweep.at_ms)?;
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Done)
                        .map_err(storage_failure)?;
                    format!(
                        "the sweep of {date} (sweep {}) was interrupted around its change to MEMORY.md, which was edited since; its pre-image is kept in the ledger",
                        sweep.sweep
                    )
                }
                Landing::Landed => {
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Committed)
                        .map_err(storage_failure)?;
                    let summary = sweep.summary.unwrap_or_else(|| {
                        format!("### Sweep {date}\n\n- Promotions were recorded; the summary was not kept.\n")
                    });
                    let how = if sweep.change.is_some() {
                        "after it changed MEMORY.md"
                    } else {
                        "after it recorded its merges"
                    };
                    if !self.dreams_holds(&summary)? {
                        let summary = format!(
                            "{}\n- Interrupted {how}; this summary was written when the memory was next opened.\n",
                            summary.trim_end_matches('\n')
                        );
                        self.append_to_dreams_once(&summary, sweep.at_ms)?;
                    }
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Done)
                        .map_err(storage_failure)?;
                    let rollback = if sweep.change.is_some() {
                        ", rollback works"
                    } else {
                        ""
                    };
                    format!(
                        "the sweep of {date} (sweep {}) was interrupted {how}; it was completed (summary in DREAMS.md{rollback})",
                        sweep.sweep
                    )
                }
            };
            self.ledger
                .set_sweep_problem(Some(&what))
                .map_err(storage_failure)?;
            done.push(what);
        }
        Ok(done)
    }
}

/// What became of a pending sweep's change to `MEMORY.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landing {
    /// The file is the one it wrote, or (edited since) holds a line it added.
    Landed,
    /// The file is still its pre-image.
    NotLanded,
    /// Edited since, holding none of its lines: it cannot be told.
    Unknown,
}

/// Whether a pending sweep's change reached `MEMORY.md` (`current`), by
/// the file and the hashes of the entries its promotions wrote (`lines`);
/// a line that was already in the pre-image proves nothing.
fn change_landed(change: &SweepChange, current: Option<&[u8]>, lines: &[String]) -> Landing {
    let current_hash = current.map(sha256_hex);
    if current_hash.as_deref() == Some(change.post_hash.as_str()) {
        return Landing::Landed;
    }
    let pre_hash = change.pre_text.as_deref().map(|t| sha256_hex(t.as_bytes()));
    if current_hash == pre_hash {
        return Landing::NotLanded;
    }
    let Some(current) = current else {
        // The file is gone: deleted after the rename, or before it by hand.
        return Landing::Unknown;
    };
    let hashes = |text: &str| -> HashSet<String> {
        markdown::parse(text)
            .entries
            .iter()
            .map(|e| entry_hash(&e.text))
            .collect()
    };
    let before = hashes(change.pre_text.as_deref().unwrap_or(""));
    let now = hashes(&String::from_utf8_lossy(current));
    if lines.iter().any(|h| !before.contains(h) && now.contains(h)) {
        Landing::Landed
    } else {
        Landing::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::api::{Settings, SourceClass, TurnContext};
    use crate::contract::error::MemoryError;
    use crate::storage::ledger::dreaming::Promotion;

    const OLD: &str = "# Memory\n\n- The owner lives in Lisbon.\n";
    const NEW: &str =
        "# Memory\n\n- The owner lives in Lisbon.\n- The gateway listens on 8443. Source: memory/2026-12-01.md#L3-L3\n";
    const SUMMARY: &str = "### Sweep 2026-12-02\n\n- Consolidation: deterministic.\n- Added:\n  - The gateway listens on 8443.\n";
    const AT: i64 = 1_796_176_800_000;

    fn open(dir: &std::path::Path) -> Memory {
        Memory::open(
            Settings::reference(dir),
            Box::new(crate::host::embedding::NoEmbedder),
            Box::new(crate::host::model::NoModel),
        )
        .unwrap()
    }

    /// Records the sweep that turns `OLD` into `NEW`, as a sweep does just
    /// before its rename.
    fn pending_sweep(memory: &Memory) -> i64 {
        let added = &markdown::parse(NEW).entries[1].text;
        let promotion = Promotion {
            source_path: "memory/2026-12-01.md".into(),
            source_hash: entry_hash("- The gateway listens on 8443."),
            line_hash: entry_hash(added),
            supersedes_key: None,
            observed_at: None,
            merged: false,
            citation: "memory/2026-12-01.md#L3-L3".into(),
            source_class: SourceClass::Owner,
            session_kind: None,
            fact: "The gateway listens on 8443.".into(),
        };
        memory
            .ledger
            .record_sweep(
                AT,
                "deterministic",
                Some((Some(OLD), &sha256_hex(NEW.as_bytes()))),
                &[promotion],
                SUMMARY,
            )
            .unwrap()
    }

    fn read(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap_or_default()
    }

    fn owner() -> TurnContext {
        TurnContext {
            now_ms: AT + 3_600_000,
            sender_is_owner: true,
            ..Default::default()
        }
    }

    #[test]
    fn killed_before_the_rename_the_sweep_is_abandoned_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        // The next open finds it pending with MEMORY.md still the old file.
        let mut memory = open(dir.path());
        assert_eq!(read(dir.path(), "MEMORY.md"), OLD);
        assert!(read(dir.path(), "DREAMS.md").contains("Interrupted before it changed MEMORY.md"));
        assert!(!read(dir.path(), "DREAMS.md").contains("- Added:"));
        assert!(memory.ledger.unfinished_sweeps().unwrap().is_empty());
        assert!(
            memory.ledger.promoted_sources().unwrap().is_empty(),
            "its candidates are tried again"
        );
        let problem = memory.ledger.sweep_notices().unwrap().problem.unwrap();
        assert!(problem.contains("interrupted before"), "{problem}");
        assert!(matches!(
            memory.dream_rollback(&owner()),
            Err(MemoryError::NotFound(_))
        ));
    }

    #[test]
    fn killed_after_the_rename_the_sweep_is_completed_and_rollback_works() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        std::fs::write(dir.path().join("MEMORY.md"), NEW).unwrap(); // the rename
        let mut memory = open(dir.path());
        let dreams = read(dir.path(), "DREAMS.md");
        assert!(dreams.contains(SUMMARY.trim_end()), "{dreams}");
        assert!(dreams.contains("Interrupted after it changed MEMORY.md"));
        assert!(memory.ledger.unfinished_sweeps().unwrap().is_empty());
        // Finishing again adds nothing.
        assert!(memory.finish_interrupted_sweeps().unwrap().is_empty());
        assert_eq!(read(dir.path(), "DREAMS.md"), dreams);
        let rolled = memory.dream_rollback(&owner()).unwrap();
        assert_eq!((rolled.entries_before, rolled.entries_after), (2, 1));
        assert_eq!(read(dir.path(), "MEMORY.md"), OLD);
    }

    #[test]
    fn a_file_edited_after_the_rename_still_counts_as_landed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        std::fs::write(
            dir.path().join("MEMORY.md"),
            format!("{NEW}- Typed by hand.\n"),
        )
        .unwrap();
        let memory = open(dir.path());
        assert!(read(dir.path(), "DREAMS.md").contains("Interrupted after it changed MEMORY.md"));
        assert!(memory.ledger.last_memory_change().unwrap().is_some());
    }

    #[test]
    fn a_committed_sweep_gets_its_summary_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let mut memory = open(dir.path());
        let sweep = pending_sweep(&memory);
        std::fs::write(dir.path().join("MEMORY.md"), NEW).unwrap();
        memory
            .ledger
            .set_sweep_state(sweep, SweepState::Committed)
            .unwrap();
        // The summary made it to DREAMS.md before the kill.
        std::fs::write(
            dir.path().join("DREAMS.md"),
            format!("# Dreams\n\n{SUMMARY}"),
        )
        .unwrap();
        memory.finish_interrupted_sweeps().unwrap();
        assert_eq!(
            read(dir.path(), "DREAMS.md").matches("### Sweep").count(),
            1,
            "not written twice"
        );
    }

    #[test]
    fn landing_is_judged_by_the_file() {
        let change = SweepChange {
            sweep: 1,
            pre_text: Some(OLD.into()),
            post_hash: sha256_hex(NEW.as_bytes()),
        };
        let added = vec![entry_hash(&markdown::parse(NEW).entries[1].text)];
        let landed = |current: Option<&[u8]>| change_landed(&change, current, &added);
        assert_eq!(landed(Some(NEW.as_bytes())), Landing::Landed);
        assert_eq!(landed(Some(OLD.as_bytes())), Landing::NotLanded);
        let edited = format!("{NEW}- Typed by hand.\n");
        assert_eq!(landed(Some(edited.as_bytes())), Landing::Landed);
        // Edited so that none of its lines is left: kept, not abandoned.
        assert_eq!(
            landed(Some(b"# Memory\n\n- Rewritten by hand.\n")),
            Landing::Unknown
        );
        assert_eq!(landed(None), Landing::Unknown);
        let created = SweepChange {
            pre_text: None,
            ..change
        };
        assert_eq!(
            change_landed(&created, None, &added),
            Landing::NotLanded,
            "still no file"
        );
    }
}
