//! Native search timing over a workspace, for comparing with the sandboxed
//! component (`memory-harness search --batch`): the same crate, no wasm.
//!
//! cargo run --release -p memory-core --example search_native -- WORKSPACE QUERIES.jsonl [MAX_RESULTS] [owner]
//!
//! With `owner`, the searches are the owner's in an interactive session, so
//! they are recorded as recalls (as the agent's are).

use memory_core::host::embedding::NoEmbedder;
use memory_core::host::model::NoModel;
use memory_core::{Memory, SearchRequest, Settings, SyncRequest, TurnContext};
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workspace, queries) = (&args[1], &args[2]);
    let max_results: u32 = args.get(3).map_or(50, |n| n.parse().expect("a number"));
    let context = if args.get(4).is_some_and(|a| a == "owner") {
        TurnContext {
            session_kind: Some(memory_core::SessionKind::Interactive),
            sender_is_owner: true,
            now_ms: 1_796_202_000_000,
            ..TurnContext::default()
        }
    } else {
        TurnContext::default()
    };
    let mut memory = Memory::open(
        Settings::reference(workspace),
        Box::new(NoEmbedder),
        Box::new(NoModel),
    )
    .expect("open");
    let started = Instant::now();
    memory.sync(SyncRequest::default()).expect("sync");
    println!("sync: {:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
    let file = std::fs::File::open(queries).expect("queries file");
    let mut times = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let value: serde_json::Value = serde_json::from_str(&line.expect("line")).expect("json");
        let request = SearchRequest {
            query: value["query"].as_str().expect("query").to_string(),
            max_results: Some(max_results),
            min_score: None,
            context: context.clone(),
        };
        let started = Instant::now();
        memory.search(&request).expect("search");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{} queries: median {:.3} ms, p95 {:.3} ms",
        times.len(),
        times[times.len() / 2],
        times[times.len() * 95 / 100]
    );
}
