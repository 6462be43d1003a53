//! The component in the wasmtime sandbox, as a `Driver`: each call by the
//! export's name, its arguments turned into wasmtime `Val`s by the rule.

use super::{describe_call, no_such_call, search_query, wit_json, CallType, Driver};
use crate::host::{error_kind, error_message, CallError, Export};
use crate::session::Session;
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

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
    fn call_type(&self, call: &str) -> anyhow::Result<CallType> {
        let export = self
            .exports
            .get(call)
            .ok_or_else(|| no_such_call(call, self.exports.keys()))?;
        CallType::from_entry(&describe_call(export))
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
        if let Some(query) = search_query(call, &args) {
            self.session.host.embed_ahead(query);
        }
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

    fn peak_memory_bytes(&self) -> Option<u64> {
        Some(self.session.host.peak_guest_memory() as u64)
    }
}
