//! The index's side of the vector leg: the entries' sign codes and their
//! centre (kept in step with the vectors as entries are written), the code
//! table loaded at a search's first use, and exact vectors read by id.

use super::Index;
use crate::host::embedding::{decode, encode};
use crate::logic::vectors::codes::{code_from_bytes, code_to_bytes};
use crate::logic::vectors::{Centre, CentreBuilder, CodeChange, CodeTable};
use crate::storage::sqlite::{DbError, Value};

impl Index {
    /// The centre codes are taken about, with its embedder (cached).
    pub(super) fn code_centre(&self) -> Result<Option<(String, Centre)>, DbError> {
        if let Some(cached) = self.centre.borrow().as_ref() {
            return Ok(cached.clone());
        }
        let row =
            self.conn
                .query_row("SELECT label, vectors, mean FROM code_centre", &[], |r| {
                    Ok((
                        r.get_text(0),
                        Centre {
                            vectors: r.get_i64(1) as u64,
                            mean: decode(&r.get_blob(2)),
                        },
                    ))
                })?;
        *self.centre.borrow_mut() = Some(row.clone());
        Ok(row)
    }

    /// Writes (or removes) the code of entry `id` after its vector changed.
    pub(super) fn record_vector(
        &self,
        id: i64,
        vector: Option<(&str, &[f32])>,
    ) -> Result<(), DbError> {
        self.vector_changes.borrow_mut().touched(id);
        let code = match (vector, self.code_centre()?) {
            (Some((label, v)), Some((centre_label, centre)))
                if label == centre_label && v.len() == centre.mean.len() =>
            {
                code_to_bytes(&centre.code(v))
            }
            _ => {
                self.conn.execute(
                    "DELETE FROM entry_codes WHERE id = ?1",
                    &[Value::Integer(id)],
                )?;
                return Ok(());
            }
        };
        self.conn.execute(
            "INSERT OR REPLACE INTO entry_codes (id, code) VALUES (?1, ?2)",
            &[Value::Integer(id), Value::Blob(&code)],
        )?;
        Ok(())
    }

    /// The ids whose codes may have changed since the table loaded at
    /// `revision`, or `None` when a reload is needed (see
    /// `vector_changes`); the log starts again now.
    pub fn vector_changes_since(&self, revision: u64) -> Result<Option<Vec<i64>>, DbError> {
        let now = self.revision()?;
        Ok(self.vector_changes.borrow_mut().take_since(revision, now))
    }

    /// The codes of these entries as the index holds them now (`None` for
    /// an entry without one), in id order.
    pub fn codes_of(&self, ids: &[i64], words: usize) -> Result<Vec<CodeChange>, DbError> {
        let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let found: std::collections::HashMap<i64, Vec<u64>> = self
            .conn
            .query(
                "SELECT id, code FROM entry_codes WHERE id IN (SELECT value FROM json_each(?1))",
                &[Value::Text(&list)],
                |r| Ok((r.get_i64(0), r.get_blob(1))),
            )?
            .into_iter()
            .filter_map(|(id, bytes)| Some((id, code_from_bytes(&bytes, words)?)))
            .collect();
        let mut out: Vec<CodeChange> = ids.iter().map(|id| (*id, found.get(id).cloned())).collect();
        out.sort_unstable_by_key(|(id, _)| *id);
        out.dedup_by_key(|(id, _)| *id);
        Ok(out)
    }

    /// Makes or renews `label`'s centre (and every code) during a sync,
    /// while the table is still small: a first index then codes its entries
    /// as it writes them, and no search has to re-code a large table. Once
    /// the centre is final this costs nothing. Returns whether it re-coded.
    pub fn settle_code_centre(&self, label: &str, dims: usize) -> Result<bool, DbError> {
        let current = self
            .code_centre()?
            .filter(|(l, c)| l == label && c.mean.len() == dims);
        if current.as_ref().is_some_and(|(_, c)| c.is_final()) {
            return Ok(false);
        }
        let vectors = self
            .conn
            .query_row(
                "SELECT count(*) FROM chunks WHERE kind = 'entry' AND embedding_model = ?1 AND embedding IS NOT NULL",
                &[Value::Text(label)],
                |r| Ok(r.get_i64(0) as u64),
            )?
            .unwrap_or(0);
        let due = match &current {
            Some((_, centre)) => centre.is_stale_for(vectors),
            None => Centre::due_for(vectors),
        };
        if due {
            self.recode(label, dims, true)?;
        }
        Ok(due)
    }

