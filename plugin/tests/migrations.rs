//! Every ledger, recall store and index schema the project shipped opens in
//! this build: the ledger and the recall store migrated step by step with
//! their rows, the index rebuilt from the files with its embedding cache.
//! `tests/shipped/` holds each schema as it was released (from git history;
//! the commit is in the file name).

use memory_core::storage::index::Index;
use memory_core::storage::ledger::{Ledger, SIGNALS_FILE_NAME};
use memory_core::storage::sqlite::migrate::recorded_version;
use memory_core::storage::sqlite::{Connection, Value};
use memory_core::FtsTokenizer;
use std::collections::BTreeSet;
use std::path::Path;

const SHIPPED_LEDGERS: &[(&str, &str)] = &[
    ("be67ac8", include_str!("shipped/ledger-01-be67ac8.sql")),
    ("8304b3d", include_str!("shipped/ledger-02-8304b3d.sql")),
    ("c7216c3", include_str!("shipped/ledger-03-c7216c3.sql")),
    ("914d390", include_str!("shipped/ledger-04-914d390.sql")),
    ("ebfd0aa", include_str!("shipped/ledger-05-ebfd0aa.sql")),
    ("acf65dd", include_str!("shipped/ledger-06-acf65dd.sql")),
    ("99da46d", include_str!("shipped/ledger-07-99da46d.sql")),
    ("45aaa8a", include_str!("shipped/ledger-08-45aaa8a.sql")),
    ("f6f5578", include_str!("shipped/ledger-09-f6f5578.sql")),
    ("5ac3675", include_str!("shipped/ledger-10-5ac3675.sql")),
    ("295d8ec", include_str!("shipped/ledger-11-295d8ec.sql")),
];

const SHIPPED_RECALL_STORES: &[(&str, &str)] = &[
    ("acf65dd", include_str!("shipped/recalls-01-acf65dd.sql")),
    ("99da46d", include_str!("shipped/recalls-02-99da46d.sql")),
];

/// (schema version, commit, schema.sql as shipped)
const SHIPPED_INDEXES: &[(u32, &str, &str)] = &[
    (1, "6ba1a92", include_str!("shipped/index-01-6ba1a92.sql")),
    (2, "be67ac8", include_str!("shipped/index-02-be67ac8.sql")),
    (3, "15bd8fa", include_str!("shipped/index-03-15bd8fa.sql")),
    (4, "c3e8430", include_str!("shipped/index-04-c3e8430.sql")),
    (5, "45aaa8a", include_str!("shipped/index-05-45aaa8a.sql")),
    (7, "a629646", include_str!("shipped/index-07-a629646.sql")),
];

const LEDGER_LATEST: u32 = 10;
const RECALLS_LATEST: u32 = 2;

/// Tables, columns and indexes of a database, as `table.column` and `index:name`.
fn shape(path: &Path) -> BTreeSet<String> {
    let conn = Connection::open(path).unwrap();
    let mut out = BTreeSet::new();
    let objects = conn
        .query(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
            &[],
            |r| Ok((r.get_text(0), r.get_text(1))),
        )
        .unwrap();
    for (kind, name) in objects {
        if kind == "index" {
            out.insert(format!("index:{name}"));
            continue;
        }
        for column in conn
            .query(
                "SELECT name FROM pragma_table_info(?1)",
                &[Value::Text(&name)],
                |r| Ok(r.get_text(0)),
            )
            .unwrap()
        {
            out.insert(format!("{name}.{column}"));
        }
    }
    out
}

fn version(path: &Path) -> u32 {
    recorded_version(&Connection::open(path).unwrap()).unwrap()
}

fn has_table(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        &[Value::Text(table)],
        |_| Ok(()),
    )
    .unwrap()
    .is_some()
}

