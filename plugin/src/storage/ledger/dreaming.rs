//! The ledger's dreaming records: recall signals, sweeps with the pre-image
//! of `MEMORY.md`, promotions, and the sweep log the review page reads.

use super::Ledger;
use crate::contract::api::{SessionKind, SourceClass};
use crate::storage::sqlite::{DbError, Value};

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

/// How far a recorded sweep got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepState {
    /// Recorded before the rename that commits `MEMORY.md`.
    Pending,
    /// `MEMORY.md` is the sweep's; the summary may not be in `DREAMS.md`.
    Committed,
    Done,
}

impl SweepState {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepState::Pending => "pending",
            SweepState::Committed => "committed",
            SweepState::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Option<SweepState> {
        [SweepState::Pending, SweepState::Committed, SweepState::Done]
            .into_iter()
            .find(|state| state.as_str() == s)
    }
}

/// A sweep an interruption left unfinished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedSweep {
    pub sweep: i64,
    pub at_ms: i64,
    pub state: SweepState,
    /// Its change to `MEMORY.md`, when it made (or was about to make) one.
    pub change: Option<SweepChange>,
    /// Its `DREAMS.md` summary (none for sweeps recorded before it was kept).
    pub summary: Option<String>,
    /// Hashes of the `MEMORY.md` entries its promotions wrote (or merged
    /// into, as far as the sweep could tell).
    pub line_hashes: Vec<String>,
}

/// What status shows of dreaming.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SweepNotices {
    /// Promotions the last sweep deferred because `MEMORY.md` was full.
    pub deferred: u32,
    /// A sweep that failed or was interrupted, until a sweep succeeds.
    pub problem: Option<String>,
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
    /// `path#Lx-Ly` of the source entry when it was promoted.
    pub citation: String,
    /// The source's class (the lower of the entry's and its file's).
    pub source_class: SourceClass,
    pub session_kind: Option<SessionKind>,
    /// The fact as promoted, on one line.
    pub fact: String,
}

/// A promotion as recorded, with its sweep, for the review page. The
/// source's citation, class, session kind and fact are `None` for
/// promotions recorded before the ledger kept them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotionRecord {
    pub sweep: i64,
    pub at_ms: i64,
    pub source_path: String,
    pub source_hash: String,
    pub line_hash: String,
    pub merged: bool,
    pub rolled_back: bool,
    pub citation: Option<String>,
    pub source_class: Option<SourceClass>,
    pub session_kind: Option<SessionKind>,
    pub fact: Option<String>,
}

/// One sweep's outcome, for the sweep log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SweepLogEntry {
    pub at_ms: i64,
    /// `light`, `rem`, `deep`, as run.
    pub phases: Vec<String>,
    pub staged: u32,
    pub themes: u32,
    pub candidates: u32,
    pub added: u32,
    pub merged: u32,
    pub superseded: u32,
    pub rewritten: u32,
    /// As `Consolidation::as_str` spells it.
    pub consolidation: String,
    /// The refusal's kind (`RefusalKind::as_str`) and reason.
    pub refusal: Option<(String, String)>,
    pub memory_changed: bool,
    pub dreams_changed: bool,
    /// Its row in `dream_sweeps`, when it promoted or merged anything.
    pub dream_sweep: Option<i64>,
}

/// A logged sweep as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepLogRecord {
    /// Its number in the sweep log; 0 for a sweep recorded before the log
    /// existed, of which only `dream_sweeps` and its promotions are known.
    pub id: i64,
    pub entry: SweepLogEntry,
    pub phases_recorded: bool,
    pub rolled_back_at: Option<i64>,
}

