//! `search --rerank llm` with a command as the model: the protocol against a test program
//! (tests/fixtures/rerank_by_word.py ranks the chunks holding a word first), the cache, and every
//! way the command can fail — each leaves the first-stage order, with a note, and exit 0.

mod common;

use common::{result_paths as paths, Env};
use serde_json::Value;

fn retry_repo(env: &Env) {
    env.write(
        "net/connect.py",
        "def retry_connect(host):\n    \"\"\"Retry the connection.\"\"\"\n    return dial(host)\n",
    );
    env.write("net/upload.py", "def retry_upload(blob):\n    \"\"\"Retry the upload; zebra marks it.\"\"\"\n    return send(blob)\n");
    env.write(
        "net/download.py",
        "def retry_download(url):\n    \"\"\"Retry the download.\"\"\"\n    return fetch(url)\n",
    );
    env.write("net/resolve.py", "def retry_resolve(name):\n    \"\"\"Retry the lookup; zebra here too.\"\"\"\n    return lookup(name)\n");
}

fn fixture() -> String {
    format!(
        "python3 {}/tests/fixtures/rerank_by_word.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn set(env: &Env, key: &str, value: &str) {
    env.ok(&["config", "set", key, value]);
}

#[test]
fn a_command_reorders_the_top_results_and_the_cache_answers_the_second_time() {
    let env = Env::new();
    retry_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let first = env.json(&["search", "retry", "--mode", "lexical"]);
    let first_order = paths(&first);
    assert_eq!(first_order.len(), 4, "{first}");
    assert!(first.get("rerank").is_none());

    let log = env.home.path().join("calls.log");
    set(
        &env,
        "llm.command",
        &format!("{} zebra {}", fixture(), log.display()),
    );
    let json = env.json(&["search", "retry", "--mode", "lexical", "--rerank", "llm"]);
    let report = &json["rerank"];
    assert_eq!(report["applied"], true, "{json}");
    assert_eq!(report["cached"], false);
    assert_eq!(report["candidates"], 4);
    assert_eq!(report["ranked"], 2);
    assert!(report["provider"]
        .as_str()
        .unwrap()
        .starts_with("command:python3 "));
    // The two zebra chunks first, in the model's order (the fixture answers the last first),
    // then the others in their first-stage order.
    let zebra: Vec<&String> = first_order
        .iter()
        .filter(|p| p.ends_with("upload.py") || p.ends_with("resolve.py"))
        .collect();
    let rest: Vec<&String> = first_order.iter().filter(|p| !zebra.contains(p)).collect();
    let want: Vec<String> = [zebra[1], zebra[0], rest[0], rest[1]]
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(paths(&json), want);
    assert!(json["results"][0]["text"]
        .as_str()
        .unwrap()
        .contains("zebra"));

    // The same query over the same chunks: from the cache, the command is not run.
    let again = env.json(&["search", "retry", "--mode", "lexical", "--rerank", "llm"]);
    assert_eq!(again["rerank"]["cached"], true, "{again}");
    assert_eq!(paths(&again), want);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);

    // The setting turns it on without the flag; -k keeps the reordered head.
    set(&env, "search.rerank", "llm");
    let top = env.json(&["search", "retry", "--mode", "lexical", "-k", "1"]);
    assert_eq!(paths(&top), want[..1].to_vec());
    let explained = env.ok(&["search", "retry", "--mode", "lexical", "--explain"]);
    assert!(
        explained.contains("reranked by command:python3"),
        "{explained}"
    );
    let off = env.json(&["search", "retry", "--mode", "lexical", "--rerank", "none"]);
    assert_eq!(paths(&off), first_order);
}

#[test]
fn a_failing_model_leaves_the_first_stage_order_with_a_note() {
    let env = Env::new();
    retry_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let first_order = paths(&env.json(&["search", "retry", "--mode", "lexical"]));
    set(&env, "llm.timeout_s", "1");
    let log = env.home.path().join("calls.log");
    let cases = [
        ("quarry-no-such-model-command -p", "not found"),
        ("echo 'rate limited' >&2; exit 2", "rate limited"),
        ("sleep 20", "no answer within"),
        ("true", "answered nothing"),
        ("echo 'I cannot rank these.'", "named no candidate"),
        ("echo '99, 42, 0'", "named no candidate"),
    ];
    for (command, says) in cases {
        set(&env, "llm.command", command);
        let started = std::time::Instant::now();
        let out = env.run(&[
            "search", "retry", "--mode", "lexical", "--rerank", "llm", "--json",
        ]);
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{command}"
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(paths(&json), first_order, "{command}");
        assert_eq!(json["rerank"]["applied"], false, "{command}");
        let note = json["rerank"]["note"].as_str().unwrap();
        assert!(
            note.contains(says) && note.contains("first-stage order kept"),
            "{command}: {note}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("rerank:"),
            "{command}: the warning is said: {stderr}"
        );
    }
    // Failures are not cached: a working command is asked next time.
    set(
        &env,
        "llm.command",
        &format!("{} zebra {}", fixture(), log.display()),
    );
    let json = env.json(&["search", "retry", "--mode", "lexical", "--rerank", "llm"]);
    assert_eq!(json["rerank"]["applied"], true, "{json}");
    assert_eq!(json["rerank"]["cached"], false);
}

