//! The OpenAPI document (`GET /api/openapi.json`), generated from the same request types the
//! handlers decode and the same answer types they return, so the document cannot drift from
//! what the server accepts or answers; the test suite validates the document and checks every
//! documented operation's answer on a real server against its documented schema.

use quarry_engine::answer::{
    Answer, CommitSearch, FileList, FileSummary, FileView, SearchResponse, SliceAnswer, Status,
    SyncAnswer, Touches,
};
use quarry_engine::graph::Impact;
use quarry_engine::history::ShownCommit;
use quarry_engine::schema::{answer_schema, request_schema};
use quarry_engine::service::{
    CodeSearchParams, CommitSearchParams, SliceParams, SummaryParams, TouchesParams,
};
use quarry_engine::views::{CommitShowParams, FileViewParams, ImpactParams};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

/// `/healthz`'s answer: the server answers (the service's answers are quarry-engine's).
#[derive(serde::Serialize, JsonSchema)]
pub struct Health {
    pub ok: bool,
}

/// One documented operation.
pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    /// The query parameters' JSON schema (an object schema), if any.
    pub params: Option<Value>,
    /// The JSON body's schema, if the operation takes one.
    pub body: Option<Value>,
    /// The schema of the answer (200), as the server writes it.
    pub answer: Value,
}

/// The schema of what `T` accepts (quarry-engine's `request_schema`).
fn schema<T: JsonSchema>() -> Option<Value> {
    Some(request_schema::<T>().to_value())
}

/// The schema of what `T` serialises to (quarry-engine's `answer_schema`).
fn answer<T: JsonSchema>() -> Value {
    answer_schema::<T>().to_value()
}

/// `repo` filter of the list and sync routes.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct RepoParam {
    /// Only this repo (its name in `/api/status`); all repos when absent.
    repo: Option<String>,
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation {
            method: "get",
            path: "/healthz",
            summary: "Liveness: the server answers.",
            params: None,
            body: None,
            answer: answer::<Health>(),
        },
        Operation {
            method: "get",
            path: "/api/status",
            summary: "Repos, freshness, history and embedding coverage.",
            params: None,
            body: None,
            answer: answer::<Answer<Status>>(),
        },
        Operation {
            method: "get",
            path: "/api/search/code",
            summary: "Ranked code chunks for a query (lexical, semantic or hybrid).",
            params: schema::<CodeSearchParams>(),
            body: None,
            answer: answer::<Answer<SearchResponse>>(),
        },
        Operation {
            method: "post",
            path: "/api/search/code",
            summary: "The same code search with a JSON body: for long queries such as a whole issue text with its stack trace.",
            params: None,
            body: schema::<CodeSearchParams>(),
            answer: answer::<Answer<SearchResponse>>(),
        },
        Operation {
            method: "get",
            path: "/api/search/commits",
            summary: "Ranked commits, filters applied before ranking.",
            params: schema::<CommitSearchParams>(),
            body: None,
            answer: answer::<Answer<CommitSearch>>(),
        },
        Operation {
            method: "get",
            path: "/api/touches",
            summary: "Commits that changed a file, folder or `FILE::Symbol`.",
            params: schema::<TouchesParams>(),
            body: None,
            answer: answer::<Answer<Touches>>(),
        },
        Operation {
            method: "get",
            path: "/api/summary",
            summary: "A file's structure, one symbol's context, or its call graph.",
            params: schema::<SummaryParams>(),
            body: None,
            answer: answer::<Answer<FileSummary>>(),
        },
        Operation {
            method: "get",
            path: "/api/slice",
            summary: "The lines of a function that can change a variable at a line, or that the line reaches.",
            params: schema::<SliceParams>(),
            body: None,
            answer: answer::<Answer<SliceAnswer>>(),
        },
        Operation {
            method: "get",
            path: "/api/file",
            summary: "A file's lines, coloured by its grammar's highlight query (the search page's file view).",
            params: schema::<FileViewParams>(),
            body: None,
            answer: answer::<Answer<FileView>>(),
        },
        Operation {
            method: "get",
            path: "/api/commit",
            summary: "One commit by SHA prefix: its message, changed files and patch.",
            params: schema::<CommitShowParams>(),
            body: None,
            answer: answer::<Answer<ShownCommit>>(),
        },
        Operation {
            method: "get",
            path: "/api/impact",
            summary: "A name's transitive callers, step by step, matched by name (`/api/impact.svg` draws them).",
            params: schema::<ImpactParams>(),
            body: None,
            answer: answer::<Answer<Impact>>(),
        },
        Operation {
            method: "get",
            path: "/api/code-files/list",
            summary: "Indexed files of a repo (all repos without `repo`).",
            params: schema::<RepoParam>(),
            body: None,
            answer: answer::<Answer<FileList>>(),
        },
        Operation {
            method: "post",
            path: "/api/code-files/sync",
            summary: "Re-index changed files (and embed their chunks); returns what changed.",
            params: schema::<RepoParam>(),
            body: None,
            answer: answer::<Answer<SyncAnswer>>(),
        },
        Operation {
            method: "get",
            path: "/api/openapi.json",
            summary: "This document.",
            params: None,
            body: None,
            answer: json!({ "type": "object", "description": "An OpenAPI 3.1 document." }),
        },
    ]
}

