//! Markdown memory files → entries with exact line ranges.
//!
//! An entry is one list item (its own lines, without nested sub-lists) or one
//! top-level block (paragraph, block quote, code block, table), with the
//! heading path it sits under as context. Line numbers are 1-based and
//! inclusive and always point at the file on disk, so a citation `path#Lx-Ly`
//! can be opened with `memory_get`.

use crate::text::annotations::{self, Annotations};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Entries longer than this are split at line boundaries, so one giant
/// paragraph neither swamps a result budget nor hides its middle from ranking.
pub const MAX_ENTRY_CHARS: usize = 2_000;
/// Text kept from a single line; the rest of an enormous line is not indexed
/// (it is still in the file, and `memory_get` still reads it).
pub const MAX_LINE_CHARS: usize = 16_384;

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub start_line: u32,
    pub end_line: u32,
    /// Heading path, e.g. `Decisions › Network`.
    pub heading: Option<String>,
    /// The entry's source lines without annotation comments.
    pub text: String,
    pub annotations: Annotations,
}

#[derive(Debug, Default)]
pub struct ParsedFile {
    pub entries: Vec<Entry>,
    /// Problems worth telling the user, with their line numbers.
    pub problems: Vec<String>,
    pub line_count: u32,
}

/// Maps byte offsets to 1-based line numbers.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line_of(&self, offset: usize) -> u32 {
        (self.starts.partition_point(|&s| s <= offset)) as u32
    }

    /// The last line a half-open byte range touches.
    fn end_line_of(&self, start: usize, end: usize) -> u32 {
        self.line_of(end.saturating_sub(1).max(start))
    }
}

struct OpenItem {
    start_line: u32,
    /// Set when a nested list starts: the item's own lines end before it.
    own_end: Option<u32>,
}

