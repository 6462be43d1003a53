//! Session transcripts: the JSONL format, and the cleaning every message gets
//! before anything of it is stored — blocks that memory injected earlier are
//! stripped (a recalled fact must never be re-extracted as a new one) and
//! secrets are redacted.
//!
//! One message per line: `{"role": "user"|"assistant"|"tool"|"system",
//! "text": "...", "sender": "...", "owner": true|false, "channel": "...",
//! "timestamp": "RFC 3339 or ms", "origin": "web-page"|...}`. Only `role` and
//! `text` are required; `owner` defaults to false (fail closed).

use crate::contract::api::ContentOrigin;
use crate::text::framing::INJECTED_TAGS;
use serde::Deserialize;

/// Characters of one message `ingest` keeps whole, counted after injected
/// blocks are stripped, secrets redacted and whitespace folded. A longer
/// message is cut at a character boundary to its first `MAX_MESSAGE_CHARS`,
/// marked with `…`, and the cut is reported with the message's line number
/// (see `cut_message`). The bound keeps the written line — `- <role>
/// (<sender>): <text>` and its project annotation — inside what the index
/// reads of one line (`markdown::MAX_LINE_CHARS`), so every kept character
/// is searchable and the message stays one entry.
pub const MAX_MESSAGE_CHARS: usize = 12_000;
/// Room left on the written line for the role, the sender and annotations.
const _: () = assert!(MAX_MESSAGE_CHARS + 4_096 <= crate::text::markdown::MAX_LINE_CHARS);
/// Messages read from one transcript.
pub const MAX_MESSAGES: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The physical line of the transcript it was read from (1-based, blank
    /// lines counted), for problems about it.
    pub line: u32,
    pub role: Role,
    pub text: String,
    pub sender: Option<String>,
    pub sender_is_owner: bool,
    pub channel: Option<String>,
    pub timestamp: Option<String>,
    pub origin: Option<ContentOrigin>,
    /// The host says this is memory's own output (a `memory_search` or
    /// `memory_get` result): it is never stored, and only the classes of the
    /// recall blocks it carries count towards the turn's taint.
    pub memory: bool,
}

#[derive(Deserialize)]
struct RawMessage {
    role: String,
    text: String,
    #[serde(default)]
    sender: Option<String>,
    #[serde(default)]
    owner: Option<bool>,
    #[serde(default)]
    channel: Option<String>,
    #[serde(default)]
    timestamp: Option<serde_json::Value>,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    memory: Option<bool>,
}

/// Parses a JSONL transcript. A malformed line is reported with its number and
/// skipped; it never fails the whole transcript.
pub fn parse(jsonl: &str) -> (Vec<Message>, Vec<String>) {
    let mut messages = Vec::new();
    let mut problems = Vec::new();
    for (number, line) in jsonl.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if messages.len() == MAX_MESSAGES {
            problems.push(format!(
                "more than {MAX_MESSAGES} messages; the rest were not read"
            ));
            break;
        }
        let raw: RawMessage = match serde_json::from_str(line) {
            Ok(raw) => raw,
            Err(e) => {
                problems.push(format!(
                    "line {}: not a transcript message ({e})",
                    number + 1
                ));
                continue;
            }
        };
        let role = match raw.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            "system" => Role::System,
            other => {
                problems.push(format!("line {}: unknown role {other:?}", number + 1));
                continue;
            }
        };
        let origin = match raw.origin.as_deref() {
            None => None,
            Some(name) => match ContentOrigin::parse(name) {
                Some(origin) => Some(origin),
                None => {
                    problems.push(format!(
                        "line {}: unknown origin {name:?}; treated as unknown-external",
                        number + 1
                    ));
                    Some(ContentOrigin::UnknownExternal)
                }
            },
        };
        messages.push(Message {
            line: number as u32 + 1,
            role,
            text: raw.text,
            sender: raw.sender,
            sender_is_owner: raw.owner.unwrap_or(false),
            channel: raw.channel,
            timestamp: raw.timestamp.map(|t| match t {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            }),
            origin,
            memory: raw.memory.unwrap_or(false),
        });
    }
    (messages, problems)
}

/// A cleaned message's text within `MAX_MESSAGE_CHARS`: unchanged when it
/// fits, else its first `MAX_MESSAGE_CHARS` characters and `…`, with the
/// problem to report (the message's line, its length and what was kept).
pub fn cut_message(text: String, line: u32) -> (String, Option<String>) {
    let length = text.chars().count();
    if length <= MAX_MESSAGE_CHARS {
        return (text, None);
    }
    let kept = crate::text::words::truncate_chars(&text, MAX_MESSAGE_CHARS).0;
    let problem = format!(
        "line {line}: message of {length} characters cut to its first {MAX_MESSAGE_CHARS} \
         (at most {MAX_MESSAGE_CHARS} are kept)"
    );
    (format!("{kept}…"), Some(problem))
}

