//! The codes of every entry of one embedder, by entry id, in memory: what
//! the vector leg scans instead of the entries' f32 vectors.
//!
//! Invariant: ids are strictly increasing (the index hands out ever larger
//! ids, and a table is loaded in id order), so a changed entry is found by
//! binary search and a sync's changes are merged in one pass.

use super::codes::{hamming, QueryScorer};

/// An entry's new code, or `None` when it no longer has one.
pub type CodeChange = (i64, Option<Vec<u64>>);

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CodeTable {
    words: usize,
    ids: Vec<i64>,
    codes: Vec<u64>,
}

impl CodeTable {
    pub fn new(words: usize) -> CodeTable {
        CodeTable {
            words,
            ids: Vec::new(),
            codes: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn ids(&self) -> &[i64] {
        &self.ids
    }

    /// The code at position `at`.
    pub fn code(&self, at: usize) -> &[u64] {
        &self.codes[at * self.words..(at + 1) * self.words]
    }

    /// Bytes the table holds (ids and codes).
    pub fn memory_bytes(&self) -> usize {
        self.ids.capacity() * 8 + self.codes.capacity() * 8
    }

    /// Adds an entry after every one the table holds. `false` (and nothing
    /// added) when the id is not larger than the last or the code has
    /// another length.
    pub fn push(&mut self, id: i64, code: &[u64]) -> bool {
        if code.len() != self.words || self.ids.last().is_some_and(|&last| last >= id) {
            return false;
        }
        self.ids.push(id);
        self.codes.extend_from_slice(code);
        true
    }

    /// Applies changes: each id with its new code, or `None` for an entry
    /// that no longer has one. `changes` must be sorted by id, ids once.
    /// In place, from the back: the table grows by the entries inserted and
    /// is never copied whole (at two million entries a second copy was
    /// 112 MB more guest memory, which a wasm instance never gives back).
    pub fn apply(&mut self, changes: &[CodeChange]) {
        debug_assert!(changes.windows(2).all(|w| w[0].0 < w[1].0));
        let words = self.words;
        fn fits(code: &Option<Vec<u64>>, words: usize) -> Option<&Vec<u64>> {
            code.as_ref().filter(|c| c.len() == words)
        }
        let inserted = changes
            .iter()
            .filter(|(id, code)| fits(code, words).is_some() && self.ids.binary_search(id).is_err())
            .count();
        let old = self.ids.len();
        let end = old + inserted;
        self.reserve(inserted);
        self.ids.resize(end, 0);
        self.codes.resize(end * words, 0);
        // Entries at read.. are placed (or dropped); write.. holds the result.
        let (mut read, mut write) = (old, end);
        for (id, code) in changes.iter().rev() {
            // The entries after this id move up as one block (not at all
            // when nothing was inserted or removed after them).
            let from = self.ids[..read].partition_point(|&x| x <= *id);
            let moved = read - from;
            if write != read {
                self.ids.copy_within(from..read, write - moved);
                self.codes
                    .copy_within(from * words..read * words, (write - moved) * words);
            }
            read = from;
            write -= moved;
            if read > 0 && self.ids[read - 1] == *id {
                read -= 1;
            }
            if let Some(code) = fits(code, words) {
                write -= 1;
                self.ids[write] = *id;
                self.codes[write * words..(write + 1) * words].copy_from_slice(code);
            }
        }
        // Entries before the first change are in place; close the gap.
        let kept = read + (end - write);
        if write != read {
            self.ids.copy_within(write..end, read);
            self.codes
                .copy_within(write * words..end * words, read * words);
        }
        self.ids.truncate(kept);
        self.codes.truncate(kept * words);
    }

    /// Room for `more` entries, with slack (1/64 of the table) when it has
    /// to grow, so writes one after another do not each move the table.
    pub fn reserve(&mut self, more: usize) {
        if self.ids.len() + more > self.ids.capacity()
            || self.codes.len() + more * self.words > self.codes.capacity()
        {
            let more = more.max(self.ids.len() / 64);
            self.ids.reserve_exact(more);
            self.codes.reserve_exact(more * self.words);
        }
    }

    /// The ids of the `n` codes nearest `query` by Hamming distance (all of
    /// them when `n` is at least the table's size). Distances are small
    /// integers, so the cut is found by counting, not sorting; ties at the
    /// cut are taken in id order.
    pub fn nearest(&self, query: &[u64], n: usize) -> Vec<usize> {
        if n >= self.len() {
            return (0..self.len()).collect();
        }
        let mut distances: Vec<u16> = Vec::with_capacity(self.len());
        let mut counts = vec![0usize; self.words * 64 + 2];
        debug_assert_eq!(query.len(), self.words);
        match <&[u64; 6]>::try_from(query) {
            // MiniLM's 384 dimensions: a loop the compiler unrolls, the
            // costliest of the vector leg at millions of entries.
            Ok(query) if self.words == 6 => {
                distances_to(query, &self.codes, &mut distances, &mut counts)
            }
            _ => {
                for code in self.codes.chunks_exact(self.words) {
                    let d = hamming(query, code) as u16;
                    distances.push(d);
                    counts[d as usize] += 1;
                }
            }
        }
        let (mut cut, mut below) = (0usize, 0usize);
        while below + counts[cut] < n {
            below += counts[cut];
            cut += 1;
        }
        let mut at_cut = n - below;
        let mut out = Vec::with_capacity(n);
        for (i, &d) in distances.iter().enumerate() {
            let d = d as usize;
            if d < cut || (d == cut && at_cut > 0) {
                if d == cut {
                    at_cut -= 1;
                }
                out.push(i);
            }
        }
        out
    }

    /// Of the positions `among`, the ids of the `n` best by `scorer`.
    pub fn best_by(&self, scorer: &QueryScorer, among: &[usize], n: usize) -> Vec<i64> {
        let scored: Vec<(i64, f32)> = among
            .iter()
            .map(|&at| {
                let code = &self.codes[at * self.words..(at + 1) * self.words];
                (self.ids[at], scorer.score(code))
            })
            .collect();
        super::best(scored, n)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }
}

/// Each code's Hamming distance to `query`, and how many codes are at each
/// distance, for codes of `W` words.
fn distances_to<const W: usize>(
    query: &[u64; W],
    codes: &[u64],
    distances: &mut Vec<u16>,
    counts: &mut [usize],
) {
    for code in codes.chunks_exact(W) {
        let mut d = 0;
        for w in 0..W {
            d += (code[w] ^ query[w]).count_ones();
        }
        distances.push(d as u16);
        counts[d as usize] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(i64, u64)]) -> CodeTable {
        let mut t = CodeTable::new(1);
        for (id, code) in entries {
            assert!(t.push(*id, &[*code]));
        }
        t
    }

    fn entries(t: &CodeTable) -> Vec<(i64, u64)> {
        t.ids.iter().copied().zip(t.codes.iter().copied()).collect()
    }

    #[test]
    fn ids_only_grow_and_codes_keep_their_length() {
        let mut t = table(&[(5, 1)]);
        assert!(!t.push(5, &[2]));
        assert!(!t.push(3, &[2]));
        assert!(!t.push(9, &[2, 3]));
        assert_eq!(entries(&t), vec![(5, 1)]);
    }

    #[test]
    fn changes_replace_remove_insert_and_append() {
        let mut t = table(&[(2, 20), (4, 40), (6, 60)]);
        t.apply(&[(4, Some(vec![41])), (8, Some(vec![80])), (9, None)]);
        assert_eq!(entries(&t), vec![(2, 20), (4, 41), (6, 60), (8, 80)]);
        // A removal, an insertion between and a wrong length (a removal).
        t.apply(&[
            (1, Some(vec![10])),
            (2, None),
            (5, Some(vec![50])),
            (6, Some(vec![1, 2])),
            (10, Some(vec![100])),
        ]);
        assert_eq!(
            entries(&t),
            vec![(1, 10), (4, 41), (5, 50), (8, 80), (10, 100)]
        );
        t.apply(&[(1, None), (4, None), (5, None), (8, None), (10, None)]);
        assert!(t.is_empty());
    }

    /// The in-place merge against a plain model of it: a sorted map.
    #[test]
    fn changes_in_place_match_a_map_of_the_same_changes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..500 {
            let mut model = std::collections::BTreeMap::new();
            let mut t = CodeTable::new(1);
            for id in 0..next(30) as i64 {
                if next(2) == 0 {
                    model.insert(id * 2, id as u64);
                    assert!(t.push(id * 2, &[id as u64]));
                }
            }
            for _ in 0..3 {
                let mut changes: Vec<CodeChange> = Vec::new();
                for id in 0..70 {
                    match next(6) {
                        0 => changes.push((id, None)),
                        1 => changes.push((id, Some(vec![next(1000)]))),
                        2 => changes.push((id, Some(vec![1, 2]))),
                        _ => {}
                    }
                }
                for (id, code) in &changes {
                    match code.as_deref() {
                        Some([c]) => model.insert(*id, *c),
                        _ => model.remove(id),
                    };
                }
                t.apply(&changes);
                let expected: Vec<(i64, u64)> = model.iter().map(|(k, v)| (*k, *v)).collect();
                assert_eq!(entries(&t), expected);
            }
        }
    }

