//! The harness's configuration: a TOML file whose keys follow OpenClaw's
//! configuration surface where one applies (`memory.search.provider`,
//! `memory.search.query.maxResults`, `memory.search.store.fts.tokenizer`, …),
//! overridden by command-line flags. Deny by default: the component gets the
//! workspace directory and nothing else.
//!
//! The component's settings (`[memory.search.query]`, `[memory.bootstrap]`,
//! `[memory.dreaming]`, …) are the component's: their defaults and ranges
//! come from its table (`memory_core::config`, which the component exports as
//! `config`), the file only names them (`crate::settings`). The host's own
//! settings (limits, the embedder, the model, `serve`) have their defaults
//! here, one constant each.

use crate::embed::EmbedderChoice;
use crate::host::{wit_dream, wit_store, HostLimits, GUEST_WORKSPACE};
use crate::model::ModelChoice;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub workspace: Option<PathBuf>,
    /// The `.wasm` component to load.
    pub component: Option<PathBuf>,
    /// Where compiled components are cached.
    #[serde(rename = "cacheDir")]
    pub cache_dir: Option<PathBuf>,
    /// The owner's IANA time zone (default: the host's: `TZ`, else
    /// `/etc/localtime`, else UTC).
    #[serde(rename = "timeZone")]
    pub time_zone: Option<String>,
    #[serde(default)]
    pub limits: LimitsConfig,
    #[serde(default)]
    pub memory: MemoryConfig,
    #[serde(default)]
    pub model: ModelConfig,
    #[serde(default)]
    pub serve: ServeConfig,
}

/// `serve`: delivery of time-based intents.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServeConfig {
    /// Seconds between due checks (default `DEFAULT_DUE_EVERY_SECONDS`; 0 =
    /// none).
    pub due_every_seconds: Option<u64>,
    /// Run through `sh -c` for each fired intent, its JSON on stdin.
    pub deliver_command: Option<String>,
    /// Append each fired intent to this file as a JSON line.
    pub deliver_file: Option<PathBuf>,
}

/// The language model lent to the component (the memory flush).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelConfig {
    /// `none` (default), `scripted` or `openai`.
    pub provider: Option<String>,
    /// `scripted`: the JSONL file of replies.
    pub script: Option<PathBuf>,
    /// `openai`: the endpoint's base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: Option<String>,
    /// `openai`: the model name.
    pub name: Option<String>,
    /// `openai`: the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The longest any model call may take; also the deadline of dreaming's
    /// consolidation turn (the component's `dreaming.modelTimeoutMs`), whose
    /// default it takes.
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LimitsConfig {
    /// Deadline of one call into the component (default
    /// `DEFAULT_CALL_TIMEOUT_MS`).
    pub call_timeout_ms: Option<u64>,
    /// Cap on the component's memory (default `DEFAULT_MEMORY_MIB`).
    pub memory_mib: Option<usize>,
    /// Deadline of one embedder call (default `DEFAULT_EMBED_TIMEOUT_MS`).
    pub embed_timeout_ms: Option<u64>,
    /// How long a command waits for a workspace another process holds
    /// (default `DEFAULT_LOCK_WAIT_MS`).
    pub lock_wait_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub bootstrap: BootstrapConfig,
    #[serde(default)]
    pub dreaming: DreamingConfig,
}

/// Dreaming (OpenClaw's `dreaming.*`: the sweep's schedule and the deep
/// phase's gate).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DreamingConfig {
    /// Cron expression of the sweep for `serve` (default
    /// `DEFAULT_DREAM_SCHEDULE`, in the local time zone).
    pub frequency: Option<String>,
    pub min_score: Option<f32>,
    pub min_recall_count: Option<u32>,
    pub min_unique_queries: Option<u32>,
    pub recency_half_life_days: Option<f32>,
    /// Most promotions per sweep.
    pub limit: Option<u32>,
    pub light_lookback_days: Option<u32>,
    pub rem_lookback_days: Option<u32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchConfig {
    /// `minilm` (local all-MiniLM-L6-v2), `openai` (an OpenAI-compatible
    /// endpoint, `remote`), `none` (FTS-only), `test`, `failing`.
    pub provider: Option<String>,
    /// `openai`: the embedding model's name.
    pub model: Option<String>,
    /// `openai`: where the endpoint is.
    #[serde(default)]
    pub remote: RemoteConfig,
    /// Directory holding the local model's weights (see scripts/fetch-model.sh).
    pub model_dir: Option<PathBuf>,
    #[serde(default)]
    pub query: QueryConfig,
    #[serde(default)]
    pub store: StoreConfig,
    #[serde(default)]
    pub chunking: ChunkingConfig,
}

