//! The sandbox's promises, through the real wasmtime host and the compiled
//! component: deadlines and the memory cap stop a call with a clear error and
//! the next call gets a fresh instance over an intact index; a second harness
//! on the same workspace is refused; compiled components are cached.

use memory_harness::config::{default_component_path, resolve, ConfigFile, Overrides};
use memory_harness::embed::{EmbedderChoice, Lender};
use memory_harness::host::{
    wit, wit_recall, wit_store, CallError, HostLimits, MemoryHost, WorkspaceLock,
};
use memory_harness::model::{ModelChoice, ModelLender};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn component() -> PathBuf {
    let path = std::env::var_os("MEMORY_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(default_component_path);
    assert!(
        path.is_file(),
        "the component {} is missing; build it first: cargo build -p memory-core --target wasm32-wasip2 --release",
        path.display()
    );
    path
}

fn settings(workspace: &Path) -> wit_store::Settings {
    let overrides = Overrides {
        workspace: Some(workspace.into()),
        embedder: Some("none".into()),
        ..Overrides::default()
    };
    resolve(&ConfigFile::default(), &overrides)
        .expect("default settings")
        .settings
}

/// A sync of everything, as `index` asks for it.
fn full_sync() -> wit_store::SyncRequest {
    wit_store::SyncRequest {
        max_files: None,
        max_embeddings: None,
        force: false,
        acknowledge_rebuild: true,
    }
}

fn host(workspace: &Path, cache: Option<&Path>, limits: HostLimits) -> MemoryHost {
    host_lending(workspace, cache, limits, EmbedderChoice::None)
}

fn host_lending(
    workspace: &Path,
    cache: Option<&Path>,
    limits: HostLimits,
    embedder: EmbedderChoice,
) -> MemoryHost {
    MemoryHost::new(
        &component(),
        cache,
        workspace,
        settings(workspace),
        limits,
        Lender::new(&embedder, Duration::from_secs(5)),
        ModelLender::new(&ModelChoice::None, Duration::from_secs(5)).unwrap(),
    )
    .expect("the host starts")
}

/// A workspace of one daily note of `entries` list items.
fn note_of(entries: usize, line: impl Fn(usize) -> String) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("memory")).unwrap();
    let note: String = (0..entries).map(|i| format!("- {}\n", line(i))).collect();
    std::fs::write(ws.path().join("memory/2026-12-01.md"), note).unwrap();
    ws
}

fn roomy() -> HostLimits {
    HostLimits {
        call_timeout: Duration::from_secs(60),
        memory_bytes: 1 << 30,
    }
}

/// A workspace whose daily note is big enough that indexing it takes far
/// longer than one epoch tick.
fn big_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("memory")).unwrap();
    let mut note = String::new();
    for i in 0..60_000 {
        note.push_str(&format!(
            "- observation {i}: the quick brown fox number {i} jumps over the lazy dog\n"
        ));
    }
    note.push_str("- the pelican password is in the blue notebook\n");
    std::fs::write(dir.path().join("memory/2026-12-01.md"), note).unwrap();
    dir
}

fn search(host: &mut MemoryHost, query: &str) -> wit_recall::SearchResult {
    host.search(&wit_recall::SearchRequest {
        query: query.into(),
        max_results: Some(3),
        min_score: None,
        context: wit::TurnContext {
            now_ms: 1_796_169_600_000,
            session_id: None,
            session_kind: Some(wit::SessionKind::Interactive),
            channel: None,
            sender: None,
            sender_is_owner: true,
            active_projects: Vec::new(),
            utc_offset_minutes: 0,
            taint: None,
        },
    })
    .expect("search answers")
}

#[test]
fn time_spent_waiting_on_the_embedder_does_not_count_against_the_deadline() {
    let ws = note_of(400, |i| {
        format!("harbour crane {i} was serviced by team {}", i % 7)
    });
    let limits = HostLimits {
        call_timeout: Duration::from_millis(400),
        memory_bytes: 1 << 30,
    };
    let mut host = host_lending(ws.path(), None, limits, EmbedderChoice::Slow);
    let started = std::time::Instant::now();
    // Seven batches of 64 texts at 150 ms each: over a second of waiting on
    // the embedder, in a call whose own deadline is 400 ms.
    let report = host
        .sync(&full_sync())
        .expect("the embedder's time is not the call's");
    assert!(started.elapsed() > Duration::from_millis(1_000));
    assert_eq!(report.embeddings_computed, 400);
    assert_eq!(report.vectors_pending, 0);
}

#[test]
fn a_sync_embeds_no_more_than_its_budget_and_says_what_is_left() {
    let ws = note_of(300, |i| {
        format!("pelican {i} nests by the pier with {}", i % 11)
    });
    let mut host = host_lending(ws.path(), None, roomy(), EmbedderChoice::Test);
    let mut sync = |budget| {
        host.sync(&wit_store::SyncRequest {
            max_files: None,
            max_embeddings: Some(budget),
            force: false,
            acknowledge_rebuild: false,
        })
        .expect("sync")
    };
    let first = sync(100);
    assert_eq!((first.files_indexed, first.embeddings_computed), (1, 100));
    assert_eq!(
        first.vectors_pending, 200,
        "indexed at once, vectors to follow"
    );
    let second = sync(150);
    assert_eq!(
        (second.embeddings_computed, second.vectors_pending),
        (150, 50)
    );
    let third = sync(1_000);
    assert_eq!((third.embeddings_computed, third.vectors_pending), (50, 0));
    // Nothing left: a further sync embeds nothing.
    assert_eq!(sync(1_000).embeddings_computed, 0);
}

