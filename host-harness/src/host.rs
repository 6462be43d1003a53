//! The wasmtime host: loads the memory-core component (compiled once and
//! cached), grants it the workspace as its only preopened directory, lends it
//! the embedder and model imports, and runs every call under an epoch deadline
//! and a memory cap. A trap or a timeout kills only the instance: the next call
//! gets a fresh one, and SQLite's journal keeps the index whole.

use crate::embed::{EmbedFailure, Lender};
use crate::model::{ModelFailure, ModelLender};
use anyhow::{bail, Context};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

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

/// An event-based intent with the component's defaults: any channel and
/// sender, the default budget, cool-down and expiry, words only.
pub fn trigger_intent(text: impl Into<String>, triggers: Vec<String>) -> wit_intents::IntentSpec {
    wit_intents::IntentSpec {
        text: text.into(),
        triggers,
        due_at_ms: None,
        channel: None,
        sender: None,
        expires_in_ms: None,
        fire_budget: None,
        cooldown_ms: None,
        semantic: false,
        origin: wit_write::ContentOrigin::SenderMessage,
    }
}

/// Where the workspace appears inside the sandbox.
pub const GUEST_WORKSPACE: &str = "/workspace";
/// How often the epoch ticks; deadlines are whole ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

#[derive(Debug, Clone)]
pub struct HostLimits {
    /// Wall-clock deadline of one call into the component.
    pub call_timeout: Duration,
    /// Cap on the component's linear memory, in bytes.
    pub memory_bytes: usize,
}

/// Everything one instance's store holds.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: MemoryCap,
    embedder: Arc<Lender>,
    model: Arc<ModelLender>,
}

