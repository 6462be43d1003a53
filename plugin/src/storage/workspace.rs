//! File-system access to the workspace: listing memory files and reading them
//! safely. Symlinks, FIFOs and other non-regular files are never opened (a
//! FIFO would block the call); reads are bounded; invalid UTF-8 and NUL bytes
//! are replaced and reported, never fatal.

use crate::contract::error::{io_error, MemoryError, Result};
use crate::text::layout::{self, MemoryPath};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What is indexed of one file; the rest is reported, never silently dropped.
pub const MAX_INDEXED_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    pub path: MemoryPath,
    pub size: u64,
    pub mtime_ms: i64,
}

#[derive(Debug, Clone)]
pub struct FileText {
    pub text: String,
    pub size: u64,
    pub mtime_ms: i64,
    /// Problems with the bytes themselves (encoding, NUL, size).
    pub problems: Vec<String>,
}

pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Workspace { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn join(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The memory files present: `MEMORY.md`, `USER.md`, `memory/*.md`, sorted
    /// by path. Symlinks and non-regular files are skipped and listed in
    /// `skipped` with the reason.
    pub fn list(&self, skipped: &mut Vec<(String, String)>) -> Result<Vec<FileStat>> {
        let mut files = Vec::new();
        for name in [layout::MEMORY_FILE, layout::USER_FILE] {
            if let Some(stat) = self.stat_if_regular(name, skipped)? {
                files.push(stat);
            }
        }
        let dir = self.join(layout::DAILY_DIR);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {
                let entries = std::fs::read_dir(&dir)
                    .map_err(|e| io_error("cannot list", layout::DAILY_DIR, &e))?;
                for entry in entries {
                    let entry =
                        entry.map_err(|e| io_error("cannot list", layout::DAILY_DIR, &e))?;
                    let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                        skipped.push((
                            format!("memory/{}", entry.file_name().to_string_lossy()),
                            "the file name is not valid UTF-8".into(),
                        ));
                        continue;
                    };
                    let relative = format!("{}/{name}", layout::DAILY_DIR);
                    if layout::memory_path(&relative).is_err() {
                        continue;
                    }
                    if let Some(stat) = self.stat_if_regular(&relative, skipped)? {
                        files.push(stat);
                    }
                }
            }
            Ok(meta) if meta.file_type().is_symlink() => skipped.push((
                layout::DAILY_DIR.into(),
                "the memory directory is a symlink; not followed".into(),
            )),
            Ok(_) => skipped.push((layout::DAILY_DIR.into(), "not a directory".into())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("cannot read", layout::DAILY_DIR, &e)),
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    fn stat_if_regular(
        &self,
        relative: &str,
        skipped: &mut Vec<(String, String)>,
    ) -> Result<Option<FileStat>> {
        let path = layout::memory_path(relative)?;
        match std::fs::symlink_metadata(self.join(relative)) {
            Ok(meta) if meta.file_type().is_symlink() => {
                skipped.push((relative.into(), "a symlink; not followed".into()));
                Ok(None)
            }
            Ok(meta) if !meta.is_file() => {
                skipped.push((relative.into(), "not a regular file".into()));
                Ok(None)
            }
            Ok(meta) => Ok(Some(FileStat {
                path,
                size: meta.len(),
                mtime_ms: mtime_ms(&meta),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("cannot read", relative, &e)),
        }
    }

    /// Reads a memory file for `memory_get` or indexing: refuses symlinks and
    /// non-regular files (also when `memory/` itself is a symlink), reads at
    /// most `max_bytes`, and decodes lossily.
    pub fn read(&self, path: &MemoryPath, max_bytes: u64) -> Result<FileText> {
        let relative = path.as_str();
        if relative.starts_with("memory/") {
            match std::fs::symlink_metadata(self.join(layout::DAILY_DIR)) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(MemoryError::AccessDenied(format!(
                        "{relative}: the memory directory is a symlink"
                    )))
                }
                _ => {}
            }
        }
        let full = self.join(relative);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(MemoryError::NotFound(format!("{relative} does not exist")))
            }
            Err(e) => return Err(io_error("cannot read", relative, &e)),
        };
        if meta.file_type().is_symlink() {
            return Err(MemoryError::AccessDenied(format!(
                "{relative} is a symlink; memory never follows symlinks"
            )));
        }
        if !meta.is_file() {
            return Err(MemoryError::AccessDenied(format!(
                "{relative} is not a regular file"
            )));
        }
        let file = std::fs::File::open(&full).map_err(|e| io_error("cannot open", relative, &e))?;
        let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize);
        file.take(max_bytes)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error("cannot read", relative, &e))?;
        let mut problems = Vec::new();
        if meta.len() > max_bytes {
            // Keep whole lines only, so no entry is cut mid-line.
            if let Some(nl) = bytes.iter().rposition(|&b| b == b'\n') {
                bytes.truncate(nl + 1);
            }
            problems.push(format!(
                "the file is {} bytes; only the first {} bytes are indexed",
                meta.len(),
                bytes.len()
            ));
        }
        let text = decode(&bytes, &mut problems);
        Ok(FileText {
            text,
            size: meta.len(),
            mtime_ms: mtime_ms(&meta),
            problems,
        })
    }

    /// Reads a bootstrap file (`AGENTS.md`, `MEMORY.md`, `USER.md`). A
    /// symlink or a non-regular file is refused (never followed or opened),
    /// with the reason; the caller skips it and injects the others.
    pub fn read_bootstrap(&self, name: &str, max_bytes: u64) -> Result<BootstrapRead> {
        let full = self.join(name);
        match std::fs::symlink_metadata(&full) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BootstrapRead::Missing)
            }
            Err(e) => return Err(io_error("cannot read", name, &e)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Ok(BootstrapRead::Refused(
                    "a symlink; memory never follows symlinks".into(),
                ))
            }
            Ok(meta) if !meta.is_file() => {
                return Ok(BootstrapRead::Refused("not a regular file".into()))
            }
            Ok(_) => {}
        }
        let file = std::fs::File::open(&full).map_err(|e| io_error("cannot open", name, &e))?;
        let mut bytes = Vec::new();
        file.take(max_bytes)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error("cannot read", name, &e))?;
        Ok(BootstrapRead::Text(decode(&bytes, &mut Vec::new())))
    }
}

