//! The memory of one workspace: the operations behind the WIT exports, over
//! the workspace files, the index and the host's embedder.
//!
//! Invariants: Markdown files are never written here; a damaged index is
//! set aside, rebuilt from the files and the operation retried once, and the
//! rebuild is reported by the call that did it and by `status` until a sync
//! the user asked for; an index of a newer schema is refused; an unavailable or
//! failing embedder degrades recall to lexical search and is reported, never
//! raised.

use crate::contract::api::*;
use crate::contract::error::{MemoryError, Result};
use crate::host::embedding::{self, Embedder, EmbedderInfo};
use crate::logic::bootstrap::{self, Found, BOOTSTRAP_FILES};
use crate::logic::provenance::{entry_provenance, lowest, FileTrust};
use crate::logic::recall::{self, Candidate, RankSettings};
use crate::storage::index::{self, ChunkKind, ChunkRecord, FileRecord, Index};
use crate::storage::ledger::Ledger;
use crate::storage::sqlite::DbError;
use crate::storage::workspace::{BootstrapRead, FileStat, Workspace, MAX_INDEXED_BYTES};
use crate::text::framing;
use crate::text::layout::{self, Date, MemoryPath, Tier};
use crate::text::markdown;
use crate::text::words::{query_terms, stem, stem_set, strip_list_marker, truncate_chars};
use sha2::{Digest, Sha256};

pub mod dream;
pub mod inject;
pub mod intents;
pub mod report;
pub mod write;
pub use dream::{
    CandidateView, Consolidation, DreamReport, DreamRequest, Phase, RollbackReport, Verdict,
    DREAMS_FILE,
};
pub use inject::escalate::{EscalateRequest, Escalation};
pub use inject::trigger::{ContextBlock, InjectRequest, InjectResult};
pub use intents::{CreateResult, IntentSpec, IntentView, UserModel};
pub use report::{
    DayCount, PromotedEntry, RecalledEntry, ReportRequest, StagedCandidate, SweepView,
    WorkspaceReport,
};
use std::collections::{HashMap, HashSet};
pub use write::{
    FlushReport, FlushRequest, ForgetReport, ForgetRequest, IngestReport, IngestRequest,
    NoteRequest, WriteReport,
};

/// The index meta key that records an implicit rebuild until a sync the
/// user asked for (`sync-request.acknowledge-rebuild`).
const REBUILT_KEY: &str = "rebuilt";
/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 4_000;
/// Distinct query words searched for; the rest of a very long query is ignored.
const MAX_QUERY_TERMS: usize = 64;
/// Characters of an entry shown in a hit.
const SNIPPET_CHARS: usize = 700;
/// `memory_get` reads files up to this size and answers at most this much text.
const MAX_GET_BYTES: u64 = 64 * 1024 * 1024;
const MAX_GET_CHARS: usize = 200_000;
/// Vectors filled per sync call for entries indexed without one.
const VECTOR_FILL_PER_SYNC: u32 = 4_096;
/// Entries on each side of a daily-note match that join the candidates.
const NEIGHBOURS_EACH_SIDE: u32 = 2;
/// Files indexed in one transaction, by size: few enough that a crash loses
/// little work, many enough that FTS5 merges few segments.
const SYNC_BATCH_BYTES: u64 = 8 * 1024 * 1024;

/// A failure inside an operation: a database error may be repaired by a
/// rebuild, anything else is reported as is.
enum Failure {
    Db(DbError),
    Memory(MemoryError),
}

impl From<DbError> for Failure {
    fn from(e: DbError) -> Self {
        Failure::Db(e)
    }
}

impl From<MemoryError> for Failure {
    fn from(e: MemoryError) -> Self {
        Failure::Memory(e)
    }
}

impl From<Failure> for MemoryError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Db(e) => MemoryError::Index(e.to_string()),
            Failure::Memory(e) => e,
        }
    }
}

type Attempt<T> = std::result::Result<T, Failure>;

/// The vector leg's answer: cosine similarity by entry, or `None` with the
/// reason it could not run.
type VectorLeg = (Option<HashMap<i64, f32>>, Option<String>);

/// Entry vectors of one embedder, flattened for a fast dot-product scan.
struct VectorTable {
    label: String,
    revision: u64,
    dims: usize,
    ids: Vec<i64>,
    data: Vec<f32>,
}

pub struct Memory {
    settings: Settings,
    workspace: Workspace,
    index: Index,
    embedder: Box<dyn Embedder>,
    model: Box<dyn crate::host::model::Model>,
    ledger: Ledger,
    /// Why the index was (re)created, until a sync reports it (also the
    /// first build of a new workspace, which is no rebuild).
    rebuild_note: Option<String>,
    /// Why the index was rebuilt on its own, until a call of this instance
    /// has reported it (search, status). The lasting record is the index's
    /// `rebuilt` meta key, which `status` shows until an acknowledging sync.
    unreported_rebuild: Option<String>,
    /// Set when the index was (re)created and holds nothing yet.
    needs_full_sync: bool,
    vectors: Option<VectorTable>,
    /// Lane 2's recent answers and circuit breaker (per instance).
    answer_cache: crate::logic::inject::escalate::AnswerCache,
    breaker: crate::logic::inject::escalate::Breaker,
    /// Standing intents, loaded from the ledger on first use.
    intents: Option<Vec<crate::logic::intents::Intent>>,
    /// Curated entries with triggers or project keys, by index revision
    /// (lane 1).
    lane1_entries: Option<(u64, Vec<inject::trigger::Lane1Entry>)>,
    /// The text of untrusted and system entries, by index revision: a
    /// trusted-looking copy of it is framed (and gated) as untrusted.
    untrusted_text: Option<(
        u64,
        std::rc::Rc<crate::logic::dream::consolidate::UntrustedText>,
    )>,
    /// Opened with `open_read_only`: every operation that would write is
    /// refused, and recalls are not recorded.
    read_only: bool,
}

