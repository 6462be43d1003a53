//! Recall signals and the deep phase's deterministic gate. Pure functions.
//!
//! Each part of the score is in [0, 1] and chosen so that the gate's own
//! minimums, met with good relevance, can pass the score threshold: a fact
//! recalled three times over two queries on two days, recently, is exactly
//! the case dreaming exists to promote.

use crate::text::words::{is_stop_word, query_terms, stem, tokens};

/// Reference weights (OpenClaw's deep phase).
pub const WEIGHT_RELEVANCE: f32 = 0.30;
pub const WEIGHT_FREQUENCY: f32 = 0.24;
pub const WEIGHT_DIVERSITY: f32 = 0.15;
pub const WEIGHT_RECENCY: f32 = 0.15;
pub const WEIGHT_CONSOLIDATION: f32 = 0.10;
pub const WEIGHT_RICHNESS: f32 = 0.06;

/// Recalls at which frequency saturates.
const FREQUENCY_SATURATION: f32 = 5.0;
/// Distinct queries at which diversity saturates.
const DIVERSITY_SATURATION: f32 = 3.0;
/// Distinct days at which consolidation saturates.
const CONSOLIDATION_SATURATION: f32 = 3.0;
/// Concept tags at which richness saturates.
const RICHNESS_SATURATION: f32 = 6.0;
/// Concept tags kept per entry.
pub const MAX_CONCEPT_TAGS: usize = 8;

/// The deep phase's gate and the sweep's limits (the WIT `dream-gates`).
/// Defaults and ranges: `logic::config` (`Gates::reference` and `validate`
/// are there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gates {
    pub min_score: f32,
    pub min_recalls: u32,
    pub min_unique_queries: u32,
    pub recency_half_life_days: f32,
    pub max_promotions: u32,
    pub light_lookback_days: u32,
    pub rem_lookback_days: u32,
    pub model_timeout_ms: u32,
}

/// What was recorded about one candidate, merged over its near-duplicates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observed {
    pub recalls: u32,
    pub relevance_sum: f64,
    pub relevance_count: u32,
    pub last_recalled_at: i64,
    pub query_keys: Vec<String>,
    /// `YYYY-MM-DD`, sorted, distinct.
    pub days: Vec<String>,
}

impl Observed {
    /// Adds a near-duplicate's signals to this one.
    pub fn absorb(&mut self, other: &Observed) {
        self.recalls += other.recalls;
        self.relevance_sum += other.relevance_sum;
        self.relevance_count += other.relevance_count;
        self.last_recalled_at = self.last_recalled_at.max(other.last_recalled_at);
        for key in &other.query_keys {
            if !self.query_keys.contains(key) {
                self.query_keys.push(key.clone());
            }
        }
        self.days.extend(other.days.iter().cloned());
        self.days.sort();
        self.days.dedup();
    }
}

/// The score and its parts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scored {
    pub recalls: u32,
    pub distinct_queries: u32,
    pub days: u32,
    pub relevance: f32,
    pub last_recalled_ms: i64,
    pub frequency: f32,
    pub diversity: f32,
    pub recency: f32,
    pub consolidation: f32,
    pub richness: f32,
    pub score: f32,
}

pub fn score(observed: &Observed, concept_tags: usize, now_ms: i64, half_life_days: f32) -> Scored {
    let relevance = if observed.relevance_count == 0 {
        0.0
    } else {
        (observed.relevance_sum / observed.relevance_count as f64).clamp(0.0, 1.0) as f32
    };
    let distinct = distinct_queries(&observed.query_keys) as u32;
    let days = observed.days.len() as u32;
    let frequency = saturating_log(observed.recalls as f32, FREQUENCY_SATURATION);
    let diversity = (distinct as f32 / DIVERSITY_SATURATION).min(1.0);
    let age_days = ((now_ms - observed.last_recalled_at).max(0) as f64 / 86_400_000.0) as f32;
    let recency = 0.5f32.powf(age_days / half_life_days);
    let consolidation = (days as f32 / CONSOLIDATION_SATURATION).min(1.0);
    let richness = (concept_tags as f32 / RICHNESS_SATURATION).min(1.0);
    let score = WEIGHT_RELEVANCE * relevance
        + WEIGHT_FREQUENCY * frequency
        + WEIGHT_DIVERSITY * diversity
        + WEIGHT_RECENCY * recency
        + WEIGHT_CONSOLIDATION * consolidation
        + WEIGHT_RICHNESS * richness;
    Scored {
        recalls: observed.recalls,
        distinct_queries: distinct,
        days,
        relevance,
        last_recalled_ms: observed.last_recalled_at,
        frequency,
        diversity,
        recency,
        consolidation,
        richness,
        score,
    }
}

