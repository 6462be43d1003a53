//! SQLite VFS over `std::fs` for wasm32-wasip2, registered as the default VFS.
//!
//! sqlite-wasm-rs builds SQLite with `SQLITE_OS_OTHER`, so the only VFS it ships
//! keeps databases in memory. This one stores them in real files: std on
//! wasm32-wasip2 maps `std::fs` onto `wasi:filesystem` through the preopened
//! directories. The callbacks come from `rsqlite-vfs` (re-exported as
//! `sqlite_wasm_rs::vfs`); this module supplies the file store behind them.
//!
//! Locking is in-process only: the host runs one writer process per workspace,
//! so a process-wide table keyed by path is enough to keep two connections of
//! this process from corrupting each other (the loser gets `SQLITE_BUSY`).
//! There is no shared memory on WASI, hence no WAL: use a rollback journal.

use super::error::DbError;
use sqlite_wasm_rs::vfs::{
    register_vfs, AccessMode, LockLevel, MemChunksFile, OpenAccess, OpenRequest, OpenedFile,
    SQLiteIoMethods, SQLiteVfs, SyncOptions, SystemErrorCode, VfsError, VfsErrorCode, VfsFile,
    VfsResult, VfsStore,
};
use sqlite_wasm_rs::WasmOsCallback;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

const VFS_NAME: &str = "wasi-std-fs";

/// Registers the VFS as SQLite's default, once per process; later calls return
/// the first outcome.
pub(super) fn ensure_registered() -> Result<(), DbError> {
    static REGISTERED: OnceLock<Result<(), DbError>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            // SAFETY: SQLite is built single-threaded and the OnceLock serialises
            // registration; the layout and callbacks all come from rsqlite-vfs's
            // defaults for this one store type.
            unsafe { register_vfs::<StdFsVfs, StdFsVfs>(VFS_NAME, WasmOsCallback, true) }
                // SQLite keeps the VFS pointer for the life of the process.
                .map(|registration| {
                    registration.into_raw();
                })
                .map_err(|err| DbError {
                    code: super::ffi::SQLITE_ERROR,
                    message: format!("registering the {VFS_NAME} VFS: {err}"),
                })
        })
        .clone()
}

/// The VFS, its store and its I/O method table in one type. The app data is the
/// sqlite-wasm-rs host callback set (clock, sleep, randomness).
struct StdFsVfs;

impl SQLiteVfs<StdFsVfs> for StdFsVfs {
    type Os = WasmOsCallback;

    fn os(data: &WasmOsCallback) -> &WasmOsCallback {
        data
    }
}

impl SQLiteIoMethods for StdFsVfs {
    type Store = StdFsVfs;
}

impl VfsStore for StdFsVfs {
    type File = StoredFile;
    type AppData = WasmOsCallback;

    fn open_file(
        _: &WasmOsCallback,
        request: OpenRequest<'_>,
    ) -> VfsResult<OpenedFile<StoredFile>> {
        let options = request.options;
        // Anonymous files are scratch space SQLite asks for only with
        // `PRAGMA temp_store=FILE`; a WASI guest may have no writable temp
        // directory, so they live in memory and vanish on close.
        let Some(name) = request.filename else {
            return Ok(OpenedFile {
                file: StoredFile::Memory(MemChunksFile::default()),
                access: options.access(),
            });
        };
        let path = name.path();

        let mut open = fs::OpenOptions::new();
        open.read(true);
        if options.access() == OpenAccess::ReadWrite {
            open.write(true);
            if options.exclusive() {
                open.create_new(true);
            } else if options.create() {
                open.create(true);
            }
        }
        let (file, access) = match open.open(path) {
            Ok(file) => (file, options.access()),
            // Like the unix VFS: a file we may not write is still readable, and
            // SQLite reports SQLITE_READONLY only if a write is attempted.
            Err(err) if options.access() == OpenAccess::ReadWrite => match fs::File::open(path) {
                Ok(file) => (file, OpenAccess::ReadOnly),
                Err(_) => return Err(io_error(VfsErrorCode::CantOpen, "open", path, err)),
            },
            Err(err) => return Err(io_error(VfsErrorCode::CantOpen, "open", path, err)),
        };
        Ok(OpenedFile {
            file: StoredFile::Disk(DiskFile {
                file,
                path: path.to_owned(),
                lock: LockLevel::None,
            }),
            access,
        })
    }

