//! The ledger's dreaming records: recall signals, sweeps with the pre-image
//! of `MEMORY.md`, and promotions.

use super::Ledger;
use crate::sqlite::{DbError, Value};

/// One recall of one entry, as a search hit or a narrow read saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall<'a> {
    pub path: &'a str,
    pub text_hash: String,
    pub text: &'a str,
    pub heading: Option<&'a str>,
    pub start_line: u32,
    pub end_line: u32,
    /// The hit's relevance; `None` for a read.
    pub relevance: Option<f32>,
    /// The normalised query; `None` for a read.
    pub query_key: Option<&'a str>,
    /// `YYYY-MM-DD` (UTC).
    pub day: &'a str,
    pub at_ms: i64,
}

/// Everything recorded about one recalled entry.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallRecord {
    pub path: String,
    pub text_hash: String,
    pub text: String,
    pub heading: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub recalls: u32,
    pub relevance_sum: f64,
    pub relevance_count: u32,
    pub first_recalled_at: i64,
    pub last_recalled_at: i64,
    pub query_keys: Vec<String>,
    pub days: Vec<String>,
}

/// A sweep's change to `MEMORY.md`, for rollback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepChange {
    pub sweep: i64,
    pub pre_text: Option<String>,
    pub post_hash: String,
}

/// A promotion to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promotion {
    pub source_path: String,
    pub source_hash: String,
    pub line_hash: String,
    pub supersedes_key: Option<String>,
    pub observed_at: Option<i64>,
    pub merged: bool,
}

/// A promotion as recorded, for retirement by supersedes key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotedLine {
    pub line_hash: String,
    pub supersedes_key: String,
    pub observed_at: Option<i64>,
}

