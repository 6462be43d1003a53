//! What is never promoted into the curated core, whatever its signals: the
//! junk OpenClaw's users found in their `MEMORY.md` (shell commands, half
//! sentences, score metadata) and memory's own scaffolding. Pure functions.

/// Longest entry promoted: the curated core holds compact facts.
pub const MAX_PROMOTED_CHARS: usize = 600;

/// Commands that start a shell line.
const SHELL_COMMANDS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "cargo",
    "cat",
    "cd",
    "chmod",
    "chown",
    "cp",
    "curl",
    "docker",
    "echo",
    "export",
    "find",
    "git",
    "go",
    "grep",
    "kill",
    "kubectl",
    "ln",
    "ls",
    "make",
    "mkdir",
    "mv",
    "node",
    "npm",
    "npx",
    "pip",
    "pip3",
    "pnpm",
    "python",
    "python3",
    "rm",
    "rustup",
    "scp",
    "sed",
    "ssh",
    "sudo",
    "systemctl",
    "tail",
    "tar",
    "touch",
    "wget",
    "yarn",
];

/// Words a complete sentence does not end on.
const DANGLING_ENDINGS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "because", "but", "by", "can", "for",
    "from", "if", "in", "into", "is", "my", "of", "on", "or", "our", "so", "than", "that", "the",
    "their", "then", "to", "via", "was", "were", "when", "which", "while", "will", "with", "your",
];

/// Why an entry is junk, or `None` when it may be promoted.
pub fn junk_reason(text: &str) -> Option<&'static str> {
    let trimmed = strip_list_marker(text.trim());
    if trimmed.is_empty() {
        return Some("empty");
    }
    if trimmed.chars().count() > MAX_PROMOTED_CHARS {
        return Some("longer than 600 characters: not a compact fact");
    }
    let lower = trimmed.to_lowercase();
    if [
        "<memory-recall",
        "<memory-context",
        "</memory-",
        "memory-core:",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Some("memory's own injected or managed text");
    }
    if is_score_metadata(&lower) {
        return Some("score metadata");
    }
    if looks_like_shell(trimmed) {
        return Some("a shell command");
    }
    if trimmed.starts_with("```")
        || trimmed.starts_with('{')
        || trimmed.starts_with('[') && trimmed.ends_with(']')
    {
        return Some("code or data, not a sentence");
    }
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let letters = trimmed.chars().filter(|c| c.is_alphabetic()).count();
    let spaced_script = trimmed
        .chars()
        .filter(|c| c.is_alphabetic())
        .all(|c| c.is_ascii() || !is_cjk(c));
    if letters * 2 < trimmed.chars().filter(|c| !c.is_whitespace()).count() {
        return Some("mostly symbols or numbers");
    }
    if spaced_script && words.len() < 3 {
        return Some("a half sentence (fewer than three words)");
    }
    if spaced_script {
        let last = words
            .last()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .unwrap_or_default();
        let ends_open = trimmed.ends_with([',', ':', ';', '-', '(', '/', '&']);
        if trimmed.ends_with("...") || trimmed.ends_with('…') {
            return Some("a half sentence (it trails off)");
        }
        if ends_open || DANGLING_ENDINGS.contains(&last.as_str()) {
            return Some("a half sentence (it breaks off)");
        }
    }
    if is_transcript_line(&lower) {
        return Some("a transcript line, not a fact");
    }
    None
}

/// `user: …`, `assistant: …`, `tool (ci): …`: a transcript line whose
/// speaker memory did not record (a hand-made copy); recorded ones reach
/// the gate without their prefix.
fn is_transcript_line(lower: &str) -> bool {
    ["user", "assistant", "system", "tool"].iter().any(|role| {
        lower.strip_prefix(role).is_some_and(|rest| {
            rest.starts_with(':')
                || rest
                    .strip_prefix(" (")
                    .and_then(|r| r.split_once("):"))
                    .is_some_and(|(sender, _)| !sender.contains(' ') || sender.len() <= 40)
        })
    })
}

fn strip_list_marker(text: &str) -> &str {
    crate::text::words::strip_list_marker(text).trim()
}

