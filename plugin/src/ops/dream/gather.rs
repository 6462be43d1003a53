//! The deep phase's candidates: every recorded recall rehydrated against
//! its live file, an owner's problem lending its recalls to the agent's
//! answer, then checked (provenance, junk, already curated), pooled with
//! near-duplicates, scored and gated, each with the verdict of the first
//! check it fails.

use crate::contract::api::SourceClass;
use crate::contract::error::{MemoryError, Result};
use crate::host::embedding::embedding_text;
use crate::logic::dream::candidates::{self, LiveEntry, Rehydrated};
use crate::logic::dream::consolidate::{self};
use crate::logic::dream::junk::junk_reason;
use crate::logic::dream::signals::{self, Gates, Observed, Scored};
use crate::logic::dream::sweep::{CandidateView, Verdict};
use crate::ops::Memory;
use crate::storage::index::ChunkRow;
use crate::storage::ledger::dreaming::RecallRecord;
use crate::text::entry::one_line;
use crate::text::hash::entry_hash;
use crate::text::layout::{self};
use crate::text::markdown;
use crate::text::statement::{classify, Statement};
use std::collections::{HashMap, HashSet};

const DAY_MS: i64 = 86_400_000;

/// One recorded entry on its way through the gates.
pub(super) struct Candidate {
    pub(super) citation: String,
    pub(super) path: String,
    /// The live entry's text (the recorded one when the source is gone).
    pub(super) text: String,
    /// What it says: the text on one line without its list marker and
    /// without the speaker prefix the ledger recorded (`assistant: `).
    pub(super) fact: String,
    /// Its project keys.
    pub(super) projects: Vec<String>,
    /// The owner's problem it answers (their words), when it took that
    /// problem's recalls: how the problem will be put next time.
    pub(super) problem: Option<String>,
    pub(super) text_hash: String,
    pub(super) row: Option<ChunkRow>,
    pub(super) observed: Observed,
    pub(super) scored: Scored,
    pub(super) verdict: Option<(Verdict, String)>,
}

impl Candidate {
    pub(super) fn class(&self) -> SourceClass {
        self.row
            .as_ref()
            .and_then(|r| r.provenance.as_ref())
            .map_or(SourceClass::Untrusted, |p| {
                SourceClass::lowest(p.source_class, p.file_class)
            })
    }

    pub(super) fn decided(&self) -> bool {
        self.verdict.is_some()
    }

    pub(super) fn set(&mut self, verdict: Verdict, reason: impl Into<String>) {
        self.verdict = Some((verdict, reason.into()));
    }

    pub(super) fn is(&self, verdict: Verdict) -> bool {
        self.verdict.as_ref().is_some_and(|(v, _)| *v == verdict)
    }

