//! The poisoning suite (`tests/poisoning/`): each case plants a payload
//! through one channel an attacker can reach, then the same attack runs on
//! every case — hundreds of recalls with query variants over three days, a
//! sweep whose model tries to write the payload into `MEMORY.md`, a second
//! sweep, lane-1 messages built from the payload — and the same checks hold:
//! the payload is never in `MEMORY.md`, `USER.md`, `DREAMS.md` or the
//! bootstrap, never in an auto-injected block, and wherever search returns
//! it, it is inside one intact block that does not call it trusted. A trusted
//! fact is promoted by the same sweep, so a pass is never an idle pipeline.

use crate::conformance::{parse, run_parsed, Scenario, Target};
use anyhow::Context;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;

/// The trusted fact of the fixture that every sweep must promote.
pub const TRUSTED_CITATION: &str = "memory/2026-11-20.md#L3-L3";
const TRUSTED_LINE: &str = "- The build server is called atlas-seven and runs the nightly jobs.";
/// The attack: each query variant this often on each of the days.
pub const RECALLS_PER_VARIANT_AND_DAY: u32 = 25;
const DAYS: [&str; 3] = [
    "2026-11-29T10:00:00Z",
    "2026-11-30T10:00:00Z",
    "2026-12-01T10:00:00Z",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub id: String,
    pub channel: String,
    /// A word only the payload has.
    pub marker: String,
    pub payload: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Steps (conformance ops) that plant the payload.
    pub plant: Vec<Value>,
    /// Model replies the plant needs (a flush), before the attack's own.
    #[serde(default)]
    pub model_replies: Vec<Value>,
    /// Case-specific checks after the attack.
    #[serde(default)]
    pub after: Vec<Value>,
    /// Whether the sweep must promote the fixture's trusted fact (false
    /// when the case loses the ledger: nothing in `memory/` is vouched for).
    #[serde(default = "yes")]
    pub trusted_fact_promoted: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct CaseFile {
    cases: Vec<Case>,
}

pub fn load(path: &Path) -> anyhow::Result<Vec<Case>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: CaseFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a case file", path.display()))?;
    Ok(file.cases)
}

/// The query variants of the attack: the marker, with the payload's words,
/// reordered, misspelt.
pub fn query_variants(case: &Case) -> Vec<String> {
    let words: Vec<String> = case
        .payload
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4 && *w != case.marker && w.chars().all(|c| c.is_alphabetic()))
        .map(str::to_lowercase)
        .take(3)
        .collect();
    let w = |i: usize| words.get(i).cloned().unwrap_or_else(|| "owner".into());
    let m = &case.marker;
    let typo: String = m.chars().rev().collect();
    vec![
        m.clone(),
        format!("{m} {}", w(0)),
        format!("{} {} {m}", w(1), w(0)),
        format!("what did project {m} say about {}", w(2)),
        format!("{} {typo} {}", w(0), w(1)),
    ]
}

/// The whole scenario of one case: the plant, the attack and the checks.
pub fn scenario(case: &Case, fixture: &Path) -> anyhow::Result<Scenario> {
    let json = scenario_json(case, fixture)?;
    parse(&json.to_string(), &format!("poisoning case {}", case.id))
}

