//! Ranking: from retrieval candidates to the ordered hits of `memory_search`.
//! Pure functions; the index gathers the candidates, this module decides.
//!
//! final = relevance × recency × importance, where
//! - relevance = w·vector + (1−w)·text with the vector leg, or text alone;
//!   text = ½·(BM25 ÷ best BM25) + ½·(share of query words present), lifted by
//!   the best-matching surrounding window of a daily note (neighbouring lines);
//!   vector = the cosine placed on the candidates' range, from the cosine at
//!   which the vector leg stopped taking entries (0 when it took them all) to
//!   the best (`vector_scale`), so both legs speak the same 0..1 scale
//!   whatever the embedder's cosine range;
//! - an entry next to a daily-note match gets at least `neighbour_weight` of
//!   that match's relevance (a reply answers the line before it); one that
//!   passes only that way is marked `by_context`; one that also holds some
//!   of the query's words combines the two (`with_context`): a line of a
//!   passage about the question outranks an equal line alone;
//! - recency = floor + (1 − floor)·½^(age ÷ half-life) for dated daily notes,
//!   1 for everything else: the decaying part orders near equals newest
//!   first, the floor (0.7 by default) keeps an old entry that nothing
//!   newer matches as well above weak recent ones;
//! - importance = 0.80 … 1.25 for importance 1 … 10 (5 is neutral), 1 if unset;
//! - project = 1.15 for entries tagged with an active project, 0.85 for
//!   entries tagged only with other projects, 1 for untagged entries.
//!
//! The `min-score` gate applies to relevance, before recency: decay reorders
//! results but never hides an old entry that clearly answers the query.
//!
//! A note a later note replaces by its supersedes key (`superseded`) hands
//! its relevance on to that note and ranks below it, at most half the later
//! one's score. MMR then demotes near-duplicates of what is already selected.

pub mod superseded;

use crate::contract::api::ScoreParts;
use std::collections::{HashMap, HashSet};

/// Most of a replaced note's score, as a share of its replacement's.
pub const REPLACED_SHARE: f32 = 0.5;

/// How much a matching surrounding window can lift an entry's text score.
const WINDOW_CONTEXT_WEIGHT: f32 = 0.15;

#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: i64,
    /// BM25 of the entry itself (higher is better), when the lexical leg found it.
    pub bm25: Option<f64>,
    /// BM25 of the best window containing the entry, when one matched.
    pub window_bm25: Option<f64>,
    /// Cosine similarity to the query, when the vector leg ran.
    pub vector: Option<f32>,
    /// Share of the query's content words present in the entry, 0..=1.
    pub coverage: f32,
    /// Age in days of a dated daily note; `None` for evergreen files.
    pub age_days: Option<f64>,
    pub importance: Option<u8>,
    /// The project multiplier (see `project_multiplier`); 1 when neutral.
    pub project: f32,
    /// Stemmed content words, for near-duplicate detection.
    pub words: HashSet<String>,
    /// Entries next to this one in its file that matched the query, with
    /// their distance in entries: a reply answers the line before it, so an
    /// entry is worth some of its neighbour's relevance (`neighbour_weight`).
    pub neighbours: Vec<(i64, i32)>,
    /// The later note that replaces this one by its supersedes key
    /// (`superseded::replaced_by`), when there is one.
    pub replaced_by: Option<superseded::Replaced>,
}

