//! The JSON schemas the servers publish: of a request (MCP `inputSchema`, OpenAPI parameters
//! and bodies: what the type accepts) and of an answer (MCP `outputSchema`, OpenAPI responses:
//! what the type *serialises* to, so a field skipped when empty is not required), in JSON
//! Schema 2020-12, written the portable way:
//! - only the standard `format`s: schemars marks integers `uint32`, `int64`, `double`…, which
//!   validators such as the MCP Inspector's ajv report as unknown on every call (`minimum: 0`
//!   already says what `uint` means);
//! - a value that may be null as `anyOf: [{type: T, …}, {type: null}]`, not `type: [T, null]`,
//!   which clients that map schemas onto one-type dialects (Gemini's function declarations)
//!   reject — the MCP Inspector's `--strict` check names it.

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

/// Keywords that describe a schema rather than constrain its values: they stay outside the
/// `anyOf` a nullable type becomes.
const ANNOTATIONS: &[&str] = &["title", "description", "default", "examples", "deprecated"];

fn portable(schema: &mut Schema) {
    let nonstandard = schema
        .get("format")
        .and_then(|f| f.as_str())
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
    if nonstandard {
        schema.remove("format");
    }
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let Some(types) = object.get("type").and_then(|t| t.as_array()) else {
        return;
    };
    let others: Vec<serde_json::Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    if others.len() != 1 || types.len() != 2 {
        return;
    }
    let mut value_branch = serde_json::Map::new();
    for key in object.keys().cloned().collect::<Vec<_>>() {
        if !ANNOTATIONS.contains(&key.as_str()) {
            value_branch.insert(key.clone(), object.remove(&key).unwrap_or_default());
        }
    }
    value_branch.insert("type".into(), others[0].clone());
    object.insert(
        "anyOf".into(),
        serde_json::json!([value_branch, { "type": "null" }]),
    );
}

/// The published schema of answers of type `T`.
pub fn answer_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(RecursiveTransform(portable))
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The published schema of requests of type `T`.
pub fn request_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .with_transform(RecursiveTransform(portable))
        .into_generator()
        .into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize, serde::Deserialize, JsonSchema)]
    struct Sample {
        /// How many.
        count: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        lines: Vec<u64>,
    }

    #[test]
    fn nullable_values_are_any_of_branches_without_nonstandard_formats() {
        let schema = answer_schema::<Sample>().to_value();
        let count = &schema["properties"]["count"];
        assert_eq!(count["description"], "How many.");
        assert_eq!(
            count["anyOf"],
            json!([{ "type": "integer", "minimum": 0 }, { "type": "null" }]),
            "{schema}"
        );
        assert!(count.get("type").is_none(), "{schema}");
        assert_eq!(
            schema["properties"]["lines"]["items"],
            json!({ "type": "integer", "minimum": 0 })
        );
        // Serialised: `count` is always written, `name` only when set.
        assert_eq!(schema["required"], json!(["count", "lines"]), "{schema}");
        // Accepted: neither optional field is required.
        let request = request_schema::<Sample>().to_value();
        assert_eq!(request["required"], json!(["lines"]), "{request}");
        assert!(!request.to_string().contains("uint"), "{request}");
    }
}
