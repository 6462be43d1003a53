//! From recorded recalls to candidates: rehydration against the live file and
//! near-duplicate grouping. Pure functions.

use std::collections::HashSet;

/// Near-duplicates: word-set Jaccard similarity at or above this (reference).
pub const NEAR_DUPLICATE_JACCARD: f32 = 0.9;

/// An entry of a live file.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveEntry<'a> {
    pub start_line: u32,
    pub end_line: u32,
    pub text: &'a str,
}

/// Where a recorded entry is now.
#[derive(Debug, Clone, PartialEq)]
pub enum Rehydrated {
    /// Found (possibly moved): the live entry's index.
    Found(usize),
    /// The file no longer holds it.
    Changed,
}

/// Finds the recorded entry in the live file: the same text first, then the
/// same text up to whitespace, list markers, case and a heading the snippet
/// was stored with; the nearest to its old line wins among equals.
pub fn rehydrate(
    recorded: &str,
    heading: Option<&str>,
    old_start: u32,
    live: &[LiveEntry<'_>],
) -> Rehydrated {
    // The common case, an unchanged entry, needs no normalising.
    let exact = live
        .iter()
        .enumerate()
        .filter(|(_, e)| e.text == recorded)
        .min_by_key(|(_, e)| e.start_line.abs_diff(old_start));
    if let Some((i, _)) = exact {
        return Rehydrated::Found(i);
    }
    let wanted = normalized(recorded);
    let without_heading = heading.map(|h| strip_heading_prefix(&wanted, &normalized(h)));
    let mut best: Option<(u8, u32, usize)> = None;
    for (i, entry) in live.iter().enumerate() {
        let have = normalized(entry.text);
        if have.is_empty() {
            continue;
        }
        let quality = if have == wanted || without_heading.as_deref() == Some(have.as_str()) {
            2
        } else if wanted.ends_with(&have) && have.split(' ').count() >= 3 {
            // A heading-prefixed snippet (`Heading: text`, `## Heading text`).
            1
        } else {
            continue;
        };
        let distance = entry.start_line.abs_diff(old_start);
        let better = match best {
            None => true,
            Some((q, d, _)) => quality > q || (quality == q && distance < d),
        };
        if better {
            best = Some((quality, distance, i));
        }
    }
    best.map_or(Rehydrated::Changed, |(_, _, i)| Rehydrated::Found(i))
}

/// Lowercase words of the text without list markers, task boxes, heading
/// marks or trailing annotation comments, single-spaced.
pub fn normalized(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = crate::text::annotations::split_trailing(line).0.trim();
        let line = line.trim_start_matches('#').trim_start();
        let line = ["- ", "* ", "+ "]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .unwrap_or(line);
        let line = ["[ ] ", "[x] ", "[X] "]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .unwrap_or(line);
        out.extend(line.split_whitespace().map(str::to_lowercase));
    }
    out.join(" ")
}

fn strip_heading_prefix(text: &str, heading: &str) -> String {
    // Heading paths are joined with " › "; a snippet may carry any part of it.
    for part in std::iter::once(heading).chain(heading.split(" › ")) {
        for sep in [": ", " — ", " - ", " "] {
            if let Some(rest) = text.strip_prefix(&format!("{part}{sep}")) {
                return rest.to_string();
            }
        }
    }
    text.to_string()
}

/// Word-set Jaccard similarity.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = a.intersection(b).count();
    shared as f32 / (a.len() + b.len() - shared) as f32
}

/// Groups near-duplicates. `order` lists item indices strongest first; each
/// item joins the first group whose leader it is a near-duplicate of, or
/// leads a new group. Returns, per item, the index of its group's leader.
pub fn group_near_duplicates(words: &[HashSet<String>], order: &[usize]) -> Vec<usize> {
    let mut leader = vec![usize::MAX; words.len()];
    let mut leaders: Vec<usize> = Vec::new();
    for &i in order {
        match leaders
            .iter()
            .find(|&&l| near_duplicates(&words[l], &words[i]))
        {
            Some(&l) => leader[i] = l,
            None => {
                leader[i] = i;
                leaders.push(i);
            }
        }
    }
    leader
}

fn near_duplicates(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    // Jaccard is at most the ratio of the sizes: that rules most pairs out
    // without an intersection.
    let (small, large) = (a.len().min(b.len()), a.len().max(b.len()));
    (small as f32) >= NEAR_DUPLICATE_JACCARD * large as f32
        && jaccard(a, b) >= NEAR_DUPLICATE_JACCARD
}

/// The words compared for near-duplicates.
pub fn word_set(text: &str) -> HashSet<String> {
    crate::text::words::tokens(text).collect()
}

/// Content words shared at or above this (Jaccard of stemmed words without
/// stop words) make two lines with the same identifiers one fact told twice.
pub const SAME_FACT_CONTENT: f32 = 0.6;
/// With the same identifiers (at least one), less is enough: the words
/// around them (identifiers left out) shared at or above this.
pub const SAME_FACT_WITH_IDENTIFIERS: f32 = 0.2;

