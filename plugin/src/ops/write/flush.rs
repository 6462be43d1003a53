//! `write.flush`, the pre-compaction memory flush: when one is due
//! (`logic::write::flush`), the model writes down what compaction would
//! lose, and its notes are cleaned and appended like any write.

use super::append::{daily_note, NewEntry, WriteReport};
use crate::contract::api::{SessionKind, SourceClass, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::provenance::Segment;
use crate::logic::write::flush::{flush_conversation, SessionState};
use crate::logic::write::taint::{
    clean_message, outside_class, relay_external_values, taint_turns, values_of, CleanMessage,
};
use crate::ops::{storage_failure, Memory};
use crate::text::entry::{entry_line, indexed_text, one_line, project_tag};
use crate::text::hash::entry_hash;
use crate::text::layout;

#[derive(Debug, Clone, PartialEq)]
pub struct FlushRequest {
    pub session_id: String,
    pub state: SessionState,
    pub soft_threshold_tokens: Option<u32>,
    /// The context not yet written down, as a JSONL transcript.
    pub transcript: String,
    pub timeout_ms: Option<u32>,
    pub context: TurnContext,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushReport {
    /// Whether a flush was due (and so the model was asked).
    pub due: bool,
    /// What happened, in words.
    pub reason: String,
    /// What was written, when anything was.
    pub written: Option<WriteReport>,
    /// The model's failure, when it failed (nothing is written; a later call
    /// in the same compaction cycle may try again).
    pub model_error: Option<String>,
}

impl Memory {
    /// The pre-compaction memory flush. See the WIT `write.flush`. Never
    /// raises for a model problem: it reports it and writes nothing.
    pub fn flush(&mut self, request: &FlushRequest) -> Result<FlushReport> {
        self.writable("flush")?;
        let not_due = |reason: String| {
            Ok(FlushReport {
                due: false,
                reason,
                written: None,
                model_error: None,
            })
        };
        let session = request.session_id.trim();
        if session.is_empty() {
            return Err(MemoryError::InvalidInput("the session id is empty".into()));
        }
        let Some(kind) = request.context.session_kind else {
            return not_due(
                "the session kind is unknown; a flush writes nothing of unknown origin".into(),
            );
        };
        if kind != SessionKind::Interactive {
            return not_due(format!(
                "{} sessions produce no durable memory",
                kind.as_str()
            ));
        }
        if self
            .ledger
            .is_tombstoned(session)
            .map_err(storage_failure)?
        {
            return not_due(format!(
                "session {session} was forgotten; it writes nothing more"
            ));
        }
        let soft = request
            .soft_threshold_tokens
            .unwrap_or(crate::logic::write::flush::DEFAULT_SOFT_THRESHOLD_TOKENS);
        if let Err(reason) = crate::logic::write::flush::threshold_crossed(&request.state, soft) {
            return not_due(reason);
        }
        let cycle = request.state.compaction_cycle;
        if self
            .ledger
            .has_flushed(session, cycle)
            .map_err(storage_failure)?
        {
            return not_due(format!("already flushed in compaction cycle {cycle}"));
        }
        let (messages, _) = crate::text::transcript::parse(&request.transcript);
        let mut cleaned: Vec<(&crate::text::transcript::Message, CleanMessage)> = messages
            .iter()
            .map(|m| (m, clean_message(m, request.context.sender_is_owner)))
            .collect();
        // Taint first: a message that held only a recall block is empty once
        // the block is stripped, but the agent read it.
        taint_turns(&mut cleaned, request.context.tainted());
        // Memory's own output only taints; it is never shown or stored.
        cleaned.retain(|(message, clean)| !clean.text.is_empty() && !message.memory);
        let outside = relay_external_values(&mut cleaned);
        let (conversation, class) = flush_conversation(&cleaned);
        let Some(class) = class else {
            self.ledger
                .record_flush(session, cycle, request.context.now_ms)
                .map_err(storage_failure)?;
            return Ok(FlushReport {
                due: true,
                reason: "nothing in the transcript to save".into(),
                written: None,
                model_error: None,
            });
        };
        let path = layout::class_file(&daily_note(&request.context), class);
        let today = String::from_utf8_lossy(&self.read_for_append(&path)?).into_owned();
        let completion = crate::host::model::CompletionRequest {
            purpose: "flush",
            messages: vec![
                crate::host::model::Message::new(
                    crate::host::model::Role::System,
                    crate::logic::write::flush::SYSTEM_PROMPT,
                ),
                crate::host::model::Message::new(
                    crate::host::model::Role::User,
                    crate::logic::write::flush::prompt(&today, &conversation),
                ),
            ],
            tools: Vec::new(),
            max_output_tokens: 1_024,
            timeout_ms: request.timeout_ms.unwrap_or(20_000),
        };
        let reply = match self.model.complete(&completion) {
            Ok(completion) => completion.text,
            Err(error) => {
                return Ok(FlushReport {
                    due: true,
                    reason: "the model gave no answer; nothing was written".into(),
                    written: None,
                    model_error: Some(error.to_string()),
                })
            }
        };
        let notes = match crate::logic::write::flush::parse_reply(&reply) {
            crate::logic::write::flush::Reply::NothingToSave => {
                self.ledger
                    .record_flush(session, cycle, request.context.now_ms)
                    .map_err(storage_failure)?;
                return Ok(FlushReport {
                    due: true,
                    reason: "the model had nothing to save (NO_REPLY)".into(),
                    written: None,
                    model_error: None,
                });
            }
            crate::logic::write::flush::Reply::Unusable(why) => {
                return Ok(FlushReport {
                    due: true,
                    reason: format!("{why}; nothing was written"),
                    written: None,
                    model_error: None,
                });
            }
            crate::logic::write::flush::Reply::Notes(notes) => notes,
        };
        // The model may echo what it was shown: its notes get the same
        // cleaning as the transcript, so no injected block or secret lands.
        // A note naming a value only the left-out material held did not
        // come from what the model was shown: it is that material's.
        let (entries, relayed): (Vec<NewEntry>, Vec<NewEntry>) = notes
            .iter()
            .map(|note| {
                crate::text::transcript::redact(&crate::text::transcript::strip_injected(note).0).0
            })
            .map(|note| one_line(&note))
            .filter(|note| !note.is_empty())
            .map(|note| {
                let line = entry_line(&note, &[], None)
                    + &project_tag(&request.context).unwrap_or_default();
                let values: Vec<String> = values_of(&note).collect();
                let class = match outside_class(&values, &outside) {
                    Some(lower) => SourceClass::lowest(class, lower),
                    None => class,
                };
                NewEntry {
                    segment: Segment {
                        id: 0,
                        speaker: None,
                        text_hash: entry_hash(&indexed_text(&line)),
                        source_class: class,
                        session_kind: kind,
                        session_id: Some(session.to_string()),
                        observed_at: request.context.now_ms,
                        supersedes_key: None,
                        written_by: "flush",
                    },
                    line,
                }
            })
            .partition(|e| e.segment.source_class == class);
        let (lines, duplicates) = self.append_entries(&path, entries, request.context.now_ms)?;
        // Relayed notes go to the file of their own class.
        let mut by_class: Vec<(SourceClass, Vec<NewEntry>)> = Vec::new();
        for entry in relayed {
            let c = entry.segment.source_class;
            match by_class.iter_mut().find(|(k, _)| *k == c) {
                Some((_, list)) => list.push(entry),
                None => by_class.push((c, vec![entry])),
            }
        }
        for (c, list) in by_class {
            let sibling = layout::class_file(&daily_note(&request.context), c);
            self.append_entries(&sibling, list, request.context.now_ms)?;
        }
        self.ledger
            .record_flush(session, cycle, request.context.now_ms)
            .map_err(storage_failure)?;
        Ok(FlushReport {
            due: true,
            reason: format!("{} notes written, {duplicates} already there", lines.len()),
            written: Some(WriteReport {
                path: path.to_string(),
                lines,
                duplicates,
                source_class: class,
                session_kind: kind,
            }),
            model_error: None,
        })
    }
}
