//! The best of a set of scored entries, and how many of the true best an
//! approximate answer found (recall), for the vector leg and its benchmark.

/// The `k` best (id, score) pairs, best first; equal scores in id order so
/// the answer does not depend on the order they came in.
pub fn best(mut scored: Vec<(i64, f32)>, k: usize) -> Vec<(i64, f32)> {
    let order = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < scored.len() {
        scored.select_nth_unstable_by(k, order);
        scored.truncate(k);
    }
    scored.sort_unstable_by(order);
    scored
}

/// The share of `exact` that `found` holds (1 when `exact` is empty).
pub fn recall_of(exact: &[i64], found: &[i64]) -> f64 {
    if exact.is_empty() {
        return 1.0;
    }
    let found: std::collections::HashSet<i64> = found.iter().copied().collect();
    exact.iter().filter(|id| found.contains(id)).count() as f64 / exact.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_come_first_and_ties_go_by_id() {
        let scored = vec![(3, 0.5), (1, 0.9), (2, 0.5), (4, 0.1)];
        assert_eq!(best(scored.clone(), 2), vec![(1, 0.9), (2, 0.5)]);
        assert_eq!(best(scored, 9).len(), 4);
    }

    #[test]
    fn recall_counts_the_exact_best_that_were_found() {
        assert_eq!(recall_of(&[1, 2, 3, 4], &[4, 9, 2]), 0.5);
        assert_eq!(recall_of(&[], &[1]), 1.0);
    }
}
