//! The SQLite index in the workspace (`.memory/index.sqlite`): schema, file
//! replacement, the embedding cache and the retrieval queries. It holds no
//! ranking logic (that is `logic::recall`) and no file parsing (that is
//! `text::markdown`).
//!
//! Invariant: the index is a projection of the memory files. Anything wrong
//! with it (missing, corrupt, an older schema, another tokenizer) is repaired
//! by rebuilding from the files; only the embedding cache survives a schema
//! rebuild. A damaged file is first set aside (`index.sqlite.damaged-<ms>`,
//! the newest few kept) so a person can look at it, as the ledger does. An
//! index written by a newer schema is refused, never rebuilt as an older one.
//!
//! The schema version is `PRAGMA user_version` (before it was used, a
//! `schema_version` meta row, still read and still written for older builds).
//! Its migration from every earlier version is the rebuild: a projection has
//! nothing to carry over but the embedding cache, which lives in its own
//! table. The ledger, which is never rebuilt, migrates by numbered steps.

use crate::contract::api::{FtsTokenizer, Provenance, ProvenanceBasis, SessionKind, SourceClass};
use crate::host::embedding::{decode, encode, EmbedderInfo};
use crate::logic::recall::superseded::Keyed;
use crate::storage::sqlite::fts5_rank::{rowid_with_length, LENGTH_BITS};
use crate::storage::sqlite::migrate;
use crate::storage::sqlite::{Connection, DbError, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

mod codes;
mod lexicon;
mod stems;
mod term_cache;
mod vector_changes;

pub use lexicon::FtsTable;

pub const SCHEMA_VERSION: u32 = 8;
const SCHEMA: &str = include_str!("schema.sql");
const CACHE_SCHEMA: &str = include_str!("cache.sql");
/// Entries by supersedes key, for search (`logic::recall::superseded`): an
/// index that only speeds a lookup, so it is added to a writable index of
/// this schema that lacks it rather than rebuilding that index (and a
/// read-only open scans without it).
const KEY_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS provenance_by_key ON provenance (supersedes_key) \
     WHERE supersedes_key IS NOT NULL;";
const INDEX_TABLES: &[&str] = &[
    "meta",
    "sources",
    "chunks",
    "entries_fts",
    "windows_fts",
    "provenance",
    "recall_meta",
    "code_centre",
    "entry_codes",
    "lexicon",
    "postings",
];

/// Tables of earlier schema versions, dropped when the index is rebuilt.
const RETIRED_TABLES: &[&str] = &["chunks_fts"];

/// Damaged index files kept beside the index for inspection; the oldest
/// beyond this are removed when another is set aside.
pub const KEPT_DAMAGED: usize = 3;

/// An untrusted or system entry's text, write order and session id.
pub type UntrustedEntry = (String, Option<i64>, Option<String>);

/// Why the index could not be opened.
#[derive(Debug)]
pub enum OpenError {
    Db(DbError),
    /// The index was written by a newer schema than this build reads: it is
    /// left as it is (rebuilding it would downgrade it under a newer build).
    NewerSchema {
        found: u32,
    },
}

impl From<DbError> for OpenError {
    fn from(e: DbError) -> Self {
        OpenError::Db(e)
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Db(e) => e.fmt(f),
            OpenError::NewerSchema { found } => f.write_str(&newer_schema_message(*found)),
        }
    }
}

/// The ids of entries without a vector of embedder `?1`: none, or
/// another's — as ranges of the `chunks_by_model` index.
const NEEDING_VECTORS: &str = "\
    SELECT id FROM chunks WHERE kind = 'entry' AND embedding_model IS NULL \
    UNION ALL SELECT id FROM chunks WHERE kind = 'entry' AND embedding_model < ?1 \
    UNION ALL SELECT id FROM chunks WHERE kind = 'entry' AND embedding_model > ?1";

/// The refusal of an index of a newer schema, naming both versions and what
/// to do.
pub fn newer_schema_message(found: u32) -> String {
    format!(
        "the index was written by schema {found}, this build reads up to {SCHEMA_VERSION}; \
         it is left as it is: use the newer build that wrote it, or delete {} \
         (the Markdown files are the memory) and run `index` to rebuild it with this one",
        crate::text::layout::INDEX_FILE
    )
}

/// The reason given for a rebuild of a damaged index.
pub fn corrupt_reason(error: &DbError, aside: Option<&str>) -> String {
    match aside {
        Some(name) => format!(
            "the index was corrupt ({error}); it was set aside as .memory/{name} and rebuilt from the files"
        ),
        None => format!("the index was corrupt ({error}) and was rebuilt from the files"),
    }
}

/// Milliseconds since the epoch, for the names of damaged files.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Moves the damaged database at `path` (and its journal, when not empty) aside as
/// `<name>.damaged-<ms>` (`<ms>` the first free number from `now_ms`), then
/// removes the oldest set-aside copies beyond `keep`. Returns the name it
/// was given, or `None` when there was nothing to move or the move failed
/// (then the file is deleted: a rebuild must not stop on it).
pub fn set_aside(path: &Path, now_ms: i64, keep: usize) -> Option<String> {
    let file = path.file_name()?.to_string_lossy().into_owned();
    let dir = path.parent().unwrap_or(Path::new("."));
    let journal = |p: &Path| {
        let mut j = p.as_os_str().to_owned();
        j.push("-journal");
        PathBuf::from(j)
    };
    if !path.exists() {
        let _ = std::fs::remove_file(journal(path));
        return None;
    }
    let mut ms = now_ms;
    let aside = loop {
        let candidate = dir.join(format!("{file}.damaged-{ms}"));
        if !candidate.exists() && !journal(&candidate).exists() {
            break candidate;
        }
        ms += 1;
    };
    let moved = std::fs::rename(path, &aside).is_ok();
    // A journal with content may hold the rest of the story: it goes with
    // the copy. An empty one (what `TRUNCATE` leaves) would only be noise.
    let has_journal = std::fs::metadata(journal(path)).is_ok_and(|m| m.len() > 0);
    if moved && has_journal {
        let _ = std::fs::rename(journal(path), journal(&aside));
    }
    Index::delete_files(path);
    // Oldest first, by the number in the name (not the file times, which a
    // copy or a restore changes).
    let prefix = format!("{file}.damaged-");
    let mut kept: Vec<(i64, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ms = name.strip_prefix(&prefix)?.parse().ok()?;
            Some((ms, name))
        })
        .collect();
    kept.sort();
    let excess = kept.len().saturating_sub(keep);
    for (_, name) in &kept[..excess] {
        let old = dir.join(name);
        let _ = std::fs::remove_file(journal(&old));
        let _ = std::fs::remove_file(old);
    }
    moved.then(|| aside.file_name().unwrap().to_string_lossy().into_owned())
}

/// A file's row in `sources`.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRow {
    pub path: String,
    pub hash: String,
    pub size: u64,
    pub mtime_ms: i64,
    pub problems: Vec<String>,
}

/// Everything the index stores for one file, ready to write.
#[derive(Debug, Clone)]
pub struct FileRecord {
    pub path: String,
    pub tier: &'static str,
    pub file_date: Option<String>,
    pub hash: String,
    pub size: u64,
    pub mtime_ms: i64,
    pub line_count: u32,
    pub problems: Vec<String>,
    pub chunks: Vec<ChunkRecord>,
}

#[derive(Debug, Clone)]
pub struct ChunkRecord {
    pub kind: ChunkKind,
    pub start_line: u32,
    pub end_line: u32,
    pub heading: Option<String>,
    pub text: String,
    pub hash: String,
    pub embedding: Option<(String, Vec<f32>)>,
    /// Entries only.
    pub provenance: Option<Provenance>,
    pub importance: Option<u8>,
    pub triggers: Option<Vec<String>>,
    pub projects: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    Entry,
    Window,
}

impl ChunkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Entry => "entry",
            ChunkKind::Window => "window",
        }
    }
}

/// A retrieved chunk with what ranking and the hit need.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub id: i64,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub heading: Option<String>,
    pub text: String,
    pub file_date: Option<String>,
    pub provenance: Option<Provenance>,
    pub importance: Option<u8>,
    /// Project keys the entry is tagged with.
    pub projects: Vec<String>,
    /// Trigger phrases of its annotation.
    pub triggers: Vec<String>,
}