/// An OpenAI-compatible embeddings endpoint (OpenClaw's
/// `memorySearch.remote`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RemoteConfig {
    /// Base URL: `http://127.0.0.1:11434/v1`, `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The vectors' length; asked of the endpoint once (and kept in the
    /// cache directory) when not given.
    pub dimensions: Option<u32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QueryConfig {
    pub max_results: Option<u32>,
    pub min_score: Option<f32>,
    pub candidates_per_leg: Option<u32>,
    pub vector_weight: Option<f32>,
    pub recency_half_life_days: Option<f32>,
    pub recency_floor: Option<f32>,
    pub mmr_lambda: Option<f32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    #[serde(default)]
    pub fts: FtsConfig,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FtsConfig {
    /// `unicode61` or `trigram`.
    pub tokenizer: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkingConfig {
    pub tokens: Option<u32>,
    pub overlap: Option<u32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BootstrapConfig {
    pub max_file_chars: Option<u32>,
    pub max_user_file_chars: Option<u32>,
    pub max_total_chars: Option<u32>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> anyhow::Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        toml::from_str(&text)
            .with_context(|| format!("{} is not a valid configuration", path.display()))
    }
}

/// A setting the component's table refused (out of range, unknown value).
#[derive(Debug)]
pub struct InvalidSetting(pub String);

impl std::fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid-input: {}", self.0)
    }
}

impl std::error::Error for InvalidSetting {}

/// How long a command waits for a busy workspace by default, in ms.
pub const DEFAULT_LOCK_WAIT_MS: u64 = 10_000;
/// The epoch deadline of one call into the component by default, in ms.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 30_000;
/// The cap on the component's memory by default, in MiB.
pub const DEFAULT_MEMORY_MIB: usize = 1024;
/// The host-side deadline of one embedder call by default, in ms.
pub const DEFAULT_EMBED_TIMEOUT_MS: u64 = 30_000;
/// Seconds between `serve`'s due checks by default.
pub const DEFAULT_DUE_EVERY_SECONDS: u64 = 60;

/// Everything the harness needs to host the component, resolved.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub workspace: PathBuf,
    pub component: PathBuf,
    pub cache_dir: Option<PathBuf>,
    pub limits: HostLimits,
    pub embedder: EmbedderChoice,
    pub embed_timeout: Duration,
    /// How long a command waits for a busy workspace (`limits.lockWaitMs`).
    pub lock_wait: Duration,
    pub model: ModelChoice,
    pub model_timeout: Duration,
    pub settings: wit_store::Settings,
    pub dream_gates: wit_dream::DreamGates,
    /// When `serve` sweeps (a cron expression, on the local wall clock).
    pub dream_schedule: String,
    /// The owner's time zone: local dates, offset-less times and `serve`'s
    /// schedule follow it.
    pub time_zone: jiff::tz::TimeZone,
    /// `serve`'s delivery settings from the file (flags override them).
    pub serve: ServeConfig,
}

/// Command-line values that override the file.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub workspace: Option<PathBuf>,
    pub component: Option<PathBuf>,
    pub embedder: Option<String>,
    pub model_dir: Option<PathBuf>,
    /// Component settings over the file's, by the component's key
    /// (`search.recencyHalfLifeDays`); see `crate::settings`.
    pub settings: serde_json::Map<String, serde_json::Value>,
    pub no_cache: bool,
    /// `none`, `scripted:FILE` or `openai`.
    pub model: Option<String>,
    /// An IANA time zone name.
    pub time_zone: Option<String>,
}

