//! The conformance runner: each scenario is a folder with a `workspace/`
//! fixture and a `scenario.json` (validated by `scenario.schema.json`) of
//! steps — component calls named by their WIT function with their arguments
//! as data (`call`), and the runner's own steps (`op`: file edits, reads,
//! restarts) — and the results each must produce. The format is documented
//! in `tests/conformance/README.md`; the Node host runs the same folders.
//!
//! The calls are made by a driver (`crate::driver`): the component in the
//! wasmtime sandbox, or the crate compiled natively (no wasm build). Two
//! invariants are checked after calls without being written in any
//! scenario: reading calls leave the Markdown unchanged and writing calls
//! only append to it (`call`), and a trapped instance is replaced.

mod call;
mod expect;
mod fixture;
mod schema;

pub use self::expect::check;
use self::fixture::{copy_tree, Saved};
use crate::clock::{parse_time, Parsed};
use crate::config::{resolve, ConfigFile, Overrides, Resolved};
use crate::driver::{Calls, Driver, Native, Run, Sandboxed, Turn};
use crate::embed::Lender;
use crate::model::ModelLender;
use crate::project::ActiveProjects;
use crate::session::Session;
use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub description: String,
    /// The clock: `YYYY-MM-DD` or RFC 3339 (default 2026-12-02).
    #[serde(default)]
    pub now: Option<String>,
    /// `none` (default), `test` or `failing`.
    #[serde(default)]
    pub embedder: Option<String>,
    /// Overrides of the component's settings, by their name without the
    /// section (`maxResults` is `search.maxResults`; see `crate::settings`).
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// Replies of the scripted model, in order (`{"text"}`, `{"error"}`,
    /// optionally `"delay_ms"`); without them there is no model.
    #[serde(default)]
    pub model_replies: Option<Vec<Value>>,
    pub steps: Vec<Step>,
}

/// One step: a component `call` or a runner `op` (exactly one of them).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// `<interface>.<function>` of the WIT (`recall.search`, `store.sync`).
    #[serde(default)]
    pub call: Option<String>,
    /// The call's arguments by parameter name (the `borrow<memory>` is the
    /// runner's), as WIT values by the rule of `wit_json`.
    #[serde(default)]
    pub args: Option<Map<String, Value>>,
    /// A runner step: `write`, `append`, `read_file`, `restart`, ….
    #[serde(default)]
    pub op: Option<String>,
    /// What the step is for, shown when it fails.
    #[serde(default)]
    pub note: Option<String>,
    /// Sets the clock for this and later steps.
    #[serde(default)]
    pub now: Option<String>,
    /// A call: make it this many times (the last answer is checked);
    /// `write`/`append`: the content this many times.
    #[serde(default)]
    pub repeat: Option<usize>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    /// Hex bytes to write (for invalid UTF-8 and NUL).
    #[serde(default)]
    pub bytes_hex: Option<String>,
    /// `search_framing`: the query, how many hits, and text that must never
    /// be framed as trusted.
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub max_results: Option<u32>,
    #[serde(default)]
    pub marker: Option<String>,
    /// A subset of the result, with the operators of the README.
    #[serde(default)]
    pub expect: Option<Value>,
    /// The component's error: `{"kind": "...", "value": {"$substr": "..."}}`.
    #[serde(default)]
    pub expect_error: Option<Value>,
}

impl Step {
    fn name(&self) -> &str {
        self.call.as_deref().or(self.op.as_deref()).unwrap_or("?")
    }
}

/// What a scenario runs against.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The component at this path, in the wasmtime sandbox.
    Sandbox(&'a Path),
    /// The `memory-core` crate compiled into this process (no wasm build).
    Native,
}

/// Every scenario folder (one holding a `scenario.json`) under `root`, sorted.
pub fn discover(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    walk(root, &mut found)?;
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if dir.join("scenario.json").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, found)?;
        }
    }
    Ok(())
}

/// Reads a scenario: valid against the schema, then parsed.
pub fn parse(text: &str, label: &str) -> anyhow::Result<Scenario> {
    let value: Value =
        serde_json::from_str(text).with_context(|| format!("{label} is not JSON"))?;
    schema::validate(&value).with_context(|| format!("{label} is not a valid scenario"))?;
    serde_json::from_value(value).with_context(|| format!("{label} is not a valid scenario"))
}

/// Runs one scenario against `target`.
pub fn run_scenario(dir: &Path, target: Target) -> anyhow::Result<()> {
    let file = dir.join("scenario.json");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let label = file.display().to_string();
    let scenario = parse(&text, &label)?;
    run_parsed(&scenario, &dir.join("workspace"), &label, target)
}

