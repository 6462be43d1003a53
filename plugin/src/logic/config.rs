//! The component's configuration: one table of every setting it reads — the
//! key (OpenClaw's plugin-config shape, dotted camelCase), the values it
//! takes, its default and what it does — and what hosts do with it: `resolve`
//! a host's values (defaults filled in, every value checked) and `describe`
//! the table (for a CLI's `--help`, the docs and a host's own schema).
//!
//! No default or range is written anywhere else. `Settings::reference`,
//! `Gates::reference` and their `validate` are implemented here, over the
//! table, so the records a host passes to `open` or `dream.run` are checked
//! against the same ranges as `resolve` checks. (The flush defaults are the
//! constants of `logic::write::flush`, which the operation applies to a request that
//! gives none; the table names them.)

use crate::contract::api::{
    Budgets, ChunkSettings, FtsTokenizer, SearchSettings, Settings, MAX_RESULTS_LIMIT,
};
use crate::contract::error::MemoryError;
use crate::logic::dream::signals::Gates;
use crate::logic::write::flush;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// One setting of the table.
pub struct Setting {
    /// Dotted camelCase, as in OpenClaw's plugin configuration
    /// (`search.maxResults`).
    pub key: &'static str,
    pub kind: Kind,
    /// What it does, in one line.
    pub doc: &'static str,
    /// Where its value lives in a resolved configuration.
    slot: fn(&mut Resolved) -> &mut dyn Field,
}

/// The values a setting takes, and its default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max` (no `max`: up to `u32::MAX`).
    Integer {
        default: u32,
        min: u32,
        max: Option<u32>,
    },
    /// A finite number (held as an `f32`) at least `min` — greater than
    /// `min` when `min_exclusive` — and at most `max`.
    Number {
        default: f64,
        min: f64,
        min_exclusive: bool,
        max: Option<f64>,
    },
    /// One of `values`.
    Choice {
        default: &'static str,
        values: &'static [&'static str],
    },
}

/// A setting's value (a number is always one an `f32` holds exactly).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Integer(u32),
    Number(f64),
    Choice(&'static str),
}

/// What the pre-compaction flush uses when a request gives no value of its
/// own (see the WIT `flush-request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushSettings {
    pub soft_threshold_tokens: u32,
    pub timeout_ms: u32,
}

/// A configuration with every value filled in and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// What `open` takes.
    pub settings: Settings,
    /// What `dream.run` takes.
    pub gates: Gates,
    /// What a host passes with each `write.flush`.
    pub flush: FlushSettings,
}

