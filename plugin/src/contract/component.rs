//! The guest: the component's exports, each a one-line call of `adapter`
//! on the live `memory` resource, and the host's embedder and model imports
//! adapted to the crate's traits. Wasm only.

use super::adapter;
use super::bindings::{
    host_embedder, host_model, wit, wit_bootstrap, wit_config, wit_dream, wit_inject, wit_intents,
    wit_recall, wit_report, wit_store, wit_user, wit_write,
};
use crate::contract::api as core;
use crate::contract::error::MemoryError;
use crate::host::embedding::{Embedder, EmbedderInfo};
use std::cell::RefCell;

struct Component;

/// The exported `memory` resource.
pub struct MemoryResource {
    inner: RefCell<crate::Memory>,
}

/// The host's embedder, through the import.
struct HostEmbedder;

impl Embedder for HostEmbedder {
    fn describe(&self) -> Option<EmbedderInfo> {
        host_embedder::describe().map(|i| EmbedderInfo {
            provider: i.provider,
            model: i.model,
            dimensions: i.dimensions,
            max_batch: i.max_batch,
        })
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        host_embedder::embed(texts).map_err(|e| match e {
            host_embedder::EmbedError::Unavailable(m) => format!("unavailable: {m}"),
            host_embedder::EmbedError::Timeout(m) => format!("timed out: {m}"),
            host_embedder::EmbedError::Failed(m) => format!("failed: {m}"),
        })
    }
}

/// The host's language model, through the import.
struct HostModel;

