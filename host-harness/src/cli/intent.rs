//! Standing intents: `intent create|list|cancel` (as the owner at this
//! terminal) and `due` (the time-based intents due now, for a scheduler).

use super::global::Global;
use super::print;
use super::workspace::{open, open_existing};
use anyhow::Context;
use clap::{Args, Subcommand};
use memory_harness::clock::parse_local;
use memory_harness::json;
use memory_harness::names::{parse_origin, parse_session_kind};
use memory_harness::session::{NewIntent, Session};

#[derive(Subcommand)]
pub enum IntentAction {
    /// Remember to do something: when a message matches a trigger, or at a time.
    Create(CreateArgs),
    /// Every intent with its state now.
    List,
    /// Cancel an intent.
    Cancel {
        /// The intent's id (`intent list`).
        id: i64,
    },
}

/// `intent create`'s flags.
#[derive(Args)]
pub struct CreateArgs {
    /// What to do or say when it fires.
    text: String,
    /// A trigger entry; a message matches when it has every word of one
    /// entry. Repeat for several.
    #[arg(long)]
    trigger: Vec<String>,
    /// A due time for a time-based intent: a local YYYY-MM-DDTHH:MM[:SS]
    /// in the time zone, RFC 3339 with an offset, or YYYY-MM-DD
    /// (midnight UTC).
    #[arg(long)]
    due: Option<String>,
    /// Fire only on messages from this channel.
    #[arg(long)]
    channel: Option<String>,
    /// Fire only on messages from this sender.
    #[arg(long)]
    sender: Option<String>,
    /// How many times it may fire (default: the component's).
    #[arg(long)]
    budget: Option<u32>,
    /// Hours between two fires.
    #[arg(long)]
    cooldown_hours: Option<u32>,
    /// Days until it lapses unfired.
    #[arg(long)]
    expires_days: Option<u32>,
    /// Also match by meaning (needs an embedder).
    #[arg(long)]
    semantic: bool,
    /// Where the text came from: sender-message (default: typed here by
    /// the owner), agent-derived, web-page, tool-output, participant,
    /// scaffolding or unknown-external. Only the owner's words, or the
    /// agent's in an untainted turn, arm an intent.
    #[arg(long, default_value = "sender-message", value_parser = [
        "sender-message", "agent-derived", "web-page", "tool-output", "participant",
        "scaffolding", "unknown-external",
    ])]
    origin: String,
    /// The kind of session asking: only an interactive session creates
    /// intents.
    #[arg(long, default_value = "interactive", value_parser = ["interactive", "cron", "heartbeat", "subagent"])]
    session_kind: String,
}

/// `due`'s flags.
#[derive(Args)]
pub struct DueArgs {
    /// The time to check (default now): a local YYYY-MM-DDTHH:MM[:SS] in
    /// the time zone, RFC 3339 with an offset, or YYYY-MM-DD (midnight UTC).
    #[arg(long)]
    at: Option<String>,
}

pub fn intent(g: &Global, action: IntentAction) -> anyhow::Result<i32> {
    // Listing or cancelling reads an existing workspace; only create may
    // make one, once its due time is known to parse.
    let mut session = if let IntentAction::Create(args) = &action {
        if let Some(due) = &args.due {
            parse_local(due, &g.resolved(None)?.time_zone).context("--due")?;
        }
        open(g)?
    } else {
        open_existing(g)?
    };
    match action {
        IntentAction::Create(args) => create(g, &mut session, args)?,
        IntentAction::List => {
            let list = session.intent_list()?;
            if g.json {
                println!("{}", json::intents(&list));
            } else {
                for i in &list {
                    let v = json::intent(i);
                    println!(
                        "{:>4}  {:<9} fires {}/{}  {}  [{}]",
                        i.id,
                        v["state"].as_str().unwrap_or(""),
                        i.fires,
                        i.fire_budget,
                        i.text,
                        i.triggers.join(" | ")
                    );
                }
            }
        }
        IntentAction::Cancel { id } => {
            let intent = session.intent_cancel(id)?;
            if g.json {
                println!("{}", json::intent(&intent));
            } else {
                println!("intent {id} cancelled");
            }
        }
    }
    Ok(0)
}

fn create(g: &Global, session: &mut Session, args: CreateArgs) -> anyhow::Result<()> {
    let session_kind = parse_session_kind(&args.session_kind)?;
    let due_at_ms = args
        .due
        .as_deref()
        .map(|due| parse_local(due, &session.time_zone).context("--due"))
        .transpose()?
        .map(|due| due.ms);
    let intent = NewIntent {
        text: args.text,
        triggers: args.trigger,
        due_at_ms,
        channel: args.channel,
        sender: args.sender,
        fire_budget: args.budget,
        cooldown_hours: args.cooldown_hours,
        expires_days: args.expires_days,
        semantic: args.semantic,
        origin: parse_origin(&args.origin)?,
        session_kind,
    };
    let result = session.intent_create(&intent)?;
    if g.json {
        println!("{}", json::create_result(&result));
    } else if let Some(intent) = &result.intent {
        println!(
            "intent {} created ({})",
            intent.id,
            json::intent(intent)["state"].as_str().unwrap_or("")
        );
    } else if let Some(wish) = &result.wish {
        println!("no trigger or due time: kept as a wish at {wish}, with a review date");
    }
    Ok(())
}

pub fn due(g: &Global, DueArgs { at }: DueArgs) -> anyhow::Result<i32> {
    let mut session = open_existing(g)?;
    let at = match at {
        Some(at) => parse_local(&at, &session.time_zone).context("--at")?.ms,
        None => session.now_ms,
    };
    let list = session.host.due(at)?;
    if g.json {
        println!("{}", json::intents(&list));
    } else {
        for i in &list {
            println!("{}", print::due_block(i));
        }
    }
    Ok(0)
}
