//! Calls by name with their arguments as JSON: each request completed and
//! checked by the value rule against the function's types (the turn context
//! and the dream gates filled in from their defaults, the argument helpers
//! resolved), made by the driver, and its answer split into the value or the
//! component's error. The conformance runner and the benchmarks both call
//! the component this way.

use super::wit_json::{self, Defaults};
use super::{split, CallType, Run, Turn};
use crate::clock::parse_now;
use anyhow::{anyhow, bail, Context};
use serde_json::{json, Map, Value};
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

/// The component's calls by name (their types asked of the driver once
/// each), and the defaults of the records a request may leave out.
#[derive(Default)]
pub struct Calls {
    types: RefCell<BTreeMap<String, Rc<CallType>>>,
    /// The component's own dream gates (`config.resolve`), asked for the first
    /// time a call takes gates, so setting up touches no instance.
    gates: OnceCell<Value>,
}

/// A call's answer: the ok value, or the component's error, as JSON.
pub type Answer = Result<Value, Value>;

impl Calls {
    pub fn new() -> Calls {
        Calls::default()
    }

    /// The dream gates a request leaves out: the component's resolved
    /// defaults.
    /// Or the component's error (a memory that cannot be opened answers
    /// every call with it).
    fn default_gates(&self, run: &mut Run) -> anyhow::Result<Answer> {
        if let Some(gates) = self.gates.get() {
            return Ok(Ok(gates.clone()));
        }
        let args = json!({"workspace": crate::host::GUEST_WORKSPACE, "settings_json": "{}"});
        let resolved =
            match self.answer(run, "config.resolve", args.as_object().expect("an object"))? {
                Ok(resolved) => resolved,
                Err(error) => return Ok(Err(error)),
            };
        let gates = resolved["dream_gates"].clone();
        Ok(Ok(self.gates.get_or_init(|| gates).clone()))
    }

    fn call_type(&self, run: &Run, name: &str) -> anyhow::Result<Rc<CallType>> {
        if let Some(known) = self.types.borrow().get(name) {
            return Ok(known.clone());
        }
        let call = Rc::new(run.driver.call_type(name)?);
        self.types
            .borrow_mut()
            .insert(name.to_string(), call.clone());
        Ok(call)
    }

    /// Makes the call and renders its answer; a trap or a host failure is
    /// an error of the step.
    pub fn answer(
        &self,
        run: &mut Run,
        name: &str,
        args: &Map<String, Value>,
    ) -> anyhow::Result<Answer> {
        let call = self.call_type(run, name)?;
        let args = self.resolve_helpers(run, &Value::Object(args.clone()))?;
        let args = args.as_object().expect("an object stays an object");
        let mut defaults: Defaults = BTreeMap::from([("context", turn_context(&run.turn))]);
        if call
            .params
            .iter()
            .any(|(_, ty)| wit_json::has_field(ty, "gates"))
        {
            match self.default_gates(run)? {
                Ok(gates) => defaults.insert("gates", gates),
                Err(error) => return Ok(Err(error)),
            };
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
            .call(&call, params, extra)
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
            Value::Object(map) if map.keys().any(|k| k.starts_with('$')) => {
                self.resolve_helper(run, map)?
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

    /// One helper object; its keys are exactly the helper's.
    fn resolve_helper(&self, run: &mut Run, map: &Map<String, Value>) -> anyhow::Result<Value> {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        let allowed: &[&str] = match keys.iter().find(|k| k.starts_with('$')) {
            Some(&"$time") => &["$time"],
            Some(&"$jsonl") => &["$jsonl"],
            Some(&"$call") => &["$call", "field", "args"],
            other => bail!("unknown helper {other:?}; the helpers are $time, $jsonl and $call"),
        };
        if let Some(extra) = keys.iter().find(|k| !allowed.contains(k)) {
            bail!("the helper {} takes no `{extra}`", allowed[0]);
        }
        Ok(match allowed[0] {
            "$time" => {
                let text = map["$time"]
                    .as_str()
                    .context("$time needs a date or time")?;
                json!(parse_now(text)?)
            }
            "$jsonl" => {
                let lines = map["$jsonl"].as_array().context("$jsonl needs an array")?;
                Value::String(lines.iter().map(|line| format!("{line}\n")).collect())
            }
            _ => {
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
        })
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
