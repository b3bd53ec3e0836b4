//! quarry-mcp: the MCP server (`quarry mcp`, stdio). Five tools — code search, commit
//! search, file/symbol history, file summaries, status — because agents do worse with dozens.
//! Each tool's input schema is generated from the service's request type and its output
//! schema from the service's answer type (MCP 2025-06-18 `outputSchema`); every answer is
//! that typed answer (with index freshness), sent as `structuredContent` and as its JSON text
//! for clients that read only `content`. Arguments that do not fit the schema and
//! failures of the search come back as tool errors (`isError`), which the agent reads and
//! can act on, never as a crash of the server.
//!
//! The tools are listed and dispatched by hand rather than with rmcp's `#[tool]` macros so
//! that argument errors become tool errors (the macros answer them with protocol errors,
//! which many clients surface as a failed connection rather than to the model).

use quarry_engine::answer::{
    Answer, CommitSearch, FileSummary, SearchResponse, SliceAnswer, Status, Touches,
};
use quarry_engine::schema::{answer_schema, request_schema};
use quarry_engine::service::{
    CodeSearchParams, CommitSearchParams, Service, SliceParams, SummaryParams, TouchesParams,
};
mod guard;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// `status` takes no arguments.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {}

/// What a tool answers: the service's typed answer for that tool.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum ToolAnswer {
    Search(Answer<SearchResponse>),
    Commits(Answer<CommitSearch>),
    Touches(Answer<Touches>),
    Summary(Answer<FileSummary>),
    Slice(Answer<SliceAnswer>),
    Status(Answer<Status>),
}

const INSTRUCTIONS: &str = "quarry searches the indexed repositories of this workspace: code by \
words and meaning (`search`), git history (`search_commits`, `touches`), and file structure \
(`summary`, far fewer tokens than reading a file), and the lines that can change a variable at \
a line (`slice`). Every answer has `freshness`: when `files_changed_since` is above 0 the index \
is behind the files on disk.";

