//! The workspace lock: one process at a time, of either host, holds a
//! workspace (SQLite runs in exclusive mode inside the sandbox, without
//! cross-process locks), and a workspace that cannot be written is read as
//! it is.
//!
//! The protocol is shared with the JavaScript host (hosts/openclaw/lib/
//! lock.js) and described once, in docs/ARCHITECTURE.md ("The workspace
//! lock"): `.memory/workspace.lock`, created with `O_CREAT|O_EXCL`, holds one
//! JSON line naming its holder (pid, host, boot id, process start time,
//! program, since). It is held while that process runs: same host, same
//! boot, the pid alive and started when the line says. A stale lock is taken
//! over under `.memory/workspace.lock.break`, never removed blindly.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The lock file, under `.memory/`.
const LOCK_FILE: &str = "workspace.lock";
/// Held for a few system calls by whoever takes over a stale lock.
const BREAK_FILE: &str = "workspace.lock.break";
/// A lock that names no holder is being written by it, for this long; after
/// that its holder died between creating and writing it (or, on a full disk,
/// could not write it).
const UNNAMED_GRACE: Duration = Duration::from_secs(10);
/// A break file older than this was left by a process that died taking over.
const BREAK_STALE: Duration = Duration::from_secs(10);
/// The lock files of earlier versions ("pid N"), honoured while they name a
/// live process (an older host still running), removed once they do not.
const LEGACY: [(&str, &str); 2] = [
    ("harness.lock", "an older memory-harness"),
    ("js-host.lock", "an older OpenClaw host"),
];

/// Who holds the lock: the file's one JSON line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Holder {
    pid: u32,
    /// The hostname: a lock another host wrote (a shared file system) cannot
    /// be checked from here.
    host: String,
    /// Linux's boot id: a lock from an earlier boot is stale.
    boot: Option<String>,
    /// The process's start time (`/proc/<pid>/stat` field 22, clock ticks
    /// since boot): a live pid started at another time is a reused pid.
    start: Option<u64>,
    /// What holds it, for the refusal: "memory-harness note", "openclaw gateway".
    program: String,
    /// When it was taken, UTC to the second.
    since: String,
}

/// What a running process looks like from here.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Probe {
    Gone,
    /// Running (a zombie counts as gone), with its start time when known.
    Running(Option<u64>),
}

/// What a lock file found in place means.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// A live process holds it.
    Held(Holder),
    /// A process on another host holds it: there is no telling from here.
    HeldElsewhere(Holder),
    /// This process holds it already.
    Mine(Holder),
    /// It names no holder yet: its holder is writing it.
    Opening,
    /// Its holder is gone; the reason is for the reader of a test.
    Stale(&'static str),
}

/// The holder a lock file names, if it is one well-formed line.
fn parse_holder(bytes: &[u8]) -> Option<Holder> {
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str::<Holder>(text.trim())
        .ok()
        .filter(|h| h.pid > 0)
}

/// Whether the lock `record` (unparseable: `None`, `age` old) still holds
/// against `me`, a process that holds it already (`held_here`) or not.
fn judge(
    record: Option<&Holder>,
    age: Duration,
    me: &Holder,
    held_here: bool,
    probe: impl FnOnce(u32) -> Probe,
) -> Verdict {
    let Some(holder) = record else {
        return if age < UNNAMED_GRACE {
            Verdict::Opening
        } else {
            Verdict::Stale("it names no holder and is old")
        };
    };
    if holder.host != me.host {
        return Verdict::HeldElsewhere(holder.clone());
    }
    if let (Some(then), Some(now)) = (&holder.boot, &me.boot) {
        if then != now {
            return Verdict::Stale("it was taken before the machine restarted");
        }
    }
    if holder.pid == me.pid {
        // No other live process has our pid: it is ours, or an earlier
        // process's that had this pid (a container restarted).
        return if held_here {
            Verdict::Mine(holder.clone())
        } else {
            Verdict::Stale("it names this process's pid, left by an earlier process")
        };
    }
    match probe(holder.pid) {
        Probe::Gone => Verdict::Stale("its holder is gone"),
        Probe::Running(Some(start)) if holder.start.is_some_and(|s| s != start) => {
            Verdict::Stale("its pid was reused by a process started later")
        }
        Probe::Running(_) => Verdict::Held(holder.clone()),
    }
}

/// "openclaw gateway (pid 1234 on host box, since 2026-12-04T17:20:03Z)".
fn describe(holder: &Holder) -> String {
    format!(
        "{} (pid {} on host {}, since {})",
        holder.program, holder.pid, holder.host, holder.since
    )
}