/// Every setting the component reads, by section.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "search.maxResults",
        kind: Kind::Integer { default: 6, min: 1, max: Some(MAX_RESULTS_LIMIT) },
        doc: "Hits a search returns when the request does not say.",
        slot: |r| &mut r.settings.search.max_results,
    },
    Setting {
        key: "search.minScore",
        kind: Kind::Number { default: 0.35, min: 0.0, min_exclusive: false, max: Some(1.0) },
        doc: "Hits whose relevance is below this are dropped (before recency and importance, so an old but clearly relevant entry stays reachable).",
        slot: |r| &mut r.settings.search.min_score,
    },
    Setting {
        key: "search.candidatesPerLeg",
        kind: Kind::Integer { default: 24, min: 1, max: Some(1_000) },
        doc: "Candidates taken from each retrieval leg (raised to four times the requested hits when that is larger).",
        slot: |r| &mut r.settings.search.candidates_per_leg,
    },
    Setting {
        key: "search.vectorWeight",
        kind: Kind::Number { default: 0.3, min: 0.0, min_exclusive: false, max: Some(1.0) },
        doc: "Weight of the vector leg in the hybrid score (the cosine placed on 0..1 between where the vector leg stopped taking entries, or 0, and the best candidate's); the text leg gets the rest. Unused without an embedder.",
        slot: |r| &mut r.settings.search.vector_weight,
    },
    Setting {
        key: "search.recencyHalfLifeDays",
        kind: Kind::Number { default: 30.0, min: 0.0, min_exclusive: false, max: None },
        doc: "Half-life in days of the decaying part of a daily note's recency (see search.recencyFloor); 0 switches decay off (time-neutral ranking).",
        slot: |r| &mut r.settings.search.recency_half_life_days,
    },
    Setting {
        key: "search.recencyFloor",
        kind: Kind::Number { default: 0.7, min: 0.0, min_exclusive: false, max: Some(1.0) },
        doc: "Share of a daily note's score recency never takes away: recency = floor + (1 − floor) × 0.5^(age ÷ half-life), so near equals still rank newest first while an old note that clearly answers stays above weak recent ones; 0 is pure decay.",
        slot: |r| &mut r.settings.search.recency_floor,
    },
    Setting {
        key: "search.mmrLambda",
        kind: Kind::Number { default: 0.7, min: 0.0, min_exclusive: false, max: Some(1.0) },
        doc: "Maximal-marginal-relevance trade-off between relevance and diversity; 1 switches MMR off.",
        slot: |r| &mut r.settings.search.mmr_lambda,
    },
    Setting {
        key: "search.tokenizer",
        kind: Kind::Choice { default: "unicode61", values: FtsTokenizer::NAMES },
        doc: "Full-text tokenizer: unicode61 (words, Porter stemming) or trigram (substrings, for scripts without spaces); changing it rebuilds the index.",
        slot: |r| &mut r.settings.fts_tokenizer,
    },
    Setting {
        key: "search.chunking.tokens",
        kind: Kind::Integer { default: 400, min: 16, max: Some(8_192) },
        doc: "Size of a daily note's context windows, in approximate tokens.",
        slot: |r| &mut r.settings.chunking.tokens,
    },
    Setting {
        key: "search.chunking.overlap",
        kind: Kind::Integer { default: 80, min: 0, max: Some(8_191) },
        doc: "Overlap of consecutive context windows, in approximate tokens; less than search.chunking.tokens.",
        slot: |r| &mut r.settings.chunking.overlap,
    },
    Setting {
        key: "bootstrap.maxFileChars",
        kind: Kind::Integer { default: 20_000, min: 1, max: None },
        doc: "Characters of each curated file a session starts with (more is cut, and marked).",
        slot: |r| &mut r.settings.bootstrap.max_file_chars,
    },
    Setting {
        key: "bootstrap.maxUserFileChars",
        kind: Kind::Integer { default: 4_000, min: 1, max: None },
        doc: "Characters of USER.md a session starts with.",
        slot: |r| &mut r.settings.bootstrap.max_user_file_chars,
    },
    Setting {
        key: "bootstrap.maxTotalChars",
        kind: Kind::Integer { default: 60_000, min: 1, max: None },
        doc: "Characters of all curated files together.",
        slot: |r| &mut r.settings.bootstrap.max_total_chars,
    },
    Setting {
        key: "dreaming.minScore",
        kind: Kind::Number { default: 0.75, min: 0.0, min_exclusive: false, max: Some(1.0) },
        doc: "Deep phase: the weighted score a candidate needs to be promoted.",
        slot: |r| &mut r.gates.min_score,
    },
    Setting {
        key: "dreaming.minRecallCount",
        kind: Kind::Integer { default: 3, min: 0, max: None },
        doc: "Deep phase: the recalls a candidate needs.",
        slot: |r| &mut r.gates.min_recalls,
    },
    Setting {
        key: "dreaming.minUniqueQueries",
        kind: Kind::Integer { default: 2, min: 0, max: None },
        doc: "Deep phase: the distinct queries a candidate needs.",
        slot: |r| &mut r.gates.min_unique_queries,
    },
    Setting {
        key: "dreaming.recencyHalfLifeDays",
        kind: Kind::Number { default: 14.0, min: 0.0, min_exclusive: true, max: None },
        doc: "Half-life of the recency signal, in days since the last recall.",
        slot: |r| &mut r.gates.recency_half_life_days,
    },
    Setting {
        key: "dreaming.limit",
        kind: Kind::Integer { default: 10, min: 0, max: Some(100) },
        doc: "Most promotions per sweep.",
        slot: |r| &mut r.gates.max_promotions,
    },
    Setting {
        key: "dreaming.lightLookbackDays",
        kind: Kind::Integer { default: 2, min: 0, max: None },
        doc: "Light phase: recalls of the last this-many days are staged.",
        slot: |r| &mut r.gates.light_lookback_days,
    },
    Setting {
        key: "dreaming.remLookbackDays",
        kind: Kind::Integer { default: 7, min: 0, max: None },
        doc: "REM phase: recalls of the last this-many days are reflected on.",
        slot: |r| &mut r.gates.rem_lookback_days,
    },
    Setting {
        key: "dreaming.modelTimeoutMs",
        kind: Kind::Integer { default: 60_000, min: 1, max: None },
        doc: "Deadline of the sweep's consolidation model turn, in milliseconds.",
        slot: |r| &mut r.gates.model_timeout_ms,
    },
    Setting {
        key: "flush.softThresholdTokens",
        kind: Kind::Integer { default: flush::DEFAULT_SOFT_THRESHOLD_TOKENS, min: 0, max: None },
        doc: "A flush is due once the session reaches its context window − the reserve − this many tokens.",
        slot: |r| &mut r.flush.soft_threshold_tokens,
    },
    Setting {
        key: "flush.timeoutMs",
        kind: Kind::Integer { default: flush::DEFAULT_TIMEOUT_MS, min: 1, max: None },
        doc: "Deadline of the flush's model turn, in milliseconds.",
        slot: |r| &mut r.flush.timeout_ms,
    },
];

