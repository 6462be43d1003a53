//! Read-only and busy workspaces through the command line: every read works
//! on a read-only workspace (the index read as it is, with a note) and every
//! write there is refused with `workspace-read-only`, changing no byte; a
//! write waits for a busy workspace up to `limits.lockWaitMs`, then fails
//! as busy, and a flush or ingest refused that way is spooled and replayed
//! by the next write; failed calls land in the health record `status` shows;
//! a full disk names its cause, and reads still work on it. The workspace
//! lock is one protocol with the JavaScript host's (docs/ARCHITECTURE.md):
//! each host refuses a workspace the other holds, naming the holder, and a
//! holder killed, or a pid reused, leaves a lock the next process takes over.

use memory_harness::host::WorkspaceLock;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn harness(ws: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memory-harness"));
    command
        .env("TZ", "UTC")
        .env("XDG_CONFIG_HOME", "/nonexistent/memory-core-tests")
        .arg("--workspace")
        .arg(ws)
        .args(["--embedder", "none", "--now", "2026-12-02"]);
    command
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn seed(ws: &Path) {
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- Dana owns the billing service.\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("memory/2026-12-01.md"),
        "- The gateway stays on loopback.\n",
    )
    .unwrap();
}

/// Every file under `dir` with its bytes, `.memory/` included.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            match std::fs::read(&path) {
                Ok(bytes) => out.push((path, bytes)),
                Err(_) => walk(&path, out),
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// A small tmpfs mounted for one test (the tests run as root, as CI does).
struct Disk(tempfile::TempDir);

