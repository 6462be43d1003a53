//! Every scenario is checked against `tests/conformance/scenario.schema.json`
//! (compiled into the harness) before it runs, as the Node runner checks it
//! with the same file.

use anyhow::anyhow;
use serde_json::Value;
use std::sync::OnceLock;

/// The schema's text.
pub const SCHEMA: &str = include_str!("../../../tests/conformance/scenario.schema.json");
const SCHEMA_URL: &str = "memory-core:scenario.schema.json";

struct Compiled {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource(SCHEMA_URL, schema)
            .expect("the schema is added once");
        let index = compiler
            .compile(SCHEMA_URL, &mut schemas)
            .expect("the schema compiles");
        Compiled { schemas, index }
    })
}

/// Whether `scenario` is valid; the error lists where it is not.
pub fn validate(scenario: &Value) -> anyhow::Result<()> {
    let compiled = compiled();
    compiled
        .schemas
        .validate(scenario, compiled.index)
        .map_err(|error| anyhow!("{error:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_scenario_and_typos() {
        let good = json!({"description": "d", "steps": [
            {"call": "recall.search", "args": {"request": {"query": "x"}}, "expect": {"hits": []}},
            {"op": "write", "path": "MEMORY.md", "content": "- a\n"},
        ]});
        assert!(validate(&good).is_ok());
        let typo = json!({"description": "d", "steps": [{"call": "recall.search", "expcet": {}}]});
        assert!(validate(&typo).is_err());
        let both =
            json!({"description": "d", "steps": [{"call": "recall.search", "op": "restart"}]});
        assert!(validate(&both).is_err());
        let no_path = json!({"description": "d", "steps": [{"op": "read_file"}]});
        assert!(validate(&no_path).is_err());
    }
}