/// The table.
pub fn describe() -> &'static [Setting] {
    SETTINGS
}

/// The setting named `key`.
pub fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// Every default, for the workspace at `workspace` (the guest path of the
/// preopened directory).
pub fn defaults(workspace: impl Into<PathBuf>) -> Resolved {
    let mut resolved = blank(workspace.into());
    for s in SETTINGS {
        (s.slot)(&mut resolved).set(s.kind.default());
    }
    resolved
}

/// A host's values over the defaults. `user` is a JSON object of settings,
/// nested by section (`{"search": {"maxResults": 8}}`) or with dotted keys
/// (`{"search.maxResults": 8}`); `null` leaves a setting at its default.
/// Raises `invalid-input`, naming the key, for an unknown key, a key given
/// twice, a value of the wrong type or out of its range, and for
/// `search.chunking.overlap` not below `search.chunking.tokens`.
pub fn resolve(workspace: impl Into<PathBuf>, user: &Json) -> Result<Resolved, MemoryError> {
    let mut given = BTreeMap::new();
    flatten(user, "", &mut given)?;
    let mut resolved = defaults(workspace);
    for (key, json) in given {
        let s = setting(&key).expect("flatten keeps known keys only");
        (s.slot)(&mut resolved).set(s.kind.read(s.key, json)?);
    }
    check_across(&resolved)?;
    Ok(resolved)
}

/// Whether every value of `resolved` is within its range (as `resolve` checks
/// a host's values).
pub fn check(resolved: &Resolved) -> Result<(), MemoryError> {
    let mut copy = resolved.clone();
    for s in SETTINGS {
        let value = (s.slot)(&mut copy).get();
        s.kind.check(s.key, value)?;
    }
    check_across(resolved)
}

/// The rules that involve two settings.
fn check_across(resolved: &Resolved) -> Result<(), MemoryError> {
    let c = &resolved.settings.chunking;
    if c.overlap >= c.tokens {
        return Err(MemoryError::InvalidInput(format!(
            "search.chunking.overlap must be less than search.chunking.tokens ({}), got {}",
            c.tokens, c.overlap
        )));
    }
    Ok(())
}

