//! The workspace lock: one harness process at a time holds the index (SQLite
//! runs in exclusive mode inside the sandbox), readers share it with each
//! other, and a workspace that cannot be written is read as it is.

use anyhow::bail;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Guards a workspace against a second harness process: SQLite runs in
/// exclusive mode inside the sandbox, so one process at a time may hold the
/// index. The lock is an OS file lock, released when the process ends, even
/// by a crash; the file names its holder while held. A workspace the
/// JavaScript host serves (`.memory/js-host.lock` naming a live process, an
/// OpenClaw gateway) is refused too: Node has no file locks, so that host
/// keeps a pid file, and it honours this lock the same way.
pub struct WorkspaceLock {
    file: std::fs::File,
    exclusive: bool,
}

/// The lock file of the JavaScript host (hosts/openclaw/lib/lock.js).
const JS_HOST_LOCK: &str = "js-host.lock";

/// The live process other than this one a pid lock file names, if any.
fn live_holder(lock_file: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(lock_file).ok()?;
    let pid: u32 = text.trim().strip_prefix("pid ")?.trim().parse().ok()?;
    let alive = Path::new("/proc")
        .is_dir()
        .then(|| Path::new(&format!("/proc/{pid}")).exists());
    // Without /proc there is no telling: a named holder counts as alive.
    (pid != std::process::id() && alive.unwrap_or(true)).then_some(pid)
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        // Name no holder once released (the OS lock goes with the file); a
        // shared holder named none.
        if self.exclusive {
            let _ = self.file.set_len(0);
        }
    }
}

/// A refusal of the workspace, downcastable from the `anyhow` error that
/// carries it, whose message starts with its kind.
macro_rules! workspace_refusal {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name(pub String);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($kind, ": {}"), self.0)
            }
        }

        impl std::error::Error for $name {}
    };
}

workspace_refusal!(
    /// A write found the workspace busy (another harness or the JavaScript
    /// host) and the lock did not come free within the wait: nothing was done.
    WorkspaceBusy,
    "busy"
);

workspace_refusal!(
    /// A write refused because the workspace cannot be written (a read-only
    /// file system, or a directory this process may not write): nothing was
    /// done.
    WorkspaceReadOnly,
    "workspace-read-only"
);

/// How a session may use the workspace.
pub enum WorkspaceAccess {
    /// The exclusive lock: read and write.
    Writable(WorkspaceLock),
    /// Another process is writing: a shared lock is held (writers wait for
    /// it), and the index is read as it is, not synced. The string says why.
    Shared(WorkspaceLock, String),
    /// The workspace cannot be written: no lock is needed, the index is read
    /// as it is. The string says why (the system's error).
    ReadOnly(String),
}

/// The cause of `error` when it says the workspace may not be written.
pub fn read_only_cause(error: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind as K;
    match error.kind() {
        K::ReadOnlyFilesystem => Some(match error.raw_os_error() {
            Some(n) => format!("the file system is read-only (os error {n})"),
            None => "the file system is read-only".into(),
        }),
        K::PermissionDenied => Some(match error.raw_os_error() {
            Some(n) => format!("permission denied (os error {n})"),
            None => "permission denied".into(),
        }),
        _ => None,
    }
}

/// An I/O error of the harness with its cause in plain words.
pub fn io_cause(error: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let plain = match error.kind() {
        K::StorageFull => "no space left on the device (the disk is full)",
        K::QuotaExceeded => "no space left: the disk quota is exceeded",
        K::ReadOnlyFilesystem => "a read-only file system",
        K::PermissionDenied => "permission denied",
        _ => return error.to_string(),
    };
    format!("{plain} ({error})")
}

/// How often a waiting lock is retried.
const LOCK_POLL: Duration = Duration::from_millis(25);

impl WorkspaceLock {
    /// The exclusive lock, refused at once when another process holds it.
    pub fn acquire(workspace: &Path) -> anyhow::Result<WorkspaceLock> {
        WorkspaceLock::acquire_within(workspace, Duration::ZERO)
    }

