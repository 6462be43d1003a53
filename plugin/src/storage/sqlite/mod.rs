//! Safe SQLite layer for the plugin: one connection type with cached statements,
//! the same API natively (libsqlite3-sys) and on wasm32-wasip2 (sqlite-wasm-rs
//! plus the std::fs-backed VFS in `wasi_vfs`).

mod error;
mod ffi;
pub mod fts5_rank;
pub mod fts5_tokens;
#[cfg(target_arch = "wasm32")]
mod host_hooks;
pub mod migrate;
#[cfg(target_arch = "wasm32")]
mod wasi_vfs;

pub use error::DbError;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, CStr, CString};
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::{self, NonNull};

/// Prepared statements kept per connection. The hot paths run a handful of
/// statements; the cap only bounds what ad-hoc SQL can pin in memory.
const STATEMENT_CACHE_CAPACITY: usize = 64;

/// A value bound to a `?` parameter. Text and blobs are copied by SQLite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// The current row of a statement being stepped. Column indexes are 0-based;
/// one past the last column is a caller bug: debug builds assert, release
/// builds read it as NULL (which is what SQLite returns).
pub struct Row<'s> {
    stmt: NonNull<ffi::sqlite3_stmt>,
    _stepping: PhantomData<&'s ffi::sqlite3_stmt>,
}

impl Row<'_> {
    pub fn get_i64(&self, col: usize) -> i64 {
        unsafe { ffi::sqlite3_column_int64(self.stmt.as_ptr(), self.index(col)) }
    }

    pub fn get_f64(&self, col: usize) -> f64 {
        unsafe { ffi::sqlite3_column_double(self.stmt.as_ptr(), self.index(col)) }
    }

    /// The column as UTF-8 text, with invalid sequences replaced; "" for NULL.
    pub fn get_text(&self, col: usize) -> String {
        let col = self.index(col);
        // Per the SQLite docs: fetch the pointer first, then its byte length.
        unsafe {
            let text = ffi::sqlite3_column_text(self.stmt.as_ptr(), col);
            let len = ffi::sqlite3_column_bytes(self.stmt.as_ptr(), col);
            String::from_utf8_lossy(raw_bytes(text, len)).into_owned()
        }
    }

    pub fn get_opt_text(&self, col: usize) -> Option<String> {
        (!self.is_null(col)).then(|| self.get_text(col))
    }

    pub fn get_opt_i64(&self, col: usize) -> Option<i64> {
        (!self.is_null(col)).then(|| self.get_i64(col))
    }

    /// The column's bytes; empty for NULL.
    pub fn get_blob(&self, col: usize) -> Vec<u8> {
        let col = self.index(col);
        unsafe {
            let blob = ffi::sqlite3_column_blob(self.stmt.as_ptr(), col);
            let len = ffi::sqlite3_column_bytes(self.stmt.as_ptr(), col);
            raw_bytes(blob.cast(), len).to_vec()
        }
    }

    /// Calls `f` with the column's bytes in place (no copy); empty for NULL.
    pub fn with_blob<T>(&self, col: usize, f: impl FnOnce(&[u8]) -> T) -> T {
        let col = self.index(col);
        unsafe {
            let blob = ffi::sqlite3_column_blob(self.stmt.as_ptr(), col);
            let len = ffi::sqlite3_column_bytes(self.stmt.as_ptr(), col);
            f(raw_bytes(blob.cast(), len))
        }
    }

    pub fn is_null(&self, col: usize) -> bool {
        unsafe { ffi::sqlite3_column_type(self.stmt.as_ptr(), self.index(col)) == ffi::SQLITE_NULL }
    }

    fn index(&self, col: usize) -> c_int {
        debug_assert!(
            col < unsafe { ffi::sqlite3_column_count(self.stmt.as_ptr()) } as usize,
            "column {col} out of range"
        );
        // SQLite answers NULL for an out-of-range index, so saturating is safe.
        c_int::try_from(col).unwrap_or(c_int::MAX)
    }
}

