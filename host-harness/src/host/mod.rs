//! The wasmtime host: loads the memory-core component (compiled once and
//! cached), grants it the workspace as its only preopened directory, lends it
//! the embedder and model imports, and runs every call under an epoch deadline
//! and a memory cap. A trap or a timeout kills only the instance: the next call
//! gets a fresh one, and SQLite's journal keeps the index whole.
//!
//! The generated bindings stay inside this module (`bindings`); the rest of
//! the harness names the component's records through the `wit*` aliases
//! re-exported here. The workspace lock is in `workspace_lock`.

mod bindings;
mod exports;
mod settings;
mod workspace_lock;

use self::bindings::MemoryCore;
pub use self::bindings::{
    error_kind, error_message, wit, wit_bootstrap, wit_dream, wit_inject, wit_intents, wit_recall,
    wit_report, wit_store, wit_user, wit_write,
};
pub use self::exports::Export;
pub use self::settings::{wit_dream_gates, wit_settings};
pub use self::workspace_lock::{
    io_cause, read_only_cause, set_lock_program, WorkspaceAccess, WorkspaceBusy, WorkspaceLock,
    WorkspaceReadOnly,
};
use crate::embed::Lender;
use crate::model::ModelLender;
use anyhow::Context;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, HasSelf, Instance, Linker, ResourceAny, ResourceTable, Val};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

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
    clock: CallClock,
}

/// The running call's own time: the wall clock since it started, less the
/// time spent waiting on the embedder or the model (which have their own
/// timeouts, `embedTimeoutMs` and the model's). A first index with a slow
/// embedder is then never stopped for the embedder's time, and a runaway
/// guest still is.
struct CallClock {
    started: Instant,
    waited: Duration,
    allowed: Duration,
}

impl CallClock {
    fn new() -> CallClock {
        CallClock {
            started: Instant::now(),
            waited: Duration::ZERO,
            allowed: Duration::ZERO,
        }
    }

    fn start(&mut self, allowed: Duration) {
        *self = CallClock {
            allowed,
            ..CallClock::new()
        };
    }

    /// Runs `wait` (a host import's blocking work), not counted as the call's.
    fn waiting<T>(&mut self, wait: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let answer = wait();
        self.waited += started.elapsed();
        answer
    }

    /// The call's time left, or `None` when it is spent.
    fn left(&self) -> Option<Duration> {
        own_time_left(self.started.elapsed(), self.waited, self.allowed)
    }
}