impl Memory {
    /// Opens the workspace's memory. See the WIT `memory.open`.
    pub fn open(
        settings: Settings,
        embedder: Box<dyn Embedder>,
        model: Box<dyn crate::host::model::Model>,
    ) -> Result<Memory> {
        check_workspace(&settings)?;
        let workspace = Workspace::new(settings.workspace.clone());
        // A workspace with a ledger has had an index: a missing one is a
        // rebuild to report, not a first build.
        let used_before = workspace.join(layout::LEDGER_FILE).exists();
        let (index, rebuild_note) =
            Index::open(&workspace.join(layout::INDEX_FILE), settings.fts_tokenizer).map_err(
                |e| match e {
                    index::OpenError::NewerSchema { .. } => MemoryError::Index(e.to_string()),
                    index::OpenError::Db(e) => {
                        MemoryError::Index(format!("cannot open {}: {e}", layout::INDEX_FILE))
                    }
                },
            )?;
        let (ledger, reproject) = open_ledger(&workspace, &index)?;
        let first_build = rebuild_note.as_deref() == Some("no index existed") && !used_before;
        let rebuild_note = match rebuild_note.as_deref() {
            Some("no index existed") if used_before => {
                Some("the index was missing and was rebuilt from the files".to_string())
            }
            _ => rebuild_note,
        };
        let mut memory = Memory::with_parts(
            settings,
            workspace,
            index,
            ledger,
            embedder,
            model,
            rebuild_note.clone(),
            reproject,
            false,
        );
        if let Some(reason) = rebuild_note.filter(|_| !first_build) {
            memory.note_rebuild(&reason)?;
        }
        // A sweep an interruption left unfinished is completed or abandoned
        // before anything reads MEMORY.md; if that fails, the next sweep or
        // rollback tries again (and fails with the reason).
        if let Err(e) = memory.finish_interrupted_sweeps() {
            eprintln!("memory-core: an interrupted sweep could not be finished yet: {e}");
        }
        Ok(memory)
    }

