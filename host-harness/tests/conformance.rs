//! Runs every scenario of `tests/conformance/` through the wasmtime harness,
//! one test per scenario folder.

use libtest_mimic::{Arguments, Failed, Trial};
use memory_harness::conformance::{discover, run_scenario, Target};
use std::path::{Path, PathBuf};

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let component = std::env::var_os("MEMORY_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(memory_harness::config::default_component_path);
    let calls = {
        let (root, component) = (root.clone(), component.clone());
        Trial::test("calls.json is the component's", move || {
            calls_json_is_current(&root, &component).map_err(|e| Failed::from(format!("{e:#}")))
        })
    };
    let trials = discover(&root)
        .expect("the conformance folder can be listed")
        .into_iter()
        .map(|dir| {
            let name = dir.strip_prefix(&root).unwrap_or(&dir).display().to_string();
            let component = component.clone();
            Trial::test(name, move || {
                if !component.is_file() {
                    return Err(Failed::from(format!(
                        "the component {} is missing; build it first: cargo build -p memory-core --target wasm32-wasip2 --release",
                        component.display()
                    )));
                }
                run_scenario(&dir, Target::Sandbox(&component)).map_err(|e| Failed::from(format!("{e:#}")))
            })
        })
        .chain(std::iter::once(calls))
        .chain(std::iter::once(mistyped_arguments(component.clone())))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// `tests/conformance/calls.json` (the calls and their WIT types, for runners
/// without type information of their own) is what this component exports.
fn calls_json_is_current(root: &Path, component: &Path) -> anyhow::Result<()> {
    let exports = memory_harness::host::component_exports(component)?;
    let current = memory_harness::driver::describe_calls(&exports);
    let file = root.join("calls.json");
    let kept: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
    anyhow::ensure!(
        kept == current,
        "{} is out of date: run `target/release/memory-harness conformance --describe-calls > tests/conformance/calls.json`",
        file.display()
    );
    Ok(())
}

/// An argument the WIT does not have, or one missing, fails the step with
/// its path named, never a silently different call.
fn mistyped_arguments(component: PathBuf) -> Trial {
    Trial::test("a mistyped argument is named", move || {
        let check = |args: serde_json::Value, wanted: &str| -> Result<(), Failed> {
            let text = serde_json::json!({"description": "typo", "steps": [
                {"call": "recall.search", "args": args, "expect": {"hits": []}}
            ]})
            .to_string();
            let scenario = memory_harness::conformance::parse(&text, "inline")
                .map_err(|e| Failed::from(format!("{e:#}")))?;
            let empty = tempfile::tempdir().map_err(|e| Failed::from(e.to_string()))?;
            match memory_harness::conformance::run_parsed(
                &scenario,
                empty.path(),
                "inline",
                Target::Sandbox(&component),
            ) {
                Ok(()) => Err(Failed::from(format!("{args} ran"))),
                Err(e) if format!("{e:#}").contains(wanted) => Ok(()),
                Err(e) => Err(Failed::from(format!("{args}: {e:#}"))),
            }
        };
        check(
            serde_json::json!({"request": {"qurey": "x"}}),
            "unknown field `qurey`",
        )?;
        check(
            serde_json::json!({"request": {}}),
            "$args.request.query is missing",
        )?;
        check(
            serde_json::json!({"request": {"query": "x", "max_results": -1}}),
            "out of range",
        )?;
        check(
            serde_json::json!({"request": {"query": "x", "context": {"session_kind": "nap"}}}),
            "`nap` is not one of",
        )
    })
}
