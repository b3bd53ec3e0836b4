//! Call sites across grammars: the called name (last segment) and the definition it is in.

use quarry_chunk::{chunk_file, ChunkOptions};
use quarry_core::Language;

fn calls(language: Language, text: &str) -> Vec<(Option<String>, String, u32)> {
    chunk_file(language, text, &ChunkOptions::default())
        .calls
        .into_iter()
        .map(|c| (c.caller, c.callee, c.line))
        .collect()
}

fn has(
    found: &[(Option<String>, String, u32)],
    caller: Option<&str>,
    callee: &str,
    line: u32,
) -> bool {
    found
        .iter()
        .any(|(c, n, l)| c.as_deref() == caller && n == callee && *l == line)
}

/// (language, source, expected (caller, callee, line) triples)
type Case = (
    Language,
    &'static str,
    &'static [(Option<&'static str>, &'static str, u32)],
);

#[test]
fn calls_are_found_in_every_common_shape() {
    let cases: &[Case] = &[
        (
            Language::Python,
            "import os\n\nclass Queue:\n    def push(self, job):\n        self.jobs.append(job)\n        notify(job)\n\ndef main():\n    q = Queue()\n    q.push(os.path.join('a', 'b'))\n",
            &[
                (Some("Queue.push"), "append", 5),
                (Some("Queue.push"), "notify", 6),
                (Some("main"), "Queue", 9),
                (Some("main"), "push", 10),
                (Some("main"), "join", 10),
            ],
        ),
        (
            Language::Rust,
            "struct Config;\nimpl Config {\n    fn load() -> Config {\n        let t = std::fs::read_to_string(\"x\").unwrap();\n        Config::parse(&t)\n    }\n}\nfn main() {\n    let c = Config::load();\n    c.validate::<u8>();\n}\n",
            &[
                (Some("Config.load"), "read_to_string", 4),
                (Some("Config.load"), "unwrap", 4),
                (Some("Config.load"), "parse", 5),
                (Some("main"), "load", 9),
                (Some("main"), "validate", 10),
            ],
        ),
        (
            Language::TypeScript,
            "export class UploadQueue {\n  requeue(job: Job): void {\n    setTimeout(() => this.push(job), 10);\n    const r = new Retry(job);\n  }\n}\n",
            &[
                (Some("UploadQueue.requeue"), "setTimeout", 3),
                (Some("UploadQueue.requeue"), "push", 3),
                (Some("UploadQueue.requeue"), "Retry", 4),
            ],
        ),
        (
            Language::Go,
            "package main\n\nfunc run(s *Server) error {\n\ts.Start()\n\treturn fmt.Errorf(\"x\")\n}\n",
            &[(Some("run"), "Start", 4), (Some("run"), "Errorf", 5)],
        ),
        (
            Language::Java,
            "class A {\n  void go() {\n    helper.save(x);\n    B b = new B();\n  }\n}\n",
            &[(Some("A.go"), "save", 3), (Some("A.go"), "B", 4)],
        ),
    ];
    for (language, text, expected) in cases {
        let found = calls(*language, text);
        for (caller, callee, line) in *expected {
            assert!(
                has(&found, *caller, callee, *line),
                "{language:?}: missing {caller:?} -> {callee} at {line} in {found:?}"
            );
        }
    }
}

#[test]
fn text_and_markdown_have_no_calls() {
    assert!(calls(Language::Markdown, "# Title\n\ncall(me)\n").is_empty());
    assert!(calls(Language::Text, "call(me)\n").is_empty());
}
