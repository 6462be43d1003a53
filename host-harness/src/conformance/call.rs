//! A component call step (`call`): the function named `<interface>.<function>`
//! with its arguments as data, made through `driver::Calls` (the one value
//! rule, the sandbox or the crate natively), its answer matched with the
//! step's expectation. The only per-call knowledge here is which calls must
//! leave the Markdown unchanged or only appended to.

use super::expect::check;
use super::fixture::{changed_paths, check_append_only, check_framing, snapshot};
use super::Step;
use crate::driver::{Calls, Run};
use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};
use std::path::Path;

/// Calls that only read Markdown: a change to any file outside `.memory/`
/// fails the step.
const READ_CALLS: &[&str] = &[
    "store.sync",
    "store.status",
    "recall.search",
    "recall.get",
    "bootstrap.load",
    "inject.trigger-inject",
    "report.gather",
];
/// Calls that may write Markdown, only by appending. (`write.forget` removes
/// lines; its scenarios check the files themselves.)
const APPEND_CALLS: &[&str] = &[
    "write.note",
    "write.ingest",
    "write.flush",
    "intents.create",
];

/// Runs a call step: the call (`repeat` times), the file invariants, and
/// the step's expectation.
pub fn run_step(
    calls: &Calls,
    run: &mut Run,
    workspace: &Path,
    step: &Step,
    name: &str,
) -> anyhow::Result<()> {
    let args = step.args.clone().unwrap_or_default();
    let before = if READ_CALLS.contains(&name) || APPEND_CALLS.contains(&name) {
        Some(snapshot(workspace, false)?)
    } else {
        None
    };
    // `repeat`: the same call N times (recall signals); the last answer
    // is checked, and every earlier one must succeed.
    for _ in 1..step.repeat.unwrap_or(1) {
        if let Err(error) = calls.answer(run, name, &args)? {
            bail!("a repeated call failed: {error}");
        }
    }
    let answer = calls.answer(run, name, &args)?;
    if let Some(before) = before {
        if APPEND_CALLS.contains(&name) {
            check_append_only(workspace, &before)?;
        } else {
            let after = snapshot(workspace, false)?;
            if before != after {
                bail!(
                    "the call changed memory files on disk: {:?}",
                    changed_paths(&before, &after)
                );
            }
        }
    }
    match (answer, &step.expect_error) {
        (Ok(value), None) => match &step.expect {
            Some(expected) => {
                check(expected, &value, "$").map_err(|e| anyhow!("{e}\nfull result: {value:#}"))
            }
            None => Ok(()),
        },
        (Ok(value), Some(expected)) => {
            bail!("expected the error {expected}, got the result {value:#}")
        }
        (Err(error), Some(expected)) => {
            check(expected, &error, "$error").map_err(|e| anyhow!("{e}\nactual error: {error}"))
        }
        (Err(error), None) => bail!("the component answered with an error: {error}"),
    }
}

/// The runner's check of every hit's framing (`search_framing`): one
/// block, opened and closed once (also after removing invisible
/// characters and mapping look-alike brackets), and text holding
/// `marker` never presented as trusted.
pub fn search_framing(calls: &Calls, run: &mut Run, step: &Step) -> anyhow::Result<Value> {
    let query = step.query.clone().context("search_framing needs `query`")?;
    let request = json!({"request": {
        "query": query,
        "max_results": step.max_results.unwrap_or(20),
        "min_score": 0.0,
    }});
    let result = calls
        .answer(
            run,
            "recall.search",
            request.as_object().expect("an object"),
        )?
        .map_err(|e| anyhow!("the search failed: {e}"))?;
    let hits = result["hits"].as_array().cloned().unwrap_or_default();
    for hit in &hits {
        let text = |key: &str| hit[key].as_str().unwrap_or_default().to_string();
        let (framed, citation) = (text("framed"), text("citation"));
        check_framing(&framed, &citation)?;
        if let Some(marker) = &step.marker {
            let shown_trusted = framed
                .lines()
                .next()
                .is_some_and(|l| l.contains("trust=\"trusted\""));
            if shown_trusted
                && text("snippet")
                    .to_lowercase()
                    .contains(&marker.to_lowercase())
            {
                bail!("{citation} holds {marker:?} and is framed as trusted:\n{framed}");
            }
        }
    }
    Ok(json!({"hits": hits.len()}))
}
