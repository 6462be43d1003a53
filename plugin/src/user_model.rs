//! The user model, `USER.md`: imperative directives ("Always …", "Never …",
//! "Prefer …"), one behaviour each, each under a status line
//! `<!-- observed: YYYY-MM-DD | status: active|superseded -->`. A change
//! supersedes in place: the old directive flips to superseded and the new
//! one stands directly after it. Superseded directives are never injected.
//! Pure: parsing, validation and the planned rewrite.

use crate::layout::Date;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Superseded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// 1-based line of the directive (its status line is the line before).
    pub line: u32,
    pub text: String,
    pub observed: Date,
    pub status: Status,
}

/// Reads the status line that precedes a directive.
pub fn parse_status(line: &str) -> Option<(Date, Status)> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?;
    let mut observed = None;
    let mut status = None;
    for part in inner.split('|') {
        let (key, value) = part.split_once(':')?;
        match key.trim() {
            "observed" => observed = Date::parse(value.trim()),
            "status" => {
                status = match value.trim() {
                    "active" => Some(Status::Active),
                    "superseded" => Some(Status::Superseded),
                    _ => None,
                }
            }
            _ => {}
        }
    }
    Some((observed?, status?))
}

pub fn status_line(observed: Date, status: Status) -> String {
    let status = match status {
        Status::Active => "active",
        Status::Superseded => "superseded",
    };
    format!("<!-- observed: {observed} | status: {status} -->")
}

/// Checks a new directive: one line, starting with Always, Never or Prefer,
/// one sentence. The reason when it is not.
pub fn validate(text: &str) -> Result<String, String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let body = text.strip_prefix("- ").unwrap_or(&text).trim().to_string();
    if !["Always ", "Never ", "Prefer "]
        .iter()
        .any(|p| body.starts_with(p))
    {
        return Err("a directive starts with Always, Never or Prefer".into());
    }
    let sentences = body
        .trim_end_matches(['.', '!'])
        .matches(['.', '!', '?'])
        .count();
    if sentences > 0 || body.contains("<!--") || body.contains("-->") {
        return Err("a directive is one behaviour in one sentence, without comments".into());
    }
    if body.chars().count() > 300 {
        return Err("a directive is at most 300 characters".into());
    }
    Ok(body)
}

/// Whether two directives are about the same behaviour: their first three
/// words agree ("Always answer in English" / "Always answer in Spanish").
fn same_behaviour(a: &str, b: &str) -> bool {
    let head = |s: &str| {
        s.split_whitespace()
            .take(3)
            .map(|w| w.to_lowercase())
            .collect::<Vec<_>>()
    };
    let (a, b) = (head(a), head(b));
    a.len() == 3 && a == b
}

/// The directives of a `USER.md`: list items whose previous line is a
/// status line.
pub fn directives(text: &str) -> Vec<Directive> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(1) {
        let Some(body) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        if let Some((observed, status)) = parse_status(lines[i - 1]) {
            out.push(Directive {
                line: i as u32 + 1,
                text: body.trim().to_string(),
                observed,
                status,
            });
        }
    }
    out
}

/// `USER.md` as injected: superseded directives and their status lines left
/// out, everything else as written.
pub fn injectable(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    for d in directives(text)
        .iter()
        .filter(|d| d.status == Status::Superseded)
    {
        let at = d.line as usize - 1;
        drop[at] = true;
        drop[at - 1] = true;
    }
    let mut out: Vec<&str> = lines
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(l, _)| *l)
        .collect();
    // Keep the file's own trailing newline.
    if text.ends_with('\n') {
        out.push("");
    }
    out.join("\n")
}

/// The new `USER.md` after setting a directive on `today`: superseding the
/// active directive at `replaces` (its line) in place, or appending.
pub fn set(
    text: &str,
    directive: &str,
    replaces: Option<u32>,
    today: Date,
) -> Result<String, String> {
    let body = validate(directive)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let new_lines = [status_line(today, Status::Active), format!("- {body}")];
    match replaces {
        Some(line) => {
            let old = directives(text)
                .into_iter()
                .find(|d| d.line == line)
                .ok_or_else(|| format!("line {line} is not a directive under a status line"))?;
            if old.status == Status::Superseded {
                return Err(format!(
                    "the directive on line {line} is already superseded"
                ));
            }
            let status_at = line as usize - 2;
            lines[status_at] = status_line(old.observed, Status::Superseded);
            let at = line as usize;
            lines.splice(at..at, new_lines);
        }
        None => {
            let active: Vec<Directive> = directives(text)
                .into_iter()
                .filter(|d| d.status == Status::Active)
                .collect();
            if active.iter().any(|d| d.text == body) {
                return Err("this directive is already active".into());
            }
            // A directive about the same behaviour (same opening words) is a
            // change: it must supersede in place, never stand elsewhere.
            if let Some(d) = active.iter().find(|d| same_behaviour(&d.text, &body)) {
                return Err(format!(
                    "this changes the directive on line {0} ({1:?}): set it with replaces-line {0}",
                    d.line, d.text
                ));
            }
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.extend(new_lines);
        }
    }
    Ok(lines.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: &str =
        "# User\n\n<!-- observed: 2026-11-20 | status: active -->\n- Always answer in English.\n";

    fn day(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn reads_directives_under_status_lines() {
        let d = directives(USER);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, 4);
        assert_eq!(d[0].status, Status::Active);
        assert_eq!(d[0].observed, day("2026-11-20"));
    }

    #[test]
    fn a_change_supersedes_in_place_and_twice() {
        let once = set(
            USER,
            "Always answer in Spanish.",
            Some(4),
            day("2026-12-01"),
        )
        .unwrap();
        assert_eq!(
            once,
            "# User\n\n<!-- observed: 2026-11-20 | status: superseded -->\n- Always answer in English.\n\
             <!-- observed: 2026-12-01 | status: active -->\n- Always answer in Spanish.\n"
        );
        let twice = set(
            &once,
            "Always answer in German.",
            Some(6),
            day("2026-12-02"),
        )
        .unwrap();
        let active: Vec<String> = directives(&twice)
            .into_iter()
            .filter(|d| d.status == Status::Active)
            .map(|d| d.text)
            .collect();
        assert_eq!(active, ["Always answer in German."]);
        assert!(
            set(&twice, "Never x", Some(4), day("2026-12-02")).is_err(),
            "superseded stays superseded"
        );
        let shown = injectable(&twice);
        assert!(
            !shown.contains("English") && !shown.contains("Spanish") && shown.contains("German")
        );
    }

    #[test]
    fn format_violations_are_refused() {
        for bad in [
            "Answer in English.",
            "Always a. Never b.",
            "Prefer x <!-- status: active -->",
            "",
        ] {
            assert!(validate(bad).is_err(), "{bad}");
        }
        assert_eq!(
            validate("- Prefer   short answers.").unwrap(),
            "Prefer short answers."
        );
        assert!(
            set(USER, "Always answer in English.", None, day("2026-12-02")).is_err(),
            "no duplicate"
        );
        let contradiction =
            set(USER, "Always answer in Spanish.", None, day("2026-12-02")).unwrap_err();
        assert!(contradiction.contains("replaces-line 4"), "{contradiction}");
        assert!(
            set(USER, "Never use emoji.", None, day("2026-12-02")).is_ok(),
            "another behaviour is appended"
        );
        assert!(
            set(USER, "Never x", Some(1), day("2026-12-02")).is_err(),
            "not a directive line"
        );
    }
}
