//! One harness session on one workspace: the lock, the host, the fixed clock,
//! and the turn context the CLI speaks for (the owner, at a terminal). The
//! component's calls, as the CLI makes them, are in `calls`.

mod calls;

pub use self::calls::{GetTarget, Incoming, NewIntent, Note};

use crate::config::Resolved;
use crate::embed::Lender;
use crate::host::{
    wit, wit_store, CallError, MemoryHost, WorkspaceAccess, WorkspaceLock, WorkspaceReadOnly,
};
use crate::model::ModelLender;

/// Changed files in the first `sync` call of a full sync; later calls adapt
/// their size so that each takes about `SYNC_CALL_TARGET`: long enough that
/// listing the workspace (every call does) costs little, short enough for a
/// live progress bar and to stay far inside the call's deadline whether or
/// not an embedder is slow.
pub const SYNC_FIRST_BATCH_FILES: u32 = 200;
const SYNC_CALL_TARGET: std::time::Duration = std::time::Duration::from_secs(1);
const SYNC_MAX_BATCH_FILES: u32 = 20_000;

/// The next batch size: scaled so that the call would take the target time.
pub fn next_batch_files(files: u32, indexed: u32, took: std::time::Duration) -> u32 {
    if indexed < files {
        return files; // the last batch, or a short one: nothing learnt
    }
    let scale = SYNC_CALL_TARGET.as_secs_f64() / took.as_secs_f64().max(1e-3);
    // At most 4x larger or smaller per step, so one odd call cannot swing it.
    let next = (files as f64 * scale.clamp(0.25, 4.0)).round();
    (next as u32).clamp(SYNC_FIRST_BATCH_FILES / 4, SYNC_MAX_BATCH_FILES)
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

    /// Syncs the whole workspace in batches, calling `progress` after each
    /// batch with the running totals, and returns the totals.
    /// `acknowledge_rebuild`: the user asked for it (the `index` command), so
    /// it reports and clears an implicit rebuild (see the WIT `sync-request`).
    pub fn sync_all(
        &mut self,
        force: bool,
        acknowledge_rebuild: bool,
        mut progress: impl FnMut(&wit_store::SyncReport),
    ) -> Result<wit_store::SyncReport, CallError> {
        let mut total: Option<wit_store::SyncReport> = None;
        let mut first = true;
        let mut batch_files = SYNC_FIRST_BATCH_FILES;
        loop {
            let started = std::time::Instant::now();
            let batch = self.host.sync(&wit_store::SyncRequest {
                max_files: Some(batch_files),
                // Only the first batch forces: later ones pick up what is left.
                force: force && first,
                acknowledge_rebuild,
            })?;
            batch_files = next_batch_files(batch_files, batch.files_indexed, started.elapsed());
            first = false;
            let pending = batch.files_pending;
            let indexed_now = batch.files_indexed;
            let report = match total.take() {
                None => batch,
                Some(mut t) => {
                    t.files_indexed += batch.files_indexed;
                    t.files_removed += batch.files_removed;
                    t.files_pending = batch.files_pending;
                    t.chunks_indexed += batch.chunks_indexed;
                    t.embeddings_computed += batch.embeddings_computed;
                    t.embeddings_cached += batch.embeddings_cached;
                    t.embedding_problem = t.embedding_problem.or(batch.embedding_problem);
                    t.rebuilt = t.rebuilt.or(batch.rebuilt);
                    t.problems.extend(batch.problems);
                    t
                }
            };
            progress(&report);
            total = Some(report);
            // A batch that indexed nothing while files are pending would only
            // repeat itself; stop rather than spin.
            if pending == 0 || indexed_now == 0 {
                break;
            }
        }
        let mut report = total.expect("at least one batch ran");
        // Files counted unchanged in later batches were the ones indexed by
        // earlier batches; the honest figure is the rest.
        report.files_unchanged = report
            .files_seen
            .saturating_sub(report.files_indexed + report.files_pending);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn batches_grow_when_calls_are_quick_and_shrink_when_slow() {
        // 200 files in 100 ms: 10x under the target, grown by at most 4x.
        assert_eq!(next_batch_files(200, 200, Duration::from_millis(100)), 800);
        // 800 files in 500 ms: twice as many next time.
        assert_eq!(
            next_batch_files(800, 800, Duration::from_millis(500)),
            1_600
        );
        // An embedder makes 200 files take 20 s: a quarter, never below 50.
        assert_eq!(next_batch_files(200, 200, Duration::from_secs(20)), 50);
        assert_eq!(next_batch_files(50, 50, Duration::from_secs(20)), 50);
        // Never above the cap.
        assert_eq!(
            next_batch_files(10_000, 10_000, Duration::from_millis(1)),
            SYNC_MAX_BATCH_FILES
        );
    }

    #[test]
    fn a_short_batch_keeps_the_size() {
        assert_eq!(next_batch_files(200, 37, Duration::from_millis(5)), 200);
    }
}
