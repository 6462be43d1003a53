//! The provenance ledger (`.memory/provenance.sqlite`): the durable record of
//! what the component wrote and how far it is trusted. Unlike the index it is
//! never rebuilt from the files. If it goes missing or is damaged, a new one
//! is started and marked `lost`: entries whose record is gone then count as
//! untrusted, never owner, and status says so.

use crate::contract::api::{SessionKind, SourceClass};
use crate::logic::intents::Intent;
pub use crate::logic::provenance::{Segment, Speaker};
use crate::storage::sqlite::migrate::{self, Migration};
use crate::storage::sqlite::{Connection, DbError, Value};
use std::path::Path;

pub mod dreaming;

/// The recall signals, beside the ledger.
pub const SIGNALS_FILE_NAME: &str = "recalls.sqlite";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLedger {
    pub file_class: SourceClass,
    pub hash: String,
    pub edited_out_of_band: bool,
    /// The file held content the ledger could not vouch for when it was
    /// first recorded (after a loss).
    pub prior_lost: bool,
}

pub struct Ledger {
    conn: Connection,
    /// Recall signals (`recalls.sqlite`): written on the reply path, not synced.
    signals: Connection,
    id: String,
    lost: Option<String>,
}

/// One of the ledger's two databases: its schema and how it is opened.
struct Store {
    what: &'static str,
    steps: &'static [Migration],
    /// Set on every writable open.
    pragmas: &'static str,
    /// A cheap read that fails on a damaged file.
    probe: &'static str,
}

/// The provenance ledger: every commit synced.
const PROVENANCE: Store = Store {
    what: "the provenance ledger",
    steps: LEDGER_STEPS,
    pragmas: "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = TRUNCATE; PRAGMA synchronous = FULL;",
    probe: "SELECT count(*) FROM segments",
};

/// The recall-signal store: usage data written on the reply path, so its
/// commits are not synced and a damaged one is set aside and started anew
/// rather than failing the memory.
const RECALLS: Store = Store {
    what: "the recall store",
    steps: SIGNALS_STEPS,
    pragmas:
        "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;",
    probe: "SELECT count(*) FROM recall_entries",
};

impl Store {
    /// Opens (creating or migrating) the database at `path`.
    fn open(&self, path: &Path) -> Result<Connection, DbError> {
        let conn = Connection::open(path)?;
        conn.execute_batch(self.pragmas)?;
        // Never rebuilt: an older file is brought up step by step.
        migrate::migrate(&conn, self.what, self.steps)?;
        conn.query_row(self.probe, &[], |_| Ok(()))?;
        Ok(conn)
    }

    /// Opens the database at `path`; a damaged file is kept for a human as
    /// `<name>.damaged-<now>` and a new one started in its place.
    fn open_or_set_aside(&self, path: &Path, now_ms: i64) -> Result<Connection, DbError> {
        match self.open(path) {
            Err(error) if error.is_corrupt() => {
                let aside = path.with_extension(format!("sqlite.damaged-{now_ms}"));
                let _ = std::fs::rename(path, &aside);
                self.open(path)
            }
            other => other,
        }
    }

    /// Opens an existing, current database for reading only.
    fn open_read_only(&self, path: &Path) -> Result<Connection, String> {
        let conn = Connection::open_read_only(path).map_err(|e| e.to_string())?;
        conn.execute_batch("PRAGMA query_only = ON;")
            .map_err(|e| e.to_string())?;
        migrate::check_current(&conn, self.what, self.steps)?;
        Ok(conn)
    }
}

/// Why the ledger counts as lost when it is not the one the index knew.
fn replaced(expected: &str, found: &str) -> String {
    format!("the provenance ledger was replaced (expected {expected}, found {found})")
}

