//! Which entries' vectors a writer of the index may have changed since the
//! vector leg loaded its code table, so the table is brought up to date by
//! reading those entries' codes instead of reloaded after every write.
//!
//! The log is trusted only when it provably covers every change: it starts
//! at a revision, follows each revision bump made through this index, and
//! breaks when it sees a bump it did not make, or when it grows past
//! `MAX_LOGGED` (then a reload costs less). An id is logged, not the change
//! itself: the table re-reads each logged entry as the index holds it, so a
//! rolled-back write leaves nothing wrong behind.

use std::collections::BTreeSet;

/// Entries logged before the log gives up and asks for a reload.
const MAX_LOGGED: usize = 50_000;

#[derive(Debug, Default)]
pub struct VectorChanges {
    /// The revision the log started at, and the revision it has followed
    /// the index to; `None` before it is first started (nobody reads it, so
    /// nothing is logged: a first sync of a large workspace costs nothing).
    span: Option<(u64, u64)>,
    ids: BTreeSet<i64>,
    broken: bool,
}

impl VectorChanges {
    /// An entry's vector may have changed (added, replaced, removed).
    pub fn touched(&mut self, id: i64) {
        if self.span.is_none() || self.broken {
            return;
        }
        self.ids.insert(id);
        if self.ids.len() > MAX_LOGGED {
            self.broken = true;
            self.ids.clear();
        }
    }

    /// This index moved the revision from `before` to `after`.
    pub fn bumped(&mut self, before: u64, after: u64) {
        match &mut self.span {
            Some((_, head)) if *head == before => *head = after,
            Some(_) => self.broken = true,
            None => {}
        }
    }

    /// The ids touched from `revision` to `now`, when the log covers that
    /// span; the log starts again at `now` either way.
    pub fn take_since(&mut self, revision: u64, now: u64) -> Option<Vec<i64>> {
        let covered = !self.broken && self.span == Some((revision, now));
        let ids = std::mem::take(&mut self.ids);
        *self = VectorChanges {
            span: Some((now, now)),
            ids: BTreeSet::new(),
            broken: false,
        };
        covered.then(|| ids.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_logged_before_the_log_is_started() {
        let mut log = VectorChanges::default();
        log.touched(1);
        assert_eq!(log.take_since(0, 0), None);
        log.touched(2);
        log.bumped(0, 1);
        log.touched(3);
        assert_eq!(log.take_since(0, 1), Some(vec![2, 3]));
        assert_eq!(log.take_since(1, 1), Some(vec![]));
    }

    #[test]
    fn a_bump_it_did_not_see_or_another_start_breaks_the_log() {
        let mut log = VectorChanges::default();
        log.take_since(0, 5);
        log.touched(1);
        log.bumped(6, 7); // someone else went from 5 to 6
        assert_eq!(log.take_since(5, 7), None);
        log.touched(2);
        assert_eq!(
            log.take_since(3, 7),
            None,
            "the table is at another revision"
        );
        log.bumped(7, 8);
        assert_eq!(
            log.take_since(7, 9),
            None,
            "the index is past what was followed"
        );
    }

    #[test]
    fn a_log_too_long_asks_for_a_reload() {
        let mut log = VectorChanges::default();
        log.take_since(0, 0);
        for id in 0..=MAX_LOGGED as i64 {
            log.touched(id);
        }
        assert_eq!(log.take_since(0, 0), None);
    }
}