    #[test]
    fn a_table_grows_with_slack_not_by_doubling() {
        let mut t = CodeTable::new(2);
        t.reserve(6400);
        for id in 0..6400 {
            t.push(id, &[1, 2]);
        }
        assert_eq!(t.memory_bytes(), 6400 * 24);
        t.apply(&[(7000, Some(vec![3, 4]))]);
        assert_eq!(t.memory_bytes(), 6500 * 24);
    }

    /// MiniLM's six-word codes take the unrolled scan; other widths the
    /// plain one. Both against distances sorted (ties in table order).
    #[test]
    fn nearest_is_the_same_cut_for_every_code_width() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for words in [1, 5, 6, 7] {
            let mut t = CodeTable::new(words);
            for id in 0..3_000 {
                // Few bits set, so many codes tie at each distance.
                let code: Vec<u64> = (0..words).map(|_| next() & next() & next()).collect();
                assert!(t.push(id, &code));
            }
            let query: Vec<u64> = (0..words).map(|_| next() & next()).collect();
            let mut sorted: Vec<(u32, usize)> = (0..t.len())
                .map(|at| (hamming(&query, t.code(at)), at))
                .collect();
            sorted.sort();
            for n in [1, 10, 999, 2_999] {
                let mut expected: Vec<usize> = sorted[..n].iter().map(|p| p.1).collect();
                expected.sort();
                assert_eq!(t.nearest(&query, n), expected, "{words} words, n {n}");
            }
        }
    }

    #[test]
    fn nearest_cuts_by_distance_and_takes_ties_in_order() {
        // Distances to 0b0000: 2, 0, 1, 1, 3.
        let t = table(&[(1, 0b0011), (2, 0), (3, 0b0100), (4, 0b1000), (5, 0b0111)]);
        assert_eq!(t.nearest(&[0], 1), vec![1]);
        assert_eq!(t.nearest(&[0], 2), vec![1, 2]);
        assert_eq!(t.nearest(&[0], 4), vec![0, 1, 2, 3]);
        assert_eq!(t.nearest(&[0], 9), vec![0, 1, 2, 3, 4]);
    }
}