impl crate::host::model::Model for HostModel {
    fn complete(
        &self,
        request: &crate::host::model::CompletionRequest,
    ) -> Result<crate::host::model::Completion, crate::host::model::ModelFailure> {
        use crate::host::model::{ModelFailure, Role};
        let messages = request
            .messages
            .iter()
            .map(|m| host_model::Message {
                role: match m.role {
                    Role::System => host_model::Role::System,
                    Role::User => host_model::Role::User,
                    Role::Assistant => host_model::Role::Assistant,
                    Role::Tool => host_model::Role::Tool,
                },
                content: m.content.clone(),
                tool_call_id: m.tool_call_id.clone(),
                tool_calls: m
                    .tool_calls
                    .iter()
                    .map(|t| host_model::ToolCall {
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
            .map(|t| host_model::ToolDefinition {
                name: t.name.to_string(),
                description: t.description.to_string(),
                parameters_schema: t.parameters_schema.to_string(),
            })
            .collect();
        let answer = host_model::complete(&host_model::CompletionRequest {
            purpose: request.purpose.to_string(),
            messages,
            tools,
            max_output_tokens: request.max_output_tokens,
            timeout_ms: request.timeout_ms,
        });
        match answer {
            Ok(c) => Ok(crate::host::model::Completion {
                text: c.text,
                tool_calls: c
                    .tool_calls
                    .into_iter()
                    .map(|t| crate::host::model::ToolCall {
                        id: t.id,
                        name: t.name,
                        arguments: t.arguments,
                    })
                    .collect(),
            }),
            Err(host_model::ModelError::Unavailable(m)) => Err(ModelFailure::Unavailable(m)),
            Err(host_model::ModelError::Timeout(m)) => Err(ModelFailure::Timeout(m)),
            Err(host_model::ModelError::Failed(m)) => Err(ModelFailure::Failed(m)),
        }
    }
}

impl wit_store::Guest for Component {
    type Memory = MemoryResource;
}

impl wit_store::GuestMemory for MemoryResource {
    fn open_read_only(settings: wit_store::Settings) -> Result<wit_store::Memory, wit::Error> {
        open_memory(settings, crate::Memory::open_read_only)
    }
    fn open(settings: wit_store::Settings) -> Result<wit_store::Memory, wit::Error> {
        open_memory(settings, crate::Memory::open)
    }
    fn sync(&self, request: wit_store::SyncRequest) -> Result<wit_store::SyncReport, wit::Error> {
        adapter::sync(&mut self.inner.borrow_mut(), request)
    }

    fn status(&self) -> Result<wit_store::StatusReport, wit::Error> {
        adapter::status(&mut self.inner.borrow_mut())
    }
}

/// The `Memory` opener of `open` or `open-read-only`, over the host's
/// embedder and model.
type Opener = fn(
    core::Settings,
    Box<dyn Embedder>,
    Box<dyn crate::host::model::Model>,
) -> Result<crate::Memory, MemoryError>;

fn open_memory(
    settings: wit_store::Settings,
    open: Opener,
) -> Result<wit_store::Memory, wit::Error> {
    let settings = adapter::settings(settings);
    let memory = open(settings, Box::new(HostEmbedder), Box::new(HostModel))
        .map_err(adapter::to_wit_error)?;
    Ok(wit_store::Memory::new(MemoryResource {
        inner: RefCell::new(memory),
    }))
}

impl wit_recall::Guest for Component {
    fn search(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_recall::SearchRequest,
    ) -> Result<wit_recall::SearchResult, wit::Error> {
        adapter::search(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn get(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_recall::GetRequest,
    ) -> Result<wit_recall::GetResult, wit::Error> {
        adapter::get(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_bootstrap::Guest for Component {
    fn load(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_bootstrap::BootstrapRequest,
    ) -> Result<wit_bootstrap::BootstrapResult, wit::Error> {
        adapter::load(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_write::Guest for Component {
    fn note(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_write::NoteRequest,
    ) -> Result<wit_write::WriteReport, wit::Error> {
        adapter::note(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn flush(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_write::FlushRequest,
    ) -> Result<wit_write::FlushReport, wit::Error> {
        adapter::flush(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn ingest(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_write::IngestRequest,
    ) -> Result<wit_write::IngestReport, wit::Error> {
        adapter::ingest(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn forget(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_write::ForgetRequest,
    ) -> Result<wit_write::ForgetReport, wit::Error> {
        adapter::forget(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_inject::Guest for Component {
    fn escalate(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_inject::EscalateRequest,
    ) -> Result<wit_inject::Escalation, wit::Error> {
        adapter::escalate(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn trigger_inject(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_inject::InjectRequest,
    ) -> Result<wit_inject::InjectResult, wit::Error> {
        adapter::trigger_inject(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_intents::Guest for Component {
    fn create(
        store: wit_store::MemoryBorrow<'_>,
        spec: wit_intents::IntentSpec,
        context: wit::TurnContext,
    ) -> Result<wit_intents::CreateResult, wit::Error> {
        adapter::create(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            spec,
            context,
        )
    }

    fn list(
        store: wit_store::MemoryBorrow<'_>,
        context: wit::TurnContext,
    ) -> Result<Vec<wit_intents::Intent>, wit::Error> {
        adapter::list(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            context,
        )
    }

    fn cancel(
        store: wit_store::MemoryBorrow<'_>,
        id: i64,
        context: wit::TurnContext,
    ) -> Result<wit_intents::Intent, wit::Error> {
        adapter::cancel(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            id,
            context,
        )
    }

    fn due(
        store: wit_store::MemoryBorrow<'_>,
        at_ms: i64,
    ) -> Result<Vec<wit_intents::Intent>, wit::Error> {
        adapter::due(&mut store.get::<MemoryResource>().inner.borrow_mut(), at_ms)
    }
}

impl wit_user::Guest for Component {
    fn show(store: wit_store::MemoryBorrow<'_>) -> Result<wit_user::UserModel, wit::Error> {
        adapter::show(&mut store.get::<MemoryResource>().inner.borrow_mut())
    }

    fn set(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_user::SetRequest,
    ) -> Result<wit_user::UserModel, wit::Error> {
        adapter::set(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_dream::Guest for Component {
    fn run(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_dream::DreamRequest,
    ) -> Result<wit_dream::DreamReport, wit::Error> {
        adapter::run(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }

    fn rollback(
        store: wit_store::MemoryBorrow<'_>,
        context: wit::TurnContext,
    ) -> Result<wit_dream::RollbackReport, wit::Error> {
        adapter::rollback(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            context,
        )
    }
}

impl wit_report::Guest for Component {
    fn gather(
        store: wit_store::MemoryBorrow<'_>,
        request: wit_report::ReportRequest,
    ) -> Result<wit_report::WorkspaceReport, wit::Error> {
        adapter::gather(
            &mut store.get::<MemoryResource>().inner.borrow_mut(),
            request,
        )
    }
}

impl wit_config::Guest for Component {
    fn describe() -> Vec<wit_config::SettingDoc> {
        adapter::describe()
    }

    fn resolve(
        workspace: String,
        settings_json: String,
    ) -> Result<wit_config::ResolvedConfig, wit::Error> {
        adapter::resolve(workspace, settings_json)
    }
}

super::bindings::export!(Component with_types_in super::bindings);
