//! Opening the workspace for a command: a session at the run's clock, with
//! the turn's taint (`--taint`) and project (`--repo`), whose failed calls
//! are recorded under the command's name, and the spool replayed first when
//! it may write.

use super::global::Global;
use super::spool;
use anyhow::Context;
use memory_harness::session::{Purpose, Session};

/// A session that may write (waiting up to `limits.lockWaitMs` for a busy
/// workspace), with the spool replayed first.
pub fn open(g: &Global) -> anyhow::Result<Session> {
    open_as(g, Purpose::Write)
}

/// A session for `purpose`; see `Session::open_for`.
pub fn open_as(g: &Global, purpose: Purpose) -> anyhow::Result<Session> {
    let resolved = g.resolved(None)?;
    let now = g.now_ms(&resolved)?;
    let mut session = Session::open_for(&resolved, now, purpose)?;
    if let Some(label) = &g.command_label {
        session.host.record_health(label);
    }
    if session.writable {
        spool::replay(&mut session);
    }
    session.taint = g
        .taint
        .as_deref()
        .map(memory_harness::names::parse_source_class)
        .transpose()
        .context("--taint")?;
    if let Some(repo) = &g.repo {
        if let Some(key) = memory_harness::project::project_key(repo)? {
            session.projects.prepare(&key);
        }
    }
    Ok(session)
}