/// Caps the component's linear memory and remembers a refused growth, so a
/// trap that follows can be reported as what it is.
struct MemoryCap {
    max_bytes: usize,
    refused: bool,
    /// The largest linear memory the instance has asked for (and got).
    peak_bytes: usize,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.max_bytes;
        self.refused |= !allowed;
        if allowed {
            self.peak_bytes = self.peak_bytes.max(desired);
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl openclaw::memory::types::Host for HostState {}

impl openclaw::memory::embedder::Host for HostState {
    fn describe(&mut self) -> Option<openclaw::memory::embedder::EmbedderInfo> {
        self.embedder
            .describe()
            .map(|i| openclaw::memory::embedder::EmbedderInfo {
                provider: i.provider,
                model: i.model,
                dimensions: i.dimensions,
                max_batch: i.max_batch,
            })
    }

    fn embed(
        &mut self,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, openclaw::memory::embedder::EmbedError> {
        use openclaw::memory::embedder::EmbedError;
        self.embedder.embed(texts).map_err(|e| match e {
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
        match self.model.complete(
            messages,
            tools,
            request.max_output_tokens,
            request.timeout_ms,
        ) {
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

/// A failure of a call, as the harness reports it.
#[derive(Debug)]
pub enum CallError {
    /// The component answered with its documented error.
    Memory(wit::Error),
    /// The instance trapped, ran past its deadline or out of memory; it was
    /// discarded and the next call gets a fresh one.
    Trap(String),
    /// The host could not set up the call.
    Host(anyhow::Error),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Memory(e) => write!(f, "{}: {}", error_kind(e), error_message(e)),
            CallError::Trap(m) => write!(f, "the component stopped: {m}"),
            CallError::Host(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for CallError {}

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

struct Live {
    store: Store<HostState>,
    bindings: MemoryCore,
    memory: ResourceAny,
}

/// A loaded component bound to one workspace.
pub struct MemoryHost {
    engine: Engine,
    component: Component,
    linker: Linker<HostState>,
    workspace: PathBuf,
    settings: wit_store::Settings,
    limits: HostLimits,
    embedder: Arc<Lender>,
    model: Arc<ModelLender>,
    live: Option<Live>,
    ticking: Arc<AtomicBool>,
    /// Grant the workspace read-only and open the memory with
    /// `open-read-only` (the review page).
    read_only: bool,
    /// The command whose failed calls are recorded in the workspace's
    /// health file (`crate::health`); `None`: not recorded.
    health_label: Option<String>,
}

impl Drop for MemoryHost {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::Relaxed);
    }
}

impl MemoryHost {
    pub fn new(
        component_path: &Path,
        cache_dir: Option<&Path>,
        workspace: &Path,
        settings: wit_store::Settings,
        limits: HostLimits,
        embedder: Lender,
        model: ModelLender,
    ) -> anyhow::Result<MemoryHost> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        // `MEMORY_HARNESS_PROFILE=perfmap`: name the guest's compiled code for
        // `perf` (/tmp/perf-<pid>.map), to profile where a call's time goes.
        if std::env::var("MEMORY_HARNESS_PROFILE").as_deref() == Ok("perfmap") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)?;
        let component = load_component(&engine, component_path, cache_dir)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        MemoryCore::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        let ticking = Arc::new(AtomicBool::new(true));
        {
            let engine = engine.clone();
            let ticking = ticking.clone();
            std::thread::spawn(move || {
                while ticking.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            });
        }
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("the workspace {} cannot be opened", workspace.display()))?;
        Ok(MemoryHost {
            engine,
            component,
            linker,
            workspace,
            settings,
            limits,
            embedder: Arc::new(embedder),
            model: Arc::new(model),
            live: None,
            ticking,
            read_only: false,
            health_label: None,
        })
    }

    /// From the next instance on, the workspace is granted read-only and the
    /// memory opened with `open-read-only`: the sandbox itself cannot write.
    pub fn set_read_only(&mut self) {
        self.read_only = true;
        self.live = None;
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Records every failed call from now on in the workspace's health file
    /// (`.memory/host-health.json`) as `command`; never on a read-only host.
    pub fn record_health(&mut self, command: &str) {
        self.health_label = Some(command.to_string());
    }

    fn note_failure(&self, error: &CallError) {
        let Some(command) = &self.health_label else {
            return;
        };
        if self.read_only {
            return;
        }
        let message = error.to_string();
        let (kind, trap, deadline) = match error {
            CallError::Memory(e) => (error_kind(e), false, false),
            CallError::Trap(m) if m.contains("past its deadline") => ("deadline", true, true),
            CallError::Trap(m) if m.contains("memory cap") => ("memory-cap", true, false),
            CallError::Trap(_) => ("trap", true, false),
            CallError::Host(_) => ("host", false, false),
        };
        let failure = crate::health::Failure {
            command,
            kind,
            message: &message,
            trap,
            deadline,
        };
        if let Err(e) = crate::health::record(&self.workspace, &failure) {
            eprintln!(
                "note: the failure was not recorded in {}: {}",
                crate::health::HEALTH_FILE,
                io_cause(&e)
            );
        }
    }

    fn instantiate(&mut self) -> Result<Live, CallError> {
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stderr();
        // The harness calls the component synchronously: let file operations
        // run on the calling thread instead of a round trip through a
        // blocking thread pool for every read and write.
        wasi.allow_blocking_current_thread(true);
        let perms = if self.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        wasi.preopened_dir(&self.workspace, GUEST_WORKSPACE, perms)
            .map_err(|e| CallError::Host(e.into()))?;
        let state = HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limits: MemoryCap {
                max_bytes: self.limits.memory_bytes,
                refused: false,
                peak_bytes: 0,
            },
            embedder: self.embedder.clone(),
            model: self.model.clone(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(self.deadline_ticks(Duration::ZERO));
        let bindings = match MemoryCore::instantiate(&mut store, &self.component, &self.linker) {
            Ok(bindings) => bindings,
            Err(error) => {
                return Err(explain_trap(
                    error,
                    &self.limits,
                    store.data().limits.refused,
                ))
            }
        };
        let store_exports = bindings.openclaw_memory_store().memory();
        let opened = if self.read_only {
            store_exports.call_open_read_only(&mut store, &self.settings)
        } else {
            store_exports.call_open(&mut store, &self.settings)
        };
        let opened = match opened {
            Ok(opened) => opened,
            Err(error) => {
                return Err(explain_trap(
                    error,
                    &self.limits,
                    store.data().limits.refused,
                ))
            }
        };
        let memory = opened.map_err(CallError::Memory)?;
        Ok(Live {
            store,
            bindings,
            memory,
        })
    }

    /// The epoch deadline of one call: the call timeout, plus `extra` for a
    /// call that waits on the model.
    fn deadline_ticks(&self, extra: Duration) -> u64 {
        let deadline = self.limits.call_timeout + extra;
        (deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
    }

    /// Runs one call on a live instance (instantiating one if needed). If the
    /// call traps, the instance is discarded.
    fn call<T>(
        &mut self,
        f: impl FnOnce(
            &mut Store<HostState>,
            &MemoryCore,
            ResourceAny,
        ) -> wasmtime::Result<Result<T, wit::Error>>,
    ) -> Result<T, CallError> {
        self.call_with_extra_time(Duration::ZERO, f)
    }

    /// `call`, with `extra` time on top of the call timeout.
    fn call_with_extra_time<T>(
        &mut self,
        extra: Duration,
        f: impl FnOnce(
            &mut Store<HostState>,
            &MemoryCore,
            ResourceAny,
        ) -> wasmtime::Result<Result<T, wit::Error>>,
    ) -> Result<T, CallError> {
        let this = &mut *self;
        let attempt = move || -> Result<T, CallError> {
            if this.live.is_none() {
                this.live = Some(this.instantiate()?);
            }
            let ticks = this.deadline_ticks(extra);
            let live = this.live.as_mut().expect("instantiated above");
            live.store.set_epoch_deadline(ticks);
            match f(&mut live.store, &live.bindings, live.memory) {
                Ok(answer) => answer.map_err(CallError::Memory),
                Err(error) => {
                    let out_of_memory = live.store.data().limits.refused;
                    this.live = None;
                    Err(explain_trap(error, &this.limits, out_of_memory))
                }
            }
        };
        let result = attempt();
        if let Err(error) = &result {
            self.note_failure(error);
        }
        result
    }

    pub fn sync(
        &mut self,
        request: &wit_store::SyncRequest,
    ) -> Result<wit_store::SyncReport, CallError> {
        self.call(|store, b, m| {
            b.openclaw_memory_store()
                .memory()
                .call_sync(store, m, *request)
        })
    }

    pub fn status(&mut self) -> Result<wit_store::StatusReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_store().memory().call_status(store, m))
    }

    pub fn search(
        &mut self,
        request: &wit_recall::SearchRequest,
    ) -> Result<wit_recall::SearchResult, CallError> {
        self.call(|store, b, m| b.openclaw_memory_recall().call_search(store, m, request))
    }

    pub fn get(
        &mut self,
        request: &wit_recall::GetRequest,
    ) -> Result<wit_recall::GetResult, CallError> {
        self.call(|store, b, m| b.openclaw_memory_recall().call_get(store, m, request))
    }

    pub fn bootstrap(
        &mut self,
        request: &wit_bootstrap::BootstrapRequest,
    ) -> Result<wit_bootstrap::BootstrapResult, CallError> {
        self.call(|store, b, m| b.openclaw_memory_bootstrap().call_load(store, m, request))
    }

    pub fn note(
        &mut self,
        request: &wit_write::NoteRequest,
    ) -> Result<wit_write::WriteReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_write().call_note(store, m, request))
    }

    pub fn inject(
        &mut self,
        request: &wit_inject::InjectRequest,
    ) -> Result<wit_inject::InjectResult, CallError> {
        self.call(|store, b, m| {
            b.openclaw_memory_inject()
                .call_trigger_inject(store, m, request)
        })
    }

    pub fn intent_create(
        &mut self,
        spec: &wit_intents::IntentSpec,
        context: &wit::TurnContext,
    ) -> Result<wit_intents::CreateResult, CallError> {
        self.call(|store, b, m| {
            b.openclaw_memory_intents()
                .call_create(store, m, spec, context)
        })
    }

    pub fn intent_list(
        &mut self,
        context: &wit::TurnContext,
    ) -> Result<Vec<wit_intents::Intent>, CallError> {
        self.call(|store, b, m| b.openclaw_memory_intents().call_list(store, m, context))
    }

    pub fn intent_cancel(
        &mut self,
        id: i64,
        context: &wit::TurnContext,
    ) -> Result<wit_intents::Intent, CallError> {
        self.call(|store, b, m| {
            b.openclaw_memory_intents()
                .call_cancel(store, m, id, context)
        })
    }

    pub fn due(&mut self, at_ms: i64) -> Result<Vec<wit_intents::Intent>, CallError> {
        self.call(|store, b, m| b.openclaw_memory_intents().call_due(store, m, at_ms))
    }

    pub fn escalate(
        &mut self,
        request: &wit_inject::EscalateRequest,
    ) -> Result<wit_inject::Escalation, CallError> {
        self.call(|store, b, m| b.openclaw_memory_inject().call_escalate(store, m, request))
    }

    pub fn user_show(&mut self) -> Result<wit_user::UserModel, CallError> {
        self.call(|store, b, m| b.openclaw_memory_user().call_show(store, m))
    }

    pub fn user_set(
        &mut self,
        request: &wit_user::SetRequest,
    ) -> Result<wit_user::UserModel, CallError> {
        self.call(|store, b, m| b.openclaw_memory_user().call_set(store, m, request))
    }

    pub fn dream(
        &mut self,
        request: &wit_dream::DreamRequest,
    ) -> Result<wit_dream::DreamReport, CallError> {
        // A sweep waits for one model turn on top of its own work.
        let model_turn = Duration::from_millis(request.gates.model_timeout_ms as u64);
        self.call_with_extra_time(model_turn, |store, b, m| {
            b.openclaw_memory_dream().call_run(store, m, request)
        })
    }

    pub fn dream_rollback(
        &mut self,
        context: &wit::TurnContext,
    ) -> Result<wit_dream::RollbackReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_dream().call_rollback(store, m, context))
    }

    pub fn report(
        &mut self,
        request: &wit_report::ReportRequest,
    ) -> Result<wit_report::WorkspaceReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_report().call_gather(store, m, *request))
    }

