//! The `recall` family: `search` (lexical and vector legs, neighbours of
//! daily-note matches, then `logic::recall` ranks) and `get` (a memory file
//! or a line range, framed with the lowest class it shows). What an
//! interactive session recalls from daily and topic notes is recorded for
//! dreaming.

use super::{Attempt, Memory, VectorTable};
use crate::contract::api::*;
use crate::contract::error::{MemoryError, Result};
use crate::host::embedding;
use crate::logic::dream::consolidate::UntrustedText;
use crate::logic::provenance::{entry_provenance, shown_class, FileTrust};
use crate::logic::recall::{self, superseded, Candidate, RankSettings, Ranked};
use crate::logic::vectors;
use crate::storage::index::{self, ChunkRow};
use crate::text::framing;
use crate::text::hash::entry_hash;
use crate::text::layout::{self, Date, Tier};
use crate::text::markdown;
use crate::text::words::{query_terms, truncate_chars};
use std::collections::{HashMap, HashSet};

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 4_000;
/// Distinct query words searched for; the rest of a very long query is ignored.
const MAX_QUERY_TERMS: usize = 64;
/// Characters of an entry shown in a hit.
const SNIPPET_CHARS: usize = 700;
/// `memory_get` reads files up to this size and answers at most this much text.
pub(super) const MAX_GET_BYTES: u64 = 64 * 1024 * 1024;
const MAX_GET_CHARS: usize = 200_000;
/// Entries on each side of a daily-note match that join the candidates.
const NEIGHBOURS_EACH_SIDE: u32 = 2;

/// The vector leg's answer, or `None` with the reason it could not run.
type VectorLeg = (Option<VectorHits>, Option<String>);

/// What the vector leg found: cosine similarity by entry, and the cosine
/// at which it stopped taking entries (its last one's) when it had more
/// than it could take — `None` when it took every entry it had.
#[derive(Default)]
struct VectorHits {
    cosines: HashMap<i64, f32>,
    cutoff: Option<f32>,
}