    /// The lock file, opened for writing (created with `.memory/` if
    /// needed); `Err(Ok(cause))` when the workspace cannot be written.
    fn open_file(workspace: &Path) -> Result<(std::fs::File, PathBuf), anyhow::Result<String>> {
        let dir = workspace.join(".memory");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Err(match read_only_cause(&e) {
                Some(cause) => Ok(cause),
                None => Err(anyhow::anyhow!(
                    "cannot create {}: {}",
                    dir.display(),
                    io_cause(&e)
                )),
            });
        }
        let path = dir.join("harness.lock");
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => Ok((file, path)),
            Err(e) => Err(match read_only_cause(&e) {
                Some(cause) => Ok(cause),
                None => Err(anyhow::anyhow!(
                    "cannot open {}: {}",
                    path.display(),
                    io_cause(&e)
                )),
            }),
        }
    }

    /// The exclusive lock, waiting up to `wait` for another harness or the
    /// JavaScript host to let go. Fails with `WorkspaceBusy` after the wait,
    /// `WorkspaceReadOnly` when the workspace cannot be written.
    pub fn acquire_within(workspace: &Path, wait: Duration) -> anyhow::Result<WorkspaceLock> {
        let (file, path) = match WorkspaceLock::open_file(workspace) {
            Ok(opened) => opened,
            Err(Ok(cause)) => {
                return Err(WorkspaceReadOnly(format!(
                    "{} cannot be written: {cause}; nothing was written (reads still work)",
                    workspace.display()
                ))
                .into())
            }
            Err(Err(error)) => return Err(error),
        };
        let deadline = std::time::Instant::now() + wait;
        loop {
            let refusal = match WorkspaceLock::try_exclusive(workspace, &file, &path)? {
                None => break,
                Some(refusal) => refusal,
            };
            if std::time::Instant::now() >= deadline {
                let waited = if wait.is_zero() {
                    String::new()
                } else {
                    format!(" (waited {} ms, limits.lockWaitMs)", wait.as_millis())
                };
                return Err(WorkspaceBusy(format!("{refusal}{waited}")).into());
            }
            std::thread::sleep(LOCK_POLL);
        }
        Ok(WorkspaceLock::holding(file))
    }

    /// The exclusive lock just taken on `file`, which is made to name this
    /// process. Naming it is best effort: on a full disk the lock still
    /// holds (the OS lock is what excludes another harness), and the reads
    /// a full disk allows still work; a note says so.
    fn holding(mut file: std::fs::File) -> WorkspaceLock {
        use std::io::{Seek, Write};
        let named = file
            .set_len(0)
            .and_then(|()| file.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| write!(file, "pid {}", std::process::id()));
        if let Err(e) = named {
            eprintln!(
                "note: the workspace lock could not name its holder: {}",
                io_cause(&e)
            );
        }
        WorkspaceLock {
            file,
            exclusive: true,
        }
    }

    /// Takes the exclusive lock if free: `None`, or why not.
    fn try_exclusive(
        workspace: &Path,
        file: &std::fs::File,
        path: &Path,
    ) -> anyhow::Result<Option<String>> {
        if let Some(pid) = live_holder(&workspace.join(".memory").join(JS_HOST_LOCK)) {
            return Ok(Some(format!(
                "the JavaScript host (pid {pid}, an OpenClaw gateway or CLI) is using the memory of {}; stop it or use `openclaw memory …` instead",
                workspace.display()
            )));
        }
        match file.try_lock() {
            Ok(()) => Ok(None),
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(path).unwrap_or_default();
                Ok(Some(format!(
                    "another memory-harness ({}) is using the index of {}; wait for it to finish, then retry",
                    if holder.trim().is_empty() {
                        "an unknown process"
                    } else {
                        holder.trim()
                    },
                    workspace.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(anyhow::anyhow!(
                "cannot lock the workspace: {}",
                io_cause(&e)
            )),
        }
    }

    /// Access for a command that only reads: the exclusive lock when free
    /// (the index is synced as usual); a shared lock, waiting up to `wait`
    /// for a writer to finish, when another harness holds it (the index is
    /// read as it is); no lock at all when the workspace cannot be written.
    pub fn acquire_for_reading(
        workspace: &Path,
        wait: Duration,
    ) -> anyhow::Result<WorkspaceAccess> {
        let (file, path) = match WorkspaceLock::open_file(workspace) {
            Ok(opened) => opened,
            Err(Ok(cause)) => return Ok(WorkspaceAccess::ReadOnly(cause)),
            Err(Err(error)) => return Err(error),
        };
        let first = match WorkspaceLock::try_exclusive(workspace, &file, &path)? {
            None => return Ok(WorkspaceAccess::Writable(WorkspaceLock::holding(file))),
            Some(refusal) => refusal,
        };
        // SQLite runs with locks only inside the sandbox: a reader must not
        // read while another process commits. A shared lock waits for the
        // writer; readers share it.
        let deadline = std::time::Instant::now() + wait;
        loop {
            let js_host = live_holder(&workspace.join(".memory").join(JS_HOST_LOCK)).is_some();
            if !js_host {
                match file.try_lock_shared() {
                    Ok(()) => {
                        return Ok(WorkspaceAccess::Shared(
                            WorkspaceLock {
                                file,
                                exclusive: false,
                            },
                            format!("{first}; read as it is"),
                        ))
                    }
                    Err(std::fs::TryLockError::WouldBlock) => {}
                    Err(std::fs::TryLockError::Error(e)) => {
                        bail!("cannot lock the workspace: {}", io_cause(&e))
                    }
                }
            }
            if std::time::Instant::now() >= deadline {
                return Err(WorkspaceBusy(format!(
                    "{first} (waited {} ms, limits.lockWaitMs)",
                    wait.as_millis()
                ))
                .into());
            }
            std::thread::sleep(LOCK_POLL);
        }
    }
}