pub fn resolve(file: &ConfigFile, o: &Overrides) -> anyhow::Result<Resolved> {
    let d = &file.memory.dreaming;
    let workspace = o
        .workspace
        .clone()
        .or_else(|| file.workspace.clone())
        .context("no workspace: pass --workspace DIR (or set `workspace` in the configuration)")?;
    let component = o
        .component
        .clone()
        .or_else(|| std::env::var_os("MEMORY_CORE_COMPONENT").map(PathBuf::from))
        .or_else(|| file.component.clone())
        .unwrap_or_else(default_component_path);
    let cache_dir = if o.no_cache {
        None
    } else {
        file.cache_dir
            .clone()
            .or_else(|| Some(cache_home().join("components")))
    };
    let search = &file.memory.search;
    let file_provider = search.provider.as_deref().unwrap_or("minilm");
    let provider = o
        .embedder
        .clone()
        .unwrap_or_else(|| file_provider.to_string());
    let model_dir = o
        .model_dir
        .clone()
        .or_else(|| file_model_dir(search.model_dir.as_ref(), file_provider, &provider));
    // The endpoint is checked only when it is the embedder: a
    // [memory.search.remote] block with an unset key must not stop
    // `--embedder none` or `minilm`.
    let remote = match provider.as_str() {
        "openai" | "remote" => remote_embedder(search)?,
        _ => None,
    };
    let embedder = EmbedderChoice::parse(&provider, model_dir, remote)?;
    let mut user = crate::settings::file_settings(file)?;
    user.extend(o.settings.clone());
    let config =
        memory_core::config::resolve(GUEST_WORKSPACE, &user.into()).map_err(|e| match e {
            memory_core::MemoryError::InvalidInput(m) => anyhow::Error::new(InvalidSetting(m)),
            other => anyhow::anyhow!("{other}"),
        })?;
    let settings = crate::host::wit_settings(&config.settings);
    let dream_gates = crate::host::wit_dream_gates(&config.gates);
    let m = &file.model;
    let model = match o
        .model
        .clone()
        .or_else(|| m.provider.clone())
        .as_deref()
        .unwrap_or("none")
    {
        "none" => ModelChoice::None,
        "scripted" => ModelChoice::Scripted(
            m.script
                .clone()
                .context("model.provider = scripted needs model.script")?,
        ),
        name if name.starts_with("scripted:") => {
            ModelChoice::Scripted(PathBuf::from(&name["scripted:".len()..]))
        }
        "openai" => ModelChoice::OpenAi {
            url: m
                .url
                .clone()
                .context("model.provider = openai needs model.url")?,
            model: m
                .name
                .clone()
                .context("model.provider = openai needs model.name")?,
            api_key_env: m.api_key_env.clone(),
        },
        other => anyhow::bail!("unknown model {other:?}; use none, scripted:FILE or openai"),
    };
    let time_zone =
        crate::clock::resolve_zone(o.time_zone.as_deref().or(file.time_zone.as_deref()))?;
    Ok(Resolved {
        workspace,
        component,
        cache_dir,
        limits: HostLimits {
            call_timeout: Duration::from_millis(
                file.limits
                    .call_timeout_ms
                    .unwrap_or(DEFAULT_CALL_TIMEOUT_MS),
            ),
            memory_bytes: file.limits.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB) << 20,
        },
        embedder,
        embed_timeout: Duration::from_millis(
            file.limits
                .embed_timeout_ms
                .unwrap_or(DEFAULT_EMBED_TIMEOUT_MS),
        ),
        lock_wait: Duration::from_millis(file.limits.lock_wait_ms.unwrap_or(DEFAULT_LOCK_WAIT_MS)),
        model,
        // `model.timeoutMs` is dreaming's turn too (`crate::settings`): by
        // default the cap is the longest turn the component asks for.
        model_timeout: Duration::from_millis(
            m.timeout_ms.unwrap_or(dream_gates.model_timeout_ms as u64),
        ),
        settings,
        dream_gates,
        dream_schedule: d
            .frequency
            .clone()
            .unwrap_or_else(|| DEFAULT_DREAM_SCHEDULE.into()),
        time_zone,
        serve: file.serve.clone(),
    })
}

