//! Trailing annotation comments on an entry line:
//! `<!-- trigger: a, b -->`, `<!-- importance: N -->`, `<!-- project: key -->`.
//!
//! Annotations become index columns. A malformed one leaves its column NULL
//! (neutral) and is reported as a problem; it never fails the file. The text an
//! annotation sits on is kept without the comments, so they never match a query.

/// Triggers kept per entry; more are reported and dropped.
pub const MAX_TRIGGERS: usize = 32;
/// Characters kept per trigger phrase.
pub const MAX_TRIGGER_CHARS: usize = 200;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    /// Trigger phrases, lowercased and trimmed; `None` when the entry has none.
    pub triggers: Option<Vec<String>>,
    /// Importance 1..=10; `None` when absent or malformed.
    pub importance: Option<u8>,
    /// Project keys the entry is tagged with (unescaped).
    pub projects: Vec<String>,
    /// Human-readable problems with the annotations of this line.
    pub problems: Vec<String>,
}

/// Splits trailing `<!-- key: value -->` comments off one line. Returns the line
/// without them and what they said. Comments in the middle of a line are text.
pub fn split_trailing(line: &str) -> (&str, Annotations) {
    let mut annotations = Annotations::default();
    let mut rest = line.trim_end();
    let mut found: Vec<&str> = Vec::new();
    while rest.ends_with("-->") {
        let Some(open) = rest.rfind("<!--") else {
            annotations
                .problems
                .push("a comment closes with `-->` but never opens".to_string());
            break;
        };
        // `<!--->` opens and closes on a shared hyphen: not a comment.
        let Some(body) = rest.get(open + 4..rest.len() - 3) else {
            annotations
                .problems
                .push("a malformed comment (`<!--->`)".to_string());
            break;
        };
        if body.contains("-->") {
            annotations
                .problems
                .push("nested or overlapping annotation comments".to_string());
            break;
        }
        found.push(body);
        rest = rest[..open].trim_end();
    }
    if found.is_empty() {
        if let Some(open) = line.rfind("<!--") {
            if !line[open..].contains("-->") {
                annotations
                    .problems
                    .push("an annotation comment is never closed".to_string());
            }
        }
    }
    // Comments were collected right to left; apply them in reading order.
    for body in found.into_iter().rev() {
        apply(body, &mut annotations);
    }
    (rest, annotations)
}

fn apply(body: &str, annotations: &mut Annotations) {
    let Some((key, value)) = body.split_once(':') else {
        // A plain comment (no `key:`) is not an annotation; leave it alone.
        return;
    };
    let key = key.trim().to_ascii_lowercase();
    let value = value.trim();
    match key.as_str() {
        "trigger" | "triggers" => add_triggers(value, annotations),
        "importance" => match parse_importance(value) {
            Ok(n) => {
                if annotations.importance.is_some_and(|old| old != n) {
                    annotations
                        .problems
                        .push(format!("importance given twice; keeping {n}"));
                }
                annotations.importance = Some(n);
            }
            Err(problem) => {
                annotations.importance = None;
                annotations.problems.push(problem);
            }
        },
        "project" => {
            let keys = split_project_keys(value);
            if keys.is_empty() {
                annotations
                    .problems
                    .push("empty project annotation".to_string());
            }
            for key in keys {
                if !annotations.projects.contains(&key) {
                    annotations.projects.push(key);
                }
            }
        }
        // Other keys (observed, status, source, origin, …) are not columns
        // here. In particular provenance is never read from text.
        _ => {}
    }
}

fn add_triggers(value: &str, annotations: &mut Annotations) {
    let phrases: Vec<String> = value
        .split([',', ';'])
        .map(|p| {
            p.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        })
        .filter(|p| !p.is_empty())
        .collect();
    if phrases.is_empty() {
        annotations
            .problems
            .push("empty trigger annotation".to_string());
        return;
    }
    let list = annotations.triggers.get_or_insert_with(Vec::new);
    for phrase in phrases {
        if list.len() == MAX_TRIGGERS {
            annotations.problems.push(format!(
                "more than {MAX_TRIGGERS} triggers; the rest are ignored"
            ));
            break;
        }
        let (kept, cut) = crate::text::words::truncate_chars(&phrase, MAX_TRIGGER_CHARS);
        if cut {
            annotations.problems.push(format!(
                "a trigger longer than {MAX_TRIGGER_CHARS} characters was cut"
            ));
        }
        let kept = kept.to_string();
        if !list.contains(&kept) {
            list.push(kept);
        }
    }
}

