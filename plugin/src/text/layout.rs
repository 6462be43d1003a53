//! The workspace layout: which files are memory, what tier each belongs to,
//! and which relative paths memory may read. Pure path logic; the file-system
//! checks (symlinks, regular files) live with the I/O in `storage::workspace`.

use crate::contract::api::TurnContext;
use crate::contract::error::MemoryError;

/// The curated core, injected at session start.
pub const MEMORY_FILE: &str = "MEMORY.md";
pub const USER_FILE: &str = "USER.md";
/// Instructions: injected, never indexed.
pub const AGENTS_FILE: &str = "AGENTS.md";
/// Dreaming's review surface: managed blocks and sweep summaries.
pub const DREAMS_FILE: &str = "DREAMS.md";
/// The episodic directory.
pub const DAILY_DIR: &str = "memory";
/// The component's own directory inside the workspace (index, locks).
pub const STATE_DIR: &str = ".memory";
pub const INDEX_FILE: &str = ".memory/index.sqlite";
/// The provenance ledger: recorded at write time, never rebuilt.
pub const LEDGER_FILE: &str = ".memory/provenance.sqlite";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// `MEMORY.md`, `USER.md`: evergreen, injected.
    Curated,
    /// `memory/YYYY-MM-DD.md` and `memory/YYYY-MM-DD-slug.md`: decays with age.
    Daily,
    /// Any other `memory/*.md`: evergreen, searchable only.
    Note,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Curated => "curated",
            Tier::Daily => "daily",
            Tier::Note => "note",
        }
    }

    pub fn parse(s: &str) -> Option<Tier> {
        match s {
            "curated" => Some(Tier::Curated),
            "daily" => Some(Tier::Daily),
            "note" => Some(Tier::Note),
            _ => None,
        }
    }
}

/// A relative path that names a memory file, checked by `memory_path`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryPath(String);

impl MemoryPath {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn tier(&self) -> Tier {
        if self.0 == MEMORY_FILE || self.0 == USER_FILE {
            Tier::Curated
        } else if self.date().is_some() {
            Tier::Daily
        } else {
            Tier::Note
        }
    }

    /// The date of a daily note, from its name: `YYYY-MM-DD[-slug].md`.
    pub fn date(&self) -> Option<Date> {
        let name = self.0.strip_prefix("memory/")?.strip_suffix(".md")?;
        let (date, rest) = name.split_at_checked(10)?;
        if !(rest.is_empty() || rest.starts_with('-')) {
            return None;
        }
        Date::parse(date)
    }
}

impl std::fmt::Display for MemoryPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a workspace-relative path against the memory layout: `MEMORY.md`,
/// `USER.md`, or `memory/<name>.md` directly inside `memory/`. Everything else
/// (`..`, absolute paths, backslashes, percent escapes, hidden files, other
/// files such as `AGENTS.md`, `DREAMS.md` or the index) is refused.
/// Longest memory path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1_024;

pub fn memory_path(raw: &str) -> Result<MemoryPath, MemoryError> {
    if raw.trim().is_empty() {
        return Err(MemoryError::InvalidInput("the path is empty".into()));
    }
    // File systems refuse names over 255 bytes; say so instead of an i/o
    // error, and never echo a huge path back.
    if raw.len() > MAX_PATH_BYTES || raw.split('/').any(|p| p.len() > 255) {
        return Err(MemoryError::InvalidInput(format!(
            "the path is too long (a name is at most 255 bytes, a path {MAX_PATH_BYTES})"
        )));
    }
    let deny = |why: &str| Err(MemoryError::AccessDenied(format!("{raw:?}: {why}")));
    if raw.starts_with('/') || raw.starts_with('~') {
        return deny("absolute paths are not allowed; use a workspace-relative path");
    }
    if raw.contains('\\') {
        return deny("backslashes are not allowed in memory paths");
    }
    if raw.contains('%') {
        return deny("percent-escapes are not allowed in memory paths");
    }
    if raw.chars().any(|c| c.is_control()) {
        return deny("control characters are not allowed in memory paths");
    }
    let path = raw.strip_prefix("./").unwrap_or(raw);
    let parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| *p == ".." || *p == "." || p.is_empty())
    {
        return deny("`..`, `.` and empty path segments are not allowed");
    }
    match parts.as_slice() {
        [name] if *name == MEMORY_FILE || *name == USER_FILE => Ok(MemoryPath(path.to_string())),
        [dir, name]
            if *dir == DAILY_DIR
                && name.ends_with(".md")
                && !name.starts_with('.')
                && name.len() > 3 =>
        {
            Ok(MemoryPath(path.to_string()))
        }
        _ => deny("only MEMORY.md, USER.md and memory/*.md are memory files"),
    }
}

/// The suffix of the file untrusted material of a note or transcript is
/// written to, beside the trusted file: `memory/2026-12-03-untrusted.md`
/// beside `memory/2026-12-03.md`. One file per class, so a web summary or a
/// tool log never downgrades the file holding what the owner said.
pub const UNTRUSTED_SUFFIX: &str = "-untrusted";
pub const SYSTEM_SUFFIX: &str = "-system";

/// Where content of `class` bound for `path` is written: owner and agent
/// content in `path` itself, untrusted and system content in a sibling of
/// its own class (`<stem>-untrusted.md`, `<stem>-system.md`).
pub fn class_file(path: &MemoryPath, class: crate::contract::api::SourceClass) -> MemoryPath {
    use crate::contract::api::SourceClass;
    let suffix = match class {
        SourceClass::Owner | SourceClass::Agent => return path.clone(),
        SourceClass::Untrusted => UNTRUSTED_SUFFIX,
        SourceClass::System => SYSTEM_SUFFIX,
    };
    let stem = path.as_str().strip_suffix(".md").unwrap_or(path.as_str());
    // A name of at most 255 bytes: the stem gives way to the suffix.
    let name_start = stem.rfind('/').map_or(0, |i| i + 1);
    let room = 255 - ".md".len() - suffix.len();
    let mut end = stem.len().min(name_start + room);
    while !stem.is_char_boundary(end) {
        end -= 1;
    }
    MemoryPath(format!("{}{suffix}.md", &stem[..end]))
}

