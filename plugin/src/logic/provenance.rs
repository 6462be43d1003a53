//! Provenance classification: who a piece of content came from, decided by
//! code from what the host knows about the call (the sender, whether the
//! sender is the owner, the session kind, where each content part came from)
//! and never from the content itself. Conservative: unknown external origin
//! is untrusted, unknown scaffolding is system, nothing defaults to owner.

use crate::contract::api::{ContentOrigin, Provenance, ProvenanceBasis, SessionKind, SourceClass};

/// One write the ledger recorded: the text it wrote (by hash), its class
/// and session, and who wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its id in the ledger (the write order); 0 before it is recorded.
    pub id: i64,
    pub text_hash: String,
    pub source_class: SourceClass,
    pub session_kind: SessionKind,
    pub session_id: Option<String>,
    pub observed_at: i64,
    pub supersedes_key: Option<String>,
    pub written_by: &'static str,
    /// Who said a transcript line (ingest), and the prefix it was written
    /// with; `None` for notes and flushes.
    pub speaker: Option<Speaker>,
}

/// The author of a transcript line, recorded beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    /// `user`, `assistant`, `tool` or `system`.
    pub role: String,
    pub sender: Option<String>,
    /// The prefix the line was written with, before `: `.
    pub prefix: String,
}

/// The source class of content of `origin` in a turn whose sender is (or is
/// not) the authenticated owner.
pub fn classify(origin: ContentOrigin, sender_is_owner: bool) -> SourceClass {
    match origin {
        ContentOrigin::SenderMessage if sender_is_owner => SourceClass::Owner,
        ContentOrigin::AgentDerived if sender_is_owner => SourceClass::Agent,
        // What a non-owner said, or what the agent made of it, is external.
        ContentOrigin::SenderMessage | ContentOrigin::AgentDerived => SourceClass::Untrusted,
        ContentOrigin::WebPage
        | ContentOrigin::ToolOutput
        | ContentOrigin::Participant
        | ContentOrigin::UnknownExternal => SourceClass::Untrusted,
        ContentOrigin::Scaffolding => SourceClass::System,
    }
}

/// The write order of a line the component never wrote, first seen when
/// the ledger's last segment was `last_segment`: it may be older, so every
/// untrusted write up to then may have come first. Recorded entries are
/// ordered by their own segment id; an untrusted write `u` came before an
/// entry of order `o` when `u < o`.
pub fn order_of_sighting(last_segment: i64) -> i64 {
    last_segment + 1
}

/// Caps an entry's provenance at the class its file's name declares
/// (`memory/…-untrusted.md`, `…-system.md`): lowering only, never raising,
/// so a name can never make content more trusted than its record.
pub fn capped(mut p: Provenance, cap: Option<SourceClass>) -> Provenance {
    if let Some(cap) = cap {
        p.source_class = SourceClass::lowest(p.source_class, cap);
        p.file_class = SourceClass::lowest(p.file_class, cap);
        p.promotable = promotable(p.source_class, p.file_class, p.session_kind);
    }
    p
}

/// Whether an entry may ever be promoted into the curated core: its own class
/// and its file's class are both owner or agent, and it came from an
/// interactive session. Trusted lines in a downgraded file are not promotable.
pub fn promotable(class: SourceClass, file_class: SourceClass, kind: SessionKind) -> bool {
    let trusted = |c| matches!(c, SourceClass::Owner | SourceClass::Agent);
    trusted(class) && trusted(file_class) && kind == SessionKind::Interactive
}

/// Changes only the owner may make (intents, USER.md) are made only by the
/// owner in an interactive session: a cron, heartbeat or sub-agent turn, or
/// one of unknown kind, never makes them, even when its sender is the owner.
pub fn owner_in_person(context: &crate::contract::api::TurnContext) -> Result<(), String> {
    if !context.sender_is_owner {
        return Err("the sender is not the owner".into());
    }
    match context.session_kind {
        Some(SessionKind::Interactive) => Ok(()),
        Some(kind) => Err(format!("a {} session", kind.as_str())),
        None => Err("a session of unknown kind".into()),
    }
}

/// Whether an intent's text may arm an intent: only text in the owner's
/// control — typed by the owner, or derived by the agent in a turn nothing
/// from outside has tainted. An intent fires on the owner's later messages,
/// so it must never carry an outsider's words.
pub fn intent_text_allowed(
    origin: ContentOrigin,
    taint: Option<SourceClass>,
) -> Result<(), String> {
    match (origin, taint) {
        (ContentOrigin::SenderMessage, _) | (ContentOrigin::AgentDerived, None) => Ok(()),
        (ContentOrigin::AgentDerived, Some(class)) => Err(format!(
            "the agent derived this text in a turn that held {} content; only the owner's own words can arm an intent now",
            class.as_str()
        )),
        (other, _) => Err(format!(
            "the intent's text came from {} ({}): text from outside the owner's control never arms an intent",
            other.as_str(),
            classify(other, true).as_str()
        )),
    }
}

