//! The lexicon beside the full-text indexes: for each term a search has
//! needed, how many rows hold it, its impacts (the rows where it weighs
//! most, and a bound for the others; `logic::lexical`) and its complete
//! list in blocks. A search settles its best rows from the impacts when the
//! bound allows, else merges the complete lists, skipping the postings
//! the lists' maxima rule out (MaxScore). FTS5 scores what the lists cannot: trigram indexes, phrases of
//! several tokens, a search inside a write transaction, lists that disagree
//! with their count (dropped, to be built again).
//!
//! Terms are FTS5's own tokens (its tokenizer is called, Porter stemming
//! included), so the lists hold exactly what FTS5 matches. A term's lists
//! are built from one FTS5 walk when a search first needs it (a term held by
//! fewer than `MIN_LISTED` rows is walked at each search instead), and from
//! then on every write that adds or removes a row holding it updates them:
//! the changes are gathered per transaction and applied before it commits
//! (or discarded with it).

use crate::logic::lexical::{self, Impacts, Listed, Phrase, Posting, TermChanges, TopK};
use crate::storage::sqlite::fts5_rank::length_of_rowid;
use crate::storage::sqlite::fts5_tokens::{Purpose, Tokenizer};
use crate::storage::sqlite::{Connection, DbError, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::term_cache::{CachedTerm, TermCache};

/// Rows a term's list keeps in full when it is built (up to twice as many
/// as rows are added; the weakest then go to the frontier).
pub const KEEP: usize = 2048;

/// Rows a term must be held by for a search to keep its lists: a rarer
/// term's walk costs about what reading its lists would, and keeping them
/// costs more than either, for every typo and ticket number searched once.
const MIN_LISTED: i64 = 64;

/// Rows whose frequencies are not in the lists that a search may read and
/// tokenize before it scores the complete lists instead. Windows are long
/// (hundreds of tokens): the complete lists are cheaper from the start.
fn score_budget(table: FtsTable, k: usize) -> usize {
    match table {
        FtsTable::Entries => 4 * k + 64,
        FtsTable::Windows => 0,
    }
}

/// Changes (a row gained or lost by a term) gathered before they are
/// applied within a transaction: a first index's windows alone would
/// otherwise gather about a million.
const FLUSH_AT_CHANGES: usize = 65_536;

/// The full-text tables the lexicon covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FtsTable {
    Entries,
    Windows,
}

