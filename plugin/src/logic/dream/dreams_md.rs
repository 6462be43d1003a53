//! `DREAMS.md`, the review surface: the light and REM phases' managed blocks
//! (replaced in place; everything a person wrote around them stays) and the
//! deep phase's sweep summaries (appended). Pure functions.

/// The text of a managed block's markers.
fn markers(phase: &str) -> (String, String) {
    (
        format!("<!-- memory-core:{phase}:start -->"),
        format!("<!-- memory-core:{phase}:end -->"),
    )
}

pub const HEADER: &str = "# Dreams\n\nWhat dreaming noticed and what it promoted into MEMORY.md. The blocks between\n`memory-core` markers are rewritten by each sweep; anything else here is yours.\n";

/// Replaces the phase's block (heading, markers and body), or adds it after
/// the other managed blocks when it is not there yet.
pub fn with_block(file: &str, phase: &str, heading: &str, body: &str) -> String {
    let (start, end) = markers(phase);
    let block = format!("{heading}\n{start}\n{}{end}\n", ensure_newline(body));
    let base = if file.trim().is_empty() {
        HEADER.to_string()
    } else {
        file.to_string()
    };
    if let (Some(s), Some(e)) = (base.find(&start), base.find(&end)) {
        if s < e {
            // Take the heading line just before the start marker with it.
            let before = &base[..s];
            let heading_start = before
                .trim_end_matches('\n')
                .rfind('\n')
                .map_or(0, |i| i + 1);
            let cut_from = if before[heading_start..].trim() == heading {
                heading_start
            } else {
                s
            };
            let after_end = e + end.len();
            let rest = base[after_end..]
                .strip_prefix('\n')
                .unwrap_or(&base[after_end..]);
            let block = if cut_from == s {
                format!("{start}\n{}{end}\n", ensure_newline(body))
            } else {
                block
            };
            return format!("{}{block}{rest}", &base[..cut_from]);
        }
    }
    // New: after the last managed block, or after the header.
    let insert_at = ["light", "rem"]
        .iter()
        .filter_map(|p| {
            let (_, e) = markers(p);
            base.find(&e).map(|i| i + e.len() + 1)
        })
        .max()
        .filter(|&i| i <= base.len());
    match insert_at {
        Some(i) => format!("{}\n{block}{}", &base[..i], &base[i..]),
        None => format!("{}\n{block}", ensure_newline(&base)),
    }
}

/// Appends a sweep summary at the end.
pub fn with_summary(file: &str, summary: &str) -> String {
    let base = if file.trim().is_empty() {
        HEADER.to_string()
    } else {
        file.to_string()
    };
    format!("{}\n{}", ensure_newline(&base), ensure_newline(summary))
}

fn ensure_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// Text shown in `DREAMS.md`: one line, no comment delimiters, cut short.
pub fn shown(text: &str, max_chars: usize) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let folded = folded.replace("<!--", "&lt;!--").replace("-->", "--&gt;");
    match crate::text::words::truncate_chars(&folded, max_chars) {
        (cut, true) => format!("{cut}…"),
        (all, false) => all.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_added_then_replaced_in_place() {
        let one = with_block("", "light", "## Light Sleep", "- a\n");
        assert!(one.starts_with(HEADER));
        assert!(one.ends_with("## Light Sleep\n<!-- memory-core:light:start -->\n- a\n<!-- memory-core:light:end -->\n"));
        let two = with_block(&one, "rem", "## REM Sleep", "- theme\n");
        let mine = format!("{two}\nMy own note.\n");
        let three = with_block(&mine, "light", "## Light Sleep", "- b\n");
        assert!(three.contains("- b\n<!-- memory-core:light:end -->"));
        assert!(!three.contains("- a\n"));
        assert!(three.contains("- theme\n") && three.ends_with("My own note.\n"));
        assert_eq!(three.matches("## Light Sleep").count(), 1);
        assert_eq!(
            with_block(&three, "light", "## Light Sleep", "- b\n"),
            three,
            "same body, same file"
        );
    }

    #[test]
    fn summaries_append() {
        let f = with_summary("# Dreams\n", "### Sweep 1\n- added 1");
        assert_eq!(f, "# Dreams\n\n### Sweep 1\n- added 1\n");
    }

    #[test]
    fn shown_text_cannot_open_comments() {
        assert_eq!(shown("a <!-- b -->\n c", 100), "a &lt;!-- b --&gt; c");
        assert_eq!(shown("abcdef", 3), "abc…");
    }
}
