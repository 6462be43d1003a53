//! How a command ends: its exit code, the failure reported on stderr (or,
//! with `--json`, as one JSON object on stdout) and recorded in the
//! workspace's health file.
//!
//! Exit codes (README, "Exit codes"): 0 done; 1 any other failure; 2 usage
//! (an unknown flag, a bad or missing argument); 3 spooled, not written; 65
//! invalid input (refused by the component: bad text, a path outside the
//! memory files, too large); 66 not found (the workspace, a file, a line,
//! an intent); 70 the component trapped, ran past its deadline or out of
//! memory; 75 busy (another process held the workspace too long).

use super::global::Global;
use memory_harness::config::InvalidSetting;
use memory_harness::host::{error_kind, CallError, WorkspaceBusy, WorkspaceReadOnly};
use serde_json::json;

pub const EXIT_FAILURE: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// The exit code of a flush or ingest that was spooled, not written.
pub const EXIT_SPOOLED: i32 = 3;
pub const EXIT_INVALID_INPUT: i32 = 65;
pub const EXIT_NOT_FOUND: i32 = 66;
pub const EXIT_TRAP: i32 = 70;
/// The exit code of a command refused because the workspace stayed busy.
pub const EXIT_BUSY: i32 = 75;

/// A flag or argument the command could not use (exit 2), named.
#[derive(Debug)]
pub struct UsageError {
    pub argument: String,
    pub message: String,
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.argument, self.message)
    }
}

impl std::error::Error for UsageError {}

/// The workspace a reading command was pointed at does not exist (exit 66).
#[derive(Debug)]
pub struct WorkspaceMissing(pub std::path::PathBuf);

impl std::fmt::Display for WorkspaceMissing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the workspace {} does not exist (check --workspace, or create it with `memory-harness init`)",
            self.0.display()
        )
    }
}

impl std::error::Error for WorkspaceMissing {}

/// What went wrong, as `--json` reports it and the exit code says it.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    /// `usage`, `not-found`, `invalid-input`, `busy`, `trap`, the
    /// component's own kinds (`access-denied`, `too-large`, `io`, …) or
    /// `failed`.
    pub kind: String,
    pub code: i32,
    pub path: Option<String>,
    pub argument: Option<String>,
}

/// Classifies an error by the first typed cause in its chain.
pub fn classify(error: &anyhow::Error) -> Failure {
    let mut failure = Failure {
        kind: "failed".into(),
        code: EXIT_FAILURE,
        path: None,
        argument: None,
    };
    for cause in error.chain() {
        if let Some(usage) = cause.downcast_ref::<UsageError>() {
            failure.kind = "usage".into();
            failure.code = EXIT_USAGE;
            failure.argument = Some(usage.argument.clone());
            break;
        }
        if let Some(missing) = cause.downcast_ref::<WorkspaceMissing>() {
            failure.kind = "not-found".into();
            failure.code = EXIT_NOT_FOUND;
            failure.path = Some(missing.0.display().to_string());
            break;
        }
        if cause.downcast_ref::<WorkspaceBusy>().is_some() {
            failure.kind = "busy".into();
            failure.code = EXIT_BUSY;
            break;
        }
        if cause.downcast_ref::<InvalidSetting>().is_some() {
            failure.kind = "invalid-input".into();
            failure.code = EXIT_INVALID_INPUT;
            break;
        }
        if cause.downcast_ref::<WorkspaceReadOnly>().is_some() {
            failure.kind = "workspace-read-only".into();
            break;
        }
        match cause.downcast_ref::<CallError>() {
            Some(CallError::Trap(_)) => {
                failure.kind = "trap".into();
                failure.code = EXIT_TRAP;
                break;
            }
            Some(CallError::Memory(e)) => {
                let kind = error_kind(e);
                failure.kind = kind.into();
                failure.code = match kind {
                    "invalid-input" | "access-denied" | "too-large" => EXIT_INVALID_INPUT,
                    "not-found" => EXIT_NOT_FOUND,
                    _ => EXIT_FAILURE,
                };
                break;
            }
            _ => {}
        }
        // A flag's value that did not parse, e.g. `.context("--now")`.
        let text = cause.to_string();
        if failure.argument.is_none() && text.starts_with("--") && !text.contains(' ') {
            failure.argument = Some(text);
            failure.kind = "usage".into();
            failure.code = EXIT_USAGE;
        }
    }
    failure
}

/// Reports a failed command — on stderr, or with `--json` as one object on
/// stdout — records it (`record_failure`) and returns its exit code.
pub fn failed(g: &Global, error: &anyhow::Error) -> i32 {
    // A reader that went away (`search --batch … | head -1`): end as a
    // Unix filter ends, quietly.
    if error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        end_by_closed_pipe();
    }
    let failure = classify(error);
    // Recorded first: with --json the report goes to stdout, which may be
    // the closed pipe.
    record_failure(g, error, &failure);
    if g.json {
        println!("{}", failure_json(&failure, &format!("{error:#}")));
    } else {
        eprintln!("memory-harness: {error:#}");
    }
    failure.code
}