/// The ledger's schema, step by step (see `sqlite::migrate`). A ledger is
/// never rebuilt from the files: each step keeps every row.
const LEDGER_STEPS: &[Migration] = &[
    step(
        1,
        "provenance",
        include_str!("migrations/0001_provenance.sql"),
        &[
            "meta",
            "files",
            "segments",
            "ingested",
            "tombstones",
            "flushes",
        ],
    ),
    step(
        2,
        "files.prior_lost",
        include_str!("migrations/0002_prior_lost.sql"),
        &["files.prior_lost"],
    ),
    step(
        3,
        "standing intents",
        include_str!("migrations/0003_intents.sql"),
        &["intents"],
    ),
    step(
        4,
        "semantic intents",
        include_str!("migrations/0004_semantic_intents.sql"),
        &["intents.trigger_model", "intents.trigger_vector"],
    ),
    step(
        5,
        "dreaming sweeps and promotions",
        include_str!("migrations/0005_dreaming.sql"),
        &["dream_sweeps", "promotions"],
    ),
    step(
        6,
        "the sweep log and where promotions came from",
        include_str!("migrations/0006_sweep_log.sql"),
        &[
            "promotions.citation",
            "promotions.source_class",
            "promotions.session_kind",
            "promotions.fact",
            "sweep_log",
        ],
    ),
    step(
        7,
        "transcript speakers and first sightings",
        include_str!("migrations/0007_speakers.sql"),
        &[
            "segments.role",
            "segments.sender",
            "segments.speaker",
            "first_seen",
        ],
    ),
    step(
        8,
        "segments by text",
        include_str!("migrations/0008_segments_by_hash.sql"),
        &["index:segments_by_hash"],
    ),
    step(
        9,
        "forgotten content",
        include_str!("migrations/0009_forgotten_content.sql"),
        &["forgotten_content"],
    ),
    step(
        10,
        "sweep states and summaries",
        include_str!("migrations/0010_sweep_states.sql"),
        &["dream_sweeps.state", "dream_sweeps.summary"],
    ),
];

/// The recall store's schema, step by step.
const SIGNALS_STEPS: &[Migration] = &[
    step(
        1,
        "recall signals",
        include_str!("signals_migrations/0001_recall_signals.sql"),
        &["recall_entries", "recall_queries", "recall_days"],
    ),
    step(
        2,
        "recalls per day",
        include_str!("signals_migrations/0002_recall_day_hits.sql"),
        &["recall_days.hits"],
    ),
];

const fn step(
    version: u32,
    name: &'static str,
    sql: &'static str,
    adds: &'static [&'static str],
) -> Migration {
    Migration {
        version,
        name,
        sql,
        adds,
    }
}

/// The last write order ever given: segments are forgotten (deleted), and
/// write order must never be given twice, or a later write could look older
/// than a line first seen before it.
const LAST_ORDER: &str = "SELECT max(coalesce((SELECT max(id) FROM segments), 0), \
     coalesce((SELECT max(id) FROM forgotten_content), 0), \
     coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_segment'), 0))";

impl Ledger {
    /// Opens an existing ledger (and its recall store, if there is one) for
    /// reading only: nothing is created, migrated, set aside or marked.
    /// `Err` says why it cannot be read as it is.
    pub fn open_read_only(path: &Path, expected_id: Option<&str>) -> Result<Ledger, String> {
        if !path.is_file() {
            return Err("there is no provenance ledger yet".into());
        }
        let conn = PROVENANCE.open_read_only(path)?;
        let signals_path = path.with_file_name(SIGNALS_FILE_NAME);
        let signals = if signals_path.is_file() {
            RECALLS.open_read_only(&signals_path)?
        } else {
            // Nothing recalled yet: an empty store, in memory.
            let signals = Connection::open_in_memory().map_err(|e| e.to_string())?;
            migrate::migrate(&signals, RECALLS.what, RECALLS.steps).map_err(|e| e.to_string())?;
            signals
        };
        let mut ledger = Ledger {
            conn,
            signals,
            id: String::new(),
            lost: None,
        };
        ledger.id = ledger
            .meta("id")
            .map_err(|e| e.to_string())?
            .ok_or("the provenance ledger has no id")?;
        ledger.lost = ledger.meta("lost").map_err(|e| e.to_string())?;
        if let Some(expected) = expected_id {
            if ledger.lost.is_none() && expected != ledger.id {
                ledger.lost = Some(replaced(expected, &ledger.id));
            }
        }
        Ok(ledger)
    }

