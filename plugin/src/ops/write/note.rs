//! `write.note`: one observation appended to today's daily note (or its
//! `-untrusted` / `-system` sibling), classified by its origin and the
//! turn's taint.

use super::append::{daily_note, session_kind_of, NewEntry, WriteReport};
use crate::contract::api::{ContentOrigin, SourceClass, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::provenance::{classify, Segment};
use crate::logic::write::taint::capped_by_taint;
use crate::ops::{storage_failure, Memory};
use crate::text::entry::{check_triggers, entry_line, fold, indexed_text, one_line, project_tag};
use crate::text::hash::entry_hash;
use crate::text::layout;

/// Longest note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 4_000;

#[derive(Debug, Clone, PartialEq)]
pub struct NoteRequest {
    pub text: String,
    /// Where the text came from, as the host knows it.
    pub origin: ContentOrigin,
    pub importance: Option<u8>,
    pub triggers: Vec<String>,
    pub supersedes_key: Option<String>,
    pub context: TurnContext,
}

impl Memory {
    /// Appends one observation to today's daily note. See the WIT `write.note`.
    pub fn note(&mut self, request: &NoteRequest) -> Result<WriteReport> {
        self.writable("note")?;
        let kind = session_kind_of(&request.context)?;
        // The limit counts what the caller wrote (whitespace folded), not the
        // escapes added to neutralise comment delimiters.
        if fold(&request.text).chars().count() > MAX_NOTE_CHARS {
            return Err(MemoryError::TooLarge(format!(
                "notes are at most {MAX_NOTE_CHARS} characters"
            )));
        }
        let text = one_line(&crate::text::transcript::redact(&request.text).0);
        if text.is_empty() {
            return Err(MemoryError::InvalidInput("the note is empty".into()));
        }
        if let Some(session) = &request.context.session_id {
            if self
                .ledger
                .is_tombstoned(session)
                .map_err(storage_failure)?
            {
                return Err(MemoryError::InvalidInput(format!(
                    "session {session} was forgotten; it writes nothing more"
                )));
            }
        }
        if let Some(n) = request.importance {
            if !(1..=10).contains(&n) {
                return Err(MemoryError::InvalidInput(format!(
                    "importance must be 1..10, got {n}"
                )));
            }
        }
        check_triggers(&request.triggers)?;
        // Taint crosses a turn: what the agent writes after its context held
        // outside material is no more trusted than that material.
        let class = capped_by_taint(
            classify(request.origin, request.context.sender_is_owner),
            &request.context,
        );
        // Annotations are columns only in owner and agent entries: outside
        // content never gets importance or triggers, even from the host.
        let honoured = matches!(class, SourceClass::Owner | SourceClass::Agent);
        let mut line = if honoured {
            entry_line(&text, &request.triggers, request.importance)
        } else {
            entry_line(&text, &[], None)
        };
        line.push_str(&project_tag(&request.context).unwrap_or_default());
        let entry = NewEntry {
            segment: Segment {
                id: 0,
                speaker: None,
                text_hash: entry_hash(&indexed_text(&line)),
                source_class: class,
                session_kind: kind,
                session_id: request.context.session_id.clone(),
                observed_at: request.context.now_ms,
                supersedes_key: request
                    .supersedes_key
                    .as_deref()
                    .map(one_line)
                    .filter(|k| !k.is_empty()),
                written_by: "note",
            },
            line,
        };
        let path = layout::class_file(&daily_note(&request.context), class);
        let (lines, duplicates) =
            self.append_entries(&path, vec![entry], request.context.now_ms)?;
        Ok(WriteReport {
            path: path.to_string(),
            lines,
            duplicates,
            source_class: class,
            session_kind: kind,
        })
    }
}