/// The refusal for a lock that holds; the same words as the JavaScript host's.
fn refusal(workspace: &Path, verdict: &Verdict) -> String {
    let ws = workspace.display();
    match verdict {
        Verdict::Held(h) => format!(
            "the memory of {ws} is in use by {}; wait for it to finish, then retry",
            describe(h)
        ),
        Verdict::HeldElsewhere(h) => format!(
            "the memory of {ws} is in use by {}, on another host sharing this file system; wait for it to finish, or remove .memory/{LOCK_FILE} if it no longer runs there",
            describe(h)
        ),
        Verdict::Mine(h) => format!(
            "the memory of {ws} is already open in this process ({}); share that instance",
            describe(h)
        ),
        Verdict::Opening => format!(
            "the memory of {ws} is being opened by another process (its lock names no holder yet); wait for it to finish, then retry"
        ),
        Verdict::Stale(_) => format!(
            "the memory of {ws} is being taken over from a stale lock by another process; retry"
        ),
    }
}

/// The state and start time in a `/proc/<pid>/stat` line (fields 3 and 22;
/// the command name, field 2, may hold spaces and parentheses).
fn parse_stat(line: &str) -> Option<(char, u64)> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some((state, fields.get(19)?.parse().ok()?))
}

fn has_proc() -> bool {
    Path::new("/proc/self/stat").is_file()
}

/// Whether `pid` runs, and since when: `/proc` where there is one, else
/// `kill(pid, 0)` (macOS: liveness only).
fn probe(pid: u32) -> Probe {
    if has_proc() {
        return match std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|line| parse_stat(&line))
        {
            Some((state, start)) if state != 'Z' && state != 'X' => Probe::Running(Some(start)),
            _ => Probe::Gone,
        };
    }
    let Ok(pid) = i32::try_from(pid) else {
        return Probe::Gone;
    };
    // SAFETY: signal 0 sends nothing; it only asks whether `pid` exists.
    let sent = unsafe { libc::kill(pid, 0) } == 0;
    if sent || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
        Probe::Running(None)
    } else {
        Probe::Gone
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; the name ends with a NUL
    // when it fits, and the last byte stays 0 when it does not.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    if ok && end > 0 {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown".into()
    }
}

static PROGRAM: OnceLock<String> = OnceLock::new();

/// Names what holds the lock in its line ("memory-harness note"); the CLI
/// sets it once, before any lock is taken.
pub fn set_lock_program(program: String) {
    let _ = PROGRAM.set(program);
}

/// This process as a lock's holder, taken now.
fn me() -> Holder {
    static FIXED: OnceLock<(String, Option<String>, Option<u64>)> = OnceLock::new();
    let (host, boot, start) = FIXED.get_or_init(|| {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|b| b.trim().to_string())
            .filter(|b| !b.is_empty());
        let start = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|line| parse_stat(&line))
            .map(|(_, start)| start);
        (hostname(), boot, start)
    });
    let program = PROGRAM.get().cloned().unwrap_or_else(|| {
        std::env::args()
            .next()
            .map(|a| {
                Path::new(&a)
                    .file_name()
                    .map_or(a.clone(), |n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "memory-harness".into())
    });
    Holder {
        pid: std::process::id(),
        host: host.clone(),
        boot: boot.clone(),
        start: *start,
        program,
        since: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
    }
}

/// The lock files this process holds: a lock naming our pid that is not
/// here is an earlier process's.
fn held_here() -> &'static Mutex<HashSet<PathBuf>> {
    static HELD: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// The workspace's lock, held until dropped.
pub struct WorkspaceLock {
    path: PathBuf,
    /// The file as this process left it, and its inode: released only while
    /// it is still that file.
    content: Vec<u8>,
    inode: (u64, u64),
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        let ours = std::fs::metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode)
            && std::fs::read(&self.path).is_ok_and(|c| c == self.content);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
        held_here()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.path);
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
    /// A command found the workspace busy (another harness or the JavaScript
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
    /// The lock: read and write.
    Writable(WorkspaceLock),
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

