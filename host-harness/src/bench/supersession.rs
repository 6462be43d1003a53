//! The supersession benchmark (issue 23): a year of daily notes in which
//! some facts change (a service moves host, the on-call passes on, a
//! preference or a meeting moves, a project is renamed) and others are said
//! once and never change, mixed with chatter about the same subjects. Each
//! fact has a question; the labels say which line holds each value.
//!
//! Two figures, for any ranking: how often the latest value of a changed
//! fact outranks every stale one, and how many unchanged old facts are
//! found at all. Generated from a seed: which people, services, projects,
//! values, phrasings and dates a corpus uses all vary with it (the lists
//! they are drawn from are fixed). Change words ("moved", "now") appear in
//! first statements, later ones and chatter alike, so they do not mark
//! the latest value.

use super::life::generate::{date_of, Rng};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Hits a question is judged on (the results a search returns).
pub const HITS: u32 = 10;

/// A day in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// Days of notes, ending the day before `now`.
const DAYS: i64 = 360;

/// One fact's question and where its values are written.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub query: String,
    /// The lines holding each value, oldest first: (file, line). A fact
    /// that never changed has one.
    pub versions: Vec<(String, u32)>,
    /// Age in days of the latest version at `now`.
    pub latest_age_days: i64,
}

impl Question {
    pub fn changed(&self) -> bool {
        self.versions.len() > 1
    }
}

/// A generated workspace: files (relative path, content) and questions.
pub struct Corpus {
    pub files: Vec<(String, String)>,
    pub questions: Vec<Question>,
    /// The same lines as notes an agent writes through `memory_note`, in
    /// order (for `--keyed`).
    pub notes: Vec<Note>,
}

/// One line of the corpus as a note: its day (days since 1970), its text,
/// and for a fact's value the fact's supersedes key and which question and
/// version it answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub day: i64,
    pub text: String,
    pub fact: Option<Stated>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    /// The supersedes key an agent would give it: the fact's kind and
    /// subject (`on-call-beacon`).
    pub key: String,
    /// Index into `Corpus::questions`, and of the version in its `versions`.
    pub question: usize,
    pub version: usize,
}

/// A hit as a search returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// Where a written line ranks among the hits (0 = first), if at all.
pub fn rank_of(hits: &[Hit], (path, line): &(String, u32)) -> Option<usize> {
    hits.iter()
        .position(|h| &h.path == path && h.start_line <= *line && *line <= h.end_line)
}

/// Whether the latest value ranks above every stale one (a stale value
/// not found ranks below everything).
pub fn latest_first(question: &Question, hits: &[Hit]) -> bool {
    let Some((latest, stale)) = question.versions.split_last() else {
        return false;
    };
    match rank_of(hits, latest) {
        None => false,
        Some(at) => stale
            .iter()
            .all(|s| rank_of(hits, s).is_none_or(|other| other > at)),
    }
}

/// What one ranking scored.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Score {
    pub changed: usize,
    pub latest_first: usize,
    /// Changed facts whose latest value was found at all.
    pub latest_found: usize,
    pub unchanged: usize,
    pub unchanged_found: usize,
}

impl Score {
    pub fn add(&mut self, question: &Question, hits: &[Hit]) {
        let latest = question.versions.last().expect("a fact has a value");
        if question.changed() {
            self.changed += 1;
            self.latest_first += latest_first(question, hits) as usize;
            self.latest_found += rank_of(hits, latest).is_some() as usize;
        } else {
            self.unchanged += 1;
            self.unchanged_found += rank_of(hits, latest).is_some() as usize;
        }
    }

    pub fn latest_first_rate(&self) -> f64 {
        ratio(self.latest_first, self.changed)
    }

    pub fn unchanged_recall(&self) -> f64 {
        ratio(self.unchanged_found, self.unchanged)
    }
}

fn ratio(n: usize, of: usize) -> f64 {
    if of == 0 {
        1.0
    } else {
        n as f64 / of as f64
    }
}

/// `n` distinct items of `items`, in random order.
fn distinct<'a>(rng: &mut Rng, items: &[&'a str], n: usize) -> Vec<&'a str> {
    let mut pool = items.to_vec();
    rng.shuffle(&mut pool);
    pool.truncate(n);
    pool
}

