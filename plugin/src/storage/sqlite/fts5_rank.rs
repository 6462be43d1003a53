//! `memory_bm25`: BM25 as an FTS5 auxiliary function, the same formula as
//! FTS5's built-in `bm25` except for where a row's length comes from.
//!
//! The built-in function asks FTS5 for every matching row's length, and
//! FTS5 answers each time with a query of its `%_docsize` table: that lookup
//! was half of a search's time. Here the length travels in the row's id
//! instead (see [`rowid_with_length`]), so the tables are created with
//! `columnsize=0` and have no `%_docsize` table at all.
//!
//! Arguments after the table: one weight per column (default 1.0).
//! Result: minus the score, as FTS5's `bm25` (smaller is better).

use super::ffi;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

/// Low bits of a chunk id that hold the chunk's length in tokens.
pub const LENGTH_BITS: u32 = 12;
const LENGTH_MASK: i64 = (1 << LENGTH_BITS) - 1;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The id of the `sequence`-th chunk of `tokens` tokens (capped at 4,095:
/// beyond that, length normalisation hardly changes a score).
pub fn rowid_with_length(sequence: i64, tokens: usize) -> i64 {
    (sequence << LENGTH_BITS) | (tokens as i64).min(LENGTH_MASK)
}

pub fn length_of_rowid(rowid: i64) -> i64 {
    rowid & LENGTH_MASK
}

/// Per-query statistics, computed on the query's first row and kept by
/// FTS5 as the function's auxiliary data.
struct QueryStats {
    /// Inverse document frequency of each phrase of the query.
    idf: Vec<f64>,
    /// The weight of each column (the function's arguments).
    weights: Vec<f64>,
    avg_length: f64,
    /// Scratch: weighted frequency of each phrase in the current row.
    frequency: Vec<f64>,
}

unsafe extern "C" fn free_stats(p: *mut c_void) {
    drop(Box::from_raw(p as *mut QueryStats));
}

unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    *(user as *mut i64) += 1;
    ffi::SQLITE_OK
}

unsafe fn query_stats(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<*mut QueryStats, c_int> {
    let existing = (api.xGetAuxdata.unwrap())(fts, 0) as *mut QueryStats;
    if !existing.is_null() {
        return Ok(existing);
    }
    let phrases = (api.xPhraseCount.unwrap())(fts).max(0) as usize;
    let mut rows: i64 = 0;
    check((api.xRowCount.unwrap())(fts, &mut rows))?;
    let mut tokens: i64 = 0;
    check((api.xColumnTotalSize.unwrap())(fts, -1, &mut tokens))?;
    let mut idf = Vec::with_capacity(phrases);
    for phrase in 0..phrases {
        let mut hits: i64 = 0;
        check((api.xQueryPhrase.unwrap())(
            fts,
            phrase as c_int,
            &mut hits as *mut i64 as *mut c_void,
            Some(count_row),
        ))?;
        let n = rows as f64;
        let h = hits as f64;
        // As FTS5's bm25: a term in more than half of the rows would get a
        // negative weight; it gets a tiny positive one instead.
        let weight = ((n - h + 0.5) / (h + 0.5)).ln();
        idf.push(if weight <= 0.0 { 1e-6 } else { weight });
    }
    let stats = Box::into_raw(Box::new(QueryStats {
        idf,
        weights: args.iter().map(|v| ffi::sqlite3_value_double(*v)).collect(),
        avg_length: if rows > 0 {
            tokens as f64 / rows as f64
        } else {
            1.0
        },
        frequency: vec![0.0; phrases],
    }));
    check((api.xSetAuxdata.unwrap())(
        fts,
        stats as *mut c_void,
        Some(free_stats),
    ))
    .inspect_err(|_| drop(Box::from_raw(stats)))?;
    Ok(stats)
}

fn check(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<f64, c_int> {
    let stats = &mut *query_stats(api, fts, args)?;
    stats.frequency.iter_mut().for_each(|f| *f = 0.0);
    let mut instances: c_int = 0;
    check((api.xInstCount.unwrap())(fts, &mut instances))?;
    for i in 0..instances {
        let (mut phrase, mut column, mut offset) = (0, 0, 0);
        check((api.xInst.unwrap())(
            fts,
            i,
            &mut phrase,
            &mut column,
            &mut offset,
        ))?;
        let weight = stats.weights.get(column as usize).copied().unwrap_or(1.0);
        if let Some(f) = stats.frequency.get_mut(phrase as usize) {
            *f += weight;
        }
    }
    let length = length_of_rowid((api.xRowid.unwrap())(fts)) as f64;
    let norm = K1 * (1.0 - B + B * length / stats.avg_length);
    Ok(stats
        .idf
        .iter()
        .zip(&stats.frequency)
        .map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + norm))
        .sum())
}

unsafe extern "C" fn memory_bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    let api = &*api;
    let args = if args.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(args, n_args.max(0) as usize)
    };
    match score(api, fts, args) {
        Ok(s) => ffi::sqlite3_result_double(ctx, -s),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

/// Registers `memory_bm25` on a connection (FTS5 functions are per
/// connection).
///
/// # Safety
/// `db` must be an open connection.
pub(super) unsafe fn register(db: *mut ffi::sqlite3) -> Result<(), String> {
    const NAME: &CStr = c"memory_bm25";
    unsafe {
        let mut stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(format!("FTS5 is not available (prepare: {rc})"));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            &mut api as *mut *mut ffi::fts5_api as *mut c_void,
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        let Some(create) = api.as_ref().and_then(|a| a.xCreateFunction) else {
            return Err("FTS5 is not available (no fts5_api)".into());
        };
        let rc = create(api, NAME.as_ptr(), ptr::null_mut(), Some(memory_bm25), None);
        if rc != ffi::SQLITE_OK {
            return Err(format!("cannot register memory_bm25: {rc}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_travels_in_the_low_bits() {
        let id = rowid_with_length(77, 15);
        assert_eq!(id >> LENGTH_BITS, 77);
        assert_eq!(length_of_rowid(id), 15);
        assert_eq!(length_of_rowid(rowid_with_length(3, 1_000_000)), 4_095);
        assert!(rowid_with_length(78, 0) > rowid_with_length(77, 4_095));
    }
}
