//! The `store` family: `sync` brings the index up to the files (incremental
//! by size, mtime and hash, in batches; entries get their vectors and their
//! provenance as they are indexed), `status` says what the index holds and
//! how far it is behind.

use super::{Attempt, Failure, Memory, REBUILT_KEY};
use crate::contract::api::*;
use crate::contract::error::{MemoryError, Result};
use crate::host::embedding::EmbedderInfo;
use crate::storage::index::{self, SourceRow};
use crate::storage::workspace::{FileStat, MAX_INDEXED_BYTES};
use crate::text::hash::sha256_hex;
use crate::text::layout;
use std::collections::{HashMap, HashSet};

mod projection;

/// Files indexed in one transaction, by size: few enough that a crash loses
/// little work, many enough that FTS5 merges few segments.
const SYNC_BATCH_BYTES: u64 = 8 * 1024 * 1024;

impl Memory {
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

    pub(super) fn sync_once(&mut self, request: &SyncRequest) -> Attempt<SyncReport> {
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
        let mut embed_budget = request.max_embeddings.unwrap_or(u32::MAX);
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
            let mut record = self.file_record(file, content, hash, &mut unseen)?;
            if embedder_ok {
                if let Some(info) = &info {
                    if let Err(problem) = self.attach_vectors(
                        info,
                        &mut record.chunks,
                        &mut embed_budget,
                        &mut report,
                    ) {
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
        self.record_first_sightings(unseen)?;
        if let Some(info) = &info {
            let label = info.label();
            // Codes for the vector leg's shortlist, while the table is small;
            // a table loaded about the old centre is loaded again.
            if self
                .index
                .settle_code_centre(&label, info.dimensions as usize)?
            {
                self.vectors = None;
            }
            if embedder_ok {
                match self.fill_missing_vectors(info, embed_budget, &mut report) {
                    Ok(fill) => {
                        changed_index |= fill.filled > 0;
                        report.vectors_pending = fill.left;
                    }
                    Err(Failure::Memory(MemoryError::Internal(problem))) => {
                        report.embedding_problem = Some(problem);
                        report.vectors_pending =
                            self.index.count_entries_needing_vectors(&label)?;
                    }
                    Err(other) => return Err(other),
                }
            } else {
                report.vectors_pending = self.index.count_entries_needing_vectors(&label)?;
            }
        }
        if changed_index {
            self.index.bump_revision()?;
        }
        Ok(report)
    }

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
}

/// Files the index is behind on: listed but not indexed as they are now,
/// or indexed but gone.
pub(super) fn stale_count(listed: &[FileStat], sources: &HashMap<String, SourceRow>) -> usize {
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
