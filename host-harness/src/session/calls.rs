//! The component's calls as the command line makes them: each builds its
//! request, and the turn context inside it, from plain values and the
//! session's clock, zone, projects, taint and gates. A command never
//! constructs a generated record; it reads the records the component returns.

use super::Session;
use crate::host::{
    wit, wit_bootstrap, wit_dream, wit_inject, wit_intents, wit_recall, wit_user, wit_write,
    CallError,
};
use crate::spool::{FlushCall, IngestCall};

/// A memory file or lines of it (`get`'s `PATH[:FROM[-TO]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetTarget {
    pub path: String,
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
}

/// An observation for today's daily note, and where it came from.
#[derive(Debug, Clone)]
pub struct Note {
    pub text: String,
    pub origin: wit_write::ContentOrigin,
    pub session_kind: wit::SessionKind,
    /// The session the note belongs to (for `forget`).
    pub session_id: Option<String>,
    pub importance: Option<u8>,
    pub triggers: Vec<String>,
    /// Lineage key: a newer note with the same key replaces this one.
    pub supersedes_key: Option<String>,
}

impl Note {
    /// A note of an interactive session, with no session, importance,
    /// triggers or lineage.
    pub fn new(text: impl Into<String>, origin: wit_write::ContentOrigin) -> Note {
        Note {
            text: text.into(),
            origin,
            session_kind: wit::SessionKind::Interactive,
            session_id: None,
            importance: None,
            triggers: Vec::new(),
            supersedes_key: None,
        }
    }
}

/// An incoming message for lane 1 (and lane 2), and where it came from.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub message: String,
    pub channel: Option<String>,
    pub sender: Option<String>,
    /// The sender is the authenticated owner.
    pub sender_is_owner: bool,
    pub session_kind: wit::SessionKind,
    /// Active project keys besides the session's, most recent first.
    pub projects: Vec<String>,
}

impl Incoming {
    /// A message the owner typed at this terminal (the turn
    /// `Session::context` describes).
    pub fn from_owner(message: impl Into<String>) -> Incoming {
        Incoming {
            message: message.into(),
            channel: Some("cli".into()),
            sender: None,
            sender_is_owner: true,
            session_kind: wit::SessionKind::Interactive,
            projects: Vec::new(),
        }
    }
}

/// A standing intent as `intent create` takes it, in the command line's
/// units.
#[derive(Debug, Clone)]
pub struct NewIntent {
    pub text: String,
    /// Trigger entries; a message matches when it has every word of one.
    pub triggers: Vec<String>,
    pub due_at_ms: Option<i64>,
    pub channel: Option<String>,
    pub sender: Option<String>,
    pub fire_budget: Option<u32>,
    pub cooldown_hours: Option<u32>,
    pub expires_days: Option<u32>,
    /// Also match by meaning.
    pub semantic: bool,
    pub origin: wit_write::ContentOrigin,
    pub session_kind: wit::SessionKind,
}

impl NewIntent {
    /// An event-based intent in the owner's words, with the component's
    /// defaults: any channel and sender, the default budget, cool-down and
    /// expiry, words only.
    pub fn on_trigger(text: impl Into<String>, triggers: Vec<String>) -> NewIntent {
        NewIntent {
            text: text.into(),
            triggers,
            due_at_ms: None,
            channel: None,
            sender: None,
            fire_budget: None,
            cooldown_hours: None,
            expires_days: None,
            semantic: false,
            origin: wit_write::ContentOrigin::SenderMessage,
            session_kind: wit::SessionKind::Interactive,
        }
    }

    /// The intent as the component takes it (the hours and days in ms).
    pub(crate) fn spec(&self) -> wit_intents::IntentSpec {
        wit_intents::IntentSpec {
            text: self.text.clone(),
            triggers: self.triggers.clone(),
            due_at_ms: self.due_at_ms,
            channel: self.channel.clone(),
            sender: self.sender.clone(),
            expires_in_ms: self.expires_days.map(|d| d as i64 * 86_400_000),
            fire_budget: self.fire_budget,
            cooldown_ms: self.cooldown_hours.map(|h| h as i64 * 3_600_000),
            semantic: self.semantic,
            origin: self.origin,
        }
    }
}