/// A record of a line's content in the ledger, wherever it was written: the
/// write order, class and session kind of one segment with the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentRecord {
    pub order: i64,
    pub class: SourceClass,
    pub session_kind: SessionKind,
}

/// Provenance follows content: an entry whose text the ledger recorded
/// *before* it (a lower write order; an entry of unknown order comes after
/// everything) with a lower class, or in a scheduled or sub-agent session,
/// keeps that record wherever the line now is — renamed, moved, copied into
/// another file or pasted back by hand. A later record of the same text
/// does not lower it: the original came first, the later one is the copy.
pub fn following_content(mut p: Provenance, records: &[ContentRecord]) -> Provenance {
    let own_order = p.order.unwrap_or(i64::MAX);
    let mut changed = false;
    for r in records.iter().filter(|r| r.order < own_order) {
        if r.class.trust_rank() < p.source_class.trust_rank() {
            p.source_class = r.class;
            changed = true;
        }
        if r.session_kind != SessionKind::Interactive && p.session_kind == SessionKind::Interactive
        {
            p.session_kind = r.session_kind;
            changed = true;
        }
    }
    if changed {
        p.basis = ProvenanceBasis::Copied;
        p.promotable = promotable(p.source_class, p.file_class, p.session_kind);
    }
    p
}

/// A file the component never wrote is the operator's, and `owner`, only
/// while none of its lines is known with a lower class: the class of such a
/// file is the lowest class among its entries.
pub fn operator_file_class(entries: &[&Provenance]) -> SourceClass {
    entries
        .iter()
        .map(|p| p.source_class)
        .fold(SourceClass::Owner, SourceClass::lowest)
}

/// The entry's provenance in a file of `file_class` (lowering only).
pub fn in_file_of_class(mut p: Provenance, file_class: SourceClass) -> Provenance {
    p.file_class = SourceClass::lowest(p.file_class, file_class);
    p.promotable = promotable(p.source_class, p.file_class, p.session_kind);
    p
}

/// Whether an entry's annotations are columns: only in owner and agent
/// entries of interactive sessions (what a cron run wrote is scaffolding's,
/// wherever it was copied). In untrusted and system entries they are text — no importance,
/// no triggers — so content from outside cannot rank itself up or arm
/// itself for injection, however the annotation got there.
pub fn annotations_honoured(p: &Provenance) -> bool {
    honoured(p.source_class, p.file_class, p.session_kind)
}

/// `annotations_honoured` from the three columns it reads.
pub fn honoured(source: SourceClass, file: SourceClass, kind: SessionKind) -> bool {
    matches!(
        SourceClass::lowest(source, file),
        SourceClass::Owner | SourceClass::Agent
    ) && kind == SessionKind::Interactive
}

/// What the ledger says about one file, for projecting its entries.
#[derive(Debug, Clone)]
pub enum FileTrust {
    /// The component never wrote the file: the operator's own, in their trust
    /// boundary.
    Operator,
    /// The ledger was lost and the file may have been written by the
    /// component: nothing in it can be vouched for.
    Lost,
    /// The component wrote to the file.
    Recorded {
        file_class: SourceClass,
        /// No edit from outside since the component's last write.
        intact: bool,
        /// Lines the ledger does not know may be the component's own
        /// unvouched writes from before a loss.
        prior_lost: bool,
        segments: Vec<Segment>,
    },
}

