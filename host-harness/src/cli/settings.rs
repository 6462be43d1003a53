//! `settings`: the component's settings — each one's key, where the
//! configuration file sets it, the values it takes, its default and what it
//! does — from the component's own table (`memory_core::config`).

use super::global::Global;
use clap::Args;
use memory_harness::settings;

/// `settings`' flags.
#[derive(Args)]
pub struct SettingsArgs {
    /// Print the table as Markdown (as README.md embeds it).
    #[arg(long)]
    markdown: bool,
    /// Only the settings a conformance scenario may set, by the names it
    /// gives them (as tests/conformance/README.md embeds them, with
    /// --markdown).
    #[arg(long)]
    scenario: bool,
}

pub fn settings(g: &Global, args: SettingsArgs) -> anyhow::Result<i32> {
    if args.scenario {
        print!("{}", settings::scenario_markdown());
    } else if g.json {
        println!("{}", serde_json::to_string_pretty(&settings::json())?);
    } else if args.markdown {
        print!("{}", settings::markdown());
    } else {
        print!("{}", settings::plain());
    }
    Ok(0)
}
