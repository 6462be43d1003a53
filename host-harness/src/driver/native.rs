//! The conformance driver over the crate compiled into this process: no
//! sandbox and no wasm build, so the inner loop of a change to the memory
//! logic is a native `cargo test`. A call's arguments go into the generated
//! bindings' types through serde, then through the very conversions the
//! guest's exports use (`memory_core::contract::adapter`), one dispatch line
//! per function; the answer comes back the same way. The types are those of
//! `calls.json` (compiled in), the embedder and model the harness's own.
//!
//! What it cannot show: the sandbox itself (the preopen, the call deadline,
//! the memory cap) — those are the wasmtime driver's; a panic here is caught
//! and reported as a trap, and the memory is opened again.

use super::{no_such_call, search_query, wit_json, CallType, Driver};
use crate::embed::{EmbedFailure, Lender};
use crate::model::{ChatMessage, ModelFailure, ModelLender, ToolCall, ToolSpec};
use anyhow::{anyhow, bail, Context};
use memory_core::contract::adapter as call;
use memory_core::host::embedding::{Embedder, EmbedderInfo};
use memory_core::host::model as crate_model;
use memory_core::Memory;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The calls and their types, as the built component describes them.
const CALLS_JSON: &str = include_str!("../../../tests/conformance/calls.json");

/// `CALLS_JSON` by call name, read once.
fn described() -> anyhow::Result<&'static BTreeMap<String, CallType>> {
    static CALLS: OnceLock<BTreeMap<String, CallType>> = OnceLock::new();
    if let Some(calls) = CALLS.get() {
        return Ok(calls);
    }
    let calls = CallType::from_calls_json(&serde_json::from_str(CALLS_JSON)?)?
        .into_iter()
        .map(|c| (c.call.clone(), c))
        .collect();
    Ok(CALLS.get_or_init(|| calls))
}

pub struct Native {
    workspace: PathBuf,
    /// The scenario's settings, for `config.resolve` (`{"search.maxResults": 8}`).
    settings_json: String,
    embedder: Arc<Lender>,
    model: Arc<ModelLender>,
    memory: Option<Memory>,
}

impl Native {
    pub fn new(
        workspace: PathBuf,
        settings: &Map<String, Value>,
        embedder: Lender,
        model: ModelLender,
    ) -> Native {
        Native {
            workspace,
            settings_json: Value::Object(settings.clone()).to_string(),
            embedder: Arc::new(embedder),
            model: Arc::new(model),
            memory: None,
        }
    }

    /// The open memory, opened as the guest's `store.memory.open` would be
    /// (the scenario's settings through `config.resolve`), or the error that
    /// refused it, serialized.
    fn memory(&mut self) -> Result<&mut Memory, Value> {
        if self.memory.is_none() {
            let workspace = self.workspace.display().to_string();
            let opened = call::resolve(workspace, self.settings_json.clone())
                .map(|resolved| call::settings(resolved.settings))
                .and_then(|settings| {
                    Memory::open(
                        settings,
                        Box::new(LentEmbedder(self.embedder.clone())),
                        Box::new(LentModel(self.model.clone())),
                    )
                    .map_err(call::to_wit_error)
                });
            match opened {
                Ok(memory) => self.memory = Some(memory),
                Err(error) => return Err(serialize(&error)),
            }
        }
        Ok(self.memory.as_mut().expect("opened above"))
    }
}

impl Driver for Native {
    fn call_type(&self, call: &str) -> anyhow::Result<CallType> {
        let calls = described()?;
        calls
            .get(call)
            .cloned()
            .ok_or_else(|| no_such_call(call, calls.keys()))
    }

    fn call(
        &mut self,
        call: &CallType,
        args: Vec<Option<Value>>,
        _extra: Duration,
    ) -> anyhow::Result<Value> {
        if let Some(query) = search_query(call, &args) {
            self.embedder.embed_ahead(query);
        }
        // The arguments in the bindings' serde shapes, the memory's left out.
        let args: Vec<Value> = call
            .params
            .iter()
            .zip(args)
            .filter_map(|((_, ty), arg)| arg.map(|json| wit_json::to_serde(ty, &json)))
            .collect();
        // Every call needs the memory open, as in the sandbox (where an
        // instance is an open memory): refused, the call answers with that.
        let name = call.call.clone();
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.memory() {
                Ok(memory) if call.params.iter().any(|(_, ty)| CallType::takes_memory(ty)) => {
                    on_memory(memory, &name, args)
                }
                Ok(_) => free(&name, args),
                Err(error) => Ok(serde_json::json!({ "Err": error })),
            }));
        let answer = match outcome {
            Ok(answer) => answer?,
            Err(panic) => {
                // A panic is this driver's trap: the next call opens again.
                self.memory = None;
                bail!("the memory panicked: {}", panic_text(&panic));
            }
        };
        Ok(wit_json::from_serde(&call.result, &answer))
    }

    fn restart(&mut self) {
        self.memory = None;
    }

    fn model_calls(&self) -> u64 {
        self.model.calls()
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        None
    }
}