/// The class a file's name declares: `…-untrusted.md` untrusted,
/// `…-system.md` system. A cap, never a grant: it only ever lowers trust.
pub fn class_named(path: &MemoryPath) -> Option<crate::contract::api::SourceClass> {
    let stem = path.as_str().strip_suffix(".md")?;
    if stem.ends_with(UNTRUSTED_SUFFIX) {
        Some(crate::contract::api::SourceClass::Untrusted)
    } else if stem.ends_with(SYSTEM_SUFFIX) {
        Some(crate::contract::api::SourceClass::System)
    } else {
        None
    }
}

/// A calendar date (proleptic Gregorian), enough for daily-note names and
/// recency; no time-zone logic, dates are UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    pub fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = &s[r];
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month, day) = (num(0..4)? as i32, num(5..7)?, num(8..10)?);
        let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days_since_epoch(self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let y = self.year as i64 - if self.month <= 2 { 1 } else { 0 };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let m = self.month as i64;
        let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + self.day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    pub fn midnight_ms(self) -> i64 {
        self.days_since_epoch() * 86_400_000
    }

    /// The UTC date of a Unix time in milliseconds.
    pub fn from_ms(ms: i64) -> Date {
        let z = ms.div_euclid(86_400_000) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + if month <= 2 { 1 } else { 0 }) as i32;
        Date { year, month, day }
    }

    /// The owner's calendar date at the turn: daily notes are named by it.
    pub fn of_turn(context: &TurnContext) -> Date {
        Date::from_ms(context.local_ms())
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_memory_files() {
        for ok in [
            "MEMORY.md",
            "USER.md",
            "memory/2026-01-02.md",
            "memory/notes.md",
            "./MEMORY.md",
        ] {
            assert!(memory_path(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "../MEMORY.md",
            "/etc/passwd",
            "memory/../MEMORY.md",
            "memory/../../x.md",
            "memory\\2026-01-01.md",
            "memory/%2e%2e/x.md",
            "AGENTS.md",
            "DREAMS.md",
            ".memory/index.sqlite",
            "memory/sub/x.md",
            "memory/x.txt",
            "memory/.hidden.md",
            "memory//x.md",
            "~/MEMORY.md",
            "memory/.md",
            "memory/a\0.md",
            "C:/x.md",
        ] {
            let err = memory_path(bad).unwrap_err();
            assert!(
                matches!(err, MemoryError::AccessDenied(_)),
                "{bad}: {err:?}"
            );
        }
        assert!(matches!(
            memory_path("  "),
            Err(MemoryError::InvalidInput(_))
        ));
    }

    #[test]
    fn tiers_and_dates() {
        assert_eq!(memory_path("MEMORY.md").unwrap().tier(), Tier::Curated);
        let daily = memory_path("memory/2026-02-28-standup.md").unwrap();
        assert_eq!(daily.tier(), Tier::Daily);
        assert_eq!(
            daily.date(),
            Some(Date {
                year: 2026,
                month: 2,
                day: 28
            })
        );
        assert_eq!(
            memory_path("memory/2026-02-30.md").unwrap().tier(),
            Tier::Note
        );
        assert_eq!(
            memory_path("memory/2026-02-28x.md").unwrap().tier(),
            Tier::Note
        );
    }

    #[test]
    fn untrusted_and_system_material_has_files_of_its_own() {
        use crate::contract::api::SourceClass as C;
        let daily = memory_path("memory/2026-12-03.md").unwrap();
        assert_eq!(class_file(&daily, C::Owner), daily);
        assert_eq!(class_file(&daily, C::Agent), daily);
        let untrusted = class_file(&daily, C::Untrusted);
        assert_eq!(untrusted.as_str(), "memory/2026-12-03-untrusted.md");
        assert_eq!(untrusted.tier(), Tier::Daily, "dated like its sibling");
        assert_eq!(class_named(&untrusted), Some(C::Untrusted));
        let session = memory_path("memory/2026-12-03-session-s1.md").unwrap();
        let system = class_file(&session, C::System);
        assert_eq!(system.as_str(), "memory/2026-12-03-session-s1-system.md");
        assert_eq!(class_named(&system), Some(C::System));
        assert_eq!(class_named(&daily), None);
        let long = memory_path(&format!("memory/{}.md", "x".repeat(250))).unwrap();
        let sibling = class_file(&long, C::Untrusted);
        assert!(memory_path(sibling.as_str()).is_ok(), "still a valid name");
        assert_eq!(class_named(&sibling), Some(C::Untrusted));
    }

    #[test]
    fn dates_round_trip_through_epoch_days() {
        for s in ["1970-01-01", "2000-02-29", "2026-12-02", "1969-12-31"] {
            let d = Date::parse(s).unwrap();
            assert_eq!(Date::from_ms(d.midnight_ms()), d);
            assert_eq!(d.to_string(), s);
        }
        assert_eq!(Date::parse("1970-01-02").unwrap().days_since_epoch(), 1);
        assert!(Date::parse("2026-13-01").is_none());
        assert!(Date::parse("2025-02-29").is_none());
        assert!(Date::parse("2026-1-01").is_none());
    }
}
