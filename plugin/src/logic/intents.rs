//! Standing intents (prospective memory) as decisions: lifecycle, matching
//! and which armed intents a turn injects. Anti-nagging is structural: a
//! cool-down after each firing, a fire budget, an expiry, and at most three
//! intents within 1,200 characters per turn — an intent that does not fit
//! stays armed and spends no fire. No model call anywhere.

use crate::logic::inject::trigger::words;

pub const DEFAULT_COOLDOWN_MS: i64 = 24 * 3_600_000;
pub const DEFAULT_FIRE_BUDGET: u32 = 3;
pub const DEFAULT_EXPIRY_MS: i64 = 90 * 86_400_000;
pub const MAX_INTENTS_PER_TURN: usize = 3;
pub const INTENT_BUDGET_CHARS: usize = 1_200;
/// Cosine similarity at which a message matches a semantic intent's triggers.
pub const SEMANTIC_MATCH: f32 = 0.75;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Time-based and not yet due.
    Pending,
    /// Ready to fire.
    Armed,
    /// Fired and cooling down; fires again after the cool-down.
    Fired,
    /// Fire budget spent.
    Done,
    Cancelled,
    Expired,
}

impl State {
    pub const ALL: &'static [State] = &[
        State::Pending,
        State::Armed,
        State::Fired,
        State::Done,
        State::Cancelled,
        State::Expired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Armed => "armed",
            State::Fired => "fired",
            State::Done => "done",
            State::Cancelled => "cancelled",
            State::Expired => "expired",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub id: i64,
    pub text: String,
    /// Event-based: trigger entries; a match needs every word of one entry.
    pub triggers: Vec<String>,
    /// Time-based: when it is due.
    pub due_at: Option<i64>,
    pub channel: Option<String>,
    pub sender: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub fire_budget: u32,
    pub fires: u32,
    pub cooldown_ms: i64,
    pub last_fired_at: Option<i64>,
    pub cancelled: bool,
    /// The embedding of the triggers (embedder label, vector), for intents
    /// that also match by meaning.
    pub trigger_vector: Option<(String, Vec<f32>)>,
}

/// The intent's state at `now`. The clock may go backwards: an intent fired
/// "in the future" is treated as cooling down, never as fired twice.
pub fn state_at(intent: &Intent, now: i64) -> State {
    if intent.cancelled {
        return State::Cancelled;
    }
    if intent.fires >= intent.fire_budget {
        return State::Done;
    }
    if now >= intent.expires_at {
        return State::Expired;
    }
    if let Some(due) = intent.due_at {
        if now < due {
            return State::Pending;
        }
    }
    match intent.last_fired_at {
        Some(at) if now < at.saturating_add(intent.cooldown_ms) => State::Fired,
        _ => State::Armed,
    }
}

/// Who a turn is from, for an intent's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn<'a> {
    pub channel: Option<&'a str>,
    pub sender: Option<&'a str>,
    pub sender_is_owner: bool,
}

/// Whether the turn is in the intent's channel and sender scope. An intent
/// scoped to a sender fires for that sender; an unscoped one only on the
/// owner's turns, so nobody else can read it out or spend its budget.
pub fn in_scope(intent: &Intent, turn: &Turn<'_>) -> bool {
    intent
        .channel
        .as_deref()
        .is_none_or(|c| Some(c) == turn.channel)
        && match intent.sender.as_deref() {
            Some(s) => Some(s) == turn.sender,
            None => turn.sender_is_owner,
        }
}

/// Whether a message matches an event-based intent: the turn is in scope and
/// every word of at least one trigger entry is in the message (stemmed).
pub fn matches(intent: &Intent, message_words: &[String], turn: &Turn<'_>) -> bool {
    in_scope(intent, turn) && lexical_match(intent, message_words)
}

fn lexical_match(intent: &Intent, message_words: &[String]) -> bool {
    intent.triggers.iter().any(|t| {
        let need = words(t);
        !need.is_empty() && need.iter().all(|w| message_words.contains(w))
    })
}