pub fn parse(text: &str) -> ParsedFile {
    let lines: Vec<&str> = text.lines().collect();
    let index = LineIndex::new(text);
    let mut parsed = ParsedFile {
        line_count: lines.len() as u32,
        ..ParsedFile::default()
    };
    let mut headings: Vec<(u8, String)> = Vec::new();
    let mut heading_text: Option<(u8, String)> = None;
    let mut items: Vec<OpenItem> = Vec::new();
    // Depth of containers whose inner blocks belong to an enclosing entry.
    let mut quote_depth = 0usize;
    let mut ranges: Vec<(u32, u32, Option<String>)> = Vec::new();
    let mut html_block: Option<(std::ops::Range<usize>, String)> = None;
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;

    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        let inside = !items.is_empty() || quote_depth > 0;
        match event {
            Event::Start(Tag::Heading { level, .. }) if !inside => {
                heading_text = Some((level as u8, String::new()));
            }
            Event::End(TagEnd::Heading(_)) if heading_text.is_some() => {
                let (level, title) = heading_text.take().unwrap_or_default();
                headings.retain(|(l, _)| *l < level);
                let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
                if !title.is_empty() {
                    headings.push((level, title));
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, title)) = heading_text.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::Start(Tag::Item) => {
                if let Some(parent) = items.last_mut() {
                    parent
                        .own_end
                        .get_or_insert(index.line_of(range.start).saturating_sub(1));
                }
                items.push(OpenItem {
                    start_line: index.line_of(range.start),
                    own_end: None,
                });
            }
            Event::End(TagEnd::Item) => {
                if let Some(item) = items.pop() {
                    let end = item
                        .own_end
                        .unwrap_or_else(|| index.end_line_of(range.start, range.end))
                        .max(item.start_line);
                    ranges.push((item.start_line, end, heading_path(&headings)));
                }
            }
            Event::Start(Tag::BlockQuote(_)) => {
                if !inside {
                    ranges.push((
                        index.line_of(range.start),
                        index.end_line_of(range.start, range.end),
                        heading_path(&headings),
                    ));
                }
                quote_depth += 1;
            }
            Event::End(TagEnd::BlockQuote(_)) => quote_depth = quote_depth.saturating_sub(1),
            Event::Start(Tag::Paragraph | Tag::CodeBlock(_) | Tag::Table(_)) if !inside => {
                ranges.push((
                    index.line_of(range.start),
                    index.end_line_of(range.start, range.end),
                    heading_path(&headings),
                ));
            }
            Event::Start(Tag::HtmlBlock) if !inside => html_block = Some((range, String::new())),
            Event::Html(html) => {
                if let Some((_, text)) = html_block.as_mut() {
                    text.push_str(&html);
                }
            }
            Event::End(TagEnd::HtmlBlock) => {
                // Comment-only blocks are metadata (status lines), not entries.
                if let Some((block, text)) = html_block.take() {
                    if !is_only_comments(&text) {
                        ranges.push((
                            index.line_of(block.start),
                            index.end_line_of(block.start, block.end),
                            heading_path(&headings),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    // Items close inner-first; report entries in file order.
    ranges.sort_by_key(|&(start, end, _)| (start, end));
    ranges.dedup_by_key(|&mut (start, _, _)| start);
    for (start, end, heading) in ranges {
        push_entries(&lines, start, end, heading, &mut parsed);
    }
    parsed
}

fn heading_path(headings: &[(u8, String)]) -> Option<String> {
    if headings.is_empty() {
        None
    } else {
        Some(
            headings
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join(" › "),
        )
    }
}

fn is_only_comments(html: &str) -> bool {
    let mut rest = html.trim();
    while let Some(after) = rest.strip_prefix("<!--") {
        match after.find("-->") {
            Some(end) => rest = after[end + 3..].trim_start(),
            None => return false,
        }
    }
    rest.is_empty()
}

/// Turns one block's line range into one or more entries (split when long),
/// stripping annotations line by line.
fn push_entries(
    lines: &[&str],
    start: u32,
    end: u32,
    heading: Option<String>,
    parsed: &mut ParsedFile,
) {
    // Block ranges from the parser include the blank line after a list
    // item; a citation must name the entry's own lines only.
    let mut end = end.min(lines.len() as u32);
    while end > start && lines[(end - 1) as usize].trim().is_empty() {
        end -= 1;
    }
    let mut piece = Piece::new(start);
    for number in start..=end {
        let raw = lines[(number - 1) as usize];
        let (line, cut) = crate::text::words::truncate_chars(raw, MAX_LINE_CHARS);
        if cut {
            parsed.problems.push(format!(
                "line {number}: longer than {MAX_LINE_CHARS} characters; only the start is indexed"
            ));
        }
        let (body, found) = annotations::split_trailing(line);
        for problem in &found.problems {
            parsed.problems.push(format!("line {number}: {problem}"));
        }
        if !piece.text.is_empty() && piece.chars + body.chars().count() > MAX_ENTRY_CHARS {
            piece.finish(number - 1, &heading, parsed);
            piece = Piece::new(number);
        }
        piece.add(body, found);
    }
    piece.finish(end, &heading, parsed);
}

struct Piece {
    start: u32,
    text: String,
    chars: usize,
    annotations: Annotations,
}

impl Piece {
    fn new(start: u32) -> Self {
        Piece {
            start,
            text: String::new(),
            chars: 0,
            annotations: Annotations::default(),
        }
    }

    fn add(&mut self, body: &str, found: Annotations) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(body);
        self.chars += body.chars().count() + 1;
        if let Some(triggers) = found.triggers {
            let list = self.annotations.triggers.get_or_insert_with(Vec::new);
            for t in triggers {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }
        if found.importance.is_some() {
            self.annotations.importance = found.importance;
        }
        for p in found.projects {
            if !self.annotations.projects.contains(&p) {
                self.annotations.projects.push(p);
            }
        }
    }

    fn finish(self, end: u32, heading: &Option<String>, parsed: &mut ParsedFile) {
        if self.text.trim().is_empty() || end < self.start {
            return;
        }
        parsed.entries.push(Entry {
            start_line: self.start,
            end_line: end,
            heading: heading.clone(),
            text: self.text,
            annotations: self.annotations,
        });
    }
}

/// Overlapping windows of whole lines, about `max_chars` long with about
/// `overlap_chars` shared between neighbours, over the non-blank lines.
/// Returned as inclusive 1-based line ranges.
pub fn windows(lines: &[&str], max_chars: usize, overlap_chars: usize) -> Vec<(u32, u32)> {
    let max_chars = max_chars.max(1);
    let overlap_chars = overlap_chars.min(max_chars / 2);
    let sizes: Vec<usize> = lines.iter().map(|l| l.chars().count() + 1).collect();
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < lines.len() {
        if lines[start].trim().is_empty() {
            start += 1;
            continue;
        }
        let mut end = start;
        let mut total = sizes[start];
        while end + 1 < lines.len() && total + sizes[end + 1] <= max_chars {
            end += 1;
            total += sizes[end];
        }
        out.push((start as u32 + 1, end as u32 + 1));
        if end + 1 >= lines.len() {
            break;
        }
        // Step back over whole lines worth about `overlap_chars`.
        let mut next = end + 1;
        let mut shared = 0usize;
        while next > start + 1 && shared + sizes[next - 1] <= overlap_chars {
            next -= 1;
            shared += sizes[next];
        }
        start = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(u32, u32, Option<String>, String)> {
        parse(text)
            .entries
            .into_iter()
            .map(|e| (e.start_line, e.end_line, e.heading, e.text))
            .collect()
    }

    #[test]
    fn list_items_and_paragraphs_get_exact_lines_and_headings() {
        let text = "# Decisions\n\nIntro paragraph\nstill intro.\n\n## Network\n\n- Keep the gateway on loopback.\n- Use port 8080\n  for the admin UI.\n";
        let got = spans(text);
        assert_eq!(
            got,
            vec![
                (
                    3,
                    4,
                    Some("Decisions".into()),
                    "Intro paragraph\nstill intro.".into()
                ),
                (
                    8,
                    8,
                    Some("Decisions › Network".into()),
                    "- Keep the gateway on loopback.".into()
                ),
                (
                    9,
                    10,
                    Some("Decisions › Network".into()),
                    "- Use port 8080\n  for the admin UI.".into()
                ),
            ]
        );
    }

    #[test]
    fn ranges_exclude_the_blank_lines_after_items() {
        let got = spans("- one\n\n- two\n\nafter\n");
        let ranges: Vec<(u32, u32)> = got.iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(ranges, vec![(1, 1), (3, 3), (5, 5)]);
        assert_eq!(got[0].3, "- one");
    }

    #[test]
    fn nested_items_are_their_own_entries() {
        let got = spans("- parent\n  - child one\n  - child two\n- next\n");
        let ranges: Vec<(u32, u32)> = got.iter().map(|e| (e.0, e.1)).collect();
        assert_eq!(ranges, vec![(1, 1), (2, 2), (3, 3), (4, 4)]);
    }

    #[test]
    fn annotations_become_columns_and_leave_the_text() {
        let parsed = parse("- Keep it. <!-- trigger: gateway --> <!-- importance: 9 -->\n- Bad. <!-- importance: eleven -->\n");
        assert_eq!(parsed.entries[0].text, "- Keep it.");
        assert_eq!(parsed.entries[0].annotations.importance, Some(9));
        assert_eq!(parsed.entries[1].annotations.importance, None);
        assert_eq!(parsed.problems.len(), 1);
        assert!(parsed.problems[0].starts_with("line 2:"));
    }

    #[test]
    fn status_comment_lines_are_not_entries() {
        let got =
            spans("<!-- observed: 2026-01-02 | status: active -->\n- Always answer in English.\n");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 2);
    }

    #[test]
    fn crlf_and_code_blocks() {
        let got = spans("Para one\r\n\r\n```\ncode line\n```\n");
        assert_eq!(
            got.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
            vec![(1, 1), (3, 5)]
        );
    }

    #[test]
    fn long_entries_split_on_line_boundaries() {
        let line = "word ".repeat(100);
        let text: String = (0..30).map(|_| format!("{line}\n")).collect();
        let parsed = parse(&text);
        assert!(parsed.entries.len() > 1);
        assert_eq!(parsed.entries[0].start_line, 1);
        assert_eq!(parsed.entries.last().unwrap().end_line, 30);
        for pair in parsed.entries.windows(2) {
            assert_eq!(pair[0].end_line + 1, pair[1].start_line);
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let text = ">".repeat(100_000) + " deep\n";
        let parsed = parse(&text);
        assert_eq!(parsed.entries.len(), 1);
        let list: String = (0..2_000)
            .map(|i| format!("{}- x\n", "  ".repeat(i)))
            .collect();
        assert!(!parse(&list).entries.is_empty());
    }

    #[test]
    fn windows_overlap_and_cover_everything() {
        let lines: Vec<String> = (0..50)
            .map(|i| format!("line number {i:02} with some words"))
            .collect();
        let refs: Vec<&str> = lines.iter().map(|s| s.as_str()).collect();
        let w = windows(&refs, 400, 80);
        assert_eq!(w.first().unwrap().0, 1);
        assert_eq!(w.last().unwrap().1, 50);
        for pair in w.windows(2) {
            assert!(pair[1].0 <= pair[0].1, "windows overlap: {pair:?}");
            assert!(pair[1].0 > pair[0].0, "windows advance: {pair:?}");
        }
    }
}