/// Entries observed on one day, of one class and session kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayProvenance {
    /// Days since the Unix epoch (UTC); `None` for undated entries: the
    /// curated files, undated notes.
    pub day: Option<i64>,
    pub source_class: String,
    pub session_kind: String,
    pub entries: u32,
}

/// A curated, trusted entry with triggers or project keys (what lane 1
/// reads).
#[derive(Debug, Clone)]
pub struct CuratedRow {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
    pub class: SourceClass,
    pub triggers: Vec<String>,
    pub projects: Vec<String>,
    /// The entry's vector under the current embedder, when it has one.
    pub vector: Option<Vec<f32>>,
    /// Its write order and session, to tell a copy of untrusted text.
    pub order: Option<i64>,
    pub session_id: Option<String>,
}

/// A lexical hit: chunk id and its BM25 (higher is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalHit {
    pub id: i64,
    pub bm25: f64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSpan {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

pub struct Index {
    /// Each term's rows beside the full-text indexes (unicode61 only: a
    /// trigram search always scores through FTS5). Declared before `conn`,
    /// whose FTS5 tokenizer it holds, so it is dropped first.
    lexicon: Option<lexicon::Lexicon>,
    /// The index's stemming for coverage (`stems`); also before `conn`.
    /// `None` only while `reset` swaps the connection.
    stemmer: Option<stems::Stemmer>,
    conn: Connection,
    path: PathBuf,
    tokenizer: FtsTokenizer,
    /// The sequence number the next chunk id gets (read from the table on
    /// first use).
    next_sequence: std::cell::Cell<Option<i64>>,
    /// The centre of the entry codes and its embedder, once read (`None`
    /// inside: there is none).
    centre: std::cell::RefCell<Option<Option<(String, crate::logic::vectors::Centre)>>>,
    /// Entries whose vectors changed since the vector leg last looked.
    vector_changes: std::cell::RefCell<vector_changes::VectorChanges>,
}

impl Index {
    /// Opens the index at `path`, creating or rebuilding it as needed. Returns
    /// the reason when it had to be (re)created, so the caller can re-sync and
    /// report it. A damaged file is set aside first; an index of a newer
    /// schema is refused and left as it is.
    pub fn open(
        path: &Path,
        tokenizer: FtsTokenizer,
    ) -> Result<(Index, Option<String>), OpenError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| DbError {
                code: 14,
                message: format!("cannot create the index directory: {e}"),
            })?;
        }
        let existed = path.exists();
        match Self::open_checked(path, tokenizer) {
            Ok((index, None)) if !existed => Ok((index, Some("no index existed".into()))),
            Ok(result) => Ok(result),
            Err(OpenError::Db(error)) if error.is_corrupt() => {
                let aside = set_aside(path, now_ms(), KEPT_DAMAGED);
                let (index, _) = Self::open_checked(path, tokenizer)?;
                Ok((index, Some(corrupt_reason(&error, aside.as_deref()))))
            }
            Err(error) => Err(error),
        }
    }

    /// Opens an existing, current index for reading only: nothing is
    /// created, recreated or repaired. `Err` says why it cannot be read as
    /// it is (missing, damaged, another schema or tokenizer).
    pub fn open_read_only(path: &Path, tokenizer: FtsTokenizer) -> Result<Index, String> {
        if !path.is_file() {
            return Err("there is no index yet".into());
        }
        let conn = Connection::open_read_only(path).map_err(|e| e.to_string())?;
        conn.execute_batch("PRAGMA query_only = ON; PRAGMA cache_size = -32768;")
            .map_err(|e| e.to_string())?;
        conn.register_fts5_rank().map_err(|e| e.to_string())?;
        let index = Index {
            lexicon: lexicon_for(&conn, tokenizer).map_err(|e| e.to_string())?,
            // SAFETY: as the lexicon's.
            stemmer: Some(unsafe { stems::Stemmer::new(&conn) }.map_err(|e| e.to_string())?),
            conn,
            path: path.to_path_buf(),
            tokenizer,
            next_sequence: std::cell::Cell::new(None),
            centre: Default::default(),
            vector_changes: Default::default(),
        };
        if let Some(found) = index.newer_schema().map_err(|e| e.to_string())? {
            return Err(newer_schema_message(found));
        }
        if let Some(problem) = index.schema_problem().map_err(|e| e.to_string())? {
            return Err(format!("the index needs rebuilding: {problem}"));
        }
        for table in ["entries_fts", "windows_fts"] {
            index
                .conn
                .query_row(
                    &format!("SELECT count(*) FROM {table} WHERE {table} MATCH 'probe'"),
                    &[],
                    |_| Ok(()),
                )
                .map_err(|e| format!("the index is damaged: {e}"))?;
        }
        Ok(index)
    }

    fn open_checked(
        path: &Path,
        tokenizer: FtsTokenizer,
    ) -> Result<(Index, Option<String>), OpenError> {
        let conn = Connection::open(path)?;
        // No WAL: WASI offers no shared memory. Exclusive locking keeps the
        // page cache warm between calls; the host allows one writer per
        // workspace anyway. The index is a projection of the files, so its
        // commits are not synced: a crash of the process loses nothing (the
        // rollback journal is still written), and the damage a power cut may
        // do is detected at open and repaired by a rebuild from the files.
        conn.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = TRUNCATE; \
             PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768;",
        )?;
        conn.register_fts5_rank()?;
        let index = Index {
            lexicon: lexicon_for(&conn, tokenizer)?,
            // SAFETY: as the lexicon's.
            stemmer: Some(unsafe { stems::Stemmer::new(&conn) }?),
            conn,
            path: path.to_path_buf(),
            tokenizer,
            next_sequence: std::cell::Cell::new(None),
            centre: Default::default(),
            vector_changes: Default::default(),
        };
        // Before anything is written: a newer build's index stays as it was.
        if let Some(found) = index.newer_schema()? {
            return Err(OpenError::NewerSchema { found });
        }
        index.conn.execute_batch(CACHE_SCHEMA)?;
        if let Some(reason) = index.schema_problem()? {
            index.recreate()?;
            let reason = match reason.as_str() {
                "no index existed" => reason,
                _ => format!("{reason}; it was rebuilt from the files"),
            };
            return Ok((index, Some(reason)));
        }
        index.conn.execute_batch(KEY_INDEX)?;
        // An index from before `user_version` was used, at this schema.
        if migrate::recorded_version(&index.conn)? == 0 {
            index
                .conn
                .execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
        }
        // A cheap probe that touches the FTS structure, so a damaged index
        // shows up now rather than in the middle of a search.
        for table in ["entries_fts", "windows_fts"] {
            index.conn.query_row(
                &format!("SELECT count(*) FROM {table} WHERE {table} MATCH 'probe'"),
                &[],
                |_| Ok(()),
            )?;
        }
        Ok((index, None))
    }

    /// The schema version recorded in the index when it is newer than this
    /// build's.
    fn newer_schema(&self) -> Result<Option<u32>, DbError> {
        Ok(self.recorded_schema()?.filter(|&v| v > SCHEMA_VERSION))
    }

    /// The schema version the index records: `PRAGMA user_version`, or in
    /// an index from before it was used, the `schema_version` meta row
    /// (anything but a number there reads as none).
    fn recorded_schema(&self) -> Result<Option<u32>, DbError> {
        match migrate::recorded_version(&self.conn)? {
            0 => {}
            version => return Ok(Some(version)),
        }
        let has_meta = self
            .conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                &[],
                |_| Ok(()),
            )?
            .is_some();
        if !has_meta {
            return Ok(None);
        }
        Ok(self
            .meta("schema_version")?
            .and_then(|v| v.trim().parse::<u32>().ok()))
    }

    /// Why the existing schema cannot be used, if it cannot.
    fn schema_problem(&self) -> Result<Option<String>, DbError> {
        let tables = self.conn.query(
            "SELECT name FROM sqlite_master WHERE type = 'table'",
            &[],
            |row| Ok(row.get_text(0)),
        )?;
        let missing: Vec<&str> = INDEX_TABLES
            .iter()
            .copied()
            .filter(|t| !tables.iter().any(|n| n == t))
            .collect();
        if missing.len() == INDEX_TABLES.len() {
            return Ok(Some("no index existed".into()));
        }
        let version = self.recorded_schema()?;
        if let Some(version) = version.filter(|&v| v != SCHEMA_VERSION) {
            return Ok(Some(format!(
                "the index was written by schema {version}, older than this build's {SCHEMA_VERSION}"
            )));
        }
        if !missing.is_empty() {
            return Ok(Some(format!(
                "index tables were missing: {}",
                missing.join(", ")
            )));
        }
        if version.is_none() {
            return Ok(Some("the index recorded no schema version".into()));
        }
        let tokenizer = self.meta("tokenizer")?.unwrap_or_default();
        if tokenizer != self.tokenizer.as_str() {
            return Ok(Some(format!(
                "tokenizer changed from {tokenizer:?} to {:?}",
                self.tokenizer.as_str()
            )));
        }
        Ok(None)
    }

    /// Drops and recreates every index table (the embedding cache stays).
    pub fn recreate(&self) -> Result<(), DbError> {
        self.conn.transaction(|| {
            let mut sql = String::new();
            for table in INDEX_TABLES.iter().chain(RETIRED_TABLES) {
                sql.push_str(&format!("DROP TABLE IF EXISTS {table};"));
            }
            sql.push_str(&SCHEMA.replace("{tokenizer}", tokenizer_spec(self.tokenizer)));
            self.conn.execute_batch(&sql)?;
            self.next_sequence.set(None);
            *self.centre.borrow_mut() = None;
            if let Some(lexicon) = &self.lexicon {
                lexicon.discard();
            }
            // The version lives in `user_version`; the meta row is kept for
            // builds from before, which read it to refuse a newer index.
            self.conn
                .execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
            self.set_meta("schema_version", &SCHEMA_VERSION.to_string())?;
            self.set_meta("tokenizer", self.tokenizer.as_str())?;
            self.set_meta("revision", "0")
        })
    }

    /// Closes the connection, sets the damaged index file aside and creates a
    /// new one. Returns the name the damaged file was given.
    pub fn reset(&mut self) -> Result<Option<String>, OpenError> {
        // Assigning drops (closes) the damaged connection before its file
        // moves; the lexicon's tokenizer goes first.
        let placeholder = Connection::open_in_memory()?;
        self.lexicon = None;
        self.stemmer = None;
        self.conn = placeholder;
        let aside = set_aside(&self.path, now_ms(), KEPT_DAMAGED);
        let (fresh, _) = Self::open(&self.path, self.tokenizer)?;
        *self = fresh;
        Ok(aside)
    }

    /// Removes the index file and its journal.
    pub fn delete_files(path: &Path) {
        let _ = std::fs::remove_file(path);
        let mut journal = path.as_os_str().to_owned();
        journal.push("-journal");
        let _ = std::fs::remove_file(PathBuf::from(journal));
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>, DbError> {
        self.conn.query_row(
            "SELECT value FROM meta WHERE key = ?1",
            &[Value::Text(key)],
            |r| Ok(r.get_text(0)),
        )
    }

    pub fn delete_meta(&self, key: &str) -> Result<(), DbError> {
        self.conn
            .execute("DELETE FROM meta WHERE key = ?1", &[Value::Text(key)])?;
        Ok(())
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), DbError> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[Value::Text(key), Value::Text(value)],
        )?;
        Ok(())
    }

    pub fn revision(&self) -> Result<u64, DbError> {
        Ok(self
            .meta("revision")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    pub fn bump_revision(&self) -> Result<u64, DbError> {
        let before = self.revision()?;
        let next = before + 1;
        self.set_meta("revision", &next.to_string())?;
        self.vector_changes.borrow_mut().bumped(before, next);
        Ok(next)
    }

    pub fn sources(&self) -> Result<HashMap<String, SourceRow>, DbError> {
        let rows = self.conn.query(
            "SELECT path, hash, size, mtime_ms, problems FROM sources",
            &[],
            |r| {
                Ok(SourceRow {
                    path: r.get_text(0),
                    hash: r.get_text(1),
                    size: r.get_i64(2) as u64,
                    mtime_ms: r.get_i64(3),
                    problems: serde_json::from_str(&r.get_text(4)).unwrap_or_default(),
                })
            },
        )?;
        Ok(rows
            .into_iter()
            .map(|row| (row.path.clone(), row))
            .collect())
    }

    /// Records a new size and mtime for a file whose content hash is unchanged.
    pub fn touch_source(&self, path: &str, size: u64, mtime_ms: i64) -> Result<(), DbError> {
        self.conn.execute(
            "UPDATE sources SET size = ?2, mtime_ms = ?3 WHERE path = ?1",
            &[
                Value::Text(path),
                Value::Integer(size as i64),
                Value::Integer(mtime_ms),
            ],
        )?;
        Ok(())
    }

    /// Replaces everything indexed for one file, atomically.
    pub fn replace_file(&self, file: &FileRecord) -> Result<(), DbError> {
        self.transaction(|| {
            self.delete_chunks(&file.path)?;
            let problems = serde_json::to_string(&file.problems).unwrap_or_else(|_| "[]".into());
            self.conn.execute(
                "INSERT INTO sources (path, tier, file_date, hash, size, mtime_ms, line_count, problems) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
                 ON CONFLICT (path) DO UPDATE SET tier = excluded.tier, file_date = excluded.file_date, \
                 hash = excluded.hash, size = excluded.size, mtime_ms = excluded.mtime_ms, \
                 line_count = excluded.line_count, problems = excluded.problems",
                &[
                    Value::Text(&file.path),
                    Value::Text(file.tier),
                    opt_text(file.file_date.as_deref()),
                    Value::Text(&file.hash),
                    Value::Integer(file.size as i64),
                    Value::Integer(file.mtime_ms),
                    Value::Integer(file.line_count as i64),
                    Value::Text(&problems),
                ],
            )?;
            for chunk in &file.chunks {
                self.insert_chunk(&file.path, chunk)?;
            }
            Ok(())
        })
    }

    fn insert_chunk(&self, path: &str, chunk: &ChunkRecord) -> Result<(), DbError> {
        let (model, blob) = match &chunk.embedding {
            Some((label, v)) => (Some(label.as_str()), Some(encode(v))),
            None => (None, None),
        };
        let heading = chunk.heading.as_deref().unwrap_or("");
        let tokens = crate::text::words::words(&chunk.text).count()
            + crate::text::words::words(heading).count();
        let id = rowid_with_length(self.take_sequence()?, tokens);
        self.conn.execute(
            "INSERT INTO chunks (id, path, kind, start_line, end_line, heading, text, hash, embedding, embedding_model) \
             VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[
                Value::Text(path),
                Value::Text(chunk.kind.as_str()),
                Value::Integer(chunk.start_line as i64),
                Value::Integer(chunk.end_line as i64),
                opt_text(chunk.heading.as_deref()),
                Value::Text(&chunk.text),
                Value::Text(&chunk.hash),
                blob.as_deref().map_or(Value::Null, Value::Blob),
                opt_text(model),
                Value::Integer(id),
            ],
        )?;
        match chunk.kind {
            ChunkKind::Entry => self.conn.execute(
                "INSERT INTO entries_fts (rowid, text, heading) VALUES (?1, ?2, ?3)",
                &[
                    Value::Integer(id),
                    Value::Text(&chunk.text),
                    Value::Text(heading),
                ],
            )?,
            ChunkKind::Window => self.conn.execute(
                "INSERT INTO windows_fts (rowid, text) VALUES (?1, ?2)",
                &[Value::Integer(id), Value::Text(&chunk.text)],
            )?,
        };
        if let Some(lexicon) = &self.lexicon {
            match chunk.kind {
                ChunkKind::Entry => {
                    lexicon.row_added(&self.conn, FtsTable::Entries, id, &[&chunk.text, heading])?
                }
                ChunkKind::Window => {
                    lexicon.row_added(&self.conn, FtsTable::Windows, id, &[&chunk.text])?
                }
            }
        }
        if let Some(p) = &chunk.provenance {
            self.conn.execute(
                "INSERT INTO provenance (chunk_id, origin_class, session_kind, basis, file_class, promotable, \
                 session_id, observed_at, supersedes_key, role, speaker, order_key) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                &[
                    Value::Integer(id),
                    Value::Text(p.source_class.as_str()),
                    Value::Text(p.session_kind.as_str()),
                    Value::Text(p.basis.as_str()),
                    Value::Text(p.file_class.as_str()),
                    Value::Integer(p.promotable as i64),
                    opt_text(p.session_id.as_deref()),
                    p.observed_at_ms.map_or(Value::Null, Value::Integer),
                    opt_text(p.supersedes_key.as_deref()),
                    opt_text(p.role.as_deref()),
                    opt_text(p.speaker.as_deref()),
                    p.order.map_or(Value::Null, Value::Integer),
                ],
            )?;
        }
        if chunk.kind == ChunkKind::Entry
            && (chunk.importance.is_some()
                || chunk.triggers.is_some()
                || !chunk.projects.is_empty())
        {
            let triggers = chunk
                .triggers
                .as_ref()
                .map(|t| serde_json::to_string(t).unwrap_or_default());
            let projects = (!chunk.projects.is_empty())
                .then(|| serde_json::to_string(&chunk.projects).unwrap_or_default());
            self.conn.execute(
                "INSERT INTO recall_meta (chunk_id, importance, triggers, project_keys) VALUES (?1, ?2, ?3, ?4)",
                &[
                    Value::Integer(id),
                    chunk.importance.map_or(Value::Null, |i| Value::Integer(i as i64)),
                    opt_text(triggers.as_deref()),
                    opt_text(projects.as_deref()),
                ],
            )?;
        }
        if let (ChunkKind::Entry, Some((label, v))) = (chunk.kind, &chunk.embedding) {
            self.record_vector(id, Some((label, v)))?;
        }
        Ok(())
    }

    fn delete_chunks(&self, path: &str) -> Result<(), DbError> {
        let p = [Value::Text(path)];
        // A contentless table forgets a row when told the values it was
        // given: the chunk's own text and heading.
        let chunks = self.conn.query(
            "SELECT id, kind, text, coalesce(heading, '') FROM chunks WHERE path = ?1",
            &p,
            |r| Ok((r.get_i64(0), r.get_text(1), r.get_text(2), r.get_text(3))),
        )?;
        for (id, kind, text, heading) in &chunks {
            let id = *id;
            if let Some(lexicon) = &self.lexicon {
                match kind.as_str() {
                    "window" => lexicon.row_removed(&self.conn, FtsTable::Windows, id, &[text])?,
                    _ => {
                        lexicon.row_removed(&self.conn, FtsTable::Entries, id, &[text, heading])?
                    }
                }
            }
            if kind == "window" {
                self.conn.execute(
                    "INSERT INTO windows_fts (windows_fts, rowid, text) VALUES ('delete', ?1, ?2)",
                    &[Value::Integer(id), Value::Text(text)],
                )?;
            } else {
                self.conn.execute(
                    "INSERT INTO entries_fts (entries_fts, rowid, text, heading) VALUES ('delete', ?1, ?2, ?3)",
                    &[Value::Integer(id), Value::Text(text), Value::Text(heading)],
                )?;
            }
        }
        self.conn.execute(
            "DELETE FROM provenance WHERE chunk_id IN (SELECT id FROM chunks WHERE path = ?1)",
            &p,
        )?;
        self.conn.execute(
            "DELETE FROM recall_meta WHERE chunk_id IN (SELECT id FROM chunks WHERE path = ?1)",
            &p,
        )?;
        for (id, ..) in chunks.iter().filter(|c| c.1 == "entry") {
            self.record_vector(*id, None)?;
        }
        self.conn
            .execute("DELETE FROM chunks WHERE path = ?1", &p)?;
        Ok(())
    }

    pub fn remove_file(&self, path: &str) -> Result<(), DbError> {
        self.transaction(|| {
            self.delete_chunks(path)?;
            self.conn
                .execute("DELETE FROM sources WHERE path = ?1", &[Value::Text(path)])?;
            Ok(())
        })
    }

    /// The next chunk id's sequence number, counted on from the largest id.
    fn take_sequence(&self) -> Result<i64, DbError> {
        let next = match self.next_sequence.get() {
            Some(next) => next,
            None => {
                let max = self
                    .conn
                    .query_row("SELECT coalesce(max(id), 0) FROM chunks", &[], |r| {
                        Ok(r.get_i64(0))
                    })?
                    .unwrap_or(0);
                (max >> LENGTH_BITS) + 1
            }
        };
        self.next_sequence.set(Some(next + 1));
        Ok(next)
    }

    /// Opens a batch: the writes until its `commit` share one transaction
    /// (FTS5 then writes one segment per batch instead of one per file).
    /// Dropped without a commit, the batch is rolled back.
    pub fn batch(&self) -> Result<Batch<'_>, DbError> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        if let Some(lexicon) = &self.lexicon {
            lexicon.begin(&self.conn).inspect_err(|_| {
                let _ = self.conn.execute_batch("ROLLBACK");
            })?;
        }
        Ok(Batch {
            index: self,
            open: true,
        })
    }

    /// Runs `f` in a transaction (or in the one already open). The lexicon's
    /// changes are applied before the outermost one commits, and forgotten
    /// if it rolls back.
    pub fn transaction<T>(&self, f: impl FnOnce() -> Result<T, DbError>) -> Result<T, DbError> {
        if self.conn.in_transaction() {
            return f();
        }
        let result = self.conn.transaction(|| {
            if let Some(lexicon) = &self.lexicon {
                lexicon.begin(&self.conn)?;
            }
            let value = f()?;
            self.flush_lexicon()?;
            Ok(value)
        });
        if result.is_err() {
            self.discard_lexicon();
        }
        result
    }

    fn flush_lexicon(&self) -> Result<(), DbError> {
        match &self.lexicon {
            Some(lexicon) => lexicon.flush(&self.conn),
            None => Ok(()),
        }
    }

    fn discard_lexicon(&self) {
        if let Some(lexicon) = &self.lexicon {
            lexicon.discard();
        }
    }

    /// Cached vectors for the given content hashes under this embedder.
    pub fn cached_embeddings(
        &self,
        info: &EmbedderInfo,
        hashes: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>, DbError> {
        let mut found = HashMap::new();
        for hash in hashes {
            let row = self.conn.query_row(
                "SELECT vector FROM embedding_cache WHERE provider = ?1 AND model = ?2 AND hash = ?3 AND dims = ?4",
                &[
                    Value::Text(&info.provider),
                    Value::Text(&info.model),
                    Value::Text(hash),
                    Value::Integer(info.dimensions as i64),
                ],
                |r| Ok(decode(&r.get_blob(0))),
            )?;
            if let Some(v) = row {
                found.insert(hash.to_string(), v);
            }
        }
        Ok(found)
    }

    pub fn cache_embeddings(
        &self,
        info: &EmbedderInfo,
        items: &[(&str, &[f32])],
    ) -> Result<(), DbError> {
        self.transaction(|| {
            for (hash, v) in items {
                self.conn.execute(
                    "INSERT OR REPLACE INTO embedding_cache (provider, model, hash, dims, vector) VALUES (?1, ?2, ?3, ?4, ?5)",
                    &[
                        Value::Text(&info.provider),
                        Value::Text(&info.model),
                        Value::Text(hash),
                        Value::Integer(v.len() as i64),
                        Value::Blob(&encode(v)),
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// Entries whose vector is missing or from another embedder.
    pub fn entries_needing_vectors(
        &self,
        label: &str,
        limit: u32,
    ) -> Result<Vec<(i64, String, String)>, DbError> {
        // Three ranges of the (kind, embedding_model) index rather than
        // `IS NOT`, which reads every entry: a sync that finds nothing to
        // fill costs nothing however large the index.
        self.conn.query(
            &format!("SELECT id, hash, text FROM chunks WHERE id IN ({NEEDING_VECTORS}) LIMIT ?2"),
            &[Value::Text(label), Value::Integer(limit as i64)],
            |r| Ok((r.get_i64(0), r.get_text(1), r.get_text(2))),
        )
    }

    /// How many entries have no vector of this embedder.
    pub fn count_entries_needing_vectors(&self, label: &str) -> Result<u32, DbError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT count(*) FROM ({NEEDING_VECTORS})"),
                &[Value::Text(label)],
                |r| Ok(r.get_i64(0)),
            )?
            .unwrap_or(0) as u32)
    }

    pub fn set_vectors(&self, label: &str, items: &[(i64, Vec<f32>)]) -> Result<(), DbError> {
        self.transaction(|| {
            for (id, v) in items {
                self.conn.execute(
                    "UPDATE chunks SET embedding = ?2, embedding_model = ?3 WHERE id = ?1",
                    &[
                        Value::Integer(*id),
                        Value::Blob(&encode(v)),
                        Value::Text(label),
                    ],
                )?;
                self.record_vector(*id, Some((label, v)))?;
            }
            Ok(())
        })
    }

    /// The best `limit` entries for any of `terms` (query words), by BM25;
    /// body text outweighs the heading it sits under. Settled from the
    /// lexicon's lists when they can (see `lexicon`), else by FTS5 scoring
    /// every match.
    pub fn lexical(&self, terms: &[String], limit: u32) -> Result<Vec<LexicalHit>, DbError> {
        Ok(self
            .best_rows(FtsTable::Entries, terms, limit)?
            .into_iter()
            .map(|(id, bm25)| LexicalHit { id, bm25 })
            .collect())
    }

    /// The stems of a text's content words, as the index stems them
    /// (`stems`).
    pub fn content_stems(&self, text: &str) -> Result<HashSet<String>, DbError> {
        self.stemmer()?.content_stems(text)
    }

    /// The stems of a query's terms, as the index stems them.
    pub fn term_stems(&self, terms: &[String]) -> Result<HashSet<String>, DbError> {
        self.stemmer()?.term_stems(terms)
    }

    /// Away only after a `reset` that failed to open the new index.
    fn stemmer(&self) -> Result<&stems::Stemmer, DbError> {
        self.stemmer
            .as_ref()
            .ok_or_else(|| DbError::misuse("the index could not be reopened after a reset"))
    }

    /// The best `limit` windows for any of `terms`, with their spans.
    pub fn lexical_windows(
        &self,
        terms: &[String],
        limit: u32,
    ) -> Result<Vec<(WindowSpan, f64)>, DbError> {
        let best = self.best_rows(FtsTable::Windows, terms, limit)?;
        let scores: HashMap<i64, f64> = best.iter().copied().collect();
        let ids: Vec<i64> = best.iter().map(|b| b.0).collect();
        let list = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
        let mut windows = self.conn.query(
            "SELECT id, path, start_line, end_line FROM chunks \
             WHERE id IN (SELECT value FROM json_each(?1))",
            &[Value::Text(&list)],
            |r| {
                Ok((
                    r.get_i64(0),
                    WindowSpan {
                        path: r.get_text(1),
                        start_line: r.get_i64(2) as u32,
                        end_line: r.get_i64(3) as u32,
                    },
                ))
            },
        )?;
        windows.sort_by_key(|(id, _)| ids.iter().position(|i| i == id));
        Ok(windows
            .into_iter()
            .map(|(id, span)| (span, scores[&id]))
            .collect())
    }

    /// The best `limit` rows of a full-text table for any of `terms`, best
    /// first, with their BM25 scores.
    pub fn best_rows(
        &self,
        table: FtsTable,
        terms: &[String],
        limit: u32,
    ) -> Result<Vec<(i64, f64)>, DbError> {
        let Some(fts) = fts_query(terms, self.tokenizer) else {
            return Ok(Vec::new());
        };
        if let Some(lexicon) = &self.lexicon {
            if let Some(best) = lexicon.top_k(&self.conn, table, terms, limit as usize)? {
                return Ok(best);
            }
        }
        self.scored_by_fts(table, &fts, limit)
    }

    /// The best rows as FTS5 finds them, scoring every match. BM25 as a
    /// result column (not `ORDER BY rank`) lets SQLite keep only the best
    /// `limit` rows instead of sorting every match.
    pub fn scored_by_fts(
        &self,
        table: FtsTable,
        fts_query: &str,
        limit: u32,
    ) -> Result<Vec<(i64, f64)>, DbError> {
        let name = table.name();
        self.conn.query(
            &format!(
                "SELECT rowid, memory_bm25({name}, {}) AS score FROM {name} \
                 WHERE {name} MATCH ?1 ORDER BY score, rowid DESC LIMIT ?2",
                table.weight_args()
            ),
            &[Value::Text(fts_query), Value::Integer(limit as i64)],
            |r| Ok((r.get_i64(0), -r.get_f64(1))),
        )
    }

    /// Lane-1 candidates: entries of the curated files that carry triggers or
    /// project keys and whose class and file class are both owner or agent.
    /// Daily notes and transcripts never qualify, however strong their match.
    pub fn curated_rows(&self, label: Option<&str>) -> Result<Vec<CuratedRow>, DbError> {
        self.conn.query(
            "SELECT c.path, c.start_line, c.end_line, c.text, p.origin_class, r.triggers, r.project_keys, \
                    CASE WHEN c.embedding_model = ?1 THEN c.embedding END, p.order_key, p.session_id \
             FROM recall_meta r JOIN chunks c ON c.id = r.chunk_id \
             JOIN sources s ON s.path = c.path JOIN provenance p ON p.chunk_id = c.id \
             WHERE (r.triggers IS NOT NULL OR r.project_keys IS NOT NULL) AND s.tier = 'curated' \
               AND p.origin_class IN ('owner', 'agent') AND p.file_class IN ('owner', 'agent') \
               AND p.session_kind = 'interactive' \
             ORDER BY c.path, c.start_line",
            &[label.map_or(Value::Null, Value::Text)],
            |r| {
                Ok(CuratedRow {
                    path: r.get_text(0),
                    start_line: r.get_i64(1) as u32,
                    end_line: r.get_i64(2) as u32,
                    text: r.get_text(3),
                    class: SourceClass::parse(&r.get_text(4)).unwrap_or(SourceClass::Untrusted),
                    triggers: r.get_opt_text(5).and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default(),
                    projects: r.get_opt_text(6).and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default(),
                    vector: (!r.is_null(7)).then(|| decode(&r.get_blob(7))),
                    order: r.get_opt_i64(8),
                    session_id: r.get_opt_text(9),
                })
            },
        )
    }

    /// Every entry carrying one of `keys` as its supersedes key, for
    /// `logic::recall::superseded` (run only when a candidate has a key;
    /// `KEY_INDEX` finds them).
    pub fn keyed(&self, keys: &[&str]) -> Result<Vec<Keyed>, DbError> {
        let list = serde_json::to_string(keys).unwrap_or_else(|_| "[]".into());
        self.conn.query(
            "SELECT p.chunk_id, p.supersedes_key, p.origin_class, p.file_class, p.session_kind, \
                    p.observed_at, p.order_key, r.project_keys \
             FROM provenance p LEFT JOIN recall_meta r ON r.chunk_id = p.chunk_id \
             WHERE p.supersedes_key IN (SELECT value FROM json_each(?1))",
            &[Value::Text(&list)],
            |r| {
                let class = |i| r.get_opt_text(i).as_deref().and_then(SourceClass::parse);
                // Unreadable classes count as the least trusted.
                let (source, file) = (
                    class(2).unwrap_or(SourceClass::Untrusted),
                    class(3).unwrap_or(SourceClass::Untrusted),
                );
                let kind = r
                    .get_opt_text(4)
                    .as_deref()
                    .and_then(SessionKind::parse)
                    .unwrap_or(SessionKind::Subagent);
                let mut projects: Vec<String> = r
                    .get_opt_text(7)
                    .and_then(|j| serde_json::from_str(&j).ok())
                    .unwrap_or_default();
                projects.sort();
                Ok(Keyed {
                    id: r.get_i64(0),
                    key: r.get_text(1),
                    trust: SourceClass::lowest(source, file).trust_rank(),
                    may_replace: crate::logic::provenance::honoured(source, file, kind),
                    projects,
                    observed_at: r.get_opt_i64(5),
                    order: r.get_opt_i64(6),
                })
            },
        )
    }

    /// The chunks with these ids, in one query (ids that no longer exist are
    /// left out).
    pub fn chunks(&self, ids: &[i64]) -> Result<Vec<ChunkRow>, DbError> {
        let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        self.conn.query(
            "SELECT c.id, c.path, c.start_line, c.end_line, c.heading, c.text, s.file_date, \
                    p.origin_class, p.session_kind, p.basis, p.observed_at, p.supersedes_key, r.importance, \
                    p.file_class, p.promotable, p.session_id, r.project_keys, r.triggers, \
                    p.role, p.speaker, p.order_key \
             FROM chunks c JOIN sources s ON s.path = c.path \
             LEFT JOIN provenance p ON p.chunk_id = c.id \
             LEFT JOIN recall_meta r ON r.chunk_id = c.id \
             WHERE c.id IN (SELECT value FROM json_each(?1))",
            &[Value::Text(&list)],
            |r| {
                let provenance = match (
                    r.get_opt_text(7).as_deref().and_then(SourceClass::parse),
                    r.get_opt_text(8).as_deref().and_then(SessionKind::parse),
                    r.get_opt_text(9).as_deref().and_then(ProvenanceBasis::parse),
                    r.get_opt_text(13).as_deref().and_then(SourceClass::parse),
                ) {
                    (Some(source_class), Some(session_kind), Some(basis), Some(file_class)) => Some(Provenance {
                        source_class,
                        session_kind,
                        basis,
                        file_class,
                        promotable: r.get_i64(14) != 0,
                        session_id: r.get_opt_text(15),
                        observed_at_ms: r.get_opt_i64(10),
                        supersedes_key: r.get_opt_text(11),
                        role: r.get_opt_text(18),
                        speaker: r.get_opt_text(19),
                        order: r.get_opt_i64(20),
                    }),
                    _ => None,
                };
                Ok(ChunkRow {
                    id: r.get_i64(0),
                    path: r.get_text(1),
                    start_line: r.get_i64(2) as u32,
                    end_line: r.get_i64(3) as u32,
                    heading: r.get_opt_text(4),
                    text: r.get_text(5),
                    file_date: r.get_opt_text(6),
                    provenance,
                    importance: r.get_opt_i64(12).and_then(|i| u8::try_from(i).ok()),
                    projects: r
                        .get_opt_text(16)
                        .and_then(|p| serde_json::from_str(&p).ok())
                        .unwrap_or_default(),
                    triggers: r
                        .get_opt_text(17)
                        .and_then(|p| serde_json::from_str(&p).ok())
                        .unwrap_or_default(),
                })
            },
        )
    }

    /// The entries next to the one starting at `start_line` of `path`: up to
    /// `each_side` before and after it, with their distance in entries
    /// (-1 is the one just before).
    pub fn neighbours(
        &self,
        path: &str,
        start_line: u32,
        each_side: u32,
    ) -> Result<Vec<(i64, i32)>, DbError> {
        let params = [
            Value::Text(path),
            Value::Integer(start_line as i64),
            Value::Integer(each_side as i64),
        ];
        // Ordered by distance: negative before, positive after.
        self.conn.query(
            "SELECT id, -row_number() OVER (ORDER BY start_line DESC) FROM \
               (SELECT id, start_line FROM chunks WHERE path = ?1 AND start_line < ?2 AND kind = 'entry' \
                ORDER BY start_line DESC LIMIT ?3) \
             UNION ALL \
             SELECT id, row_number() OVER (ORDER BY start_line) FROM \
               (SELECT id, start_line FROM chunks WHERE path = ?1 AND start_line > ?2 AND kind = 'entry' \
                ORDER BY start_line LIMIT ?3)",
            &params,
            |r| Ok((r.get_i64(0), r.get_i64(1) as i32)),
        )
    }

    /// The ids of a file's entries, in line order.
    pub fn entry_ids_of(&self, path: &str) -> Result<Vec<i64>, DbError> {
        self.conn.query(
            "SELECT id FROM chunks WHERE path = ?1 AND kind = 'entry' ORDER BY start_line",
            &[Value::Text(path)],
            |r| Ok(r.get_i64(0)),
        )
    }

    /// The text of every entry whose own class or whose file's class is
    /// untrusted or system: what a consolidation must never carry.
    pub fn untrusted_entry_texts(&self) -> Result<Vec<String>, DbError> {
        Ok(self
            .untrusted_entries()?
            .into_iter()
            .map(|(text, _, _)| text)
            .collect())
    }

    /// The text of every untrusted and system entry, with its write order
    /// when it was recorded (`None`: unknown, which counts as first of all)
    /// and its session.
    pub fn untrusted_entries(&self) -> Result<Vec<UntrustedEntry>, DbError> {
        self.conn.query(
            // From the partial index of such entries (`provenance_below_agent`),
            // so the cost follows them, not the whole index: this runs after
            // every write (`untrusted_text` is cached per revision).
            "SELECT c.text, CASE WHEN p.basis IN ('recorded', 'copied') THEN p.order_key END, p.session_id \
             FROM provenance p CROSS JOIN chunks c ON c.id = p.chunk_id \
             WHERE (p.origin_class IN ('untrusted', 'system') OR p.file_class IN ('untrusted', 'system')) \
                AND c.kind = 'entry'",
            &[],
            |r| Ok((r.get_text(0), r.get_opt_i64(1), r.get_opt_text(2))),
        )
    }

    /// Counts for `status`: (files, entries, windows, embedded under `label`).
    pub fn counts(&self, label: Option<&str>) -> Result<(u32, u32, u32, u32), DbError> {
        let count = |sql: &str, params: &[Value<'_>]| -> Result<u32, DbError> {
            Ok(self
                .conn
                .query_row(sql, params, |r| Ok(r.get_i64(0) as u32))?
                .unwrap_or(0))
        };
        let files = count("SELECT count(*) FROM sources", &[])?;
        let entries = count("SELECT count(*) FROM chunks WHERE kind = 'entry'", &[])?;
        let windows = count("SELECT count(*) FROM chunks WHERE kind = 'window'", &[])?;
        let embedded = match label {
            Some(label) => count(
                "SELECT count(*) FROM chunks WHERE embedding_model = ?1 AND embedding IS NOT NULL",
                &[Value::Text(label)],
            )?,
            None => 0,
        };
        Ok((files, entries, windows, embedded))
    }

    pub fn cache_size(&self) -> Result<u32, DbError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM embedding_cache", &[], |r| {
                Ok(r.get_i64(0) as u32)
            })?
            .unwrap_or(0))
    }

    /// Entries by the UTC day they were observed, source class and session
    /// kind.
    pub fn provenance_by_day(&self) -> Result<Vec<DayProvenance>, DbError> {
        self.conn.query(
            "SELECT CASE WHEN observed_at IS NULL THEN NULL ELSE (observed_at - (observed_at % 86400000 + 86400000) % 86400000) / 86400000 END,
                    origin_class, session_kind, count(*)
             FROM provenance GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            &[],
            |r| {
                Ok(DayProvenance {
                    day: r.get_opt_i64(0),
                    source_class: r.get_text(1),
                    session_kind: r.get_text(2),
                    entries: r.get_i64(3) as u32,
                })
            },
        )
    }

    /// Entries per (source class, session kind).
    pub fn provenance_counts(&self) -> Result<Vec<(String, String, u32)>, DbError> {
        self.conn.query(
            "SELECT origin_class, session_kind, count(*) FROM provenance GROUP BY 1, 2 ORDER BY 1, 2",
            &[],
            |r| Ok((r.get_text(0), r.get_text(1), r.get_i64(2) as u32)),
        )
    }
}

