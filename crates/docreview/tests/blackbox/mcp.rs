//! `docreview mcp` as an agent uses it: the real binary as a child process, driven by the
//! official SDK's client over stdio; a full review in one run, with the state read back
//! through the API.

use crate::support;

use crate::support::{SAMPLE_HTML, Server};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// The most characters an answer may have.
const ANSWER_LIMIT: usize = 25_000;

type McpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The tool's answer as JSON, and whether it was an error. Every answer, refusals included,
/// must be whole JSON of at most 25,000 characters.
fn answer(result: &CallToolResult) -> (Value, bool) {
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default();
    let chars = text.chars().count();
    assert!(chars <= ANSWER_LIMIT, "an answer of {chars} characters");
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("an answer that is not JSON ({error}): {text}"));
    (value, result.is_error.unwrap_or(false))
}

async fn call(client: &McpClient, tool: &'static str, arguments: Value) -> (Value, bool) {
    let params = CallToolRequestParams::new(tool)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let result = client.call_tool(params).await.expect("the tool answers");
    answer(&result)
}

/// A call that must succeed.
async fn ok(client: &McpClient, tool: &'static str, arguments: Value) -> Value {
    let (value, failed) = call(client, tool, arguments).await;
    assert!(!failed, "{value}");
    value
}

/// A call that must be refused naming `argument`; the refusal's message.
async fn refused(
    client: &McpClient,
    tool: &'static str,
    arguments: Value,
    argument: &str,
) -> String {
    let (value, failed) = call(client, tool, arguments).await;
    assert!(failed, "refused: {value}");
    assert_eq!(value["argument"], argument, "{value}");
    value["message"].as_str().expect("a message").to_string()
}

/// `docreview mcp` for `token`, driven by rmcp's client; the config directory must outlive it.
async fn agent(server: &Server, token: &str) -> (McpClient, tempfile::TempDir) {
    let config = tempfile::tempdir().expect("config dir");
    let command = tokio::process::Command::new(support::binary()).configure(|cmd| {
        cmd.arg("mcp")
            .env("XDG_CONFIG_HOME", config.path())
            .env("DOCREVIEW_URL", &server.base)
            .env("DOCREVIEW_TOKEN", token)
            .env("RUST_LOG", "off");
    });
    let transport = TokioChildProcess::new(command).expect("spawn docreview mcp");
    let client = ().serve(transport).await.expect("initialize");
    (client, config)
}

/// Every page of `method` from its first, following nextCursor; the items of `list` in order.
async fn all_pages(client: &McpClient, arguments: Value, list: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut pages = 0;
    let mut arguments = arguments;
    loop {
        let page = ok(client, "reviews_read", arguments.clone()).await;
        pages += 1;
        items.extend(page[list].as_array().expect("a list").iter().cloned());
        match page["nextCursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => return (items, pages),
        }
        assert!(pages < 1_000, "paging ends");
    }
}

/// Each value once, and `expected` of them.
fn once_each(ids: impl IntoIterator<Item = String>, expected: usize) {
    let ids: Vec<String> = ids.into_iter().collect();
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "no item twice");
    assert_eq!(ids.len(), expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_reviews_a_document_in_one_run() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = owner.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
    for expected in [
        "reviews_read",
        "run_write",
        "comment_write",
        "document_write",
    ] {
        assert!(names.contains(&expected.to_string()), "{names:?}");
    }
    let read_only = tools
        .iter()
        .find(|tool| tool.name == "reviews_read")
        .and_then(|tool| tool.annotations.as_ref())
        .and_then(|annotations| annotations.read_only_hint);
    assert_eq!(read_only, Some(true));

    let (outline, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "outline", "review_id": id }),
    )
    .await;
    assert!(!failed, "{outline}");
    assert!(outline.to_string().contains("Introduction"), "{outline}");

    let (run, failed) = call(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id, "title": "Pass" }),
    )
    .await;
    assert!(!failed, "{run}");
    let run_id = run["id"].as_str().expect("run id").to_string();

    // Twenty comments, one on a quote the document does not have.
    let mut comments: Vec<Value> = (0..19)
        .map(|i| json!({ "body": format!("Note {i}"), "quote": "quick brown fox", "category": "revise" }))
        .collect();
    comments.insert(7, json!({ "body": "Lost", "quote": "a purple elephant" }));
    let (written, failed) = call(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_id, "comments": comments }),
    )
    .await;
    assert!(!failed, "{written}");
    assert_eq!(
        written["written"].as_array().map(Vec::len),
        Some(19),
        "{written}"
    );
    assert_eq!(written["commentsRevision"], 1, "one batch, one change");
    let refused = written["failed"].as_array().expect("failed");
    assert_eq!(refused.len(), 1, "{written}");
    assert_eq!(refused[0]["index"], 7);
    assert_eq!(refused[0]["error"], "quote_not_found");
    assert!(
        written["next"]
            .as_str()
            .unwrap_or_default()
            .contains("copied exactly")
    );

    // The text of a section, paged, at the positions anchors use.
    let (text, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "section_id": "intro", "offset": 4, "limit": 9 }),
    )
    .await;
    assert!(!failed, "{text}");
    // A line break shows where the heading meets the paragraph; positions do not count it.
    assert_eq!(text["text"], "oduction\nT");
    assert_eq!(text["start"], 4);
    assert_eq!(text["nextOffset"], 13);
    let (whole, _) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id }),
    )
    .await;
    assert!(
        whole["text"]
            .as_str()
            .unwrap_or_default()
            .ends_with("Is the fox quick enough?")
    );
    assert!(whole["nextOffset"].is_null());
    let (_, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "section_id": "nowhere" }),
    )
    .await;
    assert!(failed, "an unknown section is refused");

    let (done, failed) = call(
        &client,
        "run_write",
        json!({ "method": "complete", "review_id": id, "run_id": run_id, "summary": "19 notes." }),
    )
    .await;
    assert!(!failed, "{done}");
    assert_eq!(done["status"], "completed");

    let (page, _) = call(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id }),
    )
    .await;
    assert_eq!(page["total"], 19);
    let (found, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "search", "q": "Note", "review_id": id }),
    )
    .await;
    assert!(!failed, "{found}");
    assert!(
        !found["results"].as_array().expect("results").is_empty(),
        "{found}"
    );
    let (refused, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "search", "q": "Note", "status": "pending" }),
    )
    .await;
    assert!(failed, "an unknown status is refused: {refused}");
    assert_eq!(refused["argument"], "status", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .contains("open, closed"),
        "{refused}"
    );

    // An error names the way out instead of failing the session.
    let (missing, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "get", "review_id": "rv_nope" }),
    )
    .await;
    assert!(failed);
    assert!(
        missing["message"]
            .as_str()
            .unwrap_or_default()
            .contains("reviews_read list"),
        "{missing}"
    );

    client.cancel().await.expect("close");

    // The server holds what the run wrote, no longer as drafts.
    let read = owner.get(&format!("/api/reviews/{id}")).await;
    let body = read.expect(200);
    let kept = body["review"]["comments"].as_array().expect("comments");
    assert_eq!(kept.len(), 19);
    assert!(
        kept.iter()
            .all(|c| c["provisional"] == false && c["runId"] == run_id.as_str())
    );
    assert_eq!(body["review"]["aiReviewRuns"][0]["summary"], "19 notes.");
}

