//! `user`: the user model (USER.md), shown or with a directive set.

use super::global::Global;
use super::workspace::{open, open_existing};
use clap::Subcommand;
use memory_harness::json;

#[derive(Subcommand)]
pub enum UserAction {
    /// The directives, their status, and the file's hash.
    Show,
    /// Set a directive ("Always …", "Never …", "Prefer …"); with --replaces,
    /// the directive on that line is superseded in place.
    Set {
        /// The directive, e.g. "Always answer in British English".
        directive: String,
        /// The line (of `user show`) whose directive this one supersedes.
        #[arg(long)]
        replaces: Option<u32>,
        /// The hash `user show` printed (default: the current one).
        #[arg(long)]
        hash: Option<String>,
    },
}

pub fn user(g: &Global, action: UserAction) -> anyhow::Result<i32> {
    // `show` reads an existing workspace; only `set` may make one.
    let mut session = if matches!(action, UserAction::Show) {
        open_existing(g)?
    } else {
        open(g)?
    };
    let model = match action {
        UserAction::Show => session.host.user_show()?,
        UserAction::Set {
            directive,
            replaces,
            hash,
        } => session.user_set(directive, replaces, hash)?,
    };
    if g.json {
        println!("{}", json::user_model(&model));
    } else {
        for d in &model.directives {
            let status = json::directive_status(d.status);
            println!("L{:<4} {:<10} {}  {}", d.line, status, d.observed, d.text);
        }
        println!("hash {}", model.hash);
    }
    Ok(0)
}
