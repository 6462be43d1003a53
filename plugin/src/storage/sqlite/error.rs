//! The error of the SQLite layer: SQLite's result code and message, or this
//! wrapper's own for API misuse. Operations see it as `MemoryError::Index`.

use super::ffi;
use crate::contract::error::MemoryError;

/// An error reported by SQLite, or by this wrapper for API misuse.
#[derive(Debug, Clone)]
pub struct DbError {
    /// Primary result code (`SQLITE_*`, extended bits stripped).
    pub code: i32,
    pub message: String,
}

impl DbError {
    /// The file is damaged or is not a database at all.
    pub fn is_corrupt(&self) -> bool {
        self.code == ffi::SQLITE_CORRUPT || self.code == ffi::SQLITE_NOTADB
    }

    /// Another connection holds a conflicting lock.
    pub fn is_busy(&self) -> bool {
        self.code == ffi::SQLITE_BUSY
    }

    pub(crate) fn misuse(message: impl Into<String>) -> DbError {
        DbError {
            code: ffi::SQLITE_MISUSE,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sqlite error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for DbError {}

impl From<DbError> for MemoryError {
    fn from(error: DbError) -> Self {
        MemoryError::Index(error.to_string())
    }
}
