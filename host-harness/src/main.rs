//! `memory-harness`: the command line of the wasmtime host for memory-core.
//! It parses the command line and hands it to `cli`, where each command (or
//! group of commands) has its module.

mod cli;

use clap::{CommandFactory, FromArgMatches};

fn main() {
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
    let cli = cli::Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    std::process::exit(cli::run(cli));
}