fn create_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// A file's bytes and age; `None` when it is not there.
fn read_with_age(path: &Path) -> std::io::Result<Option<(Vec<u8>, Duration)>> {
    let read = std::fs::read(path).and_then(|bytes| {
        let modified = std::fs::metadata(path)?.modified()?;
        Ok((bytes, modified.elapsed().unwrap_or_default()))
    });
    match read {
        Ok(found) => Ok(Some(found)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes the stale lock `seen` unless it changed meanwhile: under the
/// break file, so that of many processes finding one stale lock only one
/// removes it (and none removes the fresh lock another just took).
/// `Ok(false)`: another process is taking it over.
fn take_over(dir: &Path, seen: &[u8]) -> std::io::Result<bool> {
    let brk = dir.join(BREAK_FILE);
    match create_exclusive(&brk) {
        Ok(mut file) => {
            let _ = writeln!(file, "pid {}", std::process::id());
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if read_with_age(&brk)?.is_some_and(|(_, age)| age > BREAK_STALE) {
                let _ = std::fs::remove_file(&brk);
            }
            return Ok(false);
        }
        Err(e) => return Err(e),
    }
    let path = dir.join(LOCK_FILE);
    let removed = match std::fs::read(&path) {
        Ok(now) if now == seen => std::fs::remove_file(&path).or_else(|e| {
            (e.kind() == std::io::ErrorKind::NotFound)
                .then_some(())
                .ok_or(e)
        }),
        _ => Ok(()),
    };
    let _ = std::fs::remove_file(&brk);
    removed.map(|()| true)
}

/// The refusal when an earlier version's lock names a live process.
fn legacy_holder(workspace: &Path, dir: &Path) -> Option<String> {
    LEGACY.iter().find_map(|(file, who)| {
        let pid = legacy_pid(&dir.join(file))?;
        (pid != std::process::id() && probe(pid) != Probe::Gone).then(|| {
            format!(
                "the memory of {} is in use by {who} (pid {pid}, .memory/{file}); wait for it to finish, then retry",
                workspace.display()
            )
        })
    })
}

/// The pid an earlier version's lock names ("pid N").
fn legacy_pid(path: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.trim().strip_prefix("pid ")?.trim().parse().ok()
}

/// Why one attempt did not take the lock.
struct Refused {
    message: String,
    /// Waiting cannot help: this process holds it.
    final_: bool,
}

/// One attempt at the lock: taken, refused, or an I/O error.
fn attempt(workspace: &Path, dir: &Path) -> std::io::Result<Result<WorkspaceLock, Refused>> {
    let busy = |message| {
        Ok(Err(Refused {
            message,
            final_: false,
        }))
    };
    if let Some(message) = legacy_holder(workspace, dir) {
        return busy(message);
    }
    let path = dir.join(LOCK_FILE);
    // Twice: a stale lock taken over leaves the name free for the next try.
    for _ in 0..2 {
        let me = me();
        match create_exclusive(&path) {
            Ok(file) => return Ok(Ok(WorkspaceLock::holding(file, path, &me))),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let Some((bytes, age)) = read_with_age(&path)? else {
            continue; // released meanwhile
        };
        let mine = held_here()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&path);
        match judge(parse_holder(&bytes).as_ref(), age, &me, mine, probe) {
            Verdict::Stale(_) => {
                if !take_over(dir, &bytes)? {
                    return busy(refusal(workspace, &Verdict::Stale("")));
                }
            }
            verdict @ Verdict::Mine(_) => {
                return Ok(Err(Refused {
                    message: refusal(workspace, &verdict),
                    final_: true,
                }))
            }
            verdict => return busy(refusal(workspace, &verdict)),
        }
    }
    busy(refusal(workspace, &Verdict::Stale("")))
}

impl WorkspaceLock {
    /// The lock just created as `file`, made to name this process. Naming
    /// it is best effort: on a full disk the file still excludes others
    /// (for `UNNAMED_GRACE`), and the reads a full disk allows still work;
    /// a note says so.
    fn holding(mut file: std::fs::File, path: PathBuf, me: &Holder) -> WorkspaceLock {
        // Known here before the line names this process: another thread
        // reading the line must judge it ours, not an earlier process's.
        held_here()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.clone());
        let line = format!("{}\n", serde_json::to_string(me).unwrap_or_default());
        if let Err(e) = file.write_all(line.as_bytes()) {
            crate::notes::note(format!(
                "the workspace lock could not name its holder: {}",
                io_cause(&e)
            ));
        }
        let inode = file
            .metadata()
            .map(|m| (m.dev(), m.ino()))
            .unwrap_or_default();
        let content = std::fs::read(&path).unwrap_or_default();
        for (legacy, _) in LEGACY {
            // Not naming a live process (checked before taking the lock).
            let _ = std::fs::remove_file(path.with_file_name(legacy));
        }
        WorkspaceLock {
            path,
            content,
            inode,
        }
    }

    /// The lock, refused at once when another process holds it.
    pub fn acquire(workspace: &Path) -> anyhow::Result<WorkspaceLock> {
        WorkspaceLock::acquire_within(workspace, Duration::ZERO)
    }

    /// The lock, waiting up to `wait` for another harness or the JavaScript
    /// host to let go. Fails with `WorkspaceBusy` (naming the holder) after
    /// the wait, `WorkspaceReadOnly` when the workspace cannot be written.
    pub fn acquire_within(workspace: &Path, wait: Duration) -> anyhow::Result<WorkspaceLock> {
        match WorkspaceLock::acquire_or_read_only(workspace, wait)? {
            WorkspaceAccess::Writable(lock) => Ok(lock),
            WorkspaceAccess::ReadOnly(cause) => Err(WorkspaceReadOnly(format!(
                "{} cannot be written: {cause}; nothing was written (reads still work)",
                workspace.display()
            ))
            .into()),
        }
    }

    /// Access for a command that only reads: the lock, waiting up to `wait`
    /// like a write (SQLite runs without cross-process locks, so a read must
    /// not overlap another process's commit); no lock at all when the
    /// workspace cannot be written (nothing can commit there).
    pub fn acquire_for_reading(
        workspace: &Path,
        wait: Duration,
    ) -> anyhow::Result<WorkspaceAccess> {
        WorkspaceLock::acquire_or_read_only(workspace, wait)
    }

    fn acquire_or_read_only(workspace: &Path, wait: Duration) -> anyhow::Result<WorkspaceAccess> {
        let dir = workspace.join(".memory");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return match read_only_cause(&e) {
                Some(cause) => Ok(WorkspaceAccess::ReadOnly(cause)),
                None => anyhow::bail!("cannot create {}: {}", dir.display(), io_cause(&e)),
            };
        }
        // One name for the lock however the workspace was named, so that
        // this process knows its own.
        let dir = dir.canonicalize().unwrap_or(dir);
        let deadline = std::time::Instant::now() + wait;
        loop {
            let refused = match attempt(workspace, &dir) {
                Ok(Ok(lock)) => return Ok(WorkspaceAccess::Writable(lock)),
                Ok(Err(refused)) => refused,
                Err(e) => {
                    return match read_only_cause(&e) {
                        Some(cause) => Ok(WorkspaceAccess::ReadOnly(cause)),
                        None => anyhow::bail!(
                            "cannot lock the workspace ({}): {}",
                            dir.join(LOCK_FILE).display(),
                            io_cause(&e)
                        ),
                    }
                }
            };
            if refused.final_ || std::time::Instant::now() >= deadline {
                let waited = if wait.is_zero() || refused.final_ {
                    String::new()
                } else {
                    format!(" (waited {} ms, limits.lockWaitMs)", wait.as_millis())
                };
                return Err(WorkspaceBusy(format!("{}{waited}", refused.message)).into());
            }
            std::thread::sleep(LOCK_POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32, start: Option<u64>) -> Holder {
        Holder {
            pid,
            host: "box".into(),
            boot: Some("b1".into()),
            start,
            program: "openclaw gateway".into(),
            since: "2026-12-04T17:20:03Z".into(),
        }
    }

    const ME: u32 = 100;

    fn verdict(record: &Holder, probe: Probe) -> Verdict {
        judge(
            Some(record),
            Duration::from_secs(60),
            &holder(ME, Some(5)),
            false,
            |_| probe,
        )
    }

    #[test]
    fn a_holder_line_round_trips_and_junk_names_none() {
        let h = holder(1234, Some(99));
        let line = serde_json::to_string(&h).unwrap();
        assert_eq!(
            line,
            r#"{"pid":1234,"host":"box","boot":"b1","start":99,"program":"openclaw gateway","since":"2026-12-04T17:20:03Z"}"#
        );
        assert_eq!(parse_holder(format!("{line}\n").as_bytes()), Some(h));
        // macOS writes no boot or start.
        let bare = r#"{"pid":7,"host":"mac","boot":null,"start":null,"program":"p","since":"s"}"#;
        assert_eq!(parse_holder(bare.as_bytes()).unwrap().start, None);
        for junk in [
            "",
            "pid 1234",
            "{\"pid\":1",
            r#"{"pid":0,"host":"h","program":"p","since":"s"}"#,
        ] {
            assert_eq!(parse_holder(junk.as_bytes()), None, "{junk}");
        }
    }

    #[test]
    fn a_live_holder_started_when_it_says_holds_the_lock() {
        let h = holder(1234, Some(99));
        assert_eq!(
            verdict(&h, Probe::Running(Some(99))),
            Verdict::Held(h.clone())
        );
        // Without /proc (macOS) the pid's liveness is all there is.
        assert_eq!(verdict(&h, Probe::Running(None)), Verdict::Held(h));
    }

    #[test]
    fn a_gone_holder_a_reused_pid_or_another_boot_is_stale() {
        let h = holder(1234, Some(99));
        assert!(matches!(verdict(&h, Probe::Gone), Verdict::Stale(_)));
        assert_eq!(
            verdict(&h, Probe::Running(Some(100))),
            Verdict::Stale("its pid was reused by a process started later")
        );
        let rebooted = Holder {
            boot: Some("b0".into()),
            ..h
        };
        assert_eq!(
            verdict(&rebooted, Probe::Running(Some(99))),
            Verdict::Stale("it was taken before the machine restarted")
        );
    }

    #[test]
    fn another_host_holds_it_whatever_runs_here() {
        let h = Holder {
            host: "other".into(),
            ..holder(1234, Some(99))
        };
        assert_eq!(verdict(&h, Probe::Gone), Verdict::HeldElsewhere(h));
    }

    #[test]
    fn our_own_pid_is_ours_only_while_this_process_holds_it() {
        let me = holder(ME, Some(5));
        let record = holder(ME, Some(5));
        let never = |_| panic!("our own pid needs no probe");
        let held = judge(Some(&record), Duration::ZERO, &me, true, never);
        assert_eq!(held, Verdict::Mine(record.clone()));
        // An earlier process with our pid (a restarted container).
        let earlier = judge(Some(&record), Duration::ZERO, &me, false, never);
        assert!(matches!(earlier, Verdict::Stale(_)), "{earlier:?}");
    }

    #[test]
    fn an_unnamed_lock_is_being_written_until_it_is_old() {
        let me = holder(ME, Some(5));
        let probe = |_| Probe::Gone;
        assert_eq!(
            judge(None, Duration::from_secs(1), &me, false, probe),
            Verdict::Opening
        );
        assert!(matches!(
            judge(None, UNNAMED_GRACE, &me, false, probe),
            Verdict::Stale(_)
        ));
    }

    #[test]
    fn refusals_name_the_holder() {
        let ws = Path::new("/w");
        let h = holder(1234, Some(99));
        assert_eq!(
            refusal(ws, &Verdict::Held(h.clone())),
            "the memory of /w is in use by openclaw gateway (pid 1234 on host box, since 2026-12-04T17:20:03Z); wait for it to finish, then retry"
        );
        let elsewhere = refusal(ws, &Verdict::HeldElsewhere(h.clone()));
        assert!(
            elsewhere.contains("on another host") && elsewhere.contains(".memory/workspace.lock")
        );
        assert!(refusal(ws, &Verdict::Mine(h)).contains("already open in this process"));
    }

    #[test]
    fn of_many_racing_for_one_stale_lock_exactly_one_wins() {
        for _ in 0..10 {
            let ws = tempfile::tempdir().unwrap();
            let dir = ws.path().join(".memory");
            std::fs::create_dir_all(&dir).unwrap();
            let gone = Holder {
                pid: 999_999_999,
                ..me()
            };
            std::fs::write(dir.join(LOCK_FILE), serde_json::to_string(&gone).unwrap()).unwrap();
            // Threads of one process race like processes: the file system
            // decides; only the loser's refusal differs (this process holds it).
            let barrier = std::sync::Barrier::new(8);
            let won = std::thread::scope(|s| {
                let racers: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            WorkspaceLock::acquire(ws.path()).ok()
                        })
                    })
                    .collect();
                racers
                    .into_iter()
                    .filter_map(|r| r.join().unwrap())
                    .collect::<Vec<_>>()
            });
            assert_eq!(won.len(), 1);
            drop(won);
            assert!(!dir.join(LOCK_FILE).exists(), "released");
            assert!(!dir.join(BREAK_FILE).exists());
        }
    }

    #[test]
    fn the_state_and_start_time_are_read_past_an_odd_command_name() {
        let line = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 50 18446744073709551615";
        assert_eq!(parse_stat(line), Some(('S', 987654)));
        assert_eq!(parse_stat("4242 (short) S 1 2"), None);
        if has_proc() {
            let own = std::fs::read_to_string("/proc/self/stat").unwrap();
            assert!(
                matches!(probe(std::process::id()), Probe::Running(Some(s)) if Some(s) == parse_stat(&own).map(|p| p.1))
            );
        }
    }
}