/// What two candidates are compared by to tell one fact told in several
/// sessions from two facts.
#[derive(Debug, Clone)]
pub struct FactWords {
    words: HashSet<String>,
    content: HashSet<String>,
    identifiers: HashSet<String>,
    /// Content words outside the identifiers.
    around: HashSet<String>,
    resolution: bool,
    projects: Vec<String>,
}

impl FactWords {
    pub fn new(fact: &str, projects: &[String]) -> FactWords {
        let mut projects = projects.to_vec();
        projects.sort();
        projects.dedup();
        let identifiers = identifiers(fact);
        let id_words: HashSet<String> = identifiers
            .iter()
            .flat_map(|i| {
                crate::text::words::tokens(i)
                    .map(|t| crate::text::words::stem(&t))
                    .collect::<Vec<_>>()
            })
            .collect();
        let content: HashSet<String> = crate::text::words::tokens(fact)
            .filter(|t| !crate::text::words::is_stop_word(t))
            .map(|t| crate::text::words::stem(&t))
            .collect();
        FactWords {
            words: word_set(fact),
            around: content.difference(&id_words).cloned().collect(),
            content,
            identifiers,
            resolution: crate::text::statement::classify(fact)
                == crate::text::statement::Statement::Resolution,
            projects,
        }
    }

    /// Whether two lines say the same fact: the same projects, the same
    /// identifiers (numbers, hosts, paths, codes — facts that differ in one
    /// are different facts), and enough words in common.
    pub fn same_fact(&self, other: &FactWords) -> bool {
        if self.projects != other.projects || !self.compatible(other) {
            return false;
        }
        if near_duplicates(&self.words, &other.words) {
            return true;
        }
        if jaccard(&self.content, &other.content) >= SAME_FACT_CONTENT {
            return true;
        }
        // Identifiers in common and none in conflict: the same fix said in
        // other words ("Clear ~/.cargo/registry to fix E0463" / "E0463 goes
        // away once you delete ~/.cargo/registry"), or enough of the same
        // words around them.
        self.identifiers
            .intersection(&other.identifiers)
            .next()
            .is_some()
            && ((self.resolution && other.resolution)
                || jaccard(&self.around, &other.around) >= SAME_FACT_WITH_IDENTIFIERS)
    }

    /// No identifier of one contradicts the other: one's identifiers are
    /// all the other's (one line names the error code as well as the fix),
    /// never each with one of its own (port 8443 / port 9443).
    fn compatible(&self, other: &FactWords) -> bool {
        self.identifiers.is_subset(&other.identifiers)
            || other.identifiers.is_subset(&self.identifiers)
    }
}

impl FactWords {
    /// The same identifiers and most of the content words (Jaccard ≥ 0.5):
    /// two lines lane 1 should not show side by side. Items of a list that
    /// differ in a number or a name stay apart.
    pub fn near(&self, other: &FactWords) -> bool {
        self.identifiers == other.identifiers && jaccard(&self.content, &other.content) >= 0.5
    }

    /// About the same thing: an identifier in common, or at least a third
    /// of the content words.
    pub fn overlaps(&self, other: &FactWords) -> bool {
        self.identifiers
            .intersection(&other.identifiers)
            .next()
            .is_some()
            || jaccard(&self.content, &other.content) >= 0.34
    }
}

/// The identifiers of a line: tokens with a digit, or with `.`, `_`, `/`,
/// `~`, `:`, `=`, `@` or `-` inside, or in capitals (`E0463`, `db2.internal`,
/// `~/.cargo/registry`, `PGSSLMODE`), lowercased.
pub fn identifiers(text: &str) -> HashSet<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(
                    c,
                    ',' | '.'
                        | ';'
                        | ':'
                        | '!'
                        | '?'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '"'
                        | '\''
                        | '`'
                        | '*'
                )
            })
        })
        .filter(|w| {
            let chars: Vec<char> = w.chars().collect();
            let inner = chars.len() > 2
                && chars[1..chars.len() - 1]
                    .iter()
                    .any(|c| matches!(c, '.' | '_' | '/' | '~' | ':' | '=' | '@' | '-'));
            let letters: Vec<char> = w.chars().filter(|c| c.is_alphabetic()).collect();
            let capitals = letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase());
            w.chars().any(|c| c.is_ascii_digit()) || inner || capitals || w.starts_with('~')
        })
        .map(str::to_lowercase)
        .collect()
}

