// Every scenario is checked against tests/conformance/scenario.schema.json
// (JSON Schema 2020-12, with ajv) before it runs, as the Rust runner checks
// it with the same file (host-harness/src/conformance/schema.rs), so a typo
// in a field name fails the scenario instead of turning a check off.

import fs from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";

/** Found in the repository, not beside a scenario (the poisoning suite is written to a temporary directory). */
const SCHEMA_FILE = new URL("../../../tests/conformance/scenario.schema.json", import.meta.url);

let validator;

/** Throws unless `scenario` (parsed JSON) is valid; the message lists where it is not. */
export function validateScenario(scenario) {
  validator ??= new Ajv2020().compile(JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8")));
  if (validator(scenario)) return;
  // A step that fits no branch of the schema's `oneOf` is reported by every
  // branch; the same complaint is listed once.
  throw new Error([...new Set(validator.errors.map(describe))].join("\n"));
}

function describe({ instancePath, message, params }) {
  const field = params.additionalProperty === undefined ? "" : `: \`${params.additionalProperty}\``;
  return `${instancePath || "/"} ${message}${field}`;
}