    /// Staged by the light phase: trusted, sane and live.
    pub(super) fn stageable(&self) -> bool {
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
    pub(super) fn curated(&self) -> bool {
        self.is(Verdict::Merged) || self.is(Verdict::AlreadyCurated)
    }
}

impl Memory {
    /// The deep phase's candidates among `records` as a sweep would see them
    /// now against `memory_text`, without syncing the index first (the review
    /// page reads, never writes), each with whether the light phase would
    /// stage it. Best first.
    pub(in crate::ops) fn candidates_now(
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

    pub(super) fn gather(
        &mut self,
        records: Vec<RecallRecord>,
        memory_text: &str,
        gates: &Gates,
        now: i64,
    ) -> Result<Vec<Candidate>> {
        let mut out = self.rehydrated_all(records)?;
        self.check_eligibility(&mut out, memory_text)?;
        pool_near_duplicates(&mut out);
        score_and_gate(&mut out, gates, now);
        Ok(out)
    }

    /// Every record located in its live file (each file read once), with the
    /// owner's problems lending their recalls to the agent's answers.
    fn rehydrated_all(&self, records: Vec<RecallRecord>) -> Result<Vec<Candidate>> {
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
        Ok(out)
    }

    /// The verdict of what may not be promoted, whatever its signals: what
    /// no record vouches for or is not promotable, a copy of untrusted text,
    /// junk, a statement that is no fact, and what `MEMORY.md` holds already
    /// (in the same or other words) or held before.
    fn check_eligibility(&mut self, out: &mut [Candidate], memory_text: &str) -> Result<()> {
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
        Ok(())
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
}

/// A recorded entry located in its live file (or found gone).
/// Near-duplicates pool their signals into the strongest copy; the others
/// are marked as its duplicates.
fn pool_near_duplicates(out: &mut [Candidate]) {
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
}

/// Scores every candidate; of those still undecided, the best that pass the
/// gates are promoted (up to the sweep's limit), the rest say why not.
fn score_and_gate(out: &mut [Candidate], gates: &Gates, now: i64) {
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
}

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
    let found = problems_and_answers(out, files);
    for c in out
        .iter_mut()
        .filter(|c| found.problems.contains(&c.citation))
    {
        c.set(
            Verdict::Junk,
            "a problem report without its resolution (the agent's answer after it holds the fix)",
        );
    }
    values_take_their_questions_recalls(out, found.asked);
    fixes_take_their_problems_recalls(out, found.lent, files);
}

/// What the owner's recalled problems and questions found after them in
/// their transcripts.
struct Answered {
    /// A fix answered a problem: (path, the answer's line, the problem's
    /// signals, the problem as said).
    lent: Vec<(String, u32, Observed, String)>,
    /// A question answered by a bare value ("It's vpn-wuhw.corp-gw.net."):
    /// the identifiers of the answer (to find the fact it restates), the
    /// question's projects and signals.
    asked: Vec<(HashSet<String>, Vec<String>, Observed)>,
    /// Citations of facts that were the owner's problem: the fix after them
    /// names the same code.
    problems: Vec<String>,
}

/// For each of the owner's own recalled problems (a symptom, a question, or
/// a fact the fix after it names), the agent's answer after it.
fn problems_and_answers(out: &[Candidate], files: &HashMap<String, Option<LiveFile>>) -> Answered {
    let role_of = |row: Option<&ChunkRow>| {
        row.and_then(|r| r.provenance.as_ref())
            .and_then(|p| p.role.clone())
    };
    let mut found = Answered {
        lent: Vec::new(),
        asked: Vec::new(),
        problems: Vec::new(),
    };
    for c in out {
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
                found
                    .lent
                    .push((c.path.clone(), line, c.observed.clone(), c.fact.clone()));
                // What the agent answered with a fix naming the same code
                // was the owner's problem, however it was put ("so getting
                // PGX-9032 …" / "We hit PGX-9032 before: …").
                if said == Statement::Fact
                    && !candidates::identifiers(&c.fact)
                        .is_disjoint(&candidates::identifiers(&text))
                {
                    found.problems.push(c.citation.clone());
                }
            }
            Some(Answer::Value(ids)) if said != Statement::Fact => {
                found
                    .asked
                    .push((ids, c.projects.clone(), c.observed.clone()));
            }
            _ => {}
        }
    }
    found
}

/// The owner kept asking for a value the agent answered from memory: the
/// standing statement of that value (a fact naming every identifier of the
/// answer, of the same projects or none) takes the question's signals.
fn values_take_their_questions_recalls(
    out: &mut [Candidate],
    asked: Vec<(HashSet<String>, Vec<String>, Observed)>,
) {
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
}

/// The agent's fix takes the signals of the problem it answered (and the
/// problem as said, for its triggers): as a candidate of its own when
/// nothing recalled it directly.
fn fixes_take_their_problems_recalls(
    out: &mut Vec<Candidate>,
    lent: Vec<(String, u32, Observed, String)>,
    files: &HashMap<String, Option<LiveFile>>,
) {
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

pub(super) fn view(c: Candidate) -> CandidateView {
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
pub(super) fn sorted(keys: &[String]) -> Vec<String> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.dedup();
    keys
}

pub(super) fn within_days(c: &Candidate, days: u32, now: i64) -> bool {
    c.observed.last_recalled_at >= now - days as i64 * DAY_MS
}
