//! What a line says, judged by its words — not by who wrote it or how it was
//! formatted: a fact, the resolution of a problem, a bare symptom, a
//! question, chatter, or an agent narrating its own work. Dreaming promotes
//! facts and resolutions only; lane 1 puts a resolution before the symptom
//! it answers. Pure and deterministic.
//!
//! The markers are English. A line in another language is judged a fact
//! unless it is a question (`?`, `？`) — the gate errs on the side the
//! recall signals already vouch for.

use crate::text::words::{stem, strip_list_marker, tokens};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Statement {
    /// A durable statement: a decision, a value, a preference, a state.
    Fact,
    /// Says how a problem is fixed, avoided or explained.
    Resolution,
    /// Reports a problem and nothing about how to fix it.
    Symptom,
    /// Asks.
    Question,
    /// Greetings, thanks, acknowledgements.
    Chatter,
    /// The agent narrating its own next step ("Let me check the logs").
    Process,
}

impl Statement {
    pub fn as_str(self) -> &'static str {
        match self {
            Statement::Fact => "fact",
            Statement::Resolution => "resolution",
            Statement::Symptom => "symptom",
            Statement::Question => "question",
            Statement::Chatter => "chatter",
            Statement::Process => "process",
        }
    }

    /// Whether a line saying this may enter the curated core.
    pub fn promotable(self) -> bool {
        matches!(self, Statement::Fact | Statement::Resolution)
    }

    /// Why a line saying this is not promoted (`None` when it may be).
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            Statement::Fact | Statement::Resolution => None,
            Statement::Symptom => Some("a problem report without its resolution"),
            Statement::Question => Some("a question, not a fact"),
            Statement::Chatter => Some("chatter (a greeting, thanks or an acknowledgement)"),
            Statement::Process => Some("the agent narrating its work, not a fact"),
        }
    }
}

/// Phrases by which someone reports that a fix or an answer worked.
const WORKED: &[&str] = &[
    "that did it",
    "that did the trick",
    "did the trick",
    "that worked",
    "it worked",
    "this worked",
    "worked for me",
    "works now",
    "working now",
    "works again",
    "working again",
    "fixed it",
    "that fixed",
    "it's fixed",
    "its fixed",
    "fixed now",
    "that was it",
    "that was the problem",
    "that was the issue",
    "green again",
    "passes now",
    "passing now",
    "passes again",
    "passing again",
    "solved it",
    "that solved",
    "problem solved",
    "all good now",
    "confirmed, it works",
];

/// Markers that turn a report of success into one of failure or doubt.
const NOT_WORKED: &[&str] = &[
    "not ", "n't", "still", "no luck", "nope", "didnt", "doesnt", "isnt", "wasnt", "never",
    "crash", "fail", "broke", "error", "before", "but ",
];

/// Whether `text` reports that what was just suggested worked ("that did
/// it, thanks", "fixed. thx", "works now"): a success phrase, or a bare
/// "fixed", with no negation and no question.
pub fn confirms_it_worked(text: &str) -> bool {
    let lower = text.to_lowercase();
    if lower.contains('?') || lower.contains('？') {
        return false;
    }
    if NOT_WORKED.iter().any(|n| lower.contains(n)) {
        return false;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    WORKED.iter().any(|p| {
        let p = p.replace(',', "");
        format!(" {joined} ").contains(&format!(" {p} "))
    }) || (words.len() <= 3 && matches!(words.first(), Some(&"fixed") | Some(&"solved")))
}

/// Words that make a line chatter when it holds nothing else.
const CHATTER: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "heya",
    "yo",
    "morning",
    "good",
    "evening",
    "afternoon",
    "night",
    "thanks",
    "thank",
    "thx",
    "ty",
    "cheers",
    "you",
    "so",
    "much",
    "very",
    "a",
    "lot",
    "ok",
    "okay",
    "k",
    "kk",
    "great",
    "cool",
    "nice",
    "perfect",
    "awesome",
    "sure",
    "yes",
    "yeah",
    "yep",
    "no",
    "nope",
    "got",
    "it",
    "sounds",
    "that",
    "works",
    "will",
    "do",
    "bye",
    "later",
    "see",
    "ya",
    "np",
    "problem",
    "lol",
    "haha",
    "wow",
    "again",
    "as",
    "always",
    "appreciate",
    "appreciated",
    "that's",
    "thats",
    "all",
    "for",
    "now",
    "the",
    "help",
    "helpful",
    "done",
    "fine",
    "alright",
    "right",
    "indeed",
    "exactly",
    "agreed",
    "noted",
    "understood",
    "makes",
    "sense",
    "welcome",
    "youre",
    "you're",
    "happy",
    "to",
    "glad",
    "i",
    "i'm",
    "im",
    "it's",
    "its",
    "is",
    "was",
    "there",
    "what",
    "up",
    "how",
    "are",
];

