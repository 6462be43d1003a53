//! `search`: ranked, cited recall (memory_search), one query or a JSONL
//! batch on stdin.

use super::global::Global;
use super::print;
use super::workspace::open_as;
use anyhow::Context;
use clap::Args;
use memory_harness::host::CallError;
use memory_harness::json;
use memory_harness::session::{Purpose, Session};
use memory_harness::settings::flag_help;
use serde_json::{json, Value};
use std::io::{BufRead, Write};

/// `search`'s flags.
#[derive(Args)]
pub struct SearchArgs {
    /// The query (omit with --batch).
    query: Option<String>,
    /// Read JSONL {"id","query"} from stdin; write one JSONL line per query.
    #[arg(long)]
    batch: bool,
    #[arg(long, help = flag_help("Hits to return", "search.maxResults"))]
    max_results: Option<u32>,
    #[arg(long, help = flag_help("Drop hits whose relevance is below this", "search.minScore"))]
    min_score: Option<f32>,
    /// Skip the incremental sync that runs before searching.
    #[arg(long)]
    no_sync: bool,
}

pub fn search(g: &Global, args: SearchArgs) -> anyhow::Result<i32> {
    let mut session = open_as(g, Purpose::Read)?;
    if !args.no_sync && session.writable {
        session.sync_before_use()?;
    }
    print::notes(&session);
    if args.batch {
        return batch(&mut session, args.max_results, args.min_score);
    }
    let query = args
        .query
        .context("give a QUERY, or --batch to read queries from stdin")?;
    let result = session.search(&query, args.max_results, args.min_score)?;
    if g.json {
        println!(
            "{}",
            print::with_notes(json::search_result(&result), &session)
        );
    } else {
        print::search(&result);
    }
    Ok(0)
}

/// `search --batch`: one JSONL answer per request line, in order; a bad
/// line or a failed search is answered with its error.
fn batch(
    session: &mut Session,
    max_results: Option<u32>,
    min_score: Option<f32>,
) -> anyhow::Result<i32> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(request) => answer(session, &request, max_results, min_score),
            Err(e) => {
                json!({"id": null, "error": {"kind": "invalid-input", "message": format!("line {}: {e}", number + 1)}})
            }
        };
        writeln!(out, "{answer}")?;
    }
    Ok(0)
}

/// The answer to one batch request: the result with its `id` and time, or
/// the error.
fn answer(
    session: &mut Session,
    request: &Value,
    max_results: Option<u32>,
    min_score: Option<f32>,
) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(query) = request.get("query").and_then(Value::as_str) else {
        return json!({"id": id, "error": {"kind": "invalid-input", "message": "each line needs a string `query`"}});
    };
    let started = std::time::Instant::now();
    // A batch is an evaluation run, not the agent recalling: no recall
    // signals.
    match session.search_unrecorded(query, max_results, min_score) {
        Ok(result) => {
            let mut v = json::search_result(&result);
            v["id"] = id;
            v["ms"] = json!(started.elapsed().as_secs_f64() * 1000.0);
            v
        }
        Err(CallError::Memory(e)) => json!({"id": id, "error": json::memory_error(&e)}),
        Err(e) => json!({"id": id, "error": {"kind": "host", "message": e.to_string()}}),
    }
}
