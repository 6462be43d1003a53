//! Runs every scenario of `tests/conformance/` against the `memory-core`
//! crate compiled into the test, one test per scenario folder: the inner
//! loop of a change to the memory logic, with no wasm build. The sandbox's
//! own guarantees (the preopen, the call deadline, the memory cap) are the
//! wasmtime run's (`--test conformance`).

use libtest_mimic::{Arguments, Failed, Trial};
use memory_harness::conformance::{discover, run_scenario, Target};
use std::path::PathBuf;

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let trials = discover(&root)
        .expect("the conformance folder can be listed")
        .into_iter()
        .map(|dir| {
            let name = dir
                .strip_prefix(&root)
                .unwrap_or(&dir)
                .display()
                .to_string();
            Trial::test(name, move || {
                run_scenario(&dir, Target::Native).map_err(|e| Failed::from(format!("{e:#}")))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
