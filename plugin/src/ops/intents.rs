//! The `intents` family, standing intents as operations: create (owner
//! only; a wish that cannot be compiled into triggers or a due time stays
//! in Markdown with a review date), list, cancel, what is due, and the
//! intents a turn injects.

use super::write::NewEntry;
use super::Memory;
use crate::contract::api::{SessionKind, SourceClass, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::intents::{self, Intent, State};
use crate::logic::provenance::Segment;
use crate::logic::write::taint::capped_by_taint;
use crate::text::entry::{entry_line, fold, indexed_text, one_line, MAX_TRIGGER_CHARS};
use crate::text::hash::entry_hash;
use crate::text::layout::{self, Date};

const MAX_INTENT_CHARS: usize = 500;
const MAX_TRIGGER_ENTRIES: usize = 16;
/// When a wish is looked at again.
const WISH_REVIEW_DAYS: i64 = 30;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntentSpec {
    pub text: String,
    pub triggers: Vec<String>,
    pub due_at_ms: Option<i64>,
    pub channel: Option<String>,
    pub sender: Option<String>,
    pub expires_in_ms: Option<i64>,
    pub fire_budget: Option<u32>,
    pub cooldown_ms: Option<i64>,
    /// Also match by meaning: the triggers are embedded now, and a message
    /// whose vector is within cosine 0.75 of theirs matches.
    pub semantic: bool,
    /// Where the text came from (see `intent_text_allowed`).
    pub origin: crate::contract::api::ContentOrigin,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IntentView {
    pub intent: Intent,
    pub state: State,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateResult {
    pub intent: Option<IntentView>,
    /// `path#Lx-Ly` of a wish kept in Markdown.
    pub wish: Option<String>,
}

/// The intent's text on one line (intents are not Markdown: folded, no
/// comment escaping) and its trigger entries, within their limits.
fn checked_text_and_triggers(spec: &IntentSpec) -> Result<(String, Vec<String>)> {
    let text = fold(&spec.text);
    if text.is_empty() {
        return Err(MemoryError::InvalidInput(
            "the intent's text is empty".into(),
        ));
    }
    if text.chars().count() > MAX_INTENT_CHARS {
        return Err(MemoryError::TooLarge(format!(
            "intents are at most {MAX_INTENT_CHARS} characters"
        )));
    }
    let triggers: Vec<String> = spec
        .triggers
        .iter()
        .map(|t| one_line(t))
        .filter(|t| !crate::logic::inject::trigger::words(t).is_empty())
        .collect();
    if triggers.len() > MAX_TRIGGER_ENTRIES {
        return Err(MemoryError::InvalidInput(format!(
            "at most {MAX_TRIGGER_ENTRIES} trigger entries"
        )));
    }
    if triggers
        .iter()
        .any(|t| t.chars().count() > MAX_TRIGGER_CHARS)
    {
        return Err(MemoryError::TooLarge(format!(
            "a trigger entry is at most {} characters",
            MAX_TRIGGER_CHARS
        )));
    }
    Ok((text, triggers))
}

/// The fire budget, cool-down and expiry, the defaults filled in and each
/// within its bounds.
fn checked_limits(spec: &IntentSpec) -> Result<(u32, i64, i64)> {
    let budget = spec.fire_budget.unwrap_or(if spec.due_at_ms.is_some() {
        1
    } else {
        intents::DEFAULT_FIRE_BUDGET
    });
    if !(1..=100).contains(&budget) {
        return Err(MemoryError::InvalidInput(format!(
            "the fire budget must be 1..100, got {budget}"
        )));
    }
    let cooldown = spec.cooldown_ms.unwrap_or(intents::DEFAULT_COOLDOWN_MS);
    let expires_in = spec.expires_in_ms.unwrap_or(intents::DEFAULT_EXPIRY_MS);
    if !(0..=365 * 86_400_000).contains(&cooldown)
        || !(1..=3_650 * 86_400_000).contains(&expires_in)
    {
        return Err(MemoryError::InvalidInput(
            "the cool-down must be 0..365 days and the expiry 1 ms..3650 days".into(),
        ));
    }
    Ok((budget, cooldown, expires_in))
}

fn owner_only(context: &TurnContext, what: &str) -> Result<()> {
    crate::logic::provenance::owner_in_person(context).map_err(|why| {
        MemoryError::AccessDenied(format!(
            "{why}: only the owner, in person, can {what} standing intents"
        ))
    })
}

impl Memory {
    fn intents_loaded(&mut self) -> Result<&mut Vec<Intent>> {
        if self.intents.is_none() {
            self.intents = Some(self.ledger.intents().map_err(MemoryError::from)?);
        }
        Ok(self.intents.as_mut().expect("loaded above"))
    }

    pub fn create_intent(
        &mut self,
        spec: &IntentSpec,
        context: &TurnContext,
    ) -> Result<CreateResult> {
        self.writable("intents.create")?;
        owner_only(context, "create")?;
        crate::logic::provenance::intent_text_allowed(spec.origin, context.tainted())
            .map_err(MemoryError::AccessDenied)?;
        let (text, triggers) = checked_text_and_triggers(spec)?;
        let (budget, cooldown, expires_in) = checked_limits(spec)?;
        if triggers.is_empty() && spec.due_at_ms.is_none() {
            return self.keep_wish(&one_line(&text), spec.origin, context);
        }
        let intent = Intent {
            id: 0,
            text,
            triggers,
            due_at: spec.due_at_ms,
            channel: spec.channel.clone().filter(|c| !c.is_empty()),
            sender: spec.sender.clone().filter(|s| !s.is_empty()),
            created_at: context.now_ms,
            expires_at: spec
                .due_at_ms
                .unwrap_or(context.now_ms)
                .saturating_add(expires_in),
            fire_budget: budget,
            fires: 0,
            cooldown_ms: cooldown,
            last_fired_at: None,
            cancelled: false,
            trigger_vector: None,
        };
        if intent_block(&intent).chars().count() > intents::INTENT_BUDGET_CHARS {
            return Err(MemoryError::TooLarge(format!(
                "this intent's block would exceed the {}-character budget of a turn, so it could never fire",
                intents::INTENT_BUDGET_CHARS
            )));
        }
        let intent = if spec.semantic {
            self.with_trigger_vector(intent)?
        } else {
            intent
        };
        // Load the list before inserting, so the new row is not counted twice.
        self.intents_loaded()?;
        let id = self
            .ledger
            .create_intent(&intent, context.session_id.as_deref())
            .map_err(MemoryError::from)?;
        let intent = Intent { id, ..intent };
        self.intents_loaded()?.push(intent.clone());
        let state = intents::state_at(&intent, context.now_ms);
        Ok(CreateResult {
            intent: Some(IntentView { intent, state }),
            wish: None,
        })
    }

    /// The intent with its triggers embedded, to match by meaning.
    fn with_trigger_vector(&self, intent: Intent) -> Result<Intent> {
        let info = self.embedder.describe().ok_or_else(|| {
            MemoryError::InvalidInput(
                "semantic matching needs an embedder; none is configured".into(),
            )
        })?;
        if intent.triggers.is_empty() {
            return Err(MemoryError::InvalidInput(
                "semantic matching needs trigger entries".into(),
            ));
        }
        let mut v = crate::host::embedding::embed_checked(
            self.embedder.as_ref(),
            &info,
            &[intent.triggers.join("; ")],
        )
        .map_err(|e| {
            MemoryError::InvalidInput(format!("the triggers could not be embedded: {e}"))
        })?;
        Ok(Intent {
            trigger_vector: Some((info.label(), v.remove(0))),
            ..intent
        })
    }

    /// A wish with neither triggers nor a due time: kept in Markdown, where a
    /// person (and search) can see it, with a review date. `memory/wishes.md`
    /// is undated, so wishes never decay out of reach.
    fn keep_wish(
        &mut self,
        text: &str,
        origin: crate::contract::api::ContentOrigin,
        context: &TurnContext,
    ) -> Result<CreateResult> {
        let review = Date::from_ms(context.local_ms() + WISH_REVIEW_DAYS * 86_400_000);
        let line = format!(
            "{} <!-- review: {review} -->",
            entry_line(&format!("Wish: {text}"), &[], None)
        );
        // The owner's words, or the agent's from them (the gate let nothing
        // else through), no higher than the turn's taint; a lowered wish goes
        // to its class's sibling (`memory/wishes-untrusted.md`).
        let class = capped_by_taint(crate::logic::provenance::classify(origin, true), context);
        let wishes = layout::memory_path("memory/wishes.md").expect("a fixed memory path");
        let path = layout::class_file(&wishes, class);
        let entry = NewEntry {
            segment: Segment {
                id: 0,
                speaker: None,
                text_hash: entry_hash(&indexed_text(&line)),
                source_class: class,
                session_kind: context.session_kind.unwrap_or(SessionKind::Interactive),
                session_id: context.session_id.clone(),
                observed_at: context.now_ms,
                supersedes_key: None,
                written_by: "note",
            },
            line,
        };
        let hash = entry.segment.text_hash.clone();
        let (lines, _) = self.append_entries(&path, vec![entry], context.now_ms)?;
        // A wish already kept is not written twice; point at where it is.
        let line = match lines.first() {
            Some(line) => *line,
            None => {
                let text = self
                    .workspace
                    .read(&path, crate::storage::workspace::MAX_INDEXED_BYTES)?
                    .text;
                crate::text::markdown::parse(&text)
                    .entries
                    .iter()
                    .find(|e| entry_hash(&e.text) == hash)
                    .map(|e| e.start_line)
                    .ok_or_else(|| MemoryError::Internal("the kept wish was not found".into()))?
            }
        };
        Ok(CreateResult {
            intent: None,
            wish: Some(format!("{path}#L{line}-L{line}")),
        })
    }

    /// See the WIT `intents.list`: every intent with its state at `now`.
    pub fn list_intents(&mut self, now_ms: i64) -> Result<Vec<IntentView>> {
        Ok(self
            .intents_loaded()?
            .iter()
            .map(|i| IntentView {
                intent: i.clone(),
                state: intents::state_at(i, now_ms),
            })
            .collect())
    }

    /// See the WIT `intents.cancel`.
    pub fn cancel_intent(&mut self, id: i64, context: &TurnContext) -> Result<IntentView> {
        self.writable("intents.cancel")?;
        owner_only(context, "cancel")?;
        if !self.ledger.cancel_intent(id).map_err(MemoryError::from)? {
            return Err(MemoryError::NotFound(format!("no intent {id}")));
        }
        let intent = self
            .intents_loaded()?
            .iter_mut()
            .find(|i| i.id == id)
            .map(|i| {
                i.cancelled = true;
                i.clone()
            });
        let intent = intent.ok_or_else(|| MemoryError::NotFound(format!("no intent {id}")))?;
        Ok(IntentView {
            state: State::Cancelled,
            intent,
        })
    }

    /// See the WIT `intents.due`: time-based intents due at `at_ms`, each
    /// spending one fire (the host's scheduler delivers them).
    pub fn due_intents(&mut self, at_ms: i64) -> Result<Vec<IntentView>> {
        self.writable("intents.due")?;
        let due: Vec<Intent> = self
            .intents_loaded()?
            .iter()
            .filter(|i| i.due_at.is_some() && intents::state_at(i, at_ms) == State::Armed)
            .cloned()
            .collect();
        self.fire(&due.iter().map(|i| i.id).collect::<Vec<_>>(), at_ms)?;
        let loaded = self.intents_loaded()?;
        Ok(due
            .iter()
            .filter_map(|d| loaded.iter().find(|i| i.id == d.id))
            .map(|i| IntentView {
                intent: i.clone(),
                state: intents::state_at(i, at_ms),
            })
            .collect())
    }

    /// The event-based intents a turn injects; each spends one fire.
    pub(super) fn intents_for_turn(
        &mut self,
        message: &str,
        message_words: &[String],
        context: &TurnContext,
    ) -> Result<Vec<Intent>> {
        let now = context.now_ms;
        // Semantic intents need the message's vector: embed it once, only
        // when an armed intent of the current embedder asks for it.
        let info = self.embedder.describe();
        let wants_vector = info.as_ref().is_some_and(|info| {
            let label = info.label();
            self.intents.as_ref().is_some_and(|all| {
                all.iter().any(|i| {
                    i.trigger_vector.as_ref().is_some_and(|(l, _)| *l == label)
                        && intents::state_at(i, now) == State::Armed
                })
            })
        });
        let message_vector = match (&info, wants_vector) {
            (Some(info), true) => crate::host::embedding::embed_checked(
                self.embedder.as_ref(),
                info,
                &[message.to_string()],
            )
            .ok()
            .map(|mut v| (info.label(), v.remove(0))),
            _ => None,
        };
        let loaded = self.intents_loaded()?;
        let chosen = intents::select(
            loaded,
            message_words,
            &intents::Turn {
                channel: context.channel.as_deref(),
                sender: context.sender.as_deref(),
                sender_is_owner: context.sender_is_owner,
            },
            now,
            |i| intent_block(i).chars().count(),
            |i| {
                let (Some((label, message)), Some((intent_label, v))) =
                    (&message_vector, &i.trigger_vector)
                else {
                    return false;
                };
                label == intent_label
                    && crate::host::embedding::dot(message, v) >= intents::SEMANTIC_MATCH
            },
        );
        let picked: Vec<Intent> = chosen.iter().map(|&i| loaded[i].clone()).collect();
        self.fire(&picked.iter().map(|i| i.id).collect::<Vec<_>>(), now)?;
        Ok(picked)
    }

    fn fire(&mut self, ids: &[i64], now_ms: i64) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.ledger
            .record_fires(ids, now_ms)
            .map_err(MemoryError::from)?;
        for intent in self
            .intents_loaded()?
            .iter_mut()
            .filter(|i| ids.contains(&i.id))
        {
            intent.fires += 1;
            intent.last_fired_at = Some(now_ms);
        }
        Ok(())
    }
}

/// The hidden block of one fired intent.
pub(super) fn intent_block(intent: &Intent) -> String {
    crate::text::framing::context_block(
        "intent",
        &format!("intent:{}", intent.id),
        SourceClass::Owner,
        &intent.text,
    )
}