/// `docreview mcp` as a child process driven by raw lines.
struct RawMcp {
    _config: tempfile::TempDir,
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

fn raw_mcp(server: &Server) -> RawMcp {
    use tokio::io::AsyncBufReadExt;
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "comments");
    let config = tempfile::tempdir().expect("config dir");
    let mut child = tokio::process::Command::new(support::binary())
        .arg("mcp")
        .env("XDG_CONFIG_HOME", config.path())
        .env("DOCREVIEW_URL", &server.base)
        .env("DOCREVIEW_TOKEN", &token)
        .env("RUST_LOG", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn docreview mcp");
    RawMcp {
        stdin: child.stdin.take().expect("stdin"),
        stdout: tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines(),
        _config: config,
        _child: child,
    }
}

/// An `initialize` request with id 1, as a line.
fn initialize_line() -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" } }
    });
    format!("{initialize}\n")
}

/// Every answer `docreview mcp` sends until it has answered `initialize` and `errors` more
/// lines with an error: the errors' codes and ids, in order.
async fn errors_then_initialized(
    stdout: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    errors: usize,
) -> Vec<(i64, Value)> {
    let mut seen = Vec::new();
    let mut initialized = false;
    while seen.len() < errors || !initialized {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), stdout.next_line())
            .await
            .expect("an answer within 20 s")
            .expect("read")
            .expect("a line before the end");
        let answer: Value = serde_json::from_str(&line).expect("every answer is JSON");
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        if let Some(code) = answer["error"]["code"].as_i64() {
            assert!(
                answer.get("id").is_some(),
                "an error answer has an id: {answer}"
            );
            seen.push((code, answer["id"].clone()));
        } else {
            assert_eq!(answer["id"], 1, "{answer}");
            assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
            initialized = true;
        }
    }
    seen
}

/// A line that is not JSON text (invalid UTF-8, a lone surrogate escape, cut-off JSON) is
/// answered with JSON-RPC's parse error (`-32700`, `id` null), and the server keeps serving:
/// an `initialize` sent after them is answered as usual.
#[tokio::test(flavor = "multi_thread")]
async fn lines_that_are_not_json_get_a_parse_error_and_the_server_goes_on() {
    use tokio::io::AsyncWriteExt;
    let server = Server::start();
    let mut mcp = raw_mcp(&server);
    mcp.stdin
        .write_all(b"\xff\xfe not UTF-8\n{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\"}\n{\"jsonrpc\":\n")
        .await
        .expect("write");
    mcp.stdin
        .write_all(initialize_line().as_bytes())
        .await
        .expect("write");
    mcp.stdin.flush().await.expect("flush");
    let errors = errors_then_initialized(&mut mcp.stdout, 3).await;
    assert_eq!(errors, vec![(-32700, Value::Null); 3]);
}

/// JSON that is not a message the server reads (params of the wrong type, another JSON-RPC
/// version, no method) is answered with JSON-RPC's invalid request (`-32600`) carrying the
/// request's own id, so the client waiting for that id hears back; `null` when it has none (a
/// bad notification of MCP's own too).
#[tokio::test(flavor = "multi_thread")]
async fn requests_that_cannot_be_read_are_answered_with_their_id() {
    use tokio::io::AsyncWriteExt;
    let server = Server::start();
    let mut mcp = raw_mcp(&server);
    mcp.stdin
        .write_all(initialize_line().as_bytes())
        .await
        .expect("write");
    mcp.stdin
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":7}"#,
                "\n",
                r#"{"jsonrpc":"1.0","id":"four","method":"ping"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":6}"#,
                "\n",
                r#"{"foo":1}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":7}"#,
                "\n",
            )
            .as_bytes(),
        )
        .await
        .expect("write");
    mcp.stdin.flush().await.expect("flush");
    let mut errors = errors_then_initialized(&mut mcp.stdout, 5).await;
    errors.sort_by_key(|(code, id)| (*code, id.to_string()));
    assert_eq!(
        errors,
        vec![
            (-32600, json!("four")),
            (-32600, json!(5)),
            (-32600, json!(6)),
            (-32600, Value::Null),
            (-32600, Value::Null),
        ]
    );
}

/// The batch answer's pages (the first answer, then `results`): failed and written items.
async fn batch_pages(client: &McpClient, first: Value) -> (Vec<Value>, Vec<Value>) {
    let mut failed = Vec::new();
    let mut written = Vec::new();
    let mut page = first;
    loop {
        failed.extend(page["failed"].as_array().expect("failed").iter().cloned());
        written.extend(page["written"].as_array().expect("written").iter().cloned());
        let Some(cursor) = page["nextCursor"].as_str() else {
            return (failed, written);
        };
        page = ok(
            client,
            "reviews_read",
            json!({ "method": "results", "cursor": cursor }),
        )
        .await;
    }
}

