//! `report`: the review page, written once or served live on a loopback
//! address. It reads the workspace and changes nothing in it.

use super::global::Global;
use anyhow::Context;
use clap::Args;
use memory_harness::config::Resolved;
use memory_harness::json;
use memory_harness::report::{self, html};
use serde_json::json;
use std::path::PathBuf;

/// `report`'s flags.
#[derive(Args)]
pub struct ReportArgs {
    /// The HTML file to write (default ./memory-report.html; never
    /// inside the workspace).
    #[arg(long, conflicts_with = "serve")]
    out: Option<PathBuf>,
    /// Serve the page live instead, on a loopback address (default
    /// 127.0.0.1:8765; port 0 picks a free one).
    #[arg(long, num_args = 0..=1, default_missing_value = memory_harness::report::serve::DEFAULT_ADDR)]
    serve: Option<String>,
    /// With --serve: stop after answering this many requests.
    #[arg(long, requires = "serve")]
    max_requests: Option<u32>,
    /// With --serve: the page reloads itself every this many seconds.
    #[arg(long, default_value_t = 30, requires = "serve")]
    refresh: u32,
}

/// `report`: the review page, written once or served live.
pub fn report(g: &Global, args: ReportArgs) -> anyhow::Result<i32> {
    let resolved = g.resolved(None)?;
    super::workspace::ensure_workspace(&resolved.workspace, true)?;
    if let Some(addr) = &args.serve {
        return serve_live(g, &resolved, addr, &args);
    }
    let gathered = report::gather(&resolved, g.now_ms(&resolved)?)?;
    if g.json {
        println!(
            "{}",
            json!({
                "report": json::workspace_report(&gathered.report),
                "bootstrap": json::bootstrap_result(&gathered.bootstrap),
                "intents": json::intents(&gathered.intents)["intents"],
            })
        );
        return Ok(0);
    }
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("memory-report.html"));
    report::write_page(
        &out,
        &resolved.workspace,
        &html::render(&gathered, &html::Options::default()),
    )?;
    let r = &gathered.report;
    println!(
        "{}: {} sweeps, {} candidates, {} promoted, {} recalled entries, {} intents",
        out.display(),
        r.sweeps.len(),
        r.candidates_total,
        r.promoted.len(),
        r.recalled_total,
        gathered.intents.len()
    );
    Ok(0)
}

/// `report --serve`: the page, gathered afresh for every request.
fn serve_live(
    g: &Global,
    resolved: &Resolved,
    addr: &str,
    args: &ReportArgs,
) -> anyhow::Result<i32> {
    let now = || g.now_ms(resolved);
    let addr = report::serve::loopback_addr(addr)?;
    // Refuse a workspace with nothing to review before listening.
    report::gather(resolved, now()?)?;
    let listener =
        std::net::TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    eprintln!(
        "memory-harness report: serving http://{}/ for {} (Ctrl-C stops)",
        listener.local_addr()?,
        resolved.workspace.display()
    );
    let options = html::Options {
        refresh_seconds: Some(args.refresh.max(1)),
    };
    report::serve::serve(listener, args.max_requests, || {
        Ok(html::render(&report::gather(resolved, now()?)?, &options))
    })?;
    Ok(0)
}
