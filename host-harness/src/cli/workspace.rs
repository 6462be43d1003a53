//! Opening the workspace for a command: a session at the run's clock, with
//! the turn's taint (`--taint`) and project (`--repo`), whose failed calls
//! are recorded under the command's name, and the spool replayed first when
//! it may write.

use super::exit::WorkspaceMissing;
use super::global::Global;
use super::spool;
use anyhow::Context;
use memory_harness::session::{Purpose, Session};
use std::path::Path;

/// A session that may write (waiting up to `limits.lockWaitMs` for a busy
/// workspace), with the spool replayed first.
pub fn open(g: &Global) -> anyhow::Result<Session> {
    open_as(g, Purpose::Write)
}

/// A session that may write, on a workspace that must exist already (for
/// commands that read but keep state: `intent list`, `user show`).
pub fn open_existing(g: &Global) -> anyhow::Result<Session> {
    open_for(g, Purpose::Write, true)
}

/// A session for `purpose`; see `Session::open_for`.
pub fn open_as(g: &Global, purpose: Purpose) -> anyhow::Result<Session> {
    open_for(g, purpose, purpose != Purpose::Write)
}

/// A session for `purpose`, on a workspace that must exist when
/// `must_exist` (else a missing one is created, and said).
fn open_for(g: &Global, purpose: Purpose, must_exist: bool) -> anyhow::Result<Session> {
    let resolved = g.resolved(None)?;
    ensure_workspace(&resolved.workspace, must_exist)?;
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

/// A command reads only a workspace that exists (a mistyped `--workspace`
/// is not an empty memory); a command that writes creates a missing one,
/// and says so.
pub fn ensure_workspace(workspace: &Path, must_exist: bool) -> anyhow::Result<()> {
    if workspace.is_dir() {
        return Ok(());
    }
    if workspace.exists() {
        anyhow::bail!("the workspace {} is not a directory", workspace.display());
    }
    if must_exist {
        return Err(WorkspaceMissing(workspace.to_path_buf()).into());
    }
    std::fs::create_dir_all(workspace)
        .with_context(|| format!("cannot create the workspace {}", workspace.display()))?;
    memory_harness::notes::note(format!("created the workspace {}", workspace.display()));
    Ok(())
}
