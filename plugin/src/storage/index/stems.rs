//! The words of a text as the full-text index stems them: FTS5's Porter
//! tokenizer (over unicode61, diacritics removed), called from Rust. Search
//! scores a query's coverage of an entry with these, so a query word and
//! the form the index holds it under always agree ("running" and "runs"
//! are both "run" on each side).

use crate::storage::sqlite::fts5_tokens::{Purpose, Tokenizer};
use crate::storage::sqlite::{Connection, DbError};
use crate::text::words::is_stop_word;
use std::collections::HashSet;

/// The tokenizer of an index declared `unicode61` (`tokenizer_spec`); a
/// trigram index, which stems nothing, has its coverage counted in these
/// words too.
pub const PORTER_SPEC: &str = "porter unicode61 remove_diacritics 2";

pub struct Stemmer {
    tokenizer: Tokenizer,
}

impl Stemmer {
    /// # Safety
    /// `conn` must stay open while the stemmer is used (the `Index` holds
    /// both, the stemmer declared first so it is dropped first).
    pub unsafe fn new(conn: &Connection) -> Result<Stemmer, DbError> {
        Ok(Stemmer {
            tokenizer: conn.tokenizer(PORTER_SPEC)?,
        })
    }

    /// The stems of a text's content words: every token whose word is not
    /// a stop word.
    pub fn content_stems(&self, text: &str) -> Result<HashSet<String>, DbError> {
        let mut stems = HashSet::new();
        self.tokenizer
            .tokens_at(text, Purpose::Document, |token, span| {
                let word = text.get(span).unwrap_or_default().to_lowercase();
                if !is_stop_word(&word) {
                    stems.insert(String::from_utf8_lossy(token).into_owned());
                }
            })
            .map_err(tokenizer_failed)?;
        Ok(stems)
    }

    /// The stems of a query's terms (`text::words::query_terms`: stop words
    /// are already gone unless the query holds nothing else).
    pub fn term_stems(&self, terms: &[String]) -> Result<HashSet<String>, DbError> {
        let mut stems = HashSet::new();
        for term in terms {
            self.tokenizer
                .tokens(term, Purpose::Query, |token| {
                    stems.insert(String::from_utf8_lossy(token).into_owned());
                })
                .map_err(tokenizer_failed)?;
        }
        Ok(stems)
    }
}

fn tokenizer_failed(rc: std::ffi::c_int) -> DbError {
    DbError::misuse(format!("the FTS5 tokenizer failed ({rc})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stemmer(conn: &Connection) -> Stemmer {
        unsafe { Stemmer::new(conn) }.unwrap()
    }

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_query_word_and_its_indexed_forms_meet() {
        let conn = Connection::open_in_memory().unwrap();
        let s = stemmer(&conn);
        let query = s
            .term_stems(&["running".into(), "decided".into(), "servers".into()])
            .unwrap();
        assert_eq!(query, set(&["run", "decid", "server"]));
        let entry = s
            .content_stems("We decide it: the server runs, and Runs again.")
            .unwrap();
        assert!(query.iter().all(|q| entry.contains(q)), "{entry:?}");
        // Stop words are left out by the word they came from.
        assert!(!entry.contains("the") && !entry.contains("it") && !entry.contains("we"));
    }

    #[test]
    fn diacritics_and_case_fold_as_the_index_folds_them() {
        let conn = Connection::open_in_memory().unwrap();
        let s = stemmer(&conn);
        assert_eq!(s.term_stems(&["café".into()]).unwrap(), set(&["cafe"]));
        assert!(s
            .content_stems("Lunch at the CAFÉ")
            .unwrap()
            .contains("cafe"));
    }

    #[test]
    fn the_stems_are_the_index_s_own_terms() {
        // What FTS5 itself matches: a row found by MATCH on each word.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{PORTER_SPEC}');\
             INSERT INTO t(x) VALUES ('generalizations of connected relational hopefulness');"
        ))
        .unwrap();
        let s = stemmer(&conn);
        for word in ["generalization", "connecting", "relate", "hopeful"] {
            let stems = s.term_stems(&[word.to_string()]).unwrap();
            let entry = s
                .content_stems("generalizations of connected relational hopefulness")
                .unwrap();
            let matched: i64 = conn
                .query_row(
                    "SELECT count(*) FROM t WHERE t MATCH ?1",
                    &[crate::storage::sqlite::Value::Text(&format!("\"{word}\""))],
                    |r| Ok(r.get_i64(0)),
                )
                .unwrap()
                .unwrap();
            assert_eq!(
                stems.iter().all(|q| entry.contains(q)),
                matched == 1,
                "{word}: {stems:?} vs {entry:?}"
            );
        }
    }
}
