//! The lexical leg's best rows without scoring every match (issue 22).
//!
//! BM25 as `memory_bm25` computes it: a row scores, for each phrase of the
//! query, `idf · f(k1+1) / (f + k1(1 − b + b·len/avg))`, where `f` is the
//! phrase's weighted frequency in the row. FTS5 can only produce the best
//! rows by scoring every row that matches any phrase, so a search costs as
//! much as its commonest word has rows.
//!
//! Here each term keeps [`Impacts`] beside the full-text index: the rows
//! where it weighs most, with their frequency, and for its other rows only
//! the *frontier*, the shortest row at each frequency. The score a term can
//! add to any row outside its list is then bounded by the frontier (the
//! frequency part grows with `f` and falls with the length, so only
//! frontier points can reach the maximum, at whatever average length).
//! [`plan`] takes the strongest rows of each list as candidates and bounds
//! every other row; when the k-th candidate's exact score reaches that
//! bound, the candidates hold the top k and nothing else was read.

use std::collections::{BTreeMap, HashMap};

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Inverse document frequency of a phrase matching `matching` of `rows`
/// rows. As FTS5's bm25: a phrase in more than half of the rows would get a
/// negative weight; it gets a tiny positive one instead.
pub fn idf(rows: i64, matching: i64) -> f64 {
    let n = rows as f64;
    let h = matching as f64;
    let weight = ((n - h + 0.5) / (h + 0.5)).ln();
    if weight <= 0.0 {
        1e-6
    } else {
        weight
    }
}

/// The length normalisation of a row of `length` tokens.
pub fn norm(length: f64, avg_length: f64) -> f64 {
    K1 * (1.0 - B + B * length / avg_length)
}

/// A row's BM25 score: one idf and one weighted frequency per phrase, in
/// the query's order (the same sum `memory_bm25` makes, bit for bit).
pub fn score(idfs: &[f64], frequencies: &[f64], norm: f64) -> f64 {
    idfs.iter()
        .zip(frequencies)
        .map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + norm))
        .sum()
}

/// Scores this close to the k-th (relative) count as tied with it: the
/// bound is a sum of per-phrase maxima, computed in another order than a
/// row's score, so a row outside the candidates that ties the k-th exactly
/// may come out an ulp or two above it. Such a row may then be left out in
/// favour of the candidate it ties.
const TIE: f64 = 1e-12;

/// What one phrase adds per unit of idf to a row of this frequency and norm.
fn saturation(frequency: f64, norm: f64) -> f64 {
    frequency * (K1 + 1.0) / (frequency + norm)
}

/// One row holding a term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Posting {
    pub row: i64,
    /// The term's weighted frequency in the row (sums of the column weights,
    /// 1 and ¼: exact in f32).
    pub frequency: f32,
    /// The row's length in tokens (as `memory_bm25` reads it).
    pub length: u16,
}

impl Posting {
    fn saturation(&self, avg_length: f64) -> f64 {
        saturation(self.frequency as f64, norm(self.length as f64, avg_length))
    }
}

/// A term's rows as kept for the top-k: its strongest rows in full, the
/// rest as a frontier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Impacts {
    /// The rows where the term weighs most, in row order.
    pub best: Vec<Posting>,
    /// For every other row holding the term: at each frequency, the
    /// shortest such row's length (only points no other point dominates).
    pub rest: Vec<(f32, u16)>,
}

impl Impacts {
    /// From every posting of a term: the `keep` strongest at this average
    /// length (ties: the newer row) in full, in row order, and the frontier
    /// of the others. Only what is kept is copied.
    pub fn build(postings: &[Posting], avg_length: f64, keep: usize) -> Impacts {
        let mut impacts = Impacts::default();
        if postings.len() <= keep {
            impacts.best = postings.to_vec();
        } else {
            let strength = |p: &Posting| p.saturation(avg_length);
            // The keep-th strongest, found on a copy of the strengths alone.
            let mut ranked: Vec<(f64, i64)> =
                postings.iter().map(|p| (strength(p), p.row)).collect();
            let strongest_first =
                |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
            ranked.select_nth_unstable_by(keep.saturating_sub(1), strongest_first);
            let cut = ranked.get(keep.wrapping_sub(1)).copied();
            drop(ranked);
            for p in postings {
                let kept =
                    cut.is_some_and(|cut| strongest_first(&(strength(p), p.row), &cut).is_le());
                if kept {
                    impacts.best.push(*p);
                } else {
                    impacts.add_to_rest(p.frequency, p.length);
                }
            }
        }
        if !impacts.best.is_sorted_by_key(|p| p.row) {
            impacts.best.sort_unstable_by_key(|p| p.row);
        }
        impacts
    }

    /// The most the term adds to any row per unit of idf, at this average
    /// length: its strongest row in `best`, or the frontier's.
    pub fn strongest(&self, avg_length: f64) -> f64 {
        strongest_of(&self.best, avg_length).max(self.rest_bound(avg_length))
    }