/// ln(1+n) / ln(1+saturation), capped at 1.
fn saturating_log(n: f32, saturation: f32) -> f32 {
    (n.ln_1p() / saturation.ln_1p()).clamp(0.0, 1.0)
}

/// One threshold of the deterministic gate, checked against a candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateCheck {
    pub gate: Gate,
    pub value: f32,
    pub threshold: f32,
    pub passed: bool,
}

/// The deep gate's thresholds, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Recalls,
    DistinctQueries,
    Score,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Recalls => "recalls",
            Gate::DistinctQueries => "distinct queries",
            Gate::Score => "score",
        }
    }
}

impl GateCheck {
    /// The failed check in words: "2 recalls < 3", "score 0.612 < 0.75".
    fn describe(&self) -> String {
        match self.gate {
            Gate::Recalls | Gate::DistinctQueries => format!(
                "{} {} < {}",
                self.value as u32,
                self.gate.as_str(),
                self.threshold as u32
            ),
            Gate::Score => format!("score {:.3} < {:.2}", self.value, self.threshold),
        }
    }
}

/// Every threshold of the gate, passed or failed.
pub fn gate_checks(s: &Scored, gates: &Gates) -> [GateCheck; 3] {
    let check = |gate, value: f32, threshold: f32| GateCheck {
        gate,
        value,
        threshold,
        passed: value >= threshold,
    };
    [
        check(Gate::Recalls, s.recalls as f32, gates.min_recalls as f32),
        check(
            Gate::DistinctQueries,
            s.distinct_queries as f32,
            gates.min_unique_queries as f32,
        ),
        check(Gate::Score, s.score, gates.min_score),
    ]
}

/// The thresholds a scored candidate fails, in words; empty when it passes.
pub fn failed_gates(s: &Scored, gates: &Gates) -> Vec<String> {
    gate_checks(s, gates)
        .iter()
        .filter(|c| !c.passed)
        .map(GateCheck::describe)
        .collect()
}

/// The normalised form of a query: its content words, stemmed, lowercased,
/// sorted and deduplicated. Case, punctuation, word order, plurals and stop
/// words do not make a query distinct. `None` for a query without words.
pub fn query_key(query: &str) -> Option<String> {
    let mut words: Vec<String> = query_terms(query, 32).iter().map(|t| stem(t)).collect();
    words.sort();
    words.dedup();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Counts distinct queries, treating keys that differ only by one-letter
/// typos in their longer words as one query.
pub fn distinct_queries(keys: &[String]) -> usize {
    let mut representatives: Vec<&str> = Vec::new();
    for key in keys {
        if !representatives.iter().any(|r| same_query(r, key)) {
            representatives.push(key);
        }
    }
    representatives.len()
}

/// Two normalised keys name the same query when their words pair up, each
/// pair equal or (for words of four letters or more) one edit apart.
pub fn same_query(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let left: Vec<&str> = a.split(' ').collect();
    let mut right: Vec<Option<&str>> = b.split(' ').map(Some).collect();
    if left.len() != right.len() {
        return false;
    }
    'words: for word in left {
        for slot in right.iter_mut() {
            if let Some(other) = *slot {
                if word == other || (word.chars().count() >= 4 && within_one_edit(word, other)) {
                    *slot = None;
                    continue 'words;
                }
            }
        }
        return false;
    }
    true
}