    /// The largest linear memory the live instance has grown to, in bytes
    /// (0 before the first call).
    pub fn peak_guest_memory(&self) -> usize {
        self.live
            .as_ref()
            .map_or(0, |l| l.store.data().limits.peak_bytes)
    }

    /// Model-import calls made by the component so far (all instances).
    pub fn model_calls(&self) -> u64 {
        self.model.calls()
    }

    pub fn flush(
        &mut self,
        request: &wit_write::FlushRequest,
    ) -> Result<wit_write::FlushReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_write().call_flush(store, m, request))
    }

    pub fn ingest(
        &mut self,
        request: &wit_write::IngestRequest,
    ) -> Result<wit_write::IngestReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_write().call_ingest(store, m, request))
    }

    pub fn forget(
        &mut self,
        request: &wit_write::ForgetRequest,
    ) -> Result<wit_write::ForgetReport, CallError> {
        self.call(|store, b, m| b.openclaw_memory_write().call_forget(store, m, request))
    }

    /// Changes the deadline and memory cap; the memory cap applies from the
    /// next instance on.
    pub fn set_limits(&mut self, limits: HostLimits) {
        self.limits = limits;
    }

    /// Drops the live instance (the next call starts a fresh one).
    pub fn reset(&mut self) {
        self.live = None;
    }

    /// Whether an instance is live (a trap discards it).
    pub fn has_live_instance(&self) -> bool {
        self.live.is_some()
    }
}

