//! Reading memory as a session does: `get` (a memory file or lines of it,
//! memory_get) and `bootstrap` (the curated context a session starts with).

use super::global::Global;
use super::print;
use super::workspace::open_as;
use clap::Args;
use memory_harness::json;
use memory_harness::session::{GetTarget, Purpose};

/// `get`'s argument.
#[derive(Args)]
pub struct GetArgs {
    /// A memory file, optionally with lines: MEMORY.md, memory/2026-12-01.md:3-5.
    target: String,
}

pub fn get(g: &Global, GetArgs { target }: GetArgs) -> anyhow::Result<i32> {
    let mut session = open_as(g, Purpose::Read)?;
    print::notes(&session);
    let target = parse_get_target(&target)?;
    let got = session.get(&target)?;
    if let (Some(why), false) = (&got.index_rebuilt, g.json) {
        memory_harness::notes::note(print::rebuilt_note(why));
    }
    if g.json {
        println!("{}", print::with_notes(json::get_result(&got), &session));
    } else {
        // Outside content is shown as a model would see it: escaped,
        // inside its block, with the warning.
        let trusted = memory_harness::report::is_trusted(got.source_class);
        println!("{}", if trusted { &got.text } else { &got.framed });
        if got.truncated {
            eprintln!("(cut at the output limit after line {})", got.lines.end);
        }
    }
    Ok(0)
}

pub fn bootstrap(g: &Global) -> anyhow::Result<i32> {
    let mut session = open_as(g, Purpose::Read)?;
    print::notes(&session);
    let result = session.bootstrap()?;
    if g.json {
        println!(
            "{}",
            print::with_notes(json::bootstrap_result(&result), &session)
        );
    } else {
        print::bootstrap(&result);
    }
    Ok(0)
}

/// `PATH[:FROM[-TO]]`: the path, and the line or lines when given.
pub fn parse_get_target(target: &str) -> anyhow::Result<GetTarget> {
    let (path, range) = match target.rsplit_once(':') {
        Some((path, range))
            if !range.is_empty() && range.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            (path, Some(range))
        }
        _ => (target, None),
    };
    let (start_line, end_line) = match range {
        None => (None, None),
        Some(range) => match range.split_once('-') {
            Some((from, to)) => (
                Some(from.parse().map_err(|_| bad_range(range))?),
                Some(to.parse().map_err(|_| bad_range(range))?),
            ),
            None => {
                let line = range.parse().map_err(|_| bad_range(range))?;
                (Some(line), Some(line))
            }
        },
    };
    Ok(GetTarget {
        path: path.to_string(),
        start_line,
        end_line,
    })
}

/// A line range that is not FROM-TO or LINE (a usage error, exit 2).
fn bad_range(range: &str) -> super::exit::UsageError {
    super::exit::UsageError {
        argument: "PATH:FROM-TO".into(),
        message: format!("{range:?} is not a line (N) or a range (FROM-TO) of lines"),
    }
}
