//! Notes on stderr, by the run's verbosity: `-q` silences notes and
//! progress (errors still show), `-v` adds details of what was resolved.
//! One level for the process: the CLI sets it once, before any work.

use std::sync::atomic::{AtomicI8, Ordering};

static LEVEL: AtomicI8 = AtomicI8::new(0);

/// -1 quiet, 0 normal, 1 and more verbose.
pub fn set_level(level: i8) {
    LEVEL.store(level, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) < 0
}

pub fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) > 0
}

/// Something a user should know that did not stop the command.
pub fn note(message: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("note: {message}");
    }
}

/// A detail shown with `-v`, once (the configuration may be resolved more
/// than once in a command).
pub fn detail(message: impl std::fmt::Display) {
    static SHOWN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if !verbose() {
        return;
    }
    let message = message.to_string();
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    if !shown.contains(&message) {
        eprintln!("memory-harness: {message}");
        shown.push(message);
    }
}