/// `allowed` less the part of `elapsed` that was not spent `waited`.
fn own_time_left(elapsed: Duration, waited: Duration, allowed: Duration) -> Option<Duration> {
    let own = elapsed.saturating_sub(waited);
    allowed.checked_sub(own).filter(|left| !left.is_zero())
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

struct Live {
    store: Store<HostState>,
    instance: Instance,
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
            crate::notes::note(format!(
                "the failure was not recorded in {}: {}",
                crate::health::HEALTH_FILE,
                io_cause(&e)
            ));
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
            clock: CallClock::new(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        let (timeout, _) = self.deadline(Duration::ZERO);
        store.data_mut().clock.start(timeout);
        store.set_epoch_deadline(ticks(timeout));
        // At the deadline, the time spent waiting on the embedder or the
        // model is given back; only the guest's own time stops it.
        store.epoch_deadline_callback(|ctx| {
            Ok(match ctx.data().clock.left() {
                Some(left) => wasmtime::UpdateDeadline::Continue(ticks(left)),
                None => wasmtime::UpdateDeadline::Interrupt,
            })
        });
        let instantiated = self
            .linker
            .instantiate(&mut store, &self.component)
            .and_then(|instance| Ok((instance, MemoryCore::new(&mut store, &instance)?)));
        let (instance, bindings) = match instantiated {
            Ok(both) => both,
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
            instance,
            bindings,
            memory,
        })
    }

    /// The deadline of one call: the call timeout, plus `extra` for a call
    /// that waits on the model; and its epoch ticks.
    fn deadline(&self, extra: Duration) -> (Duration, u64) {
        let deadline = self.limits.call_timeout + extra;
        (deadline, ticks(deadline))
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
        self.run_on_live(extra, |live| {
            f(&mut live.store, &live.bindings, live.memory)
        })
    }

    /// Runs `f` on a live instance (instantiating one if needed) under the
    /// call's deadline; a trap discards the instance.
    fn run_on_live<T>(
        &mut self,
        extra: Duration,
        f: impl FnOnce(&mut Live) -> wasmtime::Result<Result<T, wit::Error>>,
    ) -> Result<T, CallError> {
        let this = &mut *self;
        let attempt = move || -> Result<T, CallError> {
            if this.live.is_none() {
                this.live = Some(this.instantiate()?);
            }
            let (timeout, ticks) = this.deadline(extra);
            let live = this.live.as_mut().expect("instantiated above");
            live.store.data_mut().clock.start(timeout);
            live.store.set_epoch_deadline(ticks);
            match f(live) {
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

    /// Every function the component exports, with its types.
    pub fn exports(&self) -> Vec<Export> {
        exports::exported_functions(&self.engine, &self.component)
    }

    /// Starts embedding a search's query before the guest runs (see
    /// [`Lender::embed_ahead`]): `search` and every call of the
    /// `recall.search` export by name do. (The guest's own searches, an
    /// escalation model's `memory_search` tool, embed as they go.)
    pub fn embed_ahead(&self, query: &str) {
        self.embedder.embed_ahead(query);
    }

    /// Calls `export` with `params` (`None` where the open memory goes: a
    /// `borrow<memory>` parameter) and returns its result as the component
    /// gave it (a `result` still holds the component's own error). `extra` is
    /// time on top of the call timeout.
    pub fn call_export(
        &mut self,
        export: &Export,
        extra: Duration,
        params: Vec<Option<Val>>,
    ) -> Result<Val, CallError> {
        self.run_on_live(extra, |live| {
            let func = live
                .instance
                .get_export_index(&mut live.store, None, &export.interface)
                .and_then(|i| {
                    live.instance
                        .get_export_index(&mut live.store, Some(&i), &export.function)
                })
                .and_then(|i| live.instance.get_func(&mut live.store, i))
                .ok_or_else(|| {
                    wasmtime::Error::msg(format!("the component exports no {}", export.call))
                })?;
            let params: Vec<Val> = params
                .into_iter()
                .map(|p| p.unwrap_or(Val::Resource(live.memory)))
                .collect();
            let mut results = vec![Val::Bool(false); export.result.iter().count()];
            func.call(&mut live.store, &params, &mut results)?;
            Ok(Ok(results.pop().unwrap_or(Val::Tuple(Vec::new()))))
        })
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
        self.embed_ahead(&request.query);
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

/// Whole epoch ticks in `time`, at least one.
fn ticks(time: Duration) -> u64 {
    (time.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
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

/// The exports of the component at `path`, without instantiating it.
pub fn component_exports(path: &Path) -> anyhow::Result<Vec<Export>> {
    let engine = Engine::default();
    let component = load_component(&engine, path, None)?;
    Ok(exports::exported_functions(&engine, &component))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_spent_waiting_on_the_embedder_is_given_back() {
        let s = Duration::from_secs;
        // 40 s of wall clock, 35 of them in the embedder: 5 s used of 30.
        assert_eq!(own_time_left(s(40), s(35), s(30)), Some(s(25)));
        // The guest's own 30 s are spent whatever the embedder took.
        assert_eq!(own_time_left(s(100), s(70), s(30)), None);
        assert_eq!(own_time_left(s(31), s(0), s(30)), None);
        // Waits longer than the wall clock (clock granularity) never add time.
        assert_eq!(own_time_left(s(1), s(2), s(30)), Some(s(30)));
    }
}