/// A SQLite connection. Not `Send`: the wasm build of SQLite is single-threaded.
pub struct Connection {
    db: NonNull<ffi::sqlite3>,
    /// Idle prepared statements by SQL text. A statement in use is taken out,
    /// so a callback that re-enters the connection never sees it half-stepped.
    cache: RefCell<HashMap<String, NonNull<ffi::sqlite3_stmt>>>,
}

fn utf8(path: &Path) -> Result<&str, DbError> {
    path.to_str()
        .ok_or_else(|| DbError::misuse(format!("database path is not UTF-8: {path:?}")))
}

impl Connection {
    /// Opens (creating if missing) the database file at `path`.
    pub fn open(path: &Path) -> Result<Connection, DbError> {
        Connection::open_with(
            utf8(path)?,
            ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
        )
    }

    /// Opens the existing database file at `path` for reading only: SQLite
    /// refuses every write with `SQLITE_READONLY`.
    pub fn open_read_only(path: &Path) -> Result<Connection, DbError> {
        Connection::open_with(utf8(path)?, ffi::SQLITE_OPEN_READONLY)
    }

    /// Opens a private, empty in-memory database.
    pub fn open_in_memory() -> Result<Connection, DbError> {
        Connection::open_with(
            ":memory:",
            ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
        )
    }

    fn open_with(name: &str, flags: c_int) -> Result<Connection, DbError> {
        #[cfg(target_arch = "wasm32")]
        wasi_vfs::ensure_registered()?;

        let c_name = CString::new(name)
            .map_err(|_| DbError::misuse(format!("database path contains NUL: {name:?}")))?;
        let mut db = ptr::null_mut();
        let rc = unsafe { ffi::sqlite3_open_v2(c_name.as_ptr(), &mut db, flags, ptr::null()) };
        let Some(db) = NonNull::new(db) else {
            return Err(DbError {
                code: ffi::SQLITE_NOMEM,
                message: error_string(rc),
            });
        };
        // Wrap first so a failed open still closes the handle SQLite allocated.
        let conn = Connection {
            db,
            cache: RefCell::new(HashMap::new()),
        };
        if rc != ffi::SQLITE_OK {
            return Err(conn.error(rc));
        }
        // Plans that do not depend on bound values: otherwise a `LIMIT ?`
        // makes SQLite re-prepare the statement on every execution.
        let mut set: c_int = 0;
        let rc = unsafe {
            ffi::sqlite3_db_config(
                conn.db.as_ptr(),
                ffi::SQLITE_DBCONFIG_ENABLE_QPSG,
                1 as c_int,
                &mut set as *mut c_int,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(conn.error(rc));
        }
        Ok(conn)
    }

    /// Makes `memory_bm25` (see `fts5_rank`) available on this connection.
    pub fn register_fts5_rank(&self) -> Result<(), DbError> {
        // SAFETY: `self.db` is open for as long as `self` lives.
        unsafe { fts5_rank::register(self.db.as_ptr()) }.map_err(DbError::misuse)
    }

    /// The FTS5 tokenizer of a `tokenize = '…'` spec, on this connection.
    ///
    /// # Safety
    /// The tokenizer must be dropped before the connection (nothing ties
    /// their lifetimes: declare it first in the struct holding both).
    pub unsafe fn tokenizer(&self, spec: &str) -> Result<fts5_tokens::Tokenizer, DbError> {
        // SAFETY: `self.db` is open; the caller keeps the tokenizer no
        // longer than the connection.
        unsafe { fts5_tokens::Tokenizer::new(self.db.as_ptr(), spec) }.map_err(DbError::misuse)
    }

    /// Runs every statement in `sql` in order, without parameters.
    pub fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        let mut rest = sql;
        loop {
            let (stmt, used) = self.prepare_raw(rest, 0)?;
            // No statement left: only whitespace or comments remained.
            let Some(stmt) = stmt else { return Ok(()) };
            let stmt = FinalizeOnDrop(stmt);
            while self.step(stmt.0)? {}
            rest = rest.get(used..).unwrap_or_default();
        }
    }

    /// Runs one statement and returns the number of rows it changed (for
    /// statements other than INSERT/UPDATE/DELETE, that of the last one that was).
    /// Any result rows are stepped through and ignored.
    pub fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize, DbError> {
        let stmt = self.prepare_cached(sql)?;
        self.bind(stmt.stmt, params)?;
        while self.step(stmt.stmt)? {}
        Ok(usize::try_from(self.changes()).unwrap_or(0))
    }

