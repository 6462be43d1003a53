//! The host's health record, `.memory/host-health.json`: the last failed
//! call (time, command, kind, message) and counts of traps and deadline
//! stops, kept in the workspace so that `status` shows them even though the
//! CLI runs one process per command. The JavaScript host keeps the same file
//! in the same format (hosts/openclaw/lib/health.js). Written atomically (a
//! temporary file, fsync, rename); never written to a read-only workspace.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file, relative to the workspace.
pub const HEALTH_FILE: &str = ".memory/host-health.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Health {
    /// Calls stopped by a trap of any kind (deadline and memory cap included).
    #[serde(default)]
    pub traps: u64,
    /// Of those, calls stopped at their deadline (the epoch deadline).
    #[serde(default)]
    pub deadline_stops: u64,
    /// Failed calls and commands, the caller's mistakes aside
    /// (`CALLERS_MISTAKES`).
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub last_error: Option<LastError>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LastError {
    /// Wall-clock time of the failure, milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// `memory-harness` or `openclaw`.
    pub host: String,
    /// The command or call that failed (`search`, `flush`, …).
    pub command: String,
    /// The error kind: a WIT error case (`io`, `workspace-read-only`, …),
    /// `trap`, `deadline`, `memory-cap`, `busy` or `host`.
    pub kind: String,
    pub message: String,
}

fn path(workspace: &Path) -> PathBuf {
    workspace.join(HEALTH_FILE)
}

/// The record, when there is one (an unreadable file reads as none).
pub fn load(workspace: &Path) -> Option<Health> {
    let text = std::fs::read_to_string(path(workspace)).ok()?;
    serde_json::from_str(&text).ok()
}

/// What a failure adds to the record.
pub struct Failure<'a> {
    pub command: &'a str,
    pub kind: &'a str,
    pub message: &'a str,
    pub trap: bool,
    pub deadline: bool,
}

/// Error kinds that are the caller's mistake, not a sign of the host's or
/// the workspace's health: a malformed request, a file that is not there, a
/// refused path, an input over a limit. They are not recorded.
pub const CALLERS_MISTAKES: &[&str] = &["invalid-input", "not-found", "access-denied", "too-large"];

/// Adds a failure to the record (a caller's mistake is not one). Errors (a
/// read-only or full workspace) are returned for the caller to note; the
/// record is best effort.
pub fn record(workspace: &Path, failure: &Failure<'_>) -> std::io::Result<()> {
    if CALLERS_MISTAKES.contains(&failure.kind) && !failure.trap {
        return Ok(());
    }
    let mut health = load(workspace).unwrap_or_default();
    health.errors += 1;
    health.traps += failure.trap as u64;
    health.deadline_stops += failure.deadline as u64;
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    health.last_error = Some(LastError {
        at_ms,
        host: "memory-harness".into(),
        command: failure.command.into(),
        kind: failure.kind.into(),
        message: failure.message.into(),
    });
    let text = serde_json::to_string_pretty(&health).expect("plain data serializes");
    write_durably(&path(workspace), text.as_bytes())
}

/// Writes `bytes` to `file` atomically and durably: a temporary file in the
/// same directory, fsync, rename, fsync of the directory.
pub fn write_durably(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = file.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(error) = written.and_then(|()| std::fs::rename(&tmp, file)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(error);
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The record as `status` prints it, one line each.
pub fn describe(health: &Health) -> Vec<String> {
    let mut lines = vec![format!(
        "host health: {} failed calls, {} traps ({} at the deadline)",
        health.errors, health.traps, health.deadline_stops
    )];
    if let Some(e) = &health.last_error {
        let when = jiff::Timestamp::from_millisecond(e.at_ms)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| e.at_ms.to_string());
        lines.push(format!(
            "last error: {when} {} {} [{}]: {}",
            e.host, e.command, e.kind, e.message
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure<'a>(kind: &'a str, trap: bool) -> Failure<'a> {
        Failure {
            command: "search",
            kind,
            message: "it failed",
            trap,
            deadline: false,
        }
    }

    #[test]
    fn the_callers_mistakes_are_not_the_hosts_health() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".memory")).unwrap();
        record(dir.path(), &failure("not-found", false)).unwrap();
        record(dir.path(), &failure("invalid-input", false)).unwrap();
        assert_eq!(load(dir.path()), None, "nothing recorded");
        record(dir.path(), &failure("io", false)).unwrap();
        record(dir.path(), &failure("trap", true)).unwrap();
        let health = load(dir.path()).unwrap();
        assert_eq!((health.errors, health.traps), (2, 1));
        assert_eq!(health.last_error.unwrap().kind, "trap");
    }
}
