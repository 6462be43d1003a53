//! FTS5's own tokenizers, called from Rust: the terms a text is indexed
//! under, exactly as FTS5 makes them (Porter stemming included), for the
//! lexicon kept beside the full-text index (`storage::index::lexicon`).

use super::ffi;
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr::{self, NonNull};

/// The connection's FTS5 API (`SELECT fts5(?1)`, as the FTS5 docs show).
///
/// # Safety
/// `db` must be an open connection.
pub(super) unsafe fn api(db: *mut ffi::sqlite3) -> Result<NonNull<ffi::fts5_api>, String> {
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
    NonNull::new(api).ok_or_else(|| "FTS5 is not available (no fts5_api)".into())
}

/// Whether a text is a document being indexed or a phrase of a query (FTS5
/// tells its tokenizers apart; Porter and unicode61 treat both alike).
#[derive(Clone, Copy)]
pub enum Purpose {
    Document,
    Query,
}

/// One instance of an FTS5 tokenizer, as a table declared with
/// `tokenize = '<spec>'` uses it.
pub struct Tokenizer {
    handle: NonNull<ffi::Fts5Tokenizer>,
    methods: ffi::fts5_tokenizer,
}

impl Tokenizer {
    /// The tokenizer of a `tokenize = '…'` spec ("porter unicode61
    /// remove_diacritics 2": the first word names it, the rest are its
    /// arguments).
    ///
    /// # Safety
    /// `db` must be an open connection, and stay open while the tokenizer is
    /// used.
    pub(super) unsafe fn new(db: *mut ffi::sqlite3, spec: &str) -> Result<Tokenizer, String> {
        let api = api(db)?;
        let words: Vec<CString> = spec
            .split_whitespace()
            .map(|w| CString::new(w).map_err(|_| format!("bad tokenizer spec {spec:?}")))
            .collect::<Result<_, _>>()?;
        let Some((name, args)) = words.split_first() else {
            return Err("empty tokenizer spec".into());
        };
        let find = api
            .as_ref()
            .xFindTokenizer
            .ok_or("FTS5 has no xFindTokenizer")?;
        let mut user: *mut c_void = ptr::null_mut();
        let mut methods: ffi::fts5_tokenizer = std::mem::zeroed();
        let rc = find(api.as_ptr(), name.as_ptr(), &mut user, &mut methods);
        if rc != ffi::SQLITE_OK {
            return Err(format!("no FTS5 tokenizer {name:?} ({rc})"));
        }
        let create = methods.xCreate.ok_or("the tokenizer has no xCreate")?;
        let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let mut handle: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        let rc = create(user, argv.as_mut_ptr(), argv.len() as c_int, &mut handle);
        match NonNull::new(handle) {
            Some(handle) if rc == ffi::SQLITE_OK => Ok(Tokenizer { handle, methods }),
            _ => Err(format!("cannot create the FTS5 tokenizer {spec:?} ({rc})")),
        }
    }

    /// Calls `each` with every token of `text`, in order.
    pub fn tokens(
        &self,
        text: &str,
        purpose: Purpose,
        mut each: impl FnMut(&[u8]),
    ) -> Result<(), c_int> {
        self.tokens_at(text, purpose, |token, _| each(token))
    }

    /// Calls `each` with every token of `text` and the byte range of the
    /// text it came from, in order.
    pub fn tokens_at(
        &self,
        text: &str,
        purpose: Purpose,
        mut each: impl FnMut(&[u8], std::ops::Range<usize>),
    ) -> Result<(), c_int> {
        unsafe extern "C" fn token(
            context: *mut c_void,
            _flags: c_int,
            bytes: *const c_char,
            length: c_int,
            start: c_int,
            end: c_int,
        ) -> c_int {
            let each = &mut *(context as *mut &mut dyn FnMut(&[u8], std::ops::Range<usize>));
            let token = if bytes.is_null() || length <= 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(bytes as *const u8, length as usize)
            };
            each(token, start.max(0) as usize..end.max(start).max(0) as usize);
            ffi::SQLITE_OK
        }
        if text.is_empty() {
            return Ok(());
        }
        let flags = match purpose {
            Purpose::Document => ffi::FTS5_TOKENIZE_DOCUMENT,
            Purpose::Query => ffi::FTS5_TOKENIZE_QUERY,
        };
        let Some(tokenize) = self.methods.xTokenize else {
            return Err(ffi::SQLITE_MISUSE);
        };
        let mut each: &mut dyn FnMut(&[u8], std::ops::Range<usize>) = &mut each;
        let rc = unsafe {
            tokenize(
                self.handle.as_ptr(),
                &mut each as *mut &mut dyn FnMut(&[u8], std::ops::Range<usize>) as *mut c_void,
                flags,
                text.as_ptr() as *const c_char,
                text.len() as c_int,
                Some(token),
            )
        };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(rc)
        }
    }

    /// The tokens of `text`, in order.
    pub fn tokenize(&self, text: &str, purpose: Purpose) -> Result<Vec<Vec<u8>>, c_int> {
        let mut out = Vec::new();
        self.tokens(text, purpose, |t| out.push(t.to_vec()))?;
        Ok(out)
    }
}

impl Drop for Tokenizer {
    fn drop(&mut self) {
        if let Some(delete) = self.methods.xDelete {
            unsafe { delete(self.handle.as_ptr()) };
        }
    }
}
