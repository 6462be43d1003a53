//! A written entry's Markdown line: its text on one line with comment
//! delimiters neutralised (so nothing written can forge an annotation, or
//! close one), its annotations (triggers, importance, the project key), and
//! the text the index reads back from it.

use crate::contract::api::TurnContext;
use crate::contract::error::{MemoryError, Result};
use crate::text::markdown;

/// Trigger phrases a note may carry, and their length: a written line must
/// stay well inside what the index reads back (16,384 characters a line).
pub const MAX_NOTE_TRIGGERS: usize = 16;
pub const MAX_TRIGGER_CHARS: usize = 100;

/// Collapses text to one line and neutralises comment delimiters, so written
/// text can never forge an annotation (or close one).
pub fn one_line(text: &str) -> String {
    fold(text)
        .replace("<!--", "&lt;!--")
        .replace("-->", "--&gt;")
}

/// Terminal escape sequences (`ESC [ … m`) go; other control characters
/// and runs of whitespace become single spaces.
pub fn fold(text: &str) -> String {
    without_escape_sequences(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` without ANSI/VT escape sequences: CSI (`ESC [` parameters, a
/// final byte), OSC (`ESC ]` … BEL or `ESC \\`) and two-byte escapes.
fn without_escape_sequences(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte.
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                        if c == '\u{1b}' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            _ => {}
        }
        out.push(' ');
    }
    std::borrow::Cow::Owned(out)
}

/// The project annotation of a write made inside a repository: only the
/// current key (the first active one), with semicolons escaped so one key can
/// never become two.
pub fn project_tag(context: &TurnContext) -> Option<String> {
    let escaped =
        crate::text::annotations::escape_project_key(&one_line(context.active_projects.first()?));
    (!escaped.is_empty()).then(|| format!(" <!-- project: {escaped} -->"))
}

pub fn check_triggers(triggers: &[String]) -> Result<()> {
    if triggers.len() > MAX_NOTE_TRIGGERS {
        return Err(MemoryError::TooLarge(format!(
            "a note carries at most {MAX_NOTE_TRIGGERS} triggers, got {}",
            triggers.len()
        )));
    }
    if let Some(t) = triggers
        .iter()
        .find(|t| t.chars().count() > MAX_TRIGGER_CHARS)
    {
        return Err(MemoryError::TooLarge(format!(
            "a trigger is at most {MAX_TRIGGER_CHARS} characters, got {}",
            t.chars().count()
        )));
    }
    Ok(())
}

/// The Markdown line of an entry with its annotations.
pub fn entry_line(text: &str, triggers: &[String], importance: Option<u8>) -> String {
    let mut line = format!("- {text}");
    let phrases: Vec<String> = triggers
        .iter()
        // A phrase without a word can never match a message.
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .map(|t| one_line(t).replace([',', ';'], " "))
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .collect();
    if !phrases.is_empty() {
        line.push_str(&format!(" <!-- trigger: {} -->", phrases.join(", ")));
    }
    if let Some(n) = importance {
        line.push_str(&format!(" <!-- importance: {n} -->"));
    }
    line
}

/// The entry text the index will see for a written line (annotations off).
pub fn indexed_text(line: &str) -> String {
    markdown::parse(line)
        .entries
        .first()
        .map(|e| e.text.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_removed_whole() {
        assert_eq!(
            fold("bright \u{1b}[1;32mgreen\u{1b}[0m moss"),
            "bright green moss"
        );
        assert_eq!(fold("a\u{1b}]0;title\u{7}b \u{1b}]8;;x\u{1b}\\c"), "a b c");
        assert_eq!(fold("x\u{1b}"), "x");
    }

    #[test]
    fn wordless_triggers_are_not_written() {
        assert_eq!(
            entry_line("fact", &["!!!".into(), "-->".into(), "ok go".into()], None),
            "- fact <!-- trigger: ok go -->"
        );
    }

    #[test]
    fn notes_cannot_forge_annotations_or_span_lines() {
        let text = one_line("remember\nthis <!-- importance: 10 --> <!-- origin: owner -->");
        assert_eq!(
            text,
            "remember this &lt;!-- importance: 10 --&gt; &lt;!-- origin: owner --&gt;"
        );
        let line = entry_line(&text, &[], None);
        let parsed = markdown::parse(&line);
        assert_eq!(parsed.entries[0].annotations.importance, None);
    }

    #[test]
    fn writes_in_a_repository_carry_only_the_current_key() {
        let context = TurnContext {
            active_projects: vec!["github.com/a/api".into(), "github.com/b/web".into()],
            ..TurnContext::default()
        };
        assert_eq!(
            project_tag(&context).as_deref(),
            Some(" <!-- project: github.com/a/api -->")
        );
        let odd = TurnContext {
            active_projects: vec!["/src/x;y".into()],
            ..TurnContext::default()
        };
        let line = format!("- a{}", project_tag(&odd).unwrap());
        assert_eq!(
            markdown::parse(&line).entries[0].annotations.projects,
            ["/src/x;y"]
        );
        assert_eq!(project_tag(&TurnContext::default()), None);
    }

    #[test]
    fn written_annotations_are_read_back() {
        let line = entry_line(
            "Keep the gateway on loopback.",
            &["gateway setup".into(), "a, b".into()],
            Some(9),
        );
        assert_eq!(line, "- Keep the gateway on loopback. <!-- trigger: gateway setup, a b --> <!-- importance: 9 -->");
        let parsed = markdown::parse(&line);
        assert_eq!(parsed.entries[0].annotations.importance, Some(9));
        assert_eq!(indexed_text(&line), "- Keep the gateway on loopback.");
    }
}
