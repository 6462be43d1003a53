//! How a command ends: the exit codes besides 0 and 1, and a failure
//! reported on stderr and recorded in the workspace's health file.

use super::global::Global;
use memory_harness::host::{CallError, WorkspaceBusy, WorkspaceReadOnly};

/// The exit code of a flush or ingest that was spooled, not written.
pub const EXIT_SPOOLED: i32 = 3;
/// The exit code of a command refused because the workspace stayed busy.
pub const EXIT_BUSY: i32 = 75;

/// Reports a failed command on stderr, records it (`record_failure`) and
/// returns its exit code: `EXIT_BUSY` for a busy workspace, else 1.
pub fn failed(g: &Global, error: &anyhow::Error) -> i32 {
    eprintln!("memory-harness: {error:#}");
    let busy = error
        .chain()
        .any(|e| e.downcast_ref::<WorkspaceBusy>().is_some());
    record_failure(g, error);
    if busy {
        EXIT_BUSY
    } else {
        1
    }
}

/// Records a failed command in the workspace's health file, unless the call
/// that failed recorded it already (`MemoryHost::record_health`) or the
/// workspace cannot be written (nor for `report`, which writes nothing).
fn record_failure(g: &Global, error: &anyhow::Error) {
    let Some(command) = &g.command_label else {
        return;
    };
    // The review page promises to write nothing to the workspace.
    if command == "report" {
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
    let kind = if error
        .chain()
        .any(|e| e.downcast_ref::<WorkspaceBusy>().is_some())
    {
        "busy"
    } else {
        "host"
    };
    let message = format!("{error:#}");
    let failure = memory_harness::health::Failure {
        command,
        kind,
        message: &message,
        trap: false,
        deadline: false,
    };
    if let Err(e) = memory_harness::health::record(&resolved.workspace, &failure) {
        if memory_harness::host::read_only_cause(&e).is_none() {
            eprintln!(
                "note: the failure was not recorded in {}: {}",
                memory_harness::health::HEALTH_FILE,
                memory_harness::host::io_cause(&e)
            );
        }
    }
}
