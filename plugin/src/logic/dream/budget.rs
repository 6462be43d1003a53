//! The bootstrap budget on the deterministic path into `MEMORY.md`: a sweep
//! makes the promotions that fit and defers the rest to a later sweep, so it
//! never writes the file past its budget (nor grows a file already past it,
//! such as a large hand-written one). Pure functions.

use super::consolidate::{deterministic, Plan, Promoted};
use std::collections::HashSet;

/// The deterministic plan with those of `facts` (best first) that fit, and
/// the indices of the others, deferred. A fact fits when the file with it
/// stays within `max_chars` characters, or does not grow (it merges into an
/// existing entry, or retires a longer one). `retire_for` names the entries
/// a set of facts (by index) retires: a deferred fact retires nothing.
pub fn fitting(
    memory: &str,
    facts: &[Promoted],
    retire_for: &dyn Fn(&[usize]) -> HashSet<String>,
    max_chars: usize,
    entry_hash: &dyn Fn(&str) -> String,
) -> (Plan, Vec<usize>) {
    let plan_for = |taken: &[usize]| {
        let chosen: Vec<Promoted> = taken.iter().map(|&i| facts[i].clone()).collect();
        deterministic(memory, &chosen, &retire_for(taken), entry_hash)
    };
    let everything: Vec<usize> = (0..facts.len()).collect();
    let all = plan_for(&everything);
    if all.text.chars().count() <= max_chars {
        return (all, Vec::new());
    }
    let mut taken: Vec<usize> = Vec::new();
    let mut deferred = Vec::new();
    let mut plan = plan_for(&taken);
    let mut chars = plan.text.chars().count();
    for i in everything {
        let mut trial = taken.clone();
        trial.push(i);
        let candidate = plan_for(&trial);
        let candidate_chars = candidate.text.chars().count();
        if candidate_chars <= max_chars || candidate_chars <= chars {
            (taken, plan, chars) = (trial, candidate, candidate_chars);
        } else {
            deferred.push(i);
        }
    }
    (plan, deferred)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(text: &str) -> String {
        crate::text::hash::entry_hash(text)
    }

    fn fact(text: &str, n: u32) -> Promoted {
        Promoted {
            text: text.to_string(),
            citation: format!("memory/2026-12-01.md#L{n}-L{n}"),
            triggers: Vec::new(),
            importance: 5,
            supersedes_key: None,
            projects: Vec::new(),
        }
    }

    fn nothing_retired(_: &[usize]) -> HashSet<String> {
        HashSet::new()
    }

    const MEMORY: &str = "# Memory\n\n- The owner lives in Lisbon.\n";

    #[test]
    fn everything_fits_when_there_is_room() {
        let facts = [
            fact("The gateway listens on 8443.", 3),
            fact("Deploys are on Fridays.", 4),
        ];
        let (plan, deferred) = fitting(MEMORY, &facts, &nothing_retired, 20_000, &hash);
        assert!(deferred.is_empty());
        assert_eq!(plan.added.len(), 2);
    }

    #[test]
    fn what_does_not_fit_is_deferred_and_a_shorter_later_fact_still_goes_in() {
        let long = fact(&"A very long fact about the build cache. ".repeat(4), 3);
        let short = fact("Port 8443.", 4);
        let budget = MEMORY.chars().count() + short.line().chars().count() + 1;
        let (plan, deferred) = fitting(
            MEMORY,
            &[long, short.clone()],
            &nothing_retired,
            budget,
            &hash,
        );
        assert_eq!(deferred, vec![0]);
        assert_eq!(plan.added, vec![short.line()]);
        assert!(plan.text.chars().count() <= budget);
    }

    #[test]
    fn a_file_already_past_its_budget_does_not_grow() {
        let big = format!(
            "# Memory\n\n{}",
            "- A hand-written line of notes.\n".repeat(100)
        );
        let facts = [fact("The gateway listens on 8443.", 3)];
        let (plan, deferred) = fitting(&big, &facts, &nothing_retired, 1_000, &hash);
        assert_eq!(deferred, vec![0]);
        assert_eq!(plan.text, big, "nothing written");
        // A fact already in the file merges: the file does not grow.
        let again = [fact("A hand-written line of notes.", 4)];
        let (plan, deferred) = fitting(&big, &again, &nothing_retired, 1_000, &hash);
        assert!(deferred.is_empty());
        assert_eq!(plan.merged.len(), 1);
        assert_eq!(plan.text, big);
    }

    #[test]
    fn a_fact_that_retires_a_longer_entry_fits_a_full_file() {
        let old_line =
            "- The on-call engineer this quarter is Priya Raman, reachable on the pager rota.";
        let full = format!("# Memory\n\n{old_line}\n");
        let newer = fact("On-call is Tomasz.", 3);
        let retiring = |taken: &[usize]| -> HashSet<String> {
            if taken.is_empty() {
                HashSet::new()
            } else {
                HashSet::from([hash(old_line)])
            }
        };
        let budget = full.chars().count();
        let (plan, deferred) = fitting(
            &full,
            std::slice::from_ref(&newer),
            &retiring,
            budget,
            &hash,
        );
        assert!(deferred.is_empty());
        assert_eq!(plan.superseded.len(), 1);
        assert!(plan.text.contains(&newer.line()) && plan.text.chars().count() <= budget);
    }
}