impl Default for Candidate {
    /// A candidate found by no leg yet, with neutral multipliers.
    fn default() -> Candidate {
        Candidate {
            id: 0,
            bm25: None,
            window_bm25: None,
            vector: None,
            coverage: 0.0,
            age_days: None,
            importance: None,
            project: 1.0,
            words: HashSet::new(),
            neighbours: Vec::new(),
            replaced_by: None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RankSettings {
    pub vector_weight: f32,
    /// Whether the vector leg ran for this query.
    pub hybrid: bool,
    /// The cosine at which the vector leg stopped taking entries, when it
    /// had more than it took (`vector_scale`).
    pub vector_cutoff: Option<f32>,
    pub half_life_days: f32,
    /// Share of a dated entry's score recency never takes (see
    /// `recency_multiplier`).
    pub recency_floor: f32,
    pub mmr_lambda: f32,
    pub min_score: f32,
    pub max_results: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub id: i64,
    pub score: f32,
    pub parts: ScoreParts,
    /// The entry passed on its neighbour's relevance, not its own: shown
    /// as context, never counted as recalled.
    pub by_context: bool,
    /// Its relevance before its neighbours lifted it (what a recall records).
    pub own_relevance: f32,
}

pub fn importance_multiplier(importance: Option<u8>) -> f32 {
    match importance {
        Some(i @ 1..=10) => 0.80 + (i - 1) as f32 * 0.05,
        _ => 1.0,
    }
}

/// Boost for an entry of an active project; mild demotion for an entry of
/// other projects only; untagged entries are neutral.
pub const ACTIVE_PROJECT_BOOST: f32 = 1.15;
pub const OTHER_PROJECT_DEMOTION: f32 = 0.85;

pub fn project_multiplier(entry_projects: &[String], active: &[String]) -> f32 {
    if entry_projects.is_empty() {
        1.0
    } else if entry_projects.iter().any(|k| active.contains(k)) {
        ACTIVE_PROJECT_BOOST
    } else {
        OTHER_PROJECT_DEMOTION
    }
}

/// The project multiplier of an entry whose annotations may or may not be
/// honoured (`provenance::annotations_honoured`): an untrusted or system
/// entry's project keys only narrow it, never rank it up.
pub fn project_multiplier_for(entry_projects: &[String], active: &[String], honoured: bool) -> f32 {
    let m = project_multiplier(entry_projects, active);
    if honoured {
        m
    } else {
        m.min(1.0)
    }
}

/// `floor + (1 − floor) · ½^(age ÷ half-life)`: the decaying part halves
/// every half-life and `floor` of the score is never taken away, so newer
/// entries still win among near equals while a months-old entry that
/// clearly answers keeps its place above weak recent ones. A floor of 0 is
/// the seed's pure decay.
pub fn recency_multiplier(age_days: Option<f64>, half_life_days: f32, floor: f32) -> f32 {
    match age_days {
        Some(age) if half_life_days > 0.0 && age > 0.0 => {
            let floor = if floor.is_nan() {
                0.0
            } else {
                floor.clamp(0.0, 1.0) as f64
            };
            (floor + (1.0 - floor) * 0.5f64.powf(age / half_life_days as f64)) as f32
        }
        _ => 1.0,
    }
}

/// A cosine on the 0..1 scale of the vector leg: 0 at the low end, 1 at the
/// best candidate's. The low end is the cosine at which the leg stopped
/// taking entries (`cutoff`: an entry just below it gets no vector score at
/// all, so one at it should get next to none), else 0, the cosine of
/// unrelated text.
pub fn vector_scale(cosine: f32, best: f32, cutoff: Option<f32>) -> f32 {
    let cutoff = cutoff.filter(|c| c.is_finite());
    let low = cutoff.map_or(0.0, |c| c.min(best));
    if best - low <= f32::EPSILON {
        // No range: every entry the leg took is as near as the best, or
        // (with no cut-off) the best is no nearer than unrelated text.
        return if cutoff.is_some() && cosine >= best {
            1.0
        } else {
            0.0
        };
    }
    ((cosine - low) / (best - low)).clamp(0.0, 1.0)
}

/// The relevance of an entry that matches by itself (`matched`: its own
/// relevance before any surrounding lines lift it, 0 unless it shares words
/// with the query) and sits next to a match (`context`, its share of that
/// match's relevance): the better of its own relevance and the context,
/// joined by the lesser of the two signals as an independent chance,
/// `1 − (1 − best)·(1 − lesser)`. Two lines that each hold some of the
/// query's words are a passage about it, as the surrounding window's lift
/// already says, and may pass the gate together. The result stays in 0..1;
/// it is the better of the two for a line that matches in meaning only or not
/// at all, and the entry's own for a line no match sits beside.
pub fn with_context(own: f32, matched: f32, context: f32) -> f32 {
    let best = own.max(context);
    // A NaN `matched` (a broken vector) adds nothing, rather than `min`
    // taking the context for it.
    let lesser = if matched.is_nan() {
        0.0
    } else {
        matched.min(context).clamp(0.0, 1.0)
    };
    best + lesser * (1.0 - best)
}

/// Share of a neighbour's relevance an entry gets, by distance in entries.
pub fn neighbour_weight(distance: i32) -> f32 {
    match distance.unsigned_abs() {
        1 => 0.7,
        2 => 0.5,
        _ => 0.0,
    }
}

pub fn rank(candidates: Vec<Candidate>, settings: &RankSettings) -> Vec<Ranked> {
    let best_bm25 = max_of(candidates.iter().filter_map(|c| c.bm25));
    let best_window = max_of(candidates.iter().filter_map(|c| c.window_bm25));
    // The best cosine, whatever its sign (a cut-off below a negative best
    // still places the best at 1).
    let best_vector = candidates
        .iter()
        .filter_map(|c| c.vector)
        .filter(|v| v.is_finite())
        .fold(f32::NEG_INFINITY, f32::max);
    // Each candidate's own text score, vector score and relevance, before
    // its neighbours are heard, and its relevance before the window lifts
    // it (what it matches by itself).
    let own: HashMap<i64, Own> = candidates
        .iter()
        .map(|c| {
            let lexical = c.bm25.map_or(0.0, |b| (b / best_bm25) as f32);
            let matched_text = 0.5 * lexical + 0.5 * c.coverage.clamp(0.0, 1.0);
            let mut text = matched_text;
            if let Some(w) = c.window_bm25 {
                text += WINDOW_CONTEXT_WEIGHT * (w / best_window) as f32 * (1.0 - text);
            }
            let vector = c
                .vector
                .filter(|_| settings.hybrid)
                .map(|v| vector_scale(v, best_vector, settings.vector_cutoff));
            let (relevance, matched) = if settings.hybrid {
                let w = settings.vector_weight.clamp(0.0, 1.0);
                let v = w * vector.unwrap_or(0.0);
                // A line that matches in meaning only is no passage with its
                // neighbour: at the default weight and gate (0.3 < 0.35) the
                // vector leg alone never passes, and two such lines must not
                // lift each other past it.
                let matched = if matched_text > 0.0 {
                    v + (1.0 - w) * matched_text
                } else {
                    0.0
                };
                (v + (1.0 - w) * text, matched)
            } else {
                (text, matched_text)
            };
            let own = Own {
                text,
                vector,
                relevance,
                matched,
            };
            (c.id, own)
        })
        .collect();
    let mut scored: Vec<(Ranked, &HashSet<String>)> = candidates
        .iter()
        .map(|c| {
            let Own {
                text,
                vector,
                relevance: own_relevance,
                matched,
            } = own[&c.id];
            let context = c
                .neighbours
                .iter()
                .filter_map(|(id, d)| own.get(id).map(|o| o.relevance * neighbour_weight(*d)))
                .fold(0.0f32, f32::max);
            let relevance = with_context(own_relevance, matched, context);
            let recency =
                recency_multiplier(c.age_days, settings.half_life_days, settings.recency_floor);
            let importance = importance_multiplier(c.importance);
            let project = c.project;
            let parts = ScoreParts {
                text,
                vector,
                relevance,
                recency,
                importance,
                project,
            };
            let score = relevance * recency * importance * project;
            (
                Ranked {
                    id: c.id,
                    score,
                    parts,
                    by_context: !passes(own_relevance, settings.min_score),
                    own_relevance,
                },
                &c.words,
            )
        })
        .collect();
    hand_on_replaced(&mut scored, &candidates, settings.min_score);
    // NaN relevance fails the gate too.
    scored.retain(|(r, _)| passes(r.parts.relevance, settings.min_score));
    scored.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.id.cmp(&b.0.id)));
    mmr(scored, settings.mmr_lambda, settings.max_results)
}

/// A candidate's scores before its neighbours are heard (see `rank`).
#[derive(Clone, Copy)]
struct Own {
    text: f32,
    vector: Option<f32>,
    relevance: f32,
    /// The relevance without the surrounding window's lift, when the entry
    /// shares words with the query; 0 when it matches in meaning only.
    matched: f32,
}

/// Whether a relevance passes the `min-score` gate (NaN never does).
fn passes(relevance: f32, min_score: f32) -> bool {
    !relevance.is_nan() && relevance >= min_score && relevance > 0.0
}

/// Notes replaced by a later note with their supersedes key (see
/// `superseded`): the later note takes the best place of those it replaces
/// that pass the gate (their relevance and score, when higher than its
/// own), so it is found whatever words it uses but climbs no higher than
/// they stood; each replaced note then drops to half its score, at most
/// half the later one's. A replaced note that was only context (its
/// neighbour matched) makes its replacement context too, never a recall.
fn hand_on_replaced(
    scored: &mut [(Ranked, &HashSet<String>)],
    candidates: &[Candidate],
    min_score: f32,
) {
    let at: HashMap<i64, usize> = scored
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (r.id, i))
        .collect();
    let replaced: Vec<(usize, usize, bool)> = candidates
        .iter()
        .filter_map(|c| {
            let r = c.replaced_by?;
            Some((*at.get(&c.id)?, *at.get(&r.by)?, r.hands_on))
        })
        .collect();
    for &(old, new, hands_on) in &replaced {
        let o = scored[old].0.clone();
        if !hands_on || !passes(o.parts.relevance, min_score) {
            continue;
        }
        let n = &mut scored[new].0;
        if !passes(n.parts.relevance, min_score) || o.parts.relevance > n.parts.relevance {
            n.parts.relevance = o.parts.relevance;
        }
        if !o.by_context {
            n.own_relevance = n.own_relevance.max(o.own_relevance);
        }
        n.by_context &= o.by_context;
        // `max` keeps the old score when the replacement's is NaN.
        n.score = o.score.max(n.score);
    }
    // After the hand-on every replacement scores at least what it replaced.
    for &(old, _, _) in &replaced {
        scored[old].0.score *= REPLACED_SHARE;
    }
}

