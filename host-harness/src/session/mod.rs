//! One harness session on one workspace: the lock, the host, the fixed clock,
//! and the turn context the CLI speaks for (the owner, at a terminal). The
//! component's calls, as the CLI makes them, are in `calls`.

mod calls;
pub mod pacing;

use self::pacing::Pace;

pub use self::calls::{GetTarget, Incoming, NewIntent, Note};

use crate::config::Resolved;
use crate::embed::Lender;
use crate::host::{
    wit, wit_store, CallError, MemoryHost, WorkspaceAccess, WorkspaceLock, WorkspaceReadOnly,
};
use crate::model::ModelLender;

/// Texts a sync before a search or an inject may embed: new lines of a
/// session (a few) are embedded at once; a backlog is `index`'s work.
pub const BEFORE_USE_EMBEDDINGS: u32 = 128;

/// How much embedding a full sync does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vectors {
    /// Every entry gets its vector (`index`): as long as that takes.
    All,
    /// At most this many texts go to the embedder over the whole sync (a
    /// sync before a search: a backlog is `index`'s work, not the search's);
    /// the rest stays searchable lexically.
    AtMost(u32),
}

pub struct Session {
    pub host: MemoryHost,
    pub now_ms: i64,
    /// The session's active projects (`--repo` prepares one).
    pub projects: crate::project::ActiveProjects,
    /// The configured dreaming gates.
    pub dream_gates: crate::host::wit_dream::DreamGates,
    /// The owner's local offset from UTC at `now_ms`, in minutes.
    pub utc_offset_minutes: i32,
    /// The owner's time zone, which gives that offset.
    pub time_zone: jiff::tz::TimeZone,
    /// The turn's taint (`--taint`), given to every call's context.
    pub taint: Option<crate::host::wit::SourceClass>,
    /// Why the index is read as it is, when it is (a read-only
    /// workspace): printed as `note:` lines and in `--json` output.
    pub notes: Vec<String>,
    /// Whether the session may write (and sync) the workspace.
    pub writable: bool,
    _lock: Option<WorkspaceLock>,
}

/// What a command does to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// It may write: the exclusive lock, waiting up to `limits.lockWaitMs`.
    Write,
    /// It only reads: the lock, waiting like a write (the index is synced);
    /// none on a read-only workspace (read as it is).
    Read,
    /// It reads the memory as it is, never syncing (the review page).
    ReadAsItIs,
}

impl Session {
    /// A session that only reads: the workspace is granted read-only and the
    /// memory opened with `open-read-only` (the review page).
    pub fn open_read_only(resolved: &Resolved, now_ms: i64) -> anyhow::Result<Session> {
        Session::open_for(resolved, now_ms, Purpose::ReadAsItIs)
    }

    /// A session that may write, waiting up to `limits.lockWaitMs` for a
    /// busy workspace.
    pub fn open(resolved: &Resolved, now_ms: i64) -> anyhow::Result<Session> {
        Session::open_for(resolved, now_ms, Purpose::Write)
    }

    pub fn open_for(resolved: &Resolved, now_ms: i64, purpose: Purpose) -> anyhow::Result<Session> {
        let workspace = &resolved.workspace;
        let access = match purpose {
            Purpose::Write => WorkspaceAccess::Writable(WorkspaceLock::acquire_within(
                workspace,
                resolved.lock_wait,
            )?),
            Purpose::Read | Purpose::ReadAsItIs => {
                WorkspaceLock::acquire_for_reading(workspace, resolved.lock_wait)?
            }
        };
        let mut notes = Vec::new();
        let (lock, writable) = match access {
            WorkspaceAccess::Writable(lock) => (Some(lock), purpose != Purpose::ReadAsItIs),
            WorkspaceAccess::ReadOnly(why) => {
                if !workspace.join(".memory/index.sqlite").is_file() {
                    return Err(WorkspaceReadOnly(format!(
                        "{} cannot be written ({why}) and has no index yet (.memory/index.sqlite): there is nothing to read; index it once where it can be written (`memory-harness index`)",
                        workspace.display()
                    ))
                    .into());
                }
                notes.push(format!(
                    "the workspace cannot be written ({why}): the index was used as it is and may be stale"
                ));
                (None, false)
            }
        };
        let mut host = MemoryHost::new(
            &resolved.component,
            resolved.cache_dir.as_deref(),
            &resolved.workspace,
            resolved.settings.clone(),
            resolved.limits.clone(),
            Lender::new(&resolved.embedder, resolved.embed_timeout),
            ModelLender::new(&resolved.model, resolved.model_timeout)?,
        )?;
        if !writable {
            host.set_read_only();
        }
        Ok(Session {
            host,
            now_ms,
            projects: Default::default(),
            dream_gates: resolved.dream_gates,
            utc_offset_minutes: crate::clock::offset_minutes_at(&resolved.time_zone, now_ms),
            time_zone: resolved.time_zone.clone(),
            taint: None,
            notes,
            writable,
            _lock: lock,
        })
    }