const FIRST: &[&str] = &[
    "Dana", "Priya", "Tomasz", "Aiko", "Mateo", "Ines", "Kwame", "Lena", "Ravi", "Sofia", "Yusuf",
    "Hana", "Omar", "Greta", "Luis", "Mei", "Nikolai", "Zara", "Felix", "Amara", "Jonas", "Chloe",
];
const LAST: &[&str] = &[
    "Whitfield",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Takeda",
    "Brennan",
    "Castillo",
    "Novak",
    "Haddad",
    "Fischer",
    "Sato",
    "Quinn",
    "Adeyemi",
    "Varga",
    "Iversen",
    "Ramos",
];
const SERVICES: &[&str] = &[
    "billing",
    "search",
    "metrics",
    "auth",
    "payments",
    "notifications",
    "reporting",
    "ingest",
    "mail relay",
    "analytics",
    "scheduler",
    "wiki",
    "image resizer",
    "feature flag",
    "audit log",
];
const HOSTS: &[&str] = &[
    "kestrel", "heron", "wren", "osprey", "finch", "plover", "rook", "swift", "tern", "lark",
    "merlin", "egret", "shrike", "avocet",
];
const PROJECTS: &[&str] = &[
    "Atlas", "Beacon", "Cobalt", "Drift", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper",
    "Keystone", "Lumen", "Mosaic", "Nimbus", "Orchid", "Pylon",
];
const NEW_NAMES: &[&str] = &[
    "Northstar",
    "Bluebird",
    "Quartz",
    "Saffron",
    "Tundra",
    "Vesper",
    "Willow",
    "Zephyr",
    "Marigold",
    "Solstice",
    "Meridian",
    "Aurora",
    "Cascade",
    "Sequoia",
];
const ACTIVITIES: &[(&str, &[&str])] = &[
    (
        "editing code",
        &["vim", "Helix", "VS Code", "Emacs", "Zed", "IntelliJ"],
    ),
    (
        "coffee",
        &[
            "an oat flat white",
            "espresso",
            "cold brew",
            "a cortado",
            "filter coffee",
        ],
    ),
    (
        "taking notes",
        &[
            "Obsidian",
            "paper notebooks",
            "Logseq",
            "plain text files",
            "Notion",
        ],
    ),
    (
        "code review",
        &[
            "small stacked PRs",
            "pairing over a call",
            "async comments",
            "one big PR a week",
        ],
    ),
    (
        "travel",
        &["night trains", "the early flight", "driving", "the coach"],
    ),
];
const DAYS_OF_WEEK: &[&str] = &["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const TIMES: &[&str] = &[
    "9:00", "9:30", "10:00", "11:15", "13:30", "14:00", "15:45", "16:30",
];
const BRANCHES: &[&str] = &["main", "release", "stable", "prod", "trunk", "deploy"];
const ALLERGIES: &[&str] = &[
    "peanuts",
    "shellfish",
    "penicillin",
    "cats",
    "pollen",
    "sesame",
];
const PLACES: &[&str] = &[
    "Lisbon", "Berlin", "Toronto", "Osaka", "Nairobi", "Austin", "Leeds", "Porto", "Krakow",
    "Dublin", "Seoul", "Denver", "Oslo", "Lagos", "Perth", "Quito",
];

/// Facts of each group (changed, unchanged) a corpus can hold: five kinds,
/// each on subjects from a list of at least fifteen.
pub const MAX_FACTS: usize = 75;
const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Chatter about a subject that holds none of its values.
const MENTIONS: &[&str] = &[
    "Looked at the {s} dashboards with {p} for a while.",
    "{p} asked a question about {s} in the channel.",
    "Spent the afternoon chasing a flaky test around {s}.",
    "Wrote up notes on {s} for the quarterly review.",
    "{p} wants a design doc before anyone touches {s} again.",
    "Moved the {s} runbook to the new wiki.",
    "{p} took over the {s} dashboards from now on.",
];
const FILLER: &[&str] = &[
    "Lunch with {p}; talked about hiking routes.",
    "Cleared the inbox and triaged three bug reports.",
    "{p} shared a good article on incident reviews.",
    "Renewed the team's conference tickets.",
    "Standup ran long; {p} demoed the new onboarding flow.",
    "Fixed a typo in the README and bumped two dependencies.",
    "Reviewed {p}'s pull request about logging.",
    "Power cut in the afternoon, worked from the cafe.",
    "Planning poker for next sprint: mostly small tickets.",
    "{p} is out next week for a family visit.",
];