fn max_of(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(f64::MIN_POSITIVE, f64::max)
}

/// Maximal marginal relevance over word sets: each pick maximises
/// λ·score − (1−λ)·(similarity to the closest already picked), with scores
/// normalised to the best one. λ ≥ 1 keeps the score order.
fn mmr(mut pool: Vec<(Ranked, &HashSet<String>)>, lambda: f32, limit: usize) -> Vec<Ranked> {
    if lambda >= 1.0 || pool.len() <= 1 {
        return pool.into_iter().take(limit).map(|(r, _)| r).collect();
    }
    pool.truncate(limit.saturating_mul(4).max(limit));
    let top = pool
        .first()
        .map_or(1.0, |(r, _)| r.score)
        .max(f32::MIN_POSITIVE);
    // Closest similarity of each pool member to anything picked so far,
    // updated with each new pick only.
    let mut redundancy = vec![0.0f32; pool.len()];
    let mut picked: Vec<(Ranked, &HashSet<String>)> = Vec::new();
    while picked.len() < limit && !pool.is_empty() {
        let mut best = 0;
        let mut best_value = f32::NEG_INFINITY;
        for (i, (candidate, _)) in pool.iter().enumerate() {
            let value = lambda * candidate.score / top - (1.0 - lambda) * redundancy[i];
            if value > best_value {
                best_value = value;
                best = i;
            }
        }
        let chosen = pool.remove(best);
        redundancy.remove(best);
        for (i, (_, words)) in pool.iter().enumerate() {
            redundancy[i] = redundancy[i].max(jaccard(words, chosen.1));
        }
        picked.push(chosen);
    }
    picked.into_iter().map(|(r, _)| r).collect()
}

pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f32 / (a.len() + b.len() - shared) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RankSettings {
        RankSettings {
            vector_weight: 0.7,
            hybrid: false,
            vector_cutoff: None,
            half_life_days: 30.0,
            recency_floor: 0.0,
            mmr_lambda: 1.0,
            min_score: 0.35,
            max_results: 6,
        }
    }

    fn words(s: &str) -> HashSet<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn lexical(id: i64, bm25: f64, coverage: f32) -> Candidate {
        Candidate {
            id,
            bm25: Some(bm25),
            coverage,
            words: words(&format!("w{id}")),
            ..Default::default()
        }
    }

    #[test]
    fn a_neighbour_of_a_match_gets_part_of_its_relevance_and_is_context() {
        let matched = lexical(1, 8.0, 1.0);
        let reply = Candidate {
            id: 2,
            words: words("w2"),
            neighbours: vec![(1, -1)],
            ..Default::default()
        };
        let far = Candidate {
            id: 3,
            words: words("w3"),
            neighbours: vec![(1, -3)],
            ..Default::default()
        };
        let ranked = rank(vec![far, reply, matched], &settings());
        let ids: Vec<i64> = ranked.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![1, 2], "three entries away is too far");
        assert!((ranked[1].parts.relevance - 0.7).abs() < 1e-6);
        assert!(!ranked[0].by_context);
        assert!(ranked[1].by_context);
        assert_eq!(ranked[1].own_relevance, 0.0);
    }

    #[test]
    fn an_entry_with_a_match_of_its_own_is_not_context() {
        let matched = lexical(1, 8.0, 1.0);
        let mut second = lexical(2, 6.0, 1.0);
        second.neighbours = vec![(1, 1)];
        let ranked = rank(vec![matched, second], &settings());
        assert!(ranked.iter().all(|r| !r.by_context));
    }

    #[test]
    fn cosines_are_scaled_to_the_best_when_the_leg_took_every_entry() {
        let hybrid = RankSettings {
            hybrid: true,
            vector_weight: 0.5,
            min_score: 0.0,
            ..settings()
        };
        let a = Candidate {
            id: 1,
            vector: Some(0.6),
            words: words("a"),
            ..Default::default()
        };
        let b = Candidate {
            id: 2,
            vector: Some(0.3),
            words: words("b"),
            ..Default::default()
        };
        let ranked = rank(vec![a, b], &hybrid);
        assert_eq!(ranked[0].parts.vector, Some(1.0));
        assert_eq!(ranked[1].parts.vector, Some(0.5));
        assert!((ranked[0].parts.relevance - 0.5).abs() < 1e-6);
    }

    #[test]
    fn cosines_start_from_where_the_vector_leg_stopped() {
        let hybrid = RankSettings {
            hybrid: true,
            vector_weight: 0.5,
            min_score: 0.0,
            vector_cutoff: Some(0.2),
            ..settings()
        };
        let entry = |id, cosine| Candidate {
            id,
            vector: Some(cosine),
            words: words(&format!("w{id}")),
            ..Default::default()
        };
        let ranked = rank(vec![entry(1, 0.6), entry(2, 0.4), entry(3, 0.2)], &hybrid);
        let vectors: Vec<Option<f32>> = ranked.iter().map(|r| r.parts.vector).collect();
        assert_eq!(vectors[0], Some(1.0));
        assert!((vectors[1].unwrap() - 0.5).abs() < 1e-6);
        // The last the leg took scores as one it did not take: nothing.
        assert_eq!(ranked.len(), 2, "relevance 0 never passes");
    }

    #[test]
    fn the_vector_scale_holds_at_its_edges() {
        assert_eq!(vector_scale(0.3, 0.6, None), 0.5);
        assert_eq!(vector_scale(-0.2, 0.6, None), 0.0);
        assert_eq!(
            vector_scale(0.5, 0.5, Some(0.5)),
            1.0,
            "all as near as the best"
        );
        assert_eq!(
            vector_scale(0.5, 0.5, Some(0.7)),
            1.0,
            "a cutoff above the best is the best"
        );
        assert_eq!(vector_scale(0.3, 0.6, Some(f32::NAN)), 0.5);
        assert_eq!(
            vector_scale(-0.1, -0.1, None),
            0.0,
            "no nearer than unrelated text"
        );
        assert_eq!(
            vector_scale(-0.1, -0.1, Some(-0.3)),
            1.0,
            "the best of what was taken"
        );
        assert!((vector_scale(-0.2, -0.1, Some(-0.3)) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn context_joins_a_lines_own_match_as_an_independent_chance() {
        // No neighbour: the entry's own.
        assert_eq!(with_context(0.6, 0.6, 0.0), 0.6);
        // No match of its own: the context alone.
        assert_eq!(with_context(0.1, 0.0, 0.7), 0.7);
        // Both: 1 − (1 − 0.7)·(1 − 0.4).
        assert!((with_context(0.4, 0.4, 0.7) - 0.82).abs() < 1e-6);
        // The window's lift is context already: only `matched` joins.
        assert!((with_context(0.5, 0.2, 0.7) - 0.76).abs() < 1e-6);
        assert_eq!(with_context(1.0, 1.0, 0.7), 1.0);
        assert_eq!(with_context(0.3, f32::NAN, 0.7), 0.7);
    }

    #[test]
    fn lines_that_match_in_meaning_only_do_not_lift_each_other_past_the_gate() {
        let hybrid = RankSettings {
            hybrid: true,
            vector_weight: 0.3,
            min_score: 0.35,
            ..settings()
        };
        let near = |id, cosine, neighbour: (i64, i32)| Candidate {
            id,
            vector: Some(cosine),
            words: words(&format!("w{id}")),
            neighbours: vec![neighbour],
            ..Default::default()
        };
        // 0.3 and 0.29 alone; joined they would pass 0.35.
        let ranked = rank(vec![near(1, 0.6, (2, -1)), near(2, 0.58, (1, 1))], &hybrid);
        assert!(ranked.is_empty(), "{ranked:?}");
        // The same two lines holding a query word each: a passage, and both pass.
        let mut first = near(1, 0.6, (2, -1));
        first.bm25 = Some(1.0);
        first.coverage = 0.25;
        let mut second = near(2, 0.58, (1, 1));
        second.bm25 = Some(1.0);
        second.coverage = 0.25;
        let best = Candidate {
            vector: Some(0.9),
            ..lexical(3, 10.0, 1.0)
        };
        let ranked = rank(vec![first, second, best], &hybrid);
        assert_eq!(ranked.len(), 3, "{ranked:?}");
        assert!(
            ranked[1..].iter().all(|r| r.by_context),
            "below the gate by themselves"
        );
    }

    #[test]
    fn a_line_beside_a_match_outranks_an_equal_line_alone() {
        // The reply's own 0.675 beats its share of the question (0.7 × 0.8):
        // the better of the two alone would tie it with the lone line, and
        // a tie goes to the lower id (the lone line).
        let question = lexical(3, 8.0, 0.6);
        let mut reply = lexical(2, 6.0, 0.6);
        reply.neighbours = vec![(3, 1)];
        let alone = lexical(1, 6.0, 0.6);
        let ranked = rank(vec![alone, reply, question], &settings());
        let ids: Vec<i64> = ranked.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![2, 3, 1]);
        // 1 − (1 − 0.675)·(1 − 0.56)
        assert!((ranked[0].parts.relevance - 0.857).abs() < 1e-6);
        assert!((ranked[2].parts.relevance - 0.675).abs() < 1e-6);
        assert!(!ranked[0].by_context, "it matched by itself");
    }

    #[test]
    fn a_replaced_note_hands_on_its_relevance_and_ranks_below_its_replacement() {
        let mut s = settings();
        s.min_score = 0.35;
        // The old note matches the query well; the note replacing it (by
        // key) shares none of its words.
        let mut old = lexical(1, 10.0, 1.0);
        old.age_days = Some(40.0);
        old.replaced_by = Some(superseded::Replaced {
            by: 2,
            hands_on: true,
        });
        let replacement = Candidate {
            id: 2,
            age_days: Some(3.0),
            words: words("w2"),
            ..Default::default()
        };
        let other = lexical(3, 4.0, 0.5);
        let ranked = rank(vec![old.clone(), replacement.clone(), other.clone()], &s);
        let ids: Vec<i64> = ranked.iter().map(|r| r.id).collect();
        // The replacement takes the old note's place (0.397, 40 days of
        // decay), not its own recency's: below the fresher other entry.
        assert_eq!(ids, [3, 2, 1]);
        let (new, replaced) = (&ranked[1], &ranked[2]);
        let old_score = recency_multiplier(Some(40.0), 30.0, 0.0);
        assert!((new.score - old_score).abs() < 1e-6, "{}", new.score);
        assert_eq!(new.parts.relevance, 1.0);
        assert_eq!(new.own_relevance, 1.0);
        assert!(!new.by_context, "an answer of its own, not context");
        assert!(replaced.score <= new.score * REPLACED_SHARE + 1e-6);
        // Without the key the replacement is not found at all.
        old.replaced_by = None;
        let ids: Vec<i64> = rank(vec![old, replacement, other], &s)
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [3, 1]);
    }

    #[test]
    fn an_outside_note_is_demoted_by_its_replacement_but_lifts_nothing() {
        let mut s = settings();
        s.min_score = 0.3;
        // A web page's note (bait words) replaced by the owner's later one.
        let mut page = lexical(1, 10.0, 1.0);
        page.replaced_by = Some(superseded::Replaced {
            by: 2,
            hands_on: false,
        });
        let owners = Candidate {
            id: 2,
            words: words("w2"),
            ..Default::default()
        };
        let ranked = rank(vec![page, owners], &s);
        assert_eq!(ranked.len(), 1, "the owner's note is not pulled in");
        assert_eq!(ranked[0].id, 1);
        assert!((ranked[0].score - REPLACED_SHARE).abs() < 1e-6);
    }

    #[test]
    fn a_replaced_note_below_the_gate_hands_on_nothing() {
        let s = settings();
        let mut weak = lexical(1, 1.0, 0.2);
        weak.replaced_by = Some(superseded::Replaced {
            by: 2,
            hands_on: true,
        });
        let strong = lexical(3, 10.0, 1.0);
        let replacement = Candidate {
            id: 2,
            words: words("w2"),
            ..Default::default()
        };
        let ids: Vec<i64> = rank(vec![weak, strong, replacement], &s)
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [3]);
    }

    #[test]
    fn a_replacement_takes_the_best_of_several_and_context_stays_context() {
        let mut s = settings();
        s.min_score = 0.3;
        let mut first = lexical(1, 10.0, 1.0);
        first.age_days = Some(90.0);
        first.replaced_by = Some(superseded::Replaced {
            by: 3,
            hands_on: true,
        });
        let mut second = lexical(2, 6.0, 1.0);
        second.age_days = Some(10.0);
        second.replaced_by = Some(superseded::Replaced {
            by: 3,
            hands_on: true,
        });
        let replacement = Candidate {
            id: 3,
            age_days: Some(1.0),
            words: words("w3"),
            ..Default::default()
        };
        let ranked = rank(vec![first, second, replacement], &s);
        assert_eq!(ranked[0].id, 3);
        // second: 0.8 relevance × 0.794 recency beats first's 1.0 × 0.125.
        let second_score = 0.8 * recency_multiplier(Some(10.0), 30.0, 0.0);
        assert!(
            (ranked[0].score - second_score).abs() < 1e-5,
            "{}",
            ranked[0].score
        );
        assert_eq!(ranked[0].parts.relevance, 1.0, "the best relevance");
        assert!(!ranked[0].by_context);

        // A keyed line that only sat next to a match: its replacement is
        // found, but as context, not a recall.
        let matched = lexical(10, 10.0, 1.0);
        let beside = Candidate {
            id: 11,
            words: words("w11"),
            neighbours: vec![(10, 1)],
            replaced_by: Some(superseded::Replaced {
                by: 12,
                hands_on: true,
            }),
            ..Default::default()
        };
        let replacement = Candidate {
            id: 12,
            words: words("w12"),
            ..Default::default()
        };
        let ranked = rank(vec![matched, beside, replacement], &s);
        let r = ranked.iter().find(|r| r.id == 12).expect("found");
        assert!(r.by_context);
        assert_eq!(r.own_relevance, 0.0);
    }

    #[test]
    fn a_replacement_that_matches_better_by_itself_keeps_its_own_place() {
        let mut s = settings();
        s.min_score = 0.0;
        let mut old = lexical(1, 3.0, 0.5);
        old.age_days = Some(60.0);
        old.replaced_by = Some(superseded::Replaced {
            by: 2,
            hands_on: true,
        });
        let mut replacement = lexical(2, 10.0, 1.0);
        replacement.age_days = Some(2.0);
        let ranked = rank(vec![old, replacement], &s);
        assert_eq!(ranked[0].id, 2);
        let own = recency_multiplier(Some(2.0), 30.0, 0.0);
        assert!((ranked[0].score - own).abs() < 1e-6);
        assert_eq!(ranked[0].parts.relevance, 1.0);
    }

    #[test]
    fn a_replaced_note_stays_below_even_when_its_replacement_ranks_lower_by_itself() {
        let mut s = settings();
        s.min_score = 0.0;
        // The replacement is older in file date (written into an older
        // note) and less relevant: the key still decides.
        let mut old = lexical(1, 10.0, 1.0);
        old.age_days = Some(1.0);
        old.replaced_by = Some(superseded::Replaced {
            by: 2,
            hands_on: true,
        });
        let mut replacement = lexical(2, 2.0, 0.2);
        replacement.age_days = Some(30.0);
        replacement.importance = Some(1);
        let ranked = rank(vec![old, replacement], &s);
        assert_eq!(ranked[0].id, 2);
        assert!(ranked[1].score <= ranked[0].score * REPLACED_SHARE + 1e-6);
    }

    #[test]
    fn importance_spans_the_reference_range() {
        assert_eq!(importance_multiplier(None), 1.0);
        assert!((importance_multiplier(Some(1)) - 0.80).abs() < 1e-6);
        assert!((importance_multiplier(Some(5)) - 1.00).abs() < 1e-6);
        assert!((importance_multiplier(Some(10)) - 1.25).abs() < 1e-6);
        assert_eq!(importance_multiplier(Some(11)), 1.0);
    }

    #[test]
    fn recency_halves_every_half_life_and_spares_evergreen() {
        assert_eq!(recency_multiplier(None, 30.0, 0.0), 1.0);
        assert!((recency_multiplier(Some(30.0), 30.0, 0.0) - 0.5).abs() < 1e-6);
        assert!((recency_multiplier(Some(60.0), 30.0, 0.0) - 0.25).abs() < 1e-6);
        assert_eq!(recency_multiplier(Some(-3.0), 30.0, 0.0), 1.0);
        assert_eq!(recency_multiplier(Some(300.0), 0.0, 0.0), 1.0);
    }

    #[test]
    fn the_floor_is_never_decayed_and_the_rest_halves() {
        assert_eq!(recency_multiplier(Some(0.0), 30.0, 0.5), 1.0);
        assert!((recency_multiplier(Some(30.0), 30.0, 0.5) - 0.75).abs() < 1e-6);
        assert!((recency_multiplier(Some(60.0), 30.0, 0.5) - 0.625).abs() < 1e-6);
        let year = recency_multiplier(Some(365.0), 30.0, 0.5);
        assert!(year > 0.5 && year < 0.5002);
        // Still newer-first among old entries (until the decaying part
        // rounds away in f32, after about two years).
        assert!(recency_multiplier(Some(200.0), 30.0, 0.5) > year);
        assert_eq!(recency_multiplier(Some(30.0), 30.0, 1.0), 1.0);
        assert_eq!(recency_multiplier(None, 30.0, 0.5), 1.0);
        assert_eq!(recency_multiplier(Some(90.0), 0.0, 0.5), 1.0);
        // Out of range is clamped; a floor that is not a number is none.
        assert!((recency_multiplier(Some(30.0), 30.0, -1.0) - 0.5).abs() < 1e-6);
        assert_eq!(recency_multiplier(Some(30.0), 30.0, 2.0), 1.0);
        assert!((recency_multiplier(Some(30.0), 30.0, f32::NAN) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn with_a_floor_an_old_clear_answer_outranks_weak_recent_entries() {
        let mut s = settings();
        s.recency_floor = 0.5;
        s.min_score = 0.0;
        let mut old_answer = lexical(1, 10.0, 1.0);
        old_answer.age_days = Some(300.0);
        let mut recent_mention = lexical(2, 3.0, 0.5);
        recent_mention.age_days = Some(2.0);
        let mut newer_equal = lexical(3, 10.0, 1.0);
        newer_equal.age_days = Some(100.0);
        let ids: Vec<i64> = rank(vec![old_answer.clone(), recent_mention.clone()], &s)
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [1, 2]);
        // Without the floor the same recent mention buries it.
        s.recency_floor = 0.0;
        let ids: Vec<i64> = rank(vec![old_answer.clone(), recent_mention], &s)
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [2, 1]);
        // An equally relevant newer entry still comes first.
        s.recency_floor = 0.5;
        let ids: Vec<i64> = rank(vec![old_answer, newer_equal], &s)
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [3, 1]);
    }

    #[test]
    fn min_score_gates_relevance_not_recency() {
        let mut old = lexical(1, 10.0, 1.0);
        old.age_days = Some(365.0);
        let weak = lexical(2, 1.0, 0.2);
        let ranked = rank(vec![old, weak], &settings());
        assert_eq!(
            ranked.len(),
            1,
            "the weak match is gated out, the old strong one stays"
        );
        assert_eq!(ranked[0].id, 1);
        assert!(ranked[0].score < 0.01);
    }

    #[test]
    fn decay_orders_equal_relevance_by_age() {
        let mut older = lexical(1, 5.0, 1.0);
        older.age_days = Some(40.0);
        let mut newer = lexical(2, 5.0, 1.0);
        newer.age_days = Some(1.0);
        let ids: Vec<i64> = rank(vec![older, newer], &settings())
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [2, 1]);
    }

    #[test]
    fn outside_content_is_never_ranked_up_by_a_project_key() {
        let active = vec!["github.com/a/api".to_string()];
        let ours = vec!["github.com/a/api".to_string()];
        let theirs = vec!["github.com/b/web".to_string()];
        assert_eq!(
            project_multiplier_for(&ours, &active, true),
            ACTIVE_PROJECT_BOOST
        );
        assert_eq!(project_multiplier_for(&ours, &active, false), 1.0);
        assert_eq!(
            project_multiplier_for(&theirs, &active, false),
            OTHER_PROJECT_DEMOTION
        );
    }

    #[test]
    fn projects_boost_demote_or_stay_neutral() {
        let active = vec!["github.com/a/api".to_string()];
        assert_eq!(project_multiplier(&[], &active), 1.0);
        assert_eq!(
            project_multiplier(&["github.com/a/api".into()], &active),
            ACTIVE_PROJECT_BOOST
        );
        assert_eq!(
            project_multiplier(&["github.com/b/web".into()], &active),
            OTHER_PROJECT_DEMOTION
        );
        assert_eq!(
            project_multiplier(&["github.com/b/web".into()], &[]),
            OTHER_PROJECT_DEMOTION
        );
        let mut ours = lexical(1, 5.0, 1.0);
        ours.project = ACTIVE_PROJECT_BOOST;
        let mut theirs = lexical(2, 5.0, 1.0);
        theirs.project = OTHER_PROJECT_DEMOTION;
        let ids: Vec<i64> = rank(vec![theirs, ours], &settings())
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [1, 2]);
    }

    #[test]
    fn importance_breaks_ties() {
        let mut low = lexical(1, 5.0, 1.0);
        low.importance = Some(2);
        let mut high = lexical(2, 5.0, 1.0);
        high.importance = Some(9);
        let ids: Vec<i64> = rank(vec![low, high], &settings())
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [2, 1]);
    }

    #[test]
    fn hybrid_mixes_vector_and_text() {
        let mut s = settings();
        s.hybrid = true;
        let semantic = Candidate {
            id: 1,
            vector: Some(0.9),
            words: words("a"),
            ..Default::default()
        };
        let ranked = rank(vec![semantic], &s);
        assert_eq!(ranked.len(), 1);
        // The best cosine scales to 1: 0.7 of it, no text.
        assert!((ranked[0].parts.relevance - 0.7).abs() < 1e-5);
    }

    #[test]
    fn window_context_lifts_but_never_exceeds_one() {
        let mut with_context = lexical(1, 5.0, 0.5);
        with_context.window_bm25 = Some(8.0);
        let without = lexical(2, 5.0, 0.5);
        let ranked = rank(vec![with_context, without], &settings());
        assert_eq!(ranked[0].id, 1);
        assert!(ranked[0].parts.text <= 1.0 && ranked[0].parts.text > ranked[1].parts.text);
    }

    #[test]
    fn mmr_demotes_near_duplicates() {
        let mut s = settings();
        s.mmr_lambda = 0.7;
        let mut a = lexical(1, 10.0, 1.0);
        a.words = words("gateway loopback port");
        let mut b = lexical(2, 9.9, 1.0);
        b.words = words("gateway loopback port");
        let mut c = lexical(3, 9.0, 1.0);
        c.words = words("admin ui password");
        let ids: Vec<i64> = rank(vec![a, b, c], &s).iter().map(|r| r.id).collect();
        assert_eq!(ids, [1, 3, 2]);
    }

    #[test]
    fn result_limit_and_deterministic_ties() {
        let candidates: Vec<Candidate> = (0..10).map(|i| lexical(10 - i, 5.0, 1.0)).collect();
        let mut s = settings();
        s.max_results = 3;
        let ids: Vec<i64> = rank(candidates, &s).iter().map(|r| r.id).collect();
        assert_eq!(ids, [1, 2, 3]);
    }
}
