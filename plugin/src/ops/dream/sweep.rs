//! `dream.run`: one sweep. It syncs, gathers and gates the candidates
//! (`gather`), promotes the best into `MEMORY.md` in the deep phase
//! (`promote`), renders the light and REM blocks and the summary into
//! `DREAMS.md` (`dreams`), and logs itself; a failed sweep is recorded
//! where the owner looks.

use crate::contract::api::{SyncRequest, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::dream::dreams_md;
use crate::logic::dream::sweep::{Consolidation, DreamReport, DreamRequest, Phase, Verdict};
use crate::ops::{storage_failure, Memory};
use crate::storage::ledger::dreaming::{SweepLogEntry, SweepState};
use crate::text::hash::sha256_hex;
use crate::text::layout::{self, Date};

use super::dreams::{light_block, rem_block, sweep_summary};
use super::gather::{view, Candidate};
use super::promote::Promoting;

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
    pub(super) fn record_failed_sweep(
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

    pub(super) fn sweep(&mut self, request: &DreamRequest) -> Result<DreamReport> {
        let phases = phases_of(request);
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
        let mut report = new_report(phases.clone());
        let mut summary = None;
        let mut recorded = None;
        if phases.contains(&Phase::Deep) && !request.dry_run {
            let existed = memory_bytes.is_some();
            let promoting =
                self.deep_phase(&mut candidates, &memory_text, existed, request, &mut report)?;
            summary = Some(match promoting {
                Some(promoting) => {
                    recorded = promoting.sweep;
                    promoting.summary
                }
                None => sweep_summary(&candidates, &report, request.context.local_ms()),
            });
        }
        let blocks = phase_blocks(&phases, &candidates, request, &mut report);
        let (summary, digest) = self.summary_to_write(summary, &candidates, &report)?;
        if !request.dry_run {
            self.record_dreams(
                &blocks,
                summary.as_deref(),
                digest,
                recorded,
                now,
                &mut report,
            )?;
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

    /// The deep phase: the promoted candidates go into `MEMORY.md`, best
    /// first (when the budget cannot take them all, the best fit), and the
    /// number deferred is kept for status. What it committed, if anything.
    fn deep_phase(
        &mut self,
        candidates: &mut [Candidate],
        memory_text: &str,
        existed: bool,
        request: &DreamRequest,
        report: &mut DreamReport,
    ) -> Result<Option<Promoting>> {
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
            self.promote(candidates, &promoted, memory_text, existed, request, report)?
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
        Ok(promoting)
    }

    /// The deep phase's summary when it is worth writing — the sweep did
    /// something worth reading, and the same outcome (nothing new) is not
    /// logged twice — with its digest (the summary without its dated first
    /// line).
    fn summary_to_write(
        &self,
        summary: Option<String>,
        candidates: &[Candidate],
        report: &DreamReport,
    ) -> Result<(Option<String>, Option<String>)> {
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
        Ok((summary, digest))
    }

    /// Writes the blocks and the summary into `DREAMS.md`. The recorded
    /// sweep is done once its summary is there (or deliberately not written:
    /// the same outcome as the last); else the next open appends it.
    fn record_dreams(
        &mut self,
        blocks: &[(&str, &str, String)],
        summary: Option<&str>,
        digest: Option<String>,
        recorded: Option<i64>,
        now: i64,
        report: &mut DreamReport,
    ) -> Result<()> {
        report.dreams_changed = self.write_dreams(blocks, summary, now)?;
        if report.dreams_changed && summary.is_some() {
            if let Some(digest) = &digest {
                self.ledger.set_dream_digest(digest)?;
            }
        }
        if let Some(sweep) = recorded {
            let written = match summary {
                Some(summary) => self.dreams_holds(summary)?,
                None => true,
            };
            if written {
                self.ledger
                    .set_sweep_state(sweep, SweepState::Done)
                    .map_err(storage_failure)?;
            }
        }
        Ok(())
    }
}

/// The phases a request asks for, in order and each once; all three when
/// it names none.
fn phases_of(request: &DreamRequest) -> Vec<Phase> {
    let mut phases = if request.phases.is_empty() {
        vec![Phase::Light, Phase::Rem, Phase::Deep]
    } else {
        request.phases.clone()
    };
    phases.sort();
    phases.dedup();
    phases
}

/// A sweep's report before it has done anything.
fn new_report(phases: Vec<Phase>) -> DreamReport {
    DreamReport {
        sweep: 0,
        phases,
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
    }
}

/// The light and REM phases' blocks, which show the sweep's outcome:
/// written after deep, a second sweep with nothing new renders the same
/// blocks.
fn phase_blocks(
    phases: &[Phase],
    candidates: &[Candidate],
    request: &DreamRequest,
    report: &mut DreamReport,
) -> Vec<(&'static str, &'static str, String)> {
    let now = request.context.now_ms;
    let mut blocks = Vec::new();
    if phases.contains(&Phase::Light) {
        let deep_ran = phases.contains(&Phase::Deep) && !request.dry_run;
        let (body, staged) = light_block(candidates, &request.gates, now, deep_ran);
        report.staged = staged;
        blocks.push(("light", "## Light Sleep", body));
    }
    if phases.contains(&Phase::Rem) {
        let (body, themes) = rem_block(candidates, &request.gates, now);
        report.themes = themes;
        blocks.push(("rem", "## REM Sleep", body));
    }
    blocks
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