/// A ledger as the shipped build left it: its schema and a few rows.
fn shipped_ledger(path: &Path, schema: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(schema).unwrap();
    conn.execute_batch(
        "INSERT INTO meta VALUES ('id', 'shipped-ledger');
         INSERT INTO files (path, file_class, hash, updated_at)
           VALUES ('memory/2026-11-30.md', 'untrusted', 'abc', 1);
         INSERT INTO segments (path, text_hash, source_class, session_kind, session_id,
                               observed_at, written_by)
           VALUES ('memory/2026-11-30.md', 'h1', 'untrusted', 'interactive', 's1', 5, 'note');
         INSERT INTO tombstones VALUES ('gone', 7);",
    )
    .unwrap();
    if has_table(&conn, "intents") {
        conn.execute_batch(
            "INSERT INTO intents (text, created_at, expires_at, fire_budget, cooldown_ms)
               VALUES ('ask about the lease', 1, 99999999999999, 3, 86400000);",
        )
        .unwrap();
    }
    if has_table(&conn, "dream_sweeps") {
        conn.execute_batch(
            "INSERT INTO dream_sweeps (at, consolidation, pre_text, post_hash)
               VALUES (9, 'deterministic', '# Memory', 'post');",
        )
        .unwrap();
    }
}

fn fresh_ledger_shape() -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("provenance.sqlite");
    drop(Ledger::open(&path, None, 0).unwrap());
    assert_eq!(version(&path), LEDGER_LATEST);
    shape(&path)
}

#[test]
fn every_shipped_ledger_is_migrated_with_its_rows() {
    let fresh = fresh_ledger_shape();
    for (commit, schema) in SHIPPED_LEDGERS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provenance.sqlite");
        shipped_ledger(&path, schema);
        let err = match Ledger::open_read_only(&path, Some("shipped-ledger")) {
            Err(err) => err,
            Ok(_) if *commit == "295d8ec" => String::from("predates"),
            Ok(_) => panic!("{commit}: an older ledger read as current"),
        };
        assert!(err.contains("predates"), "{commit}: {err}");

        let ledger = Ledger::open(&path, Some("shipped-ledger"), 0)
            .unwrap_or_else(|e| panic!("{commit}: {e}"));
        assert_eq!(ledger.id(), "shipped-ledger", "{commit}");
        assert_eq!(ledger.lost(), None, "{commit}");
        let file = ledger.file("memory/2026-11-30.md").unwrap().unwrap();
        assert!(!file.prior_lost, "{commit}");
        assert_eq!(ledger.segments("memory/2026-11-30.md").unwrap().len(), 1);
        assert!(ledger.is_tombstoned("gone").unwrap(), "{commit}");
        if schema.contains("CREATE TABLE IF NOT EXISTS intents") {
            assert_eq!(ledger.intents().unwrap().len(), 1, "{commit}");
        }
        drop(ledger);

        assert_eq!(version(&path), LEDGER_LATEST, "{commit}");
        let migrated = shape(&path);
        let lacking: Vec<_> = fresh.difference(&migrated).collect();
        assert!(lacking.is_empty(), "{commit}: lacks {lacking:?}");
        if schema.contains("dream_sweeps") {
            let conn = Connection::open(&path).unwrap();
            let state = conn
                .query_row("SELECT state FROM dream_sweeps", &[], |r| Ok(r.get_text(0)))
                .unwrap();
            assert_eq!(state.as_deref(), Some("done"), "{commit}");
        }
        assert!(Ledger::open_read_only(&path, Some("shipped-ledger")).is_ok());
    }
}

#[test]
fn a_first_ledger_opened_by_later_builds_is_migrated() {
    // A ledger created by be67ac8 and opened by every later build before
    // versions were recorded: those builds added every later table and
    // column, but never `files.prior_lost` (added without a migration).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("provenance.sqlite");
    let (_, latest_shipped) = SHIPPED_LEDGERS.last().unwrap();
    shipped_ledger(&path, latest_shipped);
    Connection::open(&path)
        .unwrap()
        .execute_batch("ALTER TABLE files DROP COLUMN prior_lost;")
        .unwrap();
    let err = Ledger::open_read_only(&path, Some("shipped-ledger"))
        .err()
        .expect("older");
    assert!(err.contains("it lacks files.prior_lost)"), "{err}");
    let ledger = Ledger::open(&path, Some("shipped-ledger"), 0).unwrap();
    assert!(
        !ledger
            .file("memory/2026-11-30.md")
            .unwrap()
            .unwrap()
            .prior_lost
    );
    assert_eq!(ledger.intents().unwrap().len(), 1);
    drop(ledger);
    assert_eq!(version(&path), LEDGER_LATEST);
    assert!(fresh_ledger_shape().is_subset(&shape(&path)));
}

