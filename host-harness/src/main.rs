//! `memory-harness`: the command line of the wasmtime host for memory-core.
//! It parses the command line and hands it to `cli`, where each command (or
//! group of commands) has its module.

mod cli;

use clap::{CommandFactory, FromArgMatches};

fn main() {
    end_quietly_on_a_closed_stdout();
    let mut command = cli::Cli::command();
    // `--version` also names the component's version and the WIT package;
    // the component is read only when asked.
    if std::env::args_os().any(|a| a == "--version" || a == "-V") {
        let component = component_flag()
            .or_else(|| std::env::var_os("MEMORY_CORE_COMPONENT").map(std::path::PathBuf::from))
            .unwrap_or_else(memory_harness::config::default_component_path);
        // Printed once and the process ends: leaking it is the point.
        let text: &'static str =
            Box::leak(memory_harness::version::describe(&component).into_boxed_str());
        command = command.version(text);
    }
    let parsed = command
        .try_get_matches()
        .and_then(|matches| cli::Cli::from_arg_matches(&matches));
    match parsed {
        Ok(cli) => std::process::exit(cli::run(cli)),
        Err(error) => std::process::exit(cli::usage_error(error)),
    }
}

/// A closed pipe (`search … | head -1`) ends the command quietly, as
/// SIGPIPE ends a Unix filter: `print!` to stdout panics on EPIPE, and this
/// hook turns that one panic into the signal (output comes after the work
/// is committed). SIGPIPE stays ignored until then, as Rust sets it, so a
/// `serve --deliver-command` that does not read its input cannot kill the
/// daemon.
fn end_quietly_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            cli::end_by_closed_pipe();
        }
        default(info);
    }));
}

/// `--component FILE` (or `--component=FILE`) from the command line, read
/// before clap parses it (for `--version`).
fn component_flag() -> Option<std::path::PathBuf> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    args.iter().enumerate().find_map(|(i, arg)| {
        let text = arg.to_str()?;
        if text == "--component" {
            return args.get(i + 1).map(std::path::PathBuf::from);
        }
        text.strip_prefix("--component=")
            .map(std::path::PathBuf::from)
    })
}
