//! `write.ingest`: a finished session's transcript taken in as evidence,
//! one line per message in the session's transcript note (quoted material
//! in its class siblings), each message once.

use super::append::{session_kind_of, transcript_note, NewEntry, Written};
use crate::contract::api::{SessionKind, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::provenance::{Segment, Speaker};
use crate::logic::write::taint::{clean_message, relay_external_values, taint_turns, CleanMessage};
use crate::ops::{storage_failure, Memory};
use crate::text::entry::{indexed_text, one_line, project_tag};
use crate::text::hash::{entry_hash, sha256_hex};
use crate::text::layout::{self, MemoryPath};
use crate::text::transcript::{self, Message};

#[derive(Debug, Clone, PartialEq)]
pub struct IngestRequest {
    pub session_id: String,
    /// The transcript, JSONL (see `text::transcript`).
    pub transcript: String,
    pub context: TurnContext,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// The session's transcript note, when anything was written.
    pub path: Option<String>,
    /// Every file written: the transcript note and its class siblings.
    pub files: Vec<String>,
    pub messages_read: u32,
    pub messages_written: u32,
    /// Messages ingested before (by content hash) and skipped.
    pub messages_already_ingested: u32,
    /// Injected memory blocks removed from messages.
    pub injected_blocks_stripped: u32,
    pub secrets_redacted: u32,
    /// Why nothing was written, when nothing was.
    pub skipped: Option<String>,
    /// Malformed transcript lines, with their numbers.
    pub problems: Vec<String>,
}

impl Memory {
    /// Takes a finished session's transcript in as evidence. See the WIT
    /// `write.ingest`.
    pub fn ingest(&mut self, request: &IngestRequest) -> Result<IngestReport> {
        self.writable("ingest")?;
        let kind = session_kind_of(&request.context)?;
        let session = request.session_id.trim();
        if session.is_empty() {
            return Err(MemoryError::InvalidInput("the session id is empty".into()));
        }
        let (messages, problems) = transcript::parse(&request.transcript);
        let mut report = IngestReport {
            messages_read: messages.len() as u32,
            problems,
            ..IngestReport::default()
        };
        if kind != SessionKind::Interactive {
            report.skipped = Some(format!(
                "{} sessions produce no durable memory; nothing was written",
                kind.as_str()
            ));
            return Ok(report);
        }
        if self
            .ledger
            .is_tombstoned(session)
            .map_err(storage_failure)?
        {
            report.skipped = Some(format!(
                "session {session} was forgotten; it is never ingested again"
            ));
            return Ok(report);
        }
        let transcript = transcript_note(&request.context, session);
        let (entries, hashes) = self.new_messages(
            &messages,
            session,
            kind,
            &transcript,
            &request.context,
            &mut report,
        )?;
        // The cuts found while writing join the parser's problems in line
        // order (a problem without a line number stays last).
        report
            .problems
            .sort_by_key(|p| crate::text::transcript::problem_line(p).unwrap_or(u32::MAX));
        if entries.is_empty() {
            report
                .skipped
                .get_or_insert_with(|| "no new messages".into());
            return Ok(report);
        }
        self.append_by_file(entries, &transcript, request.context.now_ms, &mut report)?;
        self.ledger
            .mark_ingested(session, &hashes)
            .map_err(storage_failure)?;
        report.path = report
            .files
            .iter()
            .find(|f| **f == transcript.as_str())
            .or(report.files.first())
            .cloned();
        Ok(report)
    }

    /// The transcript's messages not ingested before (by their hash, or by
    /// the one an older build recorded), each as an entry for the file of
    /// its class, with the hashes to record; counts what was stripped,
    /// redacted and already ingested.
    fn new_messages(
        &self,
        messages: &[Message],
        session: &str,
        kind: SessionKind,
        transcript: &MemoryPath,
        context: &TurnContext,
        report: &mut IngestReport,
    ) -> Result<(FileEntries, Vec<String>)> {
        let mut entries = Vec::new();
        let mut hashes = Vec::new();
        let mut cleaned: Vec<(&Message, CleanMessage)> = messages
            .iter()
            .map(|m| (m, clean_message(m, context.sender_is_owner)))
            .collect();
        taint_turns(&mut cleaned, context.tainted());
        // Memory's own output only taints; it is never stored, and a value
        // the agent repeats from its own memory is not relayed from outside.
        cleaned.retain(|(message, _)| !message.memory);
        relay_external_values(&mut cleaned);
        for (message, clean) in cleaned {
            report.injected_blocks_stripped += clean.stripped;
            report.secrets_redacted += clean.redacted;
            if clean.text.is_empty() {
                continue;
            }
            let legacy = legacy_ingest_hash(message, &clean.text);
            let (text, cut) = transcript::cut_message(clean.text, message.line);
            report.problems.extend(cut);
            let hash = ingest_hash(message, &text);
            let known = self
                .ledger
                .is_ingested(session, &hash)
                .map_err(storage_failure)?
                || hashes.contains(&hash)
                || match &legacy {
                    Some(legacy) => self
                        .ledger
                        .is_ingested(session, legacy)
                        .map_err(storage_failure)?,
                    None => false,
                };
            if known {
                report.messages_already_ingested += 1;
                continue;
            }
            let written_as = Written {
                class: clean.class,
                kind,
                session,
                context,
            };
            let target = layout::class_file(transcript, clean.class);
            entries.push((target, message_entry(message, &text, &written_as)));
            hashes.push(hash);
        }
        Ok((entries, hashes))
    }

    /// Appends the entries, one append per file, each in message order; the
    /// quoted material's files first, so a trusted line repeating it comes
    /// after it in the ledger's write order (see `UntrustedText::copied_by`).
    fn append_by_file(
        &mut self,
        entries: FileEntries,
        transcript: &MemoryPath,
        now_ms: i64,
        report: &mut IngestReport,
    ) -> Result<()> {
        let mut files: Vec<(MemoryPath, Vec<NewEntry>)> = Vec::new();
        for (target, entry) in entries {
            match files.iter_mut().find(|(p, _)| *p == target) {
                Some((_, list)) => list.push(entry),
                None => files.push((target, vec![entry])),
            }
        }
        files.sort_by_key(|(p, _)| p == transcript);
        for (path, list) in files {
            let (lines, _) = self.append_entries(&path, list, now_ms)?;
            report.messages_written += lines.len() as u32;
            report.files.push(path.to_string());
        }
        Ok(())
    }
}

/// Entries to append, each with the file it goes to.
type FileEntries = Vec<(MemoryPath, NewEntry)>;

/// A message's line in the transcript note (`- role (sender): text`), with
/// its ledger record: its speaker is recorded, never parsed from the text.
fn message_entry(message: &Message, text: &str, written: &Written<'_>) -> NewEntry {
    let who = match &message.sender {
        Some(sender) => format!("{} ({})", message.role.as_str(), one_line(sender)),
        None => message.role.as_str().to_string(),
    };
    let line = format!(
        "- {who}: {text}{}",
        project_tag(written.context).unwrap_or_default()
    );
    NewEntry {
        segment: Segment {
            id: 0,
            speaker: Some(Speaker {
                role: message.role.as_str().to_string(),
                sender: message.sender.as_deref().map(one_line),
                prefix: who,
            }),
            text_hash: entry_hash(&indexed_text(&line)),
            source_class: written.class,
            session_kind: written.kind,
            session_id: Some(written.session.to_string()),
            observed_at: written.context.now_ms,
            supersedes_key: None,
            written_by: "ingest",
        },
        line,
    }
}

/// What `ingest` records of a message to know it again: its role,
/// timestamp, sender and kept text.
fn ingest_hash(message: &Message, kept: &str) -> String {
    sha256_hex(
        format!(
            "{}\0{}\0{}\0{kept}",
            message.role.as_str(),
            message.timestamp.as_deref().unwrap_or(""),
            message.sender.as_deref().unwrap_or("")
        )
        .as_bytes(),
    )
}

/// Messages were once cut at this many characters; see `legacy_ingest_hash`.
const LEGACY_MESSAGE_CHARS: usize = 4_000;

/// The hash a message longer than `LEGACY_MESSAGE_CHARS` was recorded with
/// before the bound was raised (its first 4,000 characters and `…`), so a
/// session ingested then is not written again. `None` for shorter messages,
/// whose hash never changed.
fn legacy_ingest_hash(message: &Message, cleaned: &str) -> Option<String> {
    let (start, cut) = crate::text::words::truncate_chars(cleaned, LEGACY_MESSAGE_CHARS);
    cut.then(|| ingest_hash(message, &format!("{start}…")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_ingested_under_the_old_bound_is_known_again() {
        let message = Message {
            line: 1,
            role: crate::text::transcript::Role::User,
            text: String::new(),
            sender: None,
            sender_is_owner: true,
            channel: None,
            timestamp: None,
            origin: None,
            memory: false,
        };
        let long = "y".repeat(5_000);
        // What the 4,000-character cut recorded.
        let old = ingest_hash(&message, &format!("{}…", &long[..4_000]));
        assert_eq!(legacy_ingest_hash(&message, &long), Some(old.clone()));
        assert_ne!(ingest_hash(&message, &long), old);
        assert_eq!(legacy_ingest_hash(&message, &long[..4_000]), None);
        // The hash covers the role, timestamp and sender as well.
        let mut other = message.clone();
        other.sender = Some("dana".into());
        assert_ne!(ingest_hash(&other, "x"), ingest_hash(&message, "x"));
    }
}
