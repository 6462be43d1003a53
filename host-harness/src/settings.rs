//! The component's settings as this host names them: the key of each in the
//! TOML configuration file, the JSON the component resolves them from, a
//! conformance scenario's short names, and the table `memory-harness
//! settings` prints (and the READMEs embed). Defaults, ranges and meanings
//! are the component's (`memory_core::config`, exported as `config`); this
//! module holds only names.

use crate::config::ConfigFile;
use memory_core::config::{describe, setting, Kind, Setting, Value};
use serde_json::{json, Map, Value as Json};

/// Each component setting the file can set: the component's key, then the
/// file's. `model.timeoutMs` is also the host's cap on every model call
/// (`config::Resolved::model_timeout`).
pub const FILE_KEYS: &[(&str, &str)] = &[
    ("search.maxResults", "memory.search.query.maxResults"),
    ("search.minScore", "memory.search.query.minScore"),
    (
        "search.candidatesPerLeg",
        "memory.search.query.candidatesPerLeg",
    ),
    ("search.vectorWeight", "memory.search.query.vectorWeight"),
    (
        "search.recencyHalfLifeDays",
        "memory.search.query.recencyHalfLifeDays",
    ),
    ("search.recencyFloor", "memory.search.query.recencyFloor"),
    ("search.mmrLambda", "memory.search.query.mmrLambda"),
    ("search.tokenizer", "memory.search.store.fts.tokenizer"),
    ("search.chunking.tokens", "memory.search.chunking.tokens"),
    ("search.chunking.overlap", "memory.search.chunking.overlap"),
    ("bootstrap.maxFileChars", "memory.bootstrap.maxFileChars"),
    (
        "bootstrap.maxUserFileChars",
        "memory.bootstrap.maxUserFileChars",
    ),
    ("bootstrap.maxTotalChars", "memory.bootstrap.maxTotalChars"),
    ("dreaming.minScore", "memory.dreaming.minScore"),
    ("dreaming.minRecallCount", "memory.dreaming.minRecallCount"),
    (
        "dreaming.minUniqueQueries",
        "memory.dreaming.minUniqueQueries",
    ),
    (
        "dreaming.recencyHalfLifeDays",
        "memory.dreaming.recencyHalfLifeDays",
    ),
    ("dreaming.limit", "memory.dreaming.limit"),
    (
        "dreaming.lightLookbackDays",
        "memory.dreaming.lightLookbackDays",
    ),
    (
        "dreaming.remLookbackDays",
        "memory.dreaming.remLookbackDays",
    ),
    ("dreaming.modelTimeoutMs", "model.timeoutMs"),
];

/// Settings the harness passes with each call rather than from the file: the
/// command's flag.
const CALL_FLAGS: &[(&str, &str)] = &[
    ("flush.softThresholdTokens", "flush --soft-threshold"),
    ("flush.timeoutMs", "none: the component's default"),
];

/// The sections whose settings a conformance scenario's `settings` may set,
/// by their name without the section (`maxResults` is `search.maxResults`,
/// `maxFileChars` is `bootstrap.maxFileChars`).
pub const SCENARIO_SECTIONS: &[&str] = &["search", "bootstrap"];

/// The file's key of a component setting.
pub fn file_key(key: &str) -> Option<&'static str> {
    FILE_KEYS.iter().find(|(k, _)| *k == key).map(|(_, f)| *f)
}

/// The component's settings the file sets, by the component's key.
pub fn file_settings(file: &ConfigFile) -> anyhow::Result<Map<String, Json>> {
    let tree = serde_json::to_value(file)?;
    let mut out = Map::new();
    for (key, path) in FILE_KEYS {
        let pointer = format!("/{}", path.replace('.', "/"));
        match tree.pointer(&pointer) {
            None | Some(Json::Null) => {}
            Some(value) => {
                out.insert(key.to_string(), value.clone());
            }
        }
    }
    Ok(out)
}

/// A scenario's name of a component setting (`search.maxResults` →
/// `maxResults`), for the sections a scenario may set.
pub fn scenario_key(key: &str) -> Option<&str> {
    SCENARIO_SECTIONS
        .iter()
        .find_map(|section| key.strip_prefix(section)?.strip_prefix('.'))
}