/// Runs a scenario given as data, with the fixture directory `fixture`
/// (used when it exists); `label` names it in failures.
pub fn run_parsed(
    scenario: &Scenario,
    fixture: &Path,
    label: &str,
    target: Target,
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let workspace = temp.path().join("workspace");
    std::fs::create_dir_all(&workspace)?;
    if fixture.is_dir() {
        copy_tree(fixture, &workspace)?;
    }
    let mut run = start(scenario, temp.path(), &workspace, target)?;
    let calls = Calls::new();
    let mut saved = Saved::default();
    for (number, step) in scenario.steps.iter().enumerate() {
        let label = format!(
            "{} step {} ({}{})",
            label,
            number + 1,
            step.name(),
            step.note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        );
        if let Some(at) = &step.now {
            set_clock(
                &mut run.turn,
                parse_time(at).with_context(|| label.clone())?,
            );
        }
        run_step(&mut run, &calls, &workspace, step, &mut saved).with_context(|| label)?;
    }
    Ok(())
}

/// The driver of a scenario over its workspace, with the scripted model
/// (written to `scratch`), the embedder, the settings, and its clock.
fn start(
    scenario: &Scenario,
    scratch: &Path,
    workspace: &Path,
    target: Target,
) -> anyhow::Result<Run> {
    let settings = crate::settings::from_scenario(&scenario.settings)?;
    let resolved = resolve_config(scenario, &settings, scratch, workspace, target)?;
    let driver: Box<dyn Driver> = match target {
        Target::Sandbox(_) => Box::new(Sandboxed::new(Session::open(&resolved, 0)?)),
        Target::Native => Box::new(Native::new(
            workspace.to_path_buf(),
            &settings,
            Lender::new(&resolved.embedder, resolved.embed_timeout),
            ModelLender::new(&resolved.model, resolved.model_timeout)?,
        )),
    };
    let mut turn = Turn {
        now_ms: 0,
        utc_offset_minutes: 0,
        projects: ActiveProjects::default(),
    };
    set_clock(
        &mut turn,
        parse_time(scenario.now.as_deref().unwrap_or("2026-12-02"))?,
    );
    Ok(Run { driver, turn })
}

/// The harness configuration of a scenario: its model script, embedder and
/// settings over the defaults.
fn resolve_config(
    scenario: &Scenario,
    settings: &Map<String, Value>,
    scratch: &Path,
    workspace: &Path,
    target: Target,
) -> anyhow::Result<Resolved> {
    let model = match &scenario.model_replies {
        None => "none".to_string(),
        Some(replies) => {
            let script = scratch.join("model-script.jsonl");
            // An `append_to` path (a concurrent editor) is the workspace's.
            let lines: String = replies
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if let Some(path) = r.get("append_to").and_then(Value::as_str) {
                        r["append_to"] = Value::from(workspace.join(path).display().to_string());
                    }
                    format!("{r}\n")
                })
                .collect();
            std::fs::write(&script, lines)?;
            format!("scripted:{}", script.display())
        }
    };
    let overrides = Overrides {
        model: Some(model),
        workspace: Some(workspace.to_path_buf()),
        component: match target {
            Target::Sandbox(component) => Some(component.to_path_buf()),
            Target::Native => None,
        },
        embedder: Some(scenario.embedder.clone().unwrap_or_else(|| "none".into())),
        settings: settings.clone(),
        // Never the host's zone: the offset is the one `now` is written with.
        time_zone: Some("UTC".into()),
        ..Overrides::default()
    };
    resolve(&ConfigFile::default(), &overrides)
}

/// A scenario's or step's `now`: the clock, and the turn context's
/// `utc-offset-minutes` from its written offset (`…-05:00`: -300; `Z`, `-00:00`
/// and a bare date: 0).
fn set_clock(turn: &mut Turn, at: Parsed) {
    turn.now_ms = at.ms;
    turn.utc_offset_minutes = at.offset_minutes.unwrap_or(0);
}

fn run_step(
    run: &mut Run,
    calls: &Calls,
    workspace: &Path,
    step: &Step,
    saved: &mut Saved,
) -> anyhow::Result<()> {
    let result = match (&step.call, &step.op) {
        (Some(name), None) => return call::run_step(calls, run, workspace, step, name),
        (None, Some(op)) if op == "search_framing" => Some(call::search_framing(calls, run, step)?),
        (None, Some(op)) => fixture::run(run, workspace, step, op, saved)?,
        _ => bail!("a step has exactly one of `call` and `op`"),
    };
    if step.expect_error.is_some() {
        bail!("a runner step raises no component error to expect");
    }
    match (result, &step.expect) {
        (Some(value), Some(expected)) => {
            check(expected, &value, "$").map_err(|e| anyhow::anyhow!("{e}\nfull result: {value:#}"))
        }
        (None, Some(_)) => bail!("op {} has no result to check", step.name()),
        _ => Ok(()),
    }
}

/// Runs every scenario under `root` (optionally filtered) and prints one line
/// per scenario; returns (passed, failed).
pub fn run_all(
    root: &Path,
    target: Target,
    filter: Option<&str>,
) -> anyhow::Result<(usize, usize)> {
    let mut passed = 0;
    let mut failed = 0;
    for dir in discover(root)? {
        let name = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        match run_scenario(&dir, target) {
            Ok(()) => {
                passed += 1;
                println!("ok     {name}");
            }
            Err(error) => {
                failed += 1;
                println!("FAILED {name}\n{}", indent(&format!("{error:#}")));
            }
        }
    }
    Ok((passed, failed))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
