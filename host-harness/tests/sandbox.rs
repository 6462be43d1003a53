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

fn host(workspace: &Path, cache: Option<&Path>, limits: HostLimits) -> MemoryHost {
    MemoryHost::new(
        &component(),
        cache,
        workspace,
        settings(workspace),
        limits,
        Lender::new(&EmbedderChoice::None, Duration::from_secs(5)),
        ModelLender::new(&ModelChoice::None, Duration::from_secs(5)).unwrap(),
    )
    .expect("the host starts")
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
        },
    })
    .expect("search answers")
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
    let error = host
        .sync(&wit_store::SyncRequest {
            max_files: None,
            force: false,
        })
        .unwrap_err();
    match &error {
        CallError::Trap(message) => assert!(message.contains("deadline"), "{message}"),
        other => panic!("expected a trap, got {other}"),
    }
    assert!(
        !host.has_live_instance(),
        "the trapped instance is discarded"
    );
    host.set_limits(roomy());
    let report = host
        .sync(&wit_store::SyncRequest {
            max_files: None,
            force: false,
        })
        .expect("a fresh instance syncs");
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
    let error = host
        .sync(&wit_store::SyncRequest {
            max_files: None,
            force: false,
        })
        .unwrap_err();
    match &error {
        CallError::Trap(message) => assert!(message.contains("memory cap of 6 MiB"), "{message}"),
        other => panic!("expected a trap, got {other}"),
    }
    host.set_limits(roomy());
    host.sync(&wit_store::SyncRequest {
        max_files: None,
        force: false,
    })
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
        second.to_string().contains("another memory-harness"),
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