impl Memory {
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
                // Vectors from the cache only: embedding a whole workspace is
                // an `index` command's work, not this call's.
                max_embeddings: Some(0),
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
        // Stemmed as the index stems (FTS5's Porter), so coverage counts a
        // query word wherever the lexical leg matched it.
        let stems = self.index.term_stems(&terms)?;
        let found = self.retrieve(&request.query, &terms, per_leg)?;
        let (mut fetched, mut neighbours_of) = self.candidate_rows(&found, limit)?;
        let replaced = self.replacements(&mut fetched)?;
        let mut rows = HashMap::new();
        let mut candidates = Vec::with_capacity(fetched.len());
        for row in fetched {
            let neighbours = neighbours_of.remove(&row.id).unwrap_or_default();
            let words = self.index.content_stems(&row.text)?;
            let mut c = candidate(&row, &stems, words, &found, neighbours, &request.context);
            c.replaced_by = replaced.get(&row.id).copied();
            candidates.push(c);
            rows.insert(row.id, row);
        }
        let ranked = recall::rank(
            candidates,
            &RankSettings {
                vector_weight: s.vector_weight,
                hybrid: found.hybrid,
                vector_cutoff: found.vector.cutoff,
                half_life_days: s.recency_half_life_days,
                recency_floor: s.recency_floor,
                mmr_lambda: s.mmr_lambda,
                min_score: request.min_score.unwrap_or(s.min_score),
                max_results: limit,
            },
        );
        let hits = self.search_hits(request, ranked, rows)?;
        Ok(SearchResult {
            hits,
            mode: if found.hybrid {
                SearchMode::Hybrid
            } else {
                SearchMode::FtsOnly
            },
            degraded: found.degraded,
            index_rebuilt: None,
        })
    }

    /// The two retrieval legs: BM25 of the entries and of the daily-note
    /// windows, and the vector leg when it can run.
    fn retrieve(&mut self, query: &str, terms: &[String], per_leg: u32) -> Attempt<Retrieved> {
        let mut lexical: HashMap<i64, f64> = HashMap::new();
        let mut windows: Vec<(index::WindowSpan, f64)> = Vec::new();
        if !terms.is_empty() {
            for hit in self.index.lexical(terms, per_leg)? {
                lexical.insert(hit.id, hit.bm25);
            }
            windows = self.index.lexical_windows(terms, per_leg)?;
        }
        let (vector, degraded) = self.vector_leg(query, per_leg as usize)?;
        Ok(Retrieved {
            lexical,
            windows,
            hybrid: vector.is_some(),
            vector: vector.unwrap_or_default(),
            degraded,
        })
    }

    /// The rows of what either leg found, and of the entries around the
    /// best matches in a daily note, with the matches each of those is next
    /// to (by entry id, with their distance).
    fn candidate_rows(
        &self,
        found: &Retrieved,
        limit: usize,
    ) -> Attempt<(Vec<ChunkRow>, Neighbours)> {
        let mut ids: Vec<i64> = found
            .lexical
            .keys()
            .chain(found.vector.cosines.keys())
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut fetched = self.index.chunks(&ids)?;
        // The entries around what matched in a daily note join the
        // candidates: a reply often answers the line before it in words of
        // its own (see `logic::recall::neighbour_weight`).
        // Only the best matches of each leg can lift a neighbour into the
        // results, so only theirs are looked up.
        let expand = best_of(&found.lexical, 2 * limit)
            .into_iter()
            .chain(best_of(&found.vector.cosines, 2 * limit))
            .collect::<HashSet<i64>>();
        let mut neighbours_of: Neighbours = HashMap::new();
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
        Ok((fetched, neighbours_of))
    }

    /// Which candidates a later note replaces by their supersedes key
    /// (`logic::recall::superseded`): old id → new id. Replacements the
    /// legs did not find join `fetched`, so they rank whatever words they
    /// use.
    fn replacements(
        &self,
        fetched: &mut Vec<ChunkRow>,
    ) -> Attempt<HashMap<i64, superseded::Replaced>> {
        let mut keys: Vec<&str> = fetched
            .iter()
            .filter_map(|r| r.provenance.as_ref()?.supersedes_key.as_deref())
            .collect();
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        keys.sort_unstable();
        keys.dedup();
        let keyed = self.index.keyed(&keys)?;
        let present: HashSet<i64> = fetched.iter().map(|r| r.id).collect();
        let replaced: HashMap<i64, superseded::Replaced> = superseded::replaced_by(&keyed)
            .into_iter()
            .filter(|(old, _)| present.contains(old))
            .collect();
        let mut missing: Vec<i64> = replaced
            .values()
            .map(|r| r.by)
            .filter(|new| !present.contains(new))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            fetched.extend(self.index.chunks(&missing)?);
        }
        Ok(replaced)
    }

    /// The ranked entries as hits; those an interactive session recalled
    /// from daily and topic notes are recorded for dreaming.
    fn search_hits(
        &mut self,
        request: &SearchRequest,
        ranked: Vec<Ranked>,
        mut rows: HashMap<i64, ChunkRow>,
    ) -> Attempt<Vec<SearchHit>> {
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
                Some(search_hit(row, r, &untrusted))
            })
            .collect();
        self.record_recalls(&recalls, query_key.as_deref(), &request.context);
        Ok(hits)
    }

    /// Records what a search or a read returned as recalled, for dreaming.
    fn record_recalls(&self, rows: &[RecalledRow], query_key: Option<&str>, context: &TurnContext) {
        let now_ms = context.now_ms;
        if rows.is_empty() || self.read_only {
            return;
        }
        // Days are the owner's: a recall at 23:30 local counts on that day.
        let day = Date::of_turn(context).to_string();
        let recalls: Vec<crate::storage::ledger::dreaming::Recall<'_>> = rows
            .iter()
            .map(|r| crate::storage::ledger::dreaming::Recall {
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

    /// The vector leg: the entries nearest the query by cosine similarity,
    /// among the current embedder's. The code table picks a shortlist (the
    /// whole table when it is small) and the shortlist's exact vectors are
    /// scored, so the similarities are exact. `None` (with the reason) when
    /// it cannot run.
    fn vector_leg(&mut self, query: &str, limit: usize) -> Attempt<VectorLeg> {
        let Some(info) = self.embedder.describe() else {
            return Ok((None, None));
        };
        let label = info.label();
        self.refresh_vectors(&label, info.dimensions as usize)?;
        let table = self.vectors.as_ref().expect("vector table loaded above");
        if table.codes.is_empty() {
            return Ok((
                None,
                Some(format!(
                    "no entry has a vector from {label} yet; indexing the workspace makes them"
                )),
            ));
        }
        let embedder = self.embedder.as_ref();
        let query_vector = match self.query_vectors.get_or_embed(&label, query, || {
            embedding::embed_checked(embedder, &info, &[query.to_string()]).map(|mut v| v.remove(0))
        }) {
            Ok(v) => v,
            Err(problem) => return Ok((None, Some(format!("the embedder failed: {problem}")))),
        };
        let shortlist = vectors::shortlist(&table.codes, &table.centre, &query_vector, limit);
        let scored: Vec<(i64, f32)> = self
            .index
            .vectors_of(&shortlist, &label)?
            .into_iter()
            .map(|(id, v)| (id, embedding::dot(&query_vector, &v)))
            .collect();
        let cut = scored.len() > limit || table.codes.len() > shortlist.len();
        let best = vectors::best(scored, limit);
        Ok((
            Some(VectorHits {
                cutoff: best.last().map(|b| b.1).filter(|_| cut),
                cosines: best.into_iter().collect(),
            }),
            None,
        ))
    }

    /// Brings the code table up to the index: the entries a sync of this
    /// instance changed are applied to it; it is loaded afresh on first
    /// use, for another embedder, when the index changed in a way this
    /// instance did not see, or when the table outgrew its centre.
    fn refresh_vectors(&mut self, label: &str, dims: usize) -> Attempt<()> {
        if let Some(table) = self.vectors.as_mut().filter(|t| t.label == label) {
            if let Some(changed) = self.index.vector_changes_since(table.revision)? {
                if !changed.is_empty() {
                    let codes = self.index.codes_of(&changed, table.centre.words())?;
                    table.codes.apply(&codes);
                }
                table.revision = self.index.revision()?;
                if !table.centre.is_stale_for(table.codes.len() as u64) {
                    return Ok(());
                }
            }
        }
        self.vectors = None;
        let revision = self.index.revision()?;
        self.index.vector_changes_since(revision)?;
        let (centre, codes) = self.index.code_table(label, dims, !self.read_only)?;
        self.vectors = Some(VectorTable {
            label: label.to_string(),
            revision,
            centre,
            codes,
        });
        Ok(())
    }

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
}

/// What the two retrieval legs found for a query.
struct Retrieved {
    /// BM25 by entry (the lexical leg).
    lexical: HashMap<i64, f64>,
    /// The daily-note windows that matched, with their BM25.
    windows: Vec<(index::WindowSpan, f64)>,
    /// What the vector leg found; empty when it did not run.
    vector: VectorHits,
    /// Whether the vector leg ran.
    hybrid: bool,
    /// Why it could not, when it could not.
    degraded: Option<String>,
}

/// For an entry, the matches it is next to in its file: (their id, the
/// distance in entries).
type Neighbours = HashMap<i64, Vec<(i64, i32)>>;

/// One row as `logic::recall` ranks it.
fn candidate(
    row: &ChunkRow,
    stems: &HashSet<String>,
    words: HashSet<String>,
    found: &Retrieved,
    neighbours: Vec<(i64, i32)>,
    context: &TurnContext,
) -> Candidate {
    let id = row.id;
    let coverage = if stems.is_empty() {
        0.0
    } else {
        stems.iter().filter(|t| words.contains(*t)).count() as f32 / stems.len() as f32
    };
    let window_bm25 = found
        .windows
        .iter()
        .filter(|(w, _)| {
            w.path == row.path && w.start_line <= row.start_line && row.end_line <= w.end_line
        })
        .map(|(_, score)| *score)
        .reduce(f64::max);
    let age_days = row
        .file_date
        .as_deref()
        .and_then(Date::parse)
        .map(|d| (context.local_ms() - d.midnight_ms()) as f64 / 86_400_000.0);
    Candidate {
        id,
        bm25: found.lexical.get(&id).copied(),
        window_bm25,
        vector: found.vector.cosines.get(&id).copied(),
        coverage,
        age_days,
        importance: row.importance,
        project: recall::project_multiplier_for(
            &row.projects,
            &context.active_projects,
            row.provenance
                .as_ref()
                .is_some_and(crate::logic::provenance::annotations_honoured),
        ),
        words,
        neighbours,
        replaced_by: None,
    }
}

/// A ranked row as `memory_search` answers it: cited, cut to a snippet and
/// framed with the class it is shown as.
fn search_hit(row: ChunkRow, r: Ranked, untrusted: &UntrustedText) -> SearchHit {
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
    let shown_class = shown_class(&provenance, &row.text, untrusted);
    SearchHit {
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
    }
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

    /// Words hashed to ±1 in 64 dimensions: texts sharing words are near.
    struct WordsEmbedder;

    impl crate::host::embedding::Embedder for WordsEmbedder {
        fn describe(&self) -> Option<crate::host::embedding::EmbedderInfo> {
            Some(crate::host::embedding::EmbedderInfo {
                provider: "test".into(),
                model: "words".into(),
                dimensions: 64,
                max_batch: 256,
            })
        }
        fn embed(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0.01f32; 64];
                    for word in t.split_whitespace() {
                        let h = crate::text::hash::sha256_hex(word.as_bytes());
                        let n = u64::from_str_radix(&h[..8], 16).unwrap();
                        v[(n % 64) as usize] += if n & 64 == 0 { 1.0 } else { -1.0 };
                    }
                    v
                })
                .collect())
        }
    }

    /// The entry the vector leg ranks first for `query`, and the entry an
    /// exact scan of every stored vector ranks first.
    fn nearest_both_ways(memory: &mut Memory, query: &str) -> (String, String) {
        let Ok((leg, problem)) = memory.vector_leg(query, 24) else {
            panic!("the vector leg failed");
        };
        let leg = leg.unwrap_or_else(|| panic!("no vector leg: {problem:?}"));
        let best = |scores: Vec<(i64, f32)>| {
            let id = scores
                .into_iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap()
                .0;
            memory.index.chunks(&[id]).unwrap().remove(0).text
        };
        use crate::host::embedding::Embedder;
        let info = WordsEmbedder.describe().unwrap();
        let q = embedding::embed_checked(&WordsEmbedder, &info, &[query.into()]).unwrap();
        let ids = memory.index.entry_ids_of("memory/2026-12-01.md").unwrap();
        let exact: Vec<(i64, f32)> = memory
            .index
            .vectors_of(&ids, &info.label())
            .unwrap()
            .into_iter()
            .map(|(id, v)| (id, embedding::dot(&q[0], &v)))
            .collect();
        (best(leg.cosines.into_iter().collect()), best(exact))
    }

    /// Lines of distinct, overlapping words for the vector leg's tests.
    fn ledger_lines(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("- ledger{i} item{} crate{}\n", i % 41, i % 13))
            .collect()
    }

    /// A workspace whose one daily note holds `text`, synced with the
    /// words embedder.
    fn memory_with_note(text: &str) -> (tempfile::TempDir, Memory) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("memory")).unwrap();
        std::fs::write(dir.path().join("memory/2026-12-01.md"), text).unwrap();
        let mut memory = Memory::open(
            crate::contract::api::Settings::reference(dir.path()),
            Box::new(WordsEmbedder),
            Box::new(crate::host::model::NoModel),
        )
        .unwrap();
        memory.sync(SyncRequest::default()).unwrap();
        (dir, memory)
    }

    #[test]
    fn the_vector_leg_says_where_it_stopped_only_when_it_left_entries_out() {
        let (_dir, mut small) = memory_with_note(&ledger_lines(5));
        let Ok((Some(leg), None)) = small.vector_leg("ledger3 item3", 24) else {
            panic!("the vector leg did not run");
        };
        assert_eq!(leg.cosines.len(), 5);
        assert_eq!(leg.cutoff, None, "every entry was taken");
        // 100 entries: all scored exactly (the whole table is the
        // shortlist), 24 taken. 300: the codes shortlist 200 of them.
        for lines in [100, 300] {
            let (_dir, mut large) = memory_with_note(&ledger_lines(lines));
            let Ok((Some(leg), None)) = large.vector_leg("ledger3 item3", 24) else {
                panic!("the vector leg did not run");
            };
            assert_eq!(leg.cosines.len(), 24);
            let lowest = leg.cosines.values().copied().fold(f32::INFINITY, f32::min);
            assert_eq!(leg.cutoff, Some(lowest), "{lines} entries");
        }
    }

    #[test]
    fn entries_a_sync_adds_or_changes_are_in_the_same_instances_vector_leg() {
        // Larger than an exact shortlist, so the codes pick the candidates.
        let mut text = ledger_lines(1_500);
        let (dir, mut memory) = memory_with_note(&text);
        let note = dir.path().join("memory/2026-12-01.md");
        let (first, exact) = nearest_both_ways(&mut memory, "ledger7 item7 crate7");
        assert_eq!(first, exact);
        // A new line, synced: the loaded table takes it in.
        text.push_str("- zebra quokka marmot heron\n");
        std::fs::write(&note, &text).unwrap();
        memory.sync(SyncRequest::default()).unwrap();
        let (first, exact) = nearest_both_ways(&mut memory, "zebra quokka marmot heron");
        assert_eq!(first, "- zebra quokka marmot heron");
        assert_eq!(first, exact);
        // A changed file (every id of it new): still the exact nearest.
        text = text.replace("zebra quokka", "walrus quokka");
        std::fs::write(&note, &text).unwrap();
        memory.sync(SyncRequest::default()).unwrap();
        let (first, exact) = nearest_both_ways(&mut memory, "walrus quokka marmot heron");
        assert_eq!(first, "- walrus quokka marmot heron");
        assert_eq!(first, exact);
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