/// A document of `paragraphs` paragraphs, each with a sentence no other has.
fn numbered_document(paragraphs: usize) -> String {
    let mut html = String::from("<!doctype html><html><body><h1 id=\"top\">Numbers</h1>");
    for i in 0..paragraphs {
        html.push_str(&format!(
            "<p>Paragraph {i} says something about item {i}.</p>"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// A batch of 400 (a quarter refused, with candidates), a run of 800 comments completed, and
/// a review of 1,500 comments: every answer whole and within the limit, and paging through
/// each yields every item exactly once; long bodies and replies read whole through `thread`.
#[tokio::test(flavor = "multi_thread")]
async fn batches_runs_and_reviews_with_many_comments_page_whole() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = owner.upload("Numbers", &numbered_document(40)).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id, "title": "Many" }),
    )
    .await;
    let run_a = run["id"].as_str().expect("run id").to_string();
    // 400 items: every fourth quotes a passage with a typo; bodies are long
    // and full of characters JSON escapes.
    let items: Vec<Value> = (0..400)
        .map(|i| {
            let quote = if i % 4 == 3 {
                format!("Paragraph {0} says somthing about item {0}", i % 40)
            } else {
                format!("about item {}.", i % 40)
            };
            json!({ "body": format!("Note {i}: {}", "\"\\".repeat(400)), "quote": quote })
        })
        .collect();
    let first = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_a, "comments": items }),
    )
    .await;
    assert_eq!(first["writtenTotal"], 300, "{first}");
    assert_eq!(first["failedTotal"], 100);
    assert!(
        first["nextCursor"].is_string(),
        "a batch of 400 takes pages"
    );
    let (failed, written) = batch_pages(&client, first).await;
    let mut indexes: Vec<u64> = failed
        .iter()
        .chain(&written)
        .map(|item| item["index"].as_u64().expect("index"))
        .collect();
    indexes.sort_unstable();
    assert_eq!(indexes, (0..400).collect::<Vec<u64>>(), "every item once");
    assert!(failed.iter().all(|f| f["index"].as_u64().unwrap() % 4 == 3));
    assert!(failed.iter().all(|f| f["error"] == "quote_not_found"));
    // A candidate goes back as it is and anchors where it was offered.
    let candidate = failed[0]["candidates"][0].clone();
    assert!(candidate["position"].is_u64(), "{candidate}");
    let mut retry = candidate.clone();
    retry["body"] = json!("Retried");
    let again = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_a, "comments": [retry] }),
    )
    .await;
    assert_eq!(again["writtenTotal"], 1, "{again}");
    assert_eq!(again["written"][0]["anchor"], "exact");

    // 499 more: a run of 800.
    let items: Vec<Value> = (0..499)
        .map(|i| json!({ "body": format!("More {i}"), "quote": format!("about item {}.", i % 40) }))
        .collect();
    let more = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_a, "comments": items }),
    )
    .await;
    assert_eq!(more["writtenTotal"], 499, "{more}");
    let (_, written_more) = batch_pages(&client, more).await;
    assert_eq!(written_more.len(), 499);
    let done = ok(
        &client,
        "run_write",
        json!({ "method": "complete", "review_id": id, "run_id": run_a, "summary": "800 notes." }),
    )
    .await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["comments"], 800,
        "the run's comments counted, not listed"
    );
    let (in_run, pages) = all_pages(
        &client,
        json!({ "method": "comments", "review_id": id, "run_id": run_a }),
        "comments",
    )
    .await;
    assert!(pages > 1);
    once_each(
        in_run.iter().map(|c| c["id"].as_str().unwrap().to_string()),
        800,
    );

    // A second run of 700, one comment with a 20,000-character body and a long reply.
    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id }),
    )
    .await;
    let run_b = run["id"].as_str().expect("run id").to_string();
    let long_body: String = "\"長\\\n".repeat(5_000);
    let mut items: Vec<Value> = (0..699)
        .map(|i| json!({ "body": format!("Second {i}"), "section_id": "top" }))
        .collect();
    items.push(json!({ "body": long_body, "quote": "about item 3." }));
    let second = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_b, "comments": items }),
    )
    .await;
    let (_, written_b) = batch_pages(&client, second).await;
    assert_eq!(written_b.len(), 700);
    let long_id = written_b
        .iter()
        .find(|w| w["index"] == 699)
        .and_then(|w| w["id"].as_str())
        .expect("the long comment")
        .to_string();
    ok(
        &client,
        "run_write",
        json!({ "method": "complete", "review_id": id, "run_id": run_b, "summary": "x".repeat(5_000) }),
    )
    .await;
    let long_reply: String = "回\"".repeat(10_000);
    ok(
        &client,
        "comment_write",
        json!({ "method": "reply", "review_id": id, "comment_id": long_id, "body": long_reply }),
    )
    .await;

    let got = ok(
        &client,
        "reviews_read",
        json!({ "method": "get", "review_id": id }),
    )
    .await;
    assert_eq!(got["comments"]["total"], 1_500, "{got}");
    assert_eq!(got["runsTotal"], 2);
    assert_eq!(got["runs"][0]["comments"], 700, "newest first, counted");
    assert_eq!(got["runs"][0]["summaryChars"], 5_000);

    let (all, _) = all_pages(
        &client,
        json!({ "method": "comments", "review_id": id }),
        "comments",
    )
    .await;
    once_each(
        all.iter().map(|c| c["id"].as_str().unwrap().to_string()),
        1_500,
    );
    let listed = all
        .iter()
        .find(|c| c["id"] == long_id.as_str())
        .expect("listed");
    assert_eq!(listed["bodyChars"], 20_000, "{listed}");

    // The thread, page by page, gives the body and the reply whole.
    let mut bodies: Vec<String> = Vec::new();
    let mut arguments = json!({ "method": "thread", "review_id": id, "comment_id": long_id });
    let mut pages = 0;
    loop {
        let page = ok(&client, "reviews_read", arguments.clone()).await;
        pages += 1;
        for message in page["messages"].as_array().expect("messages") {
            let part = message["body"].as_str().expect("body");
            match message["from"].as_u64() {
                Some(from) => {
                    let last = bodies.last_mut().expect("a message continued");
                    assert_eq!(last.chars().count() as u64, from);
                    last.push_str(part);
                }
                None => bodies.push(part.to_string()),
            }
        }
        match page["nextCursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => break,
        }
    }
    assert!(pages > 2, "{pages}");
    assert_eq!(bodies, vec!["\"長\\\n".repeat(5_000), long_reply]);
    client.cancel().await.expect("close");
}

/// An outline of 1,500 headings (one very long, one with an id longer than an answer) pages
/// whole.
#[tokio::test(flavor = "multi_thread")]
async fn an_outline_of_1500_headings_pages_whole() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut html = String::from("<!doctype html><html><body>");
    for i in 0..1_500 {
        let extra = if i == 700 {
            "long ".repeat(1_000)
        } else {
            String::new()
        };
        html.push_str(&format!(
            "<h2 id=\"{}\">Heading number {i} of the \"outline\" {extra}</h2><p>Text {i}.</p>",
            if i == 1_000 {
                "y".repeat(30_000)
            } else {
                format!("s{i}")
            }
        ));
    }
    html.push_str("</body></html>");
    let review = owner.upload("Headings", &html).await;
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;
    let (sections, pages) = all_pages(
        &client,
        json!({ "method": "outline", "review_id": review.review_id }),
        "sections",
    )
    .await;
    assert!(pages > 2, "{pages}");
    assert_eq!(sections.len(), 1_500);
    // A section whose id alone is longer than an answer is named in its place.
    assert!(
        sections[1_000]["omitted"].is_string(),
        "{}",
        sections[1_000]
    );
    once_each(
        sections
            .iter()
            .filter_map(|s| s["id"].as_str().map(str::to_string)),
        1_499,
    );
    assert_eq!(sections[700]["id"], "s700");
    assert!(sections[700]["headingChars"].as_u64().unwrap() > 5_000);

    // A cursor continues only what gave it: not another method, document or filter.
    let first = ok(
        &client,
        "reviews_read",
        json!({ "method": "outline", "review_id": review.review_id }),
    )
    .await;
    let cursor = first["nextCursor"].as_str().expect("a cursor");
    let other = owner.upload("Other", SAMPLE_HTML).await;
    for (arguments, names) in [
        (
            json!({ "method": "comments", "review_id": review.review_id, "cursor": cursor }),
            "method `outline`",
        ),
        (
            json!({ "method": "get", "review_id": review.review_id, "cursor": cursor }),
            "method `outline`",
        ),
        (
            json!({ "method": "outline", "review_id": other.review_id, "cursor": cursor }),
            "document",
        ),
    ] {
        let message = refused(&client, "reviews_read", arguments, "cursor").await;
        assert!(message.contains(names), "{message}");
    }
    client.cancel().await.expect("close");
}