impl FtsTable {
    pub fn name(self) -> &'static str {
        match self {
            FtsTable::Entries => "entries_fts",
            FtsTable::Windows => "windows_fts",
        }
    }

    /// The `kind` its lexicon rows are stored under.
    fn kind(self) -> &'static str {
        match self {
            FtsTable::Entries => "entry",
            FtsTable::Windows => "window",
        }
    }

    /// Each column's weight in BM25: an entry's body outweighs the heading
    /// it sits under.
    pub fn weights(self) -> &'static [f64] {
        match self {
            FtsTable::Entries => &[1.0, 0.25],
            FtsTable::Windows => &[1.0],
        }
    }

    /// The weights as `memory_bm25`'s arguments.
    pub fn weight_args(self) -> String {
        self.weights()
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What the lexicon keeps of a term.
enum Stored {
    Usable(CachedTerm),
    /// Kept, but worn down (or unreadable): to be built again.
    Worn,
    Absent,
}

/// A term of one of the tables, as FTS5 indexed it.
type TermKey = (FtsTable, Vec<u8>);

pub struct Lexicon {
    tokenizer: Tokenizer,
    /// Rows a list keeps in full ([`KEEP`]; smaller in tests, to exercise
    /// the frontier on small corpora).
    pub(super) keep: usize,
    /// Postings per stored block ([`lexical::BLOCK`]; smaller in tests).
    pub(super) block: usize,
    /// Rows a term must be held by for a search to keep its lists
    /// ([`MIN_LISTED`]; varied in tests).
    pub(super) min_listed: i64,
    /// Changes not yet applied, by table and term, and how many.
    pending: RefCell<HashMap<TermKey, TermChanges>>,
    pending_changes: std::cell::Cell<usize>,
    /// Terms' lists as searches last read them.
    cache: RefCell<TermCache<TermKey>>,
    /// The terms that have lists (rows of `lexicon`), read when first
    /// needed: a write only gathers changes for these.
    listed: RefCell<Option<std::collections::HashSet<TermKey>>>,
    /// The `data_version` `listed` was checked at.
    listed_version: std::cell::Cell<Option<i64>>,
}

impl Lexicon {
    pub fn new(tokenizer: Tokenizer) -> Lexicon {
        Lexicon {
            tokenizer,
            keep: KEEP,
            block: lexical::BLOCK,
            min_listed: MIN_LISTED,
            pending: RefCell::default(),
            pending_changes: Default::default(),
            cache: RefCell::default(),
            listed: RefCell::default(),
            listed_version: Default::default(),
        }
    }

    /// A row written to a full-text table, with its columns as given to it
    /// (inside the transaction that writes it).
    pub fn row_added(
        &self,
        conn: &Connection,
        table: FtsTable,
        row: i64,
        columns: &[&str],
    ) -> Result<(), DbError> {
        let length = length_of_rowid(row) as u16;
        self.gather(conn, table, columns, |changes, frequency| {
            changes.add(Posting {
                row,
                frequency: frequency as f32,
                length,
            })
        })
    }

    /// A row removed from a full-text table, with the columns it had
    /// (inside the transaction that removes it).
    pub fn row_removed(
        &self,
        conn: &Connection,
        table: FtsTable,
        row: i64,
        columns: &[&str],
    ) -> Result<(), DbError> {
        self.gather(conn, table, columns, |changes, _| changes.remove(row))
    }

    /// Records a change for each listed term of a row's columns (`record`:
    /// given the term's changes and its weighted frequency in the row).
    fn gather(
        &self,
        conn: &Connection,
        table: FtsTable,
        columns: &[&str],
        record: impl Fn(&mut TermChanges, f64),
    ) -> Result<(), DbError> {
        let frequencies = self.listed_frequencies(conn, table, columns)?;
        self.pending_changes
            .set(self.pending_changes.get() + frequencies.len());
        let mut pending = self.pending.borrow_mut();
        for (term, frequency) in frequencies {
            record(pending.entry((table, term)).or_default(), frequency);
        }
        drop(pending);
        self.flush_when_large(conn)
    }

    /// Applies the gathered changes early when there are many, so a
    /// large transaction (a first index) does not gather them all in memory.
    fn flush_when_large(&self, conn: &Connection) -> Result<(), DbError> {
        if self.pending_changes.get() >= FLUSH_AT_CHANGES {
            self.flush(conn)?;
        }
        Ok(())
    }

    /// At the start of a write transaction: the listed terms are read again
    /// if another connection changed the file since they were read.
    pub fn begin(&self, conn: &Connection) -> Result<(), DbError> {
        let version = data_version(conn)?;
        if self.listed_version.get() != Some(version) {
            *self.listed.borrow_mut() = None;
            self.listed_version.set(Some(version));
        }
        Ok(())
    }

    /// Forgets changes whose transaction was rolled back (and the lists read
    /// since: a flush before a failed commit may have changed them).
    pub fn discard(&self) {
        self.pending.borrow_mut().clear();
        self.pending_changes.set(0);
        self.cache.borrow_mut().clear();
        *self.listed.borrow_mut() = None;
    }

    /// Applies the gathered changes (inside the transaction that made them).
    pub fn flush(&self, conn: &Connection) -> Result<(), DbError> {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        self.pending_changes.set(0);
        let mut averages: HashMap<FtsTable, f64> = HashMap::new();
        for ((table, term), changes) in pending {
            self.cache.borrow_mut().forget(&(table, term.clone()));
            let key = [Value::Text(table.kind()), Value::Blob(&term)];
            let (rows, stored) = conn
                .query_row(
                    "UPDATE lexicon SET rows = rows + ?3 WHERE kind = ?1 AND term = ?2 \
                     RETURNING rows, impacts",
                    &[key[0], key[1], Value::Integer(changes.row_delta())],
                    |r| Ok((r.get_i64(0), r.get_blob(1))),
                )?
                .unwrap_or_default();
            if rows <= 0 {
                // No rows left (or the term's lists are gone): nothing to keep.
                self.drop_lists(conn, table, &term)?;
                continue;
            }
            // A list that cannot be read is dropped: the next search that
            // needs it builds it again.
            let updated = Impacts::decode(&stored).map(|mut impacts| {
                let avg = match averages.get(&table) {
                    Some(&avg) => avg,
                    None => {
                        let avg = totals(conn, table)?.1;
                        averages.insert(table, avg);
                        avg
                    }
                };
                changes.apply(&mut impacts, avg, self.keep);
                Ok::<_, DbError>(impacts.encode())
            });
            match updated.transpose()? {
                Some(blob) if update_blocks(conn, table, &term, &changes, self.block)? => {
                    conn.execute(
                        "UPDATE lexicon SET impacts = ?3 WHERE kind = ?1 AND term = ?2",
                        &[key[0], key[1], Value::Blob(&blob)],
                    )?;
                }
                _ => self.drop_lists(conn, table, &term)?,
            }
        }
        Ok(())
    }

    /// Removes a term's lists (its `lexicon` row and its blocks).
    fn drop_lists(&self, conn: &Connection, table: FtsTable, term: &[u8]) -> Result<(), DbError> {
        let key = [Value::Text(table.kind()), Value::Blob(term)];
        conn.execute("DELETE FROM lexicon WHERE kind = ?1 AND term = ?2", &key)?;
        conn.execute("DELETE FROM postings WHERE kind = ?1 AND term = ?2", &key)?;
        if let Some(listed) = self.listed.borrow_mut().as_mut() {
            listed.remove(&(table, term.to_vec()));
        }
        Ok(())
    }

    /// Each listed term's weighted frequency in a row's columns (the others
    /// need nothing from a write).
    fn listed_frequencies(
        &self,
        conn: &Connection,
        table: FtsTable,
        columns: &[&str],
    ) -> Result<HashMap<Vec<u8>, f64>, DbError> {
        if self.listed.borrow().is_none() {
            let rows = conn.query("SELECT kind, term FROM lexicon", &[], |r| {
                let table = match r.get_text(0).as_str() {
                    "window" => FtsTable::Windows,
                    _ => FtsTable::Entries,
                };
                Ok((table, r.get_blob(1)))
            })?;
            *self.listed.borrow_mut() = Some(rows.into_iter().collect());
        }
        let listed = self.listed.borrow();
        let Some(listed) = listed.as_ref().filter(|l| !l.is_empty()) else {
            return Ok(HashMap::new());
        };
        let mut frequencies = self.frequencies(table, columns)?;
        frequencies.retain(|term, _| listed.contains(&(table, term.clone())));
        Ok(frequencies)
    }

    /// The `k` best rows of `table` for an OR of `phrases`, best first with
    /// their BM25 scores, as `memory_bm25` would rank them; `None` when the
    /// lists cannot settle it (the caller then asks FTS5).
    pub fn top_k(
        &self,
        conn: &Connection,
        table: FtsTable,
        phrases: &[String],
        k: usize,
    ) -> Result<Option<Vec<(i64, f64)>>, DbError> {
        // Inside a write transaction FTS5's averages record (read by
        // `totals`) lags the rows it holds in memory, and changes may be
        // gathered but not applied: FTS5 scores it.
        if conn.in_transaction() || !self.pending.borrow().is_empty() {
            return Ok(None);
        }
        // Each phrase must be one token (a phrase of several is matched by
        // position, which the lists do not hold).
        let mut tokens: Vec<Option<Vec<u8>>> = Vec::with_capacity(phrases.len());
        for phrase in phrases {
            let Ok(mut found) = self.tokenize(phrase, Purpose::Query) else {
                return Ok(None);
            };
            match found.len() {
                0 => tokens.push(None),
                1 => tokens.push(found.pop()),
                _ => return Ok(None),
            }
        }
        let version = data_version(conn)?;
        let (rows, avg) = totals(conn, table)?;
        self.cache.borrow_mut().at_version(version);
        let mut terms: HashMap<&[u8], CachedTerm> = HashMap::new();
        let mut walked: Vec<(&[u8], CachedTerm)> = Vec::new();
        for (phrase, token) in phrases.iter().zip(&tokens) {
            let Some(token) = token else { continue };
            if terms.contains_key(token.as_slice()) {
                continue;
            }
            let key = (table, token.clone());
            let cached = self.cache.borrow_mut().get(&key);
            let term = match cached {
                Some(term) => term,
                None => match self.stored_term(conn, table, token)? {
                    Stored::Usable(term) => {
                        self.cache.borrow_mut().put(key, term.clone());
                        term
                    }
                    stored => {
                        let term = self.walk(conn, table, phrase, avg)?;
                        // Worn lists are built again whatever the count
                        // (writes keep them up to date, and a row left
                        // stale would be read and walked at every search).
                        if term.count >= self.min_listed.max(1) || matches!(stored, Stored::Worn) {
                            walked.push((token, term.clone()));
                        }
                        term
                    }
                },
            };
            terms.insert(token, term);
        }
        self.keep_lists(conn, table, walked);
        let view: Vec<Phrase> = tokens
            .iter()
            .map(
                |token| match token.as_ref().and_then(|t| terms.get(t.as_slice())) {
                    Some(term) => Phrase {
                        idf: lexical::idf(rows, term.count),
                        impacts: term.impacts.as_deref(),
                    },
                    None => Phrase {
                        idf: lexical::idf(rows, 0),
                        impacts: None,
                    },
                },
            )
            .collect();
        let idfs: Vec<f64> = view.iter().map(|p| p.idf).collect();
        let length_of = |row: i64| length_of_rowid(row) as f64;
        let mut scored: HashMap<i64, f64> = HashMap::new();
        loop {
            match lexical::plan(&view, avg, k, length_of, &scored) {
                TopK::Settled(best) => return Ok(Some(best)),
                TopK::Unsettled => break,
                // Reading and tokenizing rows one by one soon costs more
                // than scoring the complete lists.
                TopK::Score(rows) if scored.len() + rows.len() > score_budget(table, k) => break,
                TopK::Score(rows) => {
                    for (row, columns) in self.columns_of(conn, table, &rows)? {
                        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
                        let counts = self.frequencies(table, &refs)?;
                        let f: Vec<f64> = tokens
                            .iter()
                            .map(|t| {
                                t.as_ref()
                                    .and_then(|t| counts.get(t))
                                    .copied()
                                    .unwrap_or(0.0)
                            })
                            .collect();
                        let norm = lexical::norm(length_of(row), avg);
                        scored.insert(row, lexical::score(&idfs, &f, norm));
                    }
                    // A row that has gone cannot be scored: leave it to FTS5.
                    if rows.iter().any(|r| !scored.contains_key(r)) {
                        return Ok(None);
                    }
                }
            }
        }
        // The impacts cannot settle it: the complete lists, merged.
        let mut lists: HashMap<&[u8], Rc<Vec<Posting>>> = HashMap::new();
        for (token, term) in &terms {
            if term.count == 0 {
                continue;
            }
            let postings = match &term.postings {
                Some(postings) => postings.clone(),
                None => match self.postings(conn, table, token, term.count)? {
                    // Another connection committed since the impacts were
                    // read: they may not bound this list (a row added
                    // since would be skipped), and a count that disagrees
                    // is no sign of damage. FTS5 answers this search.
                    _ if data_version(conn)? != version => return Ok(None),
                    None => {
                        // Lists that disagree with their count are dropped
                        // (the next search builds them again); a read-only
                        // index just leaves this search to FTS5.
                        let _ = conn.transaction(|| self.drop_lists(conn, table, token));
                        self.cache.borrow_mut().forget(&(table, token.to_vec()));
                        return Ok(None);
                    }
                    Some(postings) => {
                        let postings = Rc::new(postings);
                        let mut known = term.clone();
                        known.postings = Some(postings.clone());
                        self.cache.borrow_mut().put((table, token.to_vec()), known);
                        postings
                    }
                },
            };
            lists.insert(token, postings);
        }
        let phrases: Vec<Listed> = tokens
            .iter()
            .zip(&view)
            .map(|(token, phrase)| {
                let list = token.as_ref().and_then(|t| lists.get(t.as_slice()));
                Listed {
                    idf: phrase.idf,
                    postings: list.map_or(&[][..], |l| l.as_slice()),
                    strongest: match phrase.impacts {
                        Some(impacts) => impacts.strongest(avg),
                        None => lexical::strongest_of(list.map_or(&[][..], |l| l), avg),
                    },
                }
            })
            .collect();
        Ok(Some(lexical::score_all(&phrases, avg, k)))
    }

    /// A term's row count and impacts as kept (listed).
    fn stored_term(
        &self,
        conn: &Connection,
        table: FtsTable,
        token: &[u8],
    ) -> Result<Stored, DbError> {
        let key = [Value::Text(table.kind()), Value::Blob(token)];
        let stored = conn.query_row(
            "SELECT rows, impacts FROM lexicon WHERE kind = ?1 AND term = ?2",
            &key,
            |r| Ok((r.get_i64(0), r.get_blob(1))),
        )?;
        let Some((count, stored)) = stored else {
            return Ok(Stored::Absent);
        };
        Ok(
            match Impacts::decode(&stored).filter(|i| !i.is_worn(self.keep)) {
                Some(impacts) => Stored::Usable(CachedTerm {
                    count,
                    impacts: Some(Rc::new(impacts)),
                    postings: None,
                }),
                None => Stored::Worn,
            },
        )
    }

    /// A term's complete list, count and impacts from FTS5: one walk of the
    /// rows holding it.
    fn walk(
        &self,
        conn: &Connection,
        table: FtsTable,
        phrase: &str,
        avg: f64,
    ) -> Result<CachedTerm, DbError> {
        let name = table.name();
        let postings = conn.query(
            &format!(
                "SELECT rowid, memory_frequency({name}, {}) FROM {name} WHERE {name} MATCH ?1",
                table.weight_args()
            ),
            &[Value::Text(&format!("\"{}\"", phrase.replace('"', "\"\"")))],
            |r| {
                let row = r.get_i64(0);
                Ok(Posting {
                    row,
                    frequency: r.get_f64(1) as f32,
                    length: length_of_rowid(row) as u16,
                })
            },
        )?;
        let count = postings.len() as i64;
        Ok(CachedTerm {
            count,
            impacts: (count > 0).then(|| Rc::new(Impacts::build(&postings, avg, self.keep))),
            postings: Some(Rc::new(postings)),
        })
    }

    /// Keeps the walked terms' lists (impacts, and the complete list in
    /// blocks) for the next searches, all in one transaction: a transaction
    /// each cost more than the walks. A read-only index goes without.
    fn keep_lists(&self, conn: &Connection, table: FtsTable, walked: Vec<(&[u8], CachedTerm)>) {
        if walked.is_empty() {
            return;
        }
        let stored = conn.transaction(|| {
            for (token, term) in &walked {
                let key = [Value::Text(table.kind()), Value::Blob(token)];
                let (Some(impacts), Some(postings)) = (&term.impacts, &term.postings) else {
                    continue;
                };
                conn.execute("DELETE FROM postings WHERE kind = ?1 AND term = ?2", &key)?;
                for block in postings.chunks(self.block) {
                    insert_block(conn, table, token, block)?;
                }
                conn.execute(
                    "INSERT OR REPLACE INTO lexicon (kind, term, rows, impacts) VALUES (?1, ?2, ?3, ?4)",
                    &[key[0], key[1], Value::Integer(term.count), Value::Blob(&impacts.encode())],
                )?;
            }
            Ok(())
        });
        if stored.is_err() {
            return;
        }
        for (token, term) in walked {
            if let Some(listed) = self.listed.borrow_mut().as_mut() {
                listed.insert((table, token.to_vec()));
            }
            // Only listed terms are cached: a write tells the cache about
            // those alone, so a term no row held yet would stay "absent"
            // after a write added it.
            self.cache.borrow_mut().put((table, token.to_vec()), term);
        }
    }

    /// A term's complete list, from its blocks; `None` when they are
    /// missing, damaged or disagree with its row count.
    pub(super) fn postings(
        &self,
        conn: &Connection,
        table: FtsTable,
        token: &[u8],
        count: i64,
    ) -> Result<Option<Vec<Posting>>, DbError> {
        // Decoded as each block is read, into a list of the expected size.
        let mut postings = Vec::with_capacity(count.max(0) as usize);
        let mut readable = true;
        conn.query(
            "SELECT block FROM postings WHERE kind = ?1 AND term = ?2 ORDER BY first",
            &[Value::Text(table.kind()), Value::Blob(token)],
            |r| {
                readable &= r
                    .with_blob(0, |b| lexical::decode_block(b, &mut postings))
                    .is_some();
                Ok(())
            },
        )?;
        Ok((readable && postings.len() as i64 == count).then_some(postings))
    }

    /// The columns each row was indexed with.
    fn columns_of(
        &self,
        conn: &Connection,
        table: FtsTable,
        rows: &[i64],
    ) -> Result<Vec<(i64, Vec<String>)>, DbError> {
        let list = serde_json::to_string(rows).unwrap_or_else(|_| "[]".into());
        conn.query(
            "SELECT id, text, coalesce(heading, '') FROM chunks \
             WHERE id IN (SELECT value FROM json_each(?1))",
            &[Value::Text(&list)],
            |r| {
                let mut columns = vec![r.get_text(1)];
                if table == FtsTable::Entries {
                    columns.push(r.get_text(2));
                }
                Ok((r.get_i64(0), columns))
            },
        )
    }

    pub fn tokenize(&self, text: &str, purpose: Purpose) -> Result<Vec<Vec<u8>>, DbError> {
        self.tokenizer
            .tokenize(text, purpose)
            .map_err(|rc| DbError::misuse(format!("the FTS5 tokenizer failed ({rc})")))
    }

    /// Each term's weighted frequency in a row's columns.
    fn frequencies(
        &self,
        table: FtsTable,
        columns: &[&str],
    ) -> Result<HashMap<Vec<u8>, f64>, DbError> {
        let mut tokenized: Vec<(Vec<Vec<u8>>, f64)> = Vec::with_capacity(columns.len());
        for (text, &weight) in columns.iter().zip(table.weights()) {
            tokenized.push((self.tokenize(text, Purpose::Document)?, weight));
        }
        let counts = lexical::frequencies(
            tokenized
                .iter()
                .map(|(tokens, w)| (tokens.iter().map(Vec::as_slice).collect(), *w)),
        );
        Ok(counts.into_iter().map(|(t, f)| (t.to_vec(), f)).collect())
    }
}

fn insert_block(
    conn: &Connection,
    table: FtsTable,
    term: &[u8],
    block: &[Posting],
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO postings (kind, term, first, block) VALUES (?1, ?2, ?3, ?4)",
        &[
            Value::Text(table.kind()),
            Value::Blob(term),
            Value::Integer(block[0].row),
            Value::Blob(&lexical::encode_block(block)),
        ],
    )?;
    Ok(())
}

