//! The docs and the OpenClaw plugin's schema agree with the component's
//! settings (`memory_core::config`, the one place their defaults and ranges
//! are written): README.md and tests/conformance/README.md embed the
//! generated tables, README.md's TOML example states the defaults, and
//! hosts/openclaw/openclaw.plugin.json gives each setting the component's
//! type and range.

use memory_core::config::describe;
use memory_harness::config::{
    ConfigFile, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_DREAM_SCHEDULE, DEFAULT_DUE_EVERY_SECONDS,
    DEFAULT_EMBED_TIMEOUT_MS, DEFAULT_LOCK_WAIT_MS, DEFAULT_MEMORY_MIB,
};
use memory_harness::settings::{self, FILE_KEYS};
use serde_json::Value;
use std::path::PathBuf;

fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text between the line starting with `begin` and the line `end`.
fn between<'a>(text: &'a str, begin: &str, end: &str) -> &'a str {
    let start = text
        .find(begin)
        .unwrap_or_else(|| panic!("no {begin} marker"));
    let start = start + text[start..].find('\n').expect("a line") + 1;
    let stop = start
        + text[start..]
            .find(end)
            .unwrap_or_else(|| panic!("no {end} marker"));
    &text[start..stop]
}

#[test]
fn the_readme_embeds_the_settings_table() {
    let readme = read("README.md");
    assert_eq!(
        between(&readme, "<!-- settings:begin", "<!-- settings:end -->"),
        settings::markdown(),
        "README.md's settings table is not the component's: paste `memory-harness settings --markdown` between the markers"
    );
}

#[test]
fn the_conformance_readme_embeds_the_scenario_settings() {
    let readme = read("tests/conformance/README.md");
    assert_eq!(
        between(
            &readme,
            "<!-- scenario-settings:begin",
            "<!-- scenario-settings:end -->"
        ),
        settings::scenario_markdown(),
        "tests/conformance/README.md's settings table is not the component's: paste `memory-harness settings --scenario` between the markers"
    );
}

#[test]
fn the_readme_s_configuration_example_states_every_default() {
    let readme = read("README.md");
    let section = &readme[readme.find("### Configuration").expect("the section")..];
    let example = between(section, "```toml", "```");
    let file: ConfigFile = toml::from_str(example).expect("the example is a valid configuration");
    // Every component setting the file can set, at its default.
    let given = settings::file_settings(&file).unwrap();
    for (key, path) in FILE_KEYS {
        assert!(given.contains_key(*key), "the example lacks {path}");
    }
    let resolved = memory_core::config::resolve("", &Value::Object(given)).unwrap();
    assert_eq!(
        resolved,
        memory_core::config::defaults(""),
        "the example's component settings are not the defaults"
    );
    // And the host's own, where they have one.
    assert_eq!(file.limits.call_timeout_ms, Some(DEFAULT_CALL_TIMEOUT_MS));
    assert_eq!(file.limits.memory_mib, Some(DEFAULT_MEMORY_MIB));
    assert_eq!(file.limits.embed_timeout_ms, Some(DEFAULT_EMBED_TIMEOUT_MS));
    assert_eq!(file.limits.lock_wait_ms, Some(DEFAULT_LOCK_WAIT_MS));
    assert_eq!(
        file.memory.dreaming.frequency.as_deref(),
        Some(DEFAULT_DREAM_SCHEDULE)
    );
    assert_eq!(
        file.serve.due_every_seconds,
        Some(DEFAULT_DUE_EVERY_SECONDS)
    );
}

#[test]
fn the_openclaw_schema_gives_each_setting_the_component_s_range() {
    let manifest: Value =
        serde_json::from_str(&read("hosts/openclaw/openclaw.plugin.json")).unwrap();
    let schema = &manifest["configSchema"];
    for s in describe() {
        let mut at = schema;
        for part in s.key.split('.') {
            at = &at["properties"][part];
        }
        assert!(at.is_object(), "the plugin's configSchema lacks {}", s.key);
        let expected = settings::json_schema(&s.kind);
        let mut actual = at.clone();
        if let Some(object) = actual.as_object_mut() {
            object.remove("description");
        }
        assert_eq!(actual, expected, "configSchema's {}", s.key);
    }
    // The other leaves are the plugin's own (lib/memories.js).
    const HOST_KEYS: &[&str] = &[
        "bootstrap.enabled",
        "dreaming.enabled",
        "dreaming.cron",
        "dreaming.timezone",
        "escalation.mode",
        "escalation.timeoutMs",
        "model.enabled",
        "timeZone",
        "intents.deliverDue",
        "rememberAcrossConversations",
        "embedTimeoutMs",
        "syncIntervalMs",
        "limits.callTimeoutMs",
        "limits.memoryMib",
    ];
    fn leaves(prefix: &str, schema: &Value, out: &mut Vec<String>) {
        match schema["properties"].as_object() {
            Some(properties) => {
                for (name, property) in properties {
                    let key = if prefix.is_empty() {
                        name.clone()
                    } else {
                        format!("{prefix}.{name}")
                    };
                    leaves(&key, property, out);
                }
            }
            None => out.push(prefix.to_string()),
        }
    }
    let mut found = Vec::new();
    leaves("", schema, &mut found);
    for key in found {
        assert!(
            HOST_KEYS.contains(&key.as_str()) || describe().iter().any(|s| s.key == key),
            "configSchema's {key} is neither a component setting nor the plugin's own"
        );
    }
}