/// A tool's input schema: the request type's published schema (quarry-engine's
/// `request_schema`).
fn input_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, Value>> {
    Arc::new(
        request_schema::<T>()
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

/// A tool's output schema: the answer type's published schema (quarry-engine's
/// `answer_schema`).
fn output_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, Value>> {
    Arc::new(
        answer_schema::<T>()
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

/// The tool list, made once (schemas are generated from the request types).
fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(make_tools)
}

fn make_tools() -> Vec<Tool> {
    let read_only = ToolAnnotations::new().read_only(true);
    vec![
        Tool::new(
            "search",
            "Find code by words, identifiers or meaning across the indexed repos. Returns ranked chunks (repo, path, lines, symbol, text) and the files they are in. Use it before reading files: the right file is usually in the first results. To locate a bug, pass the whole issue text or stack trace as the query: its frames, code and names point at the files. Exact searches too: a regex or quoted text returns the matching lines (grep), a pattern with metavariables like `$X.unwrap()` or `def $F($$$ARGS): $$$BODY` returns ast-grep matches, a name returns its definitions first; `engine` forces one.",
            input_schema::<CodeSearchParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<SearchResponse>>()),
        Tool::new(
            "search_commits",
            "Find commits by what they changed (words or meaning), filtered by repo, date range, author and changed path. Returns sha, repo, author, date, subject, files changed.",
            input_schema::<CommitSearchParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<CommitSearch>>()),
        Tool::new(
            "touches",
            "Commits that changed a file or folder (following renames), or one function/class with `path::Symbol`, newest first.",
            input_schema::<TouchesParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<Touches>>()),
        Tool::new(
            "summary",
            "A file's structure (definitions with lines, signatures, first doc line) instead of its full text; `context` mode gives one symbol's source with its callers and callees; `extract` the file's call graph.",
            input_schema::<SummaryParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<FileSummary>>()),
        Tool::new(
            "slice",
            "The lines of a function that can change a variable at a line (data and control dependences), or with `forward` what the line's definitions reach, with their code: the few lines worth reading when chasing a wrong value. Python, Go, JavaScript, TypeScript, Rust, Java, C, C++, C#, Objective-C, Ruby and PHP; variables are matched by name.",
            input_schema::<SliceParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<SliceAnswer>>()),
        Tool::new(
            "status",
            "Repos in the index, their freshness, the embedding model and how much is embedded.",
            input_schema::<StatusParams>(),
        )
        .with_raw_output_schema(output_schema::<Answer<Status>>()),
    ]
    .into_iter()
    .map(|t| t.with_annotations(read_only.clone()))
    .collect()
}

#[derive(Clone)]
pub struct QuarryMcp {
    service: Arc<Service>,
}

impl QuarryMcp {
    pub fn new(service: Arc<Service>) -> QuarryMcp {
        QuarryMcp { service }
    }

    fn dispatch(&self, name: &str, args: Value) -> Result<ToolAnswer, String> {
        fn parse<T: DeserializeOwned>(tool: &str, mut args: Value) -> Result<T, String> {
            if let Some(schema) = tools().iter().find(|t| t.name == tool) {
                coerce_strings(&mut args, &schema.input_schema);
            }
            // The path names the argument at fault (`colour: invalid type…`).
            serde_path_to_error::deserialize(args)
                .map_err(|e| format!("bad arguments for `{tool}`: {e}"))
        }
        let service = &self.service;
        let answer = match name {
            "search" => service
                .search_code(parse(name, args)?)
                .map(ToolAnswer::Search),
            "search_commits" => service
                .search_commits(parse(name, args)?)
                .map(ToolAnswer::Commits),
            "touches" => service.touches(parse(name, args)?).map(ToolAnswer::Touches),
            "summary" => service.summary(parse(name, args)?).map(ToolAnswer::Summary),
            "slice" => service.slice(parse(name, args)?).map(ToolAnswer::Slice),
            "status" => {
                parse::<StatusParams>(name, args)?;
                service.status().map(ToolAnswer::Status)
            }
            other => {
                return Err(format!(
                "no tool named `{other}` (tools: search, search_commits, touches, summary, slice, status)"
            ))
            }
        };
        answer.map_err(|e| format!("{e:#}"))
    }
}

impl ServerHandler for QuarryMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("quarry", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let name = request.name.to_string();
        let this = self.clone();
        // The service is blocking (SQLite, the embedder): off the async workers.
        let answer = tokio::task::spawn_blocking(move || this.dispatch(&name, args))
            .await
            .unwrap_or_else(|e| Err(format!("the tool failed: {e}")));
        let result = match answer.and_then(|a| {
            serde_json::to_value(a).map_err(|e| format!("the answer could not be written: {e}"))
        }) {
            // `structured` also sends the JSON as text, for clients that read `content` only.
            Ok(json) => CallToolResult::structured(json),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }
}

/// The JSON types a property's schema declares (`"integer"`, `["array", "null"]`, or the
/// branches of an `anyOf` such as a nullable type's `[{"type": "array"}, {"type": "null"}]`).
fn declared_types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => property
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(declared_types)
            .collect(),
    }
}

/// Clients that build arguments from a command line (the MCP Inspector's `--tool-arg
/// limit=3`, `repos=["flask"]`) send every value as a string. A string where the tool's schema
/// declares no string is read as the JSON it spells when that has a declared type; a bare word
/// where a list is declared is a list of that word. Anything else is left for the type check
/// to refuse with its message.
fn coerce_strings(args: &mut Value, schema: &serde_json::Map<String, Value>) {
    let (Some(args), Some(properties)) = (
        args.as_object_mut(),
        schema.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    // `repo` is the singular every request type also takes (a serde alias the schema does
    // not list): read as `repos`, so `repo: "core"` is a list of one as `repos: "core"` is.
    if !properties.contains_key("repo") && properties.contains_key("repos") {
        if let Some(repo) = args.remove("repo") {
            args.entry("repos").or_insert(repo);
        }
    }
    for (key, value) in args.iter_mut() {
        let Value::String(text) = value else { continue };
        let Some(types) = properties.get(key).map(declared_types) else {
            continue;
        };
        if types.is_empty() || types.contains(&"string") {
            continue;
        }
        let parsed: Option<Value> = serde_json::from_str(text.trim()).ok();
        let fits = |v: &Value| {
            types.iter().any(|t| match *t {
                "integer" => v.is_i64() || v.is_u64(),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                "array" => v.is_array(),
                "object" => v.is_object(),
                "null" => v.is_null(),
                _ => false,
            })
        };
        match parsed {
            Some(v) if fits(&v) => *value = v,
            _ if types.contains(&"array") => {
                *value = Value::Array(vec![Value::String(text.clone())])
            }
            _ => {}
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub fn serve_stdio(dir: &Path) -> anyhow::Result<()> {
    let service = Arc::new(Service::new(dir));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(guard::serve_stdio(QuarryMcp::new(service)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn coerced(tool: &str, args: Value) -> Value {
        let schema = tools().iter().find(|t| t.name == tool).unwrap();
        let mut args = args;
        coerce_strings(&mut args, &schema.input_schema);
        args
    }

    #[test]
    fn strings_that_spell_the_declared_type_are_read_as_it() {
        let args = coerced(
            "search",
            json!({"query": "42", "limit": "3", "repos": "[\"flask\"]", "explain": "true"}),
        );
        assert_eq!(
            args,
            json!({"query": "42", "limit": 3, "repos": ["flask"], "explain": true})
        );
        let parsed: CodeSearchParams = serde_json::from_value(args).unwrap();
        assert_eq!(parsed.limit, Some(3));
        // A bare word where a list is declared is a list of it; what spells no declared type
        // is left for the type check to refuse.
        assert_eq!(
            coerced("search", json!({"query": "q", "repos": "flask"}))["repos"],
            json!(["flask"])
        );
        let args = coerced("search", json!({"query": "q", "limit": "lots"}));
        assert_eq!(args["limit"], "lots");
        assert!(serde_json::from_value::<CodeSearchParams>(args).is_err());
        // The singular `repo` (what an agent writes, and what `summary` refused as "expected
        // a sequence") is read as `repos`.
        assert_eq!(
            coerced("summary", json!({"file": "README.md", "repo": "redis"})),
            json!({"file": "README.md", "repos": ["redis"]})
        );
    }
}
