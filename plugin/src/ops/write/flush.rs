//! `write.flush`, the pre-compaction memory flush: when one is due
//! (`logic::write::flush`), the model writes down what compaction would
//! lose, and its notes are cleaned and appended like any write.

use super::append::{daily_note, NewEntry, WriteReport, Written};
use crate::contract::api::{SessionKind, SourceClass, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::host::model::{self, CompletionRequest, Role};
use crate::logic::provenance::Segment;
use crate::logic::write::flush::{self, flush_conversation, Reply, SessionState};
use crate::logic::write::taint::{
    clean_message, outside_class, relay_external_values, taint_turns, values_of, CleanMessage,
    OutsideValues,
};
use crate::ops::{storage_failure, Memory};
use crate::text::entry::{entry_line, indexed_text, one_line, project_tag};
use crate::text::hash::entry_hash;
use crate::text::layout;
use crate::text::transcript;

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
    pub fn flush(&mut self, request: &FlushRequest) -> Result<FlushReport> {
        self.writable("flush")?;
        let session = request.session_id.trim();
        if session.is_empty() {
            return Err(MemoryError::InvalidInput("the session id is empty".into()));
        }
        let kind = match self.flush_due(request, session)? {
            Ok(kind) => kind,
            Err(reason) => return Ok(FlushReport::not_due(reason)),
        };
        let (cycle, now) = (request.state.compaction_cycle, request.context.now_ms);
        let (messages, _) = transcript::parse(&request.transcript);
        let mut shown = shown_messages(&messages, &request.context);
        let outside = relay_external_values(&mut shown);
        let (conversation, class) = flush_conversation(&shown);
        let Some(class) = class else {
            self.ledger
                .record_flush(session, cycle, now)
                .map_err(storage_failure)?;
            return Ok(FlushReport::nothing_written(
                "nothing in the transcript to save".into(),
            ));
        };
        let path = layout::class_file(&daily_note(&request.context), class);
        let today = String::from_utf8_lossy(&self.read_for_append(&path)?).into_owned();
        let notes = match self.ask_for_notes(request, &today, &conversation) {
            Err(model_error) => {
                return Ok(FlushReport {
                    model_error: Some(model_error),
                    ..FlushReport::nothing_written(
                        "the model gave no answer; nothing was written".into(),
                    )
                })
            }
            Ok(Reply::NothingToSave) => {
                self.ledger
                    .record_flush(session, cycle, now)
                    .map_err(storage_failure)?;
                return Ok(FlushReport::nothing_written(
                    "the model had nothing to save (NO_REPLY)".into(),
                ));
            }
            Ok(Reply::Unusable(why)) => {
                return Ok(FlushReport::nothing_written(format!(
                    "{why}; nothing was written"
                )));
            }
            Ok(Reply::Notes(notes)) => notes,
        };
        let written_as = Written {
            class,
            kind,
            session,
            context: &request.context,
        };
        let (entries, relayed) = note_entries(&notes, &written_as, &outside);
        let (lines, duplicates) = self.append_entries(&path, entries, now)?;
        self.append_relayed(relayed, &request.context)?;
        self.ledger
            .record_flush(session, cycle, now)
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

    /// The session's kind when a flush is due; otherwise why not: a session
    /// of unknown or non-interactive kind, a forgotten session, a threshold
    /// not crossed, or a compaction cycle already flushed.
    fn flush_due(
        &self,
        request: &FlushRequest,
        session: &str,
    ) -> Result<std::result::Result<SessionKind, String>> {
        let Some(kind) = request.context.session_kind else {
            return Ok(Err(
                "the session kind is unknown; a flush writes nothing of unknown origin".into(),
            ));
        };
        if kind != SessionKind::Interactive {
            return Ok(Err(format!(
                "{} sessions produce no durable memory",
                kind.as_str()
            )));
        }
        if self
            .ledger
            .is_tombstoned(session)
            .map_err(storage_failure)?
        {
            return Ok(Err(format!(
                "session {session} was forgotten; it writes nothing more"
            )));
        }
        let soft = request
            .soft_threshold_tokens
            .unwrap_or(flush::DEFAULT_SOFT_THRESHOLD_TOKENS);
        if let Err(reason) = flush::threshold_crossed(&request.state, soft) {
            return Ok(Err(reason));
        }
        let cycle = request.state.compaction_cycle;
        if self
            .ledger
            .has_flushed(session, cycle)
            .map_err(storage_failure)?
        {
            return Ok(Err(format!("already flushed in compaction cycle {cycle}")));
        }
        Ok(Ok(kind))
    }

    /// One model turn for the notes: the model's reply, read, or its
    /// failure in words.
    fn ask_for_notes(
        &self,
        request: &FlushRequest,
        today: &str,
        conversation: &[(String, String)],
    ) -> std::result::Result<Reply, String> {
        let completion = CompletionRequest {
            purpose: "flush",
            messages: vec![
                model::Message::new(Role::System, flush::SYSTEM_PROMPT),
                model::Message::new(Role::User, flush::prompt(today, conversation)),
            ],
            tools: Vec::new(),
            max_output_tokens: 1_024,
            timeout_ms: request.timeout_ms.unwrap_or(flush::DEFAULT_TIMEOUT_MS),
        };
        let reply = self
            .model
            .complete(&completion)
            .map_err(|error| error.to_string())?;
        Ok(flush::parse_reply(&reply.text))
    }

    /// Appends relayed notes to today's note of their own class, one append
    /// per class, in the order the classes came.
    fn append_relayed(&mut self, relayed: Vec<NewEntry>, context: &TurnContext) -> Result<()> {
        let mut by_class: Vec<(SourceClass, Vec<NewEntry>)> = Vec::new();
        for entry in relayed {
            let c = entry.segment.source_class;
            match by_class.iter_mut().find(|(k, _)| *k == c) {
                Some((_, list)) => list.push(entry),
                None => by_class.push((c, vec![entry])),
            }
        }
        for (c, list) in by_class {
            let sibling = layout::class_file(&daily_note(context), c);
            self.append_entries(&sibling, list, context.now_ms)?;
        }
        Ok(())
    }
}

impl FlushReport {
    /// No flush was due: the model was not asked.
    fn not_due(reason: String) -> FlushReport {
        FlushReport {
            due: false,
            reason,
            written: None,
            model_error: None,
        }
    }

    /// A flush was due and wrote nothing.
    fn nothing_written(reason: String) -> FlushReport {
        FlushReport {
            due: true,
            reason,
            written: None,
            model_error: None,
        }
    }
}

/// The transcript's messages as a flush may show them: cleaned, classified
/// and tainted — taint first: a message that held only a recall block is
/// empty once the block is stripped, but the agent read it — then without
/// the empty ones and memory's own output, which only taints and is never
/// shown or stored.
fn shown_messages<'a>(
    messages: &'a [transcript::Message],
    context: &TurnContext,
) -> Vec<(&'a transcript::Message, CleanMessage)> {
    let mut cleaned: Vec<(&transcript::Message, CleanMessage)> = messages
        .iter()
        .map(|m| (m, clean_message(m, context.sender_is_owner)))
        .collect();
    taint_turns(&mut cleaned, context.tainted());
    cleaned.retain(|(message, clean)| !clean.text.is_empty() && !message.memory);
    cleaned
}