/// The provenance of one entry of a file, from the entry's text hash.
/// Appended entries take their segment's record while the file is intact;
/// after an outside edit, or for lines the ledger does not know, the
/// file-level class applies.
pub fn entry_provenance(
    trust: &FileTrust,
    text_hash: &str,
    file_date_ms: Option<i64>,
) -> Provenance {
    match trust {
        FileTrust::Operator => Provenance {
            source_class: SourceClass::Owner,
            session_kind: SessionKind::Interactive,
            basis: ProvenanceBasis::OperatorFile,
            file_class: SourceClass::Owner,
            promotable: true,
            session_id: None,
            observed_at_ms: file_date_ms,
            supersedes_key: None,
            role: None,
            speaker: None,
            order: None,
        },
        FileTrust::Lost => Provenance {
            source_class: SourceClass::Untrusted,
            session_kind: SessionKind::Interactive,
            basis: ProvenanceBasis::Lost,
            file_class: SourceClass::Untrusted,
            promotable: false,
            session_id: None,
            observed_at_ms: file_date_ms,
            supersedes_key: None,
            role: None,
            speaker: None,
            order: None,
        },
        FileTrust::Recorded {
            file_class,
            intact,
            prior_lost,
            segments,
        } => {
            let segment = segments.iter().rev().find(|s| s.text_hash == text_hash);
            let source_class = match segment {
                Some(s) if *intact => s.source_class,
                Some(s) => SourceClass::lowest(s.source_class, *file_class),
                None => *file_class,
            };
            let session_kind = segment.map_or(SessionKind::Interactive, |s| s.session_kind);
            Provenance {
                source_class,
                session_kind,
                basis: match (segment, prior_lost) {
                    (Some(_), _) => ProvenanceBasis::Recorded,
                    (None, true) => ProvenanceBasis::Lost,
                    (None, false) => ProvenanceBasis::OperatorFile,
                },
                file_class: *file_class,
                promotable: promotable(source_class, *file_class, session_kind),
                session_id: segment.and_then(|s| s.session_id.clone()),
                observed_at_ms: segment.map(|s| s.observed_at).or(file_date_ms),
                supersedes_key: segment.and_then(|s| s.supersedes_key.clone()),
                role: segment
                    .and_then(|s| s.speaker.as_ref())
                    .map(|w| w.role.clone()),
                speaker: segment
                    .and_then(|s| s.speaker.as_ref())
                    .map(|w| w.prefix.clone()),
                order: segment.map(|s| s.id),
            }
        }
    }
}

