//! Lane 1 on every incoming message: trigger injection from the curated files
//! and the escalation decision. Zero model calls; the embedder is asked at
//! most once, and only when a trigger match is borderline.

use crate::contract::api::{SourceClass, TurnContext};
use crate::contract::error::Result;
use crate::host::embedding::{self, EmbedderInfo};
use crate::logic::dream::candidates::FactWords;
use crate::logic::inject::recall_intent::{self, EscalationMode};
use crate::logic::inject::trigger::{
    self, same_subject, Lane1Entry, BLOCK_BUDGET_CHARS, INJECT_THRESHOLD, MAX_INJECTED,
};
use crate::ops::{Attempt, Failure, Memory};
use crate::storage::index::CuratedRow;
use crate::text::framing;
use crate::text::statement::Statement;

/// A trigger phrase matched at least as a present single word (the scale's
/// 0.85).
const SINGLE_WORD_MATCH: f32 = 0.85;

/// The project-memory block's own budget, and what one entry may take of it.
const PROJECT_BLOCK_CHARS: usize = 1_000;
const PROJECT_ENTRY_CHARS: usize = 300;

/// Longest message lane 1 reads; the rest is ignored for matching.
const MAX_MESSAGE_CHARS: usize = 16_000;

#[derive(Debug, Clone, PartialEq)]
pub struct InjectRequest {
    pub message: String,
    pub mode: EscalationMode,
    pub context: TurnContext,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContextBlock {
    /// `trigger` for now; intents and escalation answers join later.
    pub kind: &'static str,
    /// The framed block to prepend, hidden from the user.
    pub text: String,
    /// `path#Lx-Ly` of what the block carries.
    pub sources: Vec<String>,
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct InjectResult {
    pub blocks: Vec<ContextBlock>,
    pub recall_intent: bool,
    pub escalate: bool,
    pub escalation_reason: String,
}

impl Memory {
    /// See the WIT `inject.trigger-inject`.
    pub fn inject(&mut self, request: &InjectRequest) -> Result<InjectResult> {
        self.writable("trigger-inject (it spends intent fires)")?;
        self.with_repair(|m| m.inject_once(request))
    }

    fn inject_once(&mut self, request: &InjectRequest) -> Attempt<InjectResult> {
        let message = crate::text::words::truncate_chars(&request.message, MAX_MESSAGE_CHARS).0;
        let words = trigger::words(message);
        let info = self.embedder.describe();
        self.load_lane1_entries(info.as_ref())?;
        let scored = self.trigger_matches(message, &words, info.as_ref(), &request.context);
        let mut blocks = self.trigger_blocks(scored);
        let strong_lane1 = !blocks.is_empty();
        blocks.extend(self.project_block(&request.context.active_projects));
        for intent in self
            .intents_for_turn(message, &words, &request.context)
            .map_err(Failure::Memory)?
        {
            blocks.push(ContextBlock {
                kind: "intent",
                text: crate::ops::intents::intent_block(&intent),
                sources: vec![format!("intent:{}", intent.id)],
                score: 1.0,
            });
        }
        let recall_intent = recall_intent::has_recall_intent(message);
        let (escalate, reason) = recall_intent::decide(request.mode, recall_intent, strong_lane1);
        Ok(InjectResult {
            blocks,
            recall_intent,
            escalate,
            escalation_reason: reason.to_string(),
        })
    }

    /// The curated entries whose triggers match the message strongly
    /// enough, in the order they are offered: scored by their words, the
    /// borderline ones by meaning (one embedder call), and the resolutions
    /// that answer a matched symptom.
    fn trigger_matches(
        &self,
        message: &str,
        words: &[String],
        info: Option<&EmbedderInfo>,
        context: &TurnContext,
    ) -> Vec<(f32, usize)> {
        let candidates = &self.lane1_entries.as_ref().expect("loaded above").1;
        let mut found = matched_by_words(candidates, words, &context.active_projects);
        if !found.borderline.is_empty() {
            if let Some(info) = info {
                if let Ok(mut v) =
                    embedding::embed_checked(self.embedder.as_ref(), info, &[message.to_string()])
                {
                    let query = v.remove(0);
                    for (best, i) in std::mem::take(&mut found.borderline) {
                        let cosine = candidates[i]
                            .vector
                            .as_ref()
                            .map_or(0.0, |e| embedding::dot(&query, e));
                        let score = trigger::entry_score(best, cosine);
                        if score >= INJECT_THRESHOLD {
                            found.scored.push((score, i));
                        } else if candidates[i].statement == Statement::Resolution
                            && best >= SINGLE_WORD_MATCH
                        {
                            found.answers_short.push(i);
                        }
                    }
                }
            }
        }
        let mut scored = found.scored;
        resolutions_take_symptoms_place(candidates, &mut scored, &found.answers_short);
        in_offer_order(candidates, message, &mut scored);
        scored
    }

    /// The trigger blocks of the best matches: at most `MAX_INJECTED`
    /// within `BLOCK_BUDGET_CHARS`, one per subject.
    fn trigger_blocks(&self, scored: Vec<(f32, usize)>) -> Vec<ContextBlock> {
        let candidates = &self.lane1_entries.as_ref().expect("loaded above").1;
        let mut blocks = Vec::new();
        let mut chosen: Vec<usize> = Vec::new();
        let mut used = 0;
        for (score, i) in scored {
            if blocks.len() == MAX_INJECTED {
                break;
            }
            let c = &candidates[i];
            // One fact fills one slot however many copies matched, and a
            // symptom the chosen resolution answers adds nothing.
            if chosen.iter().any(|&j| same_subject(&candidates[j], c)) {
                continue;
            }
            let text = framing::context_block("trigger", &c.citation, c.class, &c.text);
            let size = text.chars().count();
            if used + size > BLOCK_BUDGET_CHARS {
                continue; // a smaller, weaker match may still fit
            }
            used += size;
            chosen.push(i);
            blocks.push(ContextBlock {
                kind: "trigger",
                text,
                sources: vec![c.citation.clone()],
                score,
            });
        }
        blocks
    }

    /// The project-memory block: the curated entries of the active
    /// repositories (`USER.md` is never project-scoped), in file order, within
    /// its own budget. `None` outside any repository.
    fn project_block(&self, active: &[String]) -> Option<ContextBlock> {
        if active.is_empty() {
            return None;
        }
        let entries = &self.lane1_entries.as_ref()?.1;
        let mut lines = Vec::new();
        let mut sources = Vec::new();
        let mut used = 0;
        let mut class = SourceClass::Owner;
        // The strict rule of triggers: an entry tagged with several projects
        // only when every one of them is active.
        let tagged = entries.iter().filter(|e| {
            e.path == crate::text::layout::MEMORY_FILE
                && !e.projects.is_empty()
                && trigger::projects_allow(&e.projects, active)
        });
        for entry in tagged {
            let line = crate::text::words::truncate_chars(&entry.text, PROJECT_ENTRY_CHARS)
                .0
                .to_string();
            let size = line.chars().count() + 1;
            if used + size > PROJECT_BLOCK_CHARS {
                continue;
            }
            used += size;
            class = SourceClass::lowest(class, entry.class);
            lines.push(line);
            sources.push(entry.citation.clone());
        }
        if lines.is_empty() {
            return None;
        }
        let text = framing::context_block("project", &active.join(" "), class, &lines.join("\n"));
        Some(ContextBlock {
            kind: "project",
            text,
            sources,
            score: 1.0,
        })
    }

    /// The curated, trusted entries with triggers or project keys, cached per
    /// index revision.
    fn load_lane1_entries(&mut self, info: Option<&EmbedderInfo>) -> Attempt<()> {
        let revision = self.index.revision()?;
        if self
            .lane1_entries
            .as_ref()
            .is_some_and(|(r, _)| *r == revision)
        {
            return Ok(());
        }
        let label = info.map(EmbedderInfo::label);
        let rows = self.index.curated_rows(label.as_deref())?;
        // A trusted-looking copy of untrusted text (a line edited a little
        // on its way into MEMORY.md) is framed untrusted by recall, so lane
        // 1 never injects it as the owner's.
        let untrusted = self.untrusted_text()?;
        let rows = rows.into_iter().filter(|row| {
            !untrusted.copied_by(
                &crate::logic::dream::consolidate::fact_key(&row.text),
                row.order,
                row.session_id.as_deref(),
            )
        });
        self.lane1_entries = Some((revision, rows.map(lane1_entry).collect()));
        Ok(())
    }
}

/// How lane 1's entries matched a message by their words.
struct Matches {
    /// (score, entry) at or above the threshold.
    scored: Vec<(f32, usize)>,
    /// (best phrase score, entry) of entries with a vector whose words fell
    /// short: their meaning decides.
    borderline: Vec<(f32, usize)>,
    /// Resolutions whose trigger matched strongly but whose words differ
    /// from the message's (a fix rarely repeats the complaint).
    answers_short: Vec<usize>,
}

/// Scores each entry allowed in the active projects by its best trigger
/// phrase and its words' relevance to the message.
fn matched_by_words(candidates: &[Lane1Entry], words: &[String], active: &[String]) -> Matches {
    let mut found = Matches {
        scored: Vec::new(),
        borderline: Vec::new(),
        answers_short: Vec::new(),
    };
    for (i, c) in candidates.iter().enumerate() {
        if !trigger::projects_allow(&c.projects, active) {
            continue;
        }
        let best = c
            .phrases
            .iter()
            .map(|p| trigger::phrase_score(p, words))
            .fold(0.0, f32::max);
        if trigger::entry_score(best, 1.0) < INJECT_THRESHOLD {
            continue; // cannot reach the threshold whatever its relevance
        }
        let score = trigger::entry_score(best, trigger::lexical_relevance(&c.text, words));
        if score >= INJECT_THRESHOLD {
            found.scored.push((score, i));
        } else if c.vector.is_some() {
            found.borderline.push((best, i));
        } else if c.statement == Statement::Resolution && best >= SINGLE_WORD_MATCH {
            found.answers_short.push(i);
        }
    }
    found
}

/// A symptom that matched says the problem is in the message: the
/// resolution of the same problem whose trigger matched too answers it, and
/// takes the symptom's place (its score).
fn resolutions_take_symptoms_place(
    candidates: &[Lane1Entry],
    scored: &mut Vec<(f32, usize)>,
    answers_short: &[usize],
) {
    for &i in answers_short {
        let symptom = scored
            .iter()
            .filter(|(_, j)| {
                !candidates[*j].statement.promotable()
                    && candidates[*j].words.overlaps(&candidates[i].words)
            })
            .map(|(s, _)| *s)
            .reduce(f32::max);
        if let Some(score) = symptom {
            scored.push((score, i));
        }
    }
}

/// What an entry says ranks before how strongly it matched: a bare symptom
/// (or a question) goes after every fact and resolution. And when the
/// message reports a problem or asks, a resolution comes before other
/// facts.
fn in_offer_order(candidates: &[Lane1Entry], message: &str, scored: &mut [(f32, usize)]) {
    let answers = |i: usize| candidates[i].statement.promotable();
    let asking = matches!(
        crate::text::statement::classify(message),
        Statement::Symptom | Statement::Question
    );
    let fixes = |i: usize| asking && candidates[i].statement == Statement::Resolution;
    scored.sort_by(|a, b| {
        answers(b.1)
            .cmp(&answers(a.1))
            .then(fixes(b.1).cmp(&fixes(a.1)))
            .then(b.0.total_cmp(&a.0))
            .then(candidates[a.1].citation.cmp(&candidates[b.1].citation))
    });
}

/// A curated row as lane 1 matches it.
fn lane1_entry(row: CuratedRow) -> Lane1Entry {
    let said = crate::logic::dream::consolidate::without_source(
        crate::text::words::strip_list_marker(row.text.trim()).trim(),
    )
    .to_string();
    Lane1Entry {
        statement: crate::text::statement::classify(&said),
        words: FactWords::new(&said, &[]),
        citation: format!("{}#L{}-L{}", row.path, row.start_line, row.end_line),
        phrases: row
            .triggers
            .iter()
            .map(|t| trigger::words(t))
            .filter(|w| !w.is_empty())
            .collect(),
        path: row.path,
        text: row.text,
        class: row.class,
        projects: row.projects,
        vector: row.vector,
    }
}