impl Disk {
    fn mount() -> Disk {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "mounting a tmpfs needs root (CI runs as root)");
        Disk(dir)
    }
    fn remount(&self, mode: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(self.0.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_read_only_workspace_is_read_with_a_note_and_refuses_writes_changing_nothing() {
    let disk = Disk::mount();
    let ws = disk.0.path().join("ws");
    seed(&ws);
    // No index yet: a clear error, not a crash.
    disk.remount("ro");
    let out = run(harness(&ws).args(["search", "loopback"]));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("has no index yet"),
        "{}",
        stderr(&out)
    );
    disk.remount("rw");
    assert!(run(harness(&ws).arg("index")).status.success());
    // A file changed after the last index: the index is stale.
    std::fs::write(ws.join("memory/2026-12-02.md"), "- The pelican is new.\n").unwrap();
    disk.remount("ro");
    let before = snapshot(&ws);

    for args in [
        vec!["bootstrap"],
        vec!["search", "loopback"],
        vec!["get", "MEMORY.md"],
        vec!["status"],
    ] {
        let out = run(harness(&ws).args(&args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("note: the workspace cannot be written")
                && stderr(&out).contains("may be stale"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = run(harness(&ws).args(["--json", "search", "loopback"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["hits"][0]["path"], "memory/2026-12-01.md", "{found}");
    assert!(
        found["notes"][0].as_str().unwrap().contains("read-only"),
        "{found}"
    );
    let status: Value =
        serde_json::from_slice(&run(harness(&ws).args(["--json", "status"])).stdout).unwrap();
    assert_eq!(
        status["files_stale"], 1,
        "the stale index is used as is: {status}"
    );
    let report = disk.0.path().join("..").join("ro-report.html");
    let out = run(harness(&ws).arg("report").arg("--out").arg(&report));
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = std::fs::remove_file(&report);

    let transcript =
        std::env::temp_dir().join(format!("ro-transcript-{}.jsonl", std::process::id()));
    std::fs::write(
        &transcript,
        "{\"role\":\"user\",\"text\":\"heron: remember the port 8443\",\"owner\":true}\n",
    )
    .unwrap();
    for args in [
        vec!["note", "--source", "owner", "a line"],
        vec![
            "ingest",
            "--session",
            "s1",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        vec![
            "flush",
            "--session",
            "s1",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        vec!["index"],
        vec!["dream"],
    ] {
        let out = run(harness(&ws).args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&out).contains("workspace-read-only: "),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let _ = std::fs::remove_file(&transcript);
    assert!(snapshot(&ws) == before, "not one byte changed");
}

fn config(dir: &Path, lock_wait_ms: u64) -> PathBuf {
    let path = dir.join(format!("harness-{lock_wait_ms}.toml"));
    std::fs::write(&path, format!("[limits]\nlockWaitMs = {lock_wait_ms}\n")).unwrap();
    path
}

/// The stderr of a note refused as busy (exit 75) after `wait_ms`.
fn note_refused_as_busy(ws: &Path, conf: &Path, wait_ms: u64) -> String {
    let out = run(harness(ws)
        .arg("--config")
        .arg(config(conf, wait_ms))
        .args(["note", "--source", "owner", "never written"]));
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn a_write_waits_for_a_busy_workspace_and_fails_as_busy_after_the_deadline() {
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    let conf = tempfile::tempdir().unwrap();

    // Released within the wait: the write waits and succeeds.
    let held = WorkspaceLock::acquire(ws.path()).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(700));
        drop(held);
    });
    let started = std::time::Instant::now();
    let out = run(harness(ws.path())
        .arg("--config")
        .arg(config(conf.path(), 20_000))
        .args(["note", "--source", "owner", "written after the wait"]));
    release.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= std::time::Duration::from_millis(600));
    let daily = std::fs::read_to_string(ws.path().join("memory/2026-12-02.md")).unwrap();
    assert!(daily.contains("written after the wait"), "{daily}");

    // Held past the wait: a distinct busy error (exit 75), nothing written.
    let held = WorkspaceLock::acquire(ws.path()).unwrap();
    let refusal = note_refused_as_busy(ws.path(), conf.path(), 300);
    assert!(
        refusal.contains(&format!(
            "busy: the memory of {} is in use by ",
            ws.path().display()
        )) && refusal.contains(&format!("(pid {} on host ", std::process::id())),
        "{refusal}"
    );
    assert!(refusal.contains("waited 300 ms"), "{refusal}");

    // A read does not wait for the lock's holder to finish writing forever:
    // it waits up to the deadline, then fails busy.
    let out = run(harness(ws.path())
        .arg("--config")
        .arg(config(conf.path(), 300))
        .args(["search", "loopback"]));
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    drop(held);
    let daily = std::fs::read_to_string(ws.path().join("memory/2026-12-02.md")).unwrap();
    assert!(!daily.contains("never written"), "{daily}");

    // The busy refusal is in the health record status shows.
    let status: Value =
        serde_json::from_slice(&run(harness(ws.path()).args(["--json", "status"])).stdout).unwrap();
    assert_eq!(
        status["host_health"]["last_error"]["kind"], "busy",
        "{status}"
    );
    assert_eq!(
        status["host_health"]["last_error"]["command"], "search",
        "{status}"
    );
}

#[test]
fn an_ingest_refused_as_busy_is_spooled_and_replayed_by_the_next_write() {
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    let conf = tempfile::tempdir().unwrap();
    let transcript = conf.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        "{\"role\":\"user\",\"text\":\"heron: the staging port is 8443\",\"owner\":true}\n",
    )
    .unwrap();
    let held = WorkspaceLock::acquire(ws.path()).unwrap();
    let out = run(harness(ws.path())
        .arg("--config")
        .arg(config(conf.path(), 200))
        .args(["ingest", "--session", "spooled-1", "--transcript"])
        .arg(&transcript));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("spooled: busy"), "{}", stderr(&out));
    let spool: Vec<_> = std::fs::read_dir(ws.path().join(".memory/spool"))
        .unwrap()
        .collect();
    assert_eq!(spool.len(), 1, "one spooled call");
    drop(held);

    // The next write replays it first, and says so.
    let out = run(harness(ws.path()).args(["note", "--source", "owner", "a later note"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("replayed the spooled an ingest of session spooled-1"),
        "{}",
        stderr(&out)
    );
    let ingested =
        std::fs::read_to_string(ws.path().join("memory/2026-12-02-session-spooled-1.md")).unwrap();
    assert!(ingested.contains("the staging port is 8443"), "{ingested}");
    assert_eq!(
        std::fs::read_dir(ws.path().join(".memory/spool"))
            .unwrap()
            .count(),
        0,
        "the spool is empty once replayed"
    );
}

#[test]
fn a_full_disk_names_its_cause_and_reads_still_work() {
    let disk = Disk::mount();
    let ws = disk.0.path().join("ws");
    seed(&ws);
    assert!(run(harness(&ws).arg("index")).status.success());
    // Fill the disk to the last byte.
    let mut filler = std::fs::File::create(disk.0.path().join("filler")).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    drop(filler);
    let before = snapshot(&ws);
    for args in [vec!["status"], vec!["search", "loopback"]] {
        let out = run(harness(&ws).args(&args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    // Under the 4,000 characters a note may hold (200 repeats were over it,
    // refused as too-large before the disk was reached).
    let long = "a note that does not fit ".repeat(120);
    let out = run(harness(&ws).args(["note", "--source", "owner", &long]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The write's own failure names the cause (not only the lock's note).
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l.starts_with("memory-harness:") && l.contains("no space left on the device")),
        "{}",
        stderr(&out)
    );
    let daily = ws.join("memory/2026-12-02.md");
    assert!(
        !daily.exists()
            || !std::fs::read_to_string(&daily)
                .unwrap()
                .contains("does not fit")
    );
    let after = snapshot(&ws);
    let markdown = |s: &[(PathBuf, Vec<u8>)]| -> Vec<(PathBuf, Vec<u8>)> {
        s.iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "md"))
            .cloned()
            .collect()
    };
    assert!(
        markdown(&after) == markdown(&before),
        "no Markdown file changed"
    );
}

/// A sweep that runs out of space: `MEMORY.md` (about 160 KB) has no room
/// for its replacement on a disk left with about 64 KiB, so the sweep
/// fails naming the cause, and records it where the owner looks (the note
/// and the ledger need little room): `DREAMS.md` says it failed and why,
/// `status` shows it, and once there is room the next sweep promotes.
#[test]
fn a_sweep_out_of_space_says_why_in_dreams_md_and_status() {
    let disk = Disk::mount();
    let ws = disk.0.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    let mut memory = String::from("# Memory\n\n");
    for i in 0..4_000 {
        memory.push_str(&format!("- Curated fact {i}: kept in the archive.\n"));
    }
    std::fs::write(ws.join("MEMORY.md"), &memory).unwrap();
    std::fs::write(
        ws.join("memory/2026-11-20.md"),
        "# 2026-11-20\n\n- The kestrel project ships from the harbour office every Tuesday.\n",
    )
    .unwrap();
    let conf = tempfile::tempdir().unwrap();
    let config = conf.path().join("roomy.toml");
    std::fs::write(&config, "[memory.bootstrap]\nmaxFileChars = 4000000\n").unwrap();
    let at = |now: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memory-harness"));
        command
            .env("TZ", "UTC")
            .env("XDG_CONFIG_HOME", "/nonexistent/memory-core-tests")
            .arg("--workspace")
            .arg(&ws)
            .arg("--config")
            .arg(&config)
            .args(["--embedder", "none", "--now", now]);
        command
    };
    for (now, query) in [
        ("2026-11-30T10:00:00Z", "kestrel project"),
        ("2026-11-30T11:00:00Z", "harbour office ships"),
        ("2026-12-01T10:00:00Z", "kestrel project"),
    ] {
        let out = run(at(now).args(["search", query]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Leave about 64 KiB free.
    let mut filler = std::fs::File::create(disk.0.path().join("filler")).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    drop(filler);
    let filled = std::fs::metadata(disk.0.path().join("filler"))
        .unwrap()
        .len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(disk.0.path().join("filler"))
        .unwrap()
        .set_len(filled.saturating_sub(64 * 1024))
        .unwrap();
    let out = run(at("2026-12-02T03:00:00Z").arg("dream"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The write's own failure names the cause (not only the lock's note).
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l.starts_with("memory-harness:") && l.contains("no space left on the device")),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("MEMORY.md")).unwrap(),
        memory
    );
    let dreams = std::fs::read_to_string(ws.join("DREAMS.md")).unwrap();
    assert!(
        dreams.contains("- Failed:") && dreams.contains("no space left on the device"),
        "{dreams}"
    );
    assert!(dreams.contains("MEMORY.md was not changed."), "{dreams}");
    let status = run(at("2026-12-02T03:05:00Z").arg("status"));
    let shown = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        shown.contains("dreaming   the sweep of 2026-12-02 failed"),
        "{shown}"
    );
    // Room again: the next sweep promotes, and the problem is over.
    std::fs::remove_file(disk.0.path().join("filler")).unwrap();
    let out = run(at("2026-12-02T04:00:00Z").arg("dream"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(ws.join("MEMORY.md"))
        .unwrap()
        .contains("Source: memory/2026-11-20.md#L3-L3"));
    let status = run(at("2026-12-02T04:05:00Z").arg("status"));
    let shown = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(!shown.contains("dreaming   the sweep"), "{shown}");
    // The host's own record keeps the last error.
    assert!(shown.contains("no space left"), "{shown}");
}

/// The Node binary the JavaScript host runs on (scripts/node.sh).
fn node() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(repo.join("scripts/node.sh"))
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/node.sh: {}", stderr(&out));
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A Node process that takes the lock with the JavaScript host's lib/lock.js
/// (waiting `wait_ms`), prints `won` or `busy: …` and holds what it won
/// until its stdin closes.
fn node_contender(ws: &Path, program: &str, wait_ms: u64) -> (std::process::Child, String) {
    use std::io::BufRead;
    let lock_js = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hosts/openclaw/lib/lock.js");
    let script = format!(
        r#"import {{ acquireWorkspaceLockWaiting }} from {lock};
        try {{
          await acquireWorkspaceLockWaiting({ws}, {wait_ms}, {{ program: {program} }});
          console.log("won");
        }} catch (error) {{
          console.log("busy: " + error.message);
        }}
        process.stdin.resume();
        process.stdin.on("end", () => process.exit(0));"#,
        lock = serde_json::json!(lock_js.canonicalize().unwrap()),
        ws = serde_json::json!(ws),
        program = serde_json::json!(program),
    );
    let mut child = Command::new(node())
        .args(["--input-type=module", "-e", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    (child, said.trim().to_string())
}

/// The start time of a live process (`/proc/<pid>/stat` field 22).
fn start_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap()
}

/// A lock line as a holder on this machine writes it.
fn lock_line(pid: u32, start: u64, program: &str) -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap().trim().to_string();
    serde_json::json!({
        "pid": pid,
        "host": read("/proc/sys/kernel/hostname"),
        "boot": read("/proc/sys/kernel/random/boot_id"),
        "start": start,
        "program": program,
        "since": "2026-12-04T17:20:03Z",
    })
    .to_string()
        + "\n"
}

#[test]
fn each_host_refuses_a_workspace_the_other_holds_naming_it_and_a_killed_holder_is_no_obstacle() {
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    let conf = tempfile::tempdir().unwrap();

    // The JavaScript host holds it: the harness waits, then refuses by name.
    let (mut gateway, said) = node_contender(ws.path(), "openclaw gateway", 0);
    assert_eq!(said, "won");
    let refusal = note_refused_as_busy(ws.path(), conf.path(), 200);
    assert!(
        refusal.contains(&format!(
            "is in use by openclaw gateway (pid {} on host ",
            gateway.id()
        )) && refusal.contains("; wait for it to finish, then retry (waited 200 ms"),
        "{refusal}"
    );
    // Killed while holding it (and reaped): the next process takes it over.
    gateway.kill().unwrap();
    gateway.wait().unwrap();
    let out = run(harness(ws.path()).args(["note", "--source", "owner", "after the crash"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !ws.path().join(".memory/workspace.lock").exists(),
        "released"
    );

    // The harness holds it: the JavaScript host refuses in the same words.
    let held = WorkspaceLock::acquire(ws.path()).unwrap();
    let (mut refused, said) = node_contender(ws.path(), "openclaw memory search", 100);
    drop(refused.stdin.take());
    refused.wait().unwrap();
    assert!(
        said.starts_with(&format!(
            "busy: the memory of {} is in use by ",
            ws.path().display()
        )) && said.contains(&format!("(pid {} on host ", std::process::id()))
            && said.ends_with("; wait for it to finish, then retry (waited 100 ms, lockWaitMs)"),
        "{said}"
    );
    drop(held);
}

#[test]
fn a_lock_naming_a_live_pid_is_held_only_if_that_process_started_when_it_says() {
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    let conf = tempfile::tempdir().unwrap();
    let lock = ws.path().join(".memory/workspace.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let parent = std::os::unix::process::parent_id();
    // `status` without waiting: it runs, or it is refused as busy naming `holder`.
    let status = || {
        run(harness(ws.path())
            .arg("--config")
            .arg(config(conf.path(), 0))
            .arg("status"))
    };
    let refused_by = |holder: &str| {
        let out = status();
        assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
        assert!(stderr(&out).contains(holder), "{}", stderr(&out));
    };
    let runs = || {
        let out = status();
        assert!(out.status.success(), "{}", stderr(&out));
    };

    // Our parent, as it started: held.
    let line = lock_line(parent, start_of(parent), "memory-harness index");
    std::fs::write(&lock, &line).unwrap();
    refused_by(&format!(
        "in use by memory-harness index (pid {parent} on host "
    ));

    // The same pid, started at another time: a reused pid, stale.
    let reused = lock_line(parent, start_of(parent) + 1, "memory-harness index");
    std::fs::write(&lock, reused).unwrap();
    runs();
    assert!(!lock.exists(), "taken over, then released");

    // Written before the machine restarted: stale whatever runs now.
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    std::fs::write(
        &lock,
        line.replace(boot.trim(), "00000000-0000-0000-0000-000000000000"),
    )
    .unwrap();
    runs();

    // An older harness (harness.lock naming a live process) is honoured;
    // once it names none, the file is removed.
    let legacy = ws.path().join(".memory/harness.lock");
    std::fs::write(&legacy, format!("pid {parent}")).unwrap();
    refused_by(&format!(
        "in use by an older memory-harness (pid {parent}, .memory/harness.lock)"
    ));
    std::fs::write(&legacy, "").unwrap();
    runs();
    assert!(!legacy.exists());
}
