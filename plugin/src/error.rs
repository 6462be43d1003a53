//! The one error type of the crate. It mirrors the WIT `error` variant case
//! for case, so the component boundary converts without losing meaning.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryError {
    InvalidInput(String),
    NotFound(String),
    AccessDenied(String),
    TooLarge(String),
    Io(String),
    Index(String),
    Internal(String),
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, message) = match self {
            MemoryError::InvalidInput(m) => ("invalid input", m),
            MemoryError::NotFound(m) => ("not found", m),
            MemoryError::AccessDenied(m) => ("access denied", m),
            MemoryError::TooLarge(m) => ("too large", m),
            MemoryError::Io(m) => ("i/o error", m),
            MemoryError::Index(m) => ("index error", m),
            MemoryError::Internal(m) => ("internal error", m),
        };
        write!(f, "{kind}: {message}")
    }
}

impl std::error::Error for MemoryError {}

impl From<crate::sqlite::DbError> for MemoryError {
    fn from(error: crate::sqlite::DbError) -> Self {
        MemoryError::Index(error.to_string())
    }
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// Describes an I/O failure on a workspace path without leaking host paths.
pub(crate) fn io_error(what: &str, path: &str, error: &std::io::Error) -> MemoryError {
    MemoryError::Io(format!("{what} {path}: {error}"))
}
