//! The review page's data (`report.gather`): what entered long-term memory,
//! from where and why, read from the ledger, the recall signals, the index
//! and the files. Nothing here syncs, writes, records a recall or calls a
//! model: a person can look without changing what they look at. When the
//! files changed since the last sync, the page says how many are stale
//! instead of catching up.

use super::store::stale_count;
use super::Memory;
use crate::contract::api::{SessionKind, SourceClass};
use crate::contract::error::{MemoryError, Result};
use crate::logic::dream::refusal::{Refusal, RefusalKind};
use crate::logic::dream::signals::{self, GateCheck, Gates};
use crate::logic::dream::sweep::{CandidateView, Consolidation, Phase};
use crate::logic::provenance::shown_class;
use crate::storage::index::ChunkRow;
pub use crate::storage::ledger::dreaming::RecallDay;
use crate::storage::ledger::dreaming::{PromotionRecord, RecallRecord, SweepLogRecord};
use crate::storage::sqlite::DbError;
use crate::text::hash::entry_hash;
use crate::text::layout::{self, Date};
use crate::text::markdown;
use std::collections::HashMap;

/// Most rows of each list one report carries.
const MAX_ROWS: u32 = 1_000;

#[derive(Debug, Clone, PartialEq)]
pub struct ReportRequest {
    /// Dates the report; drives recency and the light phase's lookback.
    pub now_ms: i64,
    pub gates: Gates,
    pub max_sweeps: u32,
    pub max_candidates: u32,
    pub max_promoted: u32,
    pub max_recalled: u32,
}

/// One sweep, as the ledger recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepView {
    /// Its number in the sweep log (0: recorded before the log existed).
    pub id: u32,
    /// Its number in `dream.run`'s report when it promoted or merged; 0 else.
    pub ledger_sweep: u32,
    pub at_ms: i64,
    pub phases: Vec<Phase>,
    /// False for sweeps from before the log: phases and counts unknown.
    pub phases_recorded: bool,
    pub staged: u32,
    pub themes: u32,
    pub candidates: u32,
    pub added: u32,
    pub merged: u32,
    pub superseded: u32,
    pub rewritten: u32,
    pub consolidation: Consolidation,
    pub refusal: Option<Refusal>,
    pub memory_changed: bool,
    pub dreams_changed: bool,
    pub rolled_back_at_ms: Option<i64>,
}

/// A candidate as a sweep would see it now.
#[derive(Debug, Clone, PartialEq)]
pub struct StagedCandidate {
    pub candidate: CandidateView,
    /// The light phase would stage it (trusted, sane, live, recent).
    pub staged: bool,
    /// Every threshold of the deep gate, passed or failed.
    pub checks: Vec<GateCheck>,
}

/// An entry a sweep promoted, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct PromotedEntry {
    pub sweep: u32,
    pub at_ms: i64,
    /// The fact as promoted (or, for older promotions, as `MEMORY.md` now
    /// holds it); empty when neither is known.
    pub fact: String,
    /// The `MEMORY.md` entry holding it now, when it is still there.
    pub line: Option<String>,
    /// `path#Lx-Ly` of the source as promoted (older promotions: as the
    /// line cites it, else the source file).
    pub citation: String,
    pub source_class: Option<SourceClass>,
    pub session_kind: Option<SessionKind>,
    /// True when class and kind were recorded at promotion; false when they
    /// were looked up in the index now (older promotions).
    pub recorded: bool,
    pub merged: bool,
    pub rolled_back: bool,
}

/// Entries observed on one day, of one class and session kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayCount {
    /// `YYYY-MM-DD` (UTC); `None` for undated entries.
    pub day: Option<String>,
    pub source_class: SourceClass,
    pub session_kind: SessionKind,
    pub entries: u32,
}