/// One line per function that takes the memory.
fn on_memory(memory: &mut Memory, name: &str, args: Vec<Value>) -> anyhow::Result<Value> {
    let m = memory;
    Ok(match name {
        "store.sync" => with1(m, args, call::sync)?,
        "store.status" => serialize(&call::status(m)),
        "bootstrap.load" => with1(m, args, call::load)?,
        "recall.search" => with1(m, args, call::search)?,
        "recall.get" => with1(m, args, call::get)?,
        "write.note" => with1(m, args, call::note)?,
        "write.flush" => with1(m, args, call::flush)?,
        "write.ingest" => with1(m, args, call::ingest)?,
        "write.forget" => with1(m, args, call::forget)?,
        "inject.trigger-inject" => with1(m, args, call::trigger_inject)?,
        "inject.escalate" => with1(m, args, call::escalate)?,
        "intents.create" => with2(m, args, call::create)?,
        "intents.list" => with1(m, args, call::list)?,
        "intents.cancel" => with2(m, args, call::cancel)?,
        "intents.due" => with1(m, args, call::due)?,
        "user.show" => serialize(&call::show(m)),
        "user.set" => with1(m, args, call::set)?,
        "dream.run" => with1(m, args, call::run)?,
        "dream.rollback" => with1(m, args, call::rollback)?,
        "report.gather" => with1(m, args, call::gather)?,
        other => bail!("the native driver cannot call `{other}` (the runner opens the memory)"),
    })
}

/// One line per function that takes no memory.
fn free(name: &str, args: Vec<Value>) -> anyhow::Result<Value> {
    Ok(match name {
        "config.describe" => serialize(&call::describe()),
        "config.resolve" => {
            let [workspace, settings_json] = arguments::<2>(args)?;
            serialize(&call::resolve(from(workspace)?, from(settings_json)?))
        }
        other => bail!("the native driver cannot call `{other}`"),
    })
}

fn with1<A: DeserializeOwned, R: Serialize>(
    memory: &mut Memory,
    args: Vec<Value>,
    f: fn(&mut Memory, A) -> R,
) -> anyhow::Result<Value> {
    let [a] = arguments::<1>(args)?;
    Ok(serialize(&f(memory, from(a)?)))
}

fn with2<A: DeserializeOwned, B: DeserializeOwned, R: Serialize>(
    memory: &mut Memory,
    args: Vec<Value>,
    f: fn(&mut Memory, A, B) -> R,
) -> anyhow::Result<Value> {
    let [a, b] = arguments::<2>(args)?;
    Ok(serialize(&f(memory, from(a)?, from(b)?)))
}

fn arguments<const N: usize>(args: Vec<Value>) -> anyhow::Result<[Value; N]> {
    let count = args.len();
    args.try_into()
        .map_err(|_| anyhow!("expected {N} arguments, got {count}"))
}

fn from<T: DeserializeOwned>(json: Value) -> anyhow::Result<T> {
    serde_json::from_value(json).context("the bindings' types refused the argument")
}

fn serialize<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("the bindings' types serialize")
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

/// The harness's embedder, lent to the crate as the guest's import lends it.
struct LentEmbedder(Arc<Lender>);

impl Embedder for LentEmbedder {
    fn describe(&self) -> Option<EmbedderInfo> {
        self.0.describe().map(|i| EmbedderInfo {
            provider: i.provider,
            model: i.model,
            dimensions: i.dimensions,
            max_batch: i.max_batch,
        })
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        // The words of the guest's import adapter (contract/component.rs).
        self.0.embed(texts.to_vec()).map_err(|e| match e {
            EmbedFailure::Unavailable(m) => format!("unavailable: {m}"),
            EmbedFailure::Timeout(m) => format!("timed out: {m}"),
            EmbedFailure::Failed(m) => format!("failed: {m}"),
        })
    }
}

/// The harness's model, lent to the crate as the guest's import lends it.
struct LentModel(Arc<ModelLender>);

impl crate_model::Model for LentModel {
    fn complete(
        &self,
        request: &crate_model::CompletionRequest,
    ) -> Result<crate_model::Completion, crate_model::ModelFailure> {
        use crate_model::Role;
        let messages = request
            .messages
            .iter()
            .map(|m| ChatMessage {
                role: match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                }
                .to_string(),
                content: m.content.clone(),
                tool_call_id: m.tool_call_id.clone(),
                tool_calls: m
                    .tool_calls
                    .iter()
                    .map(|t| ToolCall {
                        id: t.id.clone(),
                        name: t.name.clone(),
                        arguments: t.arguments.clone(),
                    })
                    .collect(),
            })
            .collect();
        let tools = request
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.to_string(),
                description: t.description.to_string(),
                parameters_schema: t.parameters_schema.to_string(),
            })
            .collect();
        let reply = self.0.complete(
            messages,
            tools,
            request.max_output_tokens,
            request.timeout_ms,
        );
        match reply {
            Ok(reply) => Ok(crate_model::Completion {
                text: reply.text,
                tool_calls: reply
                    .tool_calls
                    .into_iter()
                    .map(|t| crate_model::ToolCall {
                        id: t.id,
                        name: t.name,
                        arguments: t.arguments,
                    })
                    .collect(),
            }),
            Err(ModelFailure::Unavailable(m)) => Err(crate_model::ModelFailure::Unavailable(m)),
            Err(ModelFailure::Timeout(m)) => Err(crate_model::ModelFailure::Timeout(m)),
            Err(ModelFailure::Failed(m)) => Err(crate_model::ModelFailure::Failed(m)),
        }
    }
}