/// The query parameter a schema property is sent as (`repos` travels as `repo=a,b`).
pub fn wire_name(property: &str) -> &str {
    match property {
        "repos" => "repo",
        other => other,
    }
}

fn parameters(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut p = json!({
                "name": wire_name(name),
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": prop,
            });
            if let Some(d) = prop.get("description") {
                p["description"] = d.clone();
            }
            if prop.to_string().contains("\"array\"") {
                p["style"] = json!("form");
                p["explode"] = json!(false);
            }
            p
        })
        .collect()
}

pub fn document() -> Value {
    let mut paths = Map::new();
    let mut defs = Map::new();
    for op in operations() {
        let mut operation = json!({
            "summary": op.summary,
            "responses": {
                "200": { "description": "The answer, as JSON (the service's answers carry `freshness`).", "content": { "application/json": { "schema": {} } } },
                "400": { "description": "A bad parameter: `{\"error\": \"...\"}`." },
                "401": { "description": "Missing or wrong token (when the server has one)." },
                "500": { "description": "The index failed: `{\"error\": \"...\"}`." }
            }
        });
        if op.path.ends_with("/sync") {
            operation["responses"]["409"] = json!({
                "description": "Another quarry process is writing the index; the error names it (pid, command, since). Try again when it is done."
            });
        }
        let mut answer = op.answer.clone();
        if let Some(d) = answer.as_object_mut().and_then(|o| o.remove("$defs")) {
            defs.extend(d.as_object().cloned().unwrap_or_default());
        }
        if let Some(o) = answer.as_object_mut() {
            o.remove("$schema");
        }
        operation["responses"]["200"]["content"]["application/json"]["schema"] = answer;
        if let Some(schema) = &op.params {
            operation["parameters"] = Value::Array(parameters(schema));
            if let Some(d) = schema.get("$defs").and_then(Value::as_object) {
                defs.extend(d.clone());
            }
        }
        if let Some(schema) = &op.body {
            let mut body = schema.clone();
            if let Some(d) = body.as_object_mut().and_then(|o| o.remove("$defs")) {
                defs.extend(d.as_object().cloned().unwrap_or_default());
            }
            if let Some(o) = body.as_object_mut() {
                o.remove("$schema");
            }
            operation["requestBody"] = json!({
                "required": true,
                "content": { "application/json": { "schema": body } }
            });
        }
        let item = paths
            .entry(op.path.to_string())
            .or_insert_with(|| json!({}));
        item[op.method] = operation;
    }
    let doc = json!({
        "openapi": "3.1.0",
        "info": { "title": "quarry", "version": env!("CARGO_PKG_VERSION"),
                  "description": "Code and history search over the workspace's index." },
        "components": {
            "schemas": defs,
            "securitySchemes": { "token": { "type": "http", "scheme": "bearer" } }
        },
        "security": [ {}, { "token": [] } ],
        "paths": paths,
    });
    // schemars points at its own `$defs`; in the document they live under components.
    let text = doc.to_string().replace("#/$defs/", "#/components/schemas/");
    serde_json::from_str(&text).unwrap_or(doc)
}
