//! What runs a scenario's calls: the component in the wasmtime sandbox
//! (`Sandboxed`), or the same crate compiled into this process
//! (`super::native::Native`, no wasm build needed). Both speak the scenario's
//! JSON by the one value rule; the runner above them knows neither.

use super::wit_json;
use crate::host::{error_kind, error_message, CallError, Export};
use crate::session::Session;
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

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
            .map(|c| {
                Ok(CallType {
                    call: c["call"].as_str().context("a call without a name")?.into(),
                    params: c["params"]
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
                    result: c["result"].clone(),
                })
            })
            .collect()
    }

    pub fn takes_memory(ty: &Value) -> bool {
        wit_json::kind(ty).0 == "borrow"
    }
}

pub trait Driver {
    /// Every function the component exports.
    fn calls(&self) -> anyhow::Result<Vec<CallType>>;
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
}

/// The component in the wasmtime sandbox.
pub struct Sandboxed {
    session: Session,
    exports: BTreeMap<String, Export>,
}

impl Sandboxed {
    pub fn new(session: Session) -> Sandboxed {
        let exports = session
            .host
            .exports()
            .into_iter()
            .map(|e| (e.call.clone(), e))
            .collect();
        Sandboxed { session, exports }
    }
}

impl Driver for Sandboxed {
    fn calls(&self) -> anyhow::Result<Vec<CallType>> {
        CallType::from_calls_json(&super::describe_calls(
            &self.exports.values().cloned().collect::<Vec<_>>(),
        ))
    }

    fn call(
        &mut self,
        call: &CallType,
        args: Vec<Option<Value>>,
        extra: Duration,
    ) -> anyhow::Result<Value> {
        let export = self
            .exports
            .get(&call.call)
            .with_context(|| format!("the component exports no `{}`", call.call))?;
        let params = call
            .params
            .iter()
            .zip(args)
            .map(|((name, ty), arg)| {
                arg.map(|json| wit_json::to_val(ty, &json).with_context(|| format!("`{name}`")))
                    .transpose()
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        match self.session.host.call_export(export, extra, params) {
            Ok(value) => Ok(wit_json::to_json(&value)),
            Err(CallError::Memory(error)) => {
                Ok(json!({"err": {"kind": error_kind(&error), "value": error_message(&error)}}))
            }
            Err(error) => bail!("{error}"),
        }
    }

    fn restart(&mut self) {
        self.session.host.reset();
    }

    fn model_calls(&self) -> u64 {
        self.session.host.model_calls()
    }
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