fn explain_trap(error: wasmtime::Error, limits: &HostLimits, out_of_memory: bool) -> CallError {
    let fresh = "the next call starts a fresh instance";
    if let Some(wasmtime::Trap::Interrupt) = error.downcast_ref::<wasmtime::Trap>() {
        return CallError::Trap(format!(
            "the call ran past its deadline of {} ms and was stopped; {fresh}",
            limits.call_timeout.as_millis()
        ));
    }
    if out_of_memory {
        return CallError::Trap(format!(
            "the component needed more than its memory cap of {} MiB and was stopped; {fresh}",
            limits.memory_bytes >> 20
        ));
    }
    CallError::Trap(format!("{error:#}; {fresh}"))
}

/// Loads the component, compiling it only when no cached compilation for this
/// exact file and engine exists. The cache key is the sha-256 of the `.wasm`
/// and the engine's compatibility hash, so a rebuilt component or another
/// wasmtime never reuses stale code.
pub fn load_component(
    engine: &Engine,
    path: &Path,
    cache_dir: Option<&Path>,
) -> anyhow::Result<Component> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read the component {} (build it with `cargo build -p memory-core --target wasm32-wasip2 --release`)",
            path.display()
        )
    })?;
    let Some(cache_dir) = cache_dir else {
        return Ok(Component::new(engine, &bytes)?);
    };
    let mut hasher = Sha256::new();
    hasher.update(&bytes);
    std::hash::Hash::hash(
        &engine.precompile_compatibility_hash(),
        &mut HashWriter(&mut hasher),
    );
    let key: String = hasher
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cached = cache_dir.join(format!("memory-core-{key}.cwasm"));
    if cached.is_file() {
        // SAFETY: the file was written by `precompile_component` of an engine
        // with the same compatibility hash (part of its name), in a cache
        // directory the harness owns.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &cached) } {
            return Ok(component);
        }
    }
    let compiled = engine.precompile_component(&bytes)?;
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("cannot create {}", cache_dir.display()))?;
    let tmp = cached.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &compiled)?;
    std::fs::rename(&tmp, &cached)?;
    // SAFETY: just produced by this engine.
    Ok(unsafe { Component::deserialize(engine, &compiled) }?)
}

