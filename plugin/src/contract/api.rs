//! The operations' requests and answers as plain Rust, one type per WIT record.
//! `contract::component` converts between these and the generated bindings; nothing
//! else in the crate sees the bindings.

use std::path::PathBuf;

macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

closed_set!(
    /// Who a piece of memory came from; see the WIT `source-class`.
    SourceClass { Owner = "owner", Agent = "agent", Untrusted = "untrusted", System = "system" }
);
impl SourceClass {
    /// Trust order, lowest first: the lowest class of a mix wins.
    pub fn trust_rank(self) -> u8 {
        match self {
            SourceClass::Untrusted => 0,
            SourceClass::System => 1,
            SourceClass::Agent => 2,
            SourceClass::Owner => 3,
        }
    }

    /// The less trusted of two classes (`a` when they rank the same).
    pub fn lowest(a: SourceClass, b: SourceClass) -> SourceClass {
        if a.trust_rank() <= b.trust_rank() {
            a
        } else {
            b
        }
    }
}

/// Where a piece of content came from, as the host reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContentOrigin {
    /// Typed by the turn's sender.
    SenderMessage,
    /// Written by the agent from what the sender said.
    AgentDerived,
    /// Text of a web page.
    WebPage,
    /// Output of a tool.
    ToolOutput,
    /// A non-owner participant of a group chat.
    Participant,
    /// Heartbeat prompts, cron preambles and other scaffolding.
    Scaffolding,
    /// External, source not known.
    UnknownExternal,
}

/// Nothing defaults to the owner: content of unstated origin is external.
impl Default for ContentOrigin {
    fn default() -> Self {
        ContentOrigin::UnknownExternal
    }
}

impl ContentOrigin {
    pub const ALL: &'static [ContentOrigin] = &[
        ContentOrigin::SenderMessage,
        ContentOrigin::AgentDerived,
        ContentOrigin::WebPage,
        ContentOrigin::ToolOutput,
        ContentOrigin::Participant,
        ContentOrigin::Scaffolding,
        ContentOrigin::UnknownExternal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ContentOrigin::SenderMessage => "sender-message",
            ContentOrigin::AgentDerived => "agent-derived",
            ContentOrigin::WebPage => "web-page",
            ContentOrigin::ToolOutput => "tool-output",
            ContentOrigin::Participant => "participant",
            ContentOrigin::Scaffolding => "scaffolding",
            ContentOrigin::UnknownExternal => "unknown-external",
        }
    }

    pub fn parse(s: &str) -> Option<ContentOrigin> {
        ContentOrigin::ALL.iter().copied().find(|o| o.as_str() == s)
    }
}

closed_set!(
    /// The kind of session that produced a piece of memory.
    SessionKind { Interactive = "interactive", Cron = "cron", Heartbeat = "heartbeat", Subagent = "subagent" }
);
closed_set!(
    /// How an entry's provenance was established.
    ProvenanceBasis { Recorded = "recorded", OperatorFile = "operator-file", Lost = "lost", Copied = "copied" }
);
closed_set!(
    /// The full-text tokenizer.
    FtsTokenizer { Unicode61 = "unicode61", Trigram = "trigram" }
);

#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    pub source_class: SourceClass,
    pub session_kind: SessionKind,
    pub basis: ProvenanceBasis,
    /// The lowest class the entry's file has received.
    pub file_class: SourceClass,
    /// Whether the entry may ever enter the curated core.
    pub promotable: bool,
    pub session_id: Option<String>,
    pub observed_at_ms: Option<i64>,
    pub supersedes_key: Option<String>,
    /// A transcript line's author role (`user`, `assistant`, …) and the
    /// prefix it was written with (`user (alice)`): recorded, never parsed
    /// from the text. Internal; not in the WIT record.
    pub role: Option<String>,
    pub speaker: Option<String>,
    /// Where the entry stands in the ledger's write order (internal; see
    /// `crate::logic::provenance::order_of_write`): an untrusted entry whose write
    /// came before it may have been copied into it, one written after it
    /// cannot have been. `None`: unknown.
    pub order: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnContext {
    pub now_ms: i64,
    pub session_id: Option<String>,
    pub session_kind: Option<SessionKind>,
    pub channel: Option<String>,
    pub sender: Option<String>,
    pub sender_is_owner: bool,
    pub active_projects: Vec<String>,
    /// The owner's local offset from UTC at `now_ms`, in minutes.
    pub utc_offset_minutes: i32,
    /// The lowest class of what the turn's context held (see the WIT
    /// `turn-context.taint`); only `untrusted` and `system` lower anything.
    pub taint: Option<SourceClass>,
}

/// Largest local offset accepted, in minutes (UTC−18:00 … UTC+18:00).
pub const MAX_UTC_OFFSET_MINUTES: i32 = 18 * 60;

impl TurnContext {
    /// The class the turn's taint lowers what it writes to, when it lowers
    /// anything (`untrusted` or `system`).
    pub fn tainted(&self) -> Option<SourceClass> {
        self.taint
            .filter(|c| matches!(c, SourceClass::Untrusted | SourceClass::System))
    }

