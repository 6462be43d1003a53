//! The poisoning suite: every case of `tests/poisoning/cases.json` through
//! the wasmtime harness, one test per case (see `memory_harness::poisoning`).

use libtest_mimic::{Arguments, Failed, Trial};
use memory_harness::poisoning::{load, run_case};
use std::path::PathBuf;

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/poisoning");
    let component = std::env::var_os("MEMORY_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(memory_harness::config::default_component_path);
    let cases = load(&root.join("cases.json")).expect("the poisoning cases load");
    assert!(cases.len() >= 60, "the suite has at least 60 cases");
    let fixture = root.join("workspace");
    let trials = cases
        .into_iter()
        .map(|case| {
            let component = component.clone();
            let fixture = fixture.clone();
            Trial::test(case.id.clone(), move || {
                if !component.is_file() {
                    return Err(Failed::from(format!(
                        "the component {} is missing; build it first",
                        component.display()
                    )));
                }
                run_case(&case, &fixture, &component).map_err(|e| Failed::from(format!("{e:#}")))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
