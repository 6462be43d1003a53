//! The global flags every command takes, and what they resolve to: the
//! configuration (the file, then the flags over it) and the clock.

use anyhow::Context;
use clap::Args;
use memory_harness::clock::{fixed_zone, parse_local, system_now_ms};
use memory_harness::config::{resolve, ConfigFile, Overrides, Resolved};
use memory_harness::settings::flag_help;
use std::path::PathBuf;

#[derive(Args, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// The command, as the health record names it (set by `cli::run`).
    #[arg(skip)]
    pub command_label: Option<String>,
    /// The agent workspace (MEMORY.md, USER.md, memory/*.md); the component's only directory.
    #[arg(long, global = true)]
    pub workspace: Option<PathBuf>,
    /// A fixed clock: YYYY-MM-DD (midnight UTC), RFC 3339, or a local
    /// YYYY-MM-DDTHH:MM[:SS] in the time zone. A numeric offset
    /// (2026-12-02T23:30:00-05:00) is the local offset for the whole run,
    /// instead of the zone's; Z names the instant only.
    #[arg(long, global = true)]
    pub now: Option<String>,
    /// The owner's IANA time zone (e.g. Europe/Lisbon): local dates (daily
    /// notes), times typed without an offset and serve's schedule follow
    /// it. Default: `timeZone` in the configuration, else the host's (TZ,
    /// else /etc/localtime, else UTC).
    #[arg(long, global = true, value_name = "ZONE")]
    pub time_zone: Option<String>,
    /// Embedder: minilm (default, local all-MiniLM-L6-v2), mpnet (local
    /// all-mpnet-base-v2: larger, slower), openai (the endpoint in
    /// [memory.search.remote]), none (FTS-only); test doubles:
    /// test (deterministic), slow (test, 150 ms a call), failing, nan,
    /// wrong-dims.
    #[arg(long, global = true, value_parser = embedder_names())]
    pub embedder: Option<String>,
    /// Print JSON; an error is then one JSON object on stdout
    /// ({"error": {"kind", "message", "exit_code", "path"?, "argument"?}}).
    #[arg(long, global = true)]
    pub json: bool,
    /// Configuration file (TOML); default: ./memory-harness.toml when
    /// present, else $XDG_CONFIG_HOME/memory-core/config.toml (~/.config
    /// when XDG_CONFIG_HOME is unset).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// More on stderr: what was resolved (configuration file, workspace,
    /// component, embedder, model).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Less on stderr: no notes and no progress (errors still show).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// The component (.wasm); default: next to this binary in the Cargo target directory.
    #[arg(long, global = true)]
    pub component: Option<PathBuf>,
    /// Directory of the local model's weights (default
    /// ~/.cache/memory-core/models/all-MiniLM-L6-v2, or all-mpnet-base-v2 with --embedder mpnet).
    #[arg(long, global = true)]
    pub model_dir: Option<PathBuf>,
    // The help shows the component's default (memory_core::config).
    #[arg(long, global = true, help = flag_help(
        "Half-life in days of the decaying part of a daily note's recency; 0 = time-neutral ranking",
        "search.recencyHalfLifeDays",
    ))]
    pub half_life_days: Option<f32>,
    #[arg(long, global = true, help = flag_help(
        "Share of a daily note's score recency never takes away (0 = pure decay)",
        "search.recencyFloor",
    ))]
    pub recency_floor: Option<f32>,
    #[arg(long, global = true, value_parser = ["unicode61", "trigram"], help = flag_help(
        "FTS tokenizer: unicode61 or trigram (changing it rebuilds the index)",
        "search.tokenizer",
    ))]
    pub tokenizer: Option<String>,
    /// Compile the component afresh instead of using the compiled cache.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// The git repository the turn runs in: its project key (the normalised
    /// origin remote, else the root path) becomes the active project.
    #[arg(long, global = true)]
    pub repo: Option<PathBuf>,
    /// Language model: none (default), scripted:FILE, or openai (see [model] in the configuration).
    #[arg(long, global = true)]
    pub model: Option<String>,
    /// The turn's taint: the lowest class of what its context held
    /// (untrusted: web pages, tool output, untrusted recall, a non-owner's
    /// words; system: scaffolding). What the call writes is classed no
    /// higher, and an agent-derived intent is refused.
    #[arg(long, global = true, value_name = "CLASS", value_parser = ["owner", "agent", "untrusted", "system"])]
    pub taint: Option<String>,
}