/// A scenario's `settings` as the component's settings.
pub fn from_scenario(settings: &Map<String, Json>) -> anyhow::Result<Map<String, Json>> {
    settings
        .iter()
        .map(|(name, value)| {
            let key = describe()
                .iter()
                .map(|s| s.key)
                .find(|key| scenario_key(key) == Some(name))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "unknown setting {name:?} (a scenario's settings are {})",
                        scenario_names().join(", ")
                    )
                })?;
            Ok((key.to_string(), value.clone()))
        })
        .collect()
}

fn scenario_names() -> Vec<&'static str> {
    describe()
        .iter()
        .filter_map(|s| scenario_key(s.key))
        .collect()
}

/// A flag's help: `lead`, then the default of the setting `key` and where
/// the file sets it.
pub fn flag_help(lead: &str, key: &str) -> String {
    let s = setting(key).unwrap_or_else(|| panic!("no setting {key}"));
    let place = file_key(key)
        .map(|f| format!("; {f} in the configuration"))
        .unwrap_or_default();
    format!("{lead} (default {}{place})", shown(s.kind.default()))
}

/// A value as people read it (a choice unquoted).
fn shown(value: Value) -> String {
    match value {
        Value::Choice(s) => s.to_string(),
        other => other.to_string(),
    }
}

/// The values a setting takes, for a table.
fn values(kind: &Kind) -> String {
    match kind {
        Kind::Choice { values, .. } => values
            .iter()
            .map(|v| format!("`{v}`"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => format!("{} {}", kind.json_type(), kind.range()),
    }
}

/// Where the harness takes a setting from.
fn harness_place(key: &str) -> String {
    file_key(key)
        .map(|f| format!("`{f}`"))
        .or_else(|| {
            CALL_FLAGS
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, flag)| format!("per call ({flag})"))
        })
        .unwrap_or_else(|| "—".into())
}

/// The table of every setting, as Markdown (README.md embeds it).
pub fn markdown() -> String {
    let mut out = String::from(
        "| setting | memory-harness | values | default | meaning |\n\
         |---------|----------------|--------|---------|---------|\n",
    );
    for s in describe() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            s.key,
            harness_place(s.key),
            values(&s.kind),
            shown(s.kind.default()),
            s.doc
        ));
    }
    out
}

/// The settings a conformance scenario may set, as Markdown
/// (tests/conformance/README.md embeds it).
pub fn scenario_markdown() -> String {
    let mut out = String::from(
        "| key | component setting | values | default |\n\
         |-----|-------------------|--------|---------|\n",
    );
    for s in describe() {
        if let Some(name) = scenario_key(s.key) {
            out.push_str(&format!(
                "| `{name}` | `{}` | {} | {} |\n",
                s.key,
                values(&s.kind),
                shown(s.kind.default())
            ));
        }
    }
    out
}