/// A block's first row and its postings (`None`: the block cannot be read).
type BlockAt = (i64, Option<Vec<Posting>>);

/// The block holding `row` (the last block starting at or before it):
/// its first row and postings. `None` inside: a block that cannot be read.
fn block_at(
    conn: &Connection,
    table: FtsTable,
    term: &[u8],
    row: i64,
) -> Result<Option<BlockAt>, DbError> {
    conn.query_row(
        "SELECT first, block FROM postings WHERE kind = ?1 AND term = ?2 AND first <= ?3 \
         ORDER BY first DESC LIMIT 1",
        &[
            Value::Text(table.kind()),
            Value::Blob(term),
            Value::Integer(row),
        ],
        |r| {
            let mut postings = Vec::new();
            let read = lexical::decode_block(&r.get_blob(1), &mut postings);
            Ok((r.get_i64(0), read.map(|()| postings)))
        },
    )
}

/// Applies a term's changes to its blocks: removed rows taken out of the
/// blocks holding them, added rows (always past the last) appended to the
/// last block, split at `block_size`. `false`: a block could not be
/// read (the caller drops the term's lists, rebuilt when next needed).
fn update_blocks(
    conn: &Connection,
    table: FtsTable,
    term: &[u8],
    changes: &TermChanges,
    block_size: usize,
) -> Result<bool, DbError> {
    let replace = |first: i64, postings: &[Posting]| -> Result<(), DbError> {
        conn.execute(
            "DELETE FROM postings WHERE kind = ?1 AND term = ?2 AND first = ?3",
            &[
                Value::Text(table.kind()),
                Value::Blob(term),
                Value::Integer(first),
            ],
        )?;
        for block in postings.chunks(block_size) {
            insert_block(conn, table, term, block)?;
        }
        Ok(())
    };
    let mut removed = changes.removed.clone();
    removed.sort_unstable();
    let mut i = 0;
    while i < removed.len() {
        let Some((first, postings)) = block_at(conn, table, term, removed[i])? else {
            i += 1;
            continue;
        };
        let Some(mut postings) = postings else {
            return Ok(false);
        };
        let last = postings.last().map_or(first, |p| p.row);
        let end = i + removed[i..].partition_point(|&r| r <= last);
        let gone = &removed[i..end.max(i + 1)];
        postings.retain(|p| gone.binary_search(&p.row).is_err());
        replace(first, &postings)?;
        i = end.max(i + 1);
    }
    if let Some(added_first) = changes.added.iter().map(|p| p.row).min() {
        let (first, mut tail) = match block_at(conn, table, term, i64::MAX)? {
            Some((first, Some(postings))) => (Some(first), postings),
            Some((_, None)) => return Ok(false),
            None => (None, Vec::new()),
        };
        tail.extend(changes.added.iter().copied());
        tail.sort_by_key(|p| p.row);
        tail.dedup_by_key(|p| p.row);
        match first {
            Some(first) => replace(first, &tail)?,
            None => replace(added_first, &tail)?,
        }
    }
    Ok(true)
}

