//! The dreaming sweep (`dream.run`, `dream.rollback`): recall signals in,
//! `DREAMS.md` blocks and gated promotions into `MEMORY.md` out. The
//! decisions are the pure functions of `crate::logic::dream`; this module reads
//! the files, the ledger and the index, calls the model once, and writes
//! through hash-checked renames.

use super::write::one_line;
use super::write::storage_failure;
use super::{embedding_text, entry_hash, sha256_hex, Memory};
use crate::contract::api::{SourceClass, SyncRequest, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::host::model::{CompletionRequest, Message, ModelFailure, Role};
use crate::logic::dream::budget;
use crate::logic::dream::candidates::{self, LiveEntry, Rehydrated};
use crate::logic::dream::consolidate::{self, Plan, Promoted, RewriteCheck};
use crate::logic::dream::dreams_md;
use crate::logic::dream::junk::junk_reason;
use crate::logic::dream::refusal::{Refusal, RefusalKind};
use crate::logic::dream::signals::{self, Gates, Observed, Scored};
use crate::storage::index::ChunkRow;
use crate::storage::ledger::{Promotion, RecallRecord, SweepChange, SweepLogEntry, SweepState};
use crate::text::layout::{self, Date};
use crate::text::markdown;
use std::collections::{HashMap, HashSet};

pub const DREAMS_FILE: &str = "DREAMS.md";
const DAY_MS: i64 = 86_400_000;
/// Entries shown per managed block.
const MAX_STAGED_SHOWN: usize = 50;
const MAX_THEMES: usize = 5;
const MAX_LASTING_TRUTHS: usize = 3;
const SHOWN_CHARS: usize = 240;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    Light,
    Rem,
    Deep,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DreamRequest {
    pub phases: Vec<Phase>,
    pub dry_run: bool,
    pub gates: Gates,
    pub context: TurnContext,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    SourceVanished,
    SourceChanged,
    Ineligible,
    Junk,
    Duplicate,
    AlreadyCurated,
    BelowGate,
    OverLimit,
    /// Passed, but `MEMORY.md` has no room within its budget.
    Deferred,
    Promoted,
    Merged,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CandidateView {
    pub citation: String,
    pub text: String,
    pub source_class: SourceClass,
    pub signals: Scored,
    pub verdict: Verdict,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidation {
    None,
    ModelRewrite,
    Deterministic,
    AppendOnly,
}

impl Consolidation {
    /// The name the ledger records (`dream_sweeps`, `sweep_log`).
    pub fn as_str(self) -> &'static str {
        match self {
            Consolidation::None => "none",
            Consolidation::ModelRewrite => "model rewrite",
            Consolidation::Deterministic => "deterministic",
            Consolidation::AppendOnly => "append-only",
        }
    }

    pub fn parse(name: &str) -> Option<Consolidation> {
        [
            Consolidation::None,
            Consolidation::ModelRewrite,
            Consolidation::Deterministic,
            Consolidation::AppendOnly,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Light => "light",
            Phase::Rem => "rem",
            Phase::Deep => "deep",
        }
    }

    pub fn parse(name: &str) -> Option<Phase> {
        [Phase::Light, Phase::Rem, Phase::Deep]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DreamReport {
    pub sweep: u32,
    pub phases: Vec<Phase>,
    pub staged: u32,
    pub themes: u32,
    pub candidates: Vec<CandidateView>,
    pub added: Vec<String>,
    pub merged: Vec<String>,
    pub superseded: Vec<String>,
    pub rewritten: Vec<String>,
    /// Existing lines an accepted rewrite dropped (within the loss bound).
    pub dropped: Vec<String>,
    pub consolidation: Consolidation,
    /// Why the model's rewrite was not used, when it was not.
    pub refusal: Option<Refusal>,
    pub memory_changed: bool,
    pub dreams_changed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackReport {
    pub sweep: u32,
    pub entries_before: u32,
    pub entries_after: u32,
}

/// One recorded entry on its way through the gates.
struct Candidate {
    citation: String,
    path: String,
    /// The live entry's text (the recorded one when the source is gone).
    text: String,
    /// What it says: the text on one line without its list marker and
    /// without the speaker prefix the ledger recorded (`assistant: `).
    fact: String,
    /// Its project keys.
    projects: Vec<String>,
    /// The owner's problem it answers (their words), when it took that
    /// problem's recalls: how the problem will be put next time.
    problem: Option<String>,
    text_hash: String,
    row: Option<ChunkRow>,
    observed: Observed,
    scored: Scored,
    verdict: Option<(Verdict, String)>,
}

impl Candidate {
    fn class(&self) -> SourceClass {
        self.row
            .as_ref()
            .and_then(|r| r.provenance.as_ref())
            .map_or(SourceClass::Untrusted, |p| {
                crate::logic::provenance::lowest(p.source_class, p.file_class)
            })
    }

    fn decided(&self) -> bool {
        self.verdict.is_some()
    }

    fn set(&mut self, verdict: Verdict, reason: impl Into<String>) {
        self.verdict = Some((verdict, reason.into()));
    }

    fn is(&self, verdict: Verdict) -> bool {
        self.verdict.as_ref().is_some_and(|(v, _)| *v == verdict)
    }

    /// Staged by the light phase: trusted, sane and live.
    fn stageable(&self) -> bool {
        matches!(
            self.verdict.as_ref().map(|(v, _)| *v),
            None | Some(
                Verdict::BelowGate
                    | Verdict::OverLimit
                    | Verdict::Deferred
                    | Verdict::Promoted
                    | Verdict::Merged
                    | Verdict::AlreadyCurated
            )
        )
    }

    /// In `MEMORY.md` (now or before), as far as this sweep knows.
    fn curated(&self) -> bool {
        self.is(Verdict::Merged) || self.is(Verdict::AlreadyCurated)
    }
}

impl Memory {
    /// See the WIT `dream.run`. A sweep that fails is recorded where the
    /// owner looks: `DREAMS.md`, the sweep log and status.
    pub fn dream(&mut self, request: &DreamRequest) -> Result<DreamReport> {
        self.writable("dream.run (even a dry run syncs first)")?;
        request
            .gates
            .validate()
            .map_err(MemoryError::InvalidInput)?;
        if request.dry_run {
            return self.sweep(request);
        }
        self.finish_interrupted_sweeps()?;
        let last_change = self.ledger.last_memory_change()?.map(|c| c.sweep);
        match self.sweep(request) {
            Ok(report) => {
                // A problem status showed is over once a sweep succeeds
                // (written only when there is one: each ledger write syncs).
                if self.ledger.sweep_notices()?.problem.is_some() {
                    self.ledger
                        .set_sweep_problem(None)
                        .map_err(storage_failure)?;
                }
                Ok(report)
            }
            Err(e) => {
                let changed = self
                    .ledger
                    .last_memory_change()
                    .ok()
                    .flatten()
                    .map(|c| c.sweep)
                    .filter(|&sweep| Some(sweep) != last_change);
                self.record_failed_sweep(&e, &request.context, changed);
                Err(e)
            }
        }
    }

    /// Records a failed sweep, as far as the failure lets it: a summary in
    /// `DREAMS.md`, a sweep-log entry and the problem status shows. Each is
    /// tried on its own (a full disk may refuse all of them; the host keeps
    /// its own record of the error).
    fn record_failed_sweep(
        &mut self,
        error: &MemoryError,
        context: &TurnContext,
        changed: Option<i64>,
    ) {
        let now = context.now_ms;
        let outcome = match changed {
            Some(sweep) => format!("It had changed MEMORY.md (sweep {sweep}; rollback works)."),
            None => "MEMORY.md was not changed.".to_string(),
        };
        let note = format!(
            "### Sweep {}\n\n- Failed: {}. {outcome} The next sweep tries again.\n",
            Date::from_ms(context.local_ms()),
            dreams_md::shown(&error.to_string(), 400)
        );
        let problem = format!(
            "the sweep of {} failed: {error}",
            Date::from_ms(context.local_ms())
        );
        if let Err(e) = self.write_dreams(&[], Some(&note), now) {
            eprintln!(
                "memory-core: the sweep failed ({error}), and DREAMS.md could not record it: {e}"
            );
        }
        let entry = SweepLogEntry {
            at_ms: now,
            phases: Vec::new(),
            consolidation: Consolidation::None.as_str().to_string(),
            refusal: Some(("failed".to_string(), error.to_string())),
            ..Default::default()
        };
        if let Err(e) = self
            .ledger
            .log_sweep(&entry)
            .and_then(|_| self.ledger.set_sweep_problem(Some(&problem)))
        {
            eprintln!(
                "memory-core: the sweep failed ({error}), and the ledger could not record it: {e}"
            );
        }
    }

    /// Completes or abandons the sweeps an interruption (a kill, a crash, a
    /// failed write) left unfinished, so rollback always has the pre-image
    /// of a `MEMORY.md` a sweep changed and `DREAMS.md` always gets the
    /// summary. A sweep whose file reached `MEMORY.md` (the file is the one
    /// it wrote, or holds every line it added) is completed: its summary is
    /// appended. One whose file never got there is forgotten, its candidates
    /// left for the next sweep, and `DREAMS.md` says so. Either is reported
    /// in status until the next sweep succeeds. Returns what it did.
    pub fn finish_interrupted_sweeps(&mut self) -> Result<Vec<String>> {
        let mut done = Vec::new();
        for sweep in self.ledger.unfinished_sweeps()? {
            let date = Date::from_ms(sweep.at_ms);
            let landing = match (&sweep.change, sweep.state) {
                (_, SweepState::Committed | SweepState::Done) | (None, _) => Landing::Landed,
                (Some(change), SweepState::Pending) => {
                    let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
                    change_landed(change, current.as_deref(), &sweep.line_hashes)
                }
            };
            let what = match landing {
                Landing::NotLanded => {
                    // The note and the log first: a kill or a full disk before
                    // the record is forgotten leaves the sweep pending, and the
                    // next open does this again (the note is not repeated).
                    let note = format!(
                        "### Sweep {date}\n\n- Interrupted before it changed MEMORY.md: nothing was promoted; its candidates are tried again by the next sweep.\n"
                    );
                    self.append_to_dreams_once(&note, sweep.at_ms)?;
                    let entry = SweepLogEntry {
                        at_ms: sweep.at_ms,
                        phases: vec![Phase::Deep.as_str().to_string()],
                        consolidation: Consolidation::None.as_str().to_string(),
                        refusal: Some((
                            "interrupted".to_string(),
                            "stopped before the rename that commits MEMORY.md".to_string(),
                        )),
                        dreams_changed: true,
                        ..Default::default()
                    };
                    self.ledger.log_sweep(&entry).map_err(storage_failure)?;
                    self.ledger
                        .abandon_sweep(sweep.sweep)
                        .map_err(storage_failure)?;
                    format!(
                        "the sweep of {date} was interrupted before it changed MEMORY.md; nothing was promoted"
                    )
                }
                Landing::Unknown => {
                    // MEMORY.md was edited since and holds none of the sweep's
                    // lines: whether its change landed cannot be told. Its
                    // record and pre-image are kept (rollback refuses an
                    // edited file and says the pre-image is kept).
                    let note = format!(
                        "### Sweep {date}\n\n- Interrupted around the moment it replaced MEMORY.md, which has been edited since and holds none of the lines it added: whether its change landed cannot be told. Its record and the file as it was before are kept in the ledger.\n"
                    );
                    self.append_to_dreams_once(&note, sweep.at_ms)?;
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Done)
                        .map_err(storage_failure)?;
                    format!(
                        "the sweep of {date} (sweep {}) was interrupted around its change to MEMORY.md, which was edited since; its pre-image is kept in the ledger",
                        sweep.sweep
                    )
                }
                Landing::Landed => {
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Committed)
                        .map_err(storage_failure)?;
                    let summary = sweep.summary.unwrap_or_else(|| {
                        format!("### Sweep {date}\n\n- Promotions were recorded; the summary was not kept.\n")
                    });
                    let how = if sweep.change.is_some() {
                        "after it changed MEMORY.md"
                    } else {
                        "after it recorded its merges"
                    };
                    if !self.dreams_holds(&summary)? {
                        let summary = format!(
                            "{}\n- Interrupted {how}; this summary was written when the memory was next opened.\n",
                            summary.trim_end_matches('\n')
                        );
                        self.append_to_dreams_once(&summary, sweep.at_ms)?;
                    }
                    self.ledger
                        .set_sweep_state(sweep.sweep, SweepState::Done)
                        .map_err(storage_failure)?;
                    let rollback = if sweep.change.is_some() {
                        ", rollback works"
                    } else {
                        ""
                    };
                    format!(
                        "the sweep of {date} (sweep {}) was interrupted {how}; it was completed (summary in DREAMS.md{rollback})",
                        sweep.sweep
                    )
                }
            };
            self.ledger
                .set_sweep_problem(Some(&what))
                .map_err(storage_failure)?;
            done.push(what);
        }
        Ok(done)
    }

    /// Whether `DREAMS.md` holds `text` (a summary or note written before).
    fn dreams_holds(&self, text: &str) -> Result<bool> {
        let dreams = self.workspace.read_root_file(DREAMS_FILE)?;
        Ok(dreams
            .as_deref()
            .is_some_and(|d| String::from_utf8_lossy(d).contains(text.trim_end())))
    }

    /// Appends `text` to `DREAMS.md` unless it is there already; an error
    /// when it could not be written (someone kept editing the file).
    fn append_to_dreams_once(&self, text: &str, now: i64) -> Result<()> {
        if self.dreams_holds(text)? {
            return Ok(());
        }
        self.write_dreams(&[], Some(text), now)?;
        if self.dreams_holds(text)? {
            Ok(())
        } else {
            Err(MemoryError::Io(
                "DREAMS.md kept changing; the note of an interrupted sweep was not written (the next open tries again)".into(),
            ))
        }
    }

    /// One sweep (see `dream`).
    fn sweep(&mut self, request: &DreamRequest) -> Result<DreamReport> {
        let mut phases = if request.phases.is_empty() {
            vec![Phase::Light, Phase::Rem, Phase::Deep]
        } else {
            request.phases.clone()
        };
        phases.sort();
        phases.dedup();
        let now = request.context.now_ms;
        self.sync(SyncRequest::default())?;
        let memory_bytes = self.workspace.read_root_file(layout::MEMORY_FILE)?;
        let memory_text = match &memory_bytes {
            None => String::new(),
            Some(bytes) => String::from_utf8(bytes.clone()).map_err(|_| {
                MemoryError::InvalidInput(
                    "MEMORY.md is not valid UTF-8; dreaming does not rewrite it until it is fixed"
                        .into(),
                )
            })?,
        };
        let records = self.ledger.recall_records()?;
        let mut candidates = self.gather(records, &memory_text, &request.gates, now)?;
        let mut report = DreamReport {
            sweep: 0,
            phases: phases.clone(),
            staged: 0,
            themes: 0,
            candidates: Vec::new(),
            added: Vec::new(),
            merged: Vec::new(),
            superseded: Vec::new(),
            rewritten: Vec::new(),
            dropped: Vec::new(),
            consolidation: Consolidation::None,
            refusal: None,
            memory_changed: false,
            dreams_changed: false,
        };
        let mut summary = None;
        let mut recorded = None;
        if phases.contains(&Phase::Deep) && !request.dry_run {
            // Best first: when the budget cannot take them all, the best fit.
            let mut promoted: Vec<usize> = (0..candidates.len())
                .filter(|&i| candidates[i].is(Verdict::Promoted))
                .collect();
            promoted.sort_by(|&a, &b| {
                candidates[b]
                    .scored
                    .score
                    .total_cmp(&candidates[a].scored.score)
                    .then(candidates[a].citation.cmp(&candidates[b].citation))
            });
            let promoting = if promoted.is_empty() {
                None
            } else {
                self.promote(
                    &mut candidates,
                    &promoted,
                    &memory_text,
                    memory_bytes.is_some(),
                    request,
                    &mut report,
                )?
            };
            let deferred = candidates
                .iter()
                .filter(|c| c.is(Verdict::Deferred))
                .count();
            if self.ledger.sweep_notices()?.deferred != deferred as u32 {
                self.ledger
                    .set_deferred_promotions(deferred as u32)
                    .map_err(storage_failure)?;
            }
            summary = Some(match promoting {
                Some(promoting) => {
                    recorded = promoting.sweep;
                    promoting.summary
                }
                None => sweep_summary(&candidates, &report, request.context.local_ms()),
            });
        }
        // Light and REM show the sweep's outcome: written after deep, a second
        // sweep with nothing new renders the same blocks.
        let mut blocks: Vec<(&str, &str, String)> = Vec::new();
        if phases.contains(&Phase::Light) {
            let deep_ran = phases.contains(&Phase::Deep) && !request.dry_run;
            let (body, staged) = light_block(&candidates, &request.gates, now, deep_ran);
            report.staged = staged;
            blocks.push(("light", "## Light Sleep", body));
        }
        if phases.contains(&Phase::Rem) {
            let (body, themes) = rem_block(&candidates, &request.gates, now);
            report.themes = themes;
            blocks.push(("rem", "## REM Sleep", body));
        }
        // A summary is written when the sweep did something worth reading,
        // and the same outcome (nothing new) is not logged twice.
        let noteworthy = report.memory_changed
            || report.refusal.is_some()
            || candidates.iter().any(|c| {
                c.is(Verdict::SourceVanished)
                    || c.is(Verdict::SourceChanged)
                    || c.is(Verdict::OverLimit)
                    || c.is(Verdict::Deferred)
            });
        let mut summary = summary.filter(|_| noteworthy);
        let digest = summary
            .as_deref()
            .map(|s| sha256_hex(s.split_once('\n').map_or("", |(_, rest)| rest).as_bytes()));
        if digest.is_some() && self.ledger.dream_digest()? == digest {
            summary = None;
        }
        if !request.dry_run {
            report.dreams_changed = self.write_dreams(&blocks, summary.as_deref(), now)?;
            if report.dreams_changed && summary.is_some() {
                if let Some(digest) = &digest {
                    self.ledger.set_dream_digest(digest)?;
                }
            }
            // Done once its summary is in DREAMS.md (or deliberately not
            // written: the same outcome as the last); else the next open
            // appends it.
            if let Some(sweep) = recorded {
                let written = match &summary {
                    Some(summary) => self.dreams_holds(summary)?,
                    None => true,
                };
                if written {
                    self.ledger
                        .set_sweep_state(sweep, SweepState::Done)
                        .map_err(storage_failure)?;
                }
            }
        }
        candidates.sort_by(|a, b| b.scored.score.total_cmp(&a.scored.score));
        report.candidates = candidates.into_iter().map(view).collect();
        if !request.dry_run {
            // The sweep's work is done and durable (MEMORY.md, its pre-image
            // and promotions, DREAMS.md): a log entry that cannot be written
            // costs the review page a row, never the sweep's report.
            if let Err(e) = self.ledger.log_sweep(&log_entry(&report, now)) {
                eprintln!("memory-core: the sweep ran, but its sweep-log entry could not be recorded: {e}");
            }
        }
        Ok(report)
    }

    /// The deep phase's candidates among `records` as a sweep would see them
    /// now against `memory_text`, without syncing the index first (the review
    /// page reads, never writes), each with whether the light phase would
    /// stage it. Best first.
    pub(super) fn candidates_now(
        &mut self,
        records: Vec<RecallRecord>,
        memory_text: &str,
        gates: &Gates,
        now: i64,
    ) -> Result<Vec<(CandidateView, bool)>> {
        gates.validate().map_err(MemoryError::InvalidInput)?;
        let mut candidates = self.gather(records, memory_text, gates, now)?;
        candidates.sort_by(|a, b| {
            b.scored
                .score
                .total_cmp(&a.scored.score)
                .then(a.citation.cmp(&b.citation))
        });
        Ok(candidates
            .into_iter()
            .map(|c| {
                let staged = c.stageable() && within_days(&c, gates.light_lookback_days, now);
                (view(c), staged)
            })
            .collect())
    }

    /// Writes the managed blocks and the summary into `DREAMS.md`, keeping
    /// everything else in it; when someone saves the file meanwhile, the
    /// sweep's part is applied again to their version (twice at most).
    fn write_dreams(
        &self,
        blocks: &[(&str, &str, String)],
        summary: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        if blocks.is_empty() && summary.is_none() {
            return Ok(false);
        }
        for _ in 0..2 {
            let before = self.workspace.read_root_file(DREAMS_FILE)?;
            let text = before
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            let mut after = text.clone();
            for (phase, heading, body) in blocks {
                after = dreams_md::with_block(&after, phase, heading, body);
            }
            if let Some(summary) = summary {
                after = dreams_md::with_summary(&after, summary);
            }
            if before.is_some() && after == text {
                return Ok(false);
            }
            let expected = before.as_deref().map(sha256_hex);
            if self.workspace.replace_root_file(
                DREAMS_FILE,
                expected.as_deref(),
                Some(after.as_bytes()),
                now,
            )? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every recorded entry, rehydrated, checked and scored, with the verdict
    /// of the first check it fails (or `Promoted` for the best that pass).
    fn gather(
        &mut self,
        records: Vec<RecallRecord>,
        memory_text: &str,
        gates: &Gates,
        now: i64,
    ) -> Result<Vec<Candidate>> {
        let mut files: HashMap<String, Option<LiveFile>> = HashMap::new();
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            if !files.contains_key(&record.path) {
                let loaded = self.live_file(&record.path)?;
                files.insert(record.path.clone(), loaded);
            }
            let file = files.get(&record.path).and_then(|f| f.as_ref());
            out.push(rehydrated(record, file));
        }
        answers_take_their_problems_recalls(&mut out, &files);
        let curated: HashSet<(String, Vec<String>)> = markdown::parse(memory_text)
            .entries
            .iter()
            .map(|e| {
                (
                    consolidate::fact_key(&e.text),
                    sorted(&e.annotations.projects),
                )
            })
            .collect();
        // The same fact said in other words is already curated too.
        let curated_facts: Vec<candidates::FactWords> = markdown::parse(memory_text)
            .entries
            .iter()
            .map(|e| {
                candidates::FactWords::new(
                    consolidate::without_source(
                        crate::text::words::strip_list_marker(e.text.trim()).trim(),
                    ),
                    &e.annotations.projects,
                )
            })
            .collect();
        let promoted_before: HashMap<String, bool> =
            self.ledger.promoted_sources()?.into_iter().collect();
        // A trusted file may hold a copy of untrusted text (pasted into a
        // new note): the copy is no more trustworthy than the original.
        let untrusted = self.untrusted_text().map_err(MemoryError::from)?;
        for c in out.iter_mut().filter(|c| !c.decided()) {
            let provenance = c.row.as_ref().and_then(|r| r.provenance.clone());
            match provenance {
                None => c.set(Verdict::Ineligible, "no provenance record vouches for it"),
                Some(p) if !p.promotable => {
                    let why = if p.session_kind != crate::contract::api::SessionKind::Interactive {
                        format!("written in a {} session", p.session_kind.as_str())
                    } else {
                        format!(
                            "class {} in a file of class {}",
                            p.source_class.as_str(),
                            p.file_class.as_str()
                        )
                    };
                    c.set(Verdict::Ineligible, format!("not promotable: {why}"));
                }
                Some(_) => {}
            }
            if c.decided() {
                continue;
            }
            let provenance = c.row.as_ref().and_then(|r| r.provenance.as_ref());
            let order = provenance.and_then(|p| p.order);
            let session = provenance.and_then(|p| p.session_id.clone());
            let statement = crate::text::statement::classify(&c.fact);
            if untrusted.copied_by(&consolidate::fact_key(&c.fact), order, session.as_deref()) {
                c.set(
                    Verdict::Ineligible,
                    "not promotable: it repeats the text of an untrusted or system entry written before it",
                );
            } else if let Some(why) = junk_reason(&c.fact) {
                c.set(Verdict::Junk, why);
            } else if let Some(why) = statement.refusal() {
                c.set(Verdict::Junk, why);
            } else if curated.contains(&(consolidate::fact_key(&c.fact), sorted(&c.projects))) || {
                let words = candidates::FactWords::new(&c.fact, &c.projects);
                curated_facts.iter().any(|f| f.same_fact(&words))
            } {
                c.set(Verdict::AlreadyCurated, "already in MEMORY.md");
            } else if let Some(rolled_back) = promoted_before.get(&c.text_hash) {
                c.set(
                    Verdict::AlreadyCurated,
                    if *rolled_back {
                        "promoted before and rolled back by the owner"
                    } else {
                        "promoted in an earlier sweep"
                    },
                );
            }
        }
        // Near-duplicates pool their signals into the strongest copy.
        let mut order: Vec<usize> = (0..out.len()).filter(|&i| !out[i].decided()).collect();
        order.sort_by(|&a, &b| {
            (out[b].observed.recalls, out[b].observed.last_recalled_at)
                .cmp(&(out[a].observed.recalls, out[a].observed.last_recalled_at))
                .then(out[a].citation.cmp(&out[b].citation))
        });
        let facts: Vec<candidates::FactWords> = out
            .iter()
            .map(|c| candidates::FactWords::new(&c.fact, &c.projects))
            .collect();
        let leaders = candidates::group_same_facts(&facts, &order);
        for &i in &order {
            let leader = leaders[i];
            if leader != i {
                let absorbed = out[i].observed.clone();
                out[leader].observed.absorb(&absorbed);
                if out[leader].problem.is_none() {
                    out[leader].problem = out[i].problem.clone();
                }
                let why = format!("near-duplicate of {}", out[leader].citation);
                out[i].set(Verdict::Duplicate, why);
            }
        }
        for c in out.iter_mut() {
            let tags = signals::concept_tags(&c.fact).len();
            c.scored = signals::score(&c.observed, tags, now, gates.recency_half_life_days);
        }
        let mut passing: Vec<usize> = Vec::new();
        for (i, c) in out.iter_mut().enumerate().filter(|(_, c)| !c.decided()) {
            let failed = signals::failed_gates(&c.scored, gates);
            if failed.is_empty() {
                passing.push(i);
            } else {
                c.set(Verdict::BelowGate, failed.join("; "));
            }
        }
        passing.sort_by(|&a, &b| out[b].scored.score.total_cmp(&out[a].scored.score));
        for (rank, &i) in passing.iter().enumerate() {
            if rank < gates.max_promotions as usize {
                let why = format!("score {:.3}", out[i].scored.score);
                out[i].set(Verdict::Promoted, why);
            } else {
                out[i].set(
                    Verdict::OverLimit,
                    format!("at most {} promotions per sweep", gates.max_promotions),
                );
            }
        }
        Ok(out)
    }

    /// A memory file's entries and their index rows, `None` when it is gone.
    fn live_file(&self, path: &str) -> Result<Option<LiveFile>> {
        let Ok(memory_path) = layout::memory_path(path) else {
            return Ok(None);
        };
        match self
            .workspace
            .read(&memory_path, crate::storage::workspace::MAX_INDEXED_BYTES)
        {
            Ok(content) => {
                let ids = self.index.entry_ids_of(path)?;
                Ok(Some(LiveFile {
                    entries: markdown::parse(&content.text).entries,
                    rows: self.index.chunks(&ids)?,
                }))
            }
            Err(MemoryError::NotFound(_)) | Err(MemoryError::AccessDenied(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Consolidates the promoted candidates into `MEMORY.md`, within the
    /// bootstrap budget (what does not fit is deferred). Returns the summary
    /// of what it did and the sweep it recorded, if any.
    fn promote(
        &mut self,
        candidates: &mut [Candidate],
        promoted: &[usize],
        memory_text: &str,
        existed: bool,
        request: &DreamRequest,
        report: &mut DreamReport,
    ) -> Result<Option<Promoting>> {
        let facts: Vec<Promoted> = promoted
            .iter()
            .map(|&i| promoted_fact(&candidates[i]))
            .collect();
        let observed: Vec<Option<i64>> = promoted
            .iter()
            .map(|&i| observed_at(&candidates[i]))
            .collect();
        let promoted_lines = self.ledger.promoted_lines_with_keys()?;
        // What a set of facts retires: the promoted lines whose supersedes
        // key one of them carries, observed no later than it.
        let retire_for = |taken: &[usize]| -> HashSet<String> {
            let keys: HashMap<&str, Option<i64>> = taken
                .iter()
                .filter_map(|&k| Some((facts[k].supersedes_key.as_deref()?, observed[k])))
                .collect();
            promoted_lines
                .iter()
                .filter(|line| {
                    keys.get(line.supersedes_key.as_str()).is_some_and(|newer| {
                        newer.unwrap_or(i64::MAX) >= line.observed_at.unwrap_or(0)
                    })
                })
                .map(|line| line.line_hash.clone())
                .collect()
        };
        let retire = retire_for(&(0..facts.len()).collect::<Vec<_>>());
        let max_chars = self.settings.bootstrap.max_file_chars;
        let hash = |text: &str| entry_hash(text);
        let nothing_retired = |_: &[usize]| HashSet::new();

        // The model's rewrite (validated, so within the budget), or the
        // deterministic plan with what fits.
        let outcome =
            match self.model_rewrite(memory_text, &facts, &retire, max_chars, &request.gates) {
                Ok(text) => Outcome {
                    plan: consolidate::rewrite_plan(memory_text, text, &facts, &retire, entry_hash),
                    consolidation: Consolidation::ModelRewrite,
                    deferred: Vec::new(),
                },
                Err(Fallback::NoModel) => {
                    let (plan, deferred) =
                        budget::fitting(memory_text, &facts, &retire_for, max_chars, &hash);
                    Outcome {
                        plan,
                        consolidation: Consolidation::Deterministic,
                        deferred,
                    }
                }
                Err(Fallback::Refused(refusal)) => {
                    report.refusal = Some(refusal);
                    let (plan, deferred) =
                        budget::fitting(memory_text, &facts, &nothing_retired, max_chars, &hash);
                    Outcome {
                        plan,
                        consolidation: Consolidation::AppendOnly,
                        deferred,
                    }
                }
            };
        let batch = Batch {
            promoted,
            facts: &facts,
            observed: &observed,
        };
        let base = (existed, memory_text.to_string());
        if let Some(done) = self.commit(candidates, &batch, outcome, base, request, report)? {
            return Ok(Some(done));
        }
        // Someone edited MEMORY.md meanwhile: keep their edit and append to
        // the file as it is now.
        let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
        let current_text = current
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        report.refusal = Some(Refusal::new(
            RefusalKind::ConcurrentEdit,
            "MEMORY.md changed while the sweep ran; the rewrite was abandoned, the edit kept and the entries appended",
        ));
        let (plan, deferred) =
            budget::fitting(&current_text, &facts, &nothing_retired, max_chars, &hash);
        let outcome = Outcome {
            plan,
            consolidation: Consolidation::AppendOnly,
            deferred,
        };
        let base = (current.is_some(), current_text);
        if let Some(done) = self.commit(candidates, &batch, outcome, base, request, report)? {
            return Ok(Some(done));
        }
        report.refusal = Some(Refusal::new(
            RefusalKind::ConcurrentEdit,
            "MEMORY.md kept changing while the sweep ran; nothing was promoted this time",
        ));
        report.consolidation = Consolidation::AppendOnly;
        for &i in promoted {
            candidates[i].set(Verdict::OverLimit, "deferred: MEMORY.md kept changing");
        }
        Ok(None)
    }

    /// Commits one consolidation against `base` (whether `MEMORY.md`
    /// existed, and its text). The sweep is recorded first, durably: the
    /// pre-image, the promotions and the `DREAMS.md` summary, `pending`
    /// while it changes the file. Then the file is renamed into place and
    /// the sweep marked committed. A kill anywhere in between leaves a
    /// sweep the next open completes or abandons
    /// (`finish_interrupted_sweeps`). `None` (and nothing recorded) when
    /// the file changed since `base` was read.
    fn commit(
        &mut self,
        candidates: &mut [Candidate],
        batch: &Batch<'_>,
        outcome: Outcome,
        base: (bool, String),
        request: &DreamRequest,
        report: &mut DreamReport,
    ) -> Result<Option<Promoting>> {
        let now = request.context.now_ms;
        let Outcome {
            plan,
            consolidation,
            deferred,
        } = outcome;
        let verdicts: Vec<_> = batch
            .promoted
            .iter()
            .map(|&i| candidates[i].verdict.clone())
            .collect();
        let restore = |candidates: &mut [Candidate]| {
            for (&i, verdict) in batch.promoted.iter().zip(&verdicts) {
                candidates[i].verdict = verdict.clone();
            }
        };
        // The sweep's outcome as it will be once the file is in place.
        let memory_changed = plan.changes(&base.1);
        let merged: HashSet<&str> = plan.merged.iter().map(String::as_str).collect();
        let budget_note = deferral_reason(
            plan.text.chars().count(),
            self.settings.bootstrap.max_file_chars,
        );
        for (k, &i) in batch.promoted.iter().enumerate() {
            if deferred.contains(&k) {
                candidates[i].set(Verdict::Deferred, budget_note.clone());
            } else if merged.contains(batch.facts[k].citation.as_str()) {
                candidates[i].set(Verdict::Merged, "matched an existing MEMORY.md entry");
            }
        }
        report.added = plan.added.clone();
        report.merged = plan.merged.clone();
        report.superseded = plan.superseded.clone();
        report.rewritten = plan.rewritten.clone();
        report.dropped = plan.dropped.clone();
        report.consolidation = consolidation;
        report.memory_changed = memory_changed;
        let summary = sweep_summary(candidates, report, request.context.local_ms());
        let promotions: Vec<Promotion> = (0..batch.facts.len())
            .filter(|k| !deferred.contains(k))
            .map(|k| {
                promotion(
                    &candidates[batch.promoted[k]],
                    &batch.facts[k],
                    batch.observed[k],
                    &plan,
                    &merged,
                )
            })
            .collect();
        if promotions.is_empty() {
            // Everything deferred: nothing is written.
            return Ok(Some(Promoting {
                summary,
                sweep: None,
            }));
        }
        let post_hash = sha256_hex(plan.text.as_bytes());
        let change =
            memory_changed.then(|| (base.0.then_some(base.1.as_str()), post_hash.as_str()));
        let sweep = self
            .ledger
            .record_sweep(now, consolidation.as_str(), change, &promotions, &summary)
            .map_err(storage_failure)?;
        if memory_changed {
            let expected = base.0.then(|| sha256_hex(base.1.as_bytes()));
            let written = self.workspace.replace_root_file(
                layout::MEMORY_FILE,
                expected.as_deref(),
                Some(plan.text.as_bytes()),
                now,
            );
            match written {
                Ok(true) => self
                    .ledger
                    .set_sweep_state(sweep, SweepState::Committed)
                    .map_err(storage_failure)?,
                Ok(false) => {
                    self.ledger.abandon_sweep(sweep).map_err(storage_failure)?;
                    restore(candidates);
                    unreport(report);
                    return Ok(None);
                }
                Err(e) => {
                    // The file is the old one; should this fail too, the
                    // next open finds the sweep pending and abandons it.
                    let _ = self.ledger.abandon_sweep(sweep);
                    restore(candidates);
                    unreport(report);
                    return Err(e);
                }
            }
        }
        report.sweep = sweep as u32;
        if memory_changed {
            self.sync(SyncRequest::default())?;
        }
        Ok(Some(Promoting {
            summary,
            sweep: Some(sweep),
        }))
    }

    /// One model turn for the revised file, validated; the reason it was not
    /// usable otherwise.
    fn model_rewrite(
        &self,
        memory_text: &str,
        facts: &[Promoted],
        retire: &HashSet<String>,
        max_chars: usize,
        gates: &Gates,
    ) -> std::result::Result<String, Fallback> {
        // A file already past its budget is never sent: the model could only
        // fit it by cutting far more than the loss bound allows.
        let chars = memory_text.chars().count();
        if chars > max_chars {
            return Err(Fallback::Refused(Refusal::new(
                RefusalKind::Budget,
                format!(
                    "MEMORY.md is already past its budget ({chars} > {max_chars} characters); the model was not asked"
                ),
            )));
        }
        let retire_lines: Vec<String> = markdown::parse(memory_text)
            .entries
            .iter()
            .filter(|e| retire.contains(&entry_hash(&e.text)))
            .map(|e| e.text.clone())
            .collect();
        let (system, user) = consolidate::prompt(memory_text, facts, &retire_lines, max_chars);
        let request = CompletionRequest {
            purpose: "dream",
            messages: vec![
                Message::new(Role::System, system),
                Message::new(Role::User, user),
            ],
            tools: Vec::new(),
            max_output_tokens: (max_chars / 3 + 512).min(32_000) as u32,
            timeout_ms: gates.model_timeout_ms,
        };
        let reply = match self.model.complete(&request) {
            Ok(reply) => reply.text,
            Err(ModelFailure::Unavailable(_)) => return Err(Fallback::NoModel),
            Err(failure) => {
                return Err(Fallback::Refused(Refusal::new(
                    RefusalKind::ModelFailed,
                    failure.to_string(),
                )))
            }
        };
        let untrusted = self.index.untrusted_entry_texts().map_err(|e| {
            Fallback::Refused(Refusal::new(
                RefusalKind::Unchecked,
                format!("cannot check the reply: {e}"),
            ))
        })?;
        let check = RewriteCheck {
            old: memory_text,
            citations: facts.iter().map(|f| f.citation.as_str()).collect(),
            candidates: facts.iter().map(|f| f.text.as_str()).collect(),
            may_retire: retire,
            untrusted: &untrusted,
            max_chars,
            projects: facts
                .iter()
                .map(|f| (f.citation.as_str(), f.projects.clone()))
                .collect(),
        };
        consolidate::validate_rewrite(&reply, &check, entry_hash).map_err(|refusal| {
            Fallback::Refused(refusal.prefixed("the model's file was refused: "))
        })
    }

    /// See the WIT `dream.rollback`.
    pub fn dream_rollback(&mut self, context: &TurnContext) -> Result<RollbackReport> {
        self.writable("dream.rollback")?;
        if !context.sender_is_owner {
            return Err(MemoryError::AccessDenied(
                "only the owner can roll back a sweep".into(),
            ));
        }
        self.finish_interrupted_sweeps()?;
        let Some(change) = self.ledger.last_memory_change()? else {
            return Err(MemoryError::NotFound(
                "no sweep has changed MEMORY.md (or every change was rolled back)".into(),
            ));
        };
        let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
        let current_hash = current.as_deref().map(sha256_hex);
        if current_hash.as_deref() != Some(change.post_hash.as_str()) {
            return Err(MemoryError::InvalidInput(format!(
                "MEMORY.md was edited after sweep {}; nothing was overwritten (the pre-image is kept in the ledger)",
                change.sweep
            )));
        }
        let entries =
            |text: Option<&str>| text.map_or(0, |t| markdown::parse(t).entries.len() as u32);
        let current_text = current
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let replaced = self.workspace.replace_root_file(
            layout::MEMORY_FILE,
            current_hash.as_deref(),
            change.pre_text.as_deref().map(str::as_bytes),
            context.now_ms,
        )?;
        if !replaced {
            return Err(MemoryError::InvalidInput(
                "MEMORY.md changed during the rollback; nothing was overwritten".into(),
            ));
        }
        self.ledger.mark_rolled_back(change.sweep, context.now_ms)?;
        let report = RollbackReport {
            sweep: change.sweep as u32,
            entries_before: entries(current_text.as_deref()),
            entries_after: entries(change.pre_text.as_deref()),
        };
        let note = format!(
            "### Rollback {}\n\n- MEMORY.md restored to its state before sweep {} ({} entries, was {}); its promotions will not be made again.\n",
            context.local_date(),
            report.sweep,
            report.entries_after,
            report.entries_before
        );
        self.write_dreams(&[], Some(&note), context.now_ms)?;
        self.sync(SyncRequest::default())?;
        Ok(report)
    }
}

enum Fallback {
    NoModel,
    Refused(Refusal),
}

/// The candidates a sweep promotes: their indices among the candidates,
/// their facts and when each was observed.
struct Batch<'a> {
    promoted: &'a [usize],
    facts: &'a [Promoted],
    observed: &'a [Option<i64>],
}

/// One consolidation, ready to commit.
struct Outcome {
    plan: Plan,
    consolidation: Consolidation,
    /// Facts (by index in the batch) left for a later sweep: the budget.
    deferred: Vec<usize>,
}

/// What the deep phase committed.
struct Promoting {
    /// Its `DREAMS.md` summary.
    summary: String,
    /// The sweep recorded, unless everything was deferred.
    sweep: Option<i64>,
}

/// What became of a pending sweep's change to `MEMORY.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landing {
    /// The file is the one it wrote, or (edited since) holds a line it added.
    Landed,
    /// The file is still its pre-image.
    NotLanded,
    /// Edited since, holding none of its lines: it cannot be told.
    Unknown,
}

/// Whether a pending sweep's change reached `MEMORY.md` (`current`), by
/// the file and the hashes of the entries its promotions wrote (`lines`);
/// a line that was already in the pre-image proves nothing.
fn change_landed(change: &SweepChange, current: Option<&[u8]>, lines: &[String]) -> Landing {
    let current_hash = current.map(sha256_hex);
    if current_hash.as_deref() == Some(change.post_hash.as_str()) {
        return Landing::Landed;
    }
    let pre_hash = change.pre_text.as_deref().map(|t| sha256_hex(t.as_bytes()));
    if current_hash == pre_hash {
        return Landing::NotLanded;
    }
    let Some(current) = current else {
        // The file is gone: deleted after the rename, or before it by hand.
        return Landing::Unknown;
    };
    let hashes = |text: &str| -> HashSet<String> {
        markdown::parse(text)
            .entries
            .iter()
            .map(|e| entry_hash(&e.text))
            .collect()
    };
    let before = hashes(change.pre_text.as_deref().unwrap_or(""));
    let now = hashes(&String::from_utf8_lossy(current));
    if lines.iter().any(|h| !before.contains(h) && now.contains(h)) {
        Landing::Landed
    } else {
        Landing::Unknown
    }
}

/// Forgets what a consolidation that did not reach `MEMORY.md` put in the
/// report.
fn unreport(report: &mut DreamReport) {
    report.added.clear();
    report.merged.clear();
    report.superseded.clear();
    report.rewritten.clear();
    report.dropped.clear();
    report.memory_changed = false;
}

/// When a candidate's source was observed.
fn observed_at(c: &Candidate) -> Option<i64> {
    c.row
        .as_ref()
        .and_then(|r| r.provenance.as_ref())
        .and_then(|p| p.observed_at_ms)
}

/// The ledger's record of one promotion under `plan`.
fn promotion(
    c: &Candidate,
    fact: &Promoted,
    observed_at: Option<i64>,
    plan: &Plan,
    merged: &HashSet<&str>,
) -> Promotion {
    Promotion {
        source_path: c.path.clone(),
        source_hash: c.text_hash.clone(),
        line_hash: line_hash_of(&plan.text, &fact.citation)
            .unwrap_or_else(|| entry_hash(&fact.line())),
        supersedes_key: fact.supersedes_key.clone(),
        observed_at,
        merged: merged.contains(fact.citation.as_str()),
        citation: fact.citation.clone(),
        source_class: c.class(),
        session_kind: c
            .row
            .as_ref()
            .and_then(|r| r.provenance.as_ref())
            .map(|p| p.session_kind),
        fact: fact.text.clone(),
    }
}

/// Why a promotion waits: the file is at its budget.
fn deferral_reason(chars: usize, max_chars: usize) -> String {
    format!(
        "deferred: it does not fit MEMORY.md's budget ({chars} of {max_chars} characters used); tried again when there is room"
    )
}

/// What the sweep log keeps of a sweep.
fn log_entry(report: &DreamReport, now: i64) -> SweepLogEntry {
    SweepLogEntry {
        at_ms: now,
        phases: report
            .phases
            .iter()
            .map(|p| p.as_str().to_string())
            .collect(),
        staged: report.staged,
        themes: report.themes,
        candidates: report.candidates.len() as u32,
        added: report.added.len() as u32,
        merged: report.merged.len() as u32,
        superseded: report.superseded.len() as u32,
        rewritten: report.rewritten.len() as u32,
        consolidation: report.consolidation.as_str().to_string(),
        refusal: report
            .refusal
            .as_ref()
            .map(|r| (r.kind.as_str().to_string(), r.reason.clone())),
        memory_changed: report.memory_changed,
        dreams_changed: report.dreams_changed,
        dream_sweep: (report.sweep > 0).then_some(report.sweep as i64),
    }
}

/// A recorded entry located in its live file (or found gone).
/// A recalled entry's file as it is now, parsed once per sweep.
struct LiveFile {
    entries: Vec<markdown::Entry>,
    rows: Vec<ChunkRow>,
}

fn rehydrated(record: RecallRecord, file: Option<&LiveFile>) -> Candidate {
    let observed = Observed {
        recalls: record.recalls,
        relevance_sum: record.relevance_sum,
        relevance_count: record.relevance_count,
        last_recalled_at: record.last_recalled_at,
        query_keys: record.query_keys.clone(),
        days: record.days.clone(),
    };
    let recorded_citation = format!(
        "{}#L{}-L{}",
        record.path, record.start_line, record.end_line
    );
    let mut candidate = Candidate {
        citation: recorded_citation,
        path: record.path.clone(),
        text: record.text.clone(),
        fact: String::new(),
        projects: Vec::new(),
        problem: None,
        text_hash: record.text_hash.clone(),
        row: None,
        observed,
        scored: Scored::default(),
        verdict: None,
    };
    let Some(file) = file else {
        candidate.set(Verdict::SourceVanished, format!("{} is gone", record.path));
        return candidate;
    };
    let live: Vec<LiveEntry<'_>> = file
        .entries
        .iter()
        .map(|e| LiveEntry {
            start_line: e.start_line,
            end_line: e.end_line,
            text: &e.text,
        })
        .collect();
    match candidates::rehydrate(
        &record.text,
        record.heading.as_deref(),
        record.start_line,
        &live,
    ) {
        Rehydrated::Changed => {
            candidate.set(
                Verdict::SourceChanged,
                format!("{} no longer holds the entry", record.path),
            );
        }
        Rehydrated::Found(i) => {
            let entry = &file.entries[i];
            candidate.citation =
                format!("{}#L{}-L{}", record.path, entry.start_line, entry.end_line);
            candidate.text = entry.text.clone();
            candidate.text_hash = entry_hash(&entry.text);
            candidate.row = file
                .rows
                .iter()
                .find(|r| r.start_line == entry.start_line && r.end_line == entry.end_line)
                .cloned();
        }
    }
    let speaker = candidate
        .row
        .as_ref()
        .and_then(|r| r.provenance.as_ref())
        .and_then(|p| p.speaker.as_deref());
    candidate.fact = fact_of(&candidate.text, speaker);
    candidate.projects = candidate
        .row
        .as_ref()
        .map(|r| r.projects.clone())
        .unwrap_or_default();
    candidate
}

/// The owner's problem, recalled, is looking for its answer: when a
/// recalled line is the owner's question or bare symptom in a transcript,
/// the agent's reply right after it in the same session (within
/// `ANSWER_WINDOW` entries, before the owner speaks again) that resolves it
/// takes the problem's recall signals too — as a candidate of its own when
/// nothing recalled it directly. The problem line itself is never promoted.
fn answers_take_their_problems_recalls(
    out: &mut Vec<Candidate>,
    files: &HashMap<String, Option<LiveFile>>,
) {
    use crate::text::statement::{classify, Statement};
    let role_of = |row: Option<&ChunkRow>| {
        row.and_then(|r| r.provenance.as_ref())
            .and_then(|p| p.role.clone())
    };
    // (path, answer line, the problem's signals, the problem as said)
    let mut lent: Vec<(String, u32, Observed, String)> = Vec::new();
    // A question answered by a bare value ("It's vpn-wuhw.corp-gw.net."):
    // the identifiers of the answer, to find the fact it restates.
    let mut asked: Vec<(HashSet<String>, Vec<String>, Observed)> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for c in out.iter() {
        // Only the owner's own problem: its words may shape the answer's
        // triggers.
        let owners = c
            .row
            .as_ref()
            .and_then(|r| r.provenance.as_ref())
            .is_some_and(|p| p.source_class == SourceClass::Owner && p.promotable);
        if c.decided() || role_of(c.row.as_ref()).as_deref() != Some("user") || !owners {
            continue;
        }
        let said = classify(&c.fact);
        if !matches!(
            said,
            Statement::Symptom | Statement::Question | Statement::Fact
        ) {
            continue;
        }
        let Some(Some(file)) = files.get(&c.path) else {
            continue;
        };
        let Some(start) = c.row.as_ref().map(|r| r.start_line) else {
            continue;
        };
        let Some(at) = file.entries.iter().position(|e| e.start_line == start) else {
            continue;
        };
        match answer_after(file, at) {
            Some(Answer::Fix { line, text }) => {
                lent.push((c.path.clone(), line, c.observed.clone(), c.fact.clone()));
                // What the agent answered with a fix naming the same code
                // was the owner's problem, however it was put ("so getting
                // PGX-9032 …" / "We hit PGX-9032 before: …").
                if said == Statement::Fact
                    && !candidates::identifiers(&c.fact)
                        .is_disjoint(&candidates::identifiers(&text))
                {
                    problems.push(c.citation.clone());
                }
            }
            Some(Answer::Value(ids)) if said != Statement::Fact => {
                asked.push((ids, c.projects.clone(), c.observed.clone()));
            }
            _ => {}
        }
    }
    for c in out.iter_mut().filter(|c| problems.contains(&c.citation)) {
        c.set(
            Verdict::Junk,
            "a problem report without its resolution (the agent's answer after it holds the fix)",
        );
    }
    // The owner kept asking for a value the agent answered from memory: the
    // standing statement of that value (a fact naming every identifier of
    // the answer, of the same projects or none) takes the question's signals.
    // Standing statements: promotable facts naming a value, computed once.
    let standing: Vec<(usize, HashSet<String>)> = if asked.is_empty() {
        Vec::new()
    } else {
        out.iter()
            .enumerate()
            .filter(|(_, c)| {
                !c.decided()
                    && c.row
                        .as_ref()
                        .and_then(|r| r.provenance.as_ref())
                        .is_some_and(|p| p.promotable)
                    && classify(&c.fact) == Statement::Fact
                    && crate::logic::dream::junk::junk_reason(&c.fact).is_none()
            })
            .map(|(i, c)| (i, candidates::identifiers(&c.fact)))
            .filter(|(_, ids)| !ids.is_empty())
            .collect()
    };
    for (ids, projects, observed) in asked {
        let target = standing
            .iter()
            .filter(|(i, named)| {
                let c = &out[*i];
                (c.projects.is_empty() || sorted(&c.projects) == sorted(&projects))
                    && ids.is_subset(named)
            })
            .map(|(i, _)| (*i, &out[*i]))
            .max_by_key(|(_, c)| (c.observed.recalls, std::cmp::Reverse(c.citation.clone())))
            .map(|(i, _)| i);
        if let Some(i) = target {
            out[i].observed.absorb(&observed);
        }
    }
    for (path, line, observed, problem) in lent {
        let at = out
            .iter()
            .position(|c| c.path == path && c.row.as_ref().is_some_and(|r| r.start_line == line));
        match at {
            Some(i) => {
                out[i].observed.absorb(&observed);
                out[i].problem.get_or_insert(problem);
            }
            None => {
                let Some(Some(file)) = files.get(&path) else {
                    continue;
                };
                let Some(entry) = file.entries.iter().find(|e| e.start_line == line) else {
                    continue;
                };
                let record = RecallRecord {
                    path: path.clone(),
                    text_hash: entry_hash(&entry.text),
                    text: entry.text.clone(),
                    heading: entry.heading.clone(),
                    start_line: entry.start_line,
                    end_line: entry.end_line,
                    recalls: observed.recalls,
                    relevance_sum: observed.relevance_sum,
                    relevance_count: observed.relevance_count,
                    last_recalled_at: observed.last_recalled_at,
                    first_recalled_at: observed.last_recalled_at,
                    query_keys: observed.query_keys.clone(),
                    days: observed.days.clone(),
                };
                let mut answer = rehydrated(record, Some(file));
                answer.problem = Some(problem);
                out.push(answer);
            }
        }
    }
}

/// Entries after the owner's problem that may hold the agent's answer (in
/// the trusted transcript note: tool output lives in its sibling).
const ANSWER_WINDOW: usize = 4;

/// The agent's answer to the owner's line at `at` of a transcript.
enum Answer {
    /// A resolution: its line and what it says.
    Fix { line: u32, text: String },
    /// Another reply naming values (identifiers): "It's db-7f3k.internal."
    Value(HashSet<String>),
}

/// The agent's first reply after the entry at `at`, within `ANSWER_WINDOW`
/// entries and before the owner speaks again; its process talk ("Let me
/// check the logs.") is not the answer yet.
fn answer_after(file: &LiveFile, at: usize) -> Option<Answer> {
    use crate::text::statement::{classify, Statement};
    for entry in file.entries.iter().skip(at + 1).take(ANSWER_WINDOW) {
        let provenance = file
            .rows
            .iter()
            .find(|r| r.start_line == entry.start_line && r.end_line == entry.end_line)
            .and_then(|r| r.provenance.as_ref());
        let speaker = provenance.and_then(|p| p.speaker.as_deref());
        match provenance.and_then(|p| p.role.as_deref()) {
            Some("user") => return None, // the owner spoke again: no answer
            Some("assistant") => {
                let reply = fact_of(&entry.text, speaker);
                match classify(&reply) {
                    Statement::Process | Statement::Chatter => continue,
                    Statement::Resolution => {
                        return Some(Answer::Fix {
                            line: entry.start_line,
                            text: reply,
                        })
                    }
                    _ => {
                        let ids = candidates::identifiers(&reply);
                        return (!ids.is_empty()).then_some(Answer::Value(ids));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// What an entry says: one line, no list marker, and without the speaker
/// prefix its write recorded (`- assistant: …`, `- user (dana): …`). Only a
/// recorded prefix comes off: text never decides who said it.
fn fact_of(text: &str, speaker: Option<&str>) -> String {
    let line = one_line(&embedding_text(text));
    match speaker.and_then(|s| line.strip_prefix(&format!("{}: ", one_line(s)))) {
        Some(rest) => rest.trim().to_string(),
        None => line,
    }
}

/// The `MEMORY.md` entry a candidate becomes: one line, its own triggers
/// (or its concept tags) and importance (or one from its score).
fn promoted_fact(c: &Candidate) -> Promoted {
    let row = c.row.as_ref();
    let text = c.fact.clone();
    let triggers = match row.map(|r| r.triggers.clone()).filter(|t| !t.is_empty()) {
        Some(own) => own,
        None => consolidate::derive_triggers_answering(
            &text,
            c.problem.as_deref(),
            &c.observed.query_keys,
            &c.projects,
        ),
    };
    let triggers = triggers
        .iter()
        .map(|t| one_line(t).replace([',', ';'], " "))
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .collect();
    let importance = row
        .and_then(|r| r.importance)
        .unwrap_or_else(|| ((c.scored.score * 10.0).round() as u8).clamp(3, 10));
    Promoted {
        text,
        citation: c.citation.clone(),
        triggers,
        importance,
        supersedes_key: row
            .and_then(|r| r.provenance.as_ref())
            .and_then(|p| p.supersedes_key.clone()),
        projects: c.projects.clone(),
    }
}

/// The text hash of the entry of `text` that cites `citation`.
fn line_hash_of(text: &str, citation: &str) -> Option<String> {
    let anchor = format!("Source: {citation}");
    markdown::parse(text)
        .entries
        .iter()
        .find(|e| e.text.contains(&anchor))
        .map(|e| entry_hash(&e.text))
}

fn view(c: Candidate) -> CandidateView {
    let source_class = c.class();
    let (verdict, reason) = c
        .verdict
        .clone()
        .unwrap_or((Verdict::BelowGate, String::new()));
    CandidateView {
        citation: c.citation,
        // Text nobody vouches for is never shown, not even in a report.
        text: if verdict == Verdict::Ineligible {
            String::new()
        } else {
            c.text
        },
        source_class,
        signals: c.scored,
        verdict,
        reason,
    }
}

/// Project keys in a canonical order, for comparing two entries' sets.
fn sorted(keys: &[String]) -> Vec<String> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.dedup();
    keys
}

fn within_days(c: &Candidate, days: u32, now: i64) -> bool {
    c.observed.last_recalled_at >= now - days as i64 * DAY_MS
}

/// The light phase's block: recent recalls, deduplicated, staged.
fn light_block(
    candidates: &[Candidate],
    gates: &Gates,
    now: i64,
    promoted_now: bool,
) -> (String, u32) {
    let mut staged: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.stageable() && within_days(c, gates.light_lookback_days, now))
        .collect();
    staged.sort_by(|a, b| {
        b.scored
            .score
            .total_cmp(&a.scored.score)
            .then(a.citation.cmp(&b.citation))
    });
    let mut body = String::new();
    if staged.is_empty() {
        body.push_str(&format!(
            "_Nothing recalled in the last {} days is waiting for promotion._\n",
            gates.light_lookback_days
        ));
    }
    for c in staged.iter().take(MAX_STAGED_SHOWN) {
        let status = match c.verdict.as_ref() {
            Some((Verdict::BelowGate, why)) => format!("staged (needs: {why})"),
            Some((Verdict::OverLimit | Verdict::Deferred, why)) => {
                format!("staged (passed; {why})")
            }
            Some((Verdict::AlreadyCurated, why)) if why.contains("rolled back") => {
                "rolled back by the owner".to_string()
            }
            Some((Verdict::AlreadyCurated | Verdict::Merged, _)) => "in MEMORY.md".to_string(),
            _ if promoted_now => "in MEMORY.md".to_string(),
            _ => "staged (passes the deep gate)".to_string(),
        };
        body.push_str(&format!(
            "- Candidate: {}\n  - evidence: {}\n  - recalls: {} · distinct queries: {} · days: {}\n  - status: {status}\n",
            dreams_md::shown(&embedding_text(&c.text), SHOWN_CHARS),
            c.citation,
            c.scored.recalls,
            c.scored.distinct_queries,
            c.scored.days,
        ));
    }
    (body, staged.len() as u32)
}

/// The REM phase's block: concepts that keep surfacing, with evidence, and
/// the strongest candidates as possible lasting truths.
fn rem_block(candidates: &[Candidate], gates: &Gates, now: i64) -> (String, u32) {
    let recent: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| {
            (c.stageable() || c.is(Verdict::AlreadyCurated))
                && within_days(c, gates.rem_lookback_days, now)
        })
        .collect();
    let mut by_tag: HashMap<String, Vec<&Candidate>> = HashMap::new();
    for c in &recent {
        for tag in signals::concept_tags(&c.text) {
            by_tag.entry(tag).or_default().push(c);
        }
    }
    let mut themes: Vec<(String, Vec<&Candidate>)> =
        by_tag.into_iter().filter(|(_, cs)| cs.len() >= 2).collect();
    themes.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    themes.truncate(MAX_THEMES);
    let mut body = String::from("### Reflections\n\n");
    if themes.is_empty() {
        body.push_str(&format!(
            "_No theme recurred across the last {} days of recalls._\n",
            gates.rem_lookback_days
        ));
    }
    for (tag, cs) in &themes {
        let evidence: Vec<&str> = cs.iter().take(3).map(|c| c.citation.as_str()).collect();
        body.push_str(&format!(
            "- Theme: `{tag}` kept surfacing across {} memories.\n  - evidence: {}\n",
            cs.len(),
            evidence.join(", ")
        ));
    }
    let mut lasting: Vec<&&Candidate> = recent
        .iter()
        .filter(|c| c.stageable() && !c.curated() && !c.is(Verdict::Promoted) && c.scored.days >= 2)
        .collect();
    lasting.sort_by(|a, b| {
        b.scored
            .score
            .total_cmp(&a.scored.score)
            .then(a.citation.cmp(&b.citation))
    });
    if !lasting.is_empty() {
        body.push_str("\n### Possible Lasting Truths\n\n");
        for c in lasting.iter().take(MAX_LASTING_TRUTHS) {
            body.push_str(&format!(
                "- {} (evidence: {}; recalled on {} days)\n",
                dreams_md::shown(&embedding_text(&c.text), SHOWN_CHARS),
                c.citation,
                c.scored.days
            ));
        }
    }
    (body, themes.len() as u32)
}

/// The deep phase's readable summary: added, merged, superseded, skipped and
/// why. The first line dates it; the rest is what it did.
fn sweep_summary(candidates: &[Candidate], report: &DreamReport, now: i64) -> String {
    let mut s = format!("### Sweep {}\n\n", Date::from_ms(now));
    s.push_str(&format!(
        "- Consolidation: {}{}.\n",
        report.consolidation.as_str(),
        report
            .refusal
            .as_ref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    ));
    let list = |s: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            s.push_str(&format!("- {title}:\n"));
            for item in items {
                s.push_str(&format!("  - {}\n", dreams_md::shown(item, SHOWN_CHARS)));
            }
        }
    };
    let added: Vec<String> = report
        .added
        .iter()
        .map(|line| embedding_text(crate::text::annotations::split_trailing(line).0))
        .collect();
    list(&mut s, "Added", &added);
    list(&mut s, "Merged into existing entries", &report.merged);
    list(&mut s, "Superseded", &report.superseded);
    list(&mut s, "Rewritten by the model", &report.rewritten);
    list(&mut s, "Dropped by the model", &report.dropped);
    let skipped: Vec<String> = candidates
        .iter()
        .filter_map(|c| {
            let (verdict, why) = c.verdict.as_ref()?;
            let shown = matches!(
                verdict,
                Verdict::SourceVanished
                    | Verdict::SourceChanged
                    | Verdict::Junk
                    | Verdict::OverLimit
                    | Verdict::Deferred
            ) || (*verdict == Verdict::Ineligible && c.observed.recalls >= 3);
            shown.then(|| format!("{} — {why}", c.citation))
        })
        .collect();
    list(&mut s, "Skipped", &skipped);
    let deferred = candidates
        .iter()
        .filter(|c| c.is(Verdict::Deferred))
        .count();
    if deferred > 0 {
        s.push_str(&format!(
            "- Budget full: {deferred} deferred (MEMORY.md has no room for them within its budget; each sweep tries again).\n"
        ));
    }
    if report.added.is_empty()
        && report.merged.is_empty()
        && report.superseded.is_empty()
        && report.rewritten.is_empty()
    {
        s.push_str("- Nothing entered MEMORY.md.\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::api::Settings;

    const OLD: &str = "# Memory\n\n- The owner lives in Lisbon.\n";
    const NEW: &str =
        "# Memory\n\n- The owner lives in Lisbon.\n- The gateway listens on 8443. Source: memory/2026-12-01.md#L3-L3\n";
    const SUMMARY: &str = "### Sweep 2026-12-02\n\n- Consolidation: deterministic.\n- Added:\n  - The gateway listens on 8443.\n";
    const AT: i64 = 1_796_176_800_000;

    fn open(dir: &std::path::Path) -> Memory {
        Memory::open(
            Settings::reference(dir),
            Box::new(crate::host::embedding::NoEmbedder),
            Box::new(crate::host::model::NoModel),
        )
        .unwrap()
    }

    /// Records the sweep that turns `OLD` into `NEW`, as a sweep does just
    /// before its rename.
    fn pending_sweep(memory: &Memory) -> i64 {
        let added = &markdown::parse(NEW).entries[1].text;
        let promotion = Promotion {
            source_path: "memory/2026-12-01.md".into(),
            source_hash: entry_hash("- The gateway listens on 8443."),
            line_hash: entry_hash(added),
            supersedes_key: None,
            observed_at: None,
            merged: false,
            citation: "memory/2026-12-01.md#L3-L3".into(),
            source_class: SourceClass::Owner,
            session_kind: None,
            fact: "The gateway listens on 8443.".into(),
        };
        memory
            .ledger
            .record_sweep(
                AT,
                "deterministic",
                Some((Some(OLD), &sha256_hex(NEW.as_bytes()))),
                &[promotion],
                SUMMARY,
            )
            .unwrap()
    }

    fn read(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap_or_default()
    }

    fn owner() -> TurnContext {
        TurnContext {
            now_ms: AT + 3_600_000,
            sender_is_owner: true,
            ..Default::default()
        }
    }

    #[test]
    fn killed_before_the_rename_the_sweep_is_abandoned_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        // The next open finds it pending with MEMORY.md still the old file.
        let mut memory = open(dir.path());
        assert_eq!(read(dir.path(), "MEMORY.md"), OLD);
        assert!(read(dir.path(), "DREAMS.md").contains("Interrupted before it changed MEMORY.md"));
        assert!(!read(dir.path(), "DREAMS.md").contains("- Added:"));
        assert!(memory.ledger.unfinished_sweeps().unwrap().is_empty());
        assert!(
            memory.ledger.promoted_sources().unwrap().is_empty(),
            "its candidates are tried again"
        );
        let problem = memory.ledger.sweep_notices().unwrap().problem.unwrap();
        assert!(problem.contains("interrupted before"), "{problem}");
        assert!(matches!(
            memory.dream_rollback(&owner()),
            Err(MemoryError::NotFound(_))
        ));
    }

    #[test]
    fn killed_after_the_rename_the_sweep_is_completed_and_rollback_works() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        std::fs::write(dir.path().join("MEMORY.md"), NEW).unwrap(); // the rename
        let mut memory = open(dir.path());
        let dreams = read(dir.path(), "DREAMS.md");
        assert!(dreams.contains(SUMMARY.trim_end()), "{dreams}");
        assert!(dreams.contains("Interrupted after it changed MEMORY.md"));
        assert!(memory.ledger.unfinished_sweeps().unwrap().is_empty());
        // Finishing again adds nothing.
        assert!(memory.finish_interrupted_sweeps().unwrap().is_empty());
        assert_eq!(read(dir.path(), "DREAMS.md"), dreams);
        let rolled = memory.dream_rollback(&owner()).unwrap();
        assert_eq!((rolled.entries_before, rolled.entries_after), (2, 1));
        assert_eq!(read(dir.path(), "MEMORY.md"), OLD);
    }

    #[test]
    fn a_file_edited_after_the_rename_still_counts_as_landed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let memory = open(dir.path());
        pending_sweep(&memory);
        drop(memory);
        std::fs::write(
            dir.path().join("MEMORY.md"),
            format!("{NEW}- Typed by hand.\n"),
        )
        .unwrap();
        let memory = open(dir.path());
        assert!(read(dir.path(), "DREAMS.md").contains("Interrupted after it changed MEMORY.md"));
        assert!(memory.ledger.last_memory_change().unwrap().is_some());
    }

    #[test]
    fn a_committed_sweep_gets_its_summary_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), OLD).unwrap();
        let mut memory = open(dir.path());
        let sweep = pending_sweep(&memory);
        std::fs::write(dir.path().join("MEMORY.md"), NEW).unwrap();
        memory
            .ledger
            .set_sweep_state(sweep, SweepState::Committed)
            .unwrap();
        // The summary made it to DREAMS.md before the kill.
        std::fs::write(
            dir.path().join("DREAMS.md"),
            format!("# Dreams\n\n{SUMMARY}"),
        )
        .unwrap();
        memory.finish_interrupted_sweeps().unwrap();
        assert_eq!(
            read(dir.path(), "DREAMS.md").matches("### Sweep").count(),
            1,
            "not written twice"
        );
    }

    #[test]
    fn landing_is_judged_by_the_file() {
        let change = SweepChange {
            sweep: 1,
            pre_text: Some(OLD.into()),
            post_hash: sha256_hex(NEW.as_bytes()),
        };
        let added = vec![entry_hash(&markdown::parse(NEW).entries[1].text)];
        let landed = |current: Option<&[u8]>| change_landed(&change, current, &added);
        assert_eq!(landed(Some(NEW.as_bytes())), Landing::Landed);
        assert_eq!(landed(Some(OLD.as_bytes())), Landing::NotLanded);
        let edited = format!("{NEW}- Typed by hand.\n");
        assert_eq!(landed(Some(edited.as_bytes())), Landing::Landed);
        // Edited so that none of its lines is left: kept, not abandoned.
        assert_eq!(
            landed(Some(b"# Memory\n\n- Rewritten by hand.\n")),
            Landing::Unknown
        );
        assert_eq!(landed(None), Landing::Unknown);
        let created = SweepChange {
            pre_text: None,
            ..change
        };
        assert_eq!(
            change_landed(&created, None, &added),
            Landing::NotLanded,
            "still no file"
        );
    }
}