/// Openings of an agent narrating its next step.
const PROCESS_OPENINGS: &[&str] = &[
    "let me",
    "let's see",
    "lets see",
    "i'll",
    "i will",
    "i'm going to",
    "im going to",
    "i am going to",
    "one moment",
    "one sec",
    "give me a",
    "checking",
    "looking into",
    "looking at",
    "working on",
    "on it",
    "hang on",
    "hold on",
    "i'm checking",
    "i'm looking",
    "i am checking",
    "i am looking",
    "sure, let me",
    "sure, i'll",
    "ok, let me",
    "okay, let me",
];

/// Words (stemmed) that report a problem.
const PROBLEM_WORDS: &[&str] = &[
    "fail", "failur", "error", "broken", "break", "broke", "crash", "stuck", "hang", "hung",
    "timeout", "refus", "deni", "panic", "except", "bug", "flaki", "flaky", "segfault", "oom",
    "leak", "slow", "wrong", "regress", "unreach", "unavail", "corrupt", "reject", "complain",
    "warn", "outag", "miss", "cant", "cannot", "wont", "couldnt", "doesnt", "didnt", "isnt",
    "died", "dead",
];

/// Phrases that report a problem.
const PROBLEM_PHRASES: &[&str] = &[
    "doesn't work",
    "does not work",
    "not working",
    "stopped working",
    "no longer",
    "could not",
    "unable to",
    "not up to date",
    "out of date",
    "too many",
    "too much",
    "not enough",
    "ran out",
    "runs out",
    "out of",
    "is red",
    "went red",
    "is down",
    "went down",
    "goes down",
    "was down",
    "timed out",
    "times out",
    "timing out",
    "keeps getting",
    "keep getting",
    "keep seeing",
    "keeps throwing",
    "keeps returning",
    "keeps happening",
    "keeps dying",
    "out of memory",
    "not found",
    "keeps failing",
    "can't",
    "won't",
];

/// Words (stemmed) that say how a problem is fixed or explained.
const RESOLUTION_WORDS: &[&str] = &[
    "fix",
    "workaround",
    "solut",
    "solv",
    "resolv",
    "unblock",
    "caus",
    "becaus",
    "cure",
    "remedi",
    "mitig",
    "avoid",
];

/// Phrases that say how a problem is fixed or explained.
const RESOLUTION_PHRASES: &[&str] = &[
    "due to",
    "turned out",
    "turns out",
    "root cause",
    "the trick",
    "goes away",
    "went away",
    "works again",
    "works after",
    "worked after",
    "works once",
    "works if",
    "works when",
    "passes after",
    "passes again",
    "passes once",
    "instead of",
    "by running",
    "after running",
    "need to",
    "needs to",
    "have to",
    "has to",
    "make sure",
    "you should",
    "we should",
    "the answer is",
    "is to ",
];

