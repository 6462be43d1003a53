//! One harness session on one workspace: the lock, the host, the fixed clock,
//! and the turn context the CLI speaks for (the owner, at a terminal).

use crate::config::Resolved;
use crate::embed::Lender;
use crate::host::{wit, wit_store, CallError, MemoryHost, WorkspaceLock};
use crate::model::ModelLender;

/// Changed files in the first `sync` call of a full sync; later calls adapt
/// their size so that each takes about `SYNC_CALL_TARGET`: long enough that
/// listing the workspace (every call does) costs little, short enough for a
/// live progress bar and to stay far inside the call's deadline whether or
/// not an embedder is slow.
const SYNC_FIRST_BATCH_FILES: u32 = 200;
const SYNC_CALL_TARGET: std::time::Duration = std::time::Duration::from_secs(1);
const SYNC_MAX_BATCH_FILES: u32 = 20_000;

/// The next batch size: scaled so that the call would take the target time.
fn next_batch_files(files: u32, indexed: u32, took: std::time::Duration) -> u32 {
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
    _lock: WorkspaceLock,
}

impl Session {
    /// A session that only reads: the workspace is granted read-only and the
    /// memory opened with `open-read-only` (the review page).
    pub fn open_read_only(resolved: &Resolved, now_ms: i64) -> anyhow::Result<Session> {
        let mut session = Session::open(resolved, now_ms)?;
        session.host.set_read_only();
        Ok(session)
    }

    pub fn open(resolved: &Resolved, now_ms: i64) -> anyhow::Result<Session> {
        let lock = WorkspaceLock::acquire(&resolved.workspace)?;
        let host = MemoryHost::new(
            &resolved.component,
            resolved.cache_dir.as_deref(),
            &resolved.workspace,
            resolved.settings.clone(),
            resolved.limits.clone(),
            Lender::new(&resolved.embedder, resolved.embed_timeout),
            ModelLender::new(&resolved.model, resolved.model_timeout)?,
        )?;
        Ok(Session {
            host,
            now_ms,
            projects: Default::default(),
            dream_gates: resolved.dream_gates,
            utc_offset_minutes: crate::clock::offset_minutes_at(&resolved.time_zone, now_ms),
            time_zone: resolved.time_zone.clone(),
            taint: None,
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