    /// The code table of embedder `label` with its centre. Codes are made
    /// afresh (a new centre, every entry re-coded, and written when
    /// `persist`) when there is no centre for `label` or the entries have
    /// outgrown it; otherwise they are read as stored.
    pub fn code_table(
        &self,
        label: &str,
        dims: usize,
        persist: bool,
    ) -> Result<(Centre, CodeTable), DbError> {
        if let Some((centre_label, centre)) = self.code_centre()? {
            if centre_label == label && centre.mean.len() == dims {
                let table = self.stored_codes(centre.words())?;
                if !centre.is_stale_for(table.len() as u64) {
                    return Ok((centre, table));
                }
            }
        }
        self.recode(label, dims, persist)
    }

    fn stored_codes(&self, words: usize) -> Result<CodeTable, DbError> {
        let mut table = CodeTable::new(words);
        // Sized first: grown by doubling, a table of two million codes took
        // up to three times its 112 MB while loading.
        let count =
            self.conn.query_row(
                "SELECT count(*) FROM entry_codes",
                &[],
                |r| Ok(r.get_i64(0)),
            )?;
        table.reserve(count.and_then(|n| usize::try_from(n).ok()).unwrap_or(0));
        self.conn
            .query("SELECT id, code FROM entry_codes ORDER BY id", &[], |r| {
                if let Some(code) = code_from_bytes(&r.get_blob(1), words) {
                    table.push(r.get_i64(0), &code);
                }
                Ok(())
            })?;
        Ok(table)
    }

    /// A new centre for `label`'s vectors and every entry's code about it:
    /// two passes over the vectors, so they are never all held at once.
    fn recode(
        &self,
        label: &str,
        dims: usize,
        persist: bool,
    ) -> Result<(Centre, CodeTable), DbError> {
        const VECTORS: &str = "SELECT id, embedding FROM chunks WHERE kind = 'entry' \
             AND embedding_model = ?1 AND embedding IS NOT NULL ORDER BY id";
        let mut builder = CentreBuilder::new(dims);
        self.conn.query(VECTORS, &[Value::Text(label)], |r| {
            builder.add(&decode(&r.get_blob(1)));
            Ok(())
        })?;
        let centre = builder.finish().unwrap_or(Centre {
            mean: vec![0.0; dims],
            vectors: 0,
        });
        let mut table = CodeTable::new(centre.words());
        table.reserve(usize::try_from(centre.vectors).unwrap_or(0));
        self.conn.query(VECTORS, &[Value::Text(label)], |r| {
            let v = decode(&r.get_blob(1));
            if v.len() == dims {
                table.push(r.get_i64(0), &centre.code(&v));
            }
            Ok(())
        })?;
        if persist {
            self.store_codes(label, &centre, &table)?;
        }
        Ok((centre, table))
    }

    fn store_codes(&self, label: &str, centre: &Centre, table: &CodeTable) -> Result<(), DbError> {
        self.transaction(|| {
            self.conn
                .execute_batch("DELETE FROM entry_codes; DELETE FROM code_centre;")?;
            self.conn.execute(
                "INSERT INTO code_centre (label, vectors, mean) VALUES (?1, ?2, ?3)",
                &[
                    Value::Text(label),
                    Value::Integer(centre.vectors as i64),
                    Value::Blob(&encode(&centre.mean)),
                ],
            )?;
            for (at, id) in table.ids().iter().enumerate() {
                self.conn.execute(
                    "INSERT INTO entry_codes (id, code) VALUES (?1, ?2)",
                    &[
                        Value::Integer(*id),
                        Value::Blob(&code_to_bytes(table.code(at))),
                    ],
                )?;
            }
            Ok(())
        })
        .inspect_err(|_| *self.centre.borrow_mut() = None)?;
        *self.centre.borrow_mut() = Some(Some((label.to_string(), centre.clone())));
        Ok(())
    }

    /// The exact vectors of these entries under `label` (entries without
    /// one are left out).
    pub fn vectors_of(&self, ids: &[i64], label: &str) -> Result<Vec<(i64, Vec<f32>)>, DbError> {
        let list = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        self.conn.query(
            "SELECT id, embedding FROM chunks WHERE id IN (SELECT value FROM json_each(?1)) \
             AND embedding_model = ?2 AND embedding IS NOT NULL",
            &[Value::Text(&list), Value::Text(label)],
            |r| Ok((r.get_i64(0), decode(&r.get_blob(1)))),
        )
    }
}