/// A recalled entry and how much it was recalled.
#[derive(Debug, Clone, PartialEq)]
pub struct RecalledEntry {
    /// `path#Lx-Ly` as last recalled.
    pub citation: String,
    /// The entry as last recalled; untrusted text too (the page marks it).
    pub text: String,
    /// The class recall frames it with; untrusted when the entry is no
    /// longer in its file (nothing vouches for it then).
    pub shown_class: SourceClass,
    /// Whether its file still holds it.
    pub live: bool,
    pub recalls: u32,
    pub distinct_queries: u32,
    pub days: u32,
    pub last_recalled_ms: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceReport {
    pub sweeps: Vec<SweepView>,
    pub candidates: Vec<StagedCandidate>,
    /// Candidates in all (the list may be cut at `max_candidates`).
    pub candidates_total: u32,
    pub promoted: Vec<PromotedEntry>,
    pub entries_by_day: Vec<DayCount>,
    pub recall_days: Vec<RecallDay>,
    pub top_recalled: Vec<RecalledEntry>,
    /// Recalled entries in all.
    pub recalled_total: u32,
    /// Files changed, added or removed since the last sync.
    pub files_stale: u32,
    pub provenance_lost: Option<String>,
}

impl Memory {
    /// See the WIT `report.gather`.
    pub fn report(&mut self, request: &ReportRequest) -> Result<WorkspaceReport> {
        check_limits(request)?;
        let mut skipped = Vec::new();
        let listed = self.workspace.list(&mut skipped)?;
        let files_stale = stale_count(&listed, &self.index.sources().map_err(unreadable)?) as u32;

        let sweeps = self
            .ledger
            .sweep_log(request.max_sweeps)
            .map_err(unreadable)?
            .into_iter()
            .map(sweep_view)
            .collect();

        let memory_text = self
            .workspace
            .read_root_file(layout::MEMORY_FILE)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        // Read once: the most recalled are shown, all of them are candidates.
        let records = self.ledger.recall_records().map_err(unreadable)?;
        let recalled_total = records.len() as u32;
        let most_recalled = most_recalled(&records, request.max_recalled);
        let all = self.candidates_now(records, &memory_text, &request.gates, request.now_ms)?;
        let candidates_total = all.len() as u32;
        let candidates = all
            .into_iter()
            .take(request.max_candidates as usize)
            .map(|(candidate, staged)| StagedCandidate {
                checks: signals::gate_checks(&candidate.signals, &request.gates).to_vec(),
                candidate,
                staged,
            })
            .collect();

        let mut rows = RowsByPath::default();
        let curated: HashMap<String, String> = markdown::parse(&memory_text)
            .entries
            .into_iter()
            .map(|e| (entry_hash(&e.text), e.text))
            .collect();
        let mut promoted = Vec::new();
        for record in self
            .ledger
            .promotions(request.max_promoted)
            .map_err(unreadable)?
        {
            promoted.push(
                self.promoted_entry(record, &curated, &mut rows)
                    .map_err(unreadable)?,
            );
        }

        let entries_by_day = self.entries_by_day().map_err(unreadable)?;

        let top_recalled = self.top_recalled(most_recalled, &mut rows)?;

        Ok(WorkspaceReport {
            sweeps,
            candidates,
            candidates_total,
            promoted,
            entries_by_day,
            recall_days: self.ledger.recall_days().map_err(unreadable)?,
            top_recalled,
            recalled_total,
            files_stale,
            provenance_lost: self.ledger.lost().map(str::to_string),
        })
    }

    /// Entries written per day, by class and session kind.
    fn entries_by_day(&self) -> std::result::Result<Vec<DayCount>, DbError> {
        Ok(self
            .index
            .provenance_by_day()?
            .into_iter()
            .filter_map(|d| {
                Some(DayCount {
                    day: d.day.map(|day| Date::from_ms(day * 86_400_000).to_string()),
                    source_class: SourceClass::parse(&d.source_class)?,
                    session_kind: SessionKind::parse(&d.session_kind)?,
                    entries: d.entries,
                })
            })
            .collect())
    }

    /// The most recalled entries as the page shows them: whether they are
    /// still there, and the class they are shown as.
    fn top_recalled(
        &mut self,
        most_recalled: Vec<RecallRecord>,
        rows: &mut RowsByPath,
    ) -> Result<Vec<RecalledEntry>> {
        let untrusted = self.untrusted_text().map_err(MemoryError::from)?;
        let mut top_recalled = Vec::with_capacity(most_recalled.len());
        for r in most_recalled {
            let row = rows.find(self, &r.path, &r.text_hash).map_err(unreadable)?;
            let shown = row
                .and_then(|row| row.provenance.as_ref())
                .map_or(SourceClass::Untrusted, |p| {
                    shown_class(p, &r.text, &untrusted)
                });
            top_recalled.push(RecalledEntry {
                citation: format!("{}#L{}-L{}", r.path, r.start_line, r.end_line),
                live: row.is_some(),
                shown_class: shown,
                recalls: r.recalls,
                distinct_queries: signals::distinct_queries(&r.query_keys) as u32,
                days: r.days.len() as u32,
                last_recalled_ms: r.last_recalled_at,
                text: r.text,
            });
        }
        Ok(top_recalled)
    }

