//! Supersession by key: a note written with a supersedes key (`memory_note`'s
//! `supersedes`, `write.note`'s `supersedes-key`) is replaced by a later note
//! carrying the same key. Search ranks the later one first whichever of the
//! two the query's words match: the later note answers what the earlier one
//! answered.
//!
//! Only a note whose annotations are honoured (an owner's or agent's, in an
//! interactive session: `provenance::annotations_honoured`) replaces, and
//! only a note at least as trusted as itself (untrusted < system < agent <
//! owner, by the lower of the note's and its file's class), so a web page,
//! tool output or a scheduled run that reuses a key buries nothing. A key
//! is read within a project set: a note with a different set of project
//! tags replaces nothing. A replaced note that could not itself replace
//! (an outside page the owner's later note replaces) hands its place on to
//! nothing: outside words never decide where a trusted note ranks.
//! (Dreaming retires promoted lines by key alone, `ops::dream::promote`.)

use std::collections::HashMap;

/// An entry that carries a supersedes key, as the index records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed {
    pub id: i64,
    pub key: String,
    /// `SourceClass::trust_rank` of the lower of the entry's and its file's
    /// class.
    pub trust: u8,
    /// Whether it may replace others (`provenance::annotations_honoured`).
    pub may_replace: bool,
    /// Its project keys, sorted.
    pub projects: Vec<String>,
    /// When it was written (ms); `None` when unknown (never replaces,
    /// always replaceable).
    pub observed_at: Option<i64>,
    /// The ledger's write order, for notes written in the same millisecond.
    pub order: Option<i64>,
}

impl Keyed {
    fn written(&self) -> (i64, i64) {
        (
            self.observed_at.unwrap_or(i64::MIN),
            self.order.unwrap_or(i64::MIN),
        )
    }
}

/// How a note is replaced: by which note, and whether it hands its place on
/// (only notes that could replace do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    pub by: i64,
    pub hands_on: bool,
}

/// For each of `entries` that a later, at least as trusted entry with its
/// key and projects replaces: its id → the latest such entry. `entries`
/// holds every entry of the keys in question (candidates and the rest).
pub fn replaced_by(entries: &[Keyed]) -> HashMap<i64, Replaced> {
    let mut by_key: HashMap<(&str, &[String]), Vec<&Keyed>> = HashMap::new();
    for e in entries {
        by_key
            .entry((e.key.as_str(), e.projects.as_slice()))
            .or_default()
            .push(e);
    }
    let mut out = HashMap::new();
    for group in by_key.values() {
        for old in group {
            let newest = group
                .iter()
                .filter(|new| {
                    new.id != old.id
                        && new.may_replace
                        && new.observed_at.is_some()
                        && new.trust >= old.trust
                        && new.written() > old.written()
                })
                .max_by_key(|new| (new.written(), new.id));
            if let Some(new) = newest {
                let replaced = Replaced {
                    by: new.id,
                    hands_on: old.may_replace,
                };
                out.insert(old.id, replaced);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(map: &HashMap<i64, Replaced>, id: i64) -> Option<i64> {
        map.get(&id).map(|r| r.by)
    }

    fn keyed(id: i64, key: &str, trust: u8, at: i64) -> Keyed {
        Keyed {
            id,
            key: key.into(),
            trust,
            // Owners' and agents' notes, as an interactive session writes them.
            may_replace: trust >= 2,
            projects: Vec::new(),
            observed_at: Some(at),
            order: Some(id),
        }
    }

    #[test]
    fn every_older_entry_points_at_the_latest_of_its_key() {
        let map = replaced_by(&[
            keyed(1, "host", 3, 100),
            keyed(2, "host", 3, 200),
            keyed(3, "host", 3, 300),
            keyed(4, "port", 3, 150),
        ]);
        assert_eq!(map.get(&1).map(|r| r.by), Some(3));
        assert_eq!(map.get(&2).map(|r| r.by), Some(3));
        assert_eq!(map.get(&3), None);
        assert_eq!(map.get(&4), None, "alone under its key");
    }

    #[test]
    fn a_less_trusted_entry_never_replaces_a_more_trusted_one() {
        // An owner's note (3), then a web page reusing its key (0).
        let map = replaced_by(&[keyed(1, "host", 3, 100), keyed(2, "host", 0, 200)]);
        assert!(map.is_empty());
        // The owner's later note replaces both the web page and the first note.
        let map = replaced_by(&[
            keyed(1, "host", 3, 100),
            keyed(2, "host", 0, 200),
            keyed(3, "host", 3, 300),
        ]);
        assert_eq!((by(&map, 1), by(&map, 2)), (Some(3), Some(3)));
        // An agent's note (2) replaces the agent's but not the owner's.
        let map = replaced_by(&[
            keyed(1, "host", 3, 100),
            keyed(2, "host", 2, 150),
            keyed(3, "host", 2, 300),
        ]);
        assert_eq!((by(&map, 1), by(&map, 2)), (None, Some(3)));
    }

    #[test]
    fn a_scheduled_run_or_an_untrusted_page_never_replaces_even_its_own_kind() {
        // A cron run's agent-class note: agent trust, but not honoured.
        let mut cron = keyed(2, "host", 2, 200);
        cron.may_replace = false;
        let map = replaced_by(&[keyed(1, "host", 2, 100), cron]);
        assert!(map.is_empty());
        // Two web pages under one key: the later does not replace the earlier.
        let map = replaced_by(&[keyed(1, "k", 0, 100), keyed(2, "k", 0, 200)]);
        assert!(map.is_empty());
        // But the owner's later note replaces a page, which hands nothing on.
        let map = replaced_by(&[keyed(1, "k", 0, 100), keyed(2, "k", 3, 200)]);
        assert_eq!(
            map.get(&1),
            Some(&Replaced {
                by: 2,
                hands_on: false
            })
        );
        let map = replaced_by(&[keyed(1, "k", 2, 100), keyed(2, "k", 3, 200)]);
        assert_eq!(
            map.get(&1),
            Some(&Replaced {
                by: 2,
                hands_on: true
            })
        );
    }

    #[test]
    fn a_key_is_read_within_its_projects() {
        let mut ours = keyed(1, "db-host", 2, 100);
        ours.projects = vec!["github.com/a/api".into()];
        let mut theirs = keyed(2, "db-host", 2, 200);
        theirs.projects = vec!["github.com/b/web".into()];
        let untagged = keyed(3, "db-host", 2, 300);
        let map = replaced_by(&[ours.clone(), theirs.clone(), untagged]);
        assert!(map.is_empty(), "{map:?}");
        let mut ours_later = keyed(4, "db-host", 2, 400);
        ours_later.projects = ours.projects.clone();
        let map = replaced_by(&[ours, theirs, ours_later]);
        assert_eq!(map.get(&1).map(|r| r.by), Some(4));
        assert_eq!(map.get(&2), None);
    }

    #[test]
    fn the_same_millisecond_is_ordered_by_the_ledger_and_unknown_times_never_replace() {
        let mut a = keyed(1, "k", 3, 100);
        let mut b = keyed(2, "k", 3, 100);
        a.order = Some(7);
        b.order = Some(8);
        assert_eq!(by(&replaced_by(&[a.clone(), b.clone()]), 1), Some(2));
        let undated = Keyed {
            observed_at: None,
            ..keyed(3, "k", 3, 0)
        };
        let map = replaced_by(&[a, undated]);
        assert_eq!(
            map.get(&3).map(|r| r.by),
            Some(1),
            "an undated entry is replaceable"
        );
        assert_eq!(map.get(&1), None, "and replaces nothing");
    }
}