impl Session {
    /// The session's turn context at `now_ms` (a spooled call's own time).
    fn context_at(&mut self, now_ms: i64) -> wit::TurnContext {
        let keep = self.now_ms;
        self.set_now(now_ms);
        let context = self.context();
        self.set_now(keep);
        context
    }

    /// The context of an incoming message's turn.
    fn incoming_context(&self, incoming: &Incoming) -> wit::TurnContext {
        let mut context = self.context();
        context.channel = incoming.channel.clone();
        context.sender = incoming.sender.clone();
        context.sender_is_owner = incoming.sender_is_owner;
        context.session_kind = Some(incoming.session_kind);
        context
            .active_projects
            .extend(incoming.projects.iter().cloned());
        context
    }

    /// `memory_search` in this turn: the hits it returns count as recalls
    /// for dreaming.
    pub fn search(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        min_score: Option<f32>,
    ) -> Result<wit_recall::SearchResult, CallError> {
        let context = self.context();
        self.search_in(context, query, max_results, min_score)
    }

    /// A search of an evaluation run, not of the agent recalling: no
    /// session kind, so no recall signals.
    pub fn search_unrecorded(
        &mut self,
        query: &str,
        max_results: Option<u32>,
        min_score: Option<f32>,
    ) -> Result<wit_recall::SearchResult, CallError> {
        let context = wit::TurnContext {
            session_kind: None,
            ..self.context()
        };
        self.search_in(context, query, max_results, min_score)
    }

    fn search_in(
        &mut self,
        context: wit::TurnContext,
        query: &str,
        max_results: Option<u32>,
        min_score: Option<f32>,
    ) -> Result<wit_recall::SearchResult, CallError> {
        self.host.search(&wit_recall::SearchRequest {
            query: query.to_string(),
            max_results,
            min_score,
            context,
        })
    }

    /// `memory_get` in this turn (a short read counts as recall).
    pub fn get(&mut self, target: &GetTarget) -> Result<wit_recall::GetResult, CallError> {
        let request = get_request(target, Some(self.context()));
        self.host.get(&request)
    }

    /// `memory_get` outside any turn: nothing is recorded.
    pub fn get_unrecorded(
        &mut self,
        target: &GetTarget,
    ) -> Result<wit_recall::GetResult, CallError> {
        self.host.get(&get_request(target, None))
    }

    /// The curated context a session starts with.
    pub fn bootstrap(&mut self) -> Result<wit_bootstrap::BootstrapResult, CallError> {
        let request = wit_bootstrap::BootstrapRequest {
            purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
            context: self.context(),
            known_digest: None,
        };
        self.host.bootstrap(&request)
    }

    /// Appends an observation to today's daily note.
    pub fn note(&mut self, note: Note) -> Result<wit_write::WriteReport, CallError> {
        let mut context = self.context();
        context.session_kind = Some(note.session_kind);
        context.session_id = note.session_id;
        let request = wit_write::NoteRequest {
            text: note.text,
            origin: note.origin,
            importance: note.importance,
            triggers: note.triggers,
            supersedes_key: note.supersedes_key,
            context,
        };
        self.host.note(&request)
    }

    /// Lane 1 for an incoming message.
    pub fn inject(
        &mut self,
        incoming: &Incoming,
        mode: wit_inject::EscalationMode,
    ) -> Result<wit_inject::InjectResult, CallError> {
        let request = wit_inject::InjectRequest {
            message: incoming.message.clone(),
            mode,
            context: self.incoming_context(incoming),
        };
        self.host.inject(&request)
    }

    /// Lane 2 for an incoming message, with the component's deadline.
    pub fn escalate(
        &mut self,
        incoming: &Incoming,
        remember_across_conversations: bool,
    ) -> Result<wit_inject::Escalation, CallError> {
        let request = wit_inject::EscalateRequest {
            message: incoming.message.clone(),
            context: self.incoming_context(incoming),
            timeout_ms: None,
            remember_across_conversations,
        };
        self.host.escalate(&request)
    }

