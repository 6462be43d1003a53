//! The spool: a flush or an ingest that could not get the workspace (busy
//! past `limits.lockWaitMs`) is written to `.memory/spool/` instead of being
//! lost, and the next command that gets the lock to write replays it first.
//! One file per call, written atomically and durably (temporary file, fsync,
//! rename, fsync of the directory); a replayed file is removed only after
//! its call succeeded. The JavaScript host spools to the same directory
//! under `js-*` names and replays its own.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const SPOOL_DIR: &str = ".memory/spool";

/// A flush or ingest as the CLI was asked for it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Spooled {
    Flush(FlushCall),
    Ingest(IngestCall),
}

/// `memory-harness flush`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlushCall {
    pub session: String,
    pub transcript: String,
    pub now_ms: i64,
    pub tokens: Option<u32>,
    pub context_window: u32,
    pub reserve: u32,
    pub cycle: u32,
    pub soft_threshold: Option<u32>,
}

/// `memory-harness ingest`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IngestCall {
    pub session: String,
    pub transcript: String,
    pub now_ms: i64,
    pub session_kind: String,
    pub not_owner: bool,
}

impl Spooled {
    pub fn describe(&self) -> String {
        match self {
            Spooled::Flush(c) => format!("a flush of session {}", c.session),
            Spooled::Ingest(c) => format!("an ingest of session {}", c.session),
        }
    }

    /// The time the call was made at (its turn's clock).
    pub fn set_now(&mut self, now_ms: i64) {
        match self {
            Spooled::Flush(c) => c.now_ms = now_ms,
            Spooled::Ingest(c) => c.now_ms = now_ms,
        }
    }
}

/// Writes `call` to the spool; returns its path.
pub fn write(workspace: &Path, call: &Spooled) -> std::io::Result<PathBuf> {
    let dir = workspace.join(SPOOL_DIR);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let kind = match call {
        Spooled::Flush(_) => "flush",
        Spooled::Ingest(_) => "ingest",
    };
    let path = dir.join(format!(
        "harness-{now:024}-{}-{kind}.json",
        std::process::id()
    ));
    let text = serde_json::to_string(call).expect("plain data serializes");
    crate::health::write_durably(&path, text.as_bytes())?;
    Ok(path)
}

/// Where a spooled call that can never succeed is moved (it trapped, or the
/// component refused it as the caller's mistake), so it is not retried by
/// every command; kept for an operator to look at.
pub const REJECTED_DIR: &str = ".memory/spool/rejected";

/// Moves a spooled call to `REJECTED_DIR`; returns its new path.
pub fn set_aside(workspace: &Path, path: &Path) -> std::io::Result<PathBuf> {
    let dir = workspace.join(REJECTED_DIR);
    std::fs::create_dir_all(&dir)?;
    let target = dir.join(path.file_name().unwrap_or_default());
    std::fs::rename(path, &target)?;
    Ok(target)
}

/// The harness's spooled calls, oldest first, with the files that hold them;
/// an unreadable file is returned as an error beside its path.
pub fn pending(workspace: &Path) -> Vec<(PathBuf, Result<Spooled, String>)> {
    let Ok(entries) = std::fs::read_dir(workspace.join(SPOOL_DIR)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("harness-") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()));
            (path, parsed)
        })
        .collect()
}