/// Damerau–Levenshtein distance ≤ 1 (a swap of neighbours counts as one).
fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if short.len() == long.len() {
        if prefix == short.len() {
            return true;
        }
        // One substitution, or one transposition of neighbours.
        let substitution = short[prefix + 1..] == long[prefix + 1..];
        let swap = prefix + 1 < short.len()
            && short[prefix] == long[prefix + 1]
            && short[prefix + 1] == long[prefix]
            && short[prefix + 2..] == long[prefix + 2..];
        substitution || swap
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// The concept tags of an entry: its distinct content words of three
/// characters or more (two for scripts without spaces), numbers and dates
/// left out, distinct by stem, as first written, at most eight.
pub fn concept_tags(text: &str) -> Vec<String> {
    let mut stems: Vec<String> = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    for token in tokens(text) {
        let chars = token.chars().count();
        let min = if token.is_ascii() { 3 } else { 2 };
        if chars < min || chars > 32 || is_stop_word(&token) {
            continue;
        }
        if token.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let stemmed = stem(&token);
        if !stems.contains(&stemmed) {
            stems.push(stemmed);
            tags.push(token);
        }
        if tags.len() == MAX_CONCEPT_TAGS {
            break;
        }
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn observed(
        recalls: u32,
        relevance: f64,
        queries: &[&str],
        days: &[&str],
        last: i64,
    ) -> Observed {
        Observed {
            recalls,
            relevance_sum: relevance * recalls as f64,
            relevance_count: recalls,
            last_recalled_at: last,
            query_keys: queries.iter().map(|q| query_key(q).unwrap()).collect(),
            days: days.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn the_minimum_case_with_good_relevance_passes() {
        let o = observed(
            3,
            0.8,
            &["gateway port", "which port does the gateway use"],
            &["2026-11-30", "2026-12-01"],
            10 * DAY,
        );
        // "gateway port" and "port gateway use" are distinct queries.
        let s = score(&o, 5, 10 * DAY + DAY / 2, 14.0);
        assert_eq!(s.distinct_queries, 2);
        assert!(s.score >= 0.75, "{s:?}");
        assert!(failed_gates(&s, &Gates::reference()).is_empty());
    }

    #[test]
    fn weak_relevance_or_old_recalls_fail_the_score() {
        let o = observed(
            3,
            0.3,
            &["a gateway", "b port"],
            &["2026-11-30", "2026-12-01"],
            0,
        );
        let s = score(&o, 5, 0, 14.0);
        assert!(s.score < 0.75);
        let o = observed(
            3,
            0.8,
            &["gateway port", "port number"],
            &["2026-11-30", "2026-12-01"],
            0,
        );
        let old = score(&o, 5, 60 * DAY, 14.0);
        assert!(old.recency < 0.06 && old.score < 0.75, "{old:?}");
    }

    #[test]
    fn count_gates_are_reported() {
        let o = observed(2, 1.0, &["gateway"], &["2026-12-01"], 0);
        let failed = failed_gates(&score(&o, 8, 0, 14.0), &Gates::reference());
        assert_eq!(failed[0], "2 recalls < 3");
        assert_eq!(failed[1], "1 distinct queries < 2");
    }

    #[test]
    fn every_gate_is_checked_passed_or_failed() {
        let o = observed(3, 1.0, &["gateway"], &["2026-12-01"], 0);
        let checks = gate_checks(&score(&o, 8, 0, 14.0), &Gates::reference());
        let shown: Vec<(&str, f32, f32, bool)> = checks
            .iter()
            .map(|c| (c.gate.as_str(), c.value, c.threshold, c.passed))
            .collect();
        assert_eq!(shown[0], ("recalls", 3.0, 3.0, true));
        assert_eq!(shown[1], ("distinct queries", 1.0, 2.0, false));
        assert_eq!((shown[2].0, shown[2].2), ("score", 0.75));
    }

    #[test]
    fn query_variants_count_once() {
        let keys: Vec<String> = [
            "Gateway port?",
            "gateway ports",
            "PORT of the gateway",
            "gatway port",
            "gateway prot",
            "database password",
        ]
        .iter()
        .map(|q| query_key(q).unwrap())
        .collect();
        assert_eq!(distinct_queries(&keys), 2);
        assert!(
            query_key("the of and").is_some(),
            "stop words alone still make a key"
        );
        assert!(query_key("  ?! ").is_none());
        assert!(!same_query("cat", "car"), "short words must match exactly");
    }

    #[test]
    fn frequency_and_consolidation_saturate() {
        let many = observed(
            50,
            1.0,
            &["a1 x", "b2 y", "c3 z"],
            &["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"],
            0,
        );
        let s = score(&many, 9, 0, 14.0);
        assert_eq!(
            (
                s.frequency,
                s.diversity,
                s.consolidation,
                s.richness,
                s.recency
            ),
            (1.0, 1.0, 1.0, 1.0, 1.0)
        );
        assert!((s.score - 1.0).abs() < 1e-6);
    }

    #[test]
    fn concept_tags_skip_numbers_and_stop_words() {
        assert_eq!(
            concept_tags("The gateway listens on port 8443 and the gateways restart"),
            vec!["gateway", "listens", "port", "restart"]
        );
    }

    #[test]
    fn one_edit_apart() {
        assert!(within_one_edit("gateway", "gatway"));
        assert!(within_one_edit("gateway", "gaetway"));
        assert!(within_one_edit("gateway", "gateways"));
        assert!(within_one_edit("gateway", "gatewxy"));
        assert!(!within_one_edit("gateway", "getwxy"));
    }

    #[test]
    fn absorbing_a_duplicate_adds_its_signals() {
        let mut a = observed(2, 0.5, &["gateway port"], &["2026-12-01"], 5);
        a.absorb(&observed(
            1,
            1.0,
            &["port number"],
            &["2026-12-01", "2026-12-02"],
            9,
        ));
        assert_eq!(
            (a.recalls, a.relevance_count, a.last_recalled_at),
            (3, 3, 9)
        );
        assert_eq!(a.days, vec!["2026-12-01", "2026-12-02"]);
        assert_eq!(a.query_keys.len(), 2);
    }
}
