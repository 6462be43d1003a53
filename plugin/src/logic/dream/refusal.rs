//! Why a sweep did not use the model's revised `MEMORY.md`: a closed set of
//! kinds (recorded in the ledger's sweep log and shown on the review page)
//! and the reason in words. The reason is written by code but may quote up
//! to 80 characters of the model's reply, so readers treat it as data.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// It would lose more than the bounded share of existing entries.
    LossBound,
    /// It exceeds the bootstrap per-file budget.
    Budget,
    /// It drops a promoted candidate's `Source: path#Lx-Ly`.
    MissingSource,
    /// `MEMORY.md` changed between capture and rename.
    ConcurrentEdit,
    /// It carries the text of an untrusted or system entry.
    UntrustedText,
    /// It adds a shell command, a half sentence or score metadata.
    Junk,
    /// It adds an entry that is neither a candidate nor an existing entry.
    ForeignEntry,
    /// Empty, control characters, injected memory blocks, does not parse.
    Malformed,
    /// The model failed or timed out.
    ModelFailed,
    /// The reply could not be checked (the index could not be read).
    Unchecked,
}

impl RefusalKind {
    pub const ALL: [RefusalKind; 10] = [
        RefusalKind::LossBound,
        RefusalKind::Budget,
        RefusalKind::MissingSource,
        RefusalKind::ConcurrentEdit,
        RefusalKind::UntrustedText,
        RefusalKind::Junk,
        RefusalKind::ForeignEntry,
        RefusalKind::Malformed,
        RefusalKind::ModelFailed,
        RefusalKind::Unchecked,
    ];

    /// The kebab-case name, as the WIT enum and the ledger spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::LossBound => "loss-bound",
            RefusalKind::Budget => "budget",
            RefusalKind::MissingSource => "missing-source",
            RefusalKind::ConcurrentEdit => "concurrent-edit",
            RefusalKind::UntrustedText => "untrusted-text",
            RefusalKind::Junk => "junk",
            RefusalKind::ForeignEntry => "foreign-entry",
            RefusalKind::Malformed => "malformed",
            RefusalKind::ModelFailed => "model-failed",
            RefusalKind::Unchecked => "unchecked",
        }
    }

    pub fn parse(name: &str) -> Option<RefusalKind> {
        RefusalKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// A refusal: its kind and the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub reason: String,
}

impl Refusal {
    pub fn new(kind: RefusalKind, reason: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            reason: reason.into(),
        }
    }

    /// The same refusal with its reason prefixed (the caller's context).
    pub fn prefixed(self, prefix: &str) -> Refusal {
        Refusal {
            kind: self.kind,
            reason: format!("{prefix}{}", self.reason),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in RefusalKind::ALL {
            assert_eq!(RefusalKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(RefusalKind::parse("Budget"), None);
    }
}