/// The class a recalled entry is framed with: the lower of its own and its
/// file's; system for what a cron, heartbeat or sub-agent session wrote
/// (scaffolding output, never a candidate); and untrusted for a
/// trusted-looking entry that repeats the text of an untrusted one (a copy
/// pasted into a hand-written file).
pub fn shown_class(
    provenance: &Provenance,
    text: &str,
    untrusted: &crate::logic::dream::consolidate::UntrustedText,
) -> SourceClass {
    let class = SourceClass::lowest(provenance.source_class, provenance.file_class);
    let trusted = matches!(class, SourceClass::Owner | SourceClass::Agent);
    if trusted && provenance.session_kind != SessionKind::Interactive {
        SourceClass::System
    } else if trusted
        && untrusted.copied_by(
            &crate::logic::dream::consolidate::fact_key(text),
            provenance.order,
            provenance.session_id.as_deref(),
        )
    {
        SourceClass::Untrusted
    } else {
        class
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(hash: &str, class: SourceClass) -> Segment {
        Segment {
            id: 1,
            text_hash: hash.into(),
            source_class: class,
            session_kind: SessionKind::Interactive,
            session_id: Some("s".into()),
            observed_at: 5,
            supersedes_key: Some("k".into()),
            written_by: "note",
            speaker: None,
        }
    }

    #[test]
    fn entries_take_their_segment_while_the_file_is_intact() {
        let trust = FileTrust::Recorded {
            file_class: SourceClass::Untrusted,
            intact: true,
            prior_lost: false,
            segments: vec![
                segment("a", SourceClass::Owner),
                segment("b", SourceClass::Untrusted),
            ],
        };
        let owner_line = entry_provenance(&trust, "a", None);
        assert_eq!(owner_line.source_class, SourceClass::Owner);
        assert!(
            !owner_line.promotable,
            "a trusted line in a downgraded file is not promotable"
        );
        assert_eq!(owner_line.supersedes_key.as_deref(), Some("k"));
        assert_eq!(
            entry_provenance(&trust, "b", None).source_class,
            SourceClass::Untrusted
        );
        let unknown = entry_provenance(&trust, "zzz", None);
        assert_eq!(
            unknown.source_class,
            SourceClass::Untrusted,
            "unknown lines take the file class"
        );
    }

    #[test]
    fn an_outside_edit_falls_back_to_the_file_class() {
        let trust = FileTrust::Recorded {
            file_class: SourceClass::Untrusted,
            intact: false,
            prior_lost: false,
            segments: vec![segment("a", SourceClass::Owner)],
        };
        assert_eq!(
            entry_provenance(&trust, "a", None).source_class,
            SourceClass::Untrusted
        );
    }

    #[test]
    fn lost_provenance_is_never_owner() {
        let p = entry_provenance(&FileTrust::Lost, "a", None);
        assert_eq!(p.source_class, SourceClass::Untrusted);
        assert!(!p.promotable);
        assert_eq!(p.basis, ProvenanceBasis::Lost);
    }

    #[test]
    fn owner_only_when_the_owner_typed_it() {
        assert_eq!(
            classify(ContentOrigin::SenderMessage, true),
            SourceClass::Owner
        );
        assert_eq!(
            classify(ContentOrigin::SenderMessage, false),
            SourceClass::Untrusted
        );
        assert_eq!(
            classify(ContentOrigin::AgentDerived, true),
            SourceClass::Agent
        );
        assert_eq!(
            classify(ContentOrigin::AgentDerived, false),
            SourceClass::Untrusted
        );
    }

    #[test]
    fn nothing_external_or_unknown_is_trusted() {
        for origin in ContentOrigin::ALL {
            let class = classify(*origin, true);
            match origin {
                ContentOrigin::SenderMessage => assert_eq!(class, SourceClass::Owner),
                ContentOrigin::AgentDerived => assert_eq!(class, SourceClass::Agent),
                ContentOrigin::Scaffolding => assert_eq!(class, SourceClass::System),
                _ => assert_eq!(class, SourceClass::Untrusted, "{origin:?}"),
            }
        }
    }

    #[test]
    fn the_lowest_class_wins_and_gates_promotion() {
        assert_eq!(
            SourceClass::lowest(SourceClass::Owner, SourceClass::Untrusted),
            SourceClass::Untrusted
        );
        assert_eq!(
            SourceClass::lowest(SourceClass::System, SourceClass::Agent),
            SourceClass::System
        );
        assert!(promotable(
            SourceClass::Owner,
            SourceClass::Agent,
            SessionKind::Interactive
        ));
        assert!(!promotable(
            SourceClass::Owner,
            SourceClass::Untrusted,
            SessionKind::Interactive
        ));
        assert!(!promotable(
            SourceClass::Owner,
            SourceClass::Owner,
            SessionKind::Cron
        ));
        assert!(!promotable(
            SourceClass::System,
            SourceClass::Owner,
            SessionKind::Interactive
        ));
    }

    fn operator_line(order: i64) -> Provenance {
        let mut p = entry_provenance(&FileTrust::Operator, "x", None);
        p.order = Some(order);
        p
    }

    fn record(order: i64, class: SourceClass, kind: SessionKind) -> ContentRecord {
        ContentRecord {
            order,
            class,
            session_kind: kind,
        }
    }

    #[test]
    fn a_line_keeps_the_lowest_class_recorded_before_it() {
        let moved = following_content(
            operator_line(9),
            &[record(4, SourceClass::Untrusted, SessionKind::Interactive)],
        );
        assert_eq!(moved.source_class, SourceClass::Untrusted);
        assert_eq!(moved.basis, ProvenanceBasis::Copied);
        assert!(!moved.promotable);
        let scheduled = following_content(
            operator_line(9),
            &[record(4, SourceClass::Owner, SessionKind::Cron)],
        );
        assert_eq!(scheduled.session_kind, SessionKind::Cron);
        assert!(!scheduled.promotable);
    }

    #[test]
    fn a_later_record_of_the_same_text_does_not_lower_the_original() {
        let original = following_content(
            operator_line(3),
            &[record(7, SourceClass::Untrusted, SessionKind::Interactive)],
        );
        assert_eq!(original.source_class, SourceClass::Owner);
        assert_eq!(original.basis, ProvenanceBasis::OperatorFile);
        assert!(original.promotable);
        let mut unknown_order = operator_line(0);
        unknown_order.order = None;
        let lowered = following_content(
            unknown_order,
            &[record(7, SourceClass::System, SessionKind::Interactive)],
        );
        assert_eq!(lowered.source_class, SourceClass::System);
    }

    #[test]
    fn an_operator_file_is_owner_only_while_all_its_lines_are() {
        let owner = operator_line(1);
        let copied = following_content(
            operator_line(9),
            &[record(2, SourceClass::Untrusted, SessionKind::Interactive)],
        );
        assert_eq!(operator_file_class(&[&owner]), SourceClass::Owner);
        let class = operator_file_class(&[&owner, &copied]);
        assert_eq!(class, SourceClass::Untrusted);
        let owner = in_file_of_class(owner, class);
        assert_eq!(owner.source_class, SourceClass::Owner);
        assert!(!owner.promotable, "a trusted line in a downgraded file");
        assert!(!annotations_honoured(&owner));
        assert!(annotations_honoured(&operator_line(1)));
    }

    #[test]
    fn origins_round_trip_their_names() {
        for origin in ContentOrigin::ALL {
            assert_eq!(ContentOrigin::parse(origin.as_str()), Some(*origin));
        }
        assert_eq!(ContentOrigin::parse("owner"), None);
    }
}
