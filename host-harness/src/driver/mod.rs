//! What makes the component's calls for the conformance runner and the
//! benchmarks: the component in the wasmtime sandbox (`Sandboxed`), or the
//! same crate compiled into this process (`Native`, no wasm build). Both
//! take and give JSON by the one value rule (`wit_json`), from the calls'
//! types as data; `Calls` makes a call by name over either.

mod calls;
mod native;
mod sandboxed;
pub mod wit_json;

pub use self::calls::{Answer, Calls};
pub use self::native::Native;
pub use self::sandboxed::Sandboxed;
use crate::host::Export;
use crate::project::ActiveProjects;
use anyhow::Context;
use serde_json::{json, Value};
use std::time::Duration;

/// A driver and the turn its calls are made in.
pub struct Run {
    pub driver: Box<dyn Driver>,
    pub turn: Turn,
}

/// The clock and the host's active projects: what a call's `context`
/// starts from.
pub struct Turn {
    pub now_ms: i64,
    pub utc_offset_minutes: i32,
    pub projects: ActiveProjects,
}

/// One function a scenario can call, with its types as data (an entry of
/// `calls.json`).
#[derive(Debug, Clone)]
pub struct CallType {
    /// `<interface>.<function>`.
    pub call: String,
    /// `(name, type)` of each parameter; a `borrow` is the open memory.
    pub params: Vec<(String, Value)>,
    /// The result's type, `null` for none.
    pub result: Value,
}

impl CallType {
    /// The entries of `calls.json`'s `calls`.
    pub fn from_calls_json(calls: &Value) -> anyhow::Result<Vec<CallType>> {
        calls["calls"]
            .as_array()
            .context("calls.json has no `calls` list")?
            .iter()
            .map(CallType::from_entry)
            .collect()
    }

    /// One entry of `calls.json` (`describe_call`'s form).
    pub fn from_entry(entry: &Value) -> anyhow::Result<CallType> {
        Ok(CallType {
            call: entry["call"]
                .as_str()
                .context("a call without a name")?
                .into(),
            params: entry["params"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap_or_default().to_string(),
                        p["type"].clone(),
                    )
                })
                .collect(),
            result: entry["result"].clone(),
        })
    }

    pub fn takes_memory(ty: &Value) -> bool {
        wit_json::kind(ty).0 == "borrow"
    }
}

pub trait Driver {
    /// The function a scenario names `call` (`recall.search`), with its
    /// types; an error lists what there is.
    fn call_type(&self, call: &str) -> anyhow::Result<CallType>;
    /// Makes `call` with `args` (by parameter, completed by the rule; `None`
    /// where the open memory goes) and renders its answer by the rule. The
    /// memory failing to open answers `{"err": …}` as the call would; an
    /// `Err` is a trap or a failure of the driver.
    fn call(
        &mut self,
        call: &CallType,
        args: Vec<Option<Value>>,
        extra: Duration,
    ) -> anyhow::Result<Value>;
    /// Drops the open memory; the next call opens it again.
    fn restart(&mut self);
    /// How many times the memory has asked the model so far.
    fn model_calls(&self) -> u64;
    /// The most linear memory the guest has held, where it is measured.
    fn peak_memory_bytes(&self) -> Option<u64>;
}

/// An answer's result arm: `Ok` the value, `Err` the component's error.
pub fn split(result_type: &Value, rendered: Value) -> Result<Value, Value> {
    if wit_json::kind(result_type).0 != "result" {
        return Ok(rendered);
    }
    match rendered {
        Value::Object(mut arms) if arms.len() == 1 => match (arms.remove("ok"), arms.remove("err"))
        {
            (Some(ok), _) => Ok(ok),
            (_, Some(err)) => Err(err),
            _ => Ok(Value::Object(arms)),
        },
        other => Ok(other),
    }
}

/// Every call name the component exports, with its parameter and result
/// types (`tests/conformance/calls.json`, for runners that have no type
/// information of their own).
pub fn describe_calls(exports: &[Export]) -> Value {
    json!({ "calls": exports.iter().map(describe_call).collect::<Vec<_>>() })
}

/// One export as an entry of `calls.json`.
pub fn describe_call(export: &Export) -> Value {
    let params: Vec<Value> = export
        .params
        .iter()
        .map(|(name, ty)| json!({"name": name, "type": wit_json::describe_type(ty)}))
        .collect();
    json!({
        "call": export.call,
        "interface": export.interface,
        "function": export.function,
        "params": params,
        "result": export.result.as_ref().map(wit_json::describe_type),
    })
}

/// The query of a `recall.search` call, which the host embeds ahead of
/// the guest's asking.
fn search_query<'a>(call: &CallType, args: &'a [Option<Value>]) -> Option<&'a str> {
    (call.call == "recall.search")
        .then(|| args.iter().flatten().find_map(|a| a.get("query")?.as_str()))
        .flatten()
}

/// The error for a call name no export has.
fn no_such_call<'a>(call: &str, names: impl Iterator<Item = &'a String>) -> anyhow::Error {
    anyhow::anyhow!(
        "the component exports no `{call}`; it exports {}",
        names.cloned().collect::<Vec<_>>().join(", ")
    )
}