/// Ends the process as SIGPIPE ends a Unix filter whose reader went away:
/// quietly, status 141 in a shell. Rust ignores SIGPIPE (so a `serve`
/// delivery command that does not read cannot kill the daemon); it is
/// raised here only once stdout itself is known to be closed.
pub fn end_by_closed_pipe() -> ! {
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE);
}

/// `{"error": {"kind", "message", "exit_code", "path"?, "argument"?}}`.
pub fn failure_json(failure: &Failure, message: &str) -> serde_json::Value {
    let mut error = json!({
        "kind": failure.kind,
        "message": message,
        "exit_code": failure.code,
    });
    if let Some(path) = &failure.path {
        error["path"] = json!(path);
    }
    if let Some(argument) = &failure.argument {
        error["argument"] = json!(argument);
    }
    json!({ "error": error })
}

/// Records a failed command in the workspace's health file, unless the call
/// that failed recorded it already (`MemoryHost::record_health`), the
/// command never reached the workspace, or the workspace cannot be written
/// (nor for `report`, which writes nothing).
fn record_failure(g: &Global, error: &anyhow::Error, failure: &Failure) {
    let Some(command) = &g.command_label else {
        return;
    };
    // The review page promises to write nothing to the workspace.
    if command == "report"
        || failure.kind == "usage"
        || failure.kind == "not-found" && failure.path.is_some()
    {
        return;
    }
    if error.chain().any(|e| {
        e.downcast_ref::<CallError>().is_some() || e.downcast_ref::<WorkspaceReadOnly>().is_some()
    }) {
        return;
    }
    let Ok(resolved) = g.resolved(None) else {
        return;
    };
    if !resolved.workspace.join(".memory").is_dir() {
        return;
    }
    let kind = if failure.kind == "busy" {
        "busy"
    } else {
        "host"
    };
    let message = format!("{error:#}");
    let health_failure = memory_harness::health::Failure {
        command,
        kind,
        message: &message,
        trap: false,
        deadline: false,
    };
    if let Err(e) = memory_harness::health::record(&resolved.workspace, &health_failure) {
        if memory_harness::host::read_only_cause(&e).is_none() {
            memory_harness::notes::note(format!(
                "the failure was not recorded in {}: {}",
                memory_harness::health::HEALTH_FILE,
                memory_harness::host::io_cause(&e)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn errors_are_classified_by_their_first_typed_cause() {
        let missing = anyhow::Error::new(WorkspaceMissing("/tmp/nope".into()));
        let f = classify(&missing);
        assert_eq!(
            (f.kind.as_str(), f.code, f.path.as_deref()),
            ("not-found", 66, Some("/tmp/nope"))
        );

        let busy = anyhow::Error::new(WorkspaceBusy("held by pid 7".into())).context("search");
        assert_eq!(classify(&busy).code, EXIT_BUSY);

        let trap = anyhow::Error::new(CallError::Trap("out of fuel".into()));
        assert_eq!(
            (classify(&trap).kind.as_str(), classify(&trap).code),
            ("trap", 70)
        );

        let refused = anyhow::Error::new(CallError::Memory(
            memory_harness::host::wit::Error::AccessDenied("../etc/passwd".into()),
        ));
        assert_eq!(
            (classify(&refused).kind.as_str(), classify(&refused).code),
            ("access-denied", 65)
        );

        let not_found = anyhow::Error::new(CallError::Memory(
            memory_harness::host::wit::Error::NotFound("memory/x.md".into()),
        ));
        assert_eq!(classify(&not_found).code, EXIT_NOT_FOUND);

        let bad_now: anyhow::Result<()> = Err(anyhow::anyhow!("not a date")).context("--now");
        let f = classify(&bad_now.unwrap_err());
        assert_eq!(
            (f.kind.as_str(), f.code, f.argument.as_deref()),
            ("usage", 2, Some("--now"))
        );

        let settings = anyhow::Error::new(memory_harness::config::InvalidSetting(
            "search.minScore must be 0..=1".into(),
        ))
        .context("--config memory-harness.toml");
        assert_eq!(classify(&settings).code, EXIT_INVALID_INPUT);

        assert_eq!(classify(&anyhow::anyhow!("disk full")).code, EXIT_FAILURE);
    }

    #[test]
    fn the_json_form_names_what_is_at_fault() {
        let f = classify(&anyhow::Error::new(UsageError {
            argument: "--taint".into(),
            message: "unknown class".into(),
        }));
        let j = failure_json(&f, "--taint: unknown class");
        assert_eq!(j["error"]["kind"], "usage");
        assert_eq!(j["error"]["argument"], "--taint");
        assert_eq!(j["error"]["exit_code"], 2);
        assert!(j["error"].get("path").is_none());
    }
}
