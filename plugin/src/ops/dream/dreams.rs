//! `DREAMS.md` as a sweep writes it: the light and REM phases' managed
//! blocks and the deep phase's summary, rendered from the candidates, and
//! written so that a person saving the file meanwhile keeps their edit
//! (`logic::dream::dreams_md` does the splicing).

use crate::contract::error::{MemoryError, Result};
use crate::host::embedding::embedding_text;
use crate::logic::dream::dreams_md;
use crate::logic::dream::signals::{self, Gates};
use crate::logic::dream::sweep::{DreamReport, Verdict};
use crate::ops::Memory;
use crate::text::hash::sha256_hex;
use crate::text::layout::{Date, DREAMS_FILE};
use std::collections::HashMap;

use super::gather::{within_days, Candidate};

/// Entries shown per managed block.
const MAX_STAGED_SHOWN: usize = 50;
const MAX_THEMES: usize = 5;
const MAX_LASTING_TRUTHS: usize = 3;
const SHOWN_CHARS: usize = 240;

impl Memory {
    /// Writes the managed blocks and the summary into `DREAMS.md`, keeping
    /// everything else in it; when someone saves the file meanwhile, the
    /// sweep's part is applied again to their version (twice at most).
    pub(super) fn write_dreams(
        &self,
        blocks: &[(&str, &str, String)],
        summary: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        if blocks.is_empty() && summary.is_none() {
            return Ok(false);
        }
        for _ in 0..2 {
            let before = self.workspace.read_root_file(DREAMS_FILE)?;
            let text = before
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            let mut after = text.clone();
            for (phase, heading, body) in blocks {
                after = dreams_md::with_block(&after, phase, heading, body);
            }
            if let Some(summary) = summary {
                after = dreams_md::with_summary(&after, summary);
            }
            if before.is_some() && after == text {
                return Ok(false);
            }
            let expected = before.as_deref().map(sha256_hex);
            if self.workspace.replace_root_file(
                DREAMS_FILE,
                expected.as_deref(),
                Some(after.as_bytes()),
                now,
            )? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `DREAMS.md` holds `text` (a summary or note written before).
    pub(super) fn dreams_holds(&self, text: &str) -> Result<bool> {
        let dreams = self.workspace.read_root_file(DREAMS_FILE)?;
        Ok(dreams
            .as_deref()
            .is_some_and(|d| String::from_utf8_lossy(d).contains(text.trim_end())))
    }

    /// Appends `text` to `DREAMS.md` unless it is there already; an error
    /// when it could not be written (someone kept editing the file).
    pub(super) fn append_to_dreams_once(&self, text: &str, now: i64) -> Result<()> {
        if self.dreams_holds(text)? {
            return Ok(());
        }
        self.write_dreams(&[], Some(text), now)?;
        if self.dreams_holds(text)? {
            Ok(())
        } else {
            Err(MemoryError::Io(
                "DREAMS.md kept changing; the note of an interrupted sweep was not written (the next open tries again)".into(),
            ))
        }
    }
}

/// The light phase's block: recent recalls, deduplicated, staged.
pub(super) fn light_block(
    candidates: &[Candidate],
    gates: &Gates,
    now: i64,
    promoted_now: bool,
) -> (String, u32) {
    let mut staged: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.stageable() && within_days(c, gates.light_lookback_days, now))
        .collect();
    staged.sort_by(|a, b| {
        b.scored
            .score
            .total_cmp(&a.scored.score)
            .then(a.citation.cmp(&b.citation))
    });
    let mut body = String::new();
    if staged.is_empty() {
        body.push_str(&format!(
            "_Nothing recalled in the last {} days is waiting for promotion._\n",
            gates.light_lookback_days
        ));
    }
    for c in staged.iter().take(MAX_STAGED_SHOWN) {
        let status = match c.verdict.as_ref() {
            Some((Verdict::BelowGate, why)) => format!("staged (needs: {why})"),
            Some((Verdict::OverLimit | Verdict::Deferred, why)) => {
                format!("staged (passed; {why})")
            }
            Some((Verdict::AlreadyCurated, why)) if why.contains("rolled back") => {
                "rolled back by the owner".to_string()
            }
            Some((Verdict::AlreadyCurated | Verdict::Merged, _)) => "in MEMORY.md".to_string(),
            _ if promoted_now => "in MEMORY.md".to_string(),
            _ => "staged (passes the deep gate)".to_string(),
        };
        body.push_str(&format!(
            "- Candidate: {}\n  - evidence: {}\n  - recalls: {} · distinct queries: {} · days: {}\n  - status: {status}\n",
            dreams_md::shown(&embedding_text(&c.text), SHOWN_CHARS),
            c.citation,
            c.scored.recalls,
            c.scored.distinct_queries,
            c.scored.days,
        ));
    }
    (body, staged.len() as u32)
}

/// The REM phase's block: concepts that keep surfacing, with evidence, and
/// the strongest candidates as possible lasting truths.
pub(super) fn rem_block(candidates: &[Candidate], gates: &Gates, now: i64) -> (String, u32) {
    let recent: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| {
            (c.stageable() || c.is(Verdict::AlreadyCurated))
                && within_days(c, gates.rem_lookback_days, now)
        })
        .collect();
    let mut by_tag: HashMap<String, Vec<&Candidate>> = HashMap::new();
    for c in &recent {
        for tag in signals::concept_tags(&c.text) {
            by_tag.entry(tag).or_default().push(c);
        }
    }
    let mut themes: Vec<(String, Vec<&Candidate>)> =
        by_tag.into_iter().filter(|(_, cs)| cs.len() >= 2).collect();
    themes.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    themes.truncate(MAX_THEMES);
    let mut body = String::from("### Reflections\n\n");
    if themes.is_empty() {
        body.push_str(&format!(
            "_No theme recurred across the last {} days of recalls._\n",
            gates.rem_lookback_days
        ));
    }
    for (tag, cs) in &themes {
        let evidence: Vec<&str> = cs.iter().take(3).map(|c| c.citation.as_str()).collect();
        body.push_str(&format!(
            "- Theme: `{tag}` kept surfacing across {} memories.\n  - evidence: {}\n",
            cs.len(),
            evidence.join(", ")
        ));
    }
    let mut lasting: Vec<&&Candidate> = recent
        .iter()
        .filter(|c| c.stageable() && !c.curated() && !c.is(Verdict::Promoted) && c.scored.days >= 2)
        .collect();
    lasting.sort_by(|a, b| {
        b.scored
            .score
            .total_cmp(&a.scored.score)
            .then(a.citation.cmp(&b.citation))
    });
    if !lasting.is_empty() {
        body.push_str("\n### Possible Lasting Truths\n\n");
        for c in lasting.iter().take(MAX_LASTING_TRUTHS) {
            body.push_str(&format!(
                "- {} (evidence: {}; recalled on {} days)\n",
                dreams_md::shown(&embedding_text(&c.text), SHOWN_CHARS),
                c.citation,
                c.scored.days
            ));
        }
    }
    (body, themes.len() as u32)
}