    /// Runs one statement and maps every result row through `f`.
    pub fn query<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        let stmt = self.prepare_cached(sql)?;
        self.bind(stmt.stmt, params)?;
        let mut rows = Vec::new();
        while self.step(stmt.stmt)? {
            rows.push(f(&stmt.row())?);
        }
        Ok(rows)
    }

    /// Runs one statement and maps its first row, if any, through `f`.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Option<T>, DbError> {
        let stmt = self.prepare_cached(sql)?;
        self.bind(stmt.stmt, params)?;
        if self.step(stmt.stmt)? {
            f(&stmt.row()).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Runs `f` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back when it
    /// fails: all of its writes or none. Inside an open transaction it joins
    /// that one (no savepoint: a savepoint makes FTS5 flush its pending
    /// terms), and the error is the outer transaction's to roll back.
    pub fn transaction<T>(&self, f: impl FnOnce() -> Result<T, DbError>) -> Result<T, DbError> {
        if self.in_transaction() {
            return f();
        }
        self.execute_batch("BEGIN IMMEDIATE")?;
        match f() {
            Ok(value) => {
                self.execute_batch("COMMIT")?;
                Ok(value)
            }
            Err(error) => {
                let _ = self.execute_batch("ROLLBACK");
                Err(error)
            }
        }
    }

    /// Whether a transaction is open on this connection.
    pub fn in_transaction(&self) -> bool {
        unsafe { ffi::sqlite3_get_autocommit(self.db.as_ptr()) == 0 }
    }

    pub fn last_insert_rowid(&self) -> i64 {
        unsafe { ffi::sqlite3_last_insert_rowid(self.db.as_ptr()) }
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    pub fn changes(&self) -> i64 {
        unsafe { ffi::sqlite3_changes64(self.db.as_ptr()) }
    }

    /// Takes the statement for `sql` out of the cache, or prepares it.
    fn prepare_cached(&self, sql: &str) -> Result<CachedStmt<'_>, DbError> {
        let cached = self.cache.borrow_mut().remove_entry(sql);
        let (sql, stmt) = match cached {
            Some(entry) => entry,
            None => (sql.to_owned(), self.prepare_single(sql)?),
        };
        Ok(CachedStmt {
            conn: self,
            sql,
            stmt,
        })
    }

    /// Prepares `sql`, which must hold exactly one statement.
    fn prepare_single(&self, sql: &str) -> Result<NonNull<ffi::sqlite3_stmt>, DbError> {
        let (stmt, used) = self.prepare_raw(sql, ffi::SQLITE_PREPARE_PERSISTENT)?;
        let stmt = FinalizeOnDrop(
            stmt.ok_or_else(|| DbError::misuse(format!("no SQL statement in {sql:?}")))?,
        );
        // Whatever follows must be whitespace or comments, i.e. prepare to nothing.
        let rest = sql.get(used..).unwrap_or_default();
        if !rest.trim().is_empty() {
            if let (Some(extra), _) = self.prepare_raw(rest, 0)? {
                drop(FinalizeOnDrop(extra));
                return Err(DbError::misuse(format!(
                    "more than one SQL statement (use execute_batch): {sql:?}"
                )));
            }
        }
        Ok(stmt.into_inner())
    }

    /// Prepares the first statement of `sql`. Returns it (`None` if `sql` held
    /// only whitespace or comments) and how many bytes of `sql` it consumed.
    fn prepare_raw(
        &self,
        sql: &str,
        flags: std::ffi::c_uint,
    ) -> Result<(Option<NonNull<ffi::sqlite3_stmt>>, usize), DbError> {
        let len = c_int::try_from(sql.len()).map_err(|_| DbError {
            code: ffi::SQLITE_TOOBIG,
            message: format!("SQL text of {} bytes is too long", sql.len()),
        })?;
        let mut stmt = ptr::null_mut();
        let mut tail = ptr::null();
        // The explicit length means `sql` need not be NUL-terminated.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                self.db.as_ptr(),
                sql.as_ptr().cast(),
                len,
                flags,
                &mut stmt,
                &mut tail,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(self.error(rc));
        }
        let used = if tail.is_null() {
            sql.len()
        } else {
            // `tail` points into `sql`, just past a `;` or at its end.
            (tail as usize - sql.as_ptr() as usize).min(sql.len())
        };
        Ok((NonNull::new(stmt), used))
    }

    fn bind(&self, stmt: NonNull<ffi::sqlite3_stmt>, params: &[Value<'_>]) -> Result<(), DbError> {
        let stmt = stmt.as_ptr();
        let expected = unsafe { ffi::sqlite3_bind_parameter_count(stmt) };
        if usize::try_from(expected) != Ok(params.len()) {
            return Err(DbError {
                code: ffi::SQLITE_RANGE,
                message: format!(
                    "statement takes {expected} parameters but {} were given",
                    params.len()
                ),
            });
        }
        for (index, param) in (1..).zip(params) {
            // Text and blobs go with explicit lengths (they may hold NUL) and are
            // copied (SQLITE_TRANSIENT), so the borrow ends with this call.
            let rc = unsafe {
                match *param {
                    Value::Null => ffi::sqlite3_bind_null(stmt, index),
                    Value::Integer(v) => ffi::sqlite3_bind_int64(stmt, index, v),
                    Value::Real(v) => ffi::sqlite3_bind_double(stmt, index, v),
                    Value::Text(v) => ffi::sqlite3_bind_text64(
                        stmt,
                        index,
                        v.as_ptr().cast(),
                        v.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                    Value::Blob(v) => ffi::sqlite3_bind_blob64(
                        stmt,
                        index,
                        v.as_ptr().cast(),
                        v.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(self.error(rc));
            }
        }
        Ok(())
    }

    /// Steps once: `true` if a row is ready, `false` when done.
    fn step(&self, stmt: NonNull<ffi::sqlite3_stmt>) -> Result<bool, DbError> {
        match unsafe { ffi::sqlite3_step(stmt.as_ptr()) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => Err(self.error(rc)),
        }
    }

    fn error(&self, rc: c_int) -> DbError {
        let message = unsafe { ffi::sqlite3_errmsg(self.db.as_ptr()) };
        let mut message = if message.is_null() {
            error_string(rc)
        } else {
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        let code = rc & 0xff;
        // A storage failure names its cause (no space, read-only, permission):
        // the VFS records the system error number of the failed operation.
        if matches!(
            code,
            ffi::SQLITE_IOERR | ffi::SQLITE_FULL | ffi::SQLITE_CANTOPEN | ffi::SQLITE_READONLY
        ) {
            let errno = unsafe { ffi::sqlite3_system_errno(self.db.as_ptr()) };
            if errno != 0 {
                message = format!(
                    "{message}: {}",
                    crate::contract::error::cause_of_errno(errno)
                );
            } else if code == ffi::SQLITE_FULL {
                // Found by SQLite itself (a write that came up short): the
                // same cause in the same words.
                message = format!("{message}: no space left on the device (the disk is full)");
            }
        }
        DbError { code, message }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        for (_, stmt) in self.cache.get_mut().drain() {
            unsafe { ffi::sqlite3_finalize(stmt.as_ptr()) };
        }
        // Every statement is finalized by now (cached ones above, the rest by
        // their guards, which borrow `self`), so plain close cannot fail busy.
        unsafe { ffi::sqlite3_close(self.db.as_ptr()) };
    }
}

/// A statement on loan from the cache; reset and handed back on drop.
struct CachedStmt<'c> {
    conn: &'c Connection,
    /// Cache key, moved back into the cache on drop.
    sql: String,
    stmt: NonNull<ffi::sqlite3_stmt>,
}

impl CachedStmt<'_> {
    fn row(&self) -> Row<'_> {
        Row {
            stmt: self.stmt,
            _stepping: PhantomData,
        }
    }
}

impl Drop for CachedStmt<'_> {
    fn drop(&mut self) {
        let stmt = self.stmt.as_ptr();
        // Reset's return value repeats the last step error, already reported.
        unsafe {
            ffi::sqlite3_reset(stmt);
            ffi::sqlite3_clear_bindings(stmt);
        }
        let mut cache = self.conn.cache.borrow_mut();
        let sql = std::mem::take(&mut self.sql);
        // A re-entrant call may have cached the same SQL meanwhile; keep one.
        if cache.contains_key(&sql) {
            unsafe { ffi::sqlite3_finalize(stmt) };
            return;
        }
        if cache.len() >= STATEMENT_CACHE_CAPACITY {
            // Any entry will do: the hot statements are re-cached on next use.
            let evicted = cache.keys().next().cloned();
            if let Some(old) = evicted.and_then(|key| cache.remove(&key)) {
                unsafe { ffi::sqlite3_finalize(old.as_ptr()) };
            }
        }
        cache.insert(sql, self.stmt);
    }
}