/// Full pages of Chinese and Japanese are 20,000 characters (not a third of that, as a count
/// of bytes would make them); text JSON escapes is paged shorter; every page is whole and the
/// pages cover the text exactly once, at the positions anchors use.
#[tokio::test(flavor = "multi_thread")]
async fn pages_of_chinese_japanese_and_escaped_text_are_whole() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut html = String::from("<!doctype html><html><body><h1 id=\"zh\">中文</h1>");
    for i in 0..150 {
        html.push_str(&format!(
            "<p>{}{i}</p>",
            "这是一个测试段落，用于检查分页。".repeat(20)
        ));
    }
    html.push_str("<h1 id=\"ja\">日本語</h1>");
    for _ in 0..100 {
        html.push_str(&format!(
            "<p>{}</p>",
            "これは日本語のテキストです。".repeat(25)
        ));
    }
    html.push_str("<h1 id=\"q\">Quotes</h1><pre>");
    html.push_str(&"\"\\\t&quot;".repeat(8_000));
    html.push_str("</pre></body></html>");
    let review = owner.upload("CJK", &html).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let extracted = docreview_text::extract(&html);
    let text = docreview_text::IndexedText::new(extracted.text.clone());
    let length = text.char_len();
    let mut arguments = json!({ "method": "text", "review_id": id });
    let mut at = 0;
    let mut sizes = Vec::new();
    loop {
        let page = ok(&client, "reviews_read", arguments.clone()).await;
        let (start, end) = (
            usize::try_from(page["start"].as_u64().unwrap()).unwrap(),
            usize::try_from(page["end"].as_u64().unwrap()).unwrap(),
        );
        assert_eq!(start, at, "pages follow each other");
        assert_eq!(
            page["text"],
            docreview_text::readable(&text, &extracted.block_breaks, start, end)
        );
        sizes.push(end - start);
        at = end;
        match page["nextOffset"].as_u64() {
            Some(offset) => arguments["offset"] = json!(offset),
            None => break,
        }
    }
    assert_eq!(at, length, "the whole text");
    assert_eq!(sizes[0], 20_000, "a full page of Chinese: {sizes:?}");
    assert!(sizes.last().is_some_and(|&s| s < 20_000));
    assert!(
        sizes.iter().any(|&s| s < 12_000),
        "escaped text pages shorter: {sizes:?}"
    );

    // A section, paged the same way.
    let page = ok(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "section_id": "ja" }),
    )
    .await;
    assert!(
        page["text"].as_str().unwrap().starts_with("日本語\nこれは"),
        "{}",
        &page["text"].as_str().unwrap()[..60]
    );
    client.cancel().await.expect("close");
}

/// Arguments are read strictly: a misspelled or unknown argument, a word that is not one of an
/// argument's values and a cursor this server did not give are refused, naming the argument;
/// the schemas say so (`additionalProperties: false`); a batch's hint is about what failed.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_arguments_bad_values_and_garbage_cursors_are_refused() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = owner.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let tools = client.list_all_tools().await.expect("tools");
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
    }
    let run_schema = tools
        .iter()
        .find(|tool| tool.name == "run_write")
        .map(|tool| Value::Object((*tool.input_schema).clone()))
        .expect("run_write");
    assert_eq!(
        run_schema["$defs"]["CommentItem"]["additionalProperties"], false,
        "{run_schema}"
    );
    let definitions: usize = tools
        .iter()
        .map(|tool| serde_json::to_string(tool).expect("JSON").chars().count())
        .sum();
    assert!(
        definitions <= 16_000,
        "tool definitions ≈ {} tokens",
        definitions / 4
    );

    let message = refused(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "sectionID": "intro" }),
        "sectionID",
    )
    .await;
    assert!(message.contains("did you mean `section_id`"), "{message}");
    let message = refused(
        &client,
        "reviews_read",
        json!({ "method": "list", "next_cursor": "abc" }),
        "next_cursor",
    )
    .await;
    assert!(message.contains("did you mean `cursor`"), "{message}");
    let message = refused(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id, "status": "garbage" }),
        "status",
    )
    .await;
    assert!(message.contains("open, closed"), "{message}");
    refused(
        &client,
        "reviews_read",
        json!({ "method": "skim", "review_id": id }),
        "method",
    )
    .await;
    refused(
        &client,
        "reviews_read",
        json!({ "method": "outline", "review_id": id, "offset": 10 }),
        "offset",
    )
    .await;
    for garbage in ["garbage", "50", "dr1~comments~x~~0~1"] {
        let message = refused(
            &client,
            "reviews_read",
            json!({ "method": "comments", "review_id": id, "cursor": garbage }),
            "cursor",
        )
        .await;
        assert!(message.contains("nextCursor"), "{message}");
    }
    for method in ["list", "search", "find", "results"] {
        refused(
            &client,
            "reviews_read",
            json!({ "method": method, "review_id": id, "q": "fox", "cursor": "garbage" }),
            "cursor",
        )
        .await;
    }
    let message = refused(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": "r",
                "comments": [{ "body": "a", "quote": "fox" }, { "body": "b", "sectionID": "intro" }] }),
        "comments[1].sectionID",
    )
    .await;
    assert!(message.contains("did you mean `section_id`"), "{message}");
    refused(
        &client,
        "run_write",
        json!({ "method": "finish", "review_id": id }),
        "method",
    )
    .await;
    refused(
        &client,
        "comment_write",
        json!({ "method": "reply", "review_id": id, "comment_id": "c", "text": "hi" }),
        "text",
    )
    .await;

    // Refusals inside a batch's answer: the hint is about what failed, not about quotes.
    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id }),
    )
    .await;
    let batch = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run["id"], "comments": [
            { "body": "fine", "quote": "quick brown fox" },
            { "body": "odd", "quote": "lazy dog", "category": "grumble" },
            { "body": "nul\u{0}", "quote": "lazy dog" },
        ] }),
    )
    .await;
    assert_eq!(batch["writtenTotal"], 1, "{batch}");
    let failed = batch["failed"].as_array().expect("failed");
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[0]["index"], 1);
    assert_eq!(failed[1]["index"], 2);
    let hint = batch["next"].as_str().expect("a hint");
    assert!(hint.contains("invalid_request"), "{hint}");
    assert!(!hint.contains("quote"), "the quotes were fine: {hint}");
    client.cancel().await.expect("close");
}