/// The user's settings by dotted key, known keys only.
fn flatten<'a>(
    json: &'a Json,
    prefix: &str,
    out: &mut BTreeMap<String, &'a Json>,
) -> Result<(), MemoryError> {
    let object = match json {
        Json::Object(object) => object,
        Json::Null if prefix.is_empty() => return Ok(()),
        other => {
            let what = if prefix.is_empty() {
                "the settings".to_string()
            } else {
                format!("{} (a section)", prefix.trim_end_matches('.'))
            };
            return Err(invalid(format!("{what} must be an object, got {other}")));
        }
    };
    for (name, value) in object {
        let key = format!("{prefix}{name}");
        if value.is_null() {
            continue;
        }
        if setting(&key).is_some() {
            if out.insert(key.clone(), value).is_some() {
                return Err(invalid(format!("{key} is given twice")));
            }
        } else if is_section(&key) {
            flatten(value, &format!("{key}."), out)?;
        } else {
            return Err(invalid(format!(
                "unknown setting {key} (the settings are {})",
                SETTINGS
                    .iter()
                    .map(|s| s.key)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// Whether `key` is a section of some setting (`search`, `search.chunking`).
fn is_section(key: &str) -> bool {
    SETTINGS.iter().any(|s| {
        s.key
            .strip_prefix(key)
            .is_some_and(|rest| rest.starts_with('.'))
    })
}

fn invalid(message: String) -> MemoryError {
    MemoryError::InvalidInput(message)
}

impl Kind {
    /// The default, as the component holds it (a number as its `f32`).
    pub fn default(&self) -> Value {
        match *self {
            Kind::Integer { default, .. } => Value::Integer(default),
            Kind::Number { default, .. } => Value::Number(default as f32 as f64),
            Kind::Choice { default, .. } => Value::Choice(default),
        }
    }

    /// The values it takes, in short: `1..=100`, `>= 1`, `> 0`,
    /// `unicode61, trigram`.
    pub fn range(&self) -> String {
        match *self {
            Kind::Integer {
                min,
                max: Some(max),
                ..
            } => format!("{min}..={max}"),
            Kind::Integer { min, max: None, .. } => format!(">= {min}"),
            Kind::Number {
                min,
                min_exclusive,
                max,
                ..
            } => {
                let min = Value::Number(min);
                match (min_exclusive, max.map(Value::Number)) {
                    (false, Some(max)) => format!("{min}..={max}"),
                    (true, Some(max)) => format!("> {min}, <= {max}"),
                    (false, None) => format!(">= {min}"),
                    (true, None) => format!("> {min}"),
                }
            }
            Kind::Choice { values, .. } => values.join(", "),
        }
    }

    /// The values it takes, in words: `within 1..=100`, `at least 1`,
    /// `greater than 0`, `one of unicode61, trigram`.
    fn requirement(&self) -> String {
        match *self {
            Kind::Integer { max: None, min, .. } => format!("at least {min}"),
            Kind::Number {
                min,
                min_exclusive: true,
                max: None,
                ..
            } => {
                format!("greater than {}", Value::Number(min))
            }
            Kind::Number {
                min,
                min_exclusive: false,
                max: None,
                ..
            } => {
                format!("at least {}", Value::Number(min))
            }
            Kind::Choice { .. } => format!("one of {}", self.range()),
            _ => format!("within {}", self.range()),
        }
    }

    /// The type's name in JSON Schema's words (`integer`, `number`, `string`).
    pub fn json_type(&self) -> &'static str {
        match self {
            Kind::Integer { .. } => "integer",
            Kind::Number { .. } => "number",
            Kind::Choice { .. } => "string",
        }
    }

    /// A host's JSON value for the setting `key`, checked.
    fn read(&self, key: &str, json: &Json) -> Result<Value, MemoryError> {
        let value = match self {
            Kind::Integer { .. } => json
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Value::Integer),
            // As an `f32`, the type it is held in: the range is checked on
            // the value the component will use.
            Kind::Number { .. } => json.as_f64().map(|x| Value::Number(x as f32 as f64)),
            Kind::Choice { values, .. } => json
                .as_str()
                .and_then(|s| values.iter().find(|v| **v == s))
                .copied()
                .map(Value::Choice),
        };
        let value = value.ok_or_else(|| {
            invalid(match self {
                Kind::Integer { .. } => format!(
                    "{key} must be an integer {}, got {json}",
                    self.requirement()
                ),
                Kind::Number { .. } => {
                    format!("{key} must be a number {}, got {json}", self.requirement())
                }
                Kind::Choice { .. } => format!("{key} must be {}, got {json}", self.requirement()),
            })
        })?;
        self.check(key, value)?;
        Ok(value)
    }

    /// Whether `value` is within the range.
    fn check(&self, key: &str, value: Value) -> Result<(), MemoryError> {
        let within = match (*self, value) {
            (Kind::Integer { min, max, .. }, Value::Integer(n)) => {
                n >= min && max.is_none_or(|max| n <= max)
            }
            (
                Kind::Number {
                    min,
                    min_exclusive,
                    max,
                    ..
                },
                Value::Number(x),
            ) => {
                x.is_finite()
                    && if min_exclusive { x > min } else { x >= min }
                    && max.is_none_or(|max| x <= max)
            }
            (Kind::Choice { values, .. }, Value::Choice(v)) => values.contains(&v),
            _ => false,
        };
        if within {
            Ok(())
        } else {
            Err(invalid(format!(
                "{key} must be {}, got {value}",
                self.requirement()
            )))
        }
    }
}

impl fmt::Display for Value {
    /// As JSON: numbers as the `f32` they are held in (`0.35`, `30`),
    /// choices quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Integer(n) => write!(f, "{n}"),
            Value::Number(x) => write!(f, "{}", *x as f32),
            Value::Choice(s) => write!(f, "{}", Json::from(*s)),
        }
    }
}

/// A place in a resolved configuration that holds a setting's value.
trait Field {
    fn get(&self) -> Value;
    fn set(&mut self, value: Value);
}

impl Field for u32 {
    fn get(&self) -> Value {
        Value::Integer(*self)
    }
    fn set(&mut self, value: Value) {
        if let Value::Integer(n) = value {
            *self = n;
        }
    }
}

impl Field for usize {
    fn get(&self) -> Value {
        Value::Integer(u32::try_from(*self).unwrap_or(u32::MAX))
    }
    fn set(&mut self, value: Value) {
        if let Value::Integer(n) = value {
            *self = n as usize;
        }
    }
}

impl Field for f32 {
    fn get(&self) -> Value {
        Value::Number(*self as f64)
    }
    fn set(&mut self, value: Value) {
        if let Value::Number(x) = value {
            *self = x as f32;
        }
    }
}

impl Field for FtsTokenizer {
    fn get(&self) -> Value {
        Value::Choice(self.as_str())
    }
    fn set(&mut self, value: Value) {
        if let Some(t) = match value {
            Value::Choice(s) => FtsTokenizer::parse(s),
            _ => None,
        } {
            *self = t;
        }
    }
}

/// A configuration before the table fills it in (every value is set by
/// `defaults`).
fn blank(workspace: PathBuf) -> Resolved {
    Resolved {
        settings: Settings {
            workspace,
            search: SearchSettings {
                max_results: 0,
                min_score: 0.0,
                candidates_per_leg: 0,
                vector_weight: 0.0,
                recency_half_life_days: 0.0,
                recency_floor: 0.0,
                mmr_lambda: 0.0,
            },
            chunking: ChunkSettings {
                tokens: 0,
                overlap: 0,
            },
            fts_tokenizer: FtsTokenizer::Unicode61,
            bootstrap: Budgets {
                max_file_chars: 0,
                max_user_file_chars: 0,
                max_total_chars: 0,
            },
        },
        gates: Gates {
            min_score: 0.0,
            min_recalls: 0,
            min_unique_queries: 0,
            recency_half_life_days: 0.0,
            max_promotions: 0,
            light_lookback_days: 0,
            rem_lookback_days: 0,
            model_timeout_ms: 0,
        },
        flush: FlushSettings {
            soft_threshold_tokens: 0,
            timeout_ms: 0,
        },
    }
}

impl Settings {
    /// The defaults of the table.
    pub fn reference(workspace: impl Into<PathBuf>) -> Settings {
        defaults(workspace).settings
    }

    /// Every value within the table's range (`invalid-input` naming the
    /// setting otherwise).
    pub fn validate(&self) -> Result<(), MemoryError> {
        check(&Resolved {
            settings: self.clone(),
            ..defaults(PathBuf::new())
        })
    }
}

impl Gates {
    /// The defaults of the table.
    pub fn reference() -> Gates {
        defaults(PathBuf::new()).gates
    }

    /// Every gate within the table's range; otherwise why not.
    pub fn validate(&self) -> Result<(), String> {
        check(&Resolved {
            gates: *self,
            ..defaults(PathBuf::new())
        })
        .map_err(|e| match e {
            MemoryError::InvalidInput(message) => message,
            other => other.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_valid_and_every_field_is_set_by_the_table() {
        let d = defaults("/workspace");
        check(&d).unwrap();
        // A field the table forgets keeps its blank value, which is never a
        // default: every value differs from the blank one (the tokenizer
        // aside, whose blank is its default).
        let mut blank = blank("/workspace".into());
        let mut d2 = d.clone();
        for s in SETTINGS {
            let (a, b) = ((s.slot)(&mut blank).get(), (s.slot)(&mut d2).get());
            assert_eq!(b, s.kind.default(), "{}", s.key);
            if !matches!(s.kind, Kind::Choice { .. }) {
                assert_ne!(a, b, "{} has a default equal to the blank value", s.key);
            }
        }
        let text = format!("{d:?}");
        let zero =
            |part: &str| part.trim_end().ends_with(": 0") || part.trim_end().ends_with(": 0.0");
        assert!(
            !text.split([',', '}']).any(zero),
            "a field no setting fills: {text}"
        );
    }

    #[test]
    fn keys_are_unique_dotted_camel_case() {
        let mut seen = std::collections::BTreeSet::new();
        for s in SETTINGS {
            assert!(seen.insert(s.key), "{} twice", s.key);
            assert!(
                s.key.split('.').count() >= 2
                    && s.key.split('.').all(|p| p
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_lowercase())
                        && p.chars().all(|c| c.is_ascii_alphanumeric())),
                "{}",
                s.key
            );
            assert!(!s.doc.is_empty() && s.doc.ends_with('.'), "{}", s.key);
            assert!(s.kind.check(s.key, s.kind.default()).is_ok(), "{}", s.key);
        }
    }

    #[test]
    fn the_reference_values_are_openclaw_s() {
        let s = Settings::reference("/workspace");
        assert_eq!(s.workspace, PathBuf::from("/workspace"));
        assert_eq!(
            (
                s.search.max_results,
                s.search.min_score,
                s.search.candidates_per_leg
            ),
            (6, 0.35, 24)
        );
        assert_eq!(
            (
                s.search.vector_weight,
                s.search.recency_half_life_days,
                s.search.recency_floor,
                s.search.mmr_lambda
            ),
            (0.3, 30.0, 0.7, 0.7)
        );
        assert_eq!((s.chunking.tokens, s.chunking.overlap), (400, 80));
        assert_eq!(s.fts_tokenizer, FtsTokenizer::Unicode61);
        assert_eq!(
            (
                s.bootstrap.max_file_chars,
                s.bootstrap.max_user_file_chars,
                s.bootstrap.max_total_chars
            ),
            (20_000, 4_000, 60_000)
        );
        let g = Gates::reference();
        assert_eq!(
            (g.min_score, g.min_recalls, g.min_unique_queries),
            (0.75, 3, 2)
        );
        assert_eq!(
            (
                g.recency_half_life_days,
                g.max_promotions,
                g.light_lookback_days,
                g.rem_lookback_days
            ),
            (14.0, 10, 2, 7)
        );
        assert_eq!(g.model_timeout_ms, 60_000);
        let f = defaults("").flush;
        assert_eq!((f.soft_threshold_tokens, f.timeout_ms), (4_000, 20_000));
    }

    #[test]
    fn resolve_fills_defaults_and_takes_nested_or_dotted_keys() {
        assert_eq!(resolve("/w", &json!({})).unwrap(), defaults("/w"));
        assert_eq!(resolve("/w", &Json::Null).unwrap(), defaults("/w"));
        let nested = resolve(
            "/w",
            &json!({
                "search": {"maxResults": 8, "minScore": 0.1, "tokenizer": "trigram", "chunking": {"tokens": 200}},
                "bootstrap": {"maxTotalChars": 9},
                "dreaming": {"limit": 0, "recencyHalfLifeDays": 0.5, "modelTimeoutMs": null},
                "flush": {"timeoutMs": 300}
            }),
        )
        .unwrap();
        let dotted = resolve(
            "/w",
            &json!({
                "search.maxResults": 8, "search.minScore": 0.1, "search.tokenizer": "trigram",
                "search": {"chunking.tokens": 200}, "bootstrap.maxTotalChars": 9,
                "dreaming.limit": 0, "dreaming.recencyHalfLifeDays": 0.5, "flush.timeoutMs": 300
            }),
        )
        .unwrap();
        assert_eq!(nested, dotted);
        let s = &nested.settings;
        assert_eq!((s.search.max_results, s.search.min_score), (8, 0.1));
        assert_eq!(s.fts_tokenizer, FtsTokenizer::Trigram);
        assert_eq!((s.chunking.tokens, s.chunking.overlap), (200, 80));
        assert_eq!(s.bootstrap.max_total_chars, 9);
        assert_eq!(
            s.search.mmr_lambda,
            Settings::reference("").search.mmr_lambda
        );
        assert_eq!(
            (
                nested.gates.max_promotions,
                nested.gates.recency_half_life_days
            ),
            (0, 0.5)
        );
        assert_eq!(
            nested.gates.model_timeout_ms,
            Gates::reference().model_timeout_ms
        );
        assert_eq!(nested.flush.timeout_ms, 300);
    }

    #[test]
    fn resolve_names_the_key_it_refuses() {
        let refused = |user: Json, needle: &str| match resolve("/w", &user) {
            Err(MemoryError::InvalidInput(m)) => {
                assert!(m.contains(needle), "{m:?} lacks {needle:?}")
            }
            other => panic!("{user} gave {other:?}"),
        };
        refused(
            json!({"search": {"maxResult": 6}}),
            "unknown setting search.maxResult",
        );
        refused(json!({"serach": {}}), "unknown setting serach");
        refused(json!({"search": 6}), "search (a section) must be an object");
        refused(json!([1]), "the settings must be an object");
        refused(
            json!({"search": {"maxResults": 0}}),
            "search.maxResults must be within 1..=100, got 0",
        );
        refused(json!({"search": {"maxResults": 101}}), "search.maxResults");
        refused(
            json!({"search": {"maxResults": 6.5}}),
            "search.maxResults must be an integer",
        );
        refused(
            json!({"search": {"maxResults": "6"}}),
            "search.maxResults must be an integer",
        );
        refused(
            json!({"search": {"maxResults": -1}}),
            "search.maxResults must be an integer",
        );
        refused(
            json!({"search": {"minScore": 1.5}}),
            "search.minScore must be within 0..=1, got 1.5",
        );
        refused(
            json!({"search": {"recencyHalfLifeDays": 1e39}}),
            "search.recencyHalfLifeDays",
        );
        refused(
            json!({"search": {"tokenizer": "porter"}}),
            "search.tokenizer must be one of unicode61, trigram, got \"porter\"",
        );
        refused(
            json!({"dreaming": {"recencyHalfLifeDays": 0}}),
            "dreaming.recencyHalfLifeDays must be greater than 0, got 0",
        );
        refused(json!({"dreaming": {"limit": 101}}), "dreaming.limit");
        refused(
            json!({"dreaming": {"modelTimeoutMs": 0}}),
            "dreaming.modelTimeoutMs",
        );
        refused(
            json!({"search": {"chunking": {"tokens": 80}}}),
            "search.chunking.overlap must be less than search.chunking.tokens (80), got 80",
        );
        refused(
            json!({"search.maxResults": 6, "search": {"maxResults": 7}}),
            "search.maxResults is given twice",
        );
    }

    #[test]
    fn validate_checks_the_records_hosts_pass() {
        let mut s = Settings::reference("/w");
        s.validate().unwrap();
        s.search.mmr_lambda = f32::NAN;
        assert!(
            matches!(s.validate(), Err(MemoryError::InvalidInput(m)) if m.starts_with("search.mmrLambda"))
        );
        let mut g = Gates::reference();
        g.validate().unwrap();
        g.min_score = 1.5;
        assert_eq!(
            g.validate().unwrap_err(),
            "dreaming.minScore must be within 0..=1, got 1.5"
        );
        g.min_score = 0.75;
        g.max_promotions = 101;
        assert!(g.validate().unwrap_err().starts_with("dreaming.limit"));
    }

    #[test]
    fn numbers_are_shown_as_the_f32_they_are_held_in() {
        assert_eq!(
            setting("search.minScore")
                .unwrap()
                .kind
                .default()
                .to_string(),
            "0.35"
        );
        assert_eq!(
            setting("search.recencyHalfLifeDays")
                .unwrap()
                .kind
                .default()
                .to_string(),
            "30"
        );
        assert_eq!(
            setting("search.tokenizer")
                .unwrap()
                .kind
                .default()
                .to_string(),
            "\"unicode61\""
        );
        assert_eq!(
            setting("dreaming.recencyHalfLifeDays")
                .unwrap()
                .kind
                .range(),
            "> 0"
        );
        assert_eq!(
            setting("bootstrap.maxFileChars").unwrap().kind.range(),
            ">= 1"
        );
        // A host's 0.1 is checked and kept as the f32 the component uses.
        let r = resolve("/w", &json!({"search": {"minScore": 0.1}})).unwrap();
        assert_eq!(r.settings.search.min_score, 0.1f32);
    }
}
