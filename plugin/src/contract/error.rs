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
    /// A write refused because the workspace is read-only (WIT
    /// `workspace-read-only`).
    WorkspaceReadOnly(String),
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
            MemoryError::WorkspaceReadOnly(m) => ("workspace read-only", m),
            MemoryError::Index(m) => ("index error", m),
            MemoryError::Internal(m) => ("internal error", m),
        };
        write!(f, "{kind}: {message}")
    }
}

impl std::error::Error for MemoryError {}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// Describes an I/O failure on a workspace path without leaking host paths,
/// naming its cause in plain words (no space left, read-only, permission
/// denied). A read-only file system is `WorkspaceReadOnly`.
pub(crate) fn io_error(what: &str, path: &str, error: &std::io::Error) -> MemoryError {
    let cause = cause_of(error);
    if is_read_only(error) {
        return MemoryError::WorkspaceReadOnly(format!(
            "{what} {path}: {cause}; nothing was written"
        ));
    }
    MemoryError::Io(format!("{what} {path}: {cause}"))
}

/// Whether `error` says the file system (or the grant) is read-only.
pub(crate) fn is_read_only(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::ReadOnlyFilesystem
}

/// The cause of an I/O failure in plain words, with the system's own text.
pub(crate) fn cause_of(error: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let plain = match error.kind() {
        K::StorageFull => "no space left on the device (the disk is full)",
        K::QuotaExceeded => "no space left: the disk quota is exceeded",
        K::ReadOnlyFilesystem => "the workspace is on a read-only file system",
        K::PermissionDenied => "permission denied",
        K::FileTooLarge => "the file is too large for the file system",
        K::NotFound => "not found",
        K::WriteZero => "the device accepted no more bytes (is the disk full?)",
        _ => match error.raw_os_error() {
            // EIO (29 on WASI, 5 natively): the device reported a failure; a
            // write to a full disk through a stream can end here too.
            Some(29) if cfg!(target_arch = "wasm32") => {
                "the device reported an I/O error (a failing or full disk)"
            }
            Some(5) if !cfg!(target_arch = "wasm32") => {
                "the device reported an I/O error (a failing or full disk)"
            }
            _ => return error.to_string(),
        },
    };
    format!("{plain} ({error})")
}

/// The cause of a system error number SQLite's VFS recorded.
pub(crate) fn cause_of_errno(errno: i32) -> String {
    cause_of(&std::io::Error::from_raw_os_error(errno))
}
