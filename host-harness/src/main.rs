//! `memory-harness`: the command line of the wasmtime host for memory-core.
//! It parses the command line and hands it to `cli`, where each command (or
//! group of commands) has its module.

mod cli;

use clap::{CommandFactory, FromArgMatches};

fn main() {
    // A closed pipe (`search … | head -1`) ends the process quietly, as it
    // ends any Unix filter, instead of a panic on the next print. Output
    // comes after the work is done and committed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let mut command = cli::Cli::command();
    // `--version` also names the component's version and the WIT package;
    // the component is read only when asked.
    if std::env::args_os().any(|a| a == "--version" || a == "-V") {
        let component = std::env::var_os("MEMORY_CORE_COMPONENT")
            .map(std::path::PathBuf::from)
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