#[test]
fn ask_answers_with_checked_citations_or_gives_the_chunks() {
    let env = Env::new();
    retry_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let first = env.json(&["search", "retry upload", "--mode", "lexical"]);
    let top = &first["results"][0];
    let cited = format!(
        "{}:{}-{}",
        top["path"].as_str().unwrap(),
        top["start_line"],
        top["end_line"]
    );
    set(
        &env,
        "llm.command",
        &format!(
            "python3 {}/tests/fixtures/answer_from_chunks.py",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let json = env.json(&["ask", "retry upload", "--mode", "lexical"]);
    let answer = json["answer"].as_str().unwrap();
    assert!(
        answer.contains(&cited) && answer.contains("'retry upload'"),
        "{json}"
    );
    let citations = json["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1, "{json}");
    assert_eq!(citations[0]["path"], top["path"]);
    assert_eq!(
        json["dropped_citations"], 1,
        "invented/settings.py is not a given chunk"
    );
    assert_eq!(json["search"]["results"][0]["path"], top["path"]);
    assert!(json["search"]["results"][0]["text"].is_string());

    let human = env.ok(&["search", "retry upload", "--mode", "lexical", "--answer"]);
    assert!(
        human.contains("sources:") && human.contains(&cited),
        "{human}"
    );
    assert!(human.contains("1 citation(s) dropped"), "{human}");

    // No model: say so, give the ranked chunks, exit 0.
    set(&env, "llm.command", "quarry-no-such-model-command -p");
    let out = env.run(&["ask", "retry upload", "--mode", "lexical"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no answer") && stderr.contains("not found"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(top["path"].as_str().unwrap()), "{stdout}");
    let json = env.json(&["ask", "retry upload", "--mode", "lexical"]);
    assert!(json["answer"].is_null() && json["note"].as_str().unwrap().contains("ranked chunks"));
}

#[test]
fn agentic_search_runs_follow_ups_and_stops_when_nothing_new_comes() {
    let env = Env::new();
    retry_repo(&env);
    env.write(
        "dns/cache.py",
        "def cached_lookup(name):\n    return CACHE[name]\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let search = |extra: &[&str]| {
        let mut args = vec!["search", "retry the upload", "--mode", "lexical"];
        args.extend_from_slice(extra);
        env.json(&args)
    };

    // Offline: the follow-up adds the names the top results define.
    let json = search(&["--agentic", "offline"]);
    let report = &json["agentic"];
    assert_eq!(report["provider"], "offline", "{json}");
    let first_round = report["rounds"][0]["queries"][0].as_str().unwrap();
    assert!(
        first_round.starts_with("retry the upload ") && first_round.contains("retry_"),
        "{json}"
    );

    // A model that proposes a name the first search could not find: its file joins the list.
    env.ok(&["config", "set", "llm.command", "echo '1. cached_lookup'"]);
    let json = search(&["--agentic"]);
    let report = &json["agentic"];
    assert_eq!(
        report["provider"], "command:echo '1. cached_lookup'",
        "{json}"
    );
    assert_eq!(report["rounds"][0]["queries"][0], "cached_lookup");
    assert_eq!(report["rounds"][0]["new_files"], 1);
    // The same proposal again is not asked twice: one round.
    assert_eq!(report["rounds"].as_array().unwrap().len(), 1);
    assert!(paths(&json).contains(&"dns/cache.py".to_string()), "{json}");
    assert_eq!(paths(&json)[0], paths(&search(&[]))[0]);

    // A failing model: the first search's results, and a note.
    env.ok(&["config", "set", "llm.command", "exit 4"]);
    let json = search(&["--agentic", "llm"]);
    assert!(
        json["agentic"]["note"]
            .as_str()
            .unwrap()
            .contains("stopped after 0 round"),
        "{json}"
    );
    assert!(!paths(&json).contains(&"dns/cache.py".to_string()));
    // ... said in text mode too, not only in the JSON.
    let out = env.run(&[
        "search",
        "retry the upload",
        "--mode",
        "lexical",
        "--agentic",
        "llm",
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("agentic search:") && said.contains("stopped after 0 round"),
        "{said}"
    );

    // A reply that is not a list of searches is not searched for; the note says so.
    env.ok(&[
        "config",
        "set",
        "llm.command",
        "echo '<html><body>502 Bad Gateway</body></html>'",
    ]);
    let json = search(&["--agentic", "llm"]);
    assert_eq!(
        json["agentic"]["rounds"].as_array().unwrap().len(),
        0,
        "{json}"
    );
    assert!(
        json["agentic"]["note"]
            .as_str()
            .unwrap()
            .contains("not a list of searches"),
        "{json}"
    );

    // The model reads every result's text, whatever the answer's budget of full texts.
    let prompt = env.home.path().join("prompt.txt");
    let command = format!("cat > '{}'; echo cached_lookup", prompt.display());
    env.ok(&["config", "set", "llm.command", &command]);
    search(&["--agentic", "llm", "--full-text", "1"]);
    let prompt = std::fs::read_to_string(&prompt).unwrap();
    let shown: Vec<&str> = prompt
        .split("<result ")
        .skip(1)
        .map(|block| block.split_once(">\n").unwrap().1)
        .map(|rest| rest.split("\n</result>").next().unwrap())
        .collect();
    assert!(shown.len() >= 2, "{prompt}");
    assert!(shown.iter().all(|text| !text.trim().is_empty()), "{prompt}");
}