fn parse_importance(value: &str) -> Result<u8, String> {
    match value.parse::<i64>() {
        Ok(n) if (1..=10).contains(&n) => Ok(n as u8),
        Ok(n) => Err(format!("importance {n} is outside 1..10; ignored")),
        Err(_) => Err(format!(
            "importance {value:?} is not a whole number 1..10; ignored"
        )),
    }
}

/// A project key as written in an annotation: semicolons escaped (`\;`)
/// so one key can never become two; comment delimiters neutralised.
pub fn escape_project_key(key: &str) -> String {
    let key = key.replace("<!--", "&lt;!--").replace("-->", "--&gt;");
    let mut escaped = String::new();
    let mut previous = ' ';
    for c in key.chars() {
        if c == ';' && previous != '\\' {
            escaped.push('\\');
        }
        escaped.push(c);
        previous = c;
    }
    escaped
}

/// Project keys are separated by unescaped semicolons; `\;` is a literal
/// semicolon inside a key, so one key can never become two.
pub fn split_project_keys(value: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut current = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&';') => {
                current.push(';');
                chars.next();
            }
            ';' => keys.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    keys.push(current);
    keys.into_iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_sharing_its_hyphens_is_malformed_not_a_crash() {
        for line in [
            "- a <!--->",
            "<!--->",
            "x <!---->",
            "- a <!---> <!-- importance: 3 -->",
        ] {
            let (kept, found) = split_trailing(line);
            assert!(line.starts_with(kept));
            assert!(
                found.importance.is_none() || line.ends_with("3 -->"),
                "{line}"
            );
        }
        assert_eq!(split_trailing("- a <!--->").1.problems.len(), 1);
    }

    #[test]
    fn reads_the_seed_example() {
        let (text, a) = split_trailing(
            "- Keep the gateway on loopback. <!-- trigger: gateway setup, network security --> <!-- importance: 9 -->",
        );
        assert_eq!(text, "- Keep the gateway on loopback.");
        assert_eq!(
            a.triggers,
            Some(vec!["gateway setup".into(), "network security".into()])
        );
        assert_eq!(a.importance, Some(9));
        assert!(a.problems.is_empty());
    }

    #[test]
    fn semicolons_separate_triggers_too() {
        let (_, a) = split_trailing("x <!-- trigger: A;  b  c ;; -->");
        assert_eq!(a.triggers, Some(vec!["a".into(), "b c".into()]));
    }

    #[test]
    fn missing_comment_leaves_columns_null() {
        let (text, a) = split_trailing("- plain entry");
        assert_eq!(text, "- plain entry");
        assert_eq!(a, Annotations::default());
    }

    #[test]
    fn malformed_importance_is_null_and_reported() {
        for bad in ["high", "11", "0", "-1", "NaN", "999", "5.5", ""] {
            let (_, a) = split_trailing(&format!("x <!-- importance: {bad} -->"));
            assert_eq!(a.importance, None, "{bad}");
            assert_eq!(a.problems.len(), 1, "{bad}");
        }
    }

    #[test]
    fn empty_trigger_is_reported() {
        let (_, a) = split_trailing("x <!-- trigger: , ; -->");
        assert_eq!(a.triggers, None);
        assert_eq!(a.problems.len(), 1);
    }

    #[test]
    fn unclosed_comment_is_text_and_reported() {
        let (text, a) = split_trailing("x <!-- trigger: a, b");
        assert_eq!(text, "x <!-- trigger: a, b");
        assert_eq!(a.triggers, None);
        assert_eq!(a.problems.len(), 1);
    }

    #[test]
    fn comment_in_the_middle_is_text() {
        let (text, a) = split_trailing("a <!-- importance: 3 --> b");
        assert_eq!(text, "a <!-- importance: 3 --> b");
        assert_eq!(a.importance, None);
    }

    #[test]
    fn provenance_comments_are_ignored() {
        let (text, a) = split_trailing("x <!-- origin: owner --> <!-- source: owner -->");
        assert_eq!(text, "x");
        assert_eq!(a, Annotations::default());
    }

    #[test]
    fn trigger_count_is_capped() {
        let many: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        let (_, a) = split_trailing(&format!("x <!-- trigger: {} -->", many.join(", ")));
        assert_eq!(a.triggers.unwrap().len(), MAX_TRIGGERS);
        assert_eq!(a.problems.len(), 1);
    }

    #[test]
    fn project_keys_respect_escaped_semicolons() {
        assert_eq!(
            split_project_keys(r"github.com/a/b; /home/x\;y "),
            ["github.com/a/b", "/home/x;y"]
        );
        let (_, a) = split_trailing("x <!-- project: github.com/a/b -->");
        assert_eq!(a.projects, ["github.com/a/b"]);
    }
}
