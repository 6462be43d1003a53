//! A component call step (`call`): the function named `<interface>.<function>`
//! with its arguments as data, completed and checked by the one rule of
//! `wit_json` against the function's types, made by the driver (the sandbox
//! or the crate natively), and its answer rendered back by the same rule.
//! Nothing here knows any function's shape; the only per-call knowledge is
//! which calls must leave the Markdown unchanged or only appended to.

use super::driver::{split, CallType};
use super::expect::check;
use super::fixture::{changed_paths, check_append_only, check_framing, snapshot};
use super::wit_json::{self, Defaults};
use super::{Run, Step, Turn};
use crate::clock::parse_now;
use crate::host::Export;
use anyhow::{anyhow, bail, Context};
use serde_json::{json, Map, Value};
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Calls that only read Markdown: a change to any file outside `.memory/`
/// fails the step.
const READ_CALLS: &[&str] = &[
    "store.sync",
    "store.status",
    "recall.search",
    "recall.get",
    "bootstrap.load",
    "inject.trigger-inject",
    "report.gather",
];
/// Calls that may write Markdown, only by appending. (`write.forget` removes
/// lines; its scenarios check the files themselves.)
const APPEND_CALLS: &[&str] = &[
    "write.note",
    "write.ingest",
    "write.flush",
    "intents.create",
];

/// The component's calls by name, and the defaults of the records a request
/// may leave out.
pub struct Calls {
    calls: BTreeMap<String, CallType>,
    /// The component's own dream gates (`config.resolve`), asked for the first
    /// time a call takes gates, so setting up touches no instance.
    gates: OnceCell<Value>,
}

/// A call's answer: the ok value, or the component's error, as JSON.
type Answer = Result<Value, Value>;

impl Calls {
    /// The calls the driver knows.
    pub fn of(run: &Run) -> anyhow::Result<Calls> {
        let calls = run
            .driver
            .calls()?
            .into_iter()
            .map(|c| (c.call.clone(), c))
            .collect();
        Ok(Calls {
            calls,
            gates: OnceCell::new(),
        })
    }

    /// The dream gates a request leaves out: the component's resolved
    /// defaults.
    fn default_gates(&self, run: &mut Run) -> anyhow::Result<Value> {
        if let Some(gates) = self.gates.get() {
            return Ok(gates.clone());
        }
        let args = json!({"workspace": crate::host::GUEST_WORKSPACE, "settings_json": "{}"});
        let resolved = self
            .answer(run, "config.resolve", args.as_object().expect("an object"))?
            .map_err(|e| anyhow!("config.resolve failed: {e}"))?;
        let gates = resolved["dream_gates"].clone();
        Ok(self.gates.get_or_init(|| gates).clone())
    }

