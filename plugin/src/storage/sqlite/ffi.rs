//! Raw SQLite C API for the current target: `libsqlite3-sys` natively, `sqlite-wasm-rs` on wasm32.
//!
//! Both crates are bindgen output of the same `sqlite3.h`, so function, type and
//! constant names (and the `SQLITE_TRANSIENT()` helper) line up and a glob
//! re-export is enough. The one gap that matters here: `sqlite-wasm-rs` leaves out
//! `sqlite3_close_v2`, so the wrapper finalizes its statements itself and calls
//! `sqlite3_close` on both targets.

#[cfg(not(target_arch = "wasm32"))]
pub use libsqlite3_sys::*;

#[cfg(target_arch = "wasm32")]
pub use sqlite_wasm_rs::*;