/// Imperative verbs that open a fix ("Clear the cache", "Pin openssl to …").
const FIX_VERBS: &[&str] = &[
    "add",
    "bump",
    "change",
    "check",
    "clean",
    "clear",
    "configure",
    "delete",
    "disable",
    "downgrade",
    "drop",
    "enable",
    "export",
    "flush",
    "increase",
    "install",
    "kill",
    "lower",
    "move",
    "pin",
    "point",
    "purge",
    "raise",
    "rebuild",
    "recreate",
    "regenerate",
    "reinstall",
    "reload",
    "remove",
    "rename",
    "reset",
    "restart",
    "revert",
    "rerun",
    "rotate",
    "run",
    "set",
    "switch",
    "try",
    "turn",
    "unset",
    "update",
    "upgrade",
    "use",
    "wipe",
    "prune",
    "renew",
    "truncate",
    "cap",
    "force",
    "reboot",
    "redeploy",
    "retry",
    "rollback",
    "apply",
    "patch",
    "edit",
    "replace",
    "refresh",
    "corepack",
    "free",
    "evict",
    "invalidate",
];

/// What a line says. `text` is the line's own words: no list marker, no
/// role prefix, no annotation comments.
pub fn classify(text: &str) -> Statement {
    let trimmed = strip_list_marker(text.trim()).trim();
    let lower = trimmed.to_lowercase();
    let words: Vec<String> = tokens(trimmed).collect();
    if words.is_empty() {
        return Statement::Chatter;
    }
    let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
    let apostrophe_free = lower.replace(['\'', '’'], "");
    // Phrases match whole words: "note this down" does not hold "is down".
    let padded = format!(
        " {} ",
        lower
            .chars()
            .map(
                |c| if matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '"') {
                    ' '
                } else {
                    c
                }
            )
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    );
    let has = |phrase: &str| padded.contains(&format!(" {} ", phrase.trim()));
    let problem = stems.iter().any(|s| {
        PROBLEM_WORDS
            .iter()
            .any(|p| s == p || (p.len() >= 4 && s.starts_with(p)))
    }) || PROBLEM_PHRASES.iter().any(|p| has(p))
        || apostrophe_free
            .split_whitespace()
            .any(|w| matches!(w, "cant" | "wont" | "doesnt" | "didnt" | "isnt" | "couldnt"));
    // "failed to solve", "couldn't fix it": a fix that did not happen.
    let negated = |i: usize| {
        let before: Vec<&str> = words[..i]
            .iter()
            .rev()
            .take(2)
            .map(String::as_str)
            .collect();
        before.iter().any(|w| {
            matches!(
                *w,
                "failed"
                    | "unable"
                    | "cannot"
                    | "cant"
                    | "not"
                    | "no"
                    | "couldn't"
                    | "didn't"
                    | "doesn't"
                    | "won't"
                    | "can't"
                    | "nothing"
                    | "never"
            )
        })
    };
    let resolution = stems
        .iter()
        .enumerate()
        .any(|(i, s)| RESOLUTION_WORDS.iter().any(|r| s.starts_with(r)) && !negated(i))
        || RESOLUTION_PHRASES.iter().any(|p| has(p))
        || opens_with_fix_verb(&lower);
    if is_question(trimmed, &lower) && !resolution {
        return Statement::Question;
    }
    if is_chatter(&words) {
        return Statement::Chatter;
    }
    if PROCESS_OPENINGS.iter().any(|p| opens_with(&lower, p)) && !resolution {
        return Statement::Process;
    }
    match (problem, resolution) {
        (_, true) => Statement::Resolution,
        (true, false) => Statement::Symptom,
        (false, false) => Statement::Fact,
    }
}

fn opens_with(lower: &str, opening: &str) -> bool {
    lower
        .strip_prefix(opening)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(|c: char| !c.is_alphanumeric()))
}