    fn call_type(&self, name: &str) -> anyhow::Result<&CallType> {
        self.calls.get(name).with_context(|| {
            format!(
                "the component exports no `{name}`; it exports {}",
                self.calls.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Runs a call step: the call (`repeat` times), the file invariants, and
    /// the step's expectation.
    pub fn run(
        &self,
        run: &mut Run,
        workspace: &Path,
        step: &Step,
        name: &str,
    ) -> anyhow::Result<()> {
        let args = step.args.clone().unwrap_or_default();
        let before = if READ_CALLS.contains(&name) || APPEND_CALLS.contains(&name) {
            Some(snapshot(workspace, false)?)
        } else {
            None
        };
        // `repeat`: the same call N times (recall signals); the last answer
        // is checked, and every earlier one must succeed.
        for _ in 1..step.repeat.unwrap_or(1) {
            if let Err(error) = self.answer(run, name, &args)? {
                bail!("a repeated call failed: {error}");
            }
        }
        let answer = self.answer(run, name, &args)?;
        if let Some(before) = before {
            if APPEND_CALLS.contains(&name) {
                check_append_only(workspace, &before)?;
            } else {
                let after = snapshot(workspace, false)?;
                if before != after {
                    bail!(
                        "the call changed memory files on disk: {:?}",
                        changed_paths(&before, &after)
                    );
                }
            }
        }
        match (answer, &step.expect_error) {
            (Ok(value), None) => match &step.expect {
                Some(expected) => {
                    check(expected, &value, "$").map_err(|e| anyhow!("{e}\nfull result: {value:#}"))
                }
                None => Ok(()),
            },
            (Ok(value), Some(expected)) => {
                bail!("expected the error {expected}, got the result {value:#}")
            }
            (Err(error), Some(expected)) => {
                check(expected, &error, "$error").map_err(|e| anyhow!("{e}\nactual error: {error}"))
            }
            (Err(error), None) => bail!("the component answered with an error: {error}"),
        }
    }

    /// Makes the call and renders its answer; a trap or a host failure is
    /// an error of the step.
    pub fn answer(
        &self,
        run: &mut Run,
        name: &str,
        args: &Map<String, Value>,
    ) -> anyhow::Result<Answer> {
        let call = self.call_type(name)?;
        let args = self.resolve_helpers(run, &Value::Object(args.clone()))?;
        let args = args.as_object().expect("an object stays an object");
        let mut defaults: Defaults = BTreeMap::from([("context", turn_context(&run.turn))]);
        if call
            .params
            .iter()
            .any(|(_, ty)| wit_json::has_field(ty, "gates"))
        {
            defaults.insert("gates", self.default_gates(run)?);
        }
        let wanted: Vec<(&str, &Value)> = call
            .params
            .iter()
            .filter(|(_, ty)| !CallType::takes_memory(ty))
            .map(|(name, ty)| (name.as_str(), ty))
            .collect();
        let mut built = wit_json::complete_fields(&wanted, args, &defaults, "$args")?;
        let params: Vec<Option<Value>> = call
            .params
            .iter()
            .map(|(name, ty)| {
                (!CallType::takes_memory(ty)).then(|| {
                    built
                        .remove(&wit_json::json_key(name))
                        .unwrap_or(Value::Null)
                })
            })
            .collect();
        let extra = self.extra_time(name, args);
        let rendered = run
            .driver
            .call(call, params, extra)
            .map_err(|e| anyhow!("the call failed: {e:#}"))?;
        Ok(split(&call.result, rendered))
    }

    /// A sweep waits for one model turn on top of its own work, as the
    /// harness's `dream` command allows it.
    fn extra_time(&self, name: &str, args: &Map<String, Value>) -> Duration {
        if name != "dream.run" {
            return Duration::ZERO;
        }
        let given = args
            .get("request")
            .and_then(|r| r["gates"]["model_timeout_ms"].as_u64());
        let default = self
            .gates
            .get()
            .and_then(|g| g["model_timeout_ms"].as_u64());
        Duration::from_millis(given.or(default).unwrap_or(0))
    }

    /// Replaces the argument helpers: `{"$time": "2026-12-03T09:00:00Z"}` (the
    /// time in ms), `{"$jsonl": [...]}` (one JSON text per line) and
    /// `{"$call": "user.show", "field": "hash"}` (a field of another call's
    /// result, made just before).
    fn resolve_helpers(&self, run: &mut Run, value: &Value) -> anyhow::Result<Value> {
        Ok(match value {
            Value::Object(map) if map.contains_key("$time") => {
                let text = map["$time"]
                    .as_str()
                    .context("$time needs a date or time")?;
                json!(parse_now(text)?)
            }
            Value::Object(map) if map.contains_key("$jsonl") => {
                let lines = map["$jsonl"].as_array().context("$jsonl needs an array")?;
                Value::String(lines.iter().map(|line| format!("{line}\n")).collect())
            }
            Value::Object(map) if map.contains_key("$call") => {
                let name = map["$call"].as_str().context("$call needs a call name")?;
                let field = map.get("field").and_then(Value::as_str);
                let args = match map.get("args") {
                    None => Map::new(),
                    Some(Value::Object(args)) => args.clone(),
                    Some(other) => bail!("$call's args must be an object, not {other}"),
                };
                let value = self
                    .answer(run, name, &args)?
                    .map_err(|e| anyhow!("{name} failed: {e}"))?;
                match field {
                    Some(field) => value
                        .get(field)
                        .cloned()
                        .with_context(|| format!("{name} has no field `{field}`"))?,
                    None => value,
                }
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.resolve_helpers(run, v)?)))
                    .collect::<anyhow::Result<_>>()?,
            ),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.resolve_helpers(run, v))
                    .collect::<anyhow::Result<_>>()?,
            ),
            other => other.clone(),
        })
    }

    /// The runner's check of every hit's framing (`search_framing`): one
    /// block, opened and closed once (also after removing invisible
    /// characters and mapping look-alike brackets), and text holding
    /// `marker` never presented as trusted.
    pub fn search_framing(&self, run: &mut Run, step: &Step) -> anyhow::Result<Value> {
        let query = step.query.clone().context("search_framing needs `query`")?;
        let request = json!({"request": {
            "query": query,
            "max_results": step.max_results.unwrap_or(20),
            "min_score": 0.0,
        }});
        let result = self
            .answer(
                run,
                "recall.search",
                request.as_object().expect("an object"),
            )?
            .map_err(|e| anyhow!("the search failed: {e}"))?;
        let hits = result["hits"].as_array().cloned().unwrap_or_default();
        for hit in &hits {
            let text = |key: &str| hit[key].as_str().unwrap_or_default().to_string();
            let (framed, citation) = (text("framed"), text("citation"));
            check_framing(&framed, &citation)?;
            if let Some(marker) = &step.marker {
                let shown_trusted = framed
                    .lines()
                    .next()
                    .is_some_and(|l| l.contains("trust=\"trusted\""));
                if shown_trusted
                    && text("snippet")
                        .to_lowercase()
                        .contains(&marker.to_lowercase())
                {
                    bail!("{citation} holds {marker:?} and is framed as trusted:\n{framed}");
                }
            }
        }
        Ok(json!({"hits": hits.len()}))
    }
}

/// The turn a call's `context` starts from: the scenario's clock and offset,
/// the owner in person in an interactive session on the `cli` channel, the
/// session's active projects.
fn turn_context(turn: &Turn) -> Value {
    json!({
        "now_ms": turn.now_ms,
        "session_id": null,
        "session_kind": "interactive",
        "channel": "cli",
        "sender": null,
        "sender_is_owner": true,
        "active_projects": turn.projects.keys(),
        "utc_offset_minutes": turn.utc_offset_minutes,
        "taint": null,
    })
}

/// Every call name the component exports, with its parameter and result
/// types (`tests/conformance/calls.json`, for runners that have no type
/// information of their own).
pub fn describe_calls(exports: &[Export]) -> Value {
    let calls: Vec<Value> = exports
        .iter()
        .map(|e| {
            let params: Vec<Value> = e
                .params
                .iter()
                .map(|(name, ty)| json!({"name": name, "type": wit_json::describe_type(ty)}))
                .collect();
            json!({
                "call": e.call,
                "interface": e.interface,
                "function": e.function,
                "params": params,
                "result": e.result.as_ref().map(wit_json::describe_type),
            })
        })
        .collect();
    json!({ "calls": calls })
}