/// Where the HTML has no white space between blocks, text pages show a line break there (not
/// `PlanSend`, `SystemOwner`), at the anchors' positions; a quote copied across such a break
/// anchors exactly, to the text's own passage.
#[tokio::test(flavor = "multi_thread")]
async fn text_shows_where_blocks_meet_and_quotes_across_them_anchor() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let html = "<!doctype html><html><body><h1 id=\"plan\">Plan</h1><p>Send questions to Ada.</p>\
        <table><tr><td>System</td><td>Owner</td></tr><tr><td>ledger</td><td>Finance</td></tr></table>\
        <p>Done <b>bold</b>ly.</p></body></html>";
    let review = owner.upload("Blocks", html).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let page = ok(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id }),
    )
    .await;
    assert_eq!(
        page["text"],
        "Plan\nSend questions to Ada.\nSystem\nOwner\nledger\nFinance\nDone boldly."
    );
    assert_eq!(page["end"], 62, "positions count the text's own characters");
    let page = ok(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "offset": 26, "limit": 11 }),
    )
    .await;
    assert_eq!(page["text"], "System\nOwner");
    assert_eq!(page["nextOffset"], 37);

    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id }),
    )
    .await;
    let batch = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run["id"], "comments": [
            { "body": "Across a heading", "quote": "Plan\nSend questions" },
            { "body": "Across cells", "quote": "Owner\nledger" },
        ] }),
    )
    .await;
    assert_eq!(batch["writtenTotal"], 2, "{batch}");
    assert!(
        batch["written"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["anchor"] == "exact")
    );
    let reply = owner.get(&format!("/api/reviews/{id}")).await;
    let read = reply.expect(200);
    let comments = read["review"]["comments"].as_array().expect("comments");
    let anchor = |body: &str| {
        comments
            .iter()
            .find(|c| c["body"] == body)
            .map(|c| c["anchor"].clone())
            .expect("written")
    };
    assert_eq!(
        anchor("Across a heading")["position"],
        json!({ "start": 0, "end": 18 })
    );
    assert_eq!(
        anchor("Across a heading")["quote"]["exact"],
        "PlanSend questions"
    );
    assert_eq!(
        anchor("Across cells")["position"],
        json!({ "start": 32, "end": 43 })
    );
    assert_eq!(anchor("Across cells")["state"], "exact");
    client.cancel().await.expect("close");
}

/// What the bench counts over an agent's calls.
#[derive(Default)]
struct Tally {
    calls: usize,
    over_limit: usize,
    unparsable: usize,
    largest: usize,
}

impl Tally {
    /// A call, counted; its answer as JSON (`null` when it is not JSON) and whether it failed.
    async fn call(
        &mut self,
        client: &McpClient,
        tool: &'static str,
        arguments: Value,
    ) -> (Value, bool) {
        self.calls += 1;
        let params = CallToolRequestParams::new(tool)
            .with_arguments(arguments.as_object().cloned().unwrap_or_default());
        let result = client.call_tool(params).await.expect("the tool answers");
        let text = result
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.clone())
            .unwrap_or_default();
        let chars = text.chars().count();
        self.largest = self.largest.max(chars);
        if chars > ANSWER_LIMIT {
            self.over_limit += 1;
        }
        let value = serde_json::from_str(&text).unwrap_or_else(|_| {
            self.unparsable += 1;
            Value::Null
        });
        (value, result.is_error.unwrap_or(false))
    }
}

/// A generated document of about 1 MB of HTML in 40 sections: sentences of words drawn by a
/// fixed pseudo-random sequence, in paragraphs, lists and tables that meet without white space.
fn bench_document() -> String {
    const WORDS: &[&str] = &[
        "ledger",
        "owner",
        "system",
        "budget",
        "review",
        "anchor",
        "quote",
        "release",
        "plan",
        "risk",
        "server",
        "client",
        "paging",
        "cursor",
        "deadline",
        "finance",
        "migration",
        "schema",
        "backlog",
        "estimate",
        "contract",
        "vendor",
        "incident",
        "latency",
        "storage",
        "replica",
        "audit",
        "policy",
        "token",
        "scope",
        "support",
        "roadmap",
        "metric",
        "target",
        "quarter",
        "hiring",
        "training",
        "invoice",
        "customer",
        "partner",
        "pilot",
        "launch",
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut word = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        WORDS[usize::try_from(seed % WORDS.len() as u64).expect("small")]
    };
    let sentence = |word: &mut dyn FnMut() -> &'static str, n: usize| {
        let mut words: Vec<&str> = (0..n).map(|_| word()).collect();
        let first = words[0];
        let capital = first[..1].to_uppercase() + &first[1..];
        words[0] = "";
        format!("{capital}{}.", words.join(" "))
    };
    let mut html = String::from("<!doctype html><html><body><h1 id=\"top\">Bench</h1>");
    for section in 0..40 {
        html.push_str(&format!("<h2 id=\"s{section}\">Section {section}</h2>"));
        while html.len() < (section + 1) * 25_500 {
            let paragraph: Vec<String> = (0..6).map(|_| sentence(&mut word, 14)).collect();
            html.push_str(&format!("<p>{}</p>", paragraph.join(" ")));
            html.push_str(&format!(
                "<table><tr><td>{}</td><td>{}</td></tr></table><ul><li>{}</li><li>{}</li></ul>",
                word(),
                word(),
                sentence(&mut word, 8),
                sentence(&mut word, 8)
            ));
        }
    }
    html.push_str("</body></html>");
    html
}

/// A passage of a text page chosen to comment on: its place as the page shows it (line breaks
/// where blocks meet, which the text does not have), and where it must anchor.
struct Chosen {
    quote: String,
    start: usize,
    end: usize,
}

