//! Native search timing over a workspace, for comparing with the sandboxed
//! component (`memory-harness search --batch`): the same crate, no wasm.
//!
//! cargo run --release -p memory-core --example search_native -- WORKSPACE QUERIES.jsonl [MAX_RESULTS]

use memory_core::embedding::NoEmbedder;
use memory_core::model::NoModel;
use memory_core::{Memory, SearchRequest, Settings, SyncRequest, TurnContext};
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workspace, queries) = (&args[1], &args[2]);
    let max_results: u32 = args.get(3).map_or(50, |n| n.parse().expect("a number"));
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
            context: TurnContext::default(),
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