    /// Moves the clock; the offset follows the time zone.
    pub fn set_now(&mut self, now_ms: i64) {
        self.now_ms = now_ms;
        self.utc_offset_minutes = crate::clock::offset_minutes_at(&self.time_zone, now_ms);
    }

    /// The context of a turn typed by the owner on the command line.
    pub fn context(&self) -> wit::TurnContext {
        wit::TurnContext {
            now_ms: self.now_ms,
            session_id: None,
            session_kind: Some(wit::SessionKind::Interactive),
            channel: Some("cli".into()),
            sender: None,
            sender_is_owner: true,
            active_projects: self.projects.keys().to_vec(),
            utc_offset_minutes: self.utc_offset_minutes,
            taint: self.taint,
        }
    }

    /// The sync before a command uses the memory (search, inject): every
    /// changed file, but at most `BEFORE_USE_EMBEDDINGS` texts embedded; a
    /// backlog left without vectors is said in a note.
    pub fn sync_before_use(&mut self) -> Result<(), CallError> {
        let report = self.sync_all(
            false,
            false,
            Vectors::AtMost(BEFORE_USE_EMBEDDINGS),
            |_, _| {},
        )?;
        if report.vectors_pending > 0 && report.embedding_problem.is_none() {
            self.notes.push(format!(
                "{} entries have no vector yet and were matched by their words only; `memory-harness index` embeds them",
                report.vectors_pending
            ));
        }
        Ok(())
    }

    /// Syncs the whole workspace in calls sized by time (`pacing`), each
    /// committing its work, calling `progress` after each with the running
    /// totals and the time so far; returns the totals. `acknowledge_rebuild`:
    /// the user asked for it (the `index` command), so it reports and clears
    /// an implicit rebuild (see the WIT `sync-request`).
    pub fn sync_all(
        &mut self,
        force: bool,
        acknowledge_rebuild: bool,
        vectors: Vectors,
        mut progress: impl FnMut(&wit_store::SyncReport, std::time::Duration),
    ) -> Result<wit_store::SyncReport, CallError> {
        let began = std::time::Instant::now();
        let mut total: Option<wit_store::SyncReport> = None;
        let mut first = true;
        let mut pace = Pace::default();
        let mut embed_left = match vectors {
            Vectors::All => u32::MAX,
            Vectors::AtMost(n) => n,
        };
        loop {
            let started = std::time::Instant::now();
            let budget = pace.embeddings.min(embed_left);
            let batch = self.host.sync(&wit_store::SyncRequest {
                max_files: Some(pace.files),
                max_embeddings: Some(budget),
                // Only the first call forces: later ones pick up what is left.
                force: force && first,
                acknowledge_rebuild,
            })?;
            pace = pace.next(
                batch.files_indexed,
                batch.embeddings_computed,
                started.elapsed(),
            );
            embed_left = embed_left.saturating_sub(batch.embeddings_computed);
            first = false;
            let advanced = batch.files_indexed > 0
                || batch.embeddings_computed > 0
                || batch.embeddings_cached > 0;
            let vectors_wanted =
                batch.vectors_pending > 0 && batch.embedding_problem.is_none() && embed_left > 0;
            let more = batch.files_pending > 0 || vectors_wanted;
            let report = match total.take() {
                None => batch,
                Some(mut t) => {
                    t.files_indexed += batch.files_indexed;
                    t.files_removed += batch.files_removed;
                    t.files_pending = batch.files_pending;
                    t.chunks_indexed += batch.chunks_indexed;
                    t.embeddings_computed += batch.embeddings_computed;
                    t.embeddings_cached += batch.embeddings_cached;
                    t.vectors_pending = batch.vectors_pending;
                    t.embedding_problem = t.embedding_problem.or(batch.embedding_problem);
                    t.rebuilt = t.rebuilt.or(batch.rebuilt);
                    t.problems.extend(batch.problems);
                    t
                }
            };
            progress(&report, began.elapsed());
            total = Some(report);
            // A call that did nothing while work is pending would only
            // repeat itself; stop rather than spin.
            if !more || !advanced {
                break;
            }
        }
        let mut report = total.expect("at least one call ran");
        // Files counted unchanged in later calls were the ones indexed by
        // earlier calls; the honest figure is the rest.
        report.files_unchanged = report
            .files_seen
            .saturating_sub(report.files_indexed + report.files_pending);
        Ok(report)
    }
}