/// Groups lines that say the same fact (see `FactWords::same_fact`).
/// `order` lists item indices strongest first; each item joins the first
/// group whose leader says the same, or leads a new group. Returns, per
/// item, the index of its group's leader.
pub fn group_same_facts(facts: &[FactWords], order: &[usize]) -> Vec<usize> {
    let mut leader = vec![usize::MAX; facts.len()];
    let mut leaders: Vec<usize> = Vec::new();
    for &i in order {
        match leaders.iter().find(|&&l| facts[l].same_fact(&facts[i])) {
            Some(&l) => leader[i] = l,
            None => {
                leader[i] = i;
                leaders.push(i);
            }
        }
    }
    leader
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(entries: &[(u32, &'static str)]) -> Vec<LiveEntry<'static>> {
        entries
            .iter()
            .map(|(line, text)| LiveEntry {
                start_line: *line,
                end_line: *line,
                text,
            })
            .collect()
    }

    #[test]
    fn a_moved_entry_is_found_by_its_text() {
        let file = live(&[(1, "- other"), (5, "- The gateway listens on 8443.")]);
        assert_eq!(
            rehydrate("- The gateway listens on 8443.", None, 2, &file),
            Rehydrated::Found(1)
        );
    }

    #[test]
    fn whitespace_markers_and_annotations_do_not_matter() {
        let file = live(&[(3, "* the  gateway listens on 8443. <!-- importance: 7 -->")]);
        assert_eq!(
            rehydrate("- The gateway listens on 8443.", None, 3, &file),
            Rehydrated::Found(0)
        );
    }

    #[test]
    fn a_heading_prefixed_snippet_still_matches_its_line() {
        let file = live(&[(4, "- listens on port 8443 behind the VPN")]);
        let stored = "Network: - listens on port 8443 behind the VPN";
        assert_eq!(
            rehydrate(stored, Some("Network"), 4, &file),
            Rehydrated::Found(0)
        );
        let stored = "## Network\n- listens on port 8443 behind the VPN";
        assert_eq!(rehydrate(stored, None, 4, &file), Rehydrated::Found(0));
    }

    #[test]
    fn an_edited_entry_is_changed() {
        let file = live(&[(3, "- The gateway listens on 9000.")]);
        assert_eq!(
            rehydrate("- The gateway listens on 8443.", None, 3, &file),
            Rehydrated::Changed
        );
        assert_eq!(rehydrate("- x", None, 1, &[]), Rehydrated::Changed);
    }

    #[test]
    fn the_nearest_copy_wins() {
        let file = live(&[(2, "- same fact here"), (20, "- same fact here")]);
        assert_eq!(
            rehydrate("- same fact here", None, 18, &file),
            Rehydrated::Found(1)
        );
    }

    #[test]
    fn one_fix_told_in_three_sessions_is_one_fact() {
        let none: Vec<String> = Vec::new();
        let f = |t: &str| FactWords::new(t, &none);
        let a = f("Clear ~/.cargo/registry and rebuild: that fixes E0463.");
        let b = f("E0463 goes away once you delete ~/.cargo/registry and rebuild.");
        let c = f("The fix for E0463 was wiping ~/.cargo/registry, then rebuilding.");
        assert!(a.same_fact(&b) && a.same_fact(&c) && b.same_fact(&c));
        let port_a = f("The gateway listens on port 8443 behind the office VPN.");
        let port_b = f("The gateway listens on port 9443 behind the office VPN.");
        assert!(
            !port_a.same_fact(&port_b),
            "a different number is a different fact"
        );
        let named = f("We hit GH-2960 before: export GH_APP_ID=890411 so the job uses the app's higher limit.");
        let bare = f("Same as last time: switch the job to the app token with GH_APP_ID=890411.");
        assert!(named.same_fact(&bare), "one names the error code as well");
        let host = f("Staging moved to db2.internal last week.");
        let other = f("db2.internal is being decommissioned in January.");
        assert!(
            !host.same_fact(&other),
            "one identifier in common is not enough"
        );
        let repo_a = FactWords::new(
            "Run the tests with --locked to avoid E0463.",
            &["github.com/a/api".into()],
        );
        let repo_b = FactWords::new(
            "Run the tests with --locked to avoid E0463.",
            &["github.com/a/web".into()],
        );
        assert!(!repo_a.same_fact(&repo_b), "different projects never merge");
        assert_eq!(group_same_facts(&[a, b, port_a], &[1, 0, 2]), vec![1, 1, 2]);
    }

    #[test]
    fn identifiers_are_numbers_paths_hosts_and_codes() {
        let ids = identifiers(
            "Set PGSSLMODE=disable for db2.internal:5433 (see ~/.pgpass), error E0463 in v1.2.",
        );
        for id in [
            "pgsslmode=disable",
            "db2.internal:5433",
            "~/.pgpass",
            "e0463",
            "v1.2",
        ] {
            assert!(ids.contains(id), "{id} in {ids:?}");
        }
        assert!(identifiers("The owner lives in Lisbon.").is_empty());
        assert!(
            identifiers("\u{202e}evil\u{202c} «quoted» 网关").is_empty(),
            "any script, no panic"
        );
        assert!(identifiers("é.é x").contains("é.é"));
    }

    #[test]
    fn near_duplicates_join_the_strongest() {
        let texts = [
            "the gateway listens on port 8443 behind the vpn today",
            "the gateway listens on port 8443 behind the vpn today now",
            "the database password rotates monthly",
        ];
        let words: Vec<HashSet<String>> = texts.iter().map(|t| word_set(t)).collect();
        // Jaccard of the first two: 9/10.
        assert_eq!(group_near_duplicates(&words, &[1, 0, 2]), vec![1, 1, 2]);
    }
}