    /// Creates a standing intent (or a wish).
    pub fn intent_create(
        &mut self,
        intent: &NewIntent,
    ) -> Result<wit_intents::CreateResult, CallError> {
        let mut context = self.context();
        context.session_kind = Some(intent.session_kind);
        self.host.intent_create(&intent.spec(), &context)
    }

    /// Every intent with its state now.
    pub fn intent_list(&mut self) -> Result<Vec<wit_intents::Intent>, CallError> {
        let context = self.context();
        self.host.intent_list(&context)
    }

    pub fn intent_cancel(&mut self, id: i64) -> Result<wit_intents::Intent, CallError> {
        let context = self.context();
        self.host.intent_cancel(id, &context)
    }

    /// Sets a directive in USER.md; without `expected_hash`, against the
    /// file as it is now.
    pub fn user_set(
        &mut self,
        directive: String,
        replaces_line: Option<u32>,
        expected_hash: Option<String>,
    ) -> Result<wit_user::UserModel, CallError> {
        let expected_hash = match expected_hash {
            Some(hash) => hash,
            None => self.host.user_show()?.hash,
        };
        let request = wit_user::SetRequest {
            directive,
            replaces_line,
            expected_hash,
            context: self.context(),
        };
        self.host.user_set(&request)
    }

    /// A dreaming sweep with the configured gates: these phases (none: all),
    /// or with `dry_run` only the explanation.
    pub fn sweep(
        &mut self,
        phases: Vec<wit_dream::Phase>,
        dry_run: bool,
    ) -> Result<wit_dream::DreamReport, CallError> {
        let request = wit_dream::DreamRequest {
            phases,
            dry_run,
            gates: self.dream_gates,
            context: self.context(),
        };
        self.host.dream(&request)
    }

    /// Restores MEMORY.md to its state before the latest sweep that changed it.
    pub fn rollback(&mut self) -> Result<wit_dream::RollbackReport, CallError> {
        let context = self.context();
        self.host.dream_rollback(&context)
    }

    /// Removes everything a session wrote and tombstones it.
    pub fn forget(&mut self, session_id: &str) -> Result<wit_write::ForgetReport, CallError> {
        let mut context = self.context();
        context.session_id = Some(session_id.to_string());
        self.host.forget(&wit_write::ForgetRequest {
            session_id: session_id.to_string(),
            context,
        })
    }

    /// The pre-compaction flush, at the call's own time.
    pub fn flush(&mut self, call: &FlushCall) -> Result<wit_write::FlushReport, CallError> {
        let FlushCall {
            session,
            transcript,
            now_ms,
            tokens,
            context_window,
            reserve,
            cycle,
            soft_threshold,
        } = call;
        let mut context = self.context_at(*now_ms);
        context.session_id = Some(session.clone());
        let request = wit_write::FlushRequest {
            session_id: session.clone(),
            state: wit_write::SessionState {
                token_estimate: tokens.unwrap_or(*context_window),
                context_window: *context_window,
                reserve_tokens: *reserve,
                compaction_cycle: *cycle,
            },
            soft_threshold_tokens: *soft_threshold,
            transcript: transcript.clone(),
            timeout_ms: None,
            context,
        };
        self.host.flush(&request)
    }

    /// A finished session's transcript taken in as evidence, at the call's
    /// own time.
    pub fn ingest(&mut self, call: &IngestCall) -> Result<wit_write::IngestReport, CallError> {
        let IngestCall {
            session,
            transcript,
            now_ms,
            session_kind,
            not_owner,
        } = call;
        let mut context = self.context_at(*now_ms);
        context.sender_is_owner = !not_owner;
        context.session_kind = Some(
            crate::names::parse_session_kind(session_kind).unwrap_or(wit::SessionKind::Interactive),
        );
        context.session_id = Some(session.clone());
        self.host.ingest(&wit_write::IngestRequest {
            session_id: session.clone(),
            transcript: transcript.clone(),
            context,
        })
    }
}

fn get_request(target: &GetTarget, context: Option<wit::TurnContext>) -> wit_recall::GetRequest {
    wit_recall::GetRequest {
        path: target.path.clone(),
        start_line: target.start_line,
        end_line: target.end_line,
        context,
    }
}