    /// Opens the ledger at `path`. `expected_id` is the ledger id the index
    /// last saw: when a ledger existed before and this one is new (deleted,
    /// or damaged and set aside), the new ledger is marked lost.
    pub fn open(path: &Path, expected_id: Option<&str>, now_ms: i64) -> Result<Ledger, DbError> {
        let existed = path.exists();
        let conn = PROVENANCE.open_or_set_aside(path, now_ms)?;
        let signals = RECALLS.open_or_set_aside(&path.with_file_name(SIGNALS_FILE_NAME), now_ms)?;
        let mut ledger = Ledger {
            conn,
            signals,
            id: String::new(),
            lost: None,
        };
        ledger.id = match ledger.meta("id")? {
            Some(id) => id,
            None => {
                let id = crate::text::hash::sha256_hex(
                    format!(
                        "{now_ms}:{}:{:?}",
                        path.display(),
                        std::time::SystemTime::now()
                    )
                    .as_bytes(),
                )[..16]
                    .to_string();
                ledger.set_meta("id", &id)?;
                id
            }
        };
        if let Some(expected) = expected_id {
            if expected != ledger.id && ledger.meta("lost")?.is_none() {
                let why = if existed {
                    replaced(expected, &ledger.id)
                } else {
                    "the provenance ledger was missing or damaged and was started anew".to_string()
                };
                ledger.set_meta("lost", &why)?;
            }
        }
        ledger.lost = ledger.meta("lost")?;
        Ok(ledger)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Why provenance was lost, when it was.
    pub fn lost(&self) -> Option<&str> {
        self.lost.as_deref()
    }

    fn meta(&self, key: &str) -> Result<Option<String>, DbError> {
        self.conn.query_row(
            "SELECT value FROM meta WHERE key = ?1",
            &[Value::Text(key)],
            |r| Ok(r.get_text(0)),
        )
    }

    fn set_meta(&self, key: &str, value: &str) -> Result<(), DbError> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[Value::Text(key), Value::Text(value)],
        )?;
        Ok(())
    }

    pub fn file(&self, path: &str) -> Result<Option<FileLedger>, DbError> {
        self.conn.query_row(
            "SELECT file_class, hash, edited_out_of_band, prior_lost FROM files WHERE path = ?1",
            &[Value::Text(path)],
            |r| {
                Ok(FileLedger {
                    file_class: SourceClass::parse(&r.get_text(0))
                        .unwrap_or(SourceClass::Untrusted),
                    hash: r.get_text(1),
                    edited_out_of_band: r.get_i64(2) != 0,
                    prior_lost: r.get_i64(3) != 0,
                })
            },
        )
    }

    pub fn segments(&self, path: &str) -> Result<Vec<Segment>, DbError> {
        self.conn.query(
            "SELECT text_hash, source_class, session_kind, session_id, observed_at, supersedes_key, written_by, \
                    role, sender, speaker, id FROM segments WHERE path = ?1 ORDER BY id",
            &[Value::Text(path)],
            |r| {
                Ok(Segment {
                    id: r.get_i64(10),
                    text_hash: r.get_text(0),
                    source_class: SourceClass::parse(&r.get_text(1)).unwrap_or(SourceClass::Untrusted),
                    session_kind: SessionKind::parse(&r.get_text(2)).unwrap_or(SessionKind::Subagent),
                    session_id: r.get_opt_text(3),
                    observed_at: r.get_i64(4),
                    supersedes_key: r.get_opt_text(5),
                    written_by: match r.get_text(6).as_str() {
                        "note" => "note",
                        "flush" => "flush",
                        _ => "ingest",
                    },
                    speaker: match (r.get_opt_text(7), r.get_opt_text(9)) {
                        (Some(role), Some(prefix)) => Some(Speaker {
                            role,
                            sender: r.get_opt_text(8),
                            prefix,
                        }),
                        _ => None,
                    },
                })
            },
        )
    }

    /// The records that could lower a line of this text wherever it now is
    /// (`provenance::following_content`): every untrusted or system segment,
    /// and every segment of a scheduled or sub-agent session, with one of
    /// these text hashes, in any file.
    pub fn lowering_records(
        &self,
        hashes: &[String],
    ) -> Result<
        std::collections::HashMap<String, Vec<crate::logic::provenance::ContentRecord>>,
        DbError,
    > {
        let mut out: std::collections::HashMap<
            String,
            Vec<crate::logic::provenance::ContentRecord>,
        > = std::collections::HashMap::new();
        if hashes.is_empty() {
            return Ok(out);
        }
        let list = serde_json::to_string(hashes).unwrap_or_else(|_| "[]".into());
        let rows = self.conn.query(
            "SELECT text_hash, id, source_class, session_kind FROM segments \
             WHERE text_hash IN (SELECT value FROM json_each(?1)) \
               AND (source_class IN ('untrusted', 'system') OR session_kind <> 'interactive') \
             UNION ALL SELECT text_hash, id, source_class, session_kind FROM forgotten_content \
             WHERE text_hash IN (SELECT value FROM json_each(?1))",
            &[Value::Text(&list)],
            |r| {
                Ok((
                    r.get_text(0),
                    crate::logic::provenance::ContentRecord {
                        order: r.get_i64(1),
                        class: SourceClass::parse(&r.get_text(2)).unwrap_or(SourceClass::Untrusted),
                        session_kind: SessionKind::parse(&r.get_text(3))
                            .unwrap_or(SessionKind::Subagent),
                    },
                ))
            },
        )?;
        for (hash, record) in rows {
            out.entry(hash).or_default().push(record);
        }
        Ok(out)
    }

    /// When each of these operator-line hashes was first seen, as the id of
    /// the last segment recorded by then, and that id now (what a line seen
    /// for the first time gets). Reads only: `record_first_seen` records.
    pub fn first_seen(
        &self,
        hashes: &[String],
    ) -> Result<(std::collections::HashMap<String, i64>, i64), DbError> {
        let now = self
            .conn
            .query_row(LAST_ORDER, &[], |r| Ok(r.get_i64(0)))?
            .unwrap_or(0);
        let list = serde_json::to_string(hashes).unwrap_or_else(|_| "[]".into());
        let seen = self
            .conn
            .query(
                "SELECT text_hash, last_segment FROM first_seen WHERE text_hash IN (SELECT value FROM json_each(?1))",
                &[Value::Text(&list)],
                |r| Ok((r.get_text(0), r.get_i64(1))),
            )?
            .into_iter()
            .collect();
        Ok((seen, now))
    }

    /// Records operator lines seen for the first time, as seen when the
    /// last segment was `last_segment` (one transaction for a whole sync).
    pub fn record_first_seen(&self, hashes: &[String], last_segment: i64) -> Result<(), DbError> {
        if hashes.is_empty() {
            return Ok(());
        }
        self.transaction(|| {
            for hash in hashes {
                self.conn.execute(
                    "INSERT OR IGNORE INTO first_seen (text_hash, last_segment) VALUES (?1, ?2)",
                    &[Value::Text(hash), Value::Integer(last_segment)],
                )?;
            }
            Ok(())
        })
    }

    /// Records segments about to be appended to `path`, and lowers the file's
    /// class to the lowest it has received. Called *before* the file is
    /// written: a crash in between leaves a record without a line (harmless),
    /// never a line without its record.
    ///
    /// `prior_lost`: the file already holds content the ledger cannot vouch
    /// for (it was lost, and the content may be the component's own earlier
    /// writes). That content counts as untrusted, so the file starts there;
    /// otherwise what a new file already holds is the operator's.
    pub fn record_segments(
        &self,
        path: &str,
        segments: &[Segment],
        prior_lost: bool,
        previous_hash: &str,
        now_ms: i64,
    ) -> Result<(), DbError> {
        self.transaction(|| {
            let lowest = segments
                .iter()
                .map(|s| s.source_class)
                .fold(None, |acc: Option<SourceClass>, c| Some(acc.map_or(c, |a| SourceClass::lowest(a, c))));
            let Some(lowest) = lowest else { return Ok(()) };
            match self.file(path)? {
                None => {
                    let lowest = if prior_lost { SourceClass::Untrusted } else { lowest };
                    self.conn.execute(
                        "INSERT INTO files (path, file_class, hash, edited_out_of_band, prior_lost, updated_at) \
                         VALUES (?1, ?2, ?3, 0, ?5, ?4)",
                        &[
                            Value::Text(path),
                            Value::Text(lowest.as_str()),
                            Value::Text(previous_hash),
                            Value::Integer(now_ms),
                            Value::Integer(prior_lost as i64),
                        ],
                    )?;
                }
                Some(file) => {
                    let class = SourceClass::lowest(file.file_class, lowest);
                    self.conn.execute(
                        "UPDATE files SET file_class = ?2, updated_at = ?3 WHERE path = ?1",
                        &[Value::Text(path), Value::Text(class.as_str()), Value::Integer(now_ms)],
                    )?;
                }
            }
            for s in segments {
                self.conn.execute(
                    &format!("INSERT INTO segments (id, path, text_hash, source_class, session_kind, session_id, observed_at, supersedes_key, written_by, \
                     role, sender, speaker) VALUES (({LAST_ORDER}) + 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
                    &[
                        Value::Text(path),
                        Value::Text(&s.text_hash),
                        Value::Text(s.source_class.as_str()),
                        Value::Text(s.session_kind.as_str()),
                        s.session_id.as_deref().map_or(Value::Null, Value::Text),
                        Value::Integer(s.observed_at),
                        s.supersedes_key.as_deref().map_or(Value::Null, Value::Text),
                        Value::Text(s.written_by),
                        s.speaker.as_ref().map_or(Value::Null, |w| Value::Text(&w.role)),
                        s.speaker.as_ref().and_then(|w| w.sender.as_deref()).map_or(Value::Null, Value::Text),
                        s.speaker.as_ref().map_or(Value::Null, |w| Value::Text(&w.prefix)),
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// Records the file's hash after the component's own write.
    pub fn set_file_hash(&self, path: &str, hash: &str, now_ms: i64) -> Result<(), DbError> {
        self.conn.execute(
            "UPDATE files SET hash = ?2, updated_at = ?3 WHERE path = ?1",
            &[Value::Text(path), Value::Text(hash), Value::Integer(now_ms)],
        )?;
        Ok(())
    }

    /// Marks a file edited from outside: from now on its entries carry the
    /// file-level class.
    pub fn mark_edited(&self, path: &str) -> Result<(), DbError> {
        self.conn.execute(
            "UPDATE files SET edited_out_of_band = 1 WHERE path = ?1",
            &[Value::Text(path)],
        )?;
        Ok(())
    }

    pub fn is_ingested(&self, session: &str, message_hash: &str) -> Result<bool, DbError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM ingested WHERE session_id = ?1 AND message_hash = ?2",
                &[Value::Text(session), Value::Text(message_hash)],
                |_| Ok(()),
            )?
            .is_some())
    }

    pub fn mark_ingested(&self, session: &str, hashes: &[String]) -> Result<(), DbError> {
        self.transaction(|| {
            for hash in hashes {
                self.conn.execute(
                    "INSERT OR IGNORE INTO ingested (session_id, message_hash) VALUES (?1, ?2)",
                    &[Value::Text(session), Value::Text(hash)],
                )?;
            }
            Ok(())
        })
    }

    pub fn is_tombstoned(&self, session: &str) -> Result<bool, DbError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM tombstones WHERE session_id = ?1",
                &[Value::Text(session)],
                |_| Ok(()),
            )?
            .is_some())
    }

    /// Tombstones a session and drops its segments and ingestion records;
    /// returns the (path, text hash) of the segments it had written.
    pub fn forget_session(
        &self,
        session: &str,
        now_ms: i64,
    ) -> Result<Vec<(String, String)>, DbError> {
        self.transaction(|| {
            let written = self.conn.query(
                "SELECT path, text_hash FROM segments WHERE session_id = ?1",
                &[Value::Text(session)],
                |r| Ok((r.get_text(0), r.get_text(1))),
            )?;
            // The write order never goes back, and outside content keeps
            // lowering its copies after its own lines are gone.
            self.conn.execute(
                &format!("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_segment', CAST(({LAST_ORDER}) AS TEXT))"),
                &[],
            )?;
            self.conn.execute(
                "INSERT OR IGNORE INTO forgotten_content (id, text_hash, source_class, session_kind) \
                 SELECT id, text_hash, source_class, session_kind FROM segments WHERE session_id = ?1 \
                   AND (source_class IN ('untrusted', 'system') OR session_kind <> 'interactive')",
                &[Value::Text(session)],
            )?;
            self.conn.execute(
                "DELETE FROM segments WHERE session_id = ?1",
                &[Value::Text(session)],
            )?;
            self.conn.execute(
                "DELETE FROM ingested WHERE session_id = ?1",
                &[Value::Text(session)],
            )?;
            self.conn.execute(
                "INSERT OR REPLACE INTO tombstones (session_id, forgotten_at) VALUES (?1, ?2)",
                &[Value::Text(session), Value::Integer(now_ms)],
            )?;
            Ok(written)
        })
    }

    pub fn has_flushed(&self, session: &str, cycle: u32) -> Result<bool, DbError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM flushes WHERE session_id = ?1 AND cycle = ?2",
                &[Value::Text(session), Value::Integer(cycle as i64)],
                |_| Ok(()),
            )?
            .is_some())
    }

    pub fn record_flush(&self, session: &str, cycle: u32, now_ms: i64) -> Result<(), DbError> {
        self.conn.execute(
            "INSERT OR IGNORE INTO flushes (session_id, cycle, flushed_at) VALUES (?1, ?2, ?3)",
            &[
                Value::Text(session),
                Value::Integer(cycle as i64),
                Value::Integer(now_ms),
            ],
        )?;
        Ok(())
    }

    pub fn create_intent(&self, intent: &Intent, session_id: Option<&str>) -> Result<i64, DbError> {
        let vector = intent
            .trigger_vector
            .as_ref()
            .map(|(_, v)| crate::host::embedding::encode(v));
        self.conn.execute(
            "INSERT INTO intents (text, triggers, due_at, channel, sender, created_at, expires_at, fire_budget, \
             cooldown_ms, session_id, trigger_model, trigger_vector) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            &[
                Value::Text(&intent.text),
                Value::Text(&serde_json::to_string(&intent.triggers).unwrap_or_else(|_| "[]".into())),
                intent.due_at.map_or(Value::Null, Value::Integer),
                intent.channel.as_deref().map_or(Value::Null, Value::Text),
                intent.sender.as_deref().map_or(Value::Null, Value::Text),
                Value::Integer(intent.created_at),
                Value::Integer(intent.expires_at),
                Value::Integer(intent.fire_budget as i64),
                Value::Integer(intent.cooldown_ms),
                session_id.map_or(Value::Null, Value::Text),
                intent.trigger_vector.as_ref().map_or(Value::Null, |(label, _)| Value::Text(label)),
                vector.as_deref().map_or(Value::Null, Value::Blob),
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every intent, in creation order.
    pub fn intents(&self) -> Result<Vec<Intent>, DbError> {
        self.conn.query(
            "SELECT id, text, triggers, due_at, channel, sender, created_at, expires_at, fire_budget, fires, \
             cooldown_ms, last_fired_at, cancelled, trigger_model, trigger_vector FROM intents ORDER BY id",
            &[],
            |r| {
                Ok(Intent {
                    id: r.get_i64(0),
                    text: r.get_text(1),
                    triggers: serde_json::from_str(&r.get_text(2)).unwrap_or_default(),
                    due_at: r.get_opt_i64(3),
                    channel: r.get_opt_text(4),
                    sender: r.get_opt_text(5),
                    created_at: r.get_i64(6),
                    expires_at: r.get_i64(7),
                    fire_budget: r.get_i64(8) as u32,
                    fires: r.get_i64(9) as u32,
                    cooldown_ms: r.get_i64(10),
                    last_fired_at: r.get_opt_i64(11),
                    cancelled: r.get_i64(12) != 0,
                    trigger_vector: r
                        .get_opt_text(13)
                        .map(|label| (label, crate::host::embedding::decode(&r.get_blob(14)))),
                })
            },
        )
    }

    /// Spends one fire of each intent.
    pub fn record_fires(&self, ids: &[i64], now_ms: i64) -> Result<(), DbError> {
        self.transaction(|| {
            for id in ids {
                self.conn.execute(
                    "UPDATE intents SET fires = fires + 1, last_fired_at = ?2 WHERE id = ?1",
                    &[Value::Integer(*id), Value::Integer(now_ms)],
                )?;
            }
            Ok(())
        })
    }

    /// Cancels an intent; false when there is no such intent.
    pub fn cancel_intent(&self, id: i64) -> Result<bool, DbError> {
        self.conn.execute(
            "UPDATE intents SET cancelled = 1 WHERE id = ?1",
            &[Value::Integer(id)],
        )?;
        Ok(self.conn.changes() > 0)
    }

    fn transaction<T>(&self, f: impl FnOnce() -> Result<T, DbError>) -> Result<T, DbError> {
        self.conn.transaction(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(hash: &str, class: SourceClass) -> Segment {
        Segment {
            id: 0,
            text_hash: hash.into(),
            source_class: class,
            session_kind: SessionKind::Interactive,
            session_id: Some("s1".into()),
            observed_at: 1,
            supersedes_key: None,
            written_by: "note",
            speaker: None,
        }
    }

    /// Records one segment of `memory/a.md` as a note would.
    fn record(ledger: &Ledger, segment: Segment) {
        ledger
            .record_segments("memory/a.md", &[segment], false, "h0", 0)
            .unwrap();
    }

    #[test]
    fn the_file_keeps_its_lowest_class() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("p.sqlite"), None, 0).unwrap();
        record(&ledger, segment("h1", SourceClass::Owner));
        assert_eq!(
            ledger.file("memory/a.md").unwrap().unwrap().file_class,
            SourceClass::Owner
        );
        record(&ledger, segment("h2", SourceClass::Untrusted));
        record(&ledger, segment("h3", SourceClass::Owner));
        assert_eq!(
            ledger.file("memory/a.md").unwrap().unwrap().file_class,
            SourceClass::Untrusted
        );
        assert_eq!(ledger.segments("memory/a.md").unwrap().len(), 3);
    }

    #[test]
    fn a_replaced_ledger_is_marked_lost_and_stays_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.sqlite");
        let first = Ledger::open(&path, None, 0).unwrap();
        let id = first.id().to_string();
        assert!(first.lost().is_none());
        drop(first);
        assert!(Ledger::open(&path, Some(&id), 0).unwrap().lost().is_none());
        std::fs::remove_file(&path).unwrap();
        let second = Ledger::open(&path, Some(&id), 0).unwrap();
        assert!(second.lost().is_some());
        let second_id = second.id().to_string();
        drop(second);
        assert!(
            Ledger::open(&path, Some(&second_id), 0)
                .unwrap()
                .lost()
                .is_some(),
            "lost is remembered"
        );
    }

    #[test]
    fn a_damaged_ledger_is_set_aside_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.sqlite");
        std::fs::write(&path, vec![0x5a; 8192]).unwrap();
        let ledger = Ledger::open(&path, Some("old"), 7).unwrap();
        assert!(ledger.lost().is_some());
        assert!(dir.path().join("p.sqlite.damaged-7").exists());
    }

    #[test]
    fn forgetting_tombstones_and_returns_what_the_session_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("p.sqlite"), None, 0).unwrap();
        record(&ledger, segment("h1", SourceClass::Owner));
        ledger.mark_ingested("s1", &["m1".into()]).unwrap();
        assert!(ledger.is_ingested("s1", "m1").unwrap());
        let written = ledger.forget_session("s1", 5).unwrap();
        assert_eq!(written, vec![("memory/a.md".to_string(), "h1".to_string())]);
        assert!(ledger.is_tombstoned("s1").unwrap());
        assert!(!ledger.is_ingested("s1", "m1").unwrap());
        assert!(ledger.segments("memory/a.md").unwrap().is_empty());
    }
}
