//! The operations behind the WIT exports, over the workspace files, the
//! index, the ledger and what the host lends. [`Memory`] is the memory of one
//! workspace; each export family adds its operations to it in a module of
//! its own (`store`, `recall`, `bootstrap`, `write`, `inject`, `intents`,
//! `user`, `dream`, `report`), reading and writing through `storage` and
//! deciding through `logic`. This module holds what they share: what a
//! `Memory` holds, how it opens, and the repair plumbing.
//!
//! Invariants: Markdown files are never written in this module; a damaged index is
//! set aside, rebuilt from the files and the operation retried once, and the
//! rebuild is reported by the call that did it and by `status` until a sync
//! the user asked for; an index of a newer schema is refused; an unavailable or
//! failing embedder degrades recall to lexical search and is reported, never
//! raised.

use crate::contract::api::*;
use crate::contract::error::{MemoryError, Result};
use crate::host::embedding::Embedder;
use crate::host::model::Model;
use crate::logic::dream::consolidate::UntrustedText;
use crate::storage::index::{self, Index};
use crate::storage::ledger::Ledger;
use crate::storage::sqlite::DbError;
use crate::storage::workspace::Workspace;
use crate::text::layout;
use std::rc::Rc;

pub mod bootstrap;
pub mod dream;
pub mod inject;
pub mod intents;
pub mod recall;
pub mod report;
pub mod store;
pub mod user;
pub mod write;

/// The index meta key that records an implicit rebuild until a sync the
/// user asked for (`sync-request.acknowledge-rebuild`).
const REBUILT_KEY: &str = "rebuilt";

/// A failure inside an operation: a database error may be repaired by a
/// rebuild, anything else is reported as is.
enum Failure {
    Db(DbError),
    Memory(MemoryError),
}

impl From<DbError> for Failure {
    fn from(e: DbError) -> Self {
        Failure::Db(e)
    }
}

impl From<MemoryError> for Failure {
    fn from(e: MemoryError) -> Self {
        Failure::Memory(e)
    }
}

impl From<Failure> for MemoryError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Db(e) => MemoryError::Index(e.to_string()),
            Failure::Memory(e) => e,
        }
    }
}

type Attempt<T> = std::result::Result<T, Failure>;

/// The sign codes of one embedder's entry vectors, as of an index
/// revision: what the vector leg scans for its shortlist.
struct VectorTable {
    label: String,
    revision: u64,
    centre: crate::logic::vectors::Centre,
    codes: crate::logic::vectors::CodeTable,
}

/// A database failure that is a storage failure, with its cause named: a
/// full disk, a read-only file system (`WorkspaceReadOnly`), a permission.
/// Other failures stay index errors. A write's ledger record goes first,
/// so when the ledger fails nothing has been written to the Markdown file.
fn storage_failure(error: DbError) -> MemoryError {
    // SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_FULL.
    let cause = match error.code {
        13 => "no space left on the device (the disk is full)",
        // The database file could only be opened for reading: a read-only
        // file system or grant.
        8 => {
            return MemoryError::WorkspaceReadOnly(format!(
                "the workspace may not be written (a read-only file system or grant): {error}; nothing was written"
            ))
        }
        10 | 14 if error.message.contains("read-only file system") => {
            return MemoryError::WorkspaceReadOnly(format!(
                "the workspace is on a read-only file system: {error}; nothing was written"
            ))
        }
        10 | 14 => "the workspace could not be written",
        _ => return MemoryError::from(error),
    };
    // The message may name the cause already (the VFS's system error).
    if error.message.contains(cause) {
        return MemoryError::Io(format!("{error}; nothing was written"));
    }
    MemoryError::Io(format!("{cause}: {error}; nothing was written"))
}

