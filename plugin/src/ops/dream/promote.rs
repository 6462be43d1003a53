//! The deep phase's consolidation: the promoted candidates go into
//! `MEMORY.md` through the model's validated rewrite, or the deterministic
//! plan with what fits the budget (the rest is deferred). The sweep is
//! recorded in the ledger before the hash-checked rename, so a kill
//! anywhere leaves a sweep the next open completes or abandons.

use crate::contract::api::SyncRequest;
use crate::contract::error::Result;
use crate::host::model::{CompletionRequest, Message, ModelFailure, Role};
use crate::logic::dream::budget;
use crate::logic::dream::consolidate::{self, Plan, Promoted, RewriteCheck};
use crate::logic::dream::refusal::{Refusal, RefusalKind};
use crate::logic::dream::signals::Gates;
use crate::logic::dream::sweep::{Consolidation, DreamReport, DreamRequest, Verdict};
use crate::ops::{storage_failure, Memory};
use crate::storage::ledger::dreaming::{PromotedLine, Promotion, SweepState};
use crate::text::entry::one_line;
use crate::text::hash::{entry_hash, sha256_hex};
use crate::text::layout;
use crate::text::markdown;
use std::collections::{HashMap, HashSet};

use super::dreams::sweep_summary;
use super::gather::Candidate;

impl Memory {
    pub(super) fn promote(
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
        let retire_for = |taken: &[usize]| retired_by(taken, &facts, &observed, &promoted_lines);
        let max_chars = self.settings.bootstrap.max_file_chars;
        let outcome = self.consolidated(
            memory_text,
            &facts,
            &retire_for,
            max_chars,
            &request.gates,
            report,
        );
        let batch = Batch {
            promoted,
            facts: &facts,
            observed: &observed,
        };
        let base = (existed, memory_text.to_string());
        if let Some(done) = self.commit(candidates, &batch, outcome, base, request, report)? {
            return Ok(Some(done));
        }
        if let Some(done) = self.append_to_edited(candidates, &batch, max_chars, request, report)? {
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

    /// How the facts go into `memory_text`: the model's rewrite (validated,
    /// so within the budget), or the deterministic plan with what fits; when
    /// the model's file was refused, the plan retires nothing (append-only)
    /// and the report says why.
    fn consolidated(
        &self,
        memory_text: &str,
        facts: &[Promoted],
        retire_for: &dyn Fn(&[usize]) -> HashSet<String>,
        max_chars: usize,
        gates: &Gates,
        report: &mut DreamReport,
    ) -> Outcome {
        let retire = retire_for(&(0..facts.len()).collect::<Vec<_>>());
        match self.model_rewrite(memory_text, facts, &retire, max_chars, gates) {
            Ok(text) => Outcome {
                plan: consolidate::rewrite_plan(memory_text, text, facts, &retire, entry_hash),
                consolidation: Consolidation::ModelRewrite,
                deferred: Vec::new(),
            },
            Err(Fallback::NoModel) => {
                let (plan, deferred) =
                    budget::fitting(memory_text, facts, retire_for, max_chars, &entry_hash);
                Outcome {
                    plan,
                    consolidation: Consolidation::Deterministic,
                    deferred,
                }
            }
            Err(Fallback::Refused(refusal)) => {
                report.refusal = Some(refusal);
                append_only(memory_text, facts, max_chars)
            }
        }
    }

    /// Someone edited `MEMORY.md` while the sweep ran: their edit is kept
    /// and the facts are appended to the file as it is now. `None` when it
    /// changed again.
    fn append_to_edited(
        &mut self,
        candidates: &mut [Candidate],
        batch: &Batch<'_>,
        max_chars: usize,
        request: &DreamRequest,
        report: &mut DreamReport,
    ) -> Result<Option<Promoting>> {
        let current = self.workspace.read_root_file(layout::MEMORY_FILE)?;
        let current_text = current
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        report.refusal = Some(Refusal::new(
            RefusalKind::ConcurrentEdit,
            "MEMORY.md changed while the sweep ran; the rewrite was abandoned, the edit kept and the entries appended",
        ));
        let outcome = append_only(&current_text, batch.facts, max_chars);
        let base = (current.is_some(), current_text);
        self.commit(candidates, batch, outcome, base, request, report)
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
pub(super) struct Promoting {
    /// Its `DREAMS.md` summary.
    pub(super) summary: String,
    /// The sweep recorded, unless everything was deferred.
    pub(super) sweep: Option<i64>,
}

/// What the facts `taken` retire: the promoted lines whose supersedes key
/// one of them carries, observed no later than it.
fn retired_by(
    taken: &[usize],
    facts: &[Promoted],
    observed: &[Option<i64>],
    promoted_lines: &[PromotedLine],
) -> HashSet<String> {
    let keys: HashMap<&str, Option<i64>> = taken
        .iter()
        .filter_map(|&k| Some((facts[k].supersedes_key.as_deref()?, observed[k])))
        .collect();
    promoted_lines
        .iter()
        .filter(|line| {
            keys.get(line.supersedes_key.as_str())
                .is_some_and(|newer| newer.unwrap_or(i64::MAX) >= line.observed_at.unwrap_or(0))
        })
        .map(|line| line.line_hash.clone())
        .collect()
}

/// The deterministic plan that retires nothing (append-only), with what
/// fits the budget.
fn append_only(memory_text: &str, facts: &[Promoted], max_chars: usize) -> Outcome {
    let nothing_retired = |_: &[usize]| HashSet::new();
    let (plan, deferred) =
        budget::fitting(memory_text, facts, &nothing_retired, max_chars, &entry_hash);
    Outcome {
        plan,
        consolidation: Consolidation::AppendOnly,
        deferred,
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