/// A sentence opening with a fix verb ("Clear ~/.cargo/registry and
/// rebuild", "Just pin openssl", "Try running with --locked").
fn opens_with_fix_verb(lower: &str) -> bool {
    lower
        .replace(", so ", ". ")
        .replace(", then ", ". ")
        .replace(" and then ", ". ")
        .split(['.', ';', '!', '\n', '—', ':'])
        .map(|s| s.trim_start_matches(|c: char| !c.is_alphanumeric()))
        .any(|sentence| {
            let mut words = sentence.split_whitespace();
            let mut first = words.next().unwrap_or("");
            if matches!(first, "just" | "then" | "so" | "simply" | "first" | "also") {
                first = words.next().unwrap_or("");
            }
            let first = first.trim_matches(|c: char| !c.is_alphanumeric());
            FIX_VERBS.contains(&first)
        })
}

/// Openings of a request for information without a question mark
/// ("remind me of the branch name please").
const REQUEST_OPENINGS: &[&str] = &[
    "remind me",
    "can you tell",
    "could you tell",
    "do you know",
    "tell me",
    "any idea",
    "do you remember",
    "what was",
    "what is",
    "what's",
    "which",
    "where",
];
/// Filler a message may open with before the request.
const OPENING_FILLER: &[&str] = &[
    "hm", "hmm", "ok", "okay", "so", "quick", "one", "sorry", "again", "btw", "hey", "oh", "um",
    "uh", "also", "and",
];

fn is_question(trimmed: &str, lower: &str) -> bool {
    if trimmed.ends_with(['?', '？']) {
        return true;
    }
    // "… after pulling main. help", "… any idea"
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .last()
        .is_some_and(|w| matches!(*w, "help" | "halp" | "ideas"))
        || words.ends_with(&["any", "idea"])
    {
        return true;
    }
    let opening: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .skip_while(|w| OPENING_FILLER.contains(w) || w.is_empty())
        .collect();
    let opening = opening.join(" ");
    if REQUEST_OPENINGS.iter().any(|r| opens_with(&opening, r)) && !lower.contains(". ") {
        return true;
    }
    // "what's the host? I forgot", "… on this booking? thx": a question
    // with a word or three after it.
    if let Some(at) = trimmed.rfind(['?', '？']) {
        let tail = trimmed[at..].trim_start_matches(['?', '？']);
        if tail.split_whitespace().count() <= 3 {
            return true;
        }
    }
    // "What port does the gateway use" without its question mark.
    let first = lower.split_whitespace().next().unwrap_or("");
    let interrogative = matches!(
        first,
        "what" | "why" | "how" | "when" | "where" | "who" | "which" | "whats" | "what's"
    );
    interrogative
        && !lower.contains(". ")
        && !lower.contains(" is ")
        && lower.len() < 120
        && !trimmed.ends_with('.')
}