/// Sentences for one kind of fact: `{s}` the subject, `{a}` its aspect
/// (preferences), `{v}` the value.
struct Kind {
    /// Names the kind in a supersedes key.
    name: &'static str,
    /// Stating the value the first time (or, for an unchanged fact, once).
    first: &'static [&'static str],
    /// Stating a new value; empty for facts that never change.
    later: &'static [&'static str],
    questions: &'static [&'static str],
}

const HOST: Kind = Kind {
    name: "host",
    first: &[
        "The {s} service runs on {v}.",
        "{s} is deployed on host {v}.",
        "Our {s} server lives on {v}.",
        "{s} moved to {v} when the cluster was built.",
    ],
    later: &[
        "Moved the {s} service to {v} today.",
        "{s} migrated over to {v}; the old box is retired.",
        "The {s} server is now {v} after the migration.",
        "Checked the inventory: {s} runs on {v}.",
    ],
    questions: &[
        "Which host runs the {s} service?",
        "where is {s} deployed",
        "what machine is the {s} server on",
    ],
};
const ON_CALL: Kind = Kind {
    name: "on-call",
    first: &[
        "{v} is on call for {s} this rotation.",
        "On-call for {s} is {v} from today.",
        "{v} took the {s} pager for the rotation.",
    ],
    later: &[
        "{v} took over the {s} on-call.",
        "Handed the {s} pager to {v}.",
        "{v} is the new on-call for {s}.",
        "{v} is on call for {s}.",
    ],
    questions: &[
        "Who is on call for {s}?",
        "who has the {s} pager",
        "{s} on-call engineer",
    ],
};
const PREFERENCE: Kind = Kind {
    name: "preference",
    first: &[
        "{s} prefers {v} for {a}.",
        "{s} says {v} is the only way for {a}.",
        "{s} switched to {v} for {a} years ago.",
    ],
    later: &[
        "{s} switched to {v} for {a}.",
        "{s} now prefers {v} for {a}, not the old choice.",
        "For {a}, {s} has moved on to {v}.",
        "{s} prefers {v} for {a}.",
    ],
    questions: &[
        "What does {s} prefer for {a}?",
        "{s}'s choice for {a}",
        "how does {s} like {a}",
    ],
};
const RENAME: Kind = Kind {
    name: "name",
    first: &[
        "Project {s} is now called {v}.",
        "Renamed project {s} to {v}.",
    ],
    later: &[
        "Project {s} got renamed again, to {v}.",
        "{s} is called {v} from now on.",
        "Marketing renamed {s} to {v}.",
        "Project {s} goes by {v}.",
    ],
    questions: &[
        "What is project {s} called now?",
        "new name of project {s}",
        "what did we rename {s} to",
    ],
};
const MEETING: Kind = Kind {
    name: "sync",
    first: &[
        "The {s} sync meeting is on {v}.",
        "We hold the {s} sync on {v}.",
        "Moved the new {s} sync to {v} to suit everyone.",
    ],
    later: &[
        "Moved the {s} sync to {v}.",
        "The {s} sync meeting is {v} from now on.",
        "{s} sync is rescheduled to {v}.",
        "We hold the {s} sync on {v}.",
    ],
    questions: &[
        "When is the {s} sync?",
        "what time is the {s} sync meeting",
        "{s} sync schedule",
    ],
};
const BACKUPS: Kind = Kind {
    name: "backups",
    first: &[
        "{s} backups run nightly at {v}.",
        "The nightly {s} backup starts at {v}.",
    ],
    later: &[],
    questions: &["When do {s} backups run?", "what time is the {s} backup"],
};
const BIRTHDAY: Kind = Kind {
    name: "birthday",
    first: &[
        "{s}'s birthday is on {v}.",
        "Note to self: {s} was born on {v}.",
    ],
    later: &[],
    questions: &["When is {s}'s birthday?", "{s} birthday date"],
};
const BRANCH: Kind = Kind {
    name: "branch",
    first: &[
        "The {s} repo deploys from the {v} branch.",
        "{s} releases are cut from {v}.",
    ],
    later: &[],
    questions: &["Which branch does {s} deploy from?", "{s} release branch"],
};
const ALLERGY: Kind = Kind {
    name: "allergy",
    first: &[
        "{s} is allergic to {v}.",
        "Careful with {v} around {s}: allergy.",
    ],
    later: &[],
    questions: &["What is {s} allergic to?", "{s} allergies"],
};
const DOOR_CODE: Kind = Kind {
    name: "door-code",
    first: &[
        "The door code for the {s} office is {v}.",
        "{s} office door code: {v}.",
    ],
    later: &[],
    questions: &[
        "What's the door code at the {s} office?",
        "{s} office entry code",
    ],
};

