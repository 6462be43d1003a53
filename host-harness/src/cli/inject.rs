//! `inject`: lane 1 for an incoming message (the hidden blocks to prepend
//! and the escalation decision), and lane 2 when it escalates.

use super::global::Global;
use super::workspace::open_existing;
use clap::Args;
use memory_harness::json;
use memory_harness::names::{parse_mode, parse_session_kind};
use memory_harness::session::Incoming;

/// `inject`'s flags.
#[derive(Args)]
pub struct InjectArgs {
    /// The incoming message.
    message: String,
    /// The channel it came on (an intent limited to a channel fires only there).
    #[arg(long)]
    channel: Option<String>,
    /// Who sent it (an intent limited to a sender fires only for them).
    #[arg(long)]
    sender: Option<String>,
    /// The sender is the authenticated owner.
    #[arg(long)]
    owner: bool,
    /// The kind of session the message arrives in.
    #[arg(long, default_value = "interactive", value_parser = ["interactive", "cron", "heartbeat", "subagent"])]
    session_kind: String,
    /// An active project key (repeat for several, most recent first).
    #[arg(long)]
    project: Vec<String>,
    /// Lane 2: escalate when lane 1 is unsure, always, or off.
    #[arg(long, default_value = "escalate", value_parser = ["escalate", "always", "off"])]
    mode: String,
    /// Let lane 2 search and read session transcripts
    /// (rememberAcrossConversations).
    #[arg(long)]
    across_conversations: bool,
}

pub fn inject(g: &Global, args: InjectArgs) -> anyhow::Result<i32> {
    let mut session = open_existing(g)?;
    session.sync_before_use()?;
    let incoming = Incoming {
        message: args.message,
        channel: args.channel,
        sender: args.sender,
        sender_is_owner: args.owner,
        session_kind: parse_session_kind(&args.session_kind)?,
        projects: args.project,
    };
    let mode = parse_mode(&args.mode)?;
    let mut result = session.inject(&incoming, mode)?;
    let mut escalation = None;
    if result.escalate {
        let run = session.escalate(&incoming, args.across_conversations)?;
        result.blocks.extend(run.block.clone());
        escalation = Some(run);
    }
    if g.json {
        let mut out = json::inject_result(&result);
        out["escalation"] = escalation
            .as_ref()
            .map_or(serde_json::Value::Null, json::escalation);
        println!("{out}");
        return Ok(0);
    }
    for block in &result.blocks {
        println!("{}  (score {:.2})", block.text, block.score);
    }
    if result.blocks.is_empty() {
        println!("(no trigger matched)");
    }
    println!(
        "escalate: {} — {}",
        result.escalate, result.escalation_reason
    );
    if let Some(run) = &escalation {
        let detail = run
            .detail
            .as_ref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        println!("lane 2: {}{detail}", run.outcome);
    }
    Ok(0)
}