    /// Every row of the term is in `best`.
    pub fn is_complete(&self) -> bool {
        self.rest.is_empty()
    }

    /// A list worn down by deletions below half of what a build keeps, with
    /// rows left outside it: a search rebuilds it from the index.
    pub fn is_worn(&self, keep: usize) -> bool {
        !self.is_complete() && self.best.len() < keep / 2
    }

    /// The frequency of the term in `row`, when `row` is in `best`.
    pub fn frequency_in(&self, row: i64) -> Option<f32> {
        self.best
            .binary_search_by_key(&row, |p| p.row)
            .ok()
            .map(|i| self.best[i].frequency)
    }

    /// The most the term adds, per unit of idf, to a row outside `best`.
    pub fn rest_bound(&self, avg_length: f64) -> f64 {
        self.rest
            .iter()
            .map(|&(f, length)| saturation(f as f64, norm(length as f64, avg_length)))
            .fold(0.0, f64::max)
    }

    /// A row newly holding the term. Rows only ever get larger ids, so it
    /// goes at the end; past twice `keep`, the weakest go to the frontier.
    pub fn add(&mut self, posting: Posting, avg_length: f64, keep: usize) {
        match self.best.last() {
            Some(last) if last.row >= posting.row => {
                let at = self.best.partition_point(|p| p.row < posting.row);
                if self.best.get(at).map(|p| p.row) == Some(posting.row) {
                    self.best[at] = posting;
                } else {
                    self.best.insert(at, posting);
                }
            }
            _ => self.best.push(posting),
        }
        if self.best.len() > 2 * keep.max(1) {
            let kept = std::mem::take(&mut self.best);
            let mut rebuilt = Impacts::build(&kept, avg_length, keep);
            for &(f, length) in &self.rest {
                rebuilt.add_to_rest(f, length);
            }
            *self = rebuilt;
        }
    }

    /// A row that no longer holds the term. Outside `best` nothing changes:
    /// the frontier stays an upper bound, if a looser one.
    pub fn remove(&mut self, row: i64) {
        if let Ok(i) = self.best.binary_search_by_key(&row, |p| p.row) {
            self.best.remove(i);
        }
    }

    fn add_to_rest(&mut self, frequency: f32, length: u16) {
        let dominated = self
            .rest
            .iter()
            .any(|&(f, l)| f >= frequency && l <= length);
        if dominated {
            return;
        }
        self.rest.retain(|&(f, l)| !(frequency >= f && length <= l));
        self.rest.push((frequency, length));
        self.rest.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    }

    /// The stored form: counts, then postings as (row i64, frequency f32,
    /// length u16) and frontier points as (frequency f32, length u16), all
    /// little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.best.len() * 14 + self.rest.len() * 6);
        out.extend((self.best.len() as u32).to_le_bytes());
        out.extend((self.rest.len() as u32).to_le_bytes());
        for p in &self.best {
            out.extend(p.row.to_le_bytes());
            out.extend(p.frequency.to_le_bytes());
            out.extend(p.length.to_le_bytes());
        }
        for (f, l) in &self.rest {
            out.extend(f.to_le_bytes());
            out.extend(l.to_le_bytes());
        }
        out
    }

    /// `None` for bytes not written by [`Impacts::encode`].
    pub fn decode(bytes: &[u8]) -> Option<Impacts> {
        let count = |at: usize| -> Option<usize> {
            Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize)
        };
        let (best, rest) = (count(0)?, count(4)?);
        let expected = best
            .checked_mul(14)
            .and_then(|b| rest.checked_mul(6).and_then(|r| b.checked_add(r)))
            .and_then(|n| n.checked_add(8));
        if expected != Some(bytes.len()) {
            return None;
        }
        let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
        let postings = (0..best).map(|i| {
            let at = 8 + i * 14;
            Posting {
                row: i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()),
                frequency: f32_at(at + 8),
                length: u16_at(at + 12),
            }
        });
        let start = 8 + best * 14;
        let impacts = Impacts {
            best: postings.collect(),
            rest: (0..rest)
                .map(|i| (f32_at(start + i * 6), u16_at(start + i * 6 + 4)))
                .collect(),
        };
        let ordered = impacts.best.windows(2).all(|w| w[0].row < w[1].row);
        ordered.then_some(impacts)
    }
}

/// The changes to one term's rows made by a write.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermChanges {
    pub added: Vec<Posting>,
    pub removed: Vec<i64>,
}

impl TermChanges {
    /// Records a row added (rows come with growing ids).
    pub fn add(&mut self, posting: Posting) {
        self.added.push(posting);
    }

    /// Records a row removed: one added by the same changes is just taken
    /// back out, so that it is not applied as added.
    pub fn remove(&mut self, row: i64) {
        match self.added.binary_search_by_key(&row, |p| p.row) {
            Ok(i) => {
                self.added.remove(i);
            }
            Err(_) => self.removed.push(row),
        }
    }