pub struct Memory {
    settings: Settings,
    workspace: Workspace,
    index: Index,
    embedder: Box<dyn Embedder>,
    model: Box<dyn Model>,
    ledger: Ledger,
    /// Why the index was (re)created, until a sync reports it (also the
    /// first build of a new workspace, which is no rebuild).
    rebuild_note: Option<String>,
    /// Why the index was rebuilt on its own, until a call of this instance
    /// has reported it (search, status). The lasting record is the index's
    /// `rebuilt` meta key, which `status` shows until an acknowledging sync.
    unreported_rebuild: Option<String>,
    /// Set when the index was (re)created and holds nothing yet.
    needs_full_sync: bool,
    vectors: Option<VectorTable>,
    /// Recent query vectors (per instance).
    query_vectors: crate::host::embedding::QueryVectors,
    /// Lane 2's recent answers and circuit breaker (per instance).
    answer_cache: crate::logic::inject::escalate::AnswerCache,
    breaker: crate::logic::inject::escalate::Breaker,
    /// Standing intents, loaded from the ledger on first use.
    intents: Option<Vec<crate::logic::intents::Intent>>,
    /// Curated entries with triggers or project keys, by index revision
    /// (lane 1).
    lane1_entries: Option<(u64, Vec<crate::logic::inject::trigger::Lane1Entry>)>,
    /// The text of untrusted and system entries, by index revision: a
    /// trusted-looking copy of it is framed (and gated) as untrusted.
    untrusted_text: Option<(u64, Rc<UntrustedText>)>,
    /// Opened with `open_read_only`: every operation that would write is
    /// refused, and recalls are not recorded.
    read_only: bool,
}

impl Memory {
    /// Opens the workspace's memory. See the WIT `memory.open`.
    pub fn open(
        settings: Settings,
        embedder: Box<dyn Embedder>,
        model: Box<dyn Model>,
    ) -> Result<Memory> {
        check_workspace(&settings)?;
        let workspace = Workspace::new(settings.workspace.clone());
        // A workspace with a ledger has had an index: a missing one is a
        // rebuild to report, not a first build.
        let used_before = workspace.join(layout::LEDGER_FILE).exists();
        let (index, rebuild_note) =
            Index::open(&workspace.join(layout::INDEX_FILE), settings.fts_tokenizer).map_err(
                |e| match e {
                    index::OpenError::NewerSchema { .. } => MemoryError::Index(e.to_string()),
                    index::OpenError::Db(e) => {
                        MemoryError::Index(format!("cannot open {}: {e}", layout::INDEX_FILE))
                    }
                },
            )?;
        let (ledger, reproject) = open_ledger(&workspace, &index)?;
        let first_build = rebuild_note.as_deref() == Some("no index existed") && !used_before;
        let rebuild_note = match rebuild_note.as_deref() {
            Some("no index existed") if used_before => {
                Some("the index was missing and was rebuilt from the files".to_string())
            }
            _ => rebuild_note,
        };
        let mut memory = Memory::with_parts(
            settings,
            workspace,
            index,
            ledger,
            embedder,
            model,
            rebuild_note.clone(),
            reproject,
            false,
        );
        if let Some(reason) = rebuild_note.filter(|_| !first_build) {
            memory.note_rebuild(&reason)?;
        }
        // A sweep an interruption left unfinished is completed or abandoned
        // before anything reads MEMORY.md; if that fails, the next sweep or
        // rollback tries again (and fails with the reason).
        if let Err(e) = memory.finish_interrupted_sweeps() {
            eprintln!("memory-core: an interrupted sweep could not be finished yet: {e}");
        }
        Ok(memory)
    }