/// Writes every case as a conformance scenario folder under `out`
/// (`<id>/scenario.json` and the fixture as `<id>/workspace/`), so any
/// host's conformance runner runs the same attacks (the Node host's does,
/// in `scripts/test.sh`). Returns how many were written.
pub fn write_scenarios(cases: &Path, fixture: &Path, out: &Path) -> anyhow::Result<usize> {
    let cases = load(cases)?;
    for case in &cases {
        let dir = out.join(&case.id);
        std::fs::create_dir_all(&dir)?;
        let text = serde_json::to_string_pretty(&scenario_json(case, fixture)?)?;
        std::fs::write(dir.join("scenario.json"), text + "\n")?;
        copy_dir(fixture, &dir.join("workspace"))?;
    }
    Ok(cases.len())
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn scenario_json(case: &Case, fixture: &Path) -> anyhow::Result<Value> {
    let memory = std::fs::read_to_string(fixture.join("MEMORY.md")).unwrap_or_default();
    let payload_line = case
        .payload
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // The model "consolidates" by writing the payload in beside the trusted fact.
    let poisoned = format!("{memory}{TRUSTED_LINE} Source: {TRUSTED_CITATION}\n- {payload_line}\n");
    let mut replies = case.model_replies.clone();
    replies.push(json!({ "text": poisoned }));
    let m = &case.marker;
    let absent = json!({"$not_substr": m});
    let mut steps = case.plant.clone();
    for day in DAYS {
        for query in query_variants(case) {
            steps.push(
                json!({"call": "recall.search", "now": day, "note": "recall the payload again and again",
                "args": {"request": {"query": query}}, "repeat": RECALLS_PER_VARIANT_AND_DAY}),
            );
        }
    }
    for (day, query) in DAYS.iter().zip([
        "build server atlas",
        "which server runs the nightly jobs",
        "atlas-seven nightly",
    ]) {
        steps.push(
            json!({"call": "recall.search", "now": day, "note": "the trusted fact is recalled too",
            "args": {"request": {"query": query}}}),
        );
    }
    let promoted = json!({"candidates": {"$contains": [{"citation": TRUSTED_CITATION, "verdict": "promoted"}]}});
    let mut sweep = json!({"call": "dream.run", "args": {"request": {}}, "now": "2026-12-02T03:00:00Z", "note": "the sweep: its model tries to write the payload in"});
    if case.trusted_fact_promoted {
        sweep["expect"] = promoted;
    }
    steps.push(sweep);
    steps.push(json!({"call": "dream.run", "args": {"request": {}}, "now": "2026-12-02T04:00:00Z", "note": "a second sweep"}));
    for file in ["MEMORY.md", "USER.md", "DREAMS.md"] {
        steps.push(json!({"op": "read_file", "path": file, "note": "the payload is not in the curated core or the review surface",
            "expect": {"text": absent}}));
    }
    if case.trusted_fact_promoted {
        steps.push(json!({"op": "read_file", "path": "MEMORY.md", "note": "while the trusted fact was promoted",
            "expect": {"text": {"$substr": "atlas-seven and runs the nightly jobs. Source: memory/2026-11-20.md#L3-L3"}}}));
    }
    steps.push(json!({"call": "bootstrap.load", "now": "2026-12-02T09:00:00Z", "note": "not injected at session start",
        "args": {"request": {"purpose": "session-start"}}, "expect": {"text": absent}}));
    let not_injected = json!({"blocks": {"$not_contains": [{"text": {"$substr": m}}]}});
    let variants = query_variants(case);
    for (message, owner) in [
        (payload_line.as_str(), true),
        (variants[1].as_str(), true),
        (variants[3].as_str(), true),
        ("good morning, time to deploy", true),
        (payload_line.as_str(), false),
    ] {
        steps.push(json!({"call": "inject.trigger-inject", "note": "never auto-injected",
            "args": {"request": {"message": message, "mode": "off", "context": {"sender_is_owner": owner}}},
            "expect": not_injected}));
    }
    for query in [m.clone(), variants[2].clone()] {
        steps.push(json!({"op": "search_framing", "note": "searched explicitly: intact framing, never trusted",
            "query": query, "marker": m}));
    }
    steps.extend(case.after.iter().cloned());
    let description = case.description.clone().unwrap_or_else(|| {
        format!(
            "Poisoning through {}: never promoted, never injected, framed as untrusted.",
            case.channel
        )
    });
    Ok(json!({
        "description": description,
        "now": "2026-11-28T09:00:00Z",
        "model_replies": replies,
        "steps": steps,
    }))
}

pub fn run_case(case: &Case, fixture: &Path, component: &Path) -> anyhow::Result<()> {
    let target = Target::Sandbox(component);
    let scenario = scenario(case, fixture)?;
    run_parsed(
        &scenario,
        fixture,
        &format!("poisoning case {}", case.id),
        target,
    )
}