impl Ledger {
    /// Records one call's recalls, all or none.
    pub fn record_recalls(&self, recalls: &[Recall<'_>]) -> Result<(), DbError> {
        if recalls.is_empty() {
            return Ok(());
        }
        self.signals.transaction(|| {
            for r in recalls {
                let (sum, count) = r.relevance.map_or((0.0, 0), |v| (v as f64, 1));
                self.signals.execute(
                    "INSERT INTO recall_entries (path, text_hash, text, heading, start_line, end_line, recalls, relevance_sum, relevance_count, first_recalled_at, last_recalled_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?9)
                     ON CONFLICT (path, text_hash) DO UPDATE SET
                       text = excluded.text, heading = excluded.heading,
                       start_line = excluded.start_line, end_line = excluded.end_line,
                       recalls = recalls + 1,
                       relevance_sum = relevance_sum + excluded.relevance_sum,
                       relevance_count = relevance_count + excluded.relevance_count,
                       last_recalled_at = max(last_recalled_at, excluded.last_recalled_at)",
                    &[
                        Value::Text(r.path),
                        Value::Text(&r.text_hash),
                        Value::Text(r.text),
                        r.heading.map_or(Value::Null, Value::Text),
                        Value::Integer(r.start_line as i64),
                        Value::Integer(r.end_line as i64),
                        Value::Real(sum),
                        Value::Integer(count),
                        Value::Integer(r.at_ms),
                    ],
                )?;
                let id = self
                    .signals
                    .query_row(
                        "SELECT id FROM recall_entries WHERE path = ?1 AND text_hash = ?2",
                        &[Value::Text(r.path), Value::Text(&r.text_hash)],
                        |row| Ok(row.get_i64(0)),
                    )?
                    .ok_or_else(|| DbError::misuse("a recorded recall vanished"))?;
                if let Some(key) = r.query_key {
                    self.signals.execute(
                        "INSERT INTO recall_queries (entry_id, query_key) VALUES (?1, ?2)
                         ON CONFLICT DO UPDATE SET hits = hits + 1",
                        &[Value::Integer(id), Value::Text(key)],
                    )?;
                }
                self.signals.execute(
                    "INSERT OR IGNORE INTO recall_days (entry_id, day) VALUES (?1, ?2)",
                    &[Value::Integer(id), Value::Text(r.day)],
                )?;
            }
            Ok(())
        })
    }

    /// Every recalled entry with its queries and days.
    pub fn recall_records(&self) -> Result<Vec<RecallRecord>, DbError> {
        let mut queries: std::collections::HashMap<i64, Vec<String>> = Default::default();
        for (id, key) in self.signals.query(
            "SELECT entry_id, query_key FROM recall_queries ORDER BY entry_id, hits DESC, query_key",
            &[],
            |r| Ok((r.get_i64(0), r.get_text(1))),
        )? {
            queries.entry(id).or_default().push(key);
        }
        let mut days: std::collections::HashMap<i64, Vec<String>> = Default::default();
        for (id, day) in self.signals.query(
            "SELECT entry_id, day FROM recall_days ORDER BY entry_id, day",
            &[],
            |r| Ok((r.get_i64(0), r.get_text(1))),
        )? {
            days.entry(id).or_default().push(day);
        }
        self.signals.query(
            "SELECT id, path, text_hash, text, heading, start_line, end_line, recalls, relevance_sum, relevance_count, first_recalled_at, last_recalled_at
             FROM recall_entries ORDER BY id",
            &[],
            |r| {
                let id = r.get_i64(0);
                Ok(RecallRecord {
                    path: r.get_text(1),
                    text_hash: r.get_text(2),
                    text: r.get_text(3),
                    heading: r.get_opt_text(4),
                    start_line: r.get_i64(5) as u32,
                    end_line: r.get_i64(6) as u32,
                    recalls: r.get_i64(7) as u32,
                    relevance_sum: r.get_f64(8),
                    relevance_count: r.get_i64(9) as u32,
                    first_recalled_at: r.get_i64(10),
                    last_recalled_at: r.get_i64(11),
                    query_keys: queries.remove(&id).unwrap_or_default(),
                    days: days.remove(&id).unwrap_or_default(),
                })
            },
        )
    }

    /// Source hashes already promoted (or merged), and those rolled back.
    pub fn promoted_sources(&self) -> Result<Vec<(String, bool)>, DbError> {
        self.conn.query(
            "SELECT source_hash, max(rolled_back) FROM promotions GROUP BY source_hash",
            &[],
            |r| Ok((r.get_text(0), r.get_i64(1) != 0)),
        )
    }

    /// Promoted lines that carry a supersedes key (not rolled back).
    pub fn promoted_lines_with_keys(&self) -> Result<Vec<PromotedLine>, DbError> {
        self.conn.query(
            "SELECT line_hash, supersedes_key, observed_at FROM promotions
             WHERE supersedes_key IS NOT NULL AND rolled_back = 0 AND merged = 0",
            &[],
            |r| {
                Ok(PromotedLine {
                    line_hash: r.get_text(0),
                    supersedes_key: r.get_text(1),
                    observed_at: r.get_opt_i64(2),
                })
            },
        )
    }

    /// Records a sweep that wrote something, with `MEMORY.md`'s pre-image
    /// when it changed that file, and its promotions; returns its number.
    pub fn record_sweep(
        &self,
        at_ms: i64,
        consolidation: &str,
        change: Option<(Option<&str>, &str)>,
        promotions: &[Promotion],
    ) -> Result<i64, DbError> {
        self.conn.transaction(|| {
            let (pre_text, pre_existed, post_hash) = match change {
                Some((pre, post)) => (pre.map_or(Value::Null, Value::Text), pre.is_some(), Value::Text(post)),
                None => (Value::Null, true, Value::Null),
            };
            self.conn.execute(
                "INSERT INTO dream_sweeps (at, consolidation, pre_text, pre_existed, post_hash) VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    Value::Integer(at_ms),
                    Value::Text(consolidation),
                    pre_text,
                    Value::Integer(pre_existed as i64),
                    post_hash,
                ],
            )?;
            let sweep = self.conn.last_insert_rowid();
            for p in promotions {
                self.conn.execute(
                    "INSERT INTO promotions (sweep_id, source_path, source_hash, line_hash, supersedes_key, observed_at, merged)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    &[
                        Value::Integer(sweep),
                        Value::Text(&p.source_path),
                        Value::Text(&p.source_hash),
                        Value::Text(&p.line_hash),
                        p.supersedes_key.as_deref().map_or(Value::Null, Value::Text),
                        p.observed_at.map_or(Value::Null, Value::Integer),
                        Value::Integer(p.merged as i64),
                    ],
                )?;
            }
            Ok(sweep)
        })
    }

    /// The latest sweep that changed `MEMORY.md` and is not rolled back.
    pub fn last_memory_change(&self) -> Result<Option<SweepChange>, DbError> {
        self.conn.query_row(
            "SELECT id, pre_text, pre_existed, post_hash FROM dream_sweeps
             WHERE post_hash IS NOT NULL AND rolled_back_at IS NULL ORDER BY id DESC LIMIT 1",
            &[],
            |r| {
                Ok(SweepChange {
                    sweep: r.get_i64(0),
                    pre_text: (r.get_i64(2) != 0).then(|| r.get_opt_text(1).unwrap_or_default()),
                    post_hash: r.get_text(3),
                })
            },
        )
    }

    /// Marks a sweep rolled back: its promotions are never made again.
    pub fn mark_rolled_back(&self, sweep: i64, at_ms: i64) -> Result<(), DbError> {
        self.conn.transaction(|| {
            self.conn.execute(
                "UPDATE dream_sweeps SET rolled_back_at = ?2 WHERE id = ?1",
                &[Value::Integer(sweep), Value::Integer(at_ms)],
            )?;
            self.conn.execute(
                "UPDATE promotions SET rolled_back = 1 WHERE sweep_id = ?1",
                &[Value::Integer(sweep)],
            )?;
            Ok(())
        })
    }

    /// The digest of the last sweep summary appended to `DREAMS.md`.
    pub fn dream_digest(&self) -> Result<Option<String>, DbError> {
        self.meta("dream_digest")
    }

    pub fn set_dream_digest(&self, digest: &str) -> Result<(), DbError> {
        self.set_meta("dream_digest", digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall<'a>(text: &'a str, query: Option<&'a str>, day: &'a str, at: i64) -> Recall<'a> {
        Recall {
            path: "memory/2026-11-28.md",
            text_hash: crate::memory::entry_hash(text),
            text,
            heading: None,
            start_line: 3,
            end_line: 3,
            relevance: query.map(|_| 0.5),
            query_key: query,
            day,
            at_ms: at,
        }
    }

    #[test]
    fn recalls_accumulate_per_entry() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("provenance.sqlite"), None, 0).unwrap();
        ledger
            .record_recalls(&[recall("- a fact", Some("gateway port"), "2026-11-30", 10)])
            .unwrap();
        ledger
            .record_recalls(&[
                recall("- a fact", Some("gateway port"), "2026-12-01", 20),
                recall("- a fact", None, "2026-12-01", 30),
                recall("- other", Some("x y"), "2026-12-01", 30),
            ])
            .unwrap();
        let records = ledger.recall_records().unwrap();
        assert_eq!(records.len(), 2);
        let fact = &records[0];
        assert_eq!((fact.recalls, fact.relevance_count), (3, 2));
        assert_eq!((fact.first_recalled_at, fact.last_recalled_at), (10, 30));
        assert_eq!(fact.query_keys, vec!["gateway port"]);
        assert_eq!(fact.days, vec!["2026-11-30", "2026-12-01"]);
        assert!((fact.relevance_sum - 1.0).abs() < 1e-9);
        // Signals survive a reopen.
        drop(ledger);
        let ledger = Ledger::open(&dir.path().join("provenance.sqlite"), None, 0).unwrap();
        assert_eq!(ledger.recall_records().unwrap().len(), 2);
    }
}
