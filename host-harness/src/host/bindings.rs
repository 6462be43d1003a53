//! The generated bindings of the `memory-core` world (`wit/`): the one
//! place `bindgen!` runs. The `wit*` aliases name the component's records for
//! the rest of the harness; the host's side of the imports turns the embedder
//! and model calls into `crate::embed` and `crate::model` types and back; the
//! component's error is put in plain words here.

use super::HostState;
use crate::embed::EmbedFailure;
use crate::model::ModelFailure;

wasmtime::component::bindgen!({
    world: "memory-core",
    path: "../wit",
});

pub use exports::openclaw::memory::bootstrap as wit_bootstrap;
pub use exports::openclaw::memory::dream as wit_dream;
pub use exports::openclaw::memory::inject as wit_inject;
pub use exports::openclaw::memory::intents as wit_intents;
pub use exports::openclaw::memory::recall as wit_recall;
pub use exports::openclaw::memory::report as wit_report;
pub use exports::openclaw::memory::store as wit_store;
pub use exports::openclaw::memory::user as wit_user;
pub use exports::openclaw::memory::write as wit_write;
pub use openclaw::memory::types as wit;

impl openclaw::memory::types::Host for HostState {}

impl openclaw::memory::embedder::Host for HostState {
    fn describe(&mut self) -> Option<openclaw::memory::embedder::EmbedderInfo> {
        // An endpoint's description may wait on the network (its first
        // need probes its dimensions): like an embedding, not the call's time.
        let embedder = self.embedder.clone();
        self.clock.waiting(|| embedder.describe()).map(|i| {
            openclaw::memory::embedder::EmbedderInfo {
                provider: i.provider,
                model: i.model,
                dimensions: i.dimensions,
                max_batch: i.max_batch,
            }
        })
    }

    fn embed(
        &mut self,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, openclaw::memory::embedder::EmbedError> {
        use openclaw::memory::embedder::EmbedError;
        let embedder = self.embedder.clone();
        let answer = self.clock.waiting(|| embedder.embed(texts));
        answer.map_err(|e| match e {
            EmbedFailure::Unavailable(m) => EmbedError::Unavailable(m),
            EmbedFailure::Timeout(m) => EmbedError::Timeout(m),
            EmbedFailure::Failed(m) => EmbedError::Failed(m),
        })
    }
}

impl openclaw::memory::model::Host for HostState {
    fn complete(
        &mut self,
        request: openclaw::memory::model::CompletionRequest,
    ) -> Result<openclaw::memory::model::Completion, openclaw::memory::model::ModelError> {
        use crate::model::{ChatMessage, ToolCall, ToolSpec};
        use openclaw::memory::model::{Completion, ModelError, Role};
        let messages = request
            .messages
            .into_iter()
            .map(|m| ChatMessage {
                role: match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                }
                .to_string(),
                content: m.content,
                tool_call_id: m.tool_call_id,
                tool_calls: m
                    .tool_calls
                    .into_iter()
                    .map(|t| ToolCall {
                        id: t.id,
                        name: t.name,
                        arguments: t.arguments,
                    })
                    .collect(),
            })
            .collect();
        let tools = request
            .tools
            .into_iter()
            .map(|t| ToolSpec {
                name: t.name,
                description: t.description,
                parameters_schema: t.parameters_schema,
            })
            .collect();
        let model = self.model.clone();
        let reply = self.clock.waiting(|| {
            model.complete(
                messages,
                tools,
                request.max_output_tokens,
                request.timeout_ms,
            )
        });
        match reply {
            Ok(reply) => Ok(Completion {
                text: reply.text,
                tool_calls: reply
                    .tool_calls
                    .into_iter()
                    .map(|t| openclaw::memory::model::ToolCall {
                        id: t.id,
                        name: t.name,
                        arguments: t.arguments,
                    })
                    .collect(),
            }),
            Err(ModelFailure::Unavailable(m)) => Err(ModelError::Unavailable(m)),
            Err(ModelFailure::Timeout(m)) => Err(ModelError::Timeout(m)),
            Err(ModelFailure::Failed(m)) => Err(ModelError::Failed(m)),
        }
    }
}

pub fn error_kind(e: &wit::Error) -> &'static str {
    match e {
        wit::Error::InvalidInput(_) => "invalid-input",
        wit::Error::NotFound(_) => "not-found",
        wit::Error::AccessDenied(_) => "access-denied",
        wit::Error::TooLarge(_) => "too-large",
        wit::Error::Io(_) => "io",
        wit::Error::WorkspaceReadOnly(_) => "workspace-read-only",
        wit::Error::Index(_) => "index",
        wit::Error::Internal(_) => "internal",
    }
}

pub fn error_message(e: &wit::Error) -> &str {
    match e {
        wit::Error::InvalidInput(m)
        | wit::Error::NotFound(m)
        | wit::Error::AccessDenied(m)
        | wit::Error::TooLarge(m)
        | wit::Error::Io(m)
        | wit::Error::WorkspaceReadOnly(m)
        | wit::Error::Index(m)
        | wit::Error::Internal(m) => m,
    }
}