    /// Opens the workspace's memory to read it as it is: nothing is created,
    /// rebuilt, migrated or recorded. See the WIT `memory.open-read-only`.
    pub fn open_read_only(
        settings: Settings,
        embedder: Box<dyn Embedder>,
        model: Box<dyn Model>,
    ) -> Result<Memory> {
        check_workspace(&settings)?;
        let workspace = Workspace::new(settings.workspace.clone());
        let refused = |file: &str, why: String| {
            MemoryError::InvalidInput(format!("cannot read {file} as it is: {why}"))
        };
        let index =
            Index::open_read_only(&workspace.join(layout::INDEX_FILE), settings.fts_tokenizer)
                .map_err(|why| refused(layout::INDEX_FILE, why))?;
        let expected = index.meta("ledger_id").map_err(MemoryError::from)?;
        let ledger =
            Ledger::open_read_only(&workspace.join(layout::LEDGER_FILE), expected.as_deref())
                .map_err(|why| refused(layout::LEDGER_FILE, why))?;
        Ok(Memory::with_parts(
            settings, workspace, index, ledger, embedder, model, None, false, true,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn with_parts(
        settings: Settings,
        workspace: Workspace,
        index: Index,
        ledger: Ledger,
        embedder: Box<dyn Embedder>,
        model: Box<dyn Model>,
        rebuild_note: Option<String>,
        reproject: bool,
        read_only: bool,
    ) -> Memory {
        Memory {
            settings,
            workspace,
            index,
            embedder,
            model,
            ledger,
            needs_full_sync: rebuild_note.is_some() || reproject,
            rebuild_note,
            unreported_rebuild: None,
            vectors: None,
            query_vectors: Default::default(),
            lane1_entries: None,
            untrusted_text: None,
            intents: None,
            answer_cache: Default::default(),
            breaker: Default::default(),
            read_only,
        }
    }

    /// Refuses `operation` on a memory opened read-only.
    fn writable(&self, operation: &str) -> Result<()> {
        if self.read_only {
            return Err(MemoryError::AccessDenied(format!(
                "{operation} writes, and this memory was opened read-only"
            )));
        }
        Ok(())
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Runs an operation; if the index turns out to be damaged, rebuilds it
    /// from the files and runs the operation once more.
    fn with_repair<T>(&mut self, op: impl Fn(&mut Memory) -> Attempt<T>) -> Result<T> {
        match op(self) {
            Err(Failure::Db(error)) if error.is_corrupt() && self.read_only => {
                Err(MemoryError::Index(format!(
                    "the index is damaged ({error}); opened read-only, it was not rebuilt"
                )))
            }
            Err(Failure::Db(error)) if error.is_corrupt() => {
                self.rebuild(&error)?;
                op(self).map_err(MemoryError::from)
            }
            other => other.map_err(MemoryError::from),
        }
    }

    /// Sets the damaged index aside, starts a new one and fills it from the
    /// files; the rebuild is noted for the reports.
    fn rebuild(&mut self, error: &DbError) -> Result<()> {
        let aside = self
            .index
            .reset()
            .map_err(|e| MemoryError::Index(format!("cannot rebuild the index: {e}")))?;
        // The new index has not seen the ledger yet.
        self.index
            .set_meta("ledger_id", self.ledger.id())
            .map_err(MemoryError::from)?;
        let reason = index::corrupt_reason(error, aside.as_deref());
        self.vectors = None;
        self.rebuild_note = Some(reason.clone());
        self.note_rebuild(&reason)?;
        self.needs_full_sync = true;
        self.sync_once(&SyncRequest {
            force: true,
            // Vectors from the cache only: embedding a whole workspace is
            // an `index` command's work, not this call's.
            max_embeddings: Some(0),
            ..SyncRequest::default()
        })
        .map_err(MemoryError::from)?;
        Ok(())
    }

    /// Records an implicit rebuild: in the index (for `status`, across
    /// instances) and for the next call of this instance to report.
    fn note_rebuild(&mut self, reason: &str) -> Result<()> {
        self.index
            .set_meta(REBUILT_KEY, reason)
            .map_err(MemoryError::from)?;
        self.unreported_rebuild = Some(reason.to_string());
        Ok(())
    }

    /// The untrusted text of the index as it is now (cached per revision).
    fn untrusted_text(&mut self) -> Attempt<Rc<UntrustedText>> {
        let revision = self.index.revision()?;
        if let Some((at, text)) = &self.untrusted_text {
            if *at == revision {
                return Ok(text.clone());
            }
        }
        let text = Rc::new(UntrustedText::ordered(&self.index.untrusted_entries()?));
        self.untrusted_text = Some((revision, text.clone()));
        Ok(text)
    }
}

/// The settings are valid and the workspace is a directory.
fn check_workspace(settings: &Settings) -> Result<()> {
    settings.validate()?;
    match std::fs::metadata(&settings.workspace) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(MemoryError::Io(format!(
            "{} is not a directory",
            settings.workspace.display()
        ))),
        Err(e) => Err(MemoryError::Io(format!(
            "cannot open the workspace {}: {e}",
            settings.workspace.display()
        ))),
    }
}

/// Opens the provenance ledger beside the index. Returns whether every file
/// must be re-projected (the ledger was lost since the index last saw it).
fn open_ledger(workspace: &Workspace, index: &Index) -> Result<(Ledger, bool)> {
    let expected = index.meta("ledger_id").map_err(MemoryError::from)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let ledger = Ledger::open(
        &workspace.join(layout::LEDGER_FILE),
        expected.as_deref(),
        now,
    )
    .map_err(|e| MemoryError::Index(format!("cannot open {}: {e}", layout::LEDGER_FILE)))?;
    let reproject = expected.as_deref() != Some(ledger.id());
    // Written only when it changes: opening a workspace to read it (the
    // review page) leaves the index file as it was.
    if reproject {
        index
            .set_meta("ledger_id", ledger.id())
            .map_err(MemoryError::from)?;
    }
    let reproject = reproject && ledger.lost().is_some();
    Ok((ledger, reproject))
}