    /// How the term's row count changes.
    pub fn row_delta(&self) -> i64 {
        self.added.len() as i64 - self.removed.len() as i64
    }

    /// Applies the changes to a term's impacts (removals first: a row is
    /// never removed and added again under the same id).
    pub fn apply(&self, impacts: &mut Impacts, avg_length: f64, keep: usize) {
        for &row in &self.removed {
            impacts.remove(row);
        }
        for &posting in &self.added {
            impacts.add(posting, avg_length, keep);
        }
    }
}

/// The weighted frequency of each distinct token in a row's columns
/// (`columns`: each column's tokens and its weight).
pub fn frequencies<'a>(
    columns: impl IntoIterator<Item = (Vec<&'a [u8]>, f64)>,
) -> BTreeMap<&'a [u8], f64> {
    let mut counts: BTreeMap<&[u8], f64> = BTreeMap::new();
    for (tokens, weight) in columns {
        for token in tokens {
            *counts.entry(token).or_insert(0.0) += weight;
        }
    }
    counts
}

/// Postings per stored block of a term's complete list.
pub const BLOCK: usize = 512;

/// A block of postings (in row order) as stored: per posting, varints of
/// the row's distance from the previous one (the first from zero, as a
/// signed zigzag), four times the frequency, and the length.
pub fn encode_block(postings: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(postings.len() * 5);
    let mut previous = 0i64;
    for p in postings {
        let delta = p.row.wrapping_sub(previous);
        put_varint(&mut out, ((delta << 1) ^ (delta >> 63)) as u64);
        put_varint(&mut out, (p.frequency * 4.0).round() as u64);
        put_varint(&mut out, p.length as u64);
        previous = p.row;
    }
    out
}

/// `None` for bytes not written by [`encode_block`].
pub fn decode_block(mut bytes: &[u8], into: &mut Vec<Posting>) -> Option<()> {
    let mut previous = 0i64;
    while !bytes.is_empty() {
        let mut next = || -> Option<u64> {
            let (value, used) = get_varint(bytes)?;
            bytes = &bytes[used..];
            Some(value)
        };
        let zigzag = next()?;
        let delta = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        let frequency = next()? as f32 / 4.0;
        let length = u16::try_from(next()?).ok()?;
        previous = previous.wrapping_add(delta);
        into.push(Posting {
            row: previous,
            frequency,
            length,
        });
    }
    Some(())
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn get_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        value |= ((byte & 0x7f) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The most any of these postings adds to its row per unit of idf.
pub fn strongest_of(postings: &[Posting], avg_length: f64) -> f64 {
    postings
        .iter()
        .map(|p| p.saturation(avg_length))
        .fold(0.0, f64::max)
}

/// A phrase's complete list, as [`score_all`] scores it.
pub struct Listed<'a> {
    pub idf: f64,
    /// Every row holding it, in row order.
    pub postings: &'a [Posting],
    /// The most it adds to any row per unit of idf ([`Impacts::strongest`]
    /// at the same average length; 0 for an empty list).
    pub strongest: f64,
}

/// The `k` best rows for an OR of phrases from their complete posting
/// lists (each in row order; `idf` per phrase), best first, with exactly
/// the scores `memory_bm25` gives and its order (ties: the larger row id
/// first).
///
/// Document at a time with MaxScore pruning: once `k` rows are held, the
/// lists whose maxima together stay below the k-th score cannot bring a
/// row in alone: only the other lists are walked, the skipped ones are
/// looked into (by galloping) for the rows the walked ones bring, and a
/// row is dropped as soon as
/// what it has plus what the lists not yet looked into can add stays below
/// the k-th score. With a common word beside rarer ones, the common word's
/// list is skipped over instead of walked.
pub fn score_all(phrases: &[Listed], avg_length: f64, k: usize) -> Vec<(i64, f64)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    /// A row in the heap of the best so far; the worst on top.
    #[derive(PartialEq)]
    struct Best(f64, i64);
    impl Eq for Best {}
    impl PartialOrd for Best {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Best {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
        }
    }
    if k == 0 {
        return Vec::new();
    }
    // Each length's norm, computed once (NaN: not yet); row lengths are
    // below 4,096, longer ones are computed each time.
    let mut norms: Vec<f64> = vec![f64::NAN; 4_096];
    let mut norm_of = |length: u16| match norms.get_mut(length as usize) {
        Some(cached) => {
            if cached.is_nan() {
                *cached = norm(length as f64, avg_length);
            }
            *cached
        }
        None => norm(length as f64, avg_length),
    };
    // What a phrase adds to a row: `score`'s term, bit for bit.
    let adds = |idf: f64, q: &Posting, norm: f64| {
        let f = q.frequency as f64;
        idf * (f * (K1 + 1.0)) / (f + norm)
    };
    // Each list's most it adds to any row, and the lists weakest first.
    let most: Vec<f64> = phrases.iter().map(|p| p.idf * p.strongest).collect();
    let mut weakest_first: Vec<usize> = (0..phrases.len()).collect();
    weakest_first.sort_by(|&a, &b| most[a].total_cmp(&most[b]));
    // up_to[j]: the most the j+1 weakest lists add together.
    let up_to: Vec<f64> = weakest_first
        .iter()
        .scan(0.0, |sum, &p| {
            *sum += most[p];
            Some(*sum)
        })
        .collect();
    // A row is dropped only when its most stays below the k-th score by
    // far more than the rounding of these sums (another order than the
    // exact score's), so a row that could tie it (and win on its larger
    // row id) is always scored.
    let below = |most: f64, kth: f64| most * (1.0 + 1e-9) < kth;
    let mut at = vec![0usize; phrases.len()];
    let mut adding = vec![0.0f64; phrases.len()];
    let mut holds = vec![false; phrases.len()];
    let mut best: BinaryHeap<Reverse<Best>> = BinaryHeap::with_capacity(k + 1);
    // The weakest lists, `weakest_first[..skipped]`, are only looked into.
    let mut skipped = 0;
    loop {
        let walked = &weakest_first[skipped..];
        let row = walked
            .iter()
            .filter_map(|&p| phrases[p].postings.get(at[p]).map(|q| q.row))
            .min();
        let Some(row) = row else { break };
        holds.fill(false);
        let mut has = 0.0;
        let mut norm = f64::NAN;
        for &p in walked {
            if let Some(q) = phrases[p].postings.get(at[p]).filter(|q| q.row == row) {
                if norm.is_nan() {
                    norm = norm_of(q.length);
                }
                adding[p] = adds(phrases[p].idf, q, norm);
                holds[p] = true;
                has += adding[p];
                at[p] += 1;
            }
        }
        let kth = best.peek().map(|w| w.0 .0);
        let mut dropped = false;
        for j in (0..skipped).rev() {
            if kth.is_some_and(|kth| below(has + up_to[j], kth)) {
                dropped = true;
                break;
            }
            let p = weakest_first[j];
            let list = phrases[p].postings;
            at[p] = gallop(list, at[p], row);
            if let Some(q) = list.get(at[p]).filter(|q| q.row == row) {
                adding[p] = adds(phrases[p].idf, q, norm);
                holds[p] = true;
                has += adding[p];
            }
        }
        if dropped {
            continue;
        }
        // `score`'s sum in phrase order; a phrase the row lacks would add
        // +0.0, which leaves the (non-negative) sum as it is: skipped.
        let mut s = -0.0;
        for (p, &held) in holds.iter().enumerate() {
            if held {
                s += adding[p];
            }
        }
        if best.len() < k {
            best.push(Reverse(Best(s, row)));
        } else if best.peek().is_some_and(|w| Best(s, row) > w.0) {
            best.pop();
            best.push(Reverse(Best(s, row)));
        } else {
            continue;
        }
        if best.len() == k {
            let kth = best.peek().map_or(0.0, |w| w.0 .0);
            while skipped < phrases.len() && below(up_to[skipped], kth) {
                skipped += 1;
            }
        }
    }
    let mut out: Vec<(i64, f64)> = best.into_iter().map(|Reverse(b)| (b.1, b.0)).collect();
    out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    out
}