struct HashWriter<'a>(&'a mut Sha256);

impl std::hash::Hasher for HashWriter<'_> {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// Guards a workspace against a second harness process: SQLite runs in
/// exclusive mode inside the sandbox, so one process at a time may hold the
/// index. The lock is an OS file lock, released when the process ends, even
/// by a crash; the file names its holder while held. A workspace the
/// JavaScript host serves (`.memory/js-host.lock` naming a live process, an
/// OpenClaw gateway) is refused too: Node has no file locks, so that host
/// keeps a pid file, and it honours this lock the same way.
pub struct WorkspaceLock {
    file: std::fs::File,
    exclusive: bool,
}

/// The lock file of the JavaScript host (hosts/openclaw/lib/lock.js).
const JS_HOST_LOCK: &str = "js-host.lock";

/// The live process other than this one a pid lock file names, if any.
fn live_holder(lock_file: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(lock_file).ok()?;
    let pid: u32 = text.trim().strip_prefix("pid ")?.trim().parse().ok()?;
    let alive = Path::new("/proc")
        .is_dir()
        .then(|| Path::new(&format!("/proc/{pid}")).exists());
    // Without /proc there is no telling: a named holder counts as alive.
    (pid != std::process::id() && alive.unwrap_or(true)).then_some(pid)
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        // Name no holder once released (the OS lock goes with the file); a
        // shared holder named none.
        if self.exclusive {
            let _ = self.file.set_len(0);
        }
    }
}

/// A refusal of the workspace, downcastable from the `anyhow` error that
/// carries it, whose message starts with its kind.
macro_rules! workspace_refusal {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name(pub String);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($kind, ": {}"), self.0)
            }
        }

        impl std::error::Error for $name {}
    };
}

workspace_refusal!(
    /// A write found the workspace busy (another harness or the JavaScript
    /// host) and the lock did not come free within the wait: nothing was done.
    WorkspaceBusy,
    "busy"
);

