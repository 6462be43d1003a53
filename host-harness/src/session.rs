//! One harness session on one workspace: the lock, the host, the fixed clock,
//! and the turn context the CLI speaks for (the owner, at a terminal).

use crate::config::Resolved;
use crate::embed::Lender;
use crate::host::{wit, wit_store, CallError, MemoryHost, WorkspaceLock};
use crate::model::ModelLender;

/// Changed files per `sync` call: small enough for a live progress bar and for
/// every call to stay far inside its deadline.
const SYNC_BATCH_FILES: u32 = 200;

pub struct Session {
    pub host: MemoryHost,
    pub now_ms: i64,
    /// The session's active projects (`--repo` prepares one).
    pub projects: crate::project::ActiveProjects,
    /// The configured dreaming gates.
    pub dream_gates: crate::host::wit_dream::DreamGates,
    _lock: WorkspaceLock,
}

impl Session {
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
            _lock: lock,
        })
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
        }
    }

    /// Syncs the whole workspace in batches, calling `progress` after each
    /// batch with the running totals, and returns the totals.
    pub fn sync_all(
        &mut self,
        force: bool,
        mut progress: impl FnMut(&wit_store::SyncReport),
    ) -> Result<wit_store::SyncReport, CallError> {
        let mut total: Option<wit_store::SyncReport> = None;
        let mut first = true;
        loop {
            let batch = self.host.sync(&wit_store::SyncRequest {
                max_files: Some(SYNC_BATCH_FILES),
                // Only the first batch forces: later ones pick up what is left.
                force: force && first,
            })?;
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
