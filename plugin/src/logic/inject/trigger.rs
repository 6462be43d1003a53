//! Lane-1 trigger matching: which curated entries an incoming message should
//! bring to the model's attention, decided by code with zero model calls.
//!
//! Calibrated scale (the reference's): a trigger phrase scores 1.0 when the
//! message contains it as an exact word sequence, 0.85 when a one-word
//! trigger is present, and otherwise coverage × 0.8 + min(1, overlap ÷ 2) × 0.2
//! (coverage = share of the phrase's words present, overlap = how many). An
//! entry scores 0.8 × its best phrase + 0.2 × relevance (vector similarity
//! when an embedder is available, else the share of the entry's words the
//! message contains). Entries at or above 0.72 are injected, best first, at
//! most 3 per turn and within 1,800 characters. Words are compared stemmed.

use crate::contract::api::SourceClass;
use crate::logic::dream::candidates::FactWords;
use crate::text::statement::Statement;
use crate::text::words::{stem, tokens};

pub const INJECT_THRESHOLD: f32 = 0.72;
pub const MAX_INJECTED: usize = 3;
pub const BLOCK_BUDGET_CHARS: usize = 1_800;

/// The stemmed words of a text, in order.
pub fn words(text: &str) -> Vec<String> {
    tokens(text).map(|t| stem(&t)).collect()
}

/// How strongly one trigger phrase matches a message (both as stemmed words).
pub fn phrase_score(phrase: &[String], message: &[String]) -> f32 {
    if phrase.is_empty() {
        return 0.0;
    }
    if phrase.len() == 1 {
        return if message.contains(&phrase[0]) {
            0.85
        } else {
            0.0
        };
    }
    if message.windows(phrase.len()).any(|w| w == phrase) {
        return 1.0;
    }
    let overlap = phrase.iter().filter(|w| message.contains(w)).count();
    let coverage = overlap as f32 / phrase.len() as f32;
    coverage * 0.8 + (overlap as f32 / 2.0).min(1.0) * 0.2
}

/// The entry score from its best phrase and its relevance (0..1).
pub fn entry_score(best_phrase: f32, relevance: f32) -> f32 {
    0.8 * best_phrase + 0.2 * relevance.clamp(0.0, 1.0)
}

/// The best phrase score of an entry's triggers against a message.
pub fn best_phrase(triggers: &[String], message: &[String]) -> f32 {
    triggers
        .iter()
        .map(|t| phrase_score(&words(t), message))
        .fold(0.0, f32::max)
}

/// Share of an entry's content words present in the message: the relevance
/// used when no embedder is available.
pub fn lexical_relevance(entry_text: &str, message: &[String]) -> f32 {
    let entry = crate::text::words::stem_set(entry_text);
    if entry.is_empty() {
        return 0.0;
    }
    entry.iter().filter(|w| message.contains(w)).count() as f32 / entry.len() as f32
}

/// Whether a tagged entry may auto-inject: every project key on it must be
/// active in the session (untagged entries are global).
pub fn projects_allow(entry_projects: &[String], active: &[String]) -> bool {
    entry_projects.iter().all(|k| active.contains(k))
}

/// A curated, trusted entry with triggers or project keys, as lane 1
/// matches it.
pub struct Lane1Entry {
    pub path: String,
    pub citation: String,
    pub text: String,
    pub class: SourceClass,
    pub phrases: Vec<Vec<String>>,
    pub projects: Vec<String>,
    pub vector: Option<Vec<f32>>,
    /// What the entry says (a resolution goes before a bare symptom) and
    /// its words (one fact never fills two slots).
    pub statement: Statement,
    pub words: FactWords,
}

/// Whether a lane-1 entry would say nothing new beside one already chosen:
/// the same fact (another copy, or the same fix in other words), or a
/// symptom of the problem a chosen resolution answers.
pub fn same_subject(chosen: &Lane1Entry, other: &Lane1Entry) -> bool {
    chosen.words.same_fact(&other.words)
        || chosen.words.near(&other.words)
        || (chosen.statement == Statement::Resolution
            && !other.statement.promotable()
            && chosen.words.overlaps(&other.words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        words(s)
    }

    #[test]
    fn the_reference_scale() {
        let msg = w("can you help with the gateway setup today");
        assert_eq!(phrase_score(&w("gateway setup"), &msg), 1.0);
        assert_eq!(phrase_score(&w("gateway"), &msg), 0.85);
        // One of two words: coverage 0.5 → 0.4, overlap 1 → 0.1.
        assert!(
            (phrase_score(&w("network security gateway"), &w("gateway")) - (0.8 / 3.0 + 0.1)).abs()
                < 1e-6
        );
        assert!((phrase_score(&w("gateway loopback"), &w("the gateway")) - 0.5).abs() < 1e-6);
        assert_eq!(phrase_score(&w("billing"), &msg), 0.0);
    }

    #[test]
    fn stems_meet_and_full_coverage_scores_like_a_sequence() {
        assert_eq!(
            phrase_score(&w("deploy target"), &w("what are our deploy targets")),
            1.0
        );
        // Every word present, out of order: coverage 1 × 0.8 + min(1, 2 ÷ 2) × 0.2.
        assert_eq!(phrase_score(&w("setup gateway"), &w("gateway setup")), 1.0);
        assert!(phrase_score(&w("network security policy"), &w("security of the network")) < 1.0);
    }

    #[test]
    fn thresholds_on_the_entry_score() {
        assert!(
            entry_score(1.0, 0.0) >= INJECT_THRESHOLD,
            "an exact phrase always injects"
        );
        assert!(
            entry_score(0.85, 0.0) < INJECT_THRESHOLD,
            "a lone word needs some relevance"
        );
        assert!(entry_score(0.85, 0.2) >= INJECT_THRESHOLD);
        assert!(
            entry_score(0.5, 1.0) < INJECT_THRESHOLD,
            "half a phrase never injects"
        );
    }

    #[test]
    fn tagged_entries_need_every_key_active() {
        let active = vec!["github.com/a/b".to_string()];
        assert!(projects_allow(&[], &active));
        assert!(projects_allow(&["github.com/a/b".into()], &active));
        assert!(!projects_allow(
            &["github.com/a/b".into(), "github.com/c/d".into()],
            &active
        ));
    }
}