    fn close_file(
        _: &WasmOsCallback,
        name: Option<&str>,
        file: StoredFile,
        options: sqlite_wasm_rs::vfs::OpenOptions,
    ) -> VfsResult<()> {
        // Dropping closes the descriptor and releases any lock still held.
        drop(file);
        match name {
            Some(path) if options.delete_on_close() => fs::remove_file(path)
                .map_err(|err| io_error(VfsErrorCode::IoDelete, "delete on close", path, err)),
            _ => Ok(()),
        }
    }

    fn access(_: &WasmOsCallback, name: &str, mode: AccessMode) -> VfsResult<bool> {
        // As in the unix VFS, a failed stat means "no" rather than an error.
        Ok(match (fs::metadata(name), mode) {
            (Ok(meta), AccessMode::ReadWrite) => !meta.permissions().readonly(),
            (Ok(_), AccessMode::Exists | AccessMode::Read) => true,
            (Err(_), _) => false,
        })
    }

    fn full_pathname(_: &WasmOsCallback, name: &str) -> VfsResult<String> {
        // Journal names and the lock table derive from this, so make it absolute.
        // WASI emulates the working directory ("/" unless the host sets PWD);
        // if even that is unavailable, std resolves the relative name the same way.
        if Path::new(name).is_absolute() {
            return Ok(name.to_owned());
        }
        Ok(match std::env::current_dir() {
            Ok(cwd) => cwd.join(name).to_string_lossy().into_owned(),
            Err(_) => name.to_owned(),
        })
    }

    fn delete_file(_: &WasmOsCallback, name: &str, sync_dir: bool) -> VfsResult<()> {
        if let Err(err) = fs::remove_file(name) {
            // SQLite tolerates this specific code when the journal is already gone.
            let code = match err.kind() {
                io::ErrorKind::NotFound => VfsErrorCode::IoDeleteNoEntry,
                _ => VfsErrorCode::IoDelete,
            };
            return Err(io_error(code, "delete", name, err));
        }
        if sync_dir {
            // As in the unix VFS: a directory we cannot open is skipped, but a
            // failed sync of one we did open is an error.
            let parent = Path::new(name).parent().unwrap_or(Path::new("."));
            if let Ok(dir) = fs::File::open(parent) {
                dir.sync_all()
                    .map_err(|err| io_error(VfsErrorCode::IoDirectorySync, "sync", name, err))?;
            }
        }
        Ok(())
    }
}

/// A file SQLite opened through this VFS.
enum StoredFile {
    Disk(DiskFile),
    Memory(MemChunksFile),
}

impl StoredFile {
    fn inner(&self) -> &dyn VfsFile {
        match self {
            StoredFile::Disk(file) => file,
            StoredFile::Memory(file) => file,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn VfsFile {
        match self {
            StoredFile::Disk(file) => file,
            StoredFile::Memory(file) => file,
        }
    }
}

impl VfsFile for StoredFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        self.inner_mut().read(buf, offset)
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        self.inner_mut().write(buf, offset)
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        self.inner_mut().truncate(size)
    }

    fn sync(&mut self, options: SyncOptions) -> VfsResult<()> {
        self.inner_mut().sync(options)
    }

    fn size(&self) -> VfsResult<u64> {
        self.inner().size()
    }

    fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.inner_mut().lock(level)
    }

    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.inner_mut().unlock(level)
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        self.inner().check_reserved_lock()
    }
}

/// A named file on the WASI filesystem, with the lock level this handle holds.
struct DiskFile {
    file: fs::File,
    path: String,
    lock: LockLevel,
}

