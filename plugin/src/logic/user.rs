//! The user model, `USER.md`: imperative directives ("Always …", "Never …",
//! "Prefer …"), one behaviour each, each under a status line
//! `<!-- observed: YYYY-MM-DD | status: active|superseded -->`. A change
//! supersedes in place: the old directive flips to superseded and the new
//! one stands directly after it. Superseded directives are never injected.
//! Pure: parsing, validation and the planned rewrite.

use crate::text::layout::Date;

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

/// Words that say how, not what: the directive's polarity and hedges.
const POLARITY: &[&str] = &[
    "always", "never", "prefer", "please", "dont", "don't", "do", "not", "avoid", "stop", "only",
    "rather", "instead", "anymore",
];

/// Verbs too general to tie two directives together on their own ("use
/// tabs" / "use pnpm" are two behaviours).
const GENERAL_VERBS: &[&str] = &[
    "use", "make", "keep", "give", "be", "have", "get", "put", "add", "include", "do",
];

/// Words of one meaning, folded to one before stemming: a paraphrase is
/// the same behaviour. Inflections are listed: the light stemmer does not
/// bring "reply" and "replies" together.
const SYNONYMS: &[(&[&str], &str)] = &[
    (
        &[
            "answer",
            "answers",
            "answered",
            "answering",
            "reply",
            "replies",
            "replied",
            "replying",
            "respond",
            "responds",
            "responded",
            "responding",
            "response",
            "responses",
            "write",
            "writes",
            "writing",
            "wrote",
            "written",
            "speak",
            "speaks",
            "speaking",
            "talk",
            "talks",
            "talking",
            "message",
            "messages",
        ],
        "answer",
    ),
    (
        &["utilize", "utilise", "employ", "using", "uses", "used"],
        "use",
    ),
    (
        &[
            "brief",
            "briefly",
            "concise",
            "concisely",
            "terse",
            "tersely",
            "shorter",
        ],
        "short",
    ),
    (&["lengthy", "verbose", "longer"], "long"),
    (&["detailed", "details"], "detail"),
];

/// Values that take each other's place: two directives that differ in one
/// of these and agree otherwise set the same behaviour to another value.
const VALUE_CLASSES: &[&[&str]] = &[
    &[
        "english",
        "spanish",
        "french",
        "german",
        "italian",
        "portuguese",
        "dutch",
        "chinese",
        "mandarin",
        "japanese",
        "korean",
        "russian",
        "arabic",
        "hindi",
        "polish",
        "swedish",
        "turkish",
        "ukrainian",
        "greek",
        "hebrew",
        "catalan",
    ],
    &[
        "short", "long", "detail", "brief", "concise", "verbose", "thorough",
    ],
    &[
        "bullet",
        "prose",
        "table",
        "markdown",
        "plain",
        "list",
        "paragraph",
    ],
    &["formal", "casual", "informal", "friendly"],
    &["npm", "pnpm", "yarn", "bun"],
    &["tab", "space"],
    &[
        "metric",
        "imperial",
        "km",
        "kilometr",
        "kilometer",
        "mile",
        "meter",
        "metr",
        "feet",
        "foot",
    ],
    &["celsius", "fahrenheit"],
    &["24", "12"],
];

/// The value classes a directive names a value of, with the values.
fn values_named(words: &std::collections::BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (k, class) in VALUE_CLASSES.iter().enumerate() {
        for w in words {
            if class.iter().any(|v| crate::text::words::stem(v) == *w) {
                out.push((k, w.clone()));
            }
        }
    }
    out
}

/// A clock time written out ("17:30", "5:30pm") says which clock it uses.
fn clock_of(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    if lower.contains("am/pm") || lower.contains("a.m.") || lower.contains("p.m.") {
        return Some("12");
    }
    for word in text.split_whitespace() {
        let w = word
            .trim_matches(|c: char| !c.is_alphanumeric() && c != ':')
            .to_lowercase();
        let Some((h, rest)) = w.split_once(':') else {
            continue;
        };
        let (Ok(hour), true) = (
            h.parse::<u32>(),
            rest.len() >= 2 && rest[..2].bytes().all(|b| b.is_ascii_digit()),
        ) else {
            continue;
        };
        if rest.ends_with("am") || rest.ends_with("pm") {
            return Some("12");
        }
        if (13..=23).contains(&hour) {
            return Some("24");
        }
    }
    None
}

fn same_value_class(a: &str, b: &str) -> bool {
    let stemmed = |w: &&str| crate::text::words::stem(w);
    VALUE_CLASSES.iter().any(|class| {
        let words: Vec<String> = class.iter().map(stemmed).collect();
        words.iter().any(|w| w == a) && words.iter().any(|w| w == b)
    })
}

