//! Fault injection, for real: the harness is a child process killed with
//! SIGKILL at spread-out moments of an index sync and of a dreaming sweep
//! that rewrites `MEMORY.md`. Afterwards `MEMORY.md` is the old file or the
//! new one (never partial), the Markdown files are untouched, the index
//! recovers, and finishing the interrupted work gives the same result as an
//! uninterrupted run.
//!
//! `FAULT_TRIALS` sets the kills per scenario (default 12); the long run in
//! docs/RELIABILITY.md uses more.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn harness() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_memory-harness"))
}

fn component_ready() -> bool {
    let component = std::env::var_os("MEMORY_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(memory_harness::config::default_component_path);
    component.is_file()
}

fn trials() -> usize {
    std::env::var("FAULT_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

/// The harness over `workspace` at a fixed clock, lexical recall only. A
/// `harness.toml` beside the workspace, when there is one, is its
/// configuration.
fn harness_command(workspace: &Path, now: &str, args: &[&str]) -> Command {
    let mut command = Command::new(harness());
    command
        .env("TZ", "UTC")
        .env("XDG_CONFIG_HOME", "/nonexistent/memory-core-tests")
        .args(["--workspace", workspace.to_str().unwrap()])
        .args(["--now", now, "--embedder", "none"]);
    let config = workspace.with_file_name(format!(
        "{}.toml",
        workspace.file_name().unwrap().to_string_lossy()
    ));
    if config.is_file() {
        command.args(["--config", config.to_str().unwrap()]);
    }
    command.args(args);
    command
}

/// Runs the harness to completion; its exit status and output.
fn run_status(workspace: &Path, now: &str, args: &[&str]) -> (bool, String) {
    let out = harness_command(workspace, now, args)
        .output()
        .expect("the harness starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Runs the harness to completion; panics with its output if it fails.
fn run(workspace: &Path, now: &str, args: &[&str]) -> String {
    let out = harness_command(workspace, now, args)
        .output()
        .expect("the harness starts");
    assert!(
        out.status.success(),
        "memory-harness {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts the harness and kills it (SIGKILL) after `delay`; returns whether
/// it was still running when killed.
fn kill_after(workspace: &Path, now: &str, args: &[&str], delay: Duration) -> bool {
    let mut child = harness_command(workspace, now, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the harness starts");
    let started = Instant::now();
    while started.elapsed() < delay {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill(); // SIGKILL on Unix
    let _ = child.wait();
    true
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every Markdown file under `dir` (not `.memory/`), with its bytes.
fn markdown(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".memory") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A workspace of `notes` daily notes of 60 entries each.
fn daily_notes(dir: &Path, notes: usize) {
    std::fs::create_dir_all(dir.join("memory")).unwrap();
    for n in 0..notes {
        let day = 1 + n % 28;
        let month = 1 + (n / 28) % 12;
        let mut text = format!("# 2026-{month:02}-{day:02} note {n}\n\n");
        for i in 0..60 {
            text.push_str(&format!(
                "- Entry {i} of note {n} mentions the heron{i} and the lantern{n} near the quay.\n"
            ));
        }
        let name = format!("2026-{month:02}-{day:02}-n{n}.md");
        std::fs::write(dir.join("memory").join(name), text).unwrap();
    }
}

#[test]
fn killed_during_index_sync_the_index_recovers() {
    if !component_ready() {
        eprintln!("skipped: the component is not built");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    daily_notes(&ws, 150);
    let before = markdown(&ws);
    // How long an uninterrupted full index takes here.
    let probe = dir.path().join("probe");
    copy_tree(&ws, &probe);
    let started = Instant::now();
    run(&probe, "2026-12-02", &["index"]);
    let full = started.elapsed();
    let mut killed = 0;
    for trial in 0..trials() {
        let delay = full.mul_f64((trial as f64 + 0.5) / trials() as f64);
        if kill_after(&ws, "2026-12-02", &["index", "--force"], delay) {
            killed += 1;
        }
        assert_eq!(
            markdown(&ws),
            before,
            "a killed sync changed a Markdown file"
        );
        // The next run opens whatever the kill left and finishes the job.
        let status = run(&ws, "2026-12-02", &["--json", "status"]);
        assert!(status.contains("\"schema_version\""), "{status}");
        let found = run(
            &ws,
            "2026-12-02",
            &[
                "--json",
                "search",
                "heron7 lantern149",
                "--max-results",
                "3",
            ],
        );
        assert!(
            found.contains("n149.md#L"),
            "the last note is searchable after recovery: {found}"
        );
    }
    eprintln!(
        "index sync: {killed} of {} runs killed mid-way (full run {} ms)",
        trials(),
        full.as_millis()
    );
}

/// Copies a workspace and its configuration (`<name>.toml` beside it).
fn copy_workspace(from: &Path, to: &Path) {
    copy_tree(from, to);
    let config = |ws: &Path| {
        ws.with_file_name(format!(
            "{}.toml",
            ws.file_name().unwrap().to_string_lossy()
        ))
    };
    if config(from).is_file() {
        std::fs::copy(config(from), config(to)).unwrap();
    }
}

/// A workspace whose sweep rewrites a `MEMORY.md` of `entries` entries
/// (20,000 make about 1.2 MB, so the rewrite takes measurable time; its
/// budget raised to let it grow) and promotes ten of twelve recalled facts;
/// the second sweep promotes the other two.
fn sweep_workspace(ws: &Path, entries: usize) {
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(
        ws.with_file_name(format!(
            "{}.toml",
            ws.file_name().unwrap().to_string_lossy()
        )),
        "[memory.bootstrap]\nmaxFileChars = 4000000\n",
    )
    .unwrap();
    // A large curated file, so the rewrite itself takes measurable time.
    let mut memory = String::from("# Memory\n\n");
    for i in 0..entries {
        memory.push_str(&format!(
            "- Curated fact {i}: the owner keeps record {i} in the archive.\n"
        ));
    }
    std::fs::write(ws.join("MEMORY.md"), &memory).unwrap();
    let mut note = String::from("# 2026-11-20\n\n");
    for i in 0..12 {
        note.push_str(&format!(
            "- The kestrel{i} project ships from the harbour{i} office every Tuesday.\n"
        ));
    }
    std::fs::write(ws.join("memory/2026-11-20.md"), note).unwrap();
    // Recall each fact three times over two queries on two days.
    for i in 0..12 {
        run(
            ws,
            "2026-11-30T10:00:00Z",
            &["search", &format!("kestrel{i} project")],
        );
        run(
            ws,
            "2026-11-30T11:00:00Z",
            &["search", &format!("harbour{i} office ships")],
        );
        run(
            ws,
            "2026-12-01T10:00:00Z",
            &["search", &format!("kestrel{i} project")],
        );
    }
}

/// The sweep workspace at `ws`, and the uninterrupted result: `MEMORY.md`
/// before, a copy that ran the sweep, and how long the sweep took.
fn uninterrupted_sweep(ws: &Path, entries: usize) -> (Vec<u8>, PathBuf, Duration) {
    sweep_workspace(ws, entries);
    let old = std::fs::read(ws.join("MEMORY.md")).unwrap();
    let reference = ws.with_file_name("reference");
    copy_workspace(ws, &reference);
    let started = Instant::now();
    run(&reference, "2026-12-02T03:00:00Z", &["dream"]);
    (old, reference, started.elapsed())
}

#[test]
fn killed_during_a_sweep_memory_md_is_old_or_new() {
    if !component_ready() {
        eprintln!("skipped: the component is not built");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let (old, reference, full) = uninterrupted_sweep(&ws, 20_000);
    let new = std::fs::read(reference.join("MEMORY.md")).unwrap();
    assert!(
        new.len() > old.len() && new.starts_with(&old),
        "the sweep promotes by appending here"
    );
    // Twelve facts pass and ten are promoted per sweep: a second sweep takes
    // the other two.
    run(&reference, "2026-12-02T03:00:00Z", &["dream"]);
    let newer = std::fs::read(reference.join("MEMORY.md")).unwrap();
    assert!(
        newer.len() > new.len(),
        "the second sweep promotes the rest"
    );
    let (mut killed, mut saw_old, mut saw_new, mut mid_rewrite) = (0, 0, 0, 0);
    for trial in 0..trials() {
        let trial_ws = dir.path().join(format!("t{trial}"));
        copy_workspace(&ws, &trial_ws);
        // The rewrite comes early in the run (sync and the gate before it,
        // re-indexing the large MEMORY.md after it): kills are spread over
        // the first 40% of the run.
        let delay = full.mul_f64(0.4 * (trial as f64 + 0.5) / trials() as f64);
        if kill_after(&trial_ws, "2026-12-02T03:00:00Z", &["dream"], delay) {
            killed += 1;
        }
        let after = std::fs::read(trial_ws.join("MEMORY.md")).unwrap();
        // Finishing the interrupted sweep gives what an uninterrupted run
        // gives: one sweep's result if the kill came before the rename, two
        // sweeps' if it came after.
        let expected = if after == old {
            saw_old += 1;
            &new
        } else if after == new {
            saw_new += 1;
            &newer
        } else {
            panic!(
                "trial {trial}: MEMORY.md is neither the old nor the new file ({} bytes)",
                after.len()
            );
        };
        let leftovers = std::fs::read_dir(trial_ws.join(".memory"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".replace-")
            })
            .count();
        mid_rewrite += usize::from(leftovers > 0);
        run(&trial_ws, "2026-12-02T03:00:00Z", &["dream"]);
        let finished = std::fs::read(trial_ws.join("MEMORY.md")).unwrap();
        if finished != *expected {
            let keep = std::env::temp_dir().join(format!("fault-trial-{trial}"));
            let _ = std::fs::remove_dir_all(&keep);
            copy_tree(&trial_ws, &keep);
            copy_tree(&reference, &keep.join("reference"));
            panic!(
                "trial {trial}: the finished sweep differs from an uninterrupted one (kept in {})",
                keep.display()
            );
        }
        std::fs::remove_dir_all(&trial_ws).unwrap();
    }
    eprintln!(
        "dream: {killed} of {} runs killed; MEMORY.md old {saw_old}, new {saw_new}; {mid_rewrite} killed between the temporary file and the rename (full run {} ms)",
        trials(),
        full.as_millis()
    );
}

/// SIGKILL at dozens of points spread evenly over a whole sweep (sync, gate, the
/// ledger record, the rename, the re-index, `DREAMS.md`, the sweep log).
/// Whatever the kill interrupted, the next open (here a `status`) completes
/// or abandons the sweep: if `MEMORY.md` is the new file, its summary is in
/// `DREAMS.md` and rollback restores the old file exactly; if it is the old
/// file, nothing claims a promotion, rollback has nothing to undo, and the
/// next sweep gives the uninterrupted result.
#[test]
fn killed_anywhere_in_a_sweep_rollback_and_the_summary_hold() {
    if !component_ready() {
        eprintln!("skipped: the component is not built");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let (old, reference, full) = uninterrupted_sweep(&ws, 5_000);
    let new = std::fs::read(reference.join("MEMORY.md")).unwrap();
    // Dozens of points by default (FAULT_TRIALS above 24 sets more).
    let points = trials().max(24);
    let (mut killed, mut saw_old, mut saw_new, mut completed, mut abandoned) = (0, 0, 0, 0, 0);
    for trial in 0..points {
        let trial_ws = dir.path().join(format!("k{trial}"));
        copy_workspace(&ws, &trial_ws);
        let delay = full.mul_f64((trial as f64 + 0.5) / points as f64);
        if kill_after(&trial_ws, "2026-12-02T03:00:00Z", &["dream"], delay) {
            killed += 1;
        }
        let keep = |why: &str| -> ! {
            let kept = std::env::temp_dir().join(format!("fault-kill-{trial}"));
            let _ = std::fs::remove_dir_all(&kept);
            copy_workspace(&trial_ws, &kept);
            panic!(
                "kill {trial} of {points}: {why} (kept in {})",
                kept.display()
            );
        };
        // The next open finishes whatever the kill left.
        let (ok, status) = run_status(&trial_ws, "2026-12-02T03:30:00Z", &["status"]);
        if !ok {
            keep(&format!("status failed after the kill: {status}"));
        }
        let after = std::fs::read(trial_ws.join("MEMORY.md")).unwrap();
        let dreams = std::fs::read_to_string(trial_ws.join("DREAMS.md")).unwrap_or_default();
        completed += usize::from(dreams.contains("Interrupted after it changed MEMORY.md"));
        abandoned += usize::from(dreams.contains("Interrupted before it changed MEMORY.md"));
        if after == new {
            saw_new += 1;
            if !(dreams.contains("### Sweep") && dreams.contains("- Added:")) {
                keep("MEMORY.md is the new file but DREAMS.md has no summary of the sweep");
            }
            if !status.contains("dreaming") && dreams.contains("Interrupted") {
                keep(&format!(
                    "status does not report the interrupted sweep: {status}"
                ));
            }
            let (ok, out) = run_status(&trial_ws, "2026-12-02T04:00:00Z", &["dream", "--rollback"]);
            if !ok {
                keep(&format!(
                    "rollback failed for a MEMORY.md the sweep changed: {out}"
                ));
            }
            if std::fs::read(trial_ws.join("MEMORY.md")).unwrap() != old {
                keep("rollback did not restore the old MEMORY.md");
            }
        } else if after == old {
            saw_old += 1;
            if dreams.contains("- Added:") {
                keep("DREAMS.md claims a promotion MEMORY.md does not hold");
            }
            let (ok, out) = run_status(&trial_ws, "2026-12-02T04:00:00Z", &["dream", "--rollback"]);
            if ok || !out.contains("no sweep has changed MEMORY.md") {
                keep(&format!("rollback with nothing to undo: {out}"));
            }
            run(&trial_ws, "2026-12-02T03:00:00Z", &["dream"]);
            if std::fs::read(trial_ws.join("MEMORY.md")).unwrap() != new {
                keep("the sweep after the kill differs from an uninterrupted one");
            }
        } else {
            keep(&format!(
                "MEMORY.md is neither the old nor the new file ({} bytes)",
                after.len()
            ));
        }
        std::fs::remove_dir_all(&trial_ws).unwrap();
    }
    eprintln!(
        "dream, kills across the whole sweep: {killed} of {points} runs killed; MEMORY.md old {saw_old}, new {saw_new}; {completed} completed and {abandoned} abandoned by the next open (full run {} ms)",
        full.as_millis()
    );
}
