//! The query builder: any query text becomes an FTS5 query that SQLite
//! accepts (never a syntax error, never an operator of the user's).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    memory_core::fuzzing::query(&text);
});