/// One fact of a corpus: its kind, subject, aspect and values in order.
struct Fact {
    kind: &'static Kind,
    subject: String,
    aspect: String,
    values: Vec<String>,
}

impl Fact {
    /// The supersedes key of the fact: its kind and subject (and aspect).
    fn key(&self) -> String {
        let words = format!("{} {} {}", self.kind.name, self.subject, self.aspect);
        words
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join("-")
    }

    fn say(&self, template: &str, value: &str) -> String {
        let text = template
            .replace("{s}", &self.subject)
            .replace("{a}", &self.aspect)
            .replace("{v}", value);
        capitalised(&text)
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

fn person(rng: &mut Rng) -> String {
    format!("{} {}", rng.pick(FIRST), rng.pick(LAST))
}

/// Every name the lists make, shuffled: subjects are taken from it one by
/// one, so no two facts are about the same person.
fn everyone(rng: &mut Rng) -> Vec<String> {
    let mut names: Vec<String> = FIRST
        .iter()
        .flat_map(|f| LAST.iter().map(move |l| format!("{f} {l}")))
        .collect();
    rng.shuffle(&mut names);
    names
}

/// `n` distinct values drawn by `draw` (which must be able to make them).
fn distinct_values(rng: &mut Rng, n: usize, draw: impl Fn(&mut Rng) -> String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    while out.len() < n {
        let value = draw(rng);
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

/// `changed` facts with two to four values and `unchanged` ones with one,
/// on subjects no two facts of a kind share.
fn facts(rng: &mut Rng, changed: usize, unchanged: usize) -> Vec<Fact> {
    let services = distinct(rng, SERVICES, SERVICES.len());
    let projects = distinct(rng, PROJECTS, PROJECTS.len());
    let places = distinct(rng, PLACES, PLACES.len());
    let mut people = everyone(rng);
    let mut someone_new = || people.pop().expect("352 names for at most 225 people");
    assert!(changed <= MAX_FACTS && unchanged <= MAX_FACTS);
    let mut out = Vec::new();
    for i in 0..changed + unchanged {
        let versions = if i < changed { 2 + rng.below(3) } else { 1 };
        // Each kind's facts take its subjects in turn, so none repeats.
        let round = if i < changed { i } else { i - changed } / 5;
        let (kind, subject, aspect, values): (&Kind, String, String, Vec<String>) = if i < changed {
            match i % 5 {
                0 => (
                    &HOST,
                    services[round % services.len()].into(),
                    String::new(),
                    distinct(rng, HOSTS, versions)
                        .iter()
                        .map(|h| format!("{h}-{:02}", 1 + rng.below(40)))
                        .collect(),
                ),
                1 => (
                    &ON_CALL,
                    projects[round % projects.len()].into(),
                    String::new(),
                    distinct_values(rng, versions, person),
                ),
                2 => {
                    let (aspect, choices) = ACTIVITIES[rng.below(ACTIVITIES.len())];
                    (
                        &PREFERENCE,
                        someone_new(),
                        aspect.into(),
                        distinct(rng, choices, versions)
                            .into_iter()
                            .map(String::from)
                            .collect(),
                    )
                }
                3 => (
                    &RENAME,
                    projects[(round + 7) % projects.len()].into(),
                    String::new(),
                    distinct(rng, NEW_NAMES, versions)
                        .into_iter()
                        .map(String::from)
                        .collect(),
                ),
                _ => (
                    &MEETING,
                    services[(round + 5) % services.len()].into(),
                    String::new(),
                    distinct_values(rng, versions, |rng| {
                        format!("{} at {}", rng.pick(DAYS_OF_WEEK), rng.pick(TIMES))
                    }),
                ),
            }
        } else {
            match i % 5 {
                0 => (
                    &BACKUPS,
                    services[(round + 9) % services.len()].into(),
                    String::new(),
                    vec![rng.pick(TIMES).to_string()],
                ),
                1 => (
                    &BIRTHDAY,
                    someone_new(),
                    String::new(),
                    vec![format!("{} {}", rng.pick(MONTHS), 1 + rng.below(28))],
                ),
                2 => (
                    &BRANCH,
                    projects[(round + 3) % projects.len()].into(),
                    String::new(),
                    vec![rng.pick(BRANCHES).to_string()],
                ),
                3 => (
                    &ALLERGY,
                    someone_new(),
                    String::new(),
                    vec![rng.pick(ALLERGIES).to_string()],
                ),
                _ => (
                    &DOOR_CODE,
                    places[round % places.len()].into(),
                    String::new(),
                    vec![format!("{:04}", rng.below(10_000))],
                ),
            }
        };
        out.push(Fact {
            kind,
            subject,
            aspect,
            values,
        });
    }
    out
}

/// A line of a daily note, and the fact and version it states, if any.
type Line = (String, Option<(usize, usize)>);

/// The corpus of `seed`: `DAYS` daily notes ending the day before `today`
/// (a day number since 1970), `changed` changing and `unchanged` unchanged
/// facts among chatter.
pub fn generate(seed: u64, today: i64, changed: usize, unchanged: usize) -> Corpus {
    let mut rng = Rng::new(seed);
    let facts = facts(&mut rng, changed, unchanged);
    // Each day's lines; a fact's value goes on a day drawn for it.
    let mut days: BTreeMap<i64, Vec<Line>> = BTreeMap::new();
    for (f, fact) in facts.iter().enumerate() {
        // Values in order, at least two weeks apart; the latest anywhere from
        // last week to most of a year ago, the first up to a year ago.
        let n = fact.values.len() as i64;
        let mut day = rng.below((DAYS - 14 * n) as usize) as i64;
        for v in 0..fact.values.len() {
            let templates = if v == 0 {
                fact.kind.first
            } else {
                fact.kind.later
            };
            let text = fact.say(rng.pick(templates), &fact.values[v]);
            days.entry(day).or_default().push((text, Some((f, v))));
            let room = DAYS - day - 14 * (n - 1 - v as i64);
            day += 14 + rng.below((room - 14).max(1) as usize) as i64 / 2;
            day = day.min(DAYS - 1);
        }
        // Chatter about the subject, holding no value.
        for _ in 0..3 {
            let text = fill_chatter(rng.pick(MENTIONS), &fact.subject, &person(&mut rng));
            days.entry(rng.below(DAYS as usize) as i64)
                .or_default()
                .push((text, None));
        }
    }
    let mut versions: Vec<Vec<(String, u32)>> = facts
        .iter()
        .map(|f| vec![(String::new(), 0); f.values.len()])
        .collect();
    let mut latest_day: Vec<i64> = vec![0; facts.len()];
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for d in 0..DAYS {
        let date = date_of((today - DAYS + d) * DAY_MS);
        let path = format!("memory/{date}.md");
        let mut lines: Vec<Line> = (0..2 + rng.below(5))
            .map(|_| (fill_chatter(rng.pick(FILLER), "", &person(&mut rng)), None))
            .collect();
        for line in days.remove(&d).unwrap_or_default() {
            let at = rng.below(lines.len() + 1);
            lines.insert(at, line);
        }
        let mut text = format!("# {date}\n\n");
        for (i, (line, label)) in lines.iter().enumerate() {
            let _ = writeln!(text, "- {line}");
            if let Some((f, v)) = label {
                versions[*f][*v] = (path.clone(), 3 + i as u32);
                latest_day[*f] = latest_day[*f].max(d);
            }
            notes.push(Note {
                day: today - DAYS + d,
                text: line.clone(),
                fact: label.map(|(f, v)| Stated {
                    key: facts[f].key(),
                    question: f,
                    version: v,
                }),
            });
        }
        files.push((path, text));
    }
    let questions = facts
        .iter()
        .zip(versions)
        .zip(latest_day)
        .map(|((fact, versions), day)| Question {
            query: fact.say(rng.pick(fact.kind.questions), ""),
            versions,
            latest_age_days: DAYS - day,
        })
        .collect();
    Corpus {
        files,
        questions,
        notes,
    }
}

fn fill_chatter(template: &str, subject: &str, someone: &str) -> String {
    capitalised(&template.replace("{s}", subject).replace("{p}", someone))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, line: u32) -> Hit {
        Hit {
            path: path.into(),
            start_line: line,
            end_line: line,
        }
    }

    #[test]
    fn the_latest_must_be_found_and_above_every_stale_value() {
        let q = Question {
            query: "q".into(),
            versions: vec![("a".into(), 3), ("b".into(), 4)],
            latest_age_days: 1,
        };
        assert!(latest_first(&q, &[hit("b", 4), hit("a", 3)]));
        assert!(latest_first(&q, &[hit("x", 1), hit("b", 4)]));
        assert!(!latest_first(&q, &[hit("a", 3), hit("b", 4)]));
        assert!(!latest_first(&q, &[hit("a", 3)]));
        assert!(!latest_first(&q, &[]));
        let mut s = Score::default();
        s.add(&q, &[hit("a", 3), hit("b", 4)]);
        assert_eq!((s.changed, s.latest_first, s.latest_found), (1, 0, 1));
    }

    #[test]
    fn no_two_facts_of_a_kind_share_a_subject_and_values_do_not_repeat() {
        for seed in 1..=20 {
            let mut rng = Rng::new(seed);
            let facts = facts(&mut rng, MAX_FACTS, MAX_FACTS);
            let mut seen = std::collections::HashSet::new();
            for f in &facts {
                assert!(
                    seen.insert((f.kind.questions[0], f.subject.clone(), f.aspect.clone())),
                    "seed {seed}: {} twice",
                    f.subject
                );
                let mut values = f.values.clone();
                values.sort();
                values.dedup();
                assert_eq!(values.len(), f.values.len(), "seed {seed}: {:?}", f.values);
            }
        }
    }

    #[test]
    fn a_corpus_labels_every_value_where_it_is_written() {
        for seed in 1..=5 {
            let corpus = generate(seed, 20_790, 20, 20);
            let files: BTreeMap<&str, &str> = corpus
                .files
                .iter()
                .map(|(p, t)| (p.as_str(), t.as_str()))
                .collect();
            assert_eq!(corpus.files.len(), DAYS as usize);
            // Day 20,790 is 2026-12-03: the notes end the day before.
            assert_eq!(corpus.files.last().unwrap().0, "memory/2026-12-02.md");
            assert_eq!(corpus.questions.iter().filter(|q| q.changed()).count(), 20);
            for q in &corpus.questions {
                assert!(!q.query.contains('{'), "{}", q.query);
                let mut previous = String::new();
                for (path, line) in &q.versions {
                    let text = files[path.as_str()]
                        .lines()
                        .nth(*line as usize - 1)
                        .unwrap();
                    assert!(text.starts_with("- "), "{path}:{line} {text}");
                    // Versions are in date order (file names are dates).
                    assert!(*path > previous, "{path} after {previous}");
                    previous = path.clone();
                }
            }
        }
        // The notes hold the files' lines in order, and each fact's values
        // share one key that no other fact has.
        for seed in 1..=3 {
            let corpus = generate(seed, 20_790, 20, 20);
            let lines: Vec<String> = corpus
                .files
                .iter()
                .flat_map(|(_, t)| t.lines().filter_map(|l| l.strip_prefix("- ")))
                .map(String::from)
                .collect();
            let noted: Vec<String> = corpus.notes.iter().map(|n| n.text.clone()).collect();
            assert_eq!(noted, lines);
            let mut keys: BTreeMap<usize, std::collections::BTreeSet<String>> = BTreeMap::new();
            for n in &corpus.notes {
                if let Some(f) = &n.fact {
                    keys.entry(f.question).or_default().insert(f.key.clone());
                    assert!(f.version < corpus.questions[f.question].versions.len());
                }
            }
            assert_eq!(keys.len(), corpus.questions.len());
            let all: std::collections::BTreeSet<&String> =
                keys.values().map(|k| k.iter().next().unwrap()).collect();
            assert!(keys.values().all(|k| k.len() == 1), "one key per fact");
            assert_eq!(all.len(), keys.len(), "no two facts share a key");
        }
        // Another seed, another corpus.
        assert_ne!(
            generate(1, 20_790, 5, 5).files,
            generate(2, 20_790, 5, 5).files
        );
    }
}