    /// A promotion with its line in `MEMORY.md` now and its source's
    /// provenance (recorded, or looked up for older promotions).
    fn promoted_entry(
        &self,
        p: PromotionRecord,
        curated: &HashMap<String, String>,
        rows: &mut RowsByPath,
    ) -> std::result::Result<PromotedEntry, crate::storage::sqlite::DbError> {
        let line = curated.get(&p.line_hash).cloned();
        let recorded = p.source_class.is_some();
        let (source_class, session_kind) = if recorded {
            (p.source_class, p.session_kind)
        } else {
            let row = rows.find(self, &p.source_path, &p.source_hash)?;
            let provenance = row.and_then(|r| r.provenance.as_ref());
            (
                provenance.map(|p| SourceClass::lowest(p.source_class, p.file_class)),
                provenance.map(|p| p.session_kind),
            )
        };
        let citation = p
            .citation
            .or_else(|| line.as_deref().and_then(cited_source).map(str::to_string))
            .unwrap_or_else(|| p.source_path.clone());
        Ok(PromotedEntry {
            sweep: p.sweep as u32,
            at_ms: p.at_ms,
            fact: p.fact.or_else(|| line.clone()).unwrap_or_default(),
            line,
            citation,
            source_class,
            session_kind,
            recorded,
            merged: p.merged,
            rolled_back: p.rolled_back,
        })
    }
}

/// Index rows of the files the report looks into, read once per file.
#[derive(Default)]
struct RowsByPath(HashMap<String, Vec<ChunkRow>>);

impl RowsByPath {
    /// The indexed entry of `path` whose text has `text_hash`.
    fn find(
        &mut self,
        memory: &Memory,
        path: &str,
        text_hash: &str,
    ) -> std::result::Result<Option<&ChunkRow>, crate::storage::sqlite::DbError> {
        if !self.0.contains_key(path) {
            let ids = memory.index.entry_ids_of(path)?;
            let rows = memory.index.chunks(&ids)?;
            self.0.insert(path.to_string(), rows);
        }
        Ok(self.0[path]
            .iter()
            .find(|r| entry_hash(&r.text) == text_hash))
    }
}

/// A report request asks for at most `MAX_ROWS` of each list.
fn check_limits(request: &ReportRequest) -> Result<()> {
    for (name, value) in [
        ("max-sweeps", request.max_sweeps),
        ("max-candidates", request.max_candidates),
        ("max-promoted", request.max_promoted),
        ("max-recalled", request.max_recalled),
    ] {
        if value > MAX_ROWS {
            return Err(MemoryError::InvalidInput(format!(
                "{name} is at most {MAX_ROWS}, got {value}"
            )));
        }
    }
    Ok(())
}

/// A database failure while reading for the report.
fn unreadable(e: DbError) -> MemoryError {
    MemoryError::Index(format!(
        "cannot read the memory for the report ({e}); `index` repairs a damaged index"
    ))
}

/// The `max` most recalled records, most first.
fn most_recalled(records: &[RecallRecord], max: u32) -> Vec<RecallRecord> {
    let mut most_recalled: Vec<&RecallRecord> = records.iter().collect();
    most_recalled.sort_by(|a, b| {
        (b.recalls, b.last_recalled_at)
            .cmp(&(a.recalls, a.last_recalled_at))
            .then(a.path.cmp(&b.path))
            .then(a.start_line.cmp(&b.start_line))
    });
    most_recalled
        .into_iter()
        .take(max as usize)
        .cloned()
        .collect()
}

/// The `path#Lx-Ly` a `MEMORY.md` line cites after `Source: `.
fn cited_source(line: &str) -> Option<&str> {
    let (_, rest) = line.rsplit_once("Source: ")?;
    rest.split_whitespace().next().filter(|c| c.contains("#L"))
}

fn sweep_view(r: SweepLogRecord) -> SweepView {
    let e = r.entry;
    SweepView {
        id: r.id as u32,
        ledger_sweep: e.dream_sweep.unwrap_or(0) as u32,
        at_ms: e.at_ms,
        phases: e.phases.iter().filter_map(|p| Phase::parse(p)).collect(),
        phases_recorded: r.phases_recorded,
        staged: e.staged,
        themes: e.themes,
        candidates: e.candidates,
        added: e.added,
        merged: e.merged,
        superseded: e.superseded,
        rewritten: e.rewritten,
        // An unknown name (a newer component's) reads as no consolidation.
        consolidation: Consolidation::parse(&e.consolidation).unwrap_or(Consolidation::None),
        refusal: e.refusal.map(|(kind, reason)| {
            Refusal::new(
                RefusalKind::parse(&kind).unwrap_or(RefusalKind::Unchecked),
                reason,
            )
        }),
        memory_changed: e.memory_changed,
        dreams_changed: e.dreams_changed,
        rolled_back_at_ms: r.rolled_back_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cited_source_is_the_last_source_anchor() {
        assert_eq!(
            cited_source("- The gateway listens on 8443. Source: memory/2026-12-01.md#L3-L3 <!-- importance: 8 -->"),
            Some("memory/2026-12-01.md#L3-L3")
        );
        assert_eq!(cited_source("- Source: nowhere"), None);
        assert_eq!(cited_source("- plain"), None);
    }

    #[test]
    fn an_unknown_refusal_kind_still_shows_its_reason() {
        let view = sweep_view(SweepLogRecord {
            id: 3,
            entry: crate::storage::ledger::dreaming::SweepLogEntry {
                phases: vec!["light".into(), "deep".into(), "dusk".into()],
                consolidation: "append-only".into(),
                refusal: Some(("from-the-future".into(), "why".into())),
                dream_sweep: Some(2),
                ..Default::default()
            },
            phases_recorded: true,
            rolled_back_at: None,
        });
        assert_eq!(view.phases, vec![Phase::Light, Phase::Deep]);
        assert_eq!(view.ledger_sweep, 2);
        assert_eq!(view.consolidation, Consolidation::AppendOnly);
        let refusal = view.refusal.unwrap();
        assert_eq!(
            (refusal.kind, refusal.reason.as_str()),
            (RefusalKind::Unchecked, "why")
        );
    }
}