/// The table for a terminal: one setting a paragraph.
pub fn plain() -> String {
    describe()
        .iter()
        .map(|s| {
            format!(
                "{} = {}\n    {}; {}\n    {}\n",
                s.key,
                s.kind.default(),
                values(&s.kind).replace('`', ""),
                harness_place(s.key).replace('`', ""),
                s.doc
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The table as JSON: the component's `config.describe`, with the file's key.
pub fn json() -> Json {
    Json::Array(describe().iter().map(setting_json).collect())
}

fn setting_json(s: &Setting) -> Json {
    let default: Json = serde_json::from_str(&s.kind.default().to_string()).expect("JSON text");
    let mut out = json!({ "key": s.key, "default": default });
    if let (Some(out), Json::Object(schema)) = (out.as_object_mut(), json_schema(&s.kind)) {
        out.extend(schema);
    }
    out["file"] = file_key(s.key).into();
    out["doc"] = s.doc.into();
    out
}

/// A setting's type and range in JSON Schema's words (`type`, `minimum` or
/// `exclusiveMinimum`, `maximum`, `enum`), as a host's schema states them.
pub fn json_schema(kind: &Kind) -> Json {
    let mut out = json!({ "type": kind.json_type() });
    match *kind {
        Kind::Integer { min, max, .. } => {
            out["minimum"] = min.into();
            if let Some(max) = max {
                out["maximum"] = max.into();
            }
        }
        Kind::Number {
            min,
            min_exclusive,
            max,
            ..
        } => {
            let bound = if min_exclusive {
                "exclusiveMinimum"
            } else {
                "minimum"
            };
            out[bound] = json_number(min);
            if let Some(max) = max {
                out["maximum"] = json_number(max);
            }
        }
        Kind::Choice { values, .. } => out["enum"] = json!(values),
    }
    out
}

/// A bound as JSON: a whole number as an integer (`0`, not `0.0`).
fn json_number(x: f64) -> Json {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        (x as i64).into()
    } else {
        x.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_key_is_a_setting_and_a_key_of_the_file() {
        let tree = serde_json::to_value(ConfigFile::default()).unwrap();
        for (key, path) in FILE_KEYS {
            assert!(
                setting(key).is_some(),
                "{key} is no setting of the component"
            );
            let pointer = format!("/{}", path.replace('.', "/"));
            assert_eq!(tree.pointer(&pointer), Some(&Json::Null), "{path}");
        }
    }

    #[test]
    fn every_key_of_the_file_is_a_setting_or_the_host_s() {
        const HOST_KEYS: &[&str] = &[
            "workspace",
            "component",
            "cacheDir",
            "timeZone",
            "limits.callTimeoutMs",
            "limits.memoryMib",
            "limits.embedTimeoutMs",
            "limits.lockWaitMs",
            "memory.search.provider",
            "memory.search.modelDir",
            "memory.search.model",
            "memory.search.remote.baseUrl",
            "memory.search.remote.apiKeyEnv",
            "memory.search.remote.dimensions",
            "memory.dreaming.frequency",
            "model.provider",
            "model.script",
            "model.url",
            "model.name",
            "model.apiKeyEnv",
            "serve.dueEverySeconds",
            "serve.deliverCommand",
            "serve.deliverFile",
        ];
        fn leaves(prefix: &str, value: &Json, out: &mut Vec<String>) {
            match value {
                Json::Object(map) => {
                    for (k, v) in map {
                        let path = if prefix.is_empty() {
                            k.clone()
                        } else {
                            format!("{prefix}.{k}")
                        };
                        leaves(&path, v, out);
                    }
                }
                _ => out.push(prefix.to_string()),
            }
        }
        let mut found = Vec::new();
        leaves(
            "",
            &serde_json::to_value(ConfigFile::default()).unwrap(),
            &mut found,
        );
        for path in found {
            assert!(
                HOST_KEYS.contains(&path.as_str()) || FILE_KEYS.iter().any(|(_, f)| *f == path),
                "the file's {path} is neither a component setting nor the host's"
            );
        }
    }

    #[test]
    fn scenario_names_are_unique_and_map_back() {
        let names = scenario_names();
        assert!(names.contains(&"maxResults") && names.contains(&"maxFileChars"));
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        let given = json!({"maxResults": 3, "tokenizer": "trigram"});
        let mapped = from_scenario(given.as_object().unwrap()).unwrap();
        assert_eq!(
            Json::Object(mapped),
            json!({"search.maxResults": 3, "search.tokenizer": "trigram"})
        );
        assert!(from_scenario(json!({"limit": 3}).as_object().unwrap()).is_err());
    }

    #[test]
    fn help_shows_the_component_s_default() {
        let default = |key| shown(setting(key).unwrap().kind.default());
        assert_eq!(
            flag_help("FTS tokenizer", "search.tokenizer"),
            format!(
                "FTS tokenizer (default {}; memory.search.store.fts.tokenizer in the configuration)",
                default("search.tokenizer")
            )
        );
        assert!(!default("search.tokenizer").contains('"'));
        assert_eq!(
            flag_help("x", "flush.softThresholdTokens"),
            format!("x (default {})", default("flush.softThresholdTokens"))
        );
    }
}
