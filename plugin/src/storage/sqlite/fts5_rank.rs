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
use crate::logic::lexical::{idf, norm, score as bm25};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

/// Low bits of a chunk id that hold the chunk's length in tokens.
pub const LENGTH_BITS: u32 = 12;
const LENGTH_MASK: i64 = (1 << LENGTH_BITS) - 1;

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
    let mut idfs = Vec::with_capacity(phrases);
    for phrase in 0..phrases {
        let mut hits: i64 = 0;
        check((api.xQueryPhrase.unwrap())(
            fts,
            phrase as c_int,
            &mut hits as *mut i64 as *mut c_void,
            Some(count_row),
        ))?;
        idfs.push(idf(rows, hits));
    }
    let stats = Box::into_raw(Box::new(QueryStats {
        idf: idfs,
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

/// The row's weighted frequency of each phrase (`frequency[i]` for phrase
/// `i`; phrases past the slice are ignored): each instance adds its column's
/// weight.
unsafe fn weighted_frequencies(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    weights: &[f64],
    frequency: &mut [f64],
) -> Result<(), c_int> {
    frequency.iter_mut().for_each(|f| *f = 0.0);
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
        let weight = weights.get(column as usize).copied().unwrap_or(1.0);
        if let Some(f) = frequency.get_mut(phrase as usize) {
            *f += weight;
        }
    }
    Ok(())
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<f64, c_int> {
    let stats = &mut *query_stats(api, fts, args)?;
    weighted_frequencies(api, fts, &stats.weights, &mut stats.frequency)?;
    let length = length_of_rowid((api.xRowid.unwrap())(fts)) as f64;
    Ok(bm25(
        &stats.idf,
        &stats.frequency,
        norm(length, stats.avg_length),
    ))
}

/// An auxiliary function's arguments after the table, as a slice.
unsafe fn arguments<'a>(
    args: *mut *mut ffi::sqlite3_value,
    n_args: c_int,
) -> &'a [*mut ffi::sqlite3_value] {
    if args.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(args, n_args.max(0) as usize)
    }
}

unsafe extern "C" fn memory_bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    let api = &*api;
    let args = arguments(args, n_args);
    match score(api, fts, args) {
        Ok(s) => ffi::sqlite3_result_double(ctx, -s),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

/// Registers `memory_bm25` and `memory_frequency` on a connection (FTS5
/// functions are per connection).
///
/// # Safety
/// `db` must be an open connection.
pub(super) unsafe fn register(db: *mut ffi::sqlite3) -> Result<(), String> {
    let api = super::fts5_tokens::api(db)?;
    let Some(create) = api.as_ref().xCreateFunction else {
        return Err("FTS5 is not available (no fts5_api)".into());
    };
    let functions: [(&CStr, Fts5Function); 2] = [
        (c"memory_bm25", memory_bm25),
        (c"memory_frequency", memory_frequency),
    ];
    for (name, function) in functions {
        let rc = create(
            api.as_ptr(),
            name.as_ptr(),
            ptr::null_mut(),
            Some(function),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(format!("cannot register {name:?}: {rc}"));
        }
    }
    Ok(())
}

type Fts5Function = unsafe extern "C" fn(
    *const ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    *mut ffi::sqlite3_context,
    c_int,
    *mut *mut ffi::sqlite3_value,
);

/// `memory_frequency(table, weights…)`: the weighted frequency of the
/// query's first phrase in the row, the `f` of `memory_bm25` (for the
/// lexicon's impact lists).
unsafe extern "C" fn memory_frequency(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_args: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    let weights: Vec<f64> = arguments(args, n_args)
        .iter()
        .map(|v| ffi::sqlite3_value_double(*v))
        .collect();
    let api = &*api;
    let mut first = [0.0];
    let frequency = weighted_frequencies(api, fts, &weights, &mut first).map(|()| first[0]);
    match frequency {
        Ok(f) => ffi::sqlite3_result_double(ctx, f),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
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