#[test]
fn a_deadline_stops_the_call_and_the_next_call_gets_a_fresh_instance() {
    let ws = big_workspace();
    let mut host = host(
        ws.path(),
        None,
        HostLimits {
            call_timeout: Duration::from_millis(10),
            memory_bytes: 1 << 30,
        },
    );
    host.record_health("sync");
    let error = host.sync(&full_sync()).unwrap_err();
    match &error {
        CallError::Trap(message) => assert!(message.contains("deadline"), "{message}"),
        other => panic!("expected a trap, got {other}"),
    }
    // The stop is counted in the workspace, for `status` to show.
    let health = memory_harness::health::load(ws.path()).expect("a health record");
    assert_eq!((health.traps, health.deadline_stops), (1, 1), "{health:?}");
    let last = health.last_error.expect("the last error");
    assert_eq!(
        (last.command.as_str(), last.kind.as_str()),
        ("sync", "deadline")
    );
    assert!(
        !host.has_live_instance(),
        "the trapped instance is discarded"
    );
    host.set_limits(roomy());
    let report = host.sync(&full_sync()).expect("a fresh instance syncs");
    assert_eq!(report.files_seen, 1);
    let hits = search(&mut host, "pelican password").hits;
    assert_eq!(
        hits[0].lines.start, 60_001,
        "the index is whole after the interrupted call"
    );
}

#[test]
fn the_memory_cap_stops_the_call_with_a_clear_error() {
    let ws = big_workspace();
    let mut host = host(
        ws.path(),
        None,
        HostLimits {
            call_timeout: Duration::from_secs(60),
            memory_bytes: 6 << 20,
        },
    );
    let error = host.sync(&full_sync()).unwrap_err();
    match &error {
        CallError::Trap(message) => assert!(message.contains("memory cap of 6 MiB"), "{message}"),
        other => panic!("expected a trap, got {other}"),
    }
    host.set_limits(roomy());
    host.sync(&full_sync())
        .expect("a fresh instance with room syncs");
    assert!(!search(&mut host, "pelican").hits.is_empty());
}

#[test]
fn a_second_harness_on_the_same_workspace_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    let first = WorkspaceLock::acquire(ws.path()).expect("the first lock");
    let second = WorkspaceLock::acquire(ws.path())
        .err()
        .expect("the second is refused");
    assert!(
        second.to_string().contains("already open in this process"),
        "{second}"
    );
    drop(first);
    WorkspaceLock::acquire(ws.path()).expect("free again once the first is gone");
}

#[test]
fn compiled_components_are_cached() {
    let ws = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut first = host(ws.path(), Some(cache.path()), roomy());
    first.status().expect("status");
    let cached: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "one compiled component: {cached:?}");
    assert_eq!(
        cached[0].extension().and_then(|e| e.to_str()),
        Some("cwasm")
    );
    let mut second = host(ws.path(), Some(cache.path()), roomy());
    second.status().expect("the cached component works");
}

/// A small tmpfs mounted for one test (the tests run as root, as CI does),
/// unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "mounting a tmpfs needs root (CI runs as root)"
        );
        SmallDisk { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, mode: &str) {
        let status = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

fn note(
    host: &mut MemoryHost,
    text: &str,
) -> Result<memory_harness::host::wit_write::WriteReport, CallError> {
    host.note(&memory_harness::host::wit_write::NoteRequest {
        text: text.into(),
        origin: memory_harness::host::wit_write::ContentOrigin::SenderMessage,
        importance: None,
        triggers: Vec::new(),
        supersedes_key: None,
        context: wit::TurnContext {
            now_ms: 1_796_169_600_000,
            session_id: Some("s".into()),
            session_kind: Some(wit::SessionKind::Interactive),
            channel: None,
            sender: None,
            sender_is_owner: true,
            active_projects: Vec::new(),
            utc_offset_minutes: 0,
            taint: None,
        },
    })
}

#[test]
fn a_full_disk_or_read_only_workspace_is_a_clear_error_and_loses_nothing() {
    let disk = SmallDisk::mount("2m");
    let ws = disk.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    let daily = ws.join("memory/2026-12-02.md");
    std::fs::write(&daily, "- the first line\n").unwrap();
    let mut host = host(&ws, None, roomy());
    note(&mut host, "a second line").expect("a note fits");
    let before = std::fs::read(&daily).unwrap();

    // Fill the disk to the last byte.
    let filler = disk.path().join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut file, &block).is_ok() {}
    drop(file);
    let error = note(&mut host, &"a long note that does not fit ".repeat(100)).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, CallError::Memory(_)),
        "a documented error, not a trap: {message}"
    );
    assert!(
        message.contains("full") || message.contains("space"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&daily).unwrap(),
        before,
        "the daily note is as it was"
    );

    std::fs::remove_file(&filler).unwrap();
    host.reset();
    note(&mut host, "a third line").expect("with room again, notes are written");
    let before = std::fs::read(&daily).unwrap();

    // A read-only workspace (the host's files must be closed to remount).
    drop(host);
    disk.remount("ro");
    let mut host = self::host(&ws, None, roomy());
    let error = note(&mut host, "a fourth line").unwrap_err();
    assert!(matches!(error, CallError::Memory(_)), "{error}");
    assert!(error.to_string().contains("read"), "{error}");
    assert_eq!(
        std::fs::read(&daily).unwrap(),
        before,
        "nothing written to a read-only workspace"
    );
    drop(host);
    disk.remount("rw");
    let mut host = self::host(&ws, None, roomy());
    note(&mut host, "a fourth line").expect("writable again");
    let text = std::fs::read_to_string(&daily).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
}
