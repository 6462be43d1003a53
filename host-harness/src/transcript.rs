//! Reading a transcript file for `ingest` and `flush`. The component takes
//! the transcript as text (a WIT `string`), so a file holding bytes that are
//! not UTF-8 cannot be passed as it is. One bad byte must not cost the whole
//! transcript: each line is decoded on its own, a line that is not UTF-8 is
//! passed as an empty line (the component skips blank lines, so every other
//! line keeps its number) and reported by the host in the form of the
//! component's own problems (`line N: not a transcript message (…)`).

use memory_core::text::transcript::problem_line;

/// The transcript as the component should see it, and the lines the host
/// could not decode, as problems.
pub fn decode(bytes: &[u8]) -> (String, Vec<String>) {
    let mut text = String::with_capacity(bytes.len());
    let mut problems = Vec::new();
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if n > 0 {
            text.push('\n');
        }
        match std::str::from_utf8(line) {
            Ok(line) => text.push_str(line),
            Err(e) => problems.push(format!(
                "line {}: not a transcript message (invalid UTF-8 at byte {} of the line); skipped",
                n + 1,
                e.valid_up_to() + 1
            )),
        }
    }
    (text, problems)
}

/// The component's problems and the host's in one list, by line number
/// (stable: problems of one line keep their order, the component's first;
/// problems without a line number come last).
pub fn merge_problems(component: Vec<String>, host: Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = component.into_iter().chain(host).collect();
    all.sort_by_key(|p| problem_line(p).unwrap_or(u32::MAX));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_transcript_is_passed_byte_for_byte() {
        for text in [
            "",
            "\n",
            "{\"role\":\"user\",\"text\":\"é\"}\r\n{\"role\":\"tool\",\"text\":\"x\"}",
            "a\n\nb\n",
        ] {
            assert_eq!(decode(text.as_bytes()), (text.to_string(), Vec::new()));
        }
    }

    #[test]
    fn an_invalid_line_becomes_blank_and_is_reported_by_number() {
        let bytes = b"{\"text\":\"one\"}\n{\"text\":\"t\xffo\"}\n\n{\"text\":\"\xc3\"}\r\n{\"text\":\"four\"}\n";
        let (text, problems) = decode(bytes);
        assert_eq!(text, "{\"text\":\"one\"}\n\n\n\n{\"text\":\"four\"}\n");
        assert_eq!(text.lines().count(), 5, "every line keeps its number");
        assert_eq!(
            problems,
            [
                "line 2: not a transcript message (invalid UTF-8 at byte 11 of the line); skipped",
                "line 4: not a transcript message (invalid UTF-8 at byte 10 of the line); skipped",
            ]
        );
    }

    #[test]
    fn problems_are_merged_in_line_order() {
        let merged = merge_problems(
            vec![
                "line 1: unknown role \"robot\"".into(),
                "line 5: not a transcript message (EOF)".into(),
                "more than 10000 messages; the rest were not read".into(),
            ],
            vec![
                "line 3: not a transcript message (invalid UTF-8 at byte 1 of the line); skipped"
                    .into(),
                "line 12: not a transcript message (invalid UTF-8 at byte 2 of the line); skipped"
                    .into(),
            ],
        );
        let lines: Vec<Option<u32>> = merged.iter().map(|p| problem_line(p)).collect();
        assert_eq!(lines, [Some(1), Some(3), Some(5), Some(12), None]);
    }
}