/// Largest root file (`MEMORY.md`, `DREAMS.md`) memory rewrites.
pub const MAX_REWRITTEN_BYTES: u64 = 8 * 1024 * 1024;

impl Workspace {
    /// The bytes of a workspace-root file memory rewrites, `None` when it
    /// does not exist. Symlinks and non-regular files are refused.
    pub fn read_root_file(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let full = self.join(name);
        match std::fs::symlink_metadata(&full) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot read", name, &e)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(MemoryError::AccessDenied(format!(
                    "{name} is a symlink; memory never writes through symlinks"
                )))
            }
            Ok(meta) if !meta.is_file() => {
                return Err(MemoryError::AccessDenied(format!(
                    "{name} is not a regular file"
                )))
            }
            Ok(meta) if meta.len() > MAX_REWRITTEN_BYTES => {
                return Err(MemoryError::TooLarge(format!(
                    "{name} is {} bytes; memory rewrites files up to {MAX_REWRITTEN_BYTES} bytes",
                    meta.len()
                )))
            }
            Ok(_) => {}
        }
        std::fs::read(&full)
            .map(Some)
            .map_err(|e| io_error("cannot read", name, &e))
    }

    /// Replaces a workspace-root file with `bytes` (or deletes it, for
    /// `None`) only if it still hashes to `expected` (`None`: it must still be
    /// absent): a temporary file in the workspace's state directory, the hash
    /// re-checked immediately before the rename. Returns `false`, writing
    /// nothing, when the file changed meanwhile.
    pub fn replace_root_file(
        &self,
        name: &str,
        expected: Option<&str>,
        bytes: Option<&[u8]>,
        now_ms: i64,
    ) -> Result<bool> {
        let full = self.join(name);
        let state = self.join(layout::STATE_DIR);
        std::fs::create_dir_all(&state)
            .map_err(|e| io_error("cannot create", layout::STATE_DIR, &e))?;
        // A temporary file left by an interrupted replacement is litter.
        if let Ok(entries) = std::fs::read_dir(&state) {
            let prefix = format!("{name}.replace-");
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let tmp = state.join(format!("{name}.replace-{now_ms}"));
        if let Some(bytes) = bytes {
            let written = std::fs::File::create(&tmp).and_then(|f| {
                write_all_at(&f, bytes, 0)?;
                f.sync_all()
            });
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                return Err(io_error("cannot write", name, &e));
            }
        }
        let current = self.read_root_file(name);
        let unchanged = match (&current, expected) {
            (Ok(None), None) => true,
            (Ok(Some(now)), Some(hash)) => crate::text::hash::sha256_hex(now) == hash,
            _ => false,
        };
        if !unchanged {
            let _ = std::fs::remove_file(&tmp);
            current?;
            return Ok(false);
        }
        let done = match bytes {
            Some(_) => std::fs::rename(&tmp, &full),
            None => std::fs::remove_file(&full),
        };
        done.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_error("cannot replace", name, &e)
        })?;
        // The rename itself made durable before the caller records it as
        // done (best effort: not every file system lets a directory sync).
        if let Some(parent) = full.parent() {
            if let Ok(dir) = std::fs::File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(true)
    }
}