/// The first position at or after `from` in `list` (in row order) whose
/// row is at least `row`: doubling steps, then a binary search.
fn gallop(list: &[Posting], from: usize, row: i64) -> usize {
    let mut step = 1;
    let mut low = from;
    while low + step < list.len() && list[low + step].row < row {
        low += step;
        step *= 2;
    }
    let high = (low + step + 1).min(list.len());
    low + list[low..high].partition_point(|q| q.row < row)
}

/// One phrase of a query, as the top-k sees it.
pub struct Phrase<'a> {
    pub idf: f64,
    /// `None`: the phrase matches no row.
    pub impacts: Option<&'a Impacts>,
}

/// Where a top-k search stands after scoring candidates.
#[derive(Debug, PartialEq)]
pub enum TopK {
    /// The best rows, best first, with their exact scores.
    Settled(Vec<(i64, f64)>),
    /// These rows must be scored (their frequency in some phrase is not in
    /// its list) before the top can be settled.
    Score(Vec<i64>),
    /// The lists cannot settle it; the full-text index must score every
    /// match.
    Unsettled,
}

/// Settles the `k` best rows of a query from its phrases' impacts, given the
/// exact scores of rows whose frequencies the lists do not hold (`scored`:
/// filled in by the caller for the rows of a previous [`TopK::Score`]).
///
/// Candidates are the strongest `depth` rows of each list, depth growing
/// fourfold from `k` until settled, or unsettled once it would pass a
/// quarter of the longest list. Rows outside the candidates score at most
/// the bound: per phrase, the strongest of its rows not taken (list or
/// frontier). Ties at the k-th score (within [`TIE`]) are broken by the
/// larger row id, among the candidates.
pub fn plan(
    phrases: &[Phrase],
    avg_length: f64,
    k: usize,
    length_of: impl Fn(i64) -> f64,
    scored: &HashMap<i64, f64>,
) -> TopK {
    if k == 0 {
        return TopK::Settled(Vec::new());
    }
    let idfs: Vec<f64> = phrases.iter().map(|p| p.idf).collect();
    // Each list's rows with their strength at today's average length (one
    // division each: the norm's division is folded into a constant, which
    // may round differently from `norm` by an ulp or two — see `TIE`); the
    // strongest `depth` are selected (not sorted) as the depth grows.
    let (norm_base, norm_per_token) = (K1 * (1.0 - B), K1 * B / avg_length);
    let mut lists: Vec<Vec<(f64, i64)>> = phrases
        .iter()
        .map(|p| {
            p.impacts
                .map(|i| {
                    i.best
                        .iter()
                        .map(|q| {
                            let f = q.frequency as f64;
                            let norm = norm_base + norm_per_token * q.length as f64;
                            (f * (K1 + 1.0) / (f + norm), q.row)
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let strongest_first = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut depth = k.min(longest.max(1));
    loop {
        let mut bound = 0.0;
        let mut candidates: Vec<i64> = Vec::new();
        for (phrase, rows) in phrases.iter().zip(&mut lists) {
            let taken = depth.min(rows.len());
            // After the selection, rows[taken] is the strongest row not taken.
            if taken < rows.len() {
                rows.select_nth_unstable_by(taken, strongest_first);
            }
            candidates.extend(rows[..taken].iter().map(|r| r.1));
            let next_in_list = rows.get(taken).map_or(0.0, |r| r.0);
            let rest = phrase.impacts.map_or(0.0, |i| i.rest_bound(avg_length));
            bound += phrase.idf * next_in_list.max(rest);
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut exact: Vec<(i64, f64)> = Vec::with_capacity(candidates.len());
        let mut unknown: Vec<i64> = Vec::new();
        for &row in &candidates {
            if let Some(&s) = scored.get(&row) {
                exact.push((row, s));
                continue;
            }
            let known: Option<Vec<f64>> = phrases
                .iter()
                .map(|p| match p.impacts {
                    None => Some(0.0),
                    Some(i) => match i.frequency_in(row) {
                        Some(f) => Some(f as f64),
                        None if i.is_complete() => Some(0.0),
                        None => None,
                    },
                })
                .collect();
            match known {
                Some(f) => exact.push((row, score(&idfs, &f, norm(length_of(row), avg_length)))),
                None => unknown.push(row),
            }
        }
        if !unknown.is_empty() {
            return TopK::Score(unknown);
        }
        exact.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        let settled = match exact.get(k - 1) {
            Some(&(_, kth)) => kth >= bound * (1.0 - TIE),
            // Fewer candidates than k: settled only if no row is left out.
            None => bound == 0.0,
        };
        if settled {
            exact.truncate(k);
            return TopK::Settled(exact);
        }
        // Deeper than a quarter of the longest list, the candidates cost
        // about what scoring every posting of the complete lists does.
        if depth >= longest || depth * 4 > longest / 4 {
            return TopK::Unsettled;
        }
        depth *= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator (xorshift), so the tests need no
    /// dependency and every seed is reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Rows of random terms: (row id, length, per-term frequency).
    fn corpus(rng: &mut Rng, rows: usize, terms: usize) -> Vec<(i64, u16, Vec<f32>)> {
        (0..rows)
            .map(|i| {
                let length = 1 + rng.below(60) as u16;
                let f = (0..terms)
                    .map(|t| {
                        // Term t is in about one row in (t + 1): a common
                        // word and rarer ones, quarter weights as headings.
                        if rng.below(t as u64 + 1) == 0 {
                            (1 + rng.below(3)) as f32 + 0.25 * rng.below(2) as f32
                        } else {
                            0.0
                        }
                    })
                    .collect();
                (i as i64 * 7 + 1, length, f)
            })
            .collect()
    }

    fn brute_force(
        corpus: &[(i64, u16, Vec<f32>)],
        idfs: &[f64],
        avg: f64,
        k: usize,
    ) -> Vec<(i64, f64)> {
        let mut all: Vec<(i64, f64)> = corpus
            .iter()
            .filter(|r| r.2.iter().any(|&f| f > 0.0))
            .map(|(row, len, f)| {
                let f: Vec<f64> = f.iter().map(|&x| x as f64).collect();
                (*row, score(idfs, &f, norm(*len as f64, avg)))
            })
            .collect();
        all.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        all.truncate(k);
        all
    }

    fn impacts_of(corpus: &[(i64, u16, Vec<f32>)], term: usize, avg: f64, keep: usize) -> Impacts {
        let postings = corpus
            .iter()
            .filter(|r| r.2[term] > 0.0)
            .map(|(row, len, f)| Posting {
                row: *row,
                frequency: f[term],
                length: *len,
            })
            .collect::<Vec<_>>();
        Impacts::build(&postings, avg, keep)
    }

    /// Runs `plan`, scoring what it asks for from the corpus.
    fn top_k(
        corpus: &[(i64, u16, Vec<f32>)],
        impacts: &[Impacts],
        idfs: &[f64],
        avg: f64,
        k: usize,
    ) -> TopK {
        let phrases: Vec<Phrase> = impacts
            .iter()
            .zip(idfs)
            .map(|(i, &idf)| Phrase {
                idf,
                impacts: (!i.best.is_empty() || !i.rest.is_empty()).then_some(i),
            })
            .collect();
        let length_of = |row: i64| {
            corpus
                .iter()
                .find(|r| r.0 == row)
                .map_or(1.0, |r| r.1 as f64)
        };
        let mut scored = HashMap::new();
        loop {
            match plan(&phrases, avg, k, length_of, &scored) {
                TopK::Score(rows) => {
                    for row in rows {
                        let r = corpus.iter().find(|r| r.0 == row).unwrap();
                        let f: Vec<f64> = r.2.iter().map(|&x| x as f64).collect();
                        scored.insert(row, score(idfs, &f, norm(r.1 as f64, avg)));
                    }
                }
                other => return other,
            }
        }
    }

    #[test]
    fn settles_the_same_top_k_as_scoring_every_row() {
        let mut settled = 0;
        for seed in 1..=150u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let terms = 1 + rng.below(4) as usize;
            let rows = 50 + rng.below(400) as usize;
            let corpus = corpus(&mut rng, rows, terms);
            let avg = corpus.iter().map(|r| r.1 as f64).sum::<f64>() / corpus.len() as f64;
            let keep = [4, 16, 64, 1000][rng.below(4) as usize];
            let idfs: Vec<f64> = (0..terms).map(|t| 0.5 + t as f64).collect();
            let impacts: Vec<Impacts> = (0..terms)
                .map(|t| impacts_of(&corpus, t, avg, keep))
                .collect();
            for k in [1, 3, 10, 24] {
                let expected = brute_force(&corpus, &idfs, avg, k);
                match top_k(&corpus, &impacts, &idfs, avg, k) {
                    TopK::Settled(found) => {
                        settled += 1;
                        let scores =
                            |v: &[(i64, f64)]| v.iter().map(|x| x.1.to_bits()).collect::<Vec<_>>();
                        assert_eq!(scores(&found), scores(&expected), "seed {seed} k {k}");
                    }
                    TopK::Unsettled => {}
                    TopK::Score(_) => unreachable!(),
                }
            }
        }
        // The rest are left unsettled (scored from the complete lists).
        assert!(
            settled > 200,
            "the lists settled only {settled} of 600 searches"
        );
    }

    #[test]
    fn a_rare_word_beside_a_common_one_is_settled_from_the_common_words_list() {
        // "OPS-4773": the rare word is in one row; the other 23 of the top
        // 24 hold only the common word and are its shortest rows.
        let mut corpus: Vec<(i64, u16, Vec<f32>)> = (0..5000)
            .map(|i| (i * 8 + 3, 5 + (i % 97) as u16, vec![1.0, 0.0]))
            .collect();
        corpus[4321].2[1] = 1.0;
        let avg = 50.0;
        let idfs = [idf(5000, 5000), idf(5000, 1)];
        let impacts = [
            impacts_of(&corpus, 0, avg, 256),
            impacts_of(&corpus, 1, avg, 256),
        ];
        let TopK::Settled(found) = top_k(&corpus, &impacts, &idfs, avg, 24) else {
            panic!("not settled")
        };
        assert_eq!(found[0].0, corpus[4321].0);
        assert_eq!(found, brute_force(&corpus, &idfs, avg, 24));
    }

    #[test]
    fn a_changed_average_length_keeps_the_bound_true() {
        for seed in 1..=60u64 {
            let mut rng = Rng(seed * 31 + 7);
            let corpus = corpus(&mut rng, 300, 2);
            let built_at = 10.0 + rng.below(40) as f64;
            let searched_at = 10.0 + rng.below(40) as f64;
            let idfs = [1.3, 2.1];
            let impacts = [
                impacts_of(&corpus, 0, built_at, 20),
                impacts_of(&corpus, 1, built_at, 20),
            ];
            if let TopK::Settled(found) = top_k(&corpus, &impacts, &idfs, searched_at, 10) {
                let expected = brute_force(&corpus, &idfs, searched_at, 10);
                let scores = |v: &[(i64, f64)]| v.iter().map(|x| x.1).collect::<Vec<_>>();
                assert_eq!(scores(&found), scores(&expected), "seed {seed}");
            }
        }
    }

    #[test]
    fn changes_keep_the_lists_exact_and_bounded() {
        for seed in 1..=80u64 {
            let mut rng = Rng(seed + 1000);
            let mut corpus = corpus(&mut rng, 200, 2);
            let avg = 30.0;
            let keep = 8 + rng.below(30) as usize;
            let mut impacts = [
                impacts_of(&corpus, 0, avg, keep),
                impacts_of(&corpus, 1, avg, keep),
            ];
            // Remove some rows, add new ones (larger ids), as writes do.
            for _ in 0..40 {
                let mut changes = [TermChanges::default(), TermChanges::default()];
                if rng.below(2) == 0 && !corpus.is_empty() {
                    let gone = corpus.remove(rng.below(corpus.len() as u64) as usize);
                    for (change, &f) in changes.iter_mut().zip(&gone.2) {
                        if f > 0.0 {
                            change.removed.push(gone.0);
                        }
                    }
                } else {
                    let row = corpus.iter().map(|r| r.0).max().unwrap_or(0) + 5;
                    let fresh = (
                        row,
                        1 + rng.below(60) as u16,
                        vec![rng.below(3) as f32, rng.below(2) as f32],
                    );
                    for (change, &frequency) in changes.iter_mut().zip(&fresh.2) {
                        if frequency > 0.0 {
                            change.added.push(Posting {
                                row,
                                frequency,
                                length: fresh.1,
                            });
                        }
                    }
                    corpus.push(fresh);
                }
                for t in 0..2 {
                    changes[t].apply(&mut impacts[t], avg, keep);
                }
            }
            let idfs = [0.7, 1.9];
            for k in [1, 5, 12] {
                if let TopK::Settled(found) = top_k(&corpus, &impacts, &idfs, avg, k) {
                    let expected = brute_force(&corpus, &idfs, avg, k);
                    let scores = |v: &[(i64, f64)]| v.iter().map(|x| x.1).collect::<Vec<_>>();
                    assert_eq!(scores(&found), scores(&expected), "seed {seed} k {k}");
                }
            }
            assert!(impacts.iter().all(|i| i.best.len() <= 2 * keep + 1));
        }
    }

    #[test]
    fn a_wrong_bound_is_caught() {
        // The check above is not vacuous: with the frontier dropped, the
        // lists settle on a wrong top.
        let mut wrong = 0;
        for seed in 1..=40u64 {
            let mut rng = Rng(seed * 977);
            let corpus = corpus(&mut rng, 300, 2);
            let avg = 30.0;
            let idfs = [1.0, 1.5];
            let mut impacts = [
                impacts_of(&corpus, 0, avg, 10),
                impacts_of(&corpus, 1, avg, 10),
            ];
            for i in &mut impacts {
                i.rest.iter_mut().for_each(|p| p.0 = 0.0);
            }
            if let TopK::Settled(found) = top_k(&corpus, &impacts, &idfs, avg, 10) {
                if found != brute_force(&corpus, &idfs, avg, 10) {
                    wrong += 1;
                }
            }
        }
        assert!(wrong > 0);
    }

    #[test]
    fn scoring_every_posting_matches_brute_force_in_order() {
        for seed in 1..=160u64 {
            let mut rng = Rng(seed * 7919 + 3);
            let terms = 1 + rng.below(6) as usize;
            let rows = 1 + rng.below(if seed % 4 == 0 { 3_000 } else { 300 }) as usize;
            let mut corpus = corpus(&mut rng, rows, terms);
            // Every other seed, texts repeated (as copied notes are): rows
            // tie exactly, and the k-th score is reached by many rows.
            if seed % 2 == 0 {
                let copies = 1 + rng.below(8) as usize;
                let originals = corpus.len().div_ceil(copies);
                for i in originals..corpus.len() {
                    let (length, f) = (corpus[i % originals].1, corpus[i % originals].2.clone());
                    corpus[i].1 = length;
                    corpus[i].2 = f;
                }
            }
            let avg = 17.5;
            // Weights in any order: the weakest list is not always the first.
            // (1e-6: a word in more than half of the rows.)
            let idfs: Vec<f64> = (0..terms)
                .map(|_| match rng.below(4) {
                    0 => 1e-6,
                    _ => 1e-6_f64.max(rng.below(4_000) as f64 / 1_000.0),
                })
                .collect();
            let lists: Vec<Vec<Posting>> = (0..terms)
                .map(|t| {
                    corpus
                        .iter()
                        .filter(|r| r.2[t] > 0.0)
                        .map(|(row, len, f)| Posting {
                            row: *row,
                            frequency: f[t],
                            length: *len,
                        })
                        .collect()
                })
                .collect();
            // The bounds from impacts that keep part of each list in full,
            // built when the average length was another (as writes move
            // it): the strongest row may then be on the frontier.
            let keep = 1 + rng.below(40) as usize;
            let built_at = avg * (0.2 + rng.below(300) as f64 / 100.0);
            let impacts: Vec<Impacts> = lists
                .iter()
                .map(|l| Impacts::build(l, built_at, keep))
                .collect();
            let mut phrases: Vec<Listed> = idfs
                .iter()
                .zip(&lists)
                .zip(&impacts)
                .map(|((&idf, l), i)| Listed {
                    idf,
                    postings: l,
                    strongest: i.strongest(avg),
                })
                .collect();
            for l in &lists {
                assert!(l.iter().all(|p| p.saturation(avg) <= strongest_of(l, avg)));
            }
            // A word said twice in the query: its list twice, one pointer each.
            let mut idfs = idfs;
            if seed % 5 == 0 {
                phrases.push(Listed {
                    idf: idfs[0],
                    postings: &lists[0],
                    strongest: impacts[0].strongest(avg),
                });
                idfs.push(idfs[0]);
                for row in &mut corpus {
                    let f = row.2[0];
                    row.2.push(f);
                }
            }
            for k in [1, 2, 7, 24, 1000] {
                assert_eq!(
                    score_all(&phrases, avg, k),
                    brute_force(&corpus, &idfs, avg, k),
                    "seed {seed} k {k}"
                );
            }
        }
    }

    #[test]
    fn blocks_survive_their_stored_form_and_refuse_damage() {
        let postings = vec![
            Posting {
                row: 4097,
                frequency: 1.25,
                length: 1,
            },
            Posting {
                row: 8200,
                frequency: 3.0,
                length: 4095,
            },
            Posting {
                row: i64::MAX - 3,
                frequency: 0.25,
                length: 7,
            },
        ];
        let bytes = encode_block(&postings);
        let mut back = Vec::new();
        assert_eq!(decode_block(&bytes, &mut back), Some(()));
        assert_eq!(back, postings);
        assert_eq!(
            decode_block(&bytes[..bytes.len() - 1], &mut Vec::new()),
            None
        );
        assert_eq!(decode_block(&[0x80], &mut Vec::new()), None);
    }

    #[test]
    fn impacts_survive_their_stored_form_and_refuse_damage() {
        let mut rng = Rng(42);
        let corpus = corpus(&mut rng, 100, 1);
        let impacts = impacts_of(&corpus, 0, 20.0, 10);
        assert!(!impacts.rest.is_empty());
        let bytes = impacts.encode();
        assert_eq!(Impacts::decode(&bytes), Some(impacts));
        assert_eq!(Impacts::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Impacts::decode(b""), None);
    }

    /// The straightforward build, as a reference: sort the postings by
    /// strength and keep the first `keep`.
    fn sorted_build(mut postings: Vec<Posting>, avg: f64, keep: usize) -> Impacts {
        postings.sort_by(|a, b| {
            b.saturation(avg)
                .total_cmp(&a.saturation(avg))
                .then(b.row.cmp(&a.row))
        });
        let mut impacts = Impacts::default();
        for p in postings.drain(keep.min(postings.len())..) {
            impacts.add_to_rest(p.frequency, p.length);
        }
        postings.sort_by_key(|p| p.row);
        impacts.best = postings;
        impacts
    }

    #[test]
    fn building_keeps_the_strongest_and_bounds_the_rest() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed * 104_729);
            let rows = 1 + rng.below(500) as usize;
            let corpus = corpus(&mut rng, rows, 1);
            let postings: Vec<Posting> = corpus
                .iter()
                .filter(|r| r.2[0] > 0.0)
                .map(|(row, len, f)| Posting {
                    row: *row,
                    frequency: f[0],
                    length: *len,
                })
                .collect();
            for keep in [1, 5, 64, 1000] {
                assert_eq!(
                    Impacts::build(&postings, 21.0, keep),
                    sorted_build(postings.clone(), 21.0, keep),
                    "seed {seed} keep {keep}"
                );
            }
        }
    }

    #[test]
    fn a_row_added_and_removed_by_the_same_changes_is_neither() {
        let posting = |row| Posting {
            row,
            frequency: 1.0,
            length: 3,
        };
        let mut changes = TermChanges::default();
        changes.remove(5);
        changes.add(posting(10));
        changes.add(posting(20));
        changes.remove(10);
        assert_eq!(changes.added, vec![posting(20)]);
        assert_eq!(changes.removed, vec![5]);
        assert_eq!(changes.row_delta(), 0);
        let mut impacts = Impacts::build(&[posting(5), posting(7)], 3.0, 10);
        changes.apply(&mut impacts, 3.0, 10);
        assert_eq!(impacts.best, vec![posting(7), posting(20)]);
    }

    #[test]
    fn the_frontier_keeps_only_undominated_points() {
        let mut i = Impacts::default();
        i.add_to_rest(1.0, 10);
        i.add_to_rest(1.0, 12);
        i.add_to_rest(2.0, 30);
        i.add_to_rest(2.0, 8);
        assert_eq!(i.rest, vec![(2.0, 8)]);
        i.add_to_rest(1.0, 3);
        assert_eq!(i.rest, vec![(1.0, 3), (2.0, 8)]);
    }

    #[test]
    fn frequencies_weigh_each_column() {
        let f = frequencies([
            (vec![&b"kafka"[..], b"lag", b"kafka"], 1.0),
            (vec![&b"kafka"[..]], 0.25),
        ]);
        assert_eq!(f[&b"kafka"[..]], 2.25);
        assert_eq!(f[&b"lag"[..]], 1.0);
    }
}