/// The model's notes as entries. The model may echo what it was shown: its
/// notes get the same cleaning as the transcript, so no injected block or
/// secret lands. A note naming a value only the left-out material held did
/// not come from what the model was shown: it is that material's, and is
/// returned apart (relayed) to go to the file of its own class.
fn note_entries(
    notes: &[String],
    written: &Written<'_>,
    outside: &OutsideValues,
) -> (Vec<NewEntry>, Vec<NewEntry>) {
    notes
        .iter()
        .map(|note| transcript::redact(&transcript::strip_injected(note).0).0)
        .map(|note| one_line(&note))
        .filter(|note| !note.is_empty())
        .map(|note| {
            let line =
                entry_line(&note, &[], None) + &project_tag(written.context).unwrap_or_default();
            let values: Vec<String> = values_of(&note).collect();
            let class = match outside_class(&values, outside) {
                Some(lower) => SourceClass::lowest(written.class, lower),
                None => written.class,
            };
            NewEntry {
                segment: Segment {
                    id: 0,
                    speaker: None,
                    text_hash: entry_hash(&indexed_text(&line)),
                    source_class: class,
                    session_kind: written.kind,
                    session_id: Some(written.session.to_string()),
                    observed_at: written.context.now_ms,
                    supersedes_key: None,
                    written_by: "flush",
                },
                line,
            }
        })
        .partition(|e| e.segment.source_class == written.class)
}