/// Which intents a turn injects, in creation order: armed, in scope,
/// matching by words (or, for semantic intents, by `semantic`), at most three
/// within the character budget (`size` gives each intent's block size).
/// Intents that match but do not fit are left armed.
pub fn select(
    intents: &[Intent],
    message_words: &[String],
    turn: &Turn<'_>,
    now: i64,
    size: impl Fn(&Intent) -> usize,
    semantic: impl Fn(&Intent) -> bool,
) -> Vec<usize> {
    let mut chosen = Vec::new();
    let mut used = 0;
    for (i, intent) in intents.iter().enumerate() {
        if chosen.len() == MAX_INTENTS_PER_TURN {
            break;
        }
        if intent.due_at.is_some() || state_at(intent, now) != State::Armed {
            continue;
        }
        if !in_scope(intent, turn) || !(lexical_match(intent, message_words) || semantic(intent)) {
            continue;
        }
        let n = size(intent);
        if used + n > INTENT_BUDGET_CHARS {
            continue;
        }
        used += n;
        chosen.push(i);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(triggers: &[&str]) -> Intent {
        Intent {
            id: 1,
            text: "mention the changelog".into(),
            triggers: triggers.iter().map(|t| t.to_string()).collect(),
            due_at: None,
            channel: None,
            sender: None,
            created_at: 0,
            expires_at: DEFAULT_EXPIRY_MS,
            fire_budget: DEFAULT_FIRE_BUDGET,
            fires: 0,
            cooldown_ms: DEFAULT_COOLDOWN_MS,
            last_fired_at: None,
            cancelled: false,
            trigger_vector: None,
        }
    }

    #[test]
    fn lifecycle_over_a_fixed_clock() {
        let mut i = intent(&["release"]);
        assert_eq!(state_at(&i, 0), State::Armed);
        i.fires = 1;
        i.last_fired_at = Some(1_000);
        assert_eq!(state_at(&i, 2_000), State::Fired, "cooling down");
        assert_eq!(state_at(&i, 1_000 + DEFAULT_COOLDOWN_MS), State::Armed);
        assert_eq!(
            state_at(&i, 500),
            State::Fired,
            "a clock that went backwards never re-fires"
        );
        i.fires = 3;
        assert_eq!(state_at(&i, 10 * DEFAULT_COOLDOWN_MS), State::Done);
        let mut j = intent(&["x"]);
        assert_eq!(state_at(&j, DEFAULT_EXPIRY_MS), State::Expired);
        j.cancelled = true;
        assert_eq!(state_at(&j, 0), State::Cancelled);
        let mut k = intent(&[]);
        k.due_at = Some(5_000);
        assert_eq!(state_at(&k, 4_999), State::Pending);
        assert_eq!(state_at(&k, 5_000), State::Armed);
    }

    fn turn<'a>(channel: Option<&'a str>, sender: Option<&'a str>, owner: bool) -> Turn<'a> {
        Turn {
            channel,
            sender,
            sender_is_owner: owner,
        }
    }

    const OWNER: Turn<'static> = Turn {
        channel: None,
        sender: None,
        sender_is_owner: true,
    };

    #[test]
    fn a_match_needs_every_word_of_one_entry_and_the_scope() {
        let i = intent(&["release notes", "ship it"]);
        assert!(matches(&i, &words("we ship it today"), &OWNER));
        assert!(matches(&i, &words("the notes for the release"), &OWNER));
        assert!(!matches(&i, &words("release day"), &OWNER));
        let mut scoped = intent(&["release"]);
        scoped.channel = Some("slack".into());
        scoped.sender = Some("dana".into());
        assert!(matches(
            &scoped,
            &words("release"),
            &turn(Some("slack"), Some("dana"), false)
        ));
        assert!(!matches(
            &scoped,
            &words("release"),
            &turn(Some("telegram"), Some("dana"), false)
        ));
        assert!(!matches(
            &scoped,
            &words("release"),
            &turn(Some("slack"), None, true)
        ));
    }

    #[test]
    fn unscoped_intents_fire_only_for_the_owner() {
        let i = intent(&["release"]);
        assert!(matches(
            &i,
            &words("release"),
            &turn(Some("group"), Some("mallory"), true)
        ));
        assert!(!matches(
            &i,
            &words("release"),
            &turn(Some("group"), Some("mallory"), false)
        ));
        assert!(!matches(&i, &words("release"), &turn(None, None, false)));
    }

    #[test]
    fn at_most_three_within_the_budget_and_the_rest_stay_armed() {
        let all: Vec<Intent> = (0..5)
            .map(|n| Intent {
                id: n,
                ..intent(&["release"])
            })
            .collect();
        let words = words("release");
        assert_eq!(
            select(&all, &words, &OWNER, 0, |_| 100, |_| false),
            vec![0, 1, 2]
        );
        // The second is too big for what is left; the third still fits.
        let sizes = [500, 800, 600, 100, 100];
        assert_eq!(
            select(&all, &words, &OWNER, 0, |i| sizes[i.id as usize], |_| false),
            vec![0, 2, 3]
        );
    }

    #[test]
    fn semantic_matches_still_need_the_scope() {
        let mut scoped = intent(&["release"]);
        scoped.channel = Some("slack".into());
        let all = vec![scoped, intent(&["deploy"])];
        let unrelated = words("the quarterly numbers");
        assert_eq!(
            select(
                &all,
                &unrelated,
                &turn(Some("cli"), None, true),
                0,
                |_| 10,
                |_| true
            ),
            vec![1]
        );
        assert!(select(
            &all,
            &unrelated,
            &turn(Some("cli"), None, true),
            0,
            |_| 10,
            |_| false
        )
        .is_empty());
    }
}
