//! What a memory file becomes in the index: its entries (and, for a daily
//! note, its windows) with their provenance as the ledger vouches for it,
//! and their vectors, from the embedding cache or the embedder.

use crate::contract::api::*;
use crate::contract::error::MemoryError;
use crate::host::embedding::{self, embedding_text, EmbedderInfo};
use crate::logic::provenance::{entry_provenance, shown_class, FileTrust};
use crate::ops::{Attempt, Failure, Memory};
use crate::storage::index::{ChunkKind, ChunkRecord, FileRecord};
use crate::storage::workspace::{FileStat, FileText};
use crate::text::hash::{entry_hash, sha256_hex};
use crate::text::layout::{self, Date, MemoryPath, Tier};
use crate::text::markdown;
use std::collections::{HashMap, HashSet};

/// Vectors filled per sync call for entries indexed without one.
const VECTOR_FILL_PER_SYNC: u32 = 4_096;

/// What filling missing vectors did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct VectorFill {
    /// Entries that got a vector.
    pub filled: u32,
    /// Entries still without one.
    pub left: u32,
}

impl Memory {
    /// A file's index record as it is now: its entries (and a daily note's
    /// windows) with their provenance as the ledger vouches for it, and the
    /// problems found. Operator lines seen for the first time are collected
    /// in `unseen` (see `record_first_sightings`).
    pub(super) fn file_record(
        &self,
        file: &FileStat,
        content: FileText,
        hash: String,
        unseen: &mut Vec<(String, i64)>,
    ) -> Attempt<FileRecord> {
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
        self.order_operator_lines(&mut record.chunks, unseen)?;
        self.follow_content(&mut record.chunks, &trust)?;
        let ignored = annotations_of_outside_content_ignored(&mut record.chunks);
        record.problems.extend(ignored);
        Ok(record)
    }

    /// Records the first sightings a sync collected, in one ledger
    /// transaction (each value is the last segment when it was seen: a
    /// write made during this sync is later than everything it saw).
    pub(super) fn record_first_sightings(&self, unseen: Vec<(String, i64)>) -> Attempt<()> {
        let mut by_segment: HashMap<i64, Vec<String>> = HashMap::new();
        for (hash, last) in unseen {
            by_segment.entry(last).or_default().push(hash);
        }
        for (last, hashes) in by_segment {
            self.ledger.record_first_seen(&hashes, last)?;
        }
        Ok(())
    }

    /// Gives the file's entries their vectors: from the cache by content hash,
    /// the rest from the embedder while `budget` (texts it may still be sent
    /// in this call) lasts. Entries left without one are filled by a later
    /// sync; on an embedder failure the reason is returned.
    pub(super) fn attach_vectors(
        &self,
        info: &EmbedderInfo,
        chunks: &mut [ChunkRecord],
        budget: &mut u32,
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
        missing.truncate(*budget as usize);
        if missing.is_empty() {
            return Ok(());
        }
        *budget -= missing.len() as u32;
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
    /// another one was configured, or an earlier call's budget ran out) get
    /// one now: from the cache, else from the embedder while `budget` lasts.
    /// Returns how many got one and how many are still without.
    pub(super) fn fill_missing_vectors(
        &self,
        info: &EmbedderInfo,
        budget: u32,
        report: &mut SyncReport,
    ) -> Attempt<VectorFill> {
        let label = info.label();
        let pending = self
            .index
            .entries_needing_vectors(&label, VECTOR_FILL_PER_SYNC)?;
        if pending.is_empty() {
            return Ok(VectorFill::default());
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
        missing.truncate(budget as usize);
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
        let filled = ready.len() as u32;
        // A full page may have more behind it; otherwise every entry the
        // page held has its vector now.
        let left = if pending.len() as u32 == VECTOR_FILL_PER_SYNC || filled < pending.len() as u32
        {
            self.index.count_entries_needing_vectors(&label)?
        } else {
            0
        };
        Ok(VectorFill { filled, left })
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
    pub(in crate::ops) fn class_of_lines(
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
            .fold(file_class, SourceClass::lowest);
        Ok(record
            .chunks
            .iter()
            .filter(|c| c.start_line <= last && c.end_line >= first)
            .filter_map(|c| Some(shown_class(c.provenance.as_ref()?, &c.text, &untrusted)))
            .fold(file_class, SourceClass::lowest))
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
/// `logic::recall::project_multiplier_for`).
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
                SourceClass::lowest(p.source_class, p.file_class).as_str()
            ));
        }
    }
    problems
}

fn annotations_stripped(line: &str) -> &str {
    crate::text::annotations::split_trailing(line).0
}
