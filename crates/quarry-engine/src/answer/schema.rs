//! The JSON schema of an answer, as the servers publish it (OpenAPI responses, MCP
//! `outputSchema`): what the type *serialises* to (a field skipped when empty is not
//! required), in JSON Schema 2020-12, with only the standard `format`s — schemars marks integers
//! `uint32`, `int64`, `double`…, which validators such as the MCP Inspector's ajv report as
//! unknown on every call (`minimum: 0` already says what `uint` means).

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};

/// Formats JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn standard_formats_only(schema: &mut Schema) {
    let nonstandard = schema
        .get("format")
        .and_then(|f| f.as_str())
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
    if nonstandard {
        schema.remove("format");
    }
}

/// The published schema of answers of type `T`.
pub fn answer_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(RecursiveTransform(standard_formats_only))
        .into_generator()
        .into_root_schema_for::<T>()
}