/// Writes all of `bytes` at `offset`. On WASI each piece is one positional
/// `descriptor.write`, whose error code names the cause (no space, read-only,
/// permission); a write through a stream reports every failure as EIO.
pub(crate) fn write_all_at(file: &std::fs::File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    let mut written = 0;
    while written < bytes.len() {
        match pwrite(file, &bytes[written..], offset + written as u64) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(target_arch = "wasm32")]
fn pwrite(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    extern "C" {
        #[link_name = "pwrite"]
        fn libc_pwrite(fd: i32, buf: *const u8, count: usize, offset: i64) -> isize;
    }
    let offset = i64::try_from(offset)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: the buffer is valid for `buf.len()` bytes and the descriptor is
    // open for as long as `file` lives.
    let n = unsafe { libc_pwrite(file.as_raw_fd(), buf.as_ptr(), buf.len(), offset) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn pwrite(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(file, buf, offset)
}

/// What `read_bootstrap` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootstrapRead {
    Missing,
    Refused(String),
    Text(String),
}

/// The content hash the index and the ledger both use: sha-256 of the text
/// as decoded for indexing, so invalid bytes compare the same on both sides.
pub fn content_hash(bytes: &[u8]) -> String {
    crate::text::hash::sha256_hex(decode(bytes, &mut Vec::new()).as_bytes())
}

/// Lossy UTF-8 decoding with NUL bytes replaced too (SQLite and many readers
/// treat NUL as the end of a string).
fn decode(bytes: &[u8], problems: &mut Vec<String>) -> String {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(e) => {
            problems.push(format!(
                "invalid UTF-8 from byte {}; invalid bytes replaced with U+FFFD",
                e.valid_up_to()
            ));
            String::from_utf8_lossy(bytes)
        }
    };
    if text.contains('\0') {
        problems.push("NUL bytes replaced with U+FFFD".into());
        text.replace('\0', "\u{FFFD}")
    } else {
        text.into_owned()
    }
}

fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_replaces_bad_bytes_and_nul() {
        let mut problems = Vec::new();
        assert_eq!(decode(b"ok\xff\0x", &mut problems), "ok\u{FFFD}\u{FFFD}x");
        assert_eq!(problems.len(), 2);
    }

    #[test]
    fn lists_only_regular_memory_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("memory")).unwrap();
        std::fs::write(root.join("MEMORY.md"), "- a\n").unwrap();
        std::fs::write(root.join("AGENTS.md"), "- not memory\n").unwrap();
        std::fs::write(root.join("memory/2026-01-01.md"), "- b\n").unwrap();
        std::fs::write(root.join("memory/notes.txt"), "no").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("MEMORY.md"), root.join("memory/link.md")).unwrap();
        let ws = Workspace::new(root);
        let mut skipped = Vec::new();
        let files: Vec<String> = ws
            .list(&mut skipped)
            .unwrap()
            .into_iter()
            .map(|f| f.path.to_string())
            .collect();
        assert_eq!(files, ["MEMORY.md", "memory/2026-01-01.md"]);
        #[cfg(unix)]
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn read_is_bounded_to_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("memory")).unwrap();
        std::fs::write(
            dir.path().join("memory/big.md"),
            "line one\nline two\nline three\n",
        )
        .unwrap();
        let ws = Workspace::new(dir.path());
        let got = ws
            .read(&layout::memory_path("memory/big.md").unwrap(), 12)
            .unwrap();
        assert_eq!(got.text, "line one\n");
        assert_eq!(got.problems.len(), 1);
    }
}