workspace_refusal!(
    /// A write refused because the workspace cannot be written (a read-only
    /// file system, or a directory this process may not write): nothing was
    /// done.
    WorkspaceReadOnly,
    "workspace-read-only"
);

/// How a session may use the workspace.
pub enum WorkspaceAccess {
    /// The exclusive lock: read and write.
    Writable(WorkspaceLock),
    /// Another process is writing: a shared lock is held (writers wait for
    /// it), and the index is read as it is, not synced. The string says why.
    Shared(WorkspaceLock, String),
    /// The workspace cannot be written: no lock is needed, the index is read
    /// as it is. The string says why (the system's error).
    ReadOnly(String),
}

/// The cause of `error` when it says the workspace may not be written.
pub fn read_only_cause(error: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind as K;
    match error.kind() {
        K::ReadOnlyFilesystem => Some(match error.raw_os_error() {
            Some(n) => format!("the file system is read-only (os error {n})"),
            None => "the file system is read-only".into(),
        }),
        K::PermissionDenied => Some(match error.raw_os_error() {
            Some(n) => format!("permission denied (os error {n})"),
            None => "permission denied".into(),
        }),
        _ => None,
    }
}

/// An I/O error of the harness with its cause in plain words.
pub fn io_cause(error: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let plain = match error.kind() {
        K::StorageFull => "no space left on the device (the disk is full)",
        K::QuotaExceeded => "no space left: the disk quota is exceeded",
        K::ReadOnlyFilesystem => "a read-only file system",
        K::PermissionDenied => "permission denied",
        _ => return error.to_string(),
    };
    format!("{plain} ({error})")
}

/// How often a waiting lock is retried.
const LOCK_POLL: Duration = Duration::from_millis(25);

impl WorkspaceLock {
    /// The exclusive lock, refused at once when another process holds it.
    pub fn acquire(workspace: &Path) -> anyhow::Result<WorkspaceLock> {
        WorkspaceLock::acquire_within(workspace, Duration::ZERO)
    }