/// An open write batch of the index (see `Index::batch`).
pub struct Batch<'a> {
    index: &'a Index,
    open: bool,
}

impl Batch<'_> {
    /// Commits what the batch holds so far and goes on in a new one.
    pub fn checkpoint(&mut self) -> Result<(), DbError> {
        self.commit_inner()?;
        self.index.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.open = true;
        Ok(())
    }

    pub fn commit(mut self) -> Result<(), DbError> {
        self.commit_inner()
    }

    fn commit_inner(&mut self) -> Result<(), DbError> {
        self.open = false;
        let committed = self
            .index
            .flush_lexicon()
            .and_then(|()| self.index.conn.execute_batch("COMMIT"));
        committed.inspect_err(|_| {
            let _ = self.index.conn.execute_batch("ROLLBACK");
            self.index.discard_lexicon();
        })
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.index.conn.execute_batch("ROLLBACK");
            self.index.discard_lexicon();
        }
    }
}

fn opt_text(value: Option<&str>) -> Value<'_> {
    value.map_or(Value::Null, Value::Text)
}

/// The lexicon of an index of this tokenizer (see `lexicon`).
fn lexicon_for(
    conn: &Connection,
    tokenizer: FtsTokenizer,
) -> Result<Option<lexicon::Lexicon>, DbError> {
    match tokenizer {
        // SAFETY: the lexicon lives in the `Index` beside `conn`, declared
        // before it, so it is dropped first (and `reset` drops it before
        // replacing the connection).
        FtsTokenizer::Unicode61 => Ok(Some(lexicon::Lexicon::new(unsafe {
            conn.tokenizer(tokenizer_spec(tokenizer))?
        }))),
        FtsTokenizer::Trigram => Ok(None),
    }
}

