//! Words: the tokenizer, stop words and light stemmer shared by query building
//! and lexical scoring, so that what a query asks for and what an entry is
//! credited with are measured the same way.

/// English function words that carry no topic. Removing them keeps ordinary
/// questions ("what did we decide about the gateway?") from matching on "what"
/// and "the" alone.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The words of a text: runs of letters and digits. An apostrophe inside a
/// word splits it ("don't" → "don", "t"), as SQLite's unicode61 tokenizer
/// does, so both sides agree on what a word is (and on a text's length in
/// tokens, which `memory_bm25` reads from a chunk's id).
pub fn words(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
}

/// Lowercase word tokens (see `words`).
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).map(|word| word.to_lowercase())
}

pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.binary_search(&token).is_ok()
}

/// A deliberately light stemmer (plural and common verb endings) for
/// dreaming's pure logic: query keys (kept in the ledger, so they must not
/// change under recorded recalls) and the words a consolidation may use.
/// Search scores coverage with the index's own Porter stems instead
/// (`storage::index::stems`). This one only has to make "decided"/"decide"
/// and "servers"/"server" meet.
pub fn stem(token: &str) -> String {
    let len = token.chars().count();
    if len <= 3 || !token.is_ascii() {
        return token.to_string();
    }
    for (suffix, keep) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("edly", ""),
        ("ed", ""),
        ("ly", ""),
        ("es", ""),
        ("s", ""),
    ] {
        if let Some(base) = token.strip_suffix(suffix) {
            if base.len() >= 3 && !(suffix == "s" && base.ends_with('s')) {
                let mut stemmed = format!("{base}{keep}");
                // "decided" → "decid", "decide" → "decid": drop a final e so both meet.
                if stemmed.ends_with('e') && stemmed.len() > 3 {
                    stemmed.pop();
                }
                return stemmed;
            }
        }
    }
    let mut stemmed = token.to_string();
    if stemmed.ends_with('e') {
        stemmed.pop();
    }
    stemmed
}

/// The distinct content words of a query, in order of first appearance,
/// stemmed. Stop words are dropped unless nothing else is left, so a query made
/// only of function words still searches for them.
pub fn query_terms(query: &str, limit: usize) -> Vec<String> {
    let all: Vec<String> = tokens(query).collect();
    let content: Vec<&String> = all.iter().filter(|t| !is_stop_word(t)).collect();
    let chosen: Vec<&String> = if content.is_empty() {
        all.iter().collect()
    } else {
        content
    };
    let mut terms: Vec<String> = Vec::new();
    for token in chosen {
        if !terms.contains(token) {
            terms.push(token.clone());
        }
        if terms.len() == limit {
            break;
        }
    }
    terms
}

/// The stemmed content-word set of a text (with `stem`), for dreaming.
pub fn stem_set(text: &str) -> std::collections::HashSet<String> {
    tokens(text)
        .filter(|t| !is_stop_word(t))
        .map(|t| stem(&t))
        .collect()
}

/// A line without its list marker (`- `, `* `, `+ `) and task box.
pub fn strip_list_marker(line: &str) -> &str {
    let t = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
        .unwrap_or(line);
    t.strip_prefix("[ ] ")
        .or_else(|| t.strip_prefix("[x] "))
        .unwrap_or(t)
}

/// Cuts `text` to at most `max_chars` characters on a character boundary.
pub fn truncate_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => (&text[..byte], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_of_letters_and_digits() {
        assert_eq!(words("Ticket OPS-4773, don't panic!").count(), 6);
        assert_eq!(words("  ").count(), 0);
        assert_eq!(words("Zoë über 3,5 km").count(), 5);
    }

    #[test]
    fn stop_word_list_is_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn tokens_are_lowercase_alphanumeric_runs() {
        let got: Vec<String> = tokens("Keep the Gateway on 127.0.0.1, don't!").collect();
        assert_eq!(
            got,
            ["keep", "the", "gateway", "on", "127", "0", "0", "1", "don", "t"]
        );
    }

    #[test]
    fn query_terms_drop_stop_words_and_duplicates() {
        assert_eq!(
            query_terms("What did we decide about the gateway? The GATEWAY!", 64),
            ["decide", "gateway"]
        );
    }

    #[test]
    fn query_of_only_stop_words_keeps_them() {
        assert_eq!(query_terms("what is it", 64), ["what", "is", "it"]);
    }

    #[test]
    fn query_terms_ignore_fts_and_sql_syntax() {
        assert_eq!(
            query_terms("\"gateway\" OR NEAR(x y) ; DROP TABLE chunks; --", 64),
            ["gateway", "near", "x", "y", "drop", "table", "chunks"]
        );
    }

    #[test]
    fn stemming_meets_common_variants() {
        assert_eq!(stem("decided"), stem("decide"));
        assert_eq!(stem("servers"), stem("server"));
        assert_eq!(stem("running"), "runn");
        assert_eq!(stem("policies"), "policy");
        assert_eq!(stem("glass"), "glass");
        assert_eq!(stem("gas"), "gas");
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé", true));
        assert_eq!(truncate_chars("hé", 5), ("hé", false));
    }
}