/// `[score=0.81 recalls=4 …]`, `relevance: 0.7`, `Source: …#L3-L4` alone.
fn is_score_metadata(lower: &str) -> bool {
    let markers = [
        "score=",
        "score:",
        "recalls=",
        "recalls:",
        "relevance=",
        "relevance:",
        "confidence=",
        "confidence:",
        "avg=",
    ];
    let hits = markers.iter().filter(|m| lower.contains(*m)).count();
    let numeric_after = markers.iter().any(|m| {
        lower
            .split(m)
            .skip(1)
            .any(|rest| rest.trim_start().starts_with(|c: char| c.is_ascii_digit()))
    });
    (numeric_after && (hits >= 2 || lower.trim_start().starts_with('[')))
        || (lower.starts_with("source:") && lower.contains("#l"))
}

fn looks_like_shell(text: &str) -> bool {
    if text.starts_with("$ ")
        || text.starts_with("# ") && text.contains(" --")
        || text.starts_with("> $")
    {
        return true;
    }
    let unticked = text.trim_matches('`');
    let first = unticked.split_whitespace().next().unwrap_or("");
    if !SHELL_COMMANDS.contains(&first) {
        return false;
    }
    // "Git is how we ship" is prose; "git push --force origin main" is not.
    let rest: Vec<&str> = unticked.split_whitespace().skip(1).collect();
    let shell_like = rest.iter().any(|w| {
        w.starts_with('-')
            || w.contains('/')
            || w.contains('=')
            || *w == "|"
            || *w == "&&"
            || w.starts_with('~')
    });
    let prose_like = unticked.ends_with('.') && rest.len() >= 4 && !shell_like;
    !prose_like && (shell_like || rest.len() <= 3 || text.starts_with('`'))
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_pass() {
        for fact in [
            "- The gateway listens on port 8443 behind the VPN.",
            "The owner prefers short answers in the morning",
            "Git is how the team ships every Friday afternoon.",
            "- 网关监听在 8443 端口",
            "Deploys go through the staging cluster first; production needs a review.",
        ] {
            assert_eq!(junk_reason(fact), None, "{fact}");
        }
    }

    #[test]
    fn junk_is_named() {
        let cases = [
            ("- $ cargo build --release", "a shell command"),
            ("git push --force origin main", "a shell command"),
            ("`ls -la ~/work`", "a shell command"),
            ("sudo systemctl restart gateway", "a shell command"),
            ("- and then the", "a half sentence (it breaks off)"),
            ("- The gateway port is", "a half sentence (it breaks off)"),
            (
                "- the deploy failed because,",
                "a half sentence (it breaks off)",
            ),
            ("- port 8443", "a half sentence (fewer than three words)"),
            (
                "- [score=0.812 recalls=4 avg=0.700 source=memory/2026-11-30.md:3-3]",
                "score metadata",
            ),
            (
                "relevance: 0.71 score: 0.80 for the gateway entry",
                "score metadata",
            ),
            ("Source: memory/2026-11-30.md#L3-L3", "score metadata"),
            (
                "<memory-recall source=\"x\">the gateway</memory-recall>",
                "memory's own injected or managed text",
            ),
            (
                "{\"port\": 8443, \"host\": \"gw\"}",
                "code or data, not a sentence",
            ),
            (
                "- 8443 / 9000 / 10.0.0.1 / 443",
                "mostly symbols or numbers",
            ),
            (
                "user: what was the gateway port again?",
                "a transcript line, not a fact",
            ),
            (
                "- user (dana): the build is broken again",
                "a transcript line, not a fact",
            ),
            (
                "assistant (bot): Clear the cache and rebuild.",
                "a transcript line, not a fact",
            ),
            (
                "The plan is to migrate the gateway and then...",
                "a half sentence (it trails off)",
            ),
        ];
        for (text, why) in cases {
            assert_eq!(junk_reason(text), Some(why), "{text}");
        }
        assert_eq!(
            junk_reason(&"word ".repeat(200)),
            Some("longer than 600 characters: not a compact fact")
        );
    }
}