    /// The turn's time shifted to the owner's wall clock (an offset outside
    /// ±18 h is treated as 0: it cannot be a real zone).
    pub fn local_ms(&self) -> i64 {
        let offset = if self.utc_offset_minutes.abs() <= MAX_UTC_OFFSET_MINUTES {
            self.utc_offset_minutes
        } else {
            0
        };
        self.now_ms + offset as i64 * 60_000
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSettings {
    pub max_results: u32,
    pub min_score: f32,
    pub candidates_per_leg: u32,
    pub vector_weight: f32,
    pub recency_half_life_days: f32,
    pub recency_floor: f32,
    pub mmr_lambda: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkSettings {
    pub tokens: u32,
    pub overlap: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    pub max_file_chars: usize,
    pub max_user_file_chars: usize,
    pub max_total_chars: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub workspace: PathBuf,
    pub search: SearchSettings,
    pub chunking: ChunkSettings,
    pub fts_tokenizer: FtsTokenizer,
    pub bootstrap: Budgets,
}

/// Hits one search may return, whatever is asked. The defaults and ranges
/// of `Settings` are `logic::config`'s table (`Settings::reference` and
/// `validate` are there).
pub const MAX_RESULTS_LIMIT: u32 = 100;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncRequest {
    pub max_files: Option<u32>,
    /// Texts this call may send to the embedder (cache hits are free);
    /// `None`: no limit. See the WIT `sync-request`.
    pub max_embeddings: Option<u32>,
    pub force: bool,
    /// The user asked for this sync (an `index` command): it reports and
    /// clears the rebuild `status` shows. See the WIT `sync-request`.
    pub acknowledge_rebuild: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub path: String,
    pub problem: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub files_seen: u32,
    pub files_indexed: u32,
    pub files_unchanged: u32,
    pub files_removed: u32,
    pub files_pending: u32,
    pub chunks_indexed: u32,
    pub embeddings_computed: u32,
    pub embeddings_cached: u32,
    pub vectors_pending: u32,
    pub embedding_problem: Option<String>,
    pub rebuilt: Option<String>,
    pub problems: Vec<FileProblem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StatusReport {
    pub index_path: String,
    pub schema_version: u32,
    pub revision: u64,
    pub files: u32,
    pub entries: u32,
    pub windows: u32,
    pub embedded: u32,
    pub embedder: String,
    pub search_mode: SearchMode,
    pub fts_tokenizer: FtsTokenizer,
    pub embedding_cache_entries: u32,
    pub files_stale: u32,
    pub by_source_class: Vec<(SourceClass, u32)>,
    pub by_session_kind: Vec<(SessionKind, u32)>,
    pub problems: Vec<FileProblem>,
    pub provenance_lost: Option<String>,
    pub promotions_deferred: u32,
    pub sweep_problem: Option<String>,
    /// Why the index was last rebuilt on its own (damaged, missing, an older
    /// schema, another tokenizer), until a sync the user asked for.
    pub index_rebuilt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Hybrid,
    FtsOnly,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Hybrid => "hybrid",
            SearchMode::FtsOnly => "fts-only",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: String,
    pub max_results: Option<u32>,
    pub min_score: Option<f32>,
    pub context: TurnContext,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreParts {
    pub text: f32,
    pub vector: Option<f32>,
    pub relevance: f32,
    pub recency: f32,
    pub importance: f32,
    pub project: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    pub parts: ScoreParts,
    pub snippet: String,
    pub heading: Option<String>,
    pub citation: String,
    /// The snippet inside its `<memory-recall>` block, for a model.
    pub framed: String,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub hits: Vec<SearchHit>,
    pub mode: SearchMode,
    pub degraded: Option<String>,
    /// Why the index was rebuilt before this answer (by this call, or when
    /// the memory was opened for it).
    pub index_rebuilt: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GetRequest {
    pub path: String,
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
    /// The turn the read is made for; a narrow read in an interactive
    /// session is recorded as a recall.
    pub context: Option<TurnContext>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetResult {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub total_lines: u32,
    pub text: String,
    pub truncated: bool,
    /// The lowest class among what was read.
    pub source_class: SourceClass,
    /// The text framed like a search hit.
    pub framed: String,
    /// As `SearchResult::index_rebuilt`.
    pub index_rebuilt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootstrapPurpose {
    SessionStart,
    TurnRefresh,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapRequest {
    pub purpose: BootstrapPurpose,
    pub context: TurnContext,
    pub known_digest: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFile {
    pub path: String,
    pub present: bool,
    /// Why a present file was not injected.
    pub skipped: Option<String>,
    pub original_chars: usize,
    pub injected_chars: usize,
    pub truncated: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapResult {
    pub files: Vec<InjectedFile>,
    pub text: String,
    pub total_chars: u32,
    pub digest: String,
    pub changed: bool,
}
