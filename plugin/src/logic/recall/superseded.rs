//! Supersession by key: a note written with a supersedes key (`memory_note`'s
//! `supersedes`, `write.note`'s `supersedes-key`) is replaced by a later note
//! carrying the same key. Search ranks the later one first whichever of the
//! two the query's words match: the later note answers what the earlier one
//! answered.
//!
//! Only a note at least as trusted as the earlier one replaces it, so a web
//! page or tool output that reuses an owner's key cannot bury the owner's
//! note (the same order as everywhere: untrusted < system < agent < owner).

use std::collections::HashMap;

/// An entry that carries a supersedes key, as the index records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed {
    pub id: i64,
    pub key: String,
    /// `SourceClass::trust_rank` of the entry's class.
    pub trust: u8,
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

/// For each of `entries` that a later, at least as trusted entry with its
/// key replaces: its id → the id of the latest such entry. `entries` holds
/// every entry of the keys in question (candidates and the rest).
pub fn replaced_by(entries: &[Keyed]) -> HashMap<i64, i64> {
    let mut by_key: HashMap<&str, Vec<&Keyed>> = HashMap::new();
    for e in entries {
        by_key.entry(e.key.as_str()).or_default().push(e);
    }
    let mut out = HashMap::new();
    for group in by_key.values() {
        for old in group {
            let newest = group
                .iter()
                .filter(|new| {
                    new.id != old.id
                        && new.observed_at.is_some()
                        && new.trust >= old.trust
                        && new.written() > old.written()
                })
                .max_by_key(|new| (new.written(), new.id));
            if let Some(new) = newest {
                out.insert(old.id, new.id);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(id: i64, key: &str, trust: u8, at: i64) -> Keyed {
        Keyed {
            id,
            key: key.into(),
            trust,
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
        assert_eq!(map.get(&1), Some(&3));
        assert_eq!(map.get(&2), Some(&3));
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
        assert_eq!((map.get(&1), map.get(&2)), (Some(&3), Some(&3)));
        // An agent's note (2) replaces the agent's but not the owner's.
        let map = replaced_by(&[
            keyed(1, "host", 3, 100),
            keyed(2, "host", 2, 150),
            keyed(3, "host", 2, 300),
        ]);
        assert_eq!((map.get(&1), map.get(&2)), (None, Some(&3)));
    }

    #[test]
    fn the_same_millisecond_is_ordered_by_the_ledger_and_unknown_times_never_replace() {
        let mut a = keyed(1, "k", 3, 100);
        let mut b = keyed(2, "k", 3, 100);
        a.order = Some(7);
        b.order = Some(8);
        assert_eq!(replaced_by(&[a.clone(), b.clone()]).get(&1), Some(&2));
        let undated = Keyed {
            observed_at: None,
            ..keyed(3, "k", 3, 0)
        };
        let map = replaced_by(&[a, undated]);
        assert_eq!(map.get(&3), Some(&1), "an undated entry is replaceable");
        assert_eq!(map.get(&1), None, "and replaces nothing");
    }
}