/// Whether a directive forbids (`Never …`, `Don't …`, `Avoid …`) or asks.
fn polarity(text: &str) -> bool {
    let lower = text.trim_start_matches("- ").to_lowercase();
    ["never ", "don't ", "do not ", "avoid ", "stop "]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// What a directive is about: its content words (stemmed, synonyms folded)
/// without its polarity ("Always"/"Never"/"Prefer"/"don't").
fn behaviour(text: &str) -> std::collections::BTreeSet<String> {
    let mut words: std::collections::BTreeSet<String> = crate::text::words::tokens(text)
        .filter(|t| !POLARITY.contains(&t.as_str()) && !crate::text::words::is_stop_word(t))
        .map(|t| {
            SYNONYMS
                .iter()
                .find(|(forms, _)| forms.contains(&t.as_str()))
                .map_or_else(|| crate::text::words::stem(&t), |(_, to)| to.to_string())
        })
        .collect();
    if let Some(clock) = clock_of(text) {
        words.insert(clock.to_string());
    }
    words
}

/// How far two directives are about the same behaviour (0 = unrelated):
/// the same subject with either polarity ("Always answer in English" /
/// "Never answer in English"), one value changed ("… in Spanish", "Prefer
/// short answers" / "Prefer detailed answers"), or a paraphrase ("reply" for
/// "answer"). Two directives that share only a general verb ("use tabs" /
/// "use pnpm") are different behaviours.
pub fn same_behaviour(a: &str, b: &str) -> f32 {
    let (a_text, b_text) = (a, b);
    let (a, b) = (behaviour(a), behaviour(b));
    // Each names a different value of one kind ("miles" / "metric units",
    // "17:30" / "the 12-hour clock"): the same setting, changed.
    let (values_a, values_b) = (values_named(&a), values_named(&b));
    let changed_value = values_a.iter().any(|(k, v)| {
        values_b.iter().any(|(k2, v2)| k == k2 && v != v2)
            && !values_b.iter().any(|(k2, v2)| k == k2 && v == v2)
    });
    if changed_value {
        return 0.5;
    }
    let shared: Vec<&String> = a.intersection(&b).collect();
    if shared.is_empty() || a.is_empty() || b.is_empty() {
        return 0.0;
    }
    // The same thing, flipped ("Never add emoji to messages" / "Always use
    // emoji where they fit").
    if polarity(a_text) != polarity(b_text) {
        let subject =
            |s: &std::collections::BTreeSet<String>| -> std::collections::BTreeSet<String> {
                s.iter()
                    .filter(|w| !GENERAL_VERBS.contains(&w.as_str()) && w.as_str() != "answer")
                    .cloned()
                    .collect()
            };
        let (sa, sb) = (subject(&a), subject(&b));
        let both = sa.intersection(&sb).count();
        if both > 0 && both * 3 >= sa.union(&sb).count() {
            return 0.5;
        }
    }
    let jaccard = shared.len() as f32 / a.union(&b).count() as f32;
    if a == b || jaccard >= 0.5 {
        return jaccard;
    }
    // One value changed: the words that differ are one on each side, and
    // either they are values of one kind ("English" / "Spanish", "tabs" /
    // "spaces") or two specific words around them agree.
    let (only_a, only_b): (Vec<&String>, Vec<&String>) =
        (a.difference(&b).collect(), b.difference(&a).collect());
    let specific = shared
        .iter()
        .filter(|w| !GENERAL_VERBS.contains(&w.as_str()))
        .count();
    // Several values swapped at once ("Celsius and km" / "Fahrenheit and
    // miles"): every changed word has a counterpart of its kind.
    let swapped = |from: &[&String], to: &[&String]| {
        !from.is_empty()
            && from
                .iter()
                .all(|x| to.iter().any(|y| same_value_class(x, y)))
    };
    let one_value_changed = match (only_a.as_slice(), only_b.as_slice()) {
        ([x], [y]) => same_value_class(x, y) || specific >= 2,
        ([], [_]) | ([_], []) => specific >= 2,
        (a_only, b_only) => swapped(a_only, b_only) && swapped(b_only, a_only),
    };
    if one_value_changed {
        jaccard
    } else {
        0.0
    }
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
/// active directive at `replaces` (its line) in place — or, without one,
/// the active directive about the same behaviour (`same_behaviour`), which
/// is returned — or appending.
pub fn set(
    text: &str,
    directive: &str,
    replaces: Option<u32>,
    today: Date,
) -> Result<(String, Option<Directive>), String> {
    let body = validate(directive)?;
    let active: Vec<Directive> = directives(text)
        .into_iter()
        .filter(|d| d.status == Status::Active)
        .collect();
    if replaces.is_none() && active.iter().any(|d| d.text == body) {
        return Err("this directive is already active".into());
    }
    // A directive about the same behaviour is a change: it supersedes in
    // place, never stands elsewhere. The closest wins; among equals, the
    // latest.
    let replaces = replaces.or_else(|| {
        active
            .iter()
            .map(|d| (same_behaviour(&d.text, &body), d.line))
            .filter(|(score, _)| *score > 0.0)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, line)| line)
    });
    let replaced = replaces.and_then(|line| active.iter().find(|d| d.line == line).cloned());
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
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.extend(new_lines);
        }
    }
    Ok((lines.join("\n") + "\n", replaced))
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
        .unwrap()
        .0;
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
        .unwrap()
        .0;
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
        assert!(
            set(USER, "Never x", Some(1), day("2026-12-02")).is_err(),
            "not a directive line"
        );
        let (appended, replaced) = set(USER, "Never use emoji.", None, day("2026-12-02")).unwrap();
        assert_eq!(replaced, None, "another behaviour is appended");
        assert_eq!(directives(&appended).len(), 2);
    }

    #[test]
    fn the_same_behaviour_supersedes_in_place_whatever_its_polarity_or_wording() {
        let active = |text: &str| -> Vec<String> {
            directives(text)
                .into_iter()
                .filter(|d| d.status == Status::Active)
                .map(|d| d.text)
                .collect()
        };
        for change in [
            "Always answer in Spanish.",
            "Never answer in English.",
            "Always reply in Spanish.",
            "Always write replies in Spanish.",
            "Prefer answering in Spanish.",
        ] {
            let (text, replaced) = set(USER, change, None, day("2026-12-02")).unwrap();
            assert_eq!(replaced.map(|d| d.line), Some(4), "{change}");
            assert_eq!(active(&text), [change], "{change}");
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines[5], format!("- {change}"), "in place: {change}");
        }
        let two = "<!-- observed: 2026-11-20 | status: active -->\n- Never use emoji.\n\
                   <!-- observed: 2026-11-20 | status: active -->\n- Prefer short answers.\n";
        let (text, replaced) =
            set(two, "Prefer detailed answers.", None, day("2026-12-02")).unwrap();
        assert_eq!(replaced.map(|d| d.line), Some(4));
        assert_eq!(
            active(&text),
            ["Never use emoji.", "Prefer detailed answers."]
        );
        let (text, replaced) = set(two, "Always use emoji.", None, day("2026-12-02")).unwrap();
        assert_eq!(replaced.map(|d| d.line), Some(2));
        assert_eq!(
            active(&text),
            ["Always use emoji.", "Prefer short answers."]
        );
        for other in [
            "Never use exclamation marks.",
            "Always use tabs for indentation.",
            "Prefer metric units.",
        ] {
            let (_, replaced) = set(two, other, None, day("2026-12-02")).unwrap();
            assert_eq!(replaced, None, "{other} is another behaviour");
        }
    }

    #[test]
    fn unrelated_directives_share_no_behaviour() {
        assert_eq!(same_behaviour("Always use tabs.", "Always use pnpm."), 0.0);
        assert!(same_behaviour("Always use tabs.", "Always use spaces.") > 0.0);
        assert!(
            same_behaviour(
                "Always give temperatures in Celsius and distances in km.",
                "Always give temperatures in Fahrenheit and distances in miles."
            ) > 0.0
        );
        assert_eq!(
            same_behaviour("Always answer in French.", "Prefer short answers."),
            0.0
        );
        assert!(
            same_behaviour(
                "Always give distances in miles.",
                "Always use metric units."
            ) > 0.0
        );
        assert!(
            same_behaviour(
                "Always write times like 17:30.",
                "Always use the 12-hour clock with am/pm."
            ) > 0.0
        );
        assert!(
            same_behaviour(
                "Always write times in 24-hour format.",
                "Always write times like 5:30pm."
            ) > 0.0
        );
        assert!(
            same_behaviour(
                "Never add emoji to messages.",
                "Always use emoji where they fit."
            ) > 0.0
        );
        assert_eq!(
            same_behaviour(
                "Never add emoji to messages.",
                "Always keep messages short."
            ),
            0.0
        );
        assert!(
            same_behaviour(
                "Always write times in 24-hour format.",
                "Always write times with am/pm."
            ) > 0.0
        );
        assert!(
            same_behaviour(
                "Always use pnpm for installs.",
                "Never use npm for installs."
            ) > 0.0
        );
        assert_eq!(
            same_behaviour(
                "Always answer in English.",
                "Always answer with short paragraphs."
            ),
            0.0
        );
    }

    #[test]
    fn explicit_replacement_still_works() {
        assert!(set(USER, "Never x", Some(1), day("2026-12-02")).is_err());
    }
}