fn tokenizer_spec(tokenizer: FtsTokenizer) -> &'static str {
    match tokenizer {
        FtsTokenizer::Unicode61 => stems::PORTER_SPEC,
        FtsTokenizer::Trigram => "trigram",
    }
}

/// Builds an FTS5 query that can only mean "any of these words": every term is
/// a quoted string (quotes doubled), joined with OR. User text never reaches
/// FTS5's syntax. Trigram indexes cannot match terms under three characters.
pub fn fts_query(terms: &[String], tokenizer: FtsTokenizer) -> Option<String> {
    let quoted: Vec<String> = terms
        .iter()
        .filter(|t| tokenizer != FtsTokenizer::Trigram || t.chars().count() >= 3)
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_query_quotes_every_term() {
        let terms = vec!["gateway".to_string(), "a\"b".to_string(), "or".to_string()];
        assert_eq!(
            fts_query(&terms, FtsTokenizer::Unicode61).unwrap(),
            "\"gateway\" OR \"a\"\"b\" OR \"or\""
        );
        assert_eq!(
            fts_query(&terms, FtsTokenizer::Trigram).unwrap(),
            "\"gateway\" OR \"a\"\"b\""
        );
        assert_eq!(fts_query(&[], FtsTokenizer::Unicode61), None);
    }

    fn entry(text: &str, line: u32) -> ChunkRecord {
        ChunkRecord {
            kind: ChunkKind::Entry,
            start_line: line,
            end_line: line,
            heading: Some("Notes".into()),
            text: text.into(),
            hash: String::new(),
            embedding: None,
            provenance: None,
            importance: None,
            triggers: None,
            projects: Vec::new(),
        }
    }

    fn file(path: &str, chunks: Vec<ChunkRecord>) -> FileRecord {
        FileRecord {
            path: path.into(),
            tier: "daily",
            file_date: Some("2026-12-01".into()),
            hash: String::new(),
            size: 1,
            mtime_ms: 0,
            line_count: 10,
            problems: Vec::new(),
            chunks,
        }
    }

    #[test]
    fn a_read_only_index_is_never_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let missing = Index::open_read_only(&path, FtsTokenizer::Unicode61)
            .err()
            .unwrap();
        assert!(missing.contains("no index"), "{missing}");
        assert!(!path.exists());
        drop(Index::open(&path, FtsTokenizer::Unicode61).unwrap());
        let before = std::fs::read(&path).unwrap();
        let index = Index::open_read_only(&path, FtsTokenizer::Unicode61).unwrap();
        assert_eq!(index.revision().unwrap(), 0);
        assert!(
            index.bump_revision().is_err(),
            "a read-only index took a write"
        );
        drop(index);
        // Another tokenizer would mean a rebuild: refused instead.
        let other = Index::open_read_only(&path, FtsTokenizer::Trigram)
            .err()
            .unwrap();
        assert!(
            other.contains("needs rebuilding") && other.contains("tokenizer"),
            "{other}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn an_index_of_an_older_schema_is_rebuilt_without_its_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID; \
                 INSERT INTO meta VALUES ('schema_version', '2'); \
                 CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, kind UNINDEXED);",
            )
            .unwrap();
        }
        let (index, reason) = Index::open(&path, FtsTokenizer::Unicode61).unwrap();
        assert!(reason.is_some());
        let tables = index
            .conn
            .query(
                "SELECT name FROM sqlite_master WHERE type = 'table'",
                &[],
                |r| Ok(r.get_text(0)),
            )
            .unwrap();
        assert!(
            !tables.iter().any(|t| t.starts_with("chunks_fts")),
            "{tables:?}"
        );
        assert!(tables.iter().any(|t| t == "entries_fts"));
    }

    #[test]
    fn an_index_of_a_newer_schema_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        {
            let newer = Connection::open(&path).unwrap();
            newer
                .execute_batch(&format!(
                    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID; \
                     INSERT INTO meta VALUES ('schema_version', '{}');",
                    SCHEMA_VERSION + 1
                ))
                .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let error = match Index::open(&path, FtsTokenizer::Unicode61) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a newer index was opened"),
        };
        let newer = format!("schema {}", SCHEMA_VERSION + 1);
        let ours = format!("up to {SCHEMA_VERSION}");
        assert!(error.contains(&newer) && error.contains(&ours), "{error}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "the file was changed"
        );
        let read_only = match Index::open_read_only(&path, FtsTokenizer::Unicode61) {
            Err(e) => e,
            Ok(_) => panic!("a newer index was opened read-only"),
        };
        assert!(read_only.contains(&newer), "{read_only}");
    }

    #[test]
    fn a_damaged_index_is_set_aside_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        // Nothing there: nothing set aside.
        assert_eq!(set_aside(&path, 1, 2), None);
        for (ms, garbage) in [(100, b'a'), (100, b'b'), (300, b'c'), (50, b'd')] {
            std::fs::write(&path, vec![garbage; 64]).unwrap();
            let mut journal = path.as_os_str().to_owned();
            journal.push("-journal");
            std::fs::write(PathBuf::from(journal), b"j").unwrap();
            assert!(set_aside(&path, ms, 2).is_some());
            assert!(!path.exists());
        }
        // Two at 100 (the second one a millisecond on), one at 300, one at
        // 50: the two newest by name stay, each with its journal.
        assert_eq!(
            damaged_in(dir.path()),
            [
                "index.sqlite.damaged-101",
                "index.sqlite.damaged-101-journal",
                "index.sqlite.damaged-300",
                "index.sqlite.damaged-300-journal",
            ]
        );
        assert_eq!(
            std::fs::read(dir.path().join("index.sqlite.damaged-300")).unwrap(),
            vec![b'c'; 64]
        );
    }

    #[test]
    fn a_corrupt_index_is_set_aside_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        std::fs::write(&path, vec![0x5a; 4096]).unwrap();
        let (_index, reason) = Index::open(&path, FtsTokenizer::Unicode61).unwrap();
        let reason = reason.unwrap();
        assert!(
            reason.contains("corrupt") && reason.contains("index.sqlite.damaged-"),
            "{reason}"
        );
        assert_eq!(damaged_in(dir.path()).len(), 1);
    }

    /// The damaged copies (and their journals) in `dir`, sorted.
    fn damaged_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("index.sqlite.damaged-"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replacing_a_file_forgets_its_old_words_and_ids_carry_lengths() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) =
            Index::open(&dir.path().join("i.sqlite"), FtsTokenizer::Unicode61).unwrap();
        index
            .replace_file(&file("memory/a.md", vec![entry("- the walrus sings", 1)]))
            .unwrap();
        let query = |word: &str| vec![word.to_string()];
        let hits = index.lexical(&query("walrus"), 10).unwrap();
        assert_eq!(hits.len(), 1);
        // "the walrus sings" and the heading "Notes": four tokens.
        assert_eq!(
            crate::storage::sqlite::fts5_rank::length_of_rowid(hits[0].id),
            4
        );
        index
            .replace_file(&file("memory/a.md", vec![entry("- the narwhal hums", 1)]))
            .unwrap();
        assert!(index.lexical(&query("walrus"), 10).unwrap().is_empty());
        assert_eq!(index.lexical(&query("narwhal"), 10).unwrap().len(), 1);
        // The FTS structure is intact after the delete.
        index
            .conn
            .execute(
                "INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 0)",
                &[],
            )
            .unwrap();
    }

    #[test]
    fn memory_bm25_ranks_the_rarer_and_shorter_match_first() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) =
            Index::open(&dir.path().join("i.sqlite"), FtsTokenizer::Unicode61).unwrap();
        let mut chunks = vec![entry("- zebra near the harbour", 1), entry("- zebra", 2)];
        for i in 3..20 {
            let word = if i % 5 == 0 { "harbour" } else { "filler" };
            chunks.push(entry(&format!("- {word} note {i}"), i));
        }
        index.replace_file(&file("memory/b.md", chunks)).unwrap();
        let hits = index
            .lexical(&["zebra".into(), "harbour".into()], 5)
            .unwrap();
        // Both words beat one; the rarer word alone beats the commoner one
        // (BM25 also favours the shorter entry: hence both are short here).
        let lengths: Vec<i64> = hits
            .iter()
            .map(|h| crate::storage::sqlite::fts5_rank::length_of_rowid(h.id))
            .collect();
        assert_eq!(
            lengths[0], 5,
            "the entry with both words first: {lengths:?}"
        );
        assert_eq!(lengths[1], 2, "then the rare word alone: {lengths:?}");
        assert!(hits.windows(2).all(|w| w[0].bm25 >= w[1].bm25));
    }

    /// The lexicon's top-k against FTS5 scoring every match, on corpora of
    /// common and rare words written, rewritten and removed file by file:
    /// the same scores bit for bit (and the same rows where no two tie),
    /// for entries and windows, and a row count per term equal to FTS5's.
    #[test]
    fn the_lexicon_settles_what_fts5_would_rank() {
        use crate::storage::sqlite::fts5_tokens::Purpose;
        const WORDS: &[&str] = &[
            "kafka",
            "rebalance",
            "timeout",
            "payments",
            "oncall",
            "postgres",
            "upgrade",
            "billing",
            "certificate",
            "expiring",
            "pods",
            "staging",
            "helix",
            "theme",
            "backup",
            "friday",
            "deploy",
            "redis",
            "pool",
            "running",
            "runs",
            "ops",
            "4773",
        ];
        let (mut settled, mut checked_blocks) = (0, 0);
        for seed in 1..=9u64 {
            let dir = tempfile::tempdir().unwrap();
            let (mut index, _) =
                Index::open(&dir.path().join("i.sqlite"), FtsTokenizer::Unicode61).unwrap();
            // Short lists, so that most terms keep a frontier.
            index.lexicon.as_mut().unwrap().keep = [4, 16, 64][seed as usize % 3];
            index.lexicon.as_mut().unwrap().block = [3, 8, 512][seed as usize % 3];
            // Rarer terms are walked at every search instead of listed.
            index.lexicon.as_mut().unwrap().min_listed = [1, 8, 64][seed as usize / 3 % 3];
            let mut state = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let mut next = move |n: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % n
            };
            let text = |next: &mut dyn FnMut(u64) -> u64| {
                let len = 1 + next(12);
                (0..len)
                    .map(|_| {
                        // Skewed: the first words are common, the last rare.
                        let w = next(WORDS.len() as u64).min(next(WORDS.len() as u64));
                        WORDS[w as usize]
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            for round in 0..4 {
                let mut batch = index.batch().unwrap();
                for f in 0..60 {
                    if round > 0 && next(3) == 0 {
                        index.remove_file(&format!("memory/{f}.md")).unwrap();
                        continue;
                    }
                    let mut chunks: Vec<ChunkRecord> = (0..1 + next(8))
                        .map(|i| entry(&format!("- {}", text(&mut next)), i as u32 + 1))
                        .collect();
                    chunks.push(ChunkRecord {
                        kind: ChunkKind::Window,
                        ..entry(&text(&mut next), 1)
                    });
                    index
                        .replace_file(&file(&format!("memory/{f}.md"), chunks))
                        .unwrap();
                    // Written again in the same transaction: its first rows
                    // are added and removed before anything is applied.
                    if next(6) == 0 {
                        let again = vec![entry(&format!("- {}", text(&mut next)), 1)];
                        index
                            .replace_file(&file(&format!("memory/{f}.md"), again))
                            .unwrap();
                    }
                }
                batch.checkpoint().unwrap();
                batch.commit().unwrap();
                for q in 0..25 {
                    let terms: Vec<String> = (0..1 + next(4))
                        .map(|_| WORDS[next(WORDS.len() as u64) as usize].to_string())
                        .collect();
                    let k = [1, 5, 24][q % 3];
                    for table in [FtsTable::Entries, FtsTable::Windows] {
                        let fts = fts_query(&terms, FtsTokenizer::Unicode61).unwrap();
                        let expected = index.scored_by_fts(table, &fts, k).unwrap();
                        let lexicon = index.lexicon.as_ref().unwrap();
                        let Some(found) = lexicon
                            .top_k(&index.conn, table, &terms, k as usize)
                            .unwrap()
                        else {
                            continue;
                        };
                        settled += 1;
                        let bits =
                            |v: &[(i64, f64)]| v.iter().map(|x| x.1.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            bits(&found),
                            bits(&expected),
                            "seed {seed} round {round} {terms:?} k {k}"
                        );
                        let tied = expected.windows(2).any(|w| w[0].1 == w[1].1);
                        if !tied {
                            assert_eq!(found, expected, "seed {seed} round {round} {terms:?}");
                        }
                    }
                }
            }
            for word in WORDS {
                let rows = |table: &str| {
                    let counted = index
                        .conn
                        .query_row(
                            &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
                            &[Value::Text(&format!("\"{word}\""))],
                            |r| Ok(r.get_i64(0)),
                        )
                        .unwrap()
                        .unwrap_or(0);
                    counted
                };
                let lexicon = index.lexicon.as_ref().unwrap();
                let token = lexicon.tokenize(word, Purpose::Query).unwrap().concat();
                for (kind, table) in [("entry", "entries_fts"), ("window", "windows_fts")] {
                    let kept = index
                        .conn
                        .query_row(
                            "SELECT rows FROM lexicon WHERE kind = ?1 AND term = ?2",
                            &[Value::Text(kind), Value::Blob(&token)],
                            |r| Ok(r.get_i64(0)),
                        )
                        .unwrap();
                    // Only the terms a search has listed are kept.
                    let Some(kept) = kept else { continue };
                    assert_eq!(kept, rows(table), "{word} in {table}");
                    // A term's blocks, where a search built them, hold every
                    // row FTS5 has for it.
                    let fts = if kind == "entry" {
                        FtsTable::Entries
                    } else {
                        FtsTable::Windows
                    };
                    let has_impacts = index
                        .conn
                        .query_row(
                            "SELECT 1 FROM lexicon WHERE kind = ?1 AND term = ?2",
                            &[Value::Text(kind), Value::Blob(&token)],
                            |r| Ok(r.get_i64(0) == 1),
                        )
                        .unwrap()
                        .unwrap_or(false);
                    if has_impacts {
                        let blocks = lexicon.postings(&index.conn, fts, &token, kept).unwrap();
                        let blocks = blocks.unwrap_or_else(|| panic!("{word}: blocks lost"));
                        let walked = index
                            .conn
                            .query(
                                &format!("SELECT rowid FROM {table} WHERE {table} MATCH ?1"),
                                &[Value::Text(&format!("\"{word}\""))],
                                |r| Ok(r.get_i64(0)),
                            )
                            .unwrap();
                        let rows: Vec<i64> = blocks.iter().map(|p| p.row).collect();
                        assert_eq!(rows, walked, "{word} in {table}");
                        checked_blocks += 1;
                    }
                }
            }
        }
        assert!(
            settled > 1700,
            "the lexicon answered only {settled} of 1,800 searches"
        );
        assert!(
            checked_blocks > 100,
            "{checked_blocks} lists of blocks checked"
        );
    }
}