/// SQLite's count of commits by other connections to the file.
fn data_version(conn: &Connection) -> Result<i64, DbError> {
    Ok(conn
        .query_row("PRAGMA data_version", &[], |r| Ok(r.get_i64(0)))?
        .unwrap_or(0))
}

/// A full-text table's row count and average row length in tokens, from
/// FTS5's averages record (the numbers `memory_bm25` reads through
/// `xRowCount` and `xColumnTotalSize`).
fn totals(conn: &Connection, table: FtsTable) -> Result<(i64, f64), DbError> {
    let record = conn
        .query_row(
            &format!("SELECT block FROM {}_data WHERE id = 1", table.name()),
            &[],
            |r| Ok(r.get_blob(0)),
        )?
        .unwrap_or_default();
    let mut values = Vec::new();
    let mut at = 0;
    while let Some((value, used)) = varint(&record[at..]) {
        values.push(value as i64);
        at += used;
    }
    let rows = values.first().copied().unwrap_or(0);
    let tokens: i64 = values.iter().skip(1).sum();
    let avg = if rows > 0 {
        tokens as f64 / rows as f64
    } else {
        1.0
    };
    Ok((rows, avg))
}

/// One of SQLite's varints (big-endian 7-bit groups; a ninth byte gives
/// all 8 bits): the value and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for i in 0..9 {
        let byte = *bytes.get(i)?;
        if i == 8 {
            return Some(((value << 8) | byte as u64, 9));
        }
        value = (value << 7) | (byte & 0x7f) as u64;
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0xff, 0x7f]), Some((16383, 2)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
    }
}