    /// The lock file, opened for writing (created with `.memory/` if
    /// needed); `Err(Ok(cause))` when the workspace cannot be written.
    fn open_file(workspace: &Path) -> Result<(std::fs::File, PathBuf), anyhow::Result<String>> {
        let dir = workspace.join(".memory");
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Err(match read_only_cause(&e) {
                Some(cause) => Ok(cause),
                None => Err(anyhow::anyhow!(
                    "cannot create {}: {}",
                    dir.display(),
                    io_cause(&e)
                )),
            });
        }
        let path = dir.join("harness.lock");
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => Ok((file, path)),
            Err(e) => Err(match read_only_cause(&e) {
                Some(cause) => Ok(cause),
                None => Err(anyhow::anyhow!(
                    "cannot open {}: {}",
                    path.display(),
                    io_cause(&e)
                )),
            }),
        }
    }

    /// The exclusive lock, waiting up to `wait` for another harness or the
    /// JavaScript host to let go. Fails with `WorkspaceBusy` after the wait,
    /// `WorkspaceReadOnly` when the workspace cannot be written.
    pub fn acquire_within(workspace: &Path, wait: Duration) -> anyhow::Result<WorkspaceLock> {
        let (file, path) = match WorkspaceLock::open_file(workspace) {
            Ok(opened) => opened,
            Err(Ok(cause)) => {
                return Err(WorkspaceReadOnly(format!(
                    "{} cannot be written: {cause}; nothing was written (reads still work)",
                    workspace.display()
                ))
                .into())
            }
            Err(Err(error)) => return Err(error),
        };
        let deadline = std::time::Instant::now() + wait;
        loop {
            let refusal = match WorkspaceLock::try_exclusive(workspace, &file, &path)? {
                None => break,
                Some(refusal) => refusal,
            };
            if std::time::Instant::now() >= deadline {
                let waited = if wait.is_zero() {
                    String::new()
                } else {
                    format!(" (waited {} ms, limits.lockWaitMs)", wait.as_millis())
                };
                return Err(WorkspaceBusy(format!("{refusal}{waited}")).into());
            }
            std::thread::sleep(LOCK_POLL);
        }
        Ok(WorkspaceLock::holding(file))
    }

    /// The exclusive lock just taken on `file`, which is made to name this
    /// process. Naming it is best effort: on a full disk the lock still
    /// holds (the OS lock is what excludes another harness), and the reads
    /// a full disk allows still work; a note says so.
    fn holding(mut file: std::fs::File) -> WorkspaceLock {
        use std::io::{Seek, Write};
        let named = file
            .set_len(0)
            .and_then(|()| file.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| write!(file, "pid {}", std::process::id()));
        if let Err(e) = named {
            eprintln!(
                "note: the workspace lock could not name its holder: {}",
                io_cause(&e)
            );
        }
        WorkspaceLock {
            file,
            exclusive: true,
        }
    }

    /// Takes the exclusive lock if free: `None`, or why not.
    fn try_exclusive(
        workspace: &Path,
        file: &std::fs::File,
        path: &Path,
    ) -> anyhow::Result<Option<String>> {
        if let Some(pid) = live_holder(&workspace.join(".memory").join(JS_HOST_LOCK)) {
            return Ok(Some(format!(
                "the JavaScript host (pid {pid}, an OpenClaw gateway or CLI) is using the memory of {}; stop it or use `openclaw memory …` instead",
                workspace.display()
            )));
        }
        match file.try_lock() {
            Ok(()) => Ok(None),
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(path).unwrap_or_default();
                Ok(Some(format!(
                    "another memory-harness ({}) is using the index of {}; wait for it to finish, then retry",
                    if holder.trim().is_empty() {
                        "an unknown process"
                    } else {
                        holder.trim()
                    },
                    workspace.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(anyhow::anyhow!(
                "cannot lock the workspace: {}",
                io_cause(&e)
            )),
        }
    }

    /// Access for a command that only reads: the exclusive lock when free
    /// (the index is synced as usual); a shared lock, waiting up to `wait`
    /// for a writer to finish, when another harness holds it (the index is
    /// read as it is); no lock at all when the workspace cannot be written.
    pub fn acquire_for_reading(
        workspace: &Path,
        wait: Duration,
    ) -> anyhow::Result<WorkspaceAccess> {
        let (file, path) = match WorkspaceLock::open_file(workspace) {
            Ok(opened) => opened,
            Err(Ok(cause)) => return Ok(WorkspaceAccess::ReadOnly(cause)),
            Err(Err(error)) => return Err(error),
        };
        let first = match WorkspaceLock::try_exclusive(workspace, &file, &path)? {
            None => return Ok(WorkspaceAccess::Writable(WorkspaceLock::holding(file))),
            Some(refusal) => refusal,
        };
        // SQLite runs with locks only inside the sandbox: a reader must not
        // read while another process commits. A shared lock waits for the
        // writer; readers share it.
        let deadline = std::time::Instant::now() + wait;
        loop {
            let js_host = live_holder(&workspace.join(".memory").join(JS_HOST_LOCK)).is_some();
            if !js_host {
                match file.try_lock_shared() {
                    Ok(()) => {
                        return Ok(WorkspaceAccess::Shared(
                            WorkspaceLock {
                                file,
                                exclusive: false,
                            },
                            format!("{first}; read as it is"),
                        ))
                    }
                    Err(std::fs::TryLockError::WouldBlock) => {}
                    Err(std::fs::TryLockError::Error(e)) => {
                        bail!("cannot lock the workspace: {}", io_cause(&e))
                    }
                }
            }
            if std::time::Instant::now() >= deadline {
                return Err(WorkspaceBusy(format!(
                    "{first} (waited {} ms, limits.lockWaitMs)",
                    wait.as_millis()
                ))
                .into());
            }
            std::thread::sleep(LOCK_POLL);
        }
    }
}