/// An uncached statement, finalized when dropped.
struct FinalizeOnDrop(NonNull<ffi::sqlite3_stmt>);

impl FinalizeOnDrop {
    /// Keeps the statement alive and hands over responsibility for it.
    fn into_inner(self) -> NonNull<ffi::sqlite3_stmt> {
        let stmt = self.0;
        std::mem::forget(self);
        stmt
    }
}

impl Drop for FinalizeOnDrop {
    fn drop(&mut self) {
        unsafe { ffi::sqlite3_finalize(self.0.as_ptr()) };
    }
}

/// SQLite's generic text for a result code, for errors without a connection.
fn error_string(rc: c_int) -> String {
    let text = unsafe { ffi::sqlite3_errstr(rc) };
    if text.is_null() {
        format!("result code {rc}")
    } else {
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Views `len` bytes at `data`, or an empty slice for NULL (SQLite's
/// representation of NULL and zero-length values).
///
/// # Safety
///
/// A non-null `data` must be valid for `len` bytes while the slice is used.
unsafe fn raw_bytes<'a>(data: *const u8, len: c_int) -> &'a [u8] {
    match usize::try_from(len) {
        Ok(len) if !data.is_null() && len > 0 => unsafe { std::slice::from_raw_parts(data, len) },
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_db() -> (tempfile::TempDir, std::path::PathBuf, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.sqlite");
        let conn = Connection::open(&path).unwrap();
        (dir, path, conn)
    }

    #[test]
    fn every_value_kind_round_trips_through_a_file_db() {
        let (_dir, path, conn) = file_db();
        conn.execute_batch(
            "PRAGMA journal_mode=DELETE; PRAGMA locking_mode=EXCLUSIVE;
             CREATE TABLE v(i INTEGER, r REAL, t TEXT, b BLOB, n);",
        )
        .unwrap();
        let params = [
            Value::Integer(-42),
            Value::Real(2.5),
            Value::Text("héllo"),
            Value::Blob(&[0, 1, 2, 255]),
            Value::Null,
        ];
        assert_eq!(
            conn.execute("INSERT INTO v VALUES (?, ?, ?, ?, ?)", &params)
                .unwrap(),
            1
        );
        assert_eq!(conn.last_insert_rowid(), 1);
        assert_eq!(conn.changes(), 1);
        // Empty text and blob stay empty values, not NULL.
        conn.execute(
            "INSERT INTO v VALUES (?, ?, ?, ?, ?)",
            &[
                Value::Null,
                Value::Null,
                Value::Text(""),
                Value::Blob(&[]),
                Value::Null,
            ],
        )
        .unwrap();
        drop(conn);

        let conn = Connection::open(&path).unwrap();
        let rows = conn
            .query("SELECT i, r, t, b, n FROM v ORDER BY rowid", &[], |row| {
                Ok((
                    row.get_opt_i64(0),
                    row.get_f64(1),
                    row.get_opt_text(2),
                    row.get_blob(3),
                    row.is_null(3),
                    row.is_null(4),
                    row.get_text(4),
                ))
            })
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (
                    Some(-42),
                    2.5,
                    Some("héllo".to_owned()),
                    vec![0, 1, 2, 255],
                    false,
                    true,
                    String::new()
                ),
                (
                    None,
                    0.0,
                    Some(String::new()),
                    vec![],
                    false,
                    true,
                    String::new()
                ),
            ]
        );
        let typeof_ = conn
            .query_row(
                "SELECT typeof(t), typeof(b) FROM v WHERE rowid = 2",
                &[],
                |row| Ok((row.get_text(0), row.get_text(1))),
            )
            .unwrap();
        assert_eq!(typeof_, Some(("text".to_owned(), "blob".to_owned())));
        assert_eq!(
            conn.query_row("SELECT i FROM v WHERE rowid = 99", &[], |row| Ok(
                row.get_i64(0)
            ))
            .unwrap(),
            None
        );
    }

    #[test]
    fn text_with_embedded_nul_round_trips() {
        let conn = Connection::open_in_memory().unwrap();
        let text = "before\0after";
        let back = conn
            .query_row(
                "SELECT ?, length(CAST(? AS BLOB))",
                &[Value::Text(text), Value::Text(text)],
                |row| Ok((row.get_text(0), row.get_i64(1))),
            )
            .unwrap();
        assert_eq!(back, Some((text.to_owned(), text.len() as i64)));
        // The SQL text itself is passed with its length too.
        assert_eq!(
            conn.query_row("SELECT 'a' || char(0) || 'b'", &[], |row| Ok(
                row.get_text(0)
            ))
            .unwrap()
            .as_deref(),
            Some("a\0b")
        );
    }

    #[test]
    fn fts5_match_ranks_with_bm25() {
        let (_dir, _path, conn) = file_db();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61 remove_diacritics 2');",
        )
        .unwrap();
        for body in [
            "The runner was running a long race",
            "A quiet café by the river",
            "Completely unrelated text about taxes",
            "Run, run, run as fast as you can",
        ] {
            conn.execute("INSERT INTO docs(body) VALUES (?)", &[Value::Text(body)])
                .unwrap();
        }
        let search = |query: &str| {
            conn.query(
                "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs)",
                &[Value::Text(query)],
                |row| Ok((row.get_i64(0), row.get_f64(1))),
            )
            .unwrap()
        };
        // Porter stemming: "runs" matches run/running; more hits rank first.
        let hits = search("runs");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![4, 1]);
        assert!(
            hits.iter().all(|h| h.1 < 0.0),
            "bm25 scores are negative: {hits:?}"
        );
        // remove_diacritics: "cafe" matches "café".
        assert_eq!(
            search("cafe").iter().map(|h| h.0).collect::<Vec<_>>(),
            vec![2]
        );
        assert!(search("nothing").is_empty());
    }

    #[test]
    fn bad_sql_and_misuse_are_errors() {
        let conn = Connection::open_in_memory().unwrap();
        let err = conn.execute("SELEC 1", &[]).unwrap_err();
        assert_eq!(err.code, ffi::SQLITE_ERROR);
        assert!(err.message.contains("syntax error"), "{err}");
        let err = conn
            .query("SELECT * FROM missing", &[], |_| Ok(()))
            .unwrap_err();
        assert!(err.message.contains("no such table"), "{err}");
        assert!(conn.execute_batch("CREATE TABLE t(x); BOGUS;").is_err());
        // The statements before the failing one did run.
        conn.execute("INSERT INTO t VALUES (1)", &[]).unwrap();

        let err = conn.execute("INSERT INTO t VALUES (?)", &[]).unwrap_err();
        assert_eq!(err.code, ffi::SQLITE_RANGE);
        let err = conn.execute("SELECT 1; SELECT 2", &[]).unwrap_err();
        assert_eq!(err.code, ffi::SQLITE_MISUSE);
        let err = conn.execute("  -- nothing\n", &[]).unwrap_err();
        assert_eq!(err.code, ffi::SQLITE_MISUSE);
        // Trailing semicolons and comments are fine.
        conn.execute("SELECT 1; -- done", &[]).unwrap();
        // A constraint failure leaves the cached statement usable.
        conn.execute_batch("CREATE TABLE u(x UNIQUE);").unwrap();
        conn.execute("INSERT INTO u VALUES (?)", &[Value::Integer(1)])
            .unwrap();
        let err = conn
            .execute("INSERT INTO u VALUES (?)", &[Value::Integer(1)])
            .unwrap_err();
        assert_eq!(err.code, ffi::SQLITE_CONSTRAINT);
        conn.execute("INSERT INTO u VALUES (?)", &[Value::Integer(2)])
            .unwrap();
        // A callback error is returned as is.
        let err = conn
            .query("SELECT x FROM u", &[], |_| -> Result<(), DbError> {
                Err(DbError::misuse("stop".to_owned()))
            })
            .unwrap_err();
        assert_eq!(err.message, "stop");
    }

    #[test]
    fn garbage_file_is_reported_as_corrupt() {
        let (_dir, path, conn) = file_db();
        drop(conn);
        std::fs::write(&path, b"definitely not a database ".repeat(400)).unwrap();
        let conn = Connection::open(&path).unwrap();
        let err = conn
            .query("SELECT name FROM sqlite_master", &[], |row| {
                Ok(row.get_text(0))
            })
            .unwrap_err();
        assert!(err.is_corrupt(), "{err}");
        assert_eq!(err.code, ffi::SQLITE_NOTADB);
    }

    #[test]
    fn damaged_pages_are_reported_as_corrupt() {
        let (_dir, path, conn) = file_db();
        conn.execute_batch("PRAGMA page_size=4096; CREATE TABLE t(x TEXT);")
            .unwrap();
        for i in 0..200 {
            conn.execute(
                "INSERT INTO t VALUES (?)",
                &[Value::Text(&format!("row {i:0>200}"))],
            )
            .unwrap();
        }
        drop(conn);
        // Keep the header page, scribble over the table's b-tree pages.
        let mut bytes = std::fs::read(&path).unwrap();
        for byte in &mut bytes[4096..] {
            *byte = 0xA5;
        }
        std::fs::write(&path, bytes).unwrap();
        let conn = Connection::open(&path).unwrap();
        let err = conn
            .query("SELECT x FROM t", &[], |row| Ok(row.get_text(0)))
            .unwrap_err();
        assert!(err.is_corrupt(), "{err}");
    }

    #[test]
    fn statements_are_cached_and_reused() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(x INTEGER)").unwrap();
        let insert = "INSERT INTO t VALUES (?)";
        conn.execute(insert, &[Value::Integer(1)]).unwrap();
        let first = conn.cache.borrow()[insert];
        for x in 2..=5 {
            conn.execute(insert, &[Value::Integer(x)]).unwrap();
        }
        assert_eq!(conn.cache.borrow()[insert], first);
        assert_eq!(conn.cache.borrow().len(), 1);

        // Re-entering with the same SQL from a row callback gets its own statement.
        let count = "SELECT count(*) FROM t WHERE x <= ?";
        let nested = conn
            .query(count, &[Value::Integer(5)], |outer| {
                let inner = conn
                    .query_row(count, &[Value::Integer(2)], |row| Ok(row.get_i64(0)))?
                    .unwrap();
                Ok((outer.get_i64(0), inner))
            })
            .unwrap();
        assert_eq!(nested, vec![(5, 2)]);
        assert_eq!(conn.cache.borrow().len(), 2);

        // Bindings are cleared between uses.
        let sum = conn.query_row("SELECT sum(x) FROM t", &[], |row| Ok(row.get_i64(0)));
        assert_eq!(sum.unwrap(), Some(15));

        // The cache is bounded.
        for i in 0..STATEMENT_CACHE_CAPACITY + 10 {
            conn.query_row(&format!("SELECT {i}"), &[], |row| Ok(row.get_i64(0)))
                .unwrap();
        }
        assert_eq!(conn.cache.borrow().len(), STATEMENT_CACHE_CAPACITY);
    }

    #[test]
    fn exclusive_lock_makes_a_second_connection_busy() {
        let (_dir, path, conn) = file_db();
        conn.execute_batch(
            "PRAGMA locking_mode=EXCLUSIVE; CREATE TABLE t(x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
        let other = Connection::open(&path).unwrap();
        let err = other
            .query("SELECT x FROM t", &[], |row| Ok(row.get_i64(0)))
            .unwrap_err();
        assert!(err.is_busy(), "{err}");
        drop(conn);
        assert_eq!(
            other
                .query("SELECT x FROM t", &[], |row| Ok(row.get_i64(0)))
                .unwrap(),
            vec![1]
        );
    }
}