/// The `n`th passage of about 60 characters on a page from `page_start`, starting at a word,
/// some across a line break; with the text's positions (every `\n` on these pages is shown,
/// not the text's: the generated HTML has none).
fn choose(page_text: &str, page_start: usize, n: usize, of: usize) -> Chosen {
    let chars: Vec<char> = page_text.chars().collect();
    let mut from = chars.len() * n / of.max(1) + 7;
    if n.is_multiple_of(5)
        && let Some(at) = chars[from..].iter().position(|&c| c == '\n')
    {
        from += at.saturating_sub(25);
    }
    while from > 0 && !(chars[from - 1] == ' ' || chars[from - 1] == '\n') {
        from -= 1;
    }
    let mut to = (from + 60).min(chars.len());
    while to < chars.len() && chars[to].is_alphanumeric() {
        to += 1;
    }
    let shown: String = chars[from..to].iter().collect();
    let breaks_before = chars[..from].iter().filter(|&&c| c == '\n').count();
    let start = page_start + from - breaks_before;
    let length = shown.chars().filter(|&c| c != '\n').count();
    Chosen {
        quote: shown,
        start,
        end: start + length,
    }
}

/// One agent's review: outline, start, the reading (`read` gives the pages and the passages
/// chosen on them), 50 comments, complete; then what the server holds, checked.
async fn bench_agent(
    client: &McpClient,
    owner: &support::Client,
    id: &str,
    thorough: bool,
) -> (Tally, usize, usize, usize) {
    let mut tally = Tally::default();
    let (outline, _) = tally
        .call(
            client,
            "reviews_read",
            json!({ "method": "outline", "review_id": id }),
        )
        .await;
    let sections: Vec<String> = outline["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .filter(|s| s["level"] == 2)
        .map(|s| s["id"].as_str().expect("id").to_string())
        .collect();
    let (run, _) = tally
        .call(
            client,
            "run_write",
            json!({ "method": "start", "review_id": id, "title": "Bench" }),
        )
        .await;
    let run_id = run["id"].as_str().expect("run").to_string();
    let mut pages: Vec<(usize, String)> = Vec::new();
    if thorough {
        let mut arguments = json!({ "method": "text", "review_id": id });
        loop {
            let (page, _) = tally.call(client, "reviews_read", arguments.clone()).await;
            let start = usize::try_from(page["start"].as_u64().expect("start")).expect("usize");
            pages.push((start, page["text"].as_str().expect("text").to_string()));
            match page["nextOffset"].as_u64() {
                Some(offset) => arguments["offset"] = json!(offset),
                None => break,
            }
        }
    } else {
        for section in sections.iter().step_by(7).take(6) {
            let (page, _) = tally
                .call(
                    client,
                    "reviews_read",
                    json!({ "method": "text", "review_id": id, "section_id": section }),
                )
                .await;
            let start = usize::try_from(page["start"].as_u64().expect("start")).expect("usize");
            pages.push((start, page["text"].as_str().expect("text").to_string()));
        }
    }
    let chosen: Vec<Chosen> = (0..50)
        .map(|n| {
            let (start, text) = &pages[n * pages.len() / 50];
            choose(text, *start, n, 50)
        })
        .collect();
    let comments: Vec<Value> = chosen
        .iter()
        .enumerate()
        .map(|(n, c)| json!({ "body": format!("Bench note {n}"), "quote": c.quote, "category": "revise" }))
        .collect();
    let (batch, _) = tally
        .call(
            client,
            "run_write",
            json!({ "method": "comment", "review_id": id, "run_id": run_id, "comments": comments }),
        )
        .await;
    // An agent sends each failed item again with the first candidate offered.
    let retry: Vec<Value> = batch["failed"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|failure| {
            let mut item = failure["candidates"][0].clone();
            let index = usize::try_from(failure["index"].as_u64()?).ok()?;
            item.is_object().then(|| {
                item["body"] = json!(format!("Bench note {index}"));
                item
            })
        })
        .collect();
    if !retry.is_empty() {
        tally
            .call(
                client,
                "run_write",
                json!({ "method": "comment", "review_id": id, "run_id": run_id, "comments": retry }),
            )
            .await;
    }
    tally
        .call(
            client,
            "run_write",
            json!({ "method": "complete", "review_id": id, "run_id": run_id, "summary": "Bench." }),
        )
        .await;

    // What the server holds: each note once, exact, where the agent saw it.
    let reply = owner.get(&format!("/api/reviews/{id}")).await;
    let read = reply.expect(200);
    let held = read["review"]["comments"].as_array().expect("comments");
    let mut lost = 0;
    let mut misplaced = 0;
    for (n, expected) in chosen.iter().enumerate() {
        let body = format!("Bench note {n}");
        let found: Vec<&Value> = held
            .iter()
            .filter(|c| c["body"] == body.as_str() && c["runId"] == run_id.as_str())
            .collect();
        match found.as_slice() {
            [comment] => {
                let anchor = &comment["anchor"];
                let at = (
                    anchor["position"]["start"].as_u64(),
                    anchor["position"]["end"].as_u64(),
                );
                if anchor["state"] != "exact"
                    || at != (Some(expected.start as u64), Some(expected.end as u64))
                {
                    misplaced += 1;
                }
            }
            _ => lost += 1,
        }
    }
    let across = chosen.iter().filter(|c| c.quote.contains('\n')).count();
    (tally, lost, misplaced, across)
}

/// `bench/agent.sh`: a scripted agent reviews a generated 1 MB, 40-section document through
/// `docreview mcp` (rmcp's client): skimming (outline, the first page of 6 sections, 50
/// comments, complete) and thorough (every character read, 50 comments). Prints a table.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: bench/agent.sh"]
async fn agent_bench() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let html = bench_document();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;
    let tools = client.list_all_tools().await.expect("tools");
    let definitions: usize = tools
        .iter()
        .map(|tool| serde_json::to_string(tool).expect("JSON").chars().count())
        .sum();
    let text_chars = docreview_text::extract(&html).text.chars().count();

    let mut rows = Vec::new();
    for (name, thorough, target) in [("skimming", false, 12), ("thorough", true, 65)] {
        let review = owner.upload("Bench", &html).await;
        let started = std::time::Instant::now();
        let (tally, lost, misplaced, across) =
            bench_agent(&client, &owner, &review.review_id, thorough).await;
        rows.push(format!(
            "| {name} | {} (≤ {target}) | {} | {} | {} | {lost} | {misplaced} ({across} quotes across a block break) | {:.1} s |",
            tally.calls,
            tally.largest,
            tally.over_limit,
            tally.unparsable,
            started.elapsed().as_secs_f64()
        ));
    }
    println!(
        "document: {} bytes of HTML, {text_chars} characters of text, 40 sections",
        html.len()
    );
    println!(
        "tool definitions: {} tools, {definitions} characters ≈ {} tokens (characters / 4; ≤ 4,000)",
        tools.len(),
        definitions / 4
    );
    println!(
        "| agent | calls | largest answer (chars) | over 25,000 | not JSON | comments lost | misplaced | time |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for row in &rows {
        println!("{row}");
    }
    client.cancel().await.expect("close");
}

