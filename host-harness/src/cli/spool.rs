//! A busy workspace: a flush or ingest that cannot get it is spooled
//! (`memory_harness::spool`) and the command exits with `EXIT_SPOOLED`; the
//! next command that gets it to write replays the spool first.

use super::exit::EXIT_SPOOLED;
use super::global::Global;
use super::workspace::open;
use memory_harness::host::{CallError, WorkspaceBusy};
use memory_harness::session::Session;
use memory_harness::spool::Spooled;

/// A writing session for a flush or ingest; when the workspace stays busy
/// past `limits.lockWaitMs`, the call is spooled (`.memory/spool/`) for the
/// next write command to replay, and `Err(EXIT_SPOOLED)` is returned.
pub fn open_or_spool(
    g: &Global,
    mut call: Spooled,
) -> anyhow::Result<Result<(Session, Spooled), i32>> {
    let resolved = g.resolved(None)?;
    let now = g.now_ms(&resolved)?;
    call.set_now(now);
    match open(g) {
        Ok(session) => Ok(Ok((session, call))),
        Err(error) => {
            let Some(busy) = error
                .chain()
                .find_map(|e| e.downcast_ref::<WorkspaceBusy>())
            else {
                return Err(error);
            };
            let path = memory_harness::spool::write(&resolved.workspace, &call).map_err(|e| {
                anyhow::anyhow!(
                    "{busy}; and {} could not be spooled ({}): nothing was kept, retry",
                    call.describe(),
                    memory_harness::host::io_cause(&e)
                )
            })?;
            eprintln!(
                "memory-harness: spooled: {busy}; {} was saved to {} and will be written by the next command that writes to this workspace (exit {EXIT_SPOOLED})",
                call.describe(),
                path.strip_prefix(&resolved.workspace).unwrap_or(&path).display()
            );
            Ok(Err(EXIT_SPOOLED))
        }
    }
}

/// Replays the spooled flushes and ingests, oldest first; each file is
/// removed once its call succeeded. Says on stderr what it did.
pub fn replay(session: &mut Session) {
    let workspace = session.host.workspace().to_path_buf();
    let now = session.now_ms;
    for (path, call) in memory_harness::spool::pending(&workspace) {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let call = match call {
            Ok(call) => call,
            Err(why) => {
                eprintln!(
                    "warning: the spooled call {name} cannot be read ({why}); it is left in place"
                );
                continue;
            }
        };
        let outcome = match &call {
            Spooled::Flush(c) => session.flush(c).map(|r| r.reason),
            Spooled::Ingest(c) => session.ingest(c).map(|r| {
                format!(
                    "{} of {} messages written",
                    r.messages_written, r.messages_read
                )
            }),
        };
        match outcome {
            Ok(summary) => {
                let _ = std::fs::remove_file(&path);
                memory_harness::notes::note(format!("replayed the spooled {} ({name}): {summary}", call.describe()));
            }
            Err(error) if never_succeeds(&error) => {
                match memory_harness::spool::set_aside(&workspace, &path) {
                    Ok(target) => eprintln!(
                        "warning: the spooled {} ({name}) can never be written ({error}); it was moved to {}",
                        call.describe(),
                        target.display()
                    ),
                    Err(e) => eprintln!(
                        "warning: the spooled {} ({name}) can never be written ({error}), and could not be set aside: {e}",
                        call.describe()
                    ),
                }
            }
            Err(error) => eprintln!(
                "warning: the spooled {} ({name}) failed again and is kept for the next command: {error}",
                call.describe()
            ),
        }
    }
    session.set_now(now);
}

/// Whether a failed call would fail the same way every time: it trapped (a
/// deadline, the memory cap), or the component refused it as the caller's
/// mistake (invalid input, over a limit).
fn never_succeeds(error: &CallError) -> bool {
    match error {
        CallError::Trap(_) => true,
        CallError::Memory(e) => {
            memory_harness::health::CALLERS_MISTAKES.contains(&memory_harness::host::error_kind(e))
        }
        CallError::Host(_) => false,
    }
}