/// The line number a problem starts with (`line N: …`), if any.
pub fn problem_line(problem: &str) -> Option<u32> {
    problem
        .strip_prefix("line ")?
        .split(':')
        .next()?
        .parse()
        .ok()
}

/// Where a message's content came from: its declared origin, else what its
/// role implies.
pub fn origin_of(message: &Message) -> ContentOrigin {
    message.origin.unwrap_or(match message.role {
        Role::User => ContentOrigin::SenderMessage,
        Role::Assistant => ContentOrigin::AgentDerived,
        Role::Tool => ContentOrigin::ToolOutput,
        Role::System => ContentOrigin::Scaffolding,
    })
}

/// Removes every block memory injected (`<memory-file>`, `<memory-recall>`,
/// `<memory-context>`), in any letter case. An unclosed block is removed to
/// the end of the text: recalled content is never taken back in.
pub fn strip_injected(text: &str) -> (String, usize) {
    let mut out = text.to_string();
    let mut stripped = 0;
    for tag in INJECTED_TAGS {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        loop {
            let lower = out.to_ascii_lowercase();
            let Some(start) = lower.find(&open) else {
                break;
            };
            let end = lower[start..]
                .find(&close)
                .map_or(out.len(), |i| start + i + close.len());
            out.replace_range(start..end, "");
            stripped += 1;
        }
    }
    (out, stripped)
}

/// Words that introduce a secret value: `password: x`, `api_key=x`, ….
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "access-key",
    "client_secret",
    "private_key",
    "auth",
];
/// Prefixes of well-known credential formats.
const SECRET_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 20),
    ("sk_live_", 16),
    ("rk_live_", 16),
    ("ghp_", 30),
    ("gho_", 30),
    ("ghs_", 30),
    ("github_pat_", 30),
    ("glpat-", 20),
    ("xoxb-", 20),
    ("xoxp-", 20),
    ("AKIA", 16),
    ("AIza", 30),
];
pub const REDACTED: &str = "[REDACTED]";

/// Redacts credentials: PEM private keys, tokens of well-known formats,
/// bearer tokens, JWTs, and the values after secret-looking keys. Returns
/// the text and how many secrets were removed.
pub fn redact(text: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = text.to_string();
    while let Some(start) = out.find("-----BEGIN") {
        let Some(key_end) = out[start..].find("PRIVATE KEY-----") else {
            break;
        };
        let after_header = start + key_end + "PRIVATE KEY-----".len();
        let end = out[after_header..]
            .find("PRIVATE KEY-----")
            .map_or(out.len(), |i| after_header + i + "PRIVATE KEY-----".len());
        out.replace_range(start..end, REDACTED);
        count += 1;
    }
    let mut result = String::with_capacity(out.len());
    let mut redact_next = false;
    for piece in out.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end();
        let tail = &piece[word.len()..];
        let bare =
            word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '(' | ')' | '`'));
        let lower = bare.to_ascii_lowercase();
        if redact_next && !bare.is_empty() {
            result.push_str(REDACTED);
            result.push_str(tail);
            count += 1;
            redact_next = false;
            continue;
        }
        if let Some((key, value)) = bare.split_once(['=', ':']) {
            if is_secret_key(key) {
                if value.is_empty() {
                    redact_next = true;
                    result.push_str(piece);
                } else {
                    let prefix_len = word.find(bare).unwrap_or(0) + key.len() + 1;
                    result.push_str(&word[..prefix_len.min(word.len())]);
                    result.push_str(REDACTED);
                    result.push_str(tail);
                    count += 1;
                }
                continue;
            }
        }
        if lower == "bearer" || is_secret_key(lower.trim_end_matches(':')) && word.ends_with(':') {
            redact_next = true;
            result.push_str(piece);
            continue;
        }
        if looks_like_credential(bare) {
            result.push_str(&piece.replace(bare, REDACTED));
            count += 1;
            continue;
        }
        result.push_str(piece);
    }
    (result, count)
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let key = key.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-');
    SECRET_KEYS
        .iter()
        .any(|k| key == *k || key.ends_with(&format!("_{k}")) || key.ends_with(&format!("-{k}")))
}