/// The deep phase's readable summary: added, merged, superseded, skipped and
/// why. The first line dates it; the rest is what it did.
pub(super) fn sweep_summary(candidates: &[Candidate], report: &DreamReport, now: i64) -> String {
    let mut s = format!("### Sweep {}\n\n", Date::from_ms(now));
    s.push_str(&format!(
        "- Consolidation: {}{}.\n",
        report.consolidation.as_str(),
        report
            .refusal
            .as_ref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    ));
    let list = |s: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            s.push_str(&format!("- {title}:\n"));
            for item in items {
                s.push_str(&format!("  - {}\n", dreams_md::shown(item, SHOWN_CHARS)));
            }
        }
    };
    let added: Vec<String> = report
        .added
        .iter()
        .map(|line| embedding_text(crate::text::annotations::split_trailing(line).0))
        .collect();
    list(&mut s, "Added", &added);
    list(&mut s, "Merged into existing entries", &report.merged);
    list(&mut s, "Superseded", &report.superseded);
    list(&mut s, "Rewritten by the model", &report.rewritten);
    list(&mut s, "Dropped by the model", &report.dropped);
    let skipped: Vec<String> = candidates
        .iter()
        .filter_map(|c| {
            let (verdict, why) = c.verdict.as_ref()?;
            let shown = matches!(
                verdict,
                Verdict::SourceVanished
                    | Verdict::SourceChanged
                    | Verdict::Junk
                    | Verdict::OverLimit
                    | Verdict::Deferred
            ) || (*verdict == Verdict::Ineligible && c.observed.recalls >= 3);
            shown.then(|| format!("{} — {why}", c.citation))
        })
        .collect();
    list(&mut s, "Skipped", &skipped);
    let deferred = candidates
        .iter()
        .filter(|c| c.is(Verdict::Deferred))
        .count();
    if deferred > 0 {
        s.push_str(&format!(
            "- Budget full: {deferred} deferred (MEMORY.md has no room for them within its budget; each sweep tries again).\n"
        ));
    }
    if report.added.is_empty()
        && report.merged.is_empty()
        && report.superseded.is_empty()
        && report.rewritten.is_empty()
    {
        s.push_str("- Nothing entered MEMORY.md.\n");
    }
    s
}