/// Pages the API gives that would not fit an answer (50 documents with long titles, a phrase
/// with hundreds of occurrences) are asked again for fewer items: paging through them still
/// yields every item exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn api_pages_too_long_for_an_answer_are_asked_in_smaller_pages() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    for i in 0..60 {
        let title = format!("{i:02} {}", "\"\\".repeat(145));
        owner.upload(&title, SAMPLE_HTML).await;
    }
    let mut html = String::from("<!doctype html><html><body><h1 id=\"a\">A</h1>");
    for i in 0..300 {
        html.push_str(&format!(
            "<p>{}{i}: the budget review {}</p>",
            "\"\\".repeat(40),
            "\\\"".repeat(40)
        ));
    }
    html.push_str("</body></html>");
    let review = owner.upload("Many occurrences", &html).await;
    let token = server.issue_token("ada@example.com", "docs,comments");
    let (client, _config) = agent(&server, &token).await;

    let (reviews, pages) = all_pages(&client, json!({ "method": "list" }), "reviews").await;
    assert!(pages >= 3, "{pages}");
    once_each(
        reviews
            .iter()
            .map(|r| r["reviewId"].as_str().unwrap().to_string()),
        61,
    );
    let (found, pages) = all_pages(
        &client,
        json!({ "method": "find", "review_id": review.review_id, "q": "budget review" }),
        "occurrences",
    )
    .await;
    assert!(pages > 6, "{pages}");
    once_each(
        found
            .iter()
            .map(|o| o["position"].as_u64().unwrap().to_string()),
        300,
    );
    // An occurrence goes back as a comment's place as it is.
    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": review.review_id }),
    )
    .await;
    let mut item = found[123].clone();
    item.as_object_mut().expect("object").remove("context");
    item["body"] = json!("This one");
    let batch = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": review.review_id, "run_id": run["id"], "comments": [item] }),
    )
    .await;
    assert_eq!(batch["writtenTotal"], 1, "{batch}");
    let reply = owner
        .get(&format!("/api/reviews/{}", review.review_id))
        .await;
    let read = reply.expect(200);
    assert_eq!(
        read["review"]["comments"][0]["anchor"]["position"]["start"],
        found[123]["position"]
    );
    client.cancel().await.expect("close");
}

/// `reviews_read` `notifications`: the caller's unread notifications, newest first.
#[tokio::test]
async fn agents_read_their_notifications() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    bob.post(
        &format!("/api/reviews/{}/comments", review.review_id),
        &json!({ "body": "first" }),
    )
    .await
    .expect(201);
    // Ada is told of Bob's comment once the outbox has fanned it out.
    let (client, _config) = agent(&server, ada.token().expect("token")).await;
    let mut answer = Value::Null;
    for _ in 0..250 {
        answer = ok(
            &client,
            "reviews_read",
            json!({ "method": "notifications" }),
        )
        .await;
        if answer["unreadCount"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(answer["unreadCount"], 1, "{answer}");
    assert_eq!(answer["notifications"][0]["reason"], "comment");
    assert_eq!(answer["notifications"][0]["excerpt"], "first");
    assert!(answer["nextCursor"].is_null());
    // Bob, who acted, has none.
    let (client, _config) = agent(&server, bob.token().expect("token")).await;
    let answer = ok(
        &client,
        "reviews_read",
        json!({ "method": "notifications" }),
    )
    .await;
    assert_eq!(answer["unreadCount"], 0, "{answer}");
}

/// A write that names the thread's revision as the agent read it is refused, with what to do,
/// once someone else changed that thread; with the current revision it goes through.
#[tokio::test(flavor = "multi_thread")]
async fn agents_answer_a_thread_as_they_read_it() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id;
    let written = ada
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "first" }),
        )
        .await;
    let comment_id = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (client, _config) = agent(&server, ada.token().expect("token")).await;
    let thread = ok(
        &client,
        "reviews_read",
        json!({ "method": "thread", "review_id": id, "comment_id": comment_id }),
    )
    .await;
    assert_eq!(thread["threadRevision"], 1, "{thread}");
    // Someone answers the thread meanwhile.
    ada.post(
        &format!("/api/reviews/{id}/comments/{comment_id}/thread"),
        &json!({ "body": "meanwhile" }),
    )
    .await
    .expect(201);
    let (refusal, failed) = call(
        &client,
        "comment_write",
        json!({ "method": "resolve", "review_id": id, "comment_id": comment_id, "thread_revision": 1 }),
    )
    .await;
    assert!(failed, "{refusal}");
    assert_eq!(refusal["error"], "thread revision conflict", "{refusal}");
    assert!(
        refusal["message"]
            .as_str()
            .expect("message")
            .contains("read it again"),
        "{refusal}"
    );
    let resolved = ok(
        &client,
        "comment_write",
        json!({ "method": "resolve", "review_id": id, "comment_id": comment_id, "thread_revision": 2 }),
    )
    .await;
    assert_eq!(resolved["status"], "closed");
    assert_eq!(resolved["threadRevision"], 3);
}