impl Global {
    /// The configuration: the file (`--config`, else ./memory-harness.toml
    /// when present), with the flags over it; `fallback_workspace` when no
    /// `--workspace` is given.
    pub fn resolved(&self, fallback_workspace: Option<PathBuf>) -> anyhow::Result<Resolved> {
        let config_path = self.config.clone().or_else(default_config_file);
        if let Some(path) = &config_path {
            memory_harness::notes::detail(format!("configuration: {}", path.display()));
        }
        let file = match &config_path {
            Some(path) => ConfigFile::load(path)?,
            None => ConfigFile::default(),
        };
        let overrides = Overrides {
            workspace: self.workspace.clone().or(fallback_workspace),
            component: self.component.clone(),
            embedder: self.embedder.clone(),
            model_dir: self.model_dir.clone(),
            settings: [
                (
                    "search.recencyHalfLifeDays",
                    self.half_life_days.map(Into::into),
                ),
                ("search.recencyFloor", self.recency_floor.map(Into::into)),
                ("search.tokenizer", self.tokenizer.clone().map(Into::into)),
            ]
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_string(), value?)))
            .collect(),
            no_cache: self.no_cache,
            model: self.model.clone(),
            time_zone: self.time_zone.clone(),
        };
        let mut resolved = resolve(&file, &overrides)?;
        memory_harness::notes::detail(format!(
            "workspace {}, component {}, embedder {:?}, model {:?}",
            resolved.workspace.display(),
            resolved.component.display(),
            resolved.embedder,
            resolved.model
        ));
        // `--now` written with a numeric offset: that is the local offset for
        // the run, instead of the zone's.
        if let Some(text) = &self.now {
            let at = parse_local(text, &resolved.time_zone).context("--now")?;
            if let Some(minutes) = at.offset_minutes {
                resolved.time_zone = fixed_zone(minutes).context("--now")?;
            }
        }
        Ok(resolved)
    }

    /// `--now` (read in the run's zone), else the system clock.
    pub fn now_ms(&self, resolved: &Resolved) -> anyhow::Result<i64> {
        match &self.now {
            Some(text) => Ok(parse_local(text, &resolved.time_zone).context("--now")?.ms),
            None => Ok(system_now_ms()),
        }
    }
}

/// The configuration file used without `--config`: ./memory-harness.toml,
/// else the user's ($XDG_CONFIG_HOME, else ~/.config,
/// `memory-core/config.toml`), when present.
fn default_config_file() -> Option<PathBuf> {
    let local = PathBuf::from("memory-harness.toml");
    if local.is_file() {
        return Some(local);
    }
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let user = config_home.join("memory-core").join("config.toml");
    user.is_file().then_some(user)
}

/// `--embedder`'s values, with the other names the configuration takes
/// (`local`, `all-MiniLM-L6-v2`, `all-mpnet-base-v2`, `remote`) as aliases.
fn embedder_names() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    clap::builder::PossibleValuesParser::new([
        PossibleValue::new("minilm").aliases(["local", "all-MiniLM-L6-v2"]),
        PossibleValue::new("mpnet").alias("all-mpnet-base-v2"),
        PossibleValue::new("openai").alias("remote"),
        PossibleValue::new("none"),
        PossibleValue::new("test"),
        PossibleValue::new("slow"),
        PossibleValue::new("failing"),
        PossibleValue::new("nan"),
        PossibleValue::new("wrong-dims"),
    ])
}