#[test]
fn every_shipped_recall_store_is_migrated_with_its_rows() {
    for (commit, schema) in SHIPPED_RECALL_STORES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provenance.sqlite");
        drop(Ledger::open(&path, None, 0).unwrap());
        let recalls = dir.path().join(SIGNALS_FILE_NAME);
        std::fs::remove_file(&recalls).unwrap();
        let conn = Connection::open(&recalls).unwrap();
        conn.execute_batch(schema).unwrap();
        conn.execute_batch(
            "INSERT INTO recall_entries (path, text_hash, text, start_line, end_line, recalls,
                                         first_recalled_at, last_recalled_at)
               VALUES ('memory/2026-11-30.md', 'h1', 'port 8080', 3, 3, 4, 1, 2);
             INSERT INTO recall_days (entry_id, day) VALUES (1, '2026-11-30');",
        )
        .unwrap();
        drop(conn);

        drop(Ledger::open(&path, None, 0).unwrap_or_else(|e| panic!("{commit}: {e}")));
        assert_eq!(version(&recalls), RECALLS_LATEST, "{commit}");
        let conn = Connection::open(&recalls).unwrap();
        let day = conn
            .query_row("SELECT day, hits FROM recall_days", &[], |r| {
                Ok((r.get_text(0), r.get_i64(1)))
            })
            .unwrap();
        assert_eq!(day, Some(("2026-11-30".to_string(), 1)), "{commit}");
        let recalls_kept = conn
            .query_row("SELECT recalls FROM recall_entries", &[], |r| {
                Ok(r.get_i64(0))
            })
            .unwrap();
        assert_eq!(recalls_kept, Some(4), "{commit}");
    }
}

#[test]
fn a_ledger_from_a_newer_build_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("provenance.sqlite");
    drop(Ledger::open(&path, None, 0).unwrap());
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 11;")
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = Ledger::open(&path, None, 0)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("schema 11, this build knows up to 10"),
        "{err}"
    );
    let err = Ledger::open_read_only(&path, None).err().expect("refused");
    assert!(err.contains("newer build"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let aside = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().contains("damaged")
        })
        .count();
    assert_eq!(aside, 0, "a newer ledger is not damaged");
}

#[test]
fn every_shipped_index_is_rebuilt_keeping_its_embedding_cache() {
    for (schema_version, commit, schema) in SHIPPED_INDEXES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&schema.replace("{tokenizer}", "porter unicode61 remove_diacritics 2"))
            .unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO meta VALUES ('schema_version', '{schema_version}');
             INSERT INTO meta VALUES ('tokenizer', 'unicode61');
             {}
             INSERT INTO embedding_cache VALUES ('test', 'test', 'h1', 2, x'0000803f00000000');",
            include_str!("../src/storage/index/cache.sql")
        ))
        .unwrap();
        drop(conn);

        let (index, rebuilt) =
            Index::open(&path, FtsTokenizer::Unicode61).unwrap_or_else(|e| panic!("{commit}: {e}"));
        let reason = rebuilt.unwrap_or_else(|| panic!("{commit}: not rebuilt"));
        assert!(
            reason.contains(&format!("schema {schema_version}, older")),
            "{commit}: {reason}"
        );
        assert_eq!(index.cache_size().unwrap(), 1, "{commit}");
        drop(index);
        assert_eq!(
            version(&path),
            memory_core::storage::index::SCHEMA_VERSION,
            "{commit}"
        );
        let (_, again) = Index::open(&path, FtsTokenizer::Unicode61).unwrap();
        assert_eq!(again, None, "{commit}: a second open rebuilds nothing");
    }
}

#[test]
fn an_index_from_before_user_version_at_the_current_schema_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    drop(Index::open(&path, FtsTokenizer::Unicode61).unwrap());
    // What the build before this one left: the version in meta only.
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 0;")
        .unwrap();
    let (index, rebuilt) = Index::open(&path, FtsTokenizer::Unicode61).unwrap();
    assert_eq!(rebuilt, None);
    drop(index);
    assert_eq!(version(&path), memory_core::storage::index::SCHEMA_VERSION);
}