/// The review workflow through the existing tools (no new tool): `document_write` method
/// `decide`, `comment_write` methods `assign`, `unassign`, `react`, `unreact`; the workflow in
/// `get`, the assignee and reactions in `comments` and `thread`; refusals name the argument.
#[tokio::test(flavor = "multi_thread")]
async fn agents_decide_assign_and_react_through_the_existing_tools() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    server.user("bob@example.com", "Bob", &[], "docs,comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id;
    ada.post(
        &format!("/api/reviews/{id}/reviewers"),
        &json!({ "email": "bob@example.com", "dueAt": "2026-12-01" }),
    )
    .await
    .expect(201);
    let written = ada
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "first" }),
        )
        .await;
    let comment_id = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (client, _config) = agent(&server, ada.token().expect("token")).await;
    let tools = client.list_all_tools().await.expect("tools");
    assert_eq!(tools.len(), 4, "no tool was added");

    let got = ok(
        &client,
        "reviews_read",
        json!({ "method": "get", "review_id": id }),
    )
    .await;
    assert_eq!(got["workflow"]["state"], "open", "{got}");
    assert_eq!(got["workflow"]["outcome"], "pending");
    assert_eq!(got["workflow"]["reviewers"][0]["name"], "Bob");
    assert_eq!(got["workflow"]["reviewers"][0]["decision"], Value::Null);

    let decided = ok(
        &client,
        "document_write",
        json!({ "method": "decide", "review_id": id, "decision": "approved_with_changes",
                "body": "Two fixes" }),
    )
    .await;
    assert_eq!(decided["decision"], "approved_with_changes", "{decided}");
    assert_eq!(decided["workflow"]["outcome"], "approved_with_changes");
    assert_eq!(decided["workflow"]["decisions"], 1);
    let message = refused(
        &client,
        "document_write",
        json!({ "method": "decide", "review_id": id, "decision": "lgtm" }),
        "decision",
    )
    .await;
    assert!(message.contains("approved_with_changes"), "{message}");
    refused(
        &client,
        "document_write",
        json!({ "method": "decide", "review_id": id }),
        "decision",
    )
    .await;
    refused(
        &client,
        "document_write",
        json!({ "method": "upload" }),
        "html",
    )
    .await;

    let assigned = ok(
        &client,
        "comment_write",
        json!({ "method": "assign", "review_id": id, "comment_id": comment_id,
                "email": "bob@example.com" }),
    )
    .await;
    assert_eq!(assigned["assignee"], "Bob", "{assigned}");
    refused(
        &client,
        "comment_write",
        json!({ "method": "assign", "review_id": id, "comment_id": comment_id }),
        "email",
    )
    .await;
    let (refusal, failed) = call(
        &client,
        "comment_write",
        json!({ "method": "assign", "review_id": id, "comment_id": comment_id,
                "email": "nobody@example.com" }),
    )
    .await;
    assert!(failed, "{refusal}");
    assert_eq!(refusal["error"], "invalid_request", "{refusal}");

    let reacted = ok(
        &client,
        "comment_write",
        json!({ "method": "react", "review_id": id, "comment_id": comment_id, "emoji": "+1" }),
    )
    .await;
    assert_eq!(reacted["reactions"], json!({ "+1": 1 }), "{reacted}");
    let message = refused(
        &client,
        "comment_write",
        json!({ "method": "react", "review_id": id, "comment_id": comment_id, "emoji": "👍" }),
        "emoji",
    )
    .await;
    assert!(message.contains("+1 -1 laugh"), "{message}");

    let listed = ok(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id }),
    )
    .await;
    let item = &listed["comments"][0];
    assert_eq!(item["assignee"], "Bob", "{listed}");
    assert_eq!(item["reactions"], json!({ "+1": 1 }));
    let thread = ok(
        &client,
        "reviews_read",
        json!({ "method": "thread", "review_id": id, "comment_id": comment_id }),
    )
    .await;
    assert_eq!(thread["assignee"], "Bob", "{thread}");
    assert_eq!(thread["messages"][0]["reactions"], json!({ "+1": 1 }));

    let unreacted = ok(
        &client,
        "comment_write",
        json!({ "method": "unreact", "review_id": id, "comment_id": comment_id, "emoji": "+1" }),
    )
    .await;
    assert_eq!(unreacted["reactions"], json!({}));
    let unassigned = ok(
        &client,
        "comment_write",
        json!({ "method": "unassign", "review_id": id, "comment_id": comment_id }),
    )
    .await;
    assert_eq!(unassigned["assignee"], Value::Null);
    let listed = ok(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id }),
    )
    .await;
    assert!(listed["comments"][0].get("assignee").is_none(), "{listed}");
    client.cancel().await.expect("close");
}

/// Suggestions through the existing tools: `comments` and `thread` show a comment's suggestion,
/// `document_write` method `apply_suggestions` makes them a version; refusals are the API's.
#[tokio::test(flavor = "multi_thread")]
async fn agents_see_and_apply_suggestions() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let (id, base) = (review.review_id, review.latest_version_id);
    let written = ada
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "Slower", "category": "revise",
                     "locator": { "quote": { "exact": "quick brown" } },
                     "suggestion": { "text": "slow red" } }),
        )
        .await;
    let comment_id = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (client, _config) = agent(&server, ada.token().expect("token")).await;
    let listed = ok(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id }),
    )
    .await;
    assert_eq!(listed["comments"][0]["suggestion"], "slow red", "{listed}");
    let thread = ok(
        &client,
        "reviews_read",
        json!({ "method": "thread", "review_id": id, "comment_id": comment_id }),
    )
    .await;
    assert_eq!(thread["suggestion"], "slow red", "{thread}");

    // A run's batch may carry suggestions too; one where none may be fails that item alone.
    let run = ok(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id }),
    )
    .await;
    let written = ok(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run["id"], "comments": [
            { "body": "Drop it", "quote": "lazy ", "category": "delete", "suggestion": "" },
            { "body": "A note", "quote": "lazy", "suggestion": "idle" },
        ] }),
    )
    .await;
    assert_eq!(
        written["written"].as_array().map(Vec::len),
        Some(1),
        "{written}"
    );
    assert_eq!(written["failed"][0]["index"], 1, "{written}");
    assert_eq!(written["failed"][0]["error"], "invalid_request");
    assert!(
        written["failed"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("revise, add or delete"),
        "{written}"
    );
    ok(
        &client,
        "run_write",
        json!({ "method": "complete", "review_id": id, "run_id": run["id"], "summary": "One." }),
    )
    .await;
    let listed = ok(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id, "run_id": run["id"] }),
    )
    .await;
    assert_eq!(listed["comments"][0]["suggestion"], "", "{listed}");
    ok(
        &client,
        "comment_write",
        json!({ "method": "resolve", "review_id": id,
                "comment_id": listed["comments"][0]["id"] }),
    )
    .await;

    refused(
        &client,
        "document_write",
        json!({ "method": "apply_suggestions", "review_id": id, "base_version_id": base }),
        "comment_ids",
    )
    .await;
    let applied = ok(
        &client,
        "document_write",
        json!({ "method": "apply_suggestions", "review_id": id, "base_version_id": base,
                "comment_ids": [comment_id], "label": "applied" }),
    )
    .await;
    let version = applied["versionId"].as_str().expect("versionId");
    assert_eq!(applied["applied"], json!([comment_id]));
    assert_eq!(applied["review"]["latestVersionId"], version, "{applied}");
    assert_eq!(applied["review"]["comments"]["open"], 0);
    let (refusal, failed) = call(
        &client,
        "document_write",
        json!({ "method": "apply_suggestions", "review_id": id, "base_version_id": base,
                "comment_ids": [comment_id] }),
    )
    .await;
    assert!(failed, "{refusal}");
    assert_eq!(refusal["error"], "stale_target_version", "{refusal}");
    client.cancel().await.expect("close");
}
