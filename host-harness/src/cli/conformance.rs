//! `conformance` (run the scenarios under a folder) and
//! `poisoning-scenarios` (write the poisoning suite's cases as scenarios,
//! for another host's runner).

use super::global::Global;
use clap::Args;
use memory_harness::conformance::Target;
use std::path::PathBuf;

/// `conformance`'s flags.
#[derive(Args)]
pub struct ConformanceArgs {
    /// The scenarios' folder (e.g. tests/conformance).
    #[arg(required_unless_present = "describe_calls")]
    dir: Option<PathBuf>,
    /// Print the component's calls and their WIT types as JSON (what
    /// tests/conformance/calls.json holds) instead of running anything.
    #[arg(long)]
    describe_calls: bool,
    /// Run against the memory-core crate compiled into the harness instead
    /// of the component in the sandbox (no wasm build; the sandbox's own
    /// limits are not exercised).
    #[arg(long)]
    native: bool,
    /// Only scenarios whose path contains this.
    #[arg(long)]
    filter: Option<String>,
}

/// `poisoning-scenarios`'s flags.
#[derive(Args)]
pub struct PoisoningArgs {
    /// Where the scenario folders are written.
    out: PathBuf,
    /// The suite's folder (cases.json and workspace/).
    #[arg(long, default_value = "tests/poisoning")]
    suite: PathBuf,
}

pub fn conformance(
    g: &Global,
    ConformanceArgs {
        dir,
        describe_calls,
        native,
        filter,
    }: ConformanceArgs,
) -> anyhow::Result<i32> {
    let resolved = g.resolved(Some(PathBuf::from(".")))?;
    if describe_calls {
        let exports = memory_harness::host::component_exports(&resolved.component)?;
        let calls = memory_harness::driver::describe_calls(&exports);
        println!("{}", serde_json::to_string_pretty(&calls)?);
        return Ok(0);
    }
    let dir = dir.expect("clap requires it without --describe-calls");
    let target = if native {
        Target::Native
    } else {
        Target::Sandbox(&resolved.component)
    };
    let (passed, failed) = memory_harness::conformance::run_all(&dir, target, filter.as_deref())?;
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 { 0 } else { 1 })
}

pub fn poisoning_scenarios(PoisoningArgs { out, suite }: PoisoningArgs) -> anyhow::Result<i32> {
    let written = memory_harness::poisoning::write_scenarios(
        &suite.join("cases.json"),
        &suite.join("workspace"),
        &out,
    )?;
    println!(
        "{written} poisoning cases written as scenarios under {}",
        out.display()
    );
    Ok(0)
}