impl VfsFile for DiskFile {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        let fail = |err| io_error(VfsErrorCode::IoRead, "read", &self.path, err);
        // Positional reads: one host call each (a seek and a read would be
        // two, and a read through a stream more).
        let mut filled = 0;
        while filled < buf.len() {
            match pread(&self.file, &mut buf[filled..], offset + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(fail(err)),
            }
        }
        // rsqlite-vfs zero-fills the rest and reports SQLITE_IOERR_SHORT_READ,
        // as SQLite expects at end of file.
        Ok(filled)
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        let fail = |err: io::Error| {
            let code = match err.kind() {
                io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => VfsErrorCode::Full,
                _ => VfsErrorCode::IoWrite,
            };
            io_error(code, "write", &self.path, err)
        };
        let mut written = 0;
        while written < buf.len() {
            match pwrite(&self.file, &buf[written..], offset + written as u64) {
                Ok(0) => return Err(fail(io::ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(fail(err)),
            }
        }
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        self.file
            .set_len(size)
            .map_err(|err| io_error(VfsErrorCode::IoTruncate, "truncate", &self.path, err))
    }

    fn sync(&mut self, options: SyncOptions) -> VfsResult<()> {
        let synced = if options.data_only {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        };
        synced.map_err(|err| io_error(VfsErrorCode::IoSync, "sync", &self.path, err))
    }

    fn size(&self) -> VfsResult<u64> {
        self.file
            .metadata()
            .map(|meta| meta.len())
            .map_err(|err| io_error(VfsErrorCode::IoStat, "stat", &self.path, err))
    }

    fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        if self.lock >= level {
            return Ok(());
        }
        // SQLite always takes SHARED first; stay correct if it ever does not.
        if self.lock == LockLevel::None && level > LockLevel::Shared {
            self.lock(LockLevel::Shared)?;
        }
        let mut table = lock_table();
        let state = table.entry(self.path.clone()).or_insert(FileLockState {
            readers: 0,
            writer: LockLevel::None,
        });
        match level {
            // Covered by the early return: every handle holds at least NONE.
            LockLevel::None => {}
            LockLevel::Shared => {
                // A connection on its way to EXCLUSIVE keeps new readers out.
                if state.writer >= LockLevel::Pending {
                    return Err(busy(&self.path));
                }
                state.readers += 1;
            }
            LockLevel::Reserved => {
                // We hold only SHARED here, so any writer is another handle.
                if state.writer != LockLevel::None {
                    return Err(busy(&self.path));
                }
                state.writer = LockLevel::Reserved;
            }
            LockLevel::Pending | LockLevel::Exclusive => {
                if self.lock < LockLevel::Reserved && state.writer != LockLevel::None {
                    return Err(busy(&self.path));
                }
                state.writer = LockLevel::Pending;
                self.lock = LockLevel::Pending;
                if level == LockLevel::Exclusive {
                    // Other readers must drain first; PENDING is kept meanwhile,
                    // which is what SQLite expects after a BUSY here.
                    if state.readers > 1 {
                        return Err(busy(&self.path));
                    }
                    state.writer = LockLevel::Exclusive;
                }
            }
        }
        self.lock = level;
        Ok(())
    }

    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        if self.lock <= level {
            return Ok(());
        }
        let mut table = lock_table();
        if let Some(state) = table.get_mut(&self.path) {
            if self.lock >= LockLevel::Reserved {
                state.writer = LockLevel::None;
            }
            if level == LockLevel::None {
                state.readers -= 1;
                if state.readers == 0 {
                    table.remove(&self.path);
                }
            }
        }
        self.lock = level;
        Ok(())
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        Ok(lock_table()
            .get(&self.path)
            .is_some_and(|state| state.writer >= LockLevel::Reserved))
    }
}

impl Drop for DiskFile {
    fn drop(&mut self) {
        // SQLite unlocks before closing; this covers a close without it.
        let _ = self.unlock(LockLevel::None);
    }
}

/// Lock state of one database file across this process's handles.
struct FileLockState {
    /// Handles holding SHARED or stronger (the writer included).
    readers: usize,
    /// The strongest lock above SHARED, held by at most one handle.
    writer: LockLevel,
}

fn lock_table() -> MutexGuard<'static, BTreeMap<String, FileLockState>> {
    static LOCKS: Mutex<BTreeMap<String, FileLockState>> = Mutex::new(BTreeMap::new());
    // The table holds only counters, so it stays consistent even after a panic.
    LOCKS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn busy(path: &str) -> VfsError {
    VfsError::new(
        VfsErrorCode::Busy,
        format!("{path} is locked by another connection").into(),
    )
}

fn io_error(code: VfsErrorCode, op: &str, path: &str, err: io::Error) -> VfsError {
    let error = VfsError::new(code, format!("{op} {path}: {err}").into());
    match err.raw_os_error().and_then(SystemErrorCode::from_raw) {
        Some(errno) => error.with_system_error(errno),
        None => error,
    }
}

extern "C" {
    // wasi-libc: on WASI 0.2 each is one `descriptor.read`/`write` at an offset.
    #[link_name = "pread"]
    fn libc_pread(fd: i32, buf: *mut u8, count: usize, offset: i64) -> isize;
    #[link_name = "pwrite"]
    fn libc_pwrite(fd: i32, buf: *const u8, count: usize, offset: i64) -> isize;
}

fn pread(file: &fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = i64::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: the buffer is valid for `buf.len()` bytes and the descriptor
    // is open for as long as `file` lives.
    let n = unsafe { libc_pread(file.as_raw_fd(), buf.as_mut_ptr(), buf.len(), offset) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn pwrite(file: &fs::File, buf: &[u8], offset: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = i64::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: as for `pread`.
    let n = unsafe { libc_pwrite(file.as_raw_fd(), buf.as_ptr(), buf.len(), offset) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
