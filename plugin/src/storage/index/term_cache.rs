//! Terms' decoded lists kept between searches, so a word searched again is
//! not read and decoded again: bounded by the postings it holds, the least
//! recently used dropped first. A term is forgotten when a write changes it,
//! and everything when another connection changed the file.

use crate::logic::lexical::{Impacts, Posting};
use std::collections::HashMap;
use std::hash::Hash;
use std::rc::Rc;

/// Postings held at most, lists and impacts together (16 bytes each: 16 MiB).
const MAX_POSTINGS: usize = 1 << 20;

/// What is known of one term.
#[derive(Clone, Default)]
pub struct CachedTerm {
    /// Rows holding it.
    pub count: i64,
    pub impacts: Option<Rc<Impacts>>,
    /// Its complete list, once a search has read it.
    pub postings: Option<Rc<Vec<Posting>>>,
}

impl CachedTerm {
    fn size(&self) -> usize {
        self.impacts.as_ref().map_or(0, |i| i.best.len())
            + self.postings.as_ref().map_or(0, |p| p.len())
    }
}

pub struct TermCache<K> {
    /// The database's `data_version` the entries were read at.
    version: Option<i64>,
    entries: HashMap<K, (CachedTerm, u64)>,
    /// A clock of uses, for the least recently used.
    tick: u64,
    held: usize,
}

impl<K> Default for TermCache<K> {
    fn default() -> Self {
        TermCache {
            version: None,
            entries: HashMap::new(),
            tick: 0,
            held: 0,
        }
    }
}

impl<K: Hash + Eq + Clone> TermCache<K> {
    /// Empties the cache when the database is at another version than the
    /// entries were read at (another connection committed in between).
    pub fn at_version(&mut self, version: i64) {
        if self.version != Some(version) {
            self.clear();
            self.version = Some(version);
        }
    }

    pub fn get(&mut self, key: &K) -> Option<CachedTerm> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(term, used)| {
            *used = tick;
            term.clone()
        })
    }

    pub fn put(&mut self, key: K, term: CachedTerm) {
        self.forget(&key);
        let size = term.size();
        if size > MAX_POSTINGS {
            return;
        }
        while self.held + size > MAX_POSTINGS {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(oldest) => self.forget(&oldest),
                None => break,
            }
        }
        self.tick += 1;
        self.held += size;
        self.entries.insert(key, (term, self.tick));
    }

    pub fn forget(&mut self, key: &K) {
        if let Some((term, _)) = self.entries.remove(key) {
            self.held -= term.size();
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.held = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(postings: usize) -> CachedTerm {
        CachedTerm {
            count: postings as i64,
            impacts: None,
            postings: Some(Rc::new(vec![
                Posting {
                    row: 1,
                    frequency: 1.0,
                    length: 1
                };
                postings
            ])),
        }
    }

    #[test]
    fn the_least_recently_used_go_first_and_the_size_stays_bounded() {
        let mut cache: TermCache<u32> = TermCache::default();
        cache.at_version(1);
        cache.put(1, term(MAX_POSTINGS / 2));
        cache.put(2, term(MAX_POSTINGS / 2));
        assert!(cache.get(&1).is_some());
        cache.put(3, term(MAX_POSTINGS / 4));
        assert!(cache.get(&2).is_none(), "2 was used least recently");
        assert!(cache.get(&1).is_some() && cache.get(&3).is_some());
        cache.put(4, term(MAX_POSTINGS + 1));
        assert!(cache.get(&4).is_none(), "too large to keep");
        assert!(cache.held <= MAX_POSTINGS);
    }

    #[test]
    fn another_version_or_a_forgotten_term_is_read_again() {
        let mut cache: TermCache<u32> = TermCache::default();
        cache.at_version(1);
        cache.put(1, term(3));
        cache.put(2, term(3));
        cache.forget(&1);
        assert!(cache.get(&1).is_none() && cache.get(&2).is_some());
        cache.at_version(1);
        assert!(cache.get(&2).is_some());
        cache.at_version(2);
        assert!(cache.get(&2).is_none());
        assert_eq!(cache.held, 0);
    }
}