/// OpenClaw's default sweep time: 03:00 every day (local time).
pub const DEFAULT_DREAM_SCHEDULE: &str = "0 3 * * *";

/// `$XDG_CACHE_HOME/memory-core`, else `~/.cache/memory-core`.
/// The endpoint `[memory.search.remote]` describes, if it names one; its
/// key variable must be set.
fn remote_embedder(
    search: &SearchConfig,
) -> anyhow::Result<Option<crate::embed::remote::RemoteEmbedder>> {
    let Some(url) = search.remote.base_url.clone() else {
        return Ok(None);
    };
    let model = search
        .model
        .clone()
        .context("memory.search.remote needs memory.search.model (the embedding model's name)")?;
    if let Some(var) = &search.remote.api_key_env {
        if std::env::var_os(var).is_none() {
            anyhow::bail!("memory.search.remote.apiKeyEnv names {var}, which is not set");
        }
    }
    crate::http::base_url(&url).context("memory.search.remote.baseUrl")?;
    Ok(Some(crate::embed::remote::RemoteEmbedder {
        url,
        model,
        api_key_env: search.remote.api_key_env.clone(),
        dimensions: search.remote.dimensions,
    }))
}

pub fn cache_home() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("memory-core")
}

/// The file's `modelDir` when it is meant for the embedder in use: it holds
/// the local model the file's provider names (MiniLM, the default local
/// model, when it names none or a remote one), so a `--embedder` naming
/// another local model looks in that model's own directory instead of
/// loading, and failing on, the wrong files.
fn file_model_dir(dir: Option<&PathBuf>, file_provider: &str, provider: &str) -> Option<PathBuf> {
    use crate::embed::encoder::LocalModel;
    let meant = LocalModel::named(file_provider).unwrap_or(LocalModel::MiniLm);
    dir.filter(|_| LocalModel::named(provider) == Some(meant))
        .cloned()
}

/// Where the default model (all-MiniLM-L6-v2) is looked for.
pub fn default_model_dir() -> PathBuf {
    crate::embed::encoder::LocalModel::MiniLm.default_dir(&cache_home())
}

/// The component next to the harness in a Cargo target directory
/// (`<target>/release/memory-harness` → `<target>/wasm32-wasip2/release/memory_core.wasm`),
/// else beside the executable.
pub fn default_component_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // Test binaries live one level deeper, in `<target>/<profile>/deps`.
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    let beside_target = dir.parent().map(|target| {
        target
            .join("wasm32-wasip2")
            .join("release")
            .join("memory_core.wasm")
    });
    match beside_target {
        Some(path) if path.is_file() => path,
        _ => dir.join("memory_core.wasm"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_model_dir_serves_only_the_model_it_was_written_for() {
        let dir = PathBuf::from("/models/all-MiniLM-L6-v2");
        let d = Some(&dir);
        // No provider in the file: its directory is MiniLM's.
        assert_eq!(file_model_dir(d, "minilm", "minilm"), Some(dir.clone()));
        assert_eq!(file_model_dir(d, "minilm", "local"), Some(dir.clone()));
        assert_eq!(file_model_dir(d, "minilm", "mpnet"), None);
        assert_eq!(
            file_model_dir(d, "mpnet", "all-mpnet-base-v2"),
            Some(dir.clone())
        );
        assert_eq!(file_model_dir(d, "mpnet", "minilm"), None);
        // A remote provider's file: its modelDir can only be MiniLM's.
        assert_eq!(file_model_dir(d, "openai", "minilm"), Some(dir.clone()));
        assert_eq!(file_model_dir(d, "openai", "mpnet"), None);
        assert_eq!(file_model_dir(d, "minilm", "openai"), None);
        assert_eq!(file_model_dir(None, "minilm", "minilm"), None);
    }
}
