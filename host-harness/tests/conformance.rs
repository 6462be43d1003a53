//! Runs every scenario of `tests/conformance/` through the wasmtime harness,
//! one test per scenario folder.

use libtest_mimic::{Arguments, Failed, Trial};
use memory_harness::conformance::{discover, run_scenario};
use std::path::PathBuf;

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let component = std::env::var_os("MEMORY_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(memory_harness::config::default_component_path);
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
                run_scenario(&dir, &component).map_err(|e| Failed::from(format!("{e:#}")))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