fn is_chatter(words: &[String]) -> bool {
    let filler = words
        .iter()
        .filter(|w| CHATTER.contains(&w.as_str()))
        .count();
    // Everything is filler, or a short line with at most one other word
    // ("thanks Dana!", "ok great, merging").
    filler == words.len() || (words.len() <= 4 && filler + 1 >= words.len() && filler >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Statement::*;

    fn check(cases: &[(&str, Statement)]) {
        for (text, expected) in cases {
            assert_eq!(classify(text), *expected, "{text}");
        }
    }

    #[test]
    fn facts_are_facts() {
        check(&[
            (
                "The gateway listens on port 8443 behind the office VPN.",
                Fact,
            ),
            ("Dana owns billing; invoices go out on the 3rd.", Fact),
            (
                "The staging database moved to db-7f3k.staging.internal:5433.",
                Fact,
            ),
            (
                "We deploy the api on Thursdays after the freeze lifts.",
                Fact,
            ),
            ("Keep the gateway on loopback.", Fact),
            ("- 网关监听在 8443 端口", Fact),
            ("Git is how the team ships every Friday afternoon.", Fact),
            ("The owner keeps invoices in the shared Drive folder.", Fact),
            (
                "note this down: put WJ8843622 on every booking, that's my frequent flyer number",
                Fact,
            ),
        ]);
    }

    #[test]
    fn resolutions_are_told_from_their_symptoms() {
        check(&[
            (
                "cargo build fails with error E0463 again after the toolchain update",
                Symptom,
            ),
            (
                "The nightly job keeps timing out on the integration tests.",
                Symptom,
            ),
            ("ugh, the deploy is broken again", Symptom),
            (
                "so getting PGX-9032: too many clients already when the worker boots",
                Symptom,
            ),
            (
                "ok so the ingest-worker deploy is red again with MIG-3622",
                Symptom,
            ),
            ("I can't log into the staging box anymore", Symptom),
            (
                "Clear ~/.cargo/registry and rebuild: that fixes E0463.",
                Resolution,
            ),
            (
                "E0463 goes away once you delete ~/.cargo/registry and rebuild.",
                Resolution,
            ),
            (
                "The timeouts were caused by the shared runner; pin the job to runner-7.",
                Resolution,
            ),
            (
                "Pin openssl to 3.0.14 and the TLS handshake error disappears.",
                Resolution,
            ),
            (
                "It turned out the token had expired; rotating it unblocked the deploy.",
                Resolution,
            ),
            (
                "You need to export PGSSLMODE=disable before running the migrations.",
                Resolution,
            ),
            (
                "Just restart the gateway with --reset-cache when it hangs.",
                Resolution,
            ),
            (
                "Looks like the builder cache got corrupted, so prune buildx-cache-pgak.",
                Resolution,
            ),
            (
                "Known issue, the builder cache got corrupted. Prune buildx-cache-pgak.",
                Resolution,
            ),
        ]);
    }

    #[test]
    fn questions_chatter_and_process_talk_are_not_facts() {
        check(&[
            ("what port does the gateway use again?", Question),
            ("Any idea why the build is failing?", Question),
            ("How do I rotate the deploy key", Question),
            ("thanks, that did it!", Chatter),
            ("ok great", Chatter),
            ("Good morning!", Chatter),
            ("hey", Chatter),
            ("Let me check the logs.", Process),
            ("I'll look into the failing test now.", Process),
            ("Sure, let me search my notes for that.", Process),
            ("Checking the CI run…", Process),
            ("hm, the laptop lost the config for the office VPN, what's the host? I forgot", Question),
            ("sorry, again: can you fill in my airline miles number on this booking? thx", Question),
            ("my build died with BK-8580: failed to solve: layer does not exist. didn't we see this before?", Question),
            ("the deploy died with BK-8580: failed to solve: layer does not exist", Symptom),
            ("hm, remind me of the name of the branch we cut releases from please", Question),
            ("ok so getting \"lockfile is not up to date with package.json\" (NPM-9560) after pulling main. help", Question),
            ("my local build died with MIG-9409 could not obtain the migration lock on deploy, again.", Symptom),
            ("ok so, which flag gates the new checkout", Question),
        ]);
    }

    #[test]
    fn only_facts_and_resolutions_are_promotable() {
        assert!(Fact.promotable() && Resolution.promotable());
        for s in [Symptom, Question, Chatter, Process] {
            assert!(!s.promotable());
            assert!(s.refusal().is_some());
        }
    }

    #[test]
    fn a_report_that_it_worked_is_told_from_thanks_doubt_and_failure() {
        for yes in [
            "thanks, that did it!",
            "fixed. thx",
            "works now 👍",
            "Yep, that was it.",
            "ok, green again",
            "That worked perfectly",
            "Solved, thank you",
        ] {
            assert!(confirms_it_worked(yes), "{yes}");
        }
        for no in [
            "thanks",
            "ok",
            "that didn't work",
            "still failing after that",
            "did that work?",
            "not fixed yet",
            "the fixed version is 1.2",
            "back up the db first",
            "the version is fixed to 1.2",
            "fixed the typo in the readme too",
            "it worked before the upgrade, now it crashes",
        ] {
            assert!(!confirms_it_worked(no), "{no}");
        }
    }
}