    /// Opens the workspace's memory to read it as it is: nothing is created,
    /// rebuilt, migrated or recorded. See the WIT `memory.open-read-only`.
    pub fn open_read_only(
        settings: Settings,
        embedder: Box<dyn Embedder>,
        model: Box<dyn crate::host::model::Model>,
    ) -> Result<Memory> {
        check_workspace(&settings)?;
        let workspace = Workspace::new(settings.workspace.clone());
        let refused = |file: &str, why: String| {
            MemoryError::InvalidInput(format!("cannot read {file} as it is: {why}"))
        };
        let index =
            Index::open_read_only(&workspace.join(layout::INDEX_FILE), settings.fts_tokenizer)
                .map_err(|why| refused(layout::INDEX_FILE, why))?;
        let expected = index.meta("ledger_id").map_err(MemoryError::from)?;
        let ledger =
            Ledger::open_read_only(&workspace.join(layout::LEDGER_FILE), expected.as_deref())
                .map_err(|why| refused(layout::LEDGER_FILE, why))?;
        Ok(Memory::with_parts(
            settings, workspace, index, ledger, embedder, model, None, false, true,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn with_parts(
        settings: Settings,
        workspace: Workspace,
        index: Index,
        ledger: Ledger,
        embedder: Box<dyn Embedder>,
        model: Box<dyn crate::host::model::Model>,
        rebuild_note: Option<String>,
        reproject: bool,
        read_only: bool,
    ) -> Memory {
        Memory {
            settings,
            workspace,
            index,
            embedder,
            model,
            ledger,
            needs_full_sync: rebuild_note.is_some() || reproject,
            rebuild_note,
            unreported_rebuild: None,
            vectors: None,
            lane1_entries: None,
            untrusted_text: None,
            intents: None,
            answer_cache: Default::default(),
            breaker: Default::default(),
            read_only,
        }
    }

    /// Refuses `operation` on a memory opened read-only.
    fn writable(&self, operation: &str) -> Result<()> {
        if self.read_only {
            return Err(MemoryError::AccessDenied(format!(
                "{operation} writes, and this memory was opened read-only"
            )));
        }
        Ok(())
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Runs an operation; if the index turns out to be damaged, rebuilds it
    /// from the files and runs the operation once more.
    fn with_repair<T>(&mut self, op: impl Fn(&mut Memory) -> Attempt<T>) -> Result<T> {
        match op(self) {
            Err(Failure::Db(error)) if error.is_corrupt() && self.read_only => {
                Err(MemoryError::Index(format!(
                    "the index is damaged ({error}); opened read-only, it was not rebuilt"
                )))
            }
            Err(Failure::Db(error)) if error.is_corrupt() => {
                self.rebuild(&error)?;
                op(self).map_err(MemoryError::from)
            }
            other => other.map_err(MemoryError::from),
        }
    }

    /// Sets the damaged index aside, starts a new one and fills it from the
    /// files; the rebuild is noted for the reports.
    fn rebuild(&mut self, error: &DbError) -> Result<()> {
        let aside = self
            .index
            .reset()
            .map_err(|e| MemoryError::Index(format!("cannot rebuild the index: {e}")))?;
        // The new index has not seen the ledger yet.
        self.index
            .set_meta("ledger_id", self.ledger.id())
            .map_err(MemoryError::from)?;
        let reason = index::corrupt_reason(error, aside.as_deref());
        self.vectors = None;
        self.rebuild_note = Some(reason.clone());
        self.note_rebuild(&reason)?;
        self.needs_full_sync = true;
        self.sync_once(&SyncRequest {
            force: true,
            ..SyncRequest::default()
        })
        .map_err(MemoryError::from)?;
        Ok(())
    }

    /// Records an implicit rebuild: in the index (for `status`, across
    /// instances) and for the next call of this instance to report.
    fn note_rebuild(&mut self, reason: &str) -> Result<()> {
        self.index
            .set_meta(REBUILT_KEY, reason)
            .map_err(MemoryError::from)?;
        self.unreported_rebuild = Some(reason.to_string());
        Ok(())
    }

    // ----------------------------------------------------------------- sync

    /// See the WIT `memory.sync`.
    pub fn sync(&mut self, request: SyncRequest) -> Result<SyncReport> {
        self.writable("sync")?;
        let mut report = self.with_repair(|m| m.sync_once(&request))?;
        report.rebuilt = self.rebuild_note.take();
        if request.acknowledge_rebuild {
            let recorded = self.index.meta(REBUILT_KEY).map_err(MemoryError::from)?;
            if recorded.is_some() {
                self.index
                    .delete_meta(REBUILT_KEY)
                    .map_err(MemoryError::from)?;
            }
            report.rebuilt = report.rebuilt.or(recorded);
            self.unreported_rebuild = None;
        }
        Ok(report)
    }

    fn sync_once(&mut self, request: &SyncRequest) -> Attempt<SyncReport> {
        let mut report = SyncReport::default();
        let force = request.force || self.needs_full_sync;
        self.needs_full_sync = false;
        let mut skipped = Vec::new();
        let files = self.workspace.list(&mut skipped)?;
        report.problems.extend(
            skipped
                .into_iter()
                .map(|(path, problem)| FileProblem { path, problem }),
        );
        report.files_seen = files.len() as u32;
        let sources = self.index.sources()?;
        let present: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let mut changed_index = false;
        for path in sources.keys().filter(|p| !present.contains(p.as_str())) {
            self.index.remove_file(path)?;
            report.files_removed += 1;
            changed_index = true;
        }
        let budget = request.max_files.unwrap_or(u32::MAX);
        let info = self.embedder.describe();
        let mut embedder_ok = info.is_some();
        let mut batch = self.index.batch()?;
        let mut batch_bytes = 0u64;
        let mut unseen: Vec<(String, i64)> = Vec::new();
        for file in &files {
            if batch_bytes >= SYNC_BATCH_BYTES {
                batch.checkpoint()?;
                batch_bytes = 0;
            }
            let known = sources.get(file.path.as_str());
            if !force && known.is_some_and(|s| s.size == file.size && s.mtime_ms == file.mtime_ms) {
                report.files_unchanged += 1;
                continue;
            }
            if report.files_indexed >= budget {
                report.files_pending += 1;
                continue;
            }
            let content = match self.workspace.read(&file.path, MAX_INDEXED_BYTES) {
                Ok(content) => content,
                Err(MemoryError::NotFound(_)) => continue, // deleted since listing
                Err(error) => {
                    report.problems.push(FileProblem {
                        path: file.path.to_string(),
                        problem: error.to_string(),
                    });
                    continue;
                }
            };
            let hash = sha256_hex(content.text.as_bytes());
            if !force && known.is_some_and(|s| s.hash == hash) {
                self.index
                    .touch_source(file.path.as_str(), content.size, content.mtime_ms)?;
                report.files_unchanged += 1;
                continue;
            }
            let trust = self.file_trust(&file.path, &hash)?;
            let mut record = build_record(
                &file.path,
                &content.text,
                hash,
                file,
                &self.settings.chunking,
                &trust,
            );
            record.problems.splice(0..0, content.problems);
            self.order_operator_lines(&mut record.chunks, &mut unseen)?;
            self.follow_content(&mut record.chunks, &trust)?;
            let ignored = annotations_of_outside_content_ignored(&mut record.chunks);
            record.problems.extend(ignored);
            if embedder_ok {
                if let Some(info) = &info {
                    if let Err(problem) = self.attach_vectors(info, &mut record.chunks, &mut report)
                    {
                        report.embedding_problem = Some(problem);
                        embedder_ok = false;
                    }
                }
            }
            report
                .problems
                .extend(record.problems.iter().map(|p| FileProblem {
                    path: record.path.clone(),
                    problem: p.clone(),
                }));
            report.chunks_indexed += record.chunks.len() as u32;
            self.index.replace_file(&record)?;
            batch_bytes += record.size;
            report.files_indexed += 1;
            changed_index = true;
        }
        batch.commit()?;
        // The first sightings, in one ledger transaction (each value is the
        // last segment when it was seen: a write made during this sync is
        // later than everything it saw).
        let mut by_segment: HashMap<i64, Vec<String>> = HashMap::new();
        for (hash, last) in unseen {
            by_segment.entry(last).or_default().push(hash);
        }
        for (last, hashes) in by_segment {
            self.ledger.record_first_seen(&hashes, last)?;
        }
        if embedder_ok {
            if let Some(info) = &info {
                match self.fill_missing_vectors(info, &mut report) {
                    Ok(filled) => changed_index |= filled > 0,
                    Err(Failure::Memory(MemoryError::Internal(problem))) => {
                        report.embedding_problem = Some(problem)
                    }
                    Err(other) => return Err(other),
                }
            }
        }
        if changed_index {
            self.index.bump_revision()?;
            self.vectors = None;
        }
        Ok(report)
    }

    /// Gives the file's entries their vectors: from the cache by content hash,
    /// the rest from the embedder. On an embedder failure the entries stay
    /// without vectors (filled by a later sync) and the reason is returned.
    fn attach_vectors(
        &self,
        info: &EmbedderInfo,
        chunks: &mut [ChunkRecord],
        report: &mut SyncReport,
    ) -> std::result::Result<(), String> {
        let entries: Vec<usize> = (0..chunks.len())
            .filter(|&i| chunks[i].kind == ChunkKind::Entry)
            .collect();
        let hashes: Vec<&str> = entries.iter().map(|&i| chunks[i].hash.as_str()).collect();
        let cached = self
            .index
            .cached_embeddings(info, &hashes)
            .map_err(|e| e.to_string())?;
        let label = info.label();
        let mut missing: Vec<usize> = Vec::new();
        for &i in &entries {
            match cached.get(&chunks[i].hash) {
                Some(v) => {
                    chunks[i].embedding = Some((label.clone(), v.clone()));
                    report.embeddings_cached += 1;
                }
                None => missing.push(i),
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = missing
            .iter()
            .map(|&i| embedding_text(&chunks[i].text))
            .collect();
        let vectors = embedding::embed_checked(self.embedder.as_ref(), info, &texts)?;
        let items: Vec<(&str, &[f32])> = missing
            .iter()
            .zip(&vectors)
            .map(|(&i, v)| (chunks[i].hash.as_str(), v.as_slice()))
            .collect();
        self.index
            .cache_embeddings(info, &items)
            .map_err(|e| e.to_string())?;
        for (&i, v) in missing.iter().zip(vectors) {
            chunks[i].embedding = Some((label.clone(), v));
            report.embeddings_computed += 1;
        }
        Ok(())
    }

    /// Entries indexed without a vector of the current embedder (it was down,
    /// or another one was configured) get one now, cache first.
    fn fill_missing_vectors(&self, info: &EmbedderInfo, report: &mut SyncReport) -> Attempt<u32> {
        let label = info.label();
        let pending = self
            .index
            .entries_needing_vectors(&label, VECTOR_FILL_PER_SYNC)?;
        if pending.is_empty() {
            return Ok(0);
        }
        let hashes: Vec<&str> = pending.iter().map(|(_, h, _)| h.as_str()).collect();
        let cached = self.index.cached_embeddings(info, &hashes)?;
        let mut ready: Vec<(i64, Vec<f32>)> = Vec::new();
        let mut missing: Vec<&(i64, String, String)> = Vec::new();
        for item in &pending {
            match cached.get(&item.1) {
                Some(v) => ready.push((item.0, v.clone())),
                None => missing.push(item),
            }
        }
        report.embeddings_cached += ready.len() as u32;
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|(_, _, t)| embedding_text(t)).collect();
            match embedding::embed_checked(self.embedder.as_ref(), info, &texts) {
                Ok(vectors) => {
                    let items: Vec<(&str, &[f32])> = missing
                        .iter()
                        .zip(&vectors)
                        .map(|(m, v)| (m.1.as_str(), v.as_slice()))
                        .collect();
                    self.index.cache_embeddings(info, &items)?;
                    report.embeddings_computed += vectors.len() as u32;
                    ready.extend(missing.iter().map(|m| m.0).zip(vectors));
                }
                Err(problem) => {
                    self.index.set_vectors(&label, &ready)?;
                    return Err(Failure::Memory(MemoryError::Internal(problem)));
                }
            }
        }
        self.index.set_vectors(&label, &ready)?;
        Ok(ready.len() as u32)
    }

    /// Gives the lines the component never wrote their place in the write
    /// order: when the ledger first saw them. Those seen for the first time
    /// are collected in `unseen`, recorded once at the end of the sync.
    fn order_operator_lines(
        &self,
        chunks: &mut [ChunkRecord],
        unseen: &mut Vec<(String, i64)>,
    ) -> Attempt<()> {
        let operator = |c: &ChunkRecord| {
            c.provenance
                .as_ref()
                .is_some_and(|p| p.basis == ProvenanceBasis::OperatorFile)
        };
        let hashes: Vec<String> = chunks
            .iter()
            .filter(|c| operator(c))
            .map(|c| entry_hash(&c.text))
            .collect();
        if hashes.is_empty() {
            return Ok(());
        }
        let (seen, last_segment) = self.ledger.first_seen(&hashes)?;
        for chunk in chunks.iter_mut().filter(|c| operator(c)) {
            let hash = entry_hash(&chunk.text);
            let last = match seen.get(&hash) {
                Some(&last) => last,
                None => {
                    unseen.push((hash, last_segment));
                    last_segment
                }
            };
            if let Some(p) = chunk.provenance.as_mut() {
                p.order = Some(crate::logic::provenance::order_of_sighting(last));
            }
        }
        Ok(())
    }

    /// Provenance follows content (`provenance::following_content`): each
    /// entry keeps the lowest class its text was recorded with before it,
    /// in any file; a file the component never wrote takes the lowest class
    /// of its entries.
    fn follow_content(&self, chunks: &mut [ChunkRecord], trust: &FileTrust) -> Attempt<()> {
        // Each entry's hash once; windows (no provenance) have none.
        let hashes: Vec<Option<String>> = chunks
            .iter()
            .map(|c| c.provenance.as_ref().map(|_| entry_hash(&c.text)))
            .collect();
        let wanted: Vec<String> = hashes.iter().flatten().cloned().collect();
        let records = self.ledger.lowering_records(&wanted)?;
        if records.is_empty() {
            return Ok(());
        }
        for (chunk, hash) in chunks.iter_mut().zip(&hashes) {
            let Some(found) = hash.as_ref().and_then(|h| records.get(h)) else {
                continue;
            };
            if let Some(p) = chunk.provenance.take() {
                chunk.provenance = Some(crate::logic::provenance::following_content(p, found));
            }
        }
        if matches!(trust, FileTrust::Operator) {
            let entries: Vec<&Provenance> = chunks
                .iter()
                .filter_map(|c| c.provenance.as_ref())
                .collect();
            let class = crate::logic::provenance::operator_file_class(&entries);
            for chunk in chunks.iter_mut() {
                if let Some(p) = chunk.provenance.take() {
                    chunk.provenance = Some(crate::logic::provenance::in_file_of_class(p, class));
                }
            }
        }
        Ok(())
    }

    /// The class a read of lines `first..=last` of a file is framed with: the
    /// lowest shown class (as search shows it) among the entries the lines
    /// touch, and the file's own class — projected from the ledger as a sync
    /// would, so a read never shows a file more trusted than search does.
    fn class_of_lines(
        &mut self,
        path: &MemoryPath,
        text: &str,
        first: u32,
        last: u32,
    ) -> Attempt<SourceClass> {
        let hash = sha256_hex(text.as_bytes());
        let trust = self.file_trust(path, &hash)?;
        let stat = FileStat {
            path: path.clone(),
            size: text.len() as u64,
            mtime_ms: 0,
        };
        let mut record = build_record(path, text, hash, &stat, &self.settings.chunking, &trust);
        record.chunks.retain(|c| c.kind == ChunkKind::Entry);
        self.order_operator_lines(&mut record.chunks, &mut Vec::new())?;
        self.follow_content(&mut record.chunks, &trust)?;
        let untrusted = self.untrusted_text()?;
        let file_class = match &trust {
            FileTrust::Operator => SourceClass::Owner,
            FileTrust::Lost => SourceClass::Untrusted,
            FileTrust::Recorded { file_class, .. } => *file_class,
        };
        let file_class = record
            .chunks
            .iter()
            .filter_map(|c| c.provenance.as_ref())
            .map(|p| p.file_class)
            .chain(layout::class_named(path))
            .fold(file_class, lowest);
        Ok(record
            .chunks
            .iter()
            .filter(|c| c.start_line <= last && c.end_line >= first)
            .filter_map(|c| Some(shown_class(c.provenance.as_ref()?, &c.text, &untrusted)))
            .fold(file_class, lowest))
    }

    /// What the ledger says about a file whose content hashes to `hash`; an
    /// outside edit is remembered in the ledger for good.
    fn file_trust(&self, path: &MemoryPath, hash: &str) -> Attempt<FileTrust> {
        let Some(file) = self.ledger.file(path.as_str())? else {
            let maybe_ours = path.as_str().starts_with("memory/");
            return Ok(if self.ledger.lost().is_some() && maybe_ours {
                FileTrust::Lost
            } else {
                FileTrust::Operator
            });
        };
        let intact = !file.edited_out_of_band && file.hash == hash;
        if !intact && !file.edited_out_of_band && !self.read_only {
            self.ledger.mark_edited(path.as_str())?;
        }
        Ok(FileTrust::Recorded {
            file_class: file.file_class,
            intact,
            prior_lost: file.prior_lost,
            segments: self.ledger.segments(path.as_str())?,
        })
    }

    // --------------------------------------------------------------- status

    /// See the WIT `memory.status`.
    pub fn status(&mut self) -> Result<StatusReport> {
        let mut status = self.with_repair(|m| m.status_once())?;
        status.index_rebuilt = self.index.meta(REBUILT_KEY).map_err(MemoryError::from)?;
        self.unreported_rebuild = None;
        Ok(status)
    }

    fn status_once(&mut self) -> Attempt<StatusReport> {
        let info = self.embedder.describe();
        let label = info.as_ref().map(EmbedderInfo::label);
        let (files, entries, windows, embedded) = self.index.counts(label.as_deref())?;
        let sources = self.index.sources()?;
        let mut skipped = Vec::new();
        let listed = self.workspace.list(&mut skipped)?;
        let stale = stale_count(&listed, &sources);
        let mut problems: Vec<FileProblem> = skipped
            .into_iter()
            .map(|(path, problem)| FileProblem { path, problem })
            .collect();
        let mut paths: Vec<&String> = sources.keys().collect();
        paths.sort();
        for path in paths {
            for problem in &sources[path].problems {
                problems.push(FileProblem {
                    path: path.clone(),
                    problem: problem.clone(),
                });
            }
        }
        let mut by_class: HashMap<SourceClass, u32> = HashMap::new();
        let mut by_kind: HashMap<SessionKind, u32> = HashMap::new();
        for (class, kind, n) in self.index.provenance_counts()? {
            if let Some(c) = SourceClass::parse(&class) {
                *by_class.entry(c).or_default() += n;
            }
            if let Some(k) = SessionKind::parse(&kind) {
                *by_kind.entry(k).or_default() += n;
            }
        }
        let hybrid = embedded > 0;
        let notices = self.ledger.sweep_notices()?;
        Ok(StatusReport {
            index_path: layout::INDEX_FILE.to_string(),
            schema_version: index::SCHEMA_VERSION,
            revision: self.index.revision()?,
            files,
            entries,
            windows,
            embedded,
            embedder: label.unwrap_or_else(|| "none".into()),
            search_mode: if hybrid {
                SearchMode::Hybrid
            } else {
                SearchMode::FtsOnly
            },
            fts_tokenizer: self.settings.fts_tokenizer,
            embedding_cache_entries: self.index.cache_size()?,
            files_stale: stale as u32,
            by_source_class: SourceClass::ALL
                .iter()
                .map(|c| (*c, by_class.get(c).copied().unwrap_or(0)))
                .collect(),
            by_session_kind: SessionKind::ALL
                .iter()
                .map(|k| (*k, by_kind.get(k).copied().unwrap_or(0)))
                .collect(),
            problems,
            provenance_lost: self.ledger.lost().map(str::to_string),
            promotions_deferred: notices.deferred,
            sweep_problem: notices.problem,
            index_rebuilt: None,
        })
    }

    // --------------------------------------------------------------- search

    /// See the WIT `recall.search`.
    pub fn search(&mut self, request: &SearchRequest) -> Result<SearchResult> {
        check_search_request(request)?;
        let mut result = self.with_repair(|m| m.search_once(request))?;
        result.index_rebuilt = self.unreported_rebuild.take();
        Ok(result)
    }

    fn search_once(&mut self, request: &SearchRequest) -> Attempt<SearchResult> {
        if self.needs_full_sync {
            // A recreated index is empty: fill it from the files before
            // answering (the note stays for the next sync's report).
            self.sync_once(&SyncRequest {
                force: true,
                ..SyncRequest::default()
            })?;
        }
        let s = self.settings.search;
        let limit = request
            .max_results
            .unwrap_or(s.max_results)
            .clamp(1, MAX_RESULTS_LIMIT) as usize;
        let per_leg = s.candidates_per_leg.max(4 * limit as u32);
        let terms = query_terms(&request.query, MAX_QUERY_TERMS);
        let stems: HashSet<String> = terms.iter().map(|t| stem(t)).collect();

        let mut lexical: HashMap<i64, f64> = HashMap::new();
        let mut windows: Vec<(index::WindowSpan, f64)> = Vec::new();
        if let Some(fts) = index::fts_query(&terms, self.settings.fts_tokenizer) {
            for hit in self.index.lexical(&fts, per_leg)? {
                lexical.insert(hit.id, hit.bm25);
            }
            windows = self.index.lexical_windows(&fts, per_leg)?;
        }
        let (vector_scores, degraded) = self.vector_leg(&request.query, per_leg as usize)?;
        let hybrid = vector_scores.is_some();
        let vector_scores = vector_scores.unwrap_or_default();

        let mut ids: Vec<i64> = lexical
            .keys()
            .chain(vector_scores.keys())
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut fetched = self.index.chunks(&ids)?;
        // The entries around what matched in a daily note join the
        // candidates: a reply often answers the line before it in words of
        // its own (see `rank::neighbour_weight`).
        // Only the best matches of each leg can lift a neighbour into the
        // results, so only theirs are looked up.
        let expand = best_of(&lexical, 2 * limit)
            .into_iter()
            .chain(best_of(&vector_scores, 2 * limit))
            .collect::<HashSet<i64>>();
        let mut neighbours_of: HashMap<i64, Vec<(i64, i32)>> = HashMap::new();
        let mut extra: Vec<i64> = Vec::new();
        for row in fetched
            .iter()
            .filter(|r| r.file_date.is_some() && expand.contains(&r.id))
        {
            for (id, distance) in
                self.index
                    .neighbours(&row.path, row.start_line, NEIGHBOURS_EACH_SIDE)?
            {
                neighbours_of
                    .entry(id)
                    .or_default()
                    .push((row.id, distance));
                if ids.binary_search(&id).is_err() {
                    extra.push(id);
                }
            }
        }
        extra.sort_unstable();
        extra.dedup();
        fetched.extend(self.index.chunks(&extra)?);
        let mut rows = HashMap::new();
        let mut candidates = Vec::with_capacity(fetched.len());
        for row in fetched {
            let id = row.id;
            let words = stem_set(&row.text);
            let coverage = if stems.is_empty() {
                0.0
            } else {
                stems.iter().filter(|t| words.contains(*t)).count() as f32 / stems.len() as f32
            };
            let window_bm25 = windows
                .iter()
                .filter(|(w, _)| {
                    w.path == row.path
                        && w.start_line <= row.start_line
                        && row.end_line <= w.end_line
                })
                .map(|(_, score)| *score)
                .reduce(f64::max);
            let age_days = row
                .file_date
                .as_deref()
                .and_then(Date::parse)
                .map(|d| (request.context.local_ms() - d.midnight_ms()) as f64 / 86_400_000.0);
            candidates.push(Candidate {
                id,
                bm25: lexical.get(&id).copied(),
                window_bm25,
                vector: vector_scores.get(&id).copied(),
                coverage,
                age_days,
                importance: row.importance,
                project: recall::project_multiplier_for(
                    &row.projects,
                    &request.context.active_projects,
                    row.provenance
                        .as_ref()
                        .is_some_and(crate::logic::provenance::annotations_honoured),
                ),
                words,
                neighbours: neighbours_of.remove(&id).unwrap_or_default(),
            });
            rows.insert(id, row);
        }
        let ranked = recall::rank(
            candidates,
            &RankSettings {
                vector_weight: s.vector_weight,
                hybrid,
                half_life_days: s.recency_half_life_days,
                mmr_lambda: s.mmr_lambda,
                min_score: request.min_score.unwrap_or(s.min_score),
                max_results: limit,
            },
        );
        let query_key = crate::logic::dream::signals::query_key(&request.query);
        let untrusted = self.untrusted_text()?;
        let mut recalls: Vec<RecalledRow> = Vec::new();
        let hits = ranked
            .into_iter()
            .filter_map(|r| {
                let row = rows.remove(&r.id)?;
                if counts_as_recall(&request.context) && is_recallable(&row.path) && !r.by_context {
                    recalls.push(RecalledRow {
                        path: row.path.clone(),
                        text: row.text.clone(),
                        heading: row.heading.clone(),
                        start_line: row.start_line,
                        end_line: row.end_line,
                        relevance: Some(r.own_relevance),
                    });
                }
                let date_ms = row
                    .file_date
                    .as_deref()
                    .and_then(Date::parse)
                    .map(Date::midnight_ms);
                // A row without provenance can only come from an index that
                // predates it; it is vouched for by nothing.
                let provenance = row
                    .provenance
                    .unwrap_or_else(|| entry_provenance(&FileTrust::Lost, "", date_ms));
                let citation = format!("{}#L{}-L{}", row.path, row.start_line, row.end_line);
                let snippet = truncate_chars(&row.text, SNIPPET_CHARS).0.to_string();
                let shown_class = shown_class(&provenance, &row.text, &untrusted);
                Some(SearchHit {
                    framed: framing::recall_block(&citation, shown_class, &snippet),
                    citation,
                    snippet,
                    path: row.path,
                    start_line: row.start_line,
                    end_line: row.end_line,
                    score: r.score,
                    parts: r.parts,
                    heading: row.heading,
                    provenance,
                })
            })
            .collect();
        self.record_recalls(&recalls, query_key.as_deref(), &request.context);
        Ok(SearchResult {
            hits,
            mode: if hybrid {
                SearchMode::Hybrid
            } else {
                SearchMode::FtsOnly
            },
            degraded,
            index_rebuilt: None,
        })
    }

    /// The untrusted text of the index as it is now (cached per revision).
    fn untrusted_text(
        &mut self,
    ) -> Attempt<std::rc::Rc<crate::logic::dream::consolidate::UntrustedText>> {
        let revision = self.index.revision()?;
        if let Some((at, text)) = &self.untrusted_text {
            if *at == revision {
                return Ok(text.clone());
            }
        }
        let text = std::rc::Rc::new(crate::logic::dream::consolidate::UntrustedText::ordered(
            &self.index.untrusted_entries()?,
        ));
        self.untrusted_text = Some((revision, text.clone()));
        Ok(text)
    }

    /// Records what a search or a read returned as recalled, for dreaming.
    fn record_recalls(&self, rows: &[RecalledRow], query_key: Option<&str>, context: &TurnContext) {
        let now_ms = context.now_ms;
        if rows.is_empty() || self.read_only {
            return;
        }
        // Days are the owner's: a recall at 23:30 local counts on that day.
        let day = context.local_date().to_string();
        let recalls: Vec<crate::storage::ledger::Recall<'_>> = rows
            .iter()
            .map(|r| crate::storage::ledger::Recall {
                path: &r.path,
                text_hash: entry_hash(&r.text),
                text: &r.text,
                heading: r.heading.as_deref(),
                start_line: r.start_line,
                end_line: r.end_line,
                relevance: r.relevance,
                query_key: r.relevance.and(query_key),
                day: &day,
                at_ms: now_ms,
            })
            .collect();
        // Signals feed a background sweep: failing to record one (a full
        // disk) lowers what dreaming knows and never fails the recall.
        let _ = self.ledger.record_recalls(&recalls);
    }

    /// The vector leg: cosine similarity of the query to every entry vector of
    /// the current embedder. `None` (with the reason) when it cannot run.
    fn vector_leg(&mut self, query: &str, limit: usize) -> Attempt<VectorLeg> {
        let Some(info) = self.embedder.describe() else {
            return Ok((None, None));
        };
        let label = info.label();
        let revision = self.index.revision()?;
        if self
            .vectors
            .as_ref()
            .is_none_or(|t| t.label != label || t.revision != revision)
        {
            let rows = self.index.entry_vectors(&label)?;
            let dims = info.dimensions as usize;
            let mut table = VectorTable {
                label: label.clone(),
                revision,
                dims,
                ids: Vec::new(),
                data: Vec::new(),
            };
            for (id, v) in rows.into_iter().filter(|(_, v)| v.len() == dims) {
                table.ids.push(id);
                table.data.extend_from_slice(&v);
            }
            self.vectors = Some(table);
        }
        let table = self.vectors.as_ref().expect("vector table loaded above");
        if table.ids.is_empty() {
            return Ok((
                None,
                Some(format!("no entry has a vector from {label} yet; run sync")),
            ));
        }
        let query_vector =
            match embedding::embed_checked(self.embedder.as_ref(), &info, &[query.to_string()]) {
                Ok(mut v) => v.remove(0),
                Err(problem) => return Ok((None, Some(format!("the embedder failed: {problem}")))),
            };
        let mut scored: Vec<(i64, f32)> = table
            .ids
            .iter()
            .zip(table.data.chunks_exact(table.dims))
            .map(|(id, v)| (*id, embedding::dot(&query_vector, v)))
            .collect();
        let keep = limit.min(scored.len());
        if keep < scored.len() {
            scored.select_nth_unstable_by(keep, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(keep);
        }
        Ok((Some(scored.into_iter().collect()), None))
    }

    // ------------------------------------------------------------------ get

    /// See the WIT `recall.get`.
    pub fn get(&mut self, request: &GetRequest) -> Result<GetResult> {
        let path = layout::memory_path(&request.path)?;
        if request.start_line == Some(0) {
            return Err(MemoryError::InvalidInput("line numbers start at 1".into()));
        }
        if let Some(end) = request.end_line {
            let start = request.start_line.unwrap_or(1);
            if end < start {
                return Err(MemoryError::InvalidInput(format!(
                    "the range ends (line {end}) before it starts (line {start})"
                )));
            }
        }
        let content = self.workspace.read(&path, MAX_GET_BYTES)?;
        if content.size > MAX_GET_BYTES {
            return Err(MemoryError::TooLarge(format!(
                "{path} is {} bytes; memory_get reads files up to {MAX_GET_BYTES} bytes",
                content.size
            )));
        }
        let lines: Vec<&str> = content.text.lines().collect();
        let total = lines.len() as u32;
        let start = request.start_line.unwrap_or(1);
        if start > total.max(1) {
            return Err(MemoryError::NotFound(format!(
                "{path} has {total} lines; line {start} does not exist"
            )));
        }
        let end = request
            .end_line
            .unwrap_or(total)
            .min(total)
            .max(start.min(total));
        let mut text = String::new();
        let mut last = start.saturating_sub(1);
        let mut truncated = false;
        for number in start..=end {
            let line = lines.get((number - 1) as usize).copied().unwrap_or("");
            let needed = line.chars().count() + usize::from(!text.is_empty());
            if text.chars().count() + needed > MAX_GET_CHARS {
                truncated = true;
                if text.is_empty() {
                    text.push_str(truncate_chars(line, MAX_GET_CHARS).0);
                    last = number;
                }
                break;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(line);
            last = number;
        }
        let (first, last) = (start.min(total.max(1)), last.max(start.min(total)));
        let class = self.with_repair(|m| m.class_of_lines(&path, &content.text, first, last))?;
        let framed = framing::recall_block(&format!("{path}#L{first}-L{last}"), class, &text);
        let result = GetResult {
            path: path.to_string(),
            start_line: first,
            end_line: last,
            total_lines: total,
            text,
            truncated,
            source_class: class,
            framed,
            index_rebuilt: self.unreported_rebuild.take(),
        };
        if let Some(context) = &request.context {
            let narrow = request.start_line.is_some() || request.end_line.is_some();
            if narrow && counts_as_recall(context) && is_recallable(path.as_str()) {
                let read: Vec<RecalledRow> = markdown::parse(&content.text)
                    .entries
                    .into_iter()
                    .filter(|e| e.start_line >= result.start_line && e.end_line <= result.end_line)
                    .map(|e| RecalledRow {
                        path: result.path.clone(),
                        text: e.text,
                        heading: e.heading,
                        start_line: e.start_line,
                        end_line: e.end_line,
                        relevance: None,
                    })
                    .collect();
                if read.len() <= MAX_RECALLED_PER_READ {
                    self.record_recalls(&read, None, context);
                }
            }
        }
        Ok(result)
    }

    // ------------------------------------------------------------ bootstrap

    /// See the WIT `bootstrap.load`.
    pub fn bootstrap(&self, request: &BootstrapRequest) -> Result<BootstrapResult> {
        let budgets = self.settings.bootstrap;
        // Enough bytes to count every character up to the largest budget, and
        // then some: the report says how long the file really is.
        let read_limit = MAX_GET_BYTES;
        let mut contents: Vec<(&str, BootstrapRead)> = Vec::new();
        for name in BOOTSTRAP_FILES {
            let mut read = self.workspace.read_bootstrap(name, read_limit)?;
            // Superseded preferences are never injected.
            if name == layout::USER_FILE {
                if let BootstrapRead::Text(text) = &read {
                    read = BootstrapRead::Text(crate::logic::user::injectable(text));
                }
            }
            contents.push((name, read));
        }
        let borrowed: Vec<(&str, Found<'_>)> = contents
            .iter()
            .map(|(n, read)| {
                let found = match read {
                    BootstrapRead::Missing => Found::Missing,
                    BootstrapRead::Refused(why) => Found::Refused(why),
                    BootstrapRead::Text(text) => Found::Text(text),
                };
                (*n, found)
            })
            .collect();
        let plan = bootstrap::plan(&borrowed, &budgets);
        let digest = sha256_hex(plan.text.as_bytes());
        let changed = request.known_digest.as_deref() != Some(digest.as_str());
        Ok(BootstrapResult {
            total_chars: plan.files.iter().map(|f| f.injected_chars as u32).sum(),
            files: plan.files,
            text: plan.text,
            digest,
            changed,
        })
    }
}

/// The settings are valid and the workspace is a directory.
fn check_workspace(settings: &Settings) -> Result<()> {
    settings.validate()?;
    match std::fs::metadata(&settings.workspace) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(MemoryError::Io(format!(
            "{} is not a directory",
            settings.workspace.display()
        ))),
        Err(e) => Err(MemoryError::Io(format!(
            "cannot open the workspace {}: {e}",
            settings.workspace.display()
        ))),
    }
}

/// Files the index is behind on: listed but not indexed as they are now,
/// or indexed but gone.
fn stale_count(listed: &[FileStat], sources: &HashMap<String, index::SourceRow>) -> usize {
    let listed_paths: HashSet<&str> = listed.iter().map(|f| f.path.as_str()).collect();
    listed
        .iter()
        .filter(|f| {
            sources
                .get(f.path.as_str())
                .is_none_or(|s| s.size != f.size || s.mtime_ms != f.mtime_ms)
        })
        .count()
        + sources
            .keys()
            .filter(|p| !listed_paths.contains(p.as_str()))
            .count()
}

/// The ids of the `n` best scores.
fn best_of<S: Copy + PartialOrd>(scores: &HashMap<i64, S>, n: usize) -> Vec<i64> {
    let mut ranked: Vec<(&i64, &S)> = scores.iter().collect();
    ranked.sort_by(|a, b| {
        b.1.partial_cmp(a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(b.0))
    });
    ranked.into_iter().take(n).map(|(id, _)| *id).collect()
}

/// Parses one file into its index record: entries always, windows for daily
/// notes.
fn build_record(
    path: &MemoryPath,
    content: &str,
    hash: String,
    stat: &FileStat,
    chunking: &ChunkSettings,
    trust: &FileTrust,
) -> FileRecord {
    let parsed = markdown::parse(content);
    let tier = path.tier();
    // A superseded USER.md directive reaches no lane: it keeps no trigger
    // and no project key in the index (bootstrap leaves it out too).
    let superseded: HashSet<u32> = if path.as_str() == layout::USER_FILE {
        crate::logic::user::directives(content)
            .into_iter()
            .filter(|d| d.status == crate::logic::user::Status::Superseded)
            .map(|d| d.line)
            .collect()
    } else {
        HashSet::new()
    };
    let date = path.date().map(|d| d.to_string());
    let date_ms = path.date().map(Date::midnight_ms);
    let mut chunks: Vec<ChunkRecord> = parsed
        .entries
        .into_iter()
        .map(|e| {
            let retired = (e.start_line..=e.end_line).any(|n| superseded.contains(&n));
            (e, retired)
        })
        .map(|(e, retired)| ChunkRecord {
            provenance: Some(crate::logic::provenance::capped(
                entry_provenance(trust, &entry_hash(&e.text), date_ms),
                layout::class_named(path),
            )),
            kind: ChunkKind::Entry,
            start_line: e.start_line,
            end_line: e.end_line,
            hash: sha256_hex(embedding_text(&e.text).as_bytes()),
            heading: e.heading,
            text: e.text,
            embedding: None,
            importance: e.annotations.importance,
            triggers: if retired {
                None
            } else {
                e.annotations.triggers
            },
            projects: if retired {
                Vec::new()
            } else {
                e.annotations.projects
            },
        })
        .collect();
    if tier == Tier::Daily {
        let lines: Vec<&str> = content.lines().collect();
        // Approximate tokens as four characters, as OpenClaw does.
        let spans = markdown::windows(
            &lines,
            chunking.tokens as usize * 4,
            chunking.overlap as usize * 4,
        );
        for (start, end) in spans {
            let text: String = lines[(start - 1) as usize..end as usize]
                .iter()
                .map(|l| annotations_stripped(l))
                .collect::<Vec<_>>()
                .join("\n");
            chunks.push(ChunkRecord {
                kind: ChunkKind::Window,
                start_line: start,
                end_line: end,
                heading: None,
                hash: sha256_hex(text.as_bytes()),
                text,
                embedding: None,
                provenance: None,
                importance: None,
                triggers: None,
                projects: Vec::new(),
            });
        }
    }
    FileRecord {
        path: path.to_string(),
        tier: tier.as_str(),
        file_date: date,
        hash,
        size: stat.size,
        mtime_ms: stat.mtime_ms,
        line_count: parsed.line_count,
        problems: parsed.problems,
        chunks,
    }
}

/// Annotations are columns only in owner and agent entries: an untrusted or
/// system entry loses its importance and triggers (they stay in the file as
/// the text they are), and each loss is reported as a problem of the file.
/// Its project keys stay, but only to narrow it (they never rank it up: see
/// `rank::project_multiplier_for`).
fn annotations_of_outside_content_ignored(chunks: &mut [ChunkRecord]) -> Vec<String> {
    let mut problems = Vec::new();
    for chunk in chunks.iter_mut() {
        let Some(p) = chunk.provenance.as_ref() else {
            continue;
        };
        if crate::logic::provenance::annotations_honoured(p) {
            continue;
        }
        let mut ignored = Vec::new();
        if chunk.importance.take().is_some() {
            ignored.push("importance");
        }
        if chunk.triggers.take().is_some() {
            ignored.push("trigger");
        }
        if !ignored.is_empty() {
            problems.push(format!(
                "line {}: {} annotation ignored: the entry is {} content, whose annotations are text",
                chunk.start_line,
                ignored.join(" and "),
                lowest(p.source_class, p.file_class).as_str()
            ));
        }
    }
    problems
}

fn annotations_stripped(line: &str) -> &str {
    crate::text::annotations::split_trailing(line).0
}

/// What the embedder sees of an entry: its text without list markers.
fn embedding_text(text: &str) -> String {
    text.lines()
        .map(|l| strip_list_marker(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Opens the provenance ledger beside the index. Returns whether every file
/// must be re-projected (the ledger was lost since the index last saw it).
fn open_ledger(workspace: &Workspace, index: &Index) -> Result<(Ledger, bool)> {
    let expected = index.meta("ledger_id").map_err(MemoryError::from)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let ledger = Ledger::open(
        &workspace.join(layout::LEDGER_FILE),
        expected.as_deref(),
        now,
    )
    .map_err(|e| MemoryError::Index(format!("cannot open {}: {e}", layout::LEDGER_FILE)))?;
    let reproject = expected.as_deref() != Some(ledger.id());
    // Written only when it changes: opening a workspace to read it (the
    // review page) leaves the index file as it was.
    if reproject {
        index
            .set_meta("ledger_id", ledger.id())
            .map_err(MemoryError::from)?;
    }
    let reproject = reproject && ledger.lost().is_some();
    Ok((ledger, reproject))
}

/// The key an entry's text is known by in the provenance ledger.
pub fn entry_hash(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push(HEX[(b >> 4) as usize] as char);
        hex.push(HEX[(b & 15) as usize] as char);
    }
    hex
}

/// An entry a search or a read returned, to be recorded as recalled.
struct RecalledRow {
    path: String,
    text: String,
    heading: Option<String>,
    start_line: u32,
    end_line: u32,
    relevance: Option<f32>,
}

/// Only the agent's own recalls in interactive sessions count: not cron,
/// heartbeat or sub-agent sessions, and not calls of unknown kind.
fn counts_as_recall(context: &TurnContext) -> bool {
    context.session_kind == Some(SessionKind::Interactive)
}

/// Daily and topic notes are dreaming's candidates; the curated core is
/// already curated.
fn is_recallable(path: &str) -> bool {
    layout::memory_path(path).is_ok_and(|p| p.tier() != Tier::Curated)
}

/// Reads of more entries than this are browsing, not recall.
const MAX_RECALLED_PER_READ: usize = 3;

/// The class a recalled entry is framed with: the lower of its own and its
/// file's; system for what a cron, heartbeat or sub-agent session wrote
/// (scaffolding output, never a candidate); and untrusted for a
/// trusted-looking entry that repeats the text of an untrusted one (a copy
/// pasted into a hand-written file).
fn shown_class(
    provenance: &Provenance,
    text: &str,
    untrusted: &crate::logic::dream::consolidate::UntrustedText,
) -> SourceClass {
    let class = lowest(provenance.source_class, provenance.file_class);
    let trusted = matches!(class, SourceClass::Owner | SourceClass::Agent);
    if trusted && provenance.session_kind != SessionKind::Interactive {
        SourceClass::System
    } else if trusted
        && untrusted.copied_by(
            &crate::logic::dream::consolidate::fact_key(text),
            provenance.order,
            provenance.session_id.as_deref(),
        )
    {
        SourceClass::Untrusted
    } else {
        class
    }
}

/// The search request's own errors, before the index is touched: an empty
/// or whitespace-only query, a NUL in it (refused like a path with a NUL is
/// by `get`: it is never part of what a person asks, and many readers take
/// it for the end of the text), a query over `MAX_QUERY_CHARS` characters,
/// a minimum score outside 0..1.
fn check_search_request(request: &SearchRequest) -> Result<()> {
    let query = request.query.trim();
    if query.is_empty() {
        return Err(MemoryError::InvalidInput("the query is empty".into()));
    }
    if query.contains('\0') {
        return Err(MemoryError::InvalidInput(
            "the query contains a NUL character (U+0000)".into(),
        ));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(MemoryError::TooLarge(format!(
            "the query is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    if let Some(min) = request.min_score {
        if !(0.0..=1.0).contains(&min) {
            return Err(MemoryError::InvalidInput(format!(
                "min-score must be within 0..1, got {min}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            max_results: None,
            min_score: None,
            context: TurnContext::default(),
        }
    }

    #[test]
    fn a_query_with_a_nul_is_invalid_input() {
        for query in ["\0", "gateway\0loopback", " \0 ", "\0\0 \0"] {
            match check_search_request(&request(query)) {
                Err(MemoryError::InvalidInput(m)) => assert!(m.contains("NUL"), "{m}"),
                other => panic!("{query:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn query_checks_keep_their_order_and_kinds() {
        assert!(matches!(
            check_search_request(&request(" \u{3000} ")),
            Err(MemoryError::InvalidInput(_))
        ));
        let long = "x".repeat(MAX_QUERY_CHARS + 1);
        assert!(matches!(
            check_search_request(&request(&long)),
            Err(MemoryError::TooLarge(_))
        ));
        assert!(check_search_request(&request(&"😀".repeat(MAX_QUERY_CHARS))).is_ok());
        assert!(check_search_request(&request("gateway \u{1} loopback")).is_ok());
        let mut bad_score = request("gateway");
        bad_score.min_score = Some(1.5);
        assert!(matches!(
            check_search_request(&bad_score),
            Err(MemoryError::InvalidInput(_))
        ));
    }
}