/// Recall activity of one day (UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallDay {
    pub day: String,
    /// Entry recalls that day (days recorded before hits were counted count
    /// once per entry).
    pub recalls: u32,
    /// Distinct entries recalled that day.
    pub entries: u32,
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
                    "INSERT INTO recall_days (entry_id, day) VALUES (?1, ?2)
                     ON CONFLICT DO UPDATE SET hits = hits + 1",
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

    /// Records a sweep that promoted or merged something, durably and before
    /// it touches `MEMORY.md`: the pre-image and the hash of the file it is
    /// about to write (when it changes that file), its promotions and its
    /// `DREAMS.md` summary. The sweep is `pending` when it changes the file
    /// (see `set_sweep_state`), `committed` otherwise; returns its number.
    pub fn record_sweep(
        &self,
        at_ms: i64,
        consolidation: &str,
        change: Option<(Option<&str>, &str)>,
        promotions: &[Promotion],
        summary: &str,
    ) -> Result<i64, DbError> {
        self.conn.transaction(|| {
            let (pre_text, pre_existed, post_hash) = match change {
                Some((pre, post)) => (pre.map_or(Value::Null, Value::Text), pre.is_some(), Value::Text(post)),
                None => (Value::Null, true, Value::Null),
            };
            let state = if change.is_some() { SweepState::Pending } else { SweepState::Committed };
            self.conn.execute(
                "INSERT INTO dream_sweeps (at, consolidation, pre_text, pre_existed, post_hash, state, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &[
                    Value::Integer(at_ms),
                    Value::Text(consolidation),
                    pre_text,
                    Value::Integer(pre_existed as i64),
                    post_hash,
                    Value::Text(state.as_str()),
                    Value::Text(summary),
                ],
            )?;
            let sweep = self.conn.last_insert_rowid();
            for p in promotions {
                self.conn.execute(
                    "INSERT INTO promotions (sweep_id, source_path, source_hash, line_hash, supersedes_key, observed_at, merged, citation, source_class, session_kind, fact)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    &[
                        Value::Integer(sweep),
                        Value::Text(&p.source_path),
                        Value::Text(&p.source_hash),
                        Value::Text(&p.line_hash),
                        p.supersedes_key.as_deref().map_or(Value::Null, Value::Text),
                        p.observed_at.map_or(Value::Null, Value::Integer),
                        Value::Integer(p.merged as i64),
                        Value::Text(&p.citation),
                        Value::Text(p.source_class.as_str()),
                        p.session_kind.map_or(Value::Null, |k| Value::Text(k.as_str())),
                        Value::Text(&p.fact),
                    ],
                )?;
            }
            Ok(sweep)
        })
    }

    /// Moves a sweep on: `Committed` once the rename that commits
    /// `MEMORY.md` happened, `Done` once its summary is in `DREAMS.md`.
    pub fn set_sweep_state(&self, sweep: i64, state: SweepState) -> Result<(), DbError> {
        self.conn.execute(
            "UPDATE dream_sweeps SET state = ?2 WHERE id = ?1",
            &[Value::Integer(sweep), Value::Text(state.as_str())],
        )?;
        Ok(())
    }

    /// Forgets a pending sweep whose change never reached `MEMORY.md` (the
    /// file changed meanwhile, or the sweep was killed before the rename):
    /// its candidates are tried again by the next sweep.
    pub fn abandon_sweep(&self, sweep: i64) -> Result<(), DbError> {
        self.conn.transaction(|| {
            self.conn.execute(
                "DELETE FROM promotions WHERE sweep_id = ?1",
                &[Value::Integer(sweep)],
            )?;
            self.conn.execute(
                "DELETE FROM dream_sweeps WHERE id = ?1 AND state = 'pending'",
                &[Value::Integer(sweep)],
            )?;
            Ok(())
        })
    }

    /// Sweeps that were interrupted: recorded but not `done`, oldest first.
    pub fn unfinished_sweeps(&self) -> Result<Vec<UnfinishedSweep>, DbError> {
        let mut sweeps = self.conn.query(
            "SELECT id, at, state, pre_text, pre_existed, post_hash, summary FROM dream_sweeps
             WHERE state != 'done' ORDER BY id",
            &[],
            |r| {
                Ok(UnfinishedSweep {
                    sweep: r.get_i64(0),
                    at_ms: r.get_i64(1),
                    state: SweepState::parse(&r.get_text(2)).unwrap_or(SweepState::Pending),
                    change: r.get_opt_text(5).map(|post_hash| SweepChange {
                        sweep: r.get_i64(0),
                        pre_text: (r.get_i64(4) != 0)
                            .then(|| r.get_opt_text(3).unwrap_or_default()),
                        post_hash,
                    }),
                    summary: r.get_opt_text(6),
                    line_hashes: Vec::new(),
                })
            },
        )?;
        for sweep in &mut sweeps {
            sweep.line_hashes = self.conn.query(
                "SELECT line_hash FROM promotions WHERE sweep_id = ?1",
                &[Value::Integer(sweep.sweep)],
                |r| Ok(r.get_text(0)),
            )?;
        }
        Ok(sweeps)
    }

    /// The latest sweep that changed `MEMORY.md` and is not rolled back.
    pub fn last_memory_change(&self) -> Result<Option<SweepChange>, DbError> {
        self.conn.query_row(
            "SELECT id, pre_text, pre_existed, post_hash FROM dream_sweeps
             WHERE post_hash IS NOT NULL AND rolled_back_at IS NULL AND state != 'pending'
             ORDER BY id DESC LIMIT 1",
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

    /// Logs a sweep that ran (dry runs are not logged); returns its number.
    pub fn log_sweep(&self, e: &SweepLogEntry) -> Result<i64, DbError> {
        let phases = e.phases.join(",");
        let (kind, reason) = match &e.refusal {
            Some((kind, reason)) => (Value::Text(kind), Value::Text(reason)),
            None => (Value::Null, Value::Null),
        };
        self.conn.execute(
            "INSERT INTO sweep_log (at, phases, staged, themes, candidates, added, merged, superseded, rewritten, consolidation, refusal_kind, refusal_reason, memory_changed, dreams_changed, dream_sweep)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            &[
                Value::Integer(e.at_ms),
                Value::Text(&phases),
                Value::Integer(e.staged as i64),
                Value::Integer(e.themes as i64),
                Value::Integer(e.candidates as i64),
                Value::Integer(e.added as i64),
                Value::Integer(e.merged as i64),
                Value::Integer(e.superseded as i64),
                Value::Integer(e.rewritten as i64),
                Value::Text(&e.consolidation),
                kind,
                reason,
                Value::Integer(e.memory_changed as i64),
                Value::Integer(e.dreams_changed as i64),
                e.dream_sweep.map_or(Value::Null, Value::Integer),
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The latest `limit` sweeps, newest first: the sweep log, and the
    /// sweeps recorded before it existed (from `dream_sweeps`).
    pub fn sweep_log(&self, limit: u32) -> Result<Vec<SweepLogRecord>, DbError> {
        self.conn.query(
            "SELECT l.id, l.at, l.phases, l.staged, l.themes, l.candidates, l.added, l.merged,
                    l.superseded, l.rewritten, l.consolidation, l.refusal_kind, l.refusal_reason,
                    l.memory_changed, l.dreams_changed, l.dream_sweep, d.rolled_back_at
             FROM sweep_log l LEFT JOIN dream_sweeps d ON d.id = l.dream_sweep
             UNION ALL
             SELECT 0, d.at, NULL, 0, 0, 0,
                    (SELECT count(*) FROM promotions p WHERE p.sweep_id = d.id AND p.merged = 0),
                    (SELECT count(*) FROM promotions p WHERE p.sweep_id = d.id AND p.merged = 1),
                    0, 0, d.consolidation, NULL, NULL,
                    d.post_hash IS NOT NULL, 0, d.id, d.rolled_back_at
             FROM dream_sweeps d
             WHERE NOT EXISTS (SELECT 1 FROM sweep_log l WHERE l.dream_sweep = d.id)
             ORDER BY 2 DESC, 1 DESC LIMIT ?1",
            &[Value::Integer(limit as i64)],
            |r| {
                let phases = r.get_opt_text(2);
                let refusal = match (r.get_opt_text(11), r.get_opt_text(12)) {
                    (Some(kind), Some(reason)) => Some((kind, reason)),
                    _ => None,
                };
                Ok(SweepLogRecord {
                    id: r.get_i64(0),
                    phases_recorded: phases.is_some(),
                    entry: SweepLogEntry {
                        at_ms: r.get_i64(1),
                        phases: phases
                            .unwrap_or_default()
                            .split(',')
                            .filter(|p| !p.is_empty())
                            .map(str::to_string)
                            .collect(),
                        staged: r.get_i64(3) as u32,
                        themes: r.get_i64(4) as u32,
                        candidates: r.get_i64(5) as u32,
                        added: r.get_i64(6) as u32,
                        merged: r.get_i64(7) as u32,
                        superseded: r.get_i64(8) as u32,
                        rewritten: r.get_i64(9) as u32,
                        consolidation: r.get_text(10),
                        refusal,
                        memory_changed: r.get_i64(13) != 0,
                        dreams_changed: r.get_i64(14) != 0,
                        dream_sweep: r.get_opt_i64(15),
                    },
                    rolled_back_at: r.get_opt_i64(16),
                })
            },
        )
    }

    /// The latest `limit` promotions, newest first, with their sweep.
    pub fn promotions(&self, limit: u32) -> Result<Vec<PromotionRecord>, DbError> {
        self.conn.query(
            "SELECT p.sweep_id, d.at, p.source_path, p.source_hash, p.line_hash, p.merged,
                    p.rolled_back, p.citation, p.source_class, p.session_kind, p.fact
             FROM promotions p JOIN dream_sweeps d ON d.id = p.sweep_id
             ORDER BY p.id DESC LIMIT ?1",
            &[Value::Integer(limit as i64)],
            |r| {
                Ok(PromotionRecord {
                    sweep: r.get_i64(0),
                    at_ms: r.get_i64(1),
                    source_path: r.get_text(2),
                    source_hash: r.get_text(3),
                    line_hash: r.get_text(4),
                    merged: r.get_i64(5) != 0,
                    rolled_back: r.get_i64(6) != 0,
                    citation: r.get_opt_text(7),
                    source_class: r.get_opt_text(8).and_then(|c| SourceClass::parse(&c)),
                    session_kind: r.get_opt_text(9).and_then(|k| SessionKind::parse(&k)),
                    fact: r.get_opt_text(10),
                })
            },
        )
    }

    /// Recall activity per day, oldest first.
    pub fn recall_days(&self) -> Result<Vec<RecallDay>, DbError> {
        self.signals.query(
            "SELECT day, sum(hits), count(*) FROM recall_days GROUP BY day ORDER BY day",
            &[],
            |r| {
                Ok(RecallDay {
                    day: r.get_text(0),
                    recalls: r.get_i64(1) as u32,
                    entries: r.get_i64(2) as u32,
                })
            },
        )
    }

    /// The digest of the last sweep summary appended to `DREAMS.md`.
    pub fn dream_digest(&self) -> Result<Option<String>, DbError> {
        self.meta("dream_digest")
    }

    pub fn set_dream_digest(&self, digest: &str) -> Result<(), DbError> {
        self.set_meta("dream_digest", digest)
    }

    /// What the last sweep left for the owner to know: promotions it
    /// deferred for the budget, and a sweep that failed or was interrupted.
    pub fn sweep_notices(&self) -> Result<SweepNotices, DbError> {
        Ok(SweepNotices {
            deferred: self
                .meta("deferred_promotions")?
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            problem: self.meta("sweep_problem")?.filter(|p| !p.is_empty()),
        })
    }

    pub fn set_deferred_promotions(&self, deferred: u32) -> Result<(), DbError> {
        self.set_meta("deferred_promotions", &deferred.to_string())
    }

    /// Sets (or with `None` clears) the sweep problem status shows.
    pub fn set_sweep_problem(&self, problem: Option<&str>) -> Result<(), DbError> {
        self.set_meta("sweep_problem", problem.unwrap_or(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall<'a>(text: &'a str, query: Option<&'a str>, day: &'a str, at: i64) -> Recall<'a> {
        Recall {
            path: "memory/2026-11-28.md",
            text_hash: crate::text::hash::entry_hash(text),
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

    fn promotion(path: &str) -> Promotion {
        Promotion {
            source_path: path.into(),
            source_hash: "h1".into(),
            line_hash: "l1".into(),
            supersedes_key: None,
            observed_at: Some(5),
            merged: false,
            citation: format!("{path}#L3-L3"),
            source_class: SourceClass::Agent,
            session_kind: Some(SessionKind::Interactive),
            fact: "The gateway listens on 8443.".into(),
        }
    }

    #[test]
    fn recalls_per_day_count_every_hit() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("provenance.sqlite"), None, 0).unwrap();
        ledger
            .record_recalls(&[
                recall("- a fact", Some("gateway port"), "2026-12-01", 10),
                recall("- other", Some("x y"), "2026-12-01", 10),
            ])
            .unwrap();
        ledger
            .record_recalls(&[recall("- a fact", Some("port"), "2026-12-01", 20)])
            .unwrap();
        ledger
            .record_recalls(&[recall("- a fact", None, "2026-12-02", 30)])
            .unwrap();
        let days = ledger.recall_days().unwrap();
        assert_eq!(
            days,
            vec![
                RecallDay {
                    day: "2026-12-01".into(),
                    recalls: 3,
                    entries: 2
                },
                RecallDay {
                    day: "2026-12-02".into(),
                    recalls: 1,
                    entries: 1
                },
            ]
        );
    }

    #[test]
    fn the_sweep_log_keeps_every_sweep_and_shows_older_ones() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("provenance.sqlite"), None, 0).unwrap();
        // A sweep recorded before the log existed: only dream_sweeps knows it.
        let old = ledger
            .record_sweep(
                100,
                "deterministic",
                Some((None, "post")),
                &[promotion("memory/a.md")],
                "### Sweep",
            )
            .unwrap();
        let logged = ledger
            .record_sweep(200, "append-only", None, &[promotion("memory/b.md")], "")
            .unwrap();
        ledger
            .log_sweep(&SweepLogEntry {
                at_ms: 200,
                phases: vec!["light".into(), "deep".into()],
                candidates: 4,
                added: 1,
                consolidation: "append-only".into(),
                refusal: Some(("budget".into(), "too long".into())),
                dream_sweep: Some(logged),
                ..Default::default()
            })
            .unwrap();
        ledger
            .log_sweep(&SweepLogEntry {
                at_ms: 300,
                phases: vec!["light".into(), "rem".into()],
                consolidation: "none".into(),
                ..Default::default()
            })
            .unwrap();
        ledger.mark_rolled_back(old, 400).unwrap();
        let log = ledger.sweep_log(10).unwrap();
        let at: Vec<i64> = log.iter().map(|r| r.entry.at_ms).collect();
        assert_eq!(at, vec![300, 200, 100]);
        assert_eq!(log[0].entry.phases, vec!["light", "rem"]);
        assert_eq!(
            log[1].entry.refusal,
            Some(("budget".into(), "too long".into()))
        );
        assert_eq!(log[1].entry.dream_sweep, Some(logged));
        let legacy = &log[2];
        assert_eq!((legacy.id, legacy.phases_recorded), (0, false));
        assert_eq!((legacy.entry.added, legacy.entry.memory_changed), (1, true));
        assert_eq!(legacy.rolled_back_at, Some(400));
        assert_eq!(ledger.sweep_log(1).unwrap().len(), 1);

        let promotions = ledger.promotions(10).unwrap();
        assert_eq!(promotions.len(), 2);
        assert_eq!(promotions[0].citation.as_deref(), Some("memory/b.md#L3-L3"));
        assert_eq!(promotions[0].source_class, Some(SourceClass::Agent));
        assert_eq!(
            (promotions[1].at_ms, promotions[1].rolled_back),
            (100, true)
        );
    }

    #[test]
    fn an_older_ledger_gains_the_new_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provenance.sqlite");
        {
            let conn = crate::storage::sqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE promotions (id INTEGER PRIMARY KEY, sweep_id INTEGER NOT NULL, source_path TEXT NOT NULL, source_hash TEXT NOT NULL, line_hash TEXT NOT NULL, supersedes_key TEXT, observed_at INTEGER, merged INTEGER NOT NULL DEFAULT 0, rolled_back INTEGER NOT NULL DEFAULT 0);
                 CREATE TABLE dream_sweeps (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, consolidation TEXT NOT NULL, pre_text TEXT, pre_existed INTEGER NOT NULL DEFAULT 1, post_hash TEXT, rolled_back_at INTEGER);
                 INSERT INTO dream_sweeps (id, at, consolidation) VALUES (1, 50, 'deterministic');
                 INSERT INTO promotions (sweep_id, source_path, source_hash, line_hash) VALUES (1, 'memory/a.md', 'h', 'l');",
            )
            .unwrap();
            let signals = crate::storage::sqlite::Connection::open(
                &dir.path().join(super::super::SIGNALS_FILE_NAME),
            )
            .unwrap();
            signals
                .execute_batch(
                    "CREATE TABLE recall_days (entry_id INTEGER NOT NULL, day TEXT NOT NULL, PRIMARY KEY (entry_id, day)) WITHOUT ROWID;
                     INSERT INTO recall_days VALUES (1, '2026-11-30');",
                )
                .unwrap();
        }
        let ledger = Ledger::open(&path, None, 0).unwrap();
        let old = &ledger.promotions(10).unwrap()[0];
        assert_eq!((old.citation.as_ref(), old.source_class), (None, None));
        ledger
            .record_sweep(60, "deterministic", None, &[promotion("memory/c.md")], "")
            .unwrap();
        assert_eq!(
            ledger.promotions(1).unwrap()[0].fact.as_deref(),
            Some("The gateway listens on 8443.")
        );
        assert_eq!(
            ledger.recall_days().unwrap(),
            vec![RecallDay {
                day: "2026-11-30".into(),
                recalls: 1,
                entries: 1
            }]
        );
    }

    #[test]
    fn a_read_only_ledger_is_read_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provenance.sqlite");
        assert!(Ledger::open_read_only(&path, None)
            .err()
            .unwrap()
            .contains("no provenance ledger"));
        let ledger = Ledger::open(&path, None, 0).unwrap();
        let id = ledger.id().to_string();
        ledger
            .record_sweep(5, "deterministic", None, &[promotion("memory/a.md")], "")
            .unwrap();
        drop(ledger);
        std::fs::remove_file(dir.path().join(super::super::SIGNALS_FILE_NAME)).unwrap();
        let before = std::fs::read(&path).unwrap();
        // No recall store yet: read as empty, not created.
        let read = Ledger::open_read_only(&path, Some(&id)).unwrap();
        assert_eq!(read.promotions(10).unwrap().len(), 1);
        assert!(read.recall_days().unwrap().is_empty() && read.lost().is_none());
        assert!(
            read.log_sweep(&SweepLogEntry::default()).is_err(),
            "a read-only ledger took a write"
        );
        drop(read);
        assert!(!dir.path().join(super::super::SIGNALS_FILE_NAME).exists());
        // Another ledger than the index knew: lost, but only in what it says.
        let other = Ledger::open_read_only(&path, Some("someone-else")).unwrap();
        assert!(other.lost().unwrap().contains("replaced"));
        drop(other);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // A ledger from before the sweep log (and before versions were
        // recorded) is refused, not migrated.
        crate::storage::sqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE sweep_log; PRAGMA user_version = 0;")
            .unwrap();
        let refused = Ledger::open_read_only(&path, None).err().unwrap();
        assert!(
            refused.contains("predates this version") && refused.contains("the sweep log"),
            "{refused}"
        );
    }
}