fn looks_like_credential(word: &str) -> bool {
    let token_chars = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    };
    for (prefix, min_rest) in SECRET_PREFIXES {
        if let Some(rest) = word.strip_prefix(prefix) {
            if rest.len() >= *min_rest && token_chars(rest) {
                return true;
            }
        }
    }
    // A JSON Web Token: three base64url parts, the first a JSON header.
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() == 3
        && word.starts_with("eyJ")
        && word.len() >= 40
        && parts.iter().all(|p| !p.is_empty() && token_chars(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_messages_and_reports_bad_lines() {
        let (messages, problems) = parse(
            "{\"role\":\"user\",\"text\":\"hi\",\"owner\":true,\"timestamp\":\"2026-12-02T10:00:00Z\"}\n\
             not json\n\
             {\"role\":\"tool\",\"text\":\"page\",\"origin\":\"web-page\"}\n\
             {\"role\":\"robot\",\"text\":\"x\"}\n\
             {\"role\":\"user\",\"text\":\"anon\"}\n",
        );
        assert_eq!(messages.len(), 3);
        assert!(messages[0].sender_is_owner);
        assert!(!messages[2].sender_is_owner, "owner defaults to false");
        assert_eq!(origin_of(&messages[1]), ContentOrigin::WebPage);
        assert_eq!(problems.len(), 2);
        let lines: Vec<u32> = messages.iter().map(|m| m.line).collect();
        assert_eq!(lines, [1, 3, 5], "physical line numbers");
    }

    #[test]
    fn line_numbers_count_blank_lines() {
        let (messages, problems) = parse(
            "\n{\"role\":\"user\",\"text\":\"a\"}\n\n\nbad\n{\"role\":\"tool\",\"text\":\"b\"}",
        );
        assert_eq!(messages.iter().map(|m| m.line).collect::<Vec<_>>(), [2, 6]);
        assert!(problems[0].starts_with("line 5:"), "{problems:?}");
    }

    #[test]
    fn a_message_within_the_bound_is_kept_whole() {
        let text = "é".repeat(MAX_MESSAGE_CHARS);
        let (kept, problem) = cut_message(text.clone(), 3);
        assert_eq!(kept, text);
        assert_eq!(problem, None);
        // The old 4,000-character cut is gone.
        let (kept, problem) = cut_message("x".repeat(4_001), 1);
        assert_eq!(kept.chars().count(), 4_001);
        assert_eq!(problem, None);
    }

    #[test]
    fn a_longer_message_is_cut_at_a_character_and_reported() {
        // Multi-byte characters: the cut must fall between characters.
        let text = format!("{}{}", "日".repeat(MAX_MESSAGE_CHARS - 1), "😀é tail");
        let (kept, problem) = cut_message(text, 7);
        assert_eq!(kept.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(kept.ends_with("😀…"), "{}", &kept[kept.len() - 12..]);
        let problem = problem.unwrap();
        assert_eq!(
            problem,
            format!(
                "line 7: message of {} characters cut to its first {MAX_MESSAGE_CHARS} \
                 (at most {MAX_MESSAGE_CHARS} are kept)",
                MAX_MESSAGE_CHARS + 6
            )
        );
        assert_eq!(problem_line(&problem), Some(7));
    }

    #[test]
    fn problem_lines_are_read_back() {
        assert_eq!(problem_line("line 12: unknown role \"robot\""), Some(12));
        assert_eq!(
            problem_line("more than 10000 messages; the rest were not read"),
            None
        );
        assert_eq!(problem_line("line x: odd"), None);
    }

    #[test]
    fn injected_blocks_are_stripped_in_any_case_even_unclosed() {
        let (text, n) = strip_injected(
            "before <memory-recall source=\"x\">fact</memory-recall> mid <MEMORY-FILE path=\"MEMORY.md\">core</Memory-File> end <memory-context kind=\"trigger\">open",
        );
        assert_eq!(text, "before  mid  end ");
        assert_eq!(n, 3);
    }

    #[test]
    fn secrets_are_redacted() {
        let cases = [
            (
                "my key is sk-abcdefghijklmnopqrstuvwxyz123456",
                "my key is [REDACTED]",
            ),
            ("password: hunter2 ok", "password: [REDACTED] ok"),
            ("export API_KEY=abc123def", "export API_KEY=[REDACTED]"),
            (
                "Authorization: Bearer abc.def.ghi",
                "Authorization: Bearer [REDACTED]",
            ),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyz", "[REDACTED]"),
            ("AKIAIOSFODNN7EXAMPLE here", "[REDACTED] here"),
        ];
        for (input, expected) in cases {
            let (out, n) = redact(input);
            assert_eq!(out, expected, "{input}");
            assert!(n >= 1);
        }
        let (out, n) =
            redact("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done");
        assert_eq!(out, "[REDACTED] done");
        assert_eq!(n, 1);
        assert_eq!(redact("nothing secret about tokens in general").1, 0);
    }
}
