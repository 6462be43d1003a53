//! `memory-harness`: the command line of the wasmtime host for memory-core.
//! It parses the command line and hands it to `cli`, where each command (or
//! group of commands) has its module.

mod cli;

use clap::Parser;

fn main() {
    std::process::exit(cli::run(cli::Cli::parse()));
}
