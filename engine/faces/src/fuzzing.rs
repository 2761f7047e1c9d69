//! The bodies of the fuzz targets over the faces' protocols (`gtp_go`, `gtp_liuzhou`, `uci`,
//! `web_api`), here so the stable test suite runs the same checks over their corpora
//! (`fuzz/corpus/<target>/`, in `tests/fuzz_corpus.rs`). Each session plays with an agent that
//! answers at once, and no input reaches the file system or starts an answer that goes on.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use games::go::GoRules;
use games::liuzhou::Rules;

use crate::gtp::frame::read_request;
use crate::uci::{parse_command, UciCommand};

/// The most lines (or requests) one input feeds a session.
pub const MAX_LINES: usize = 200;

/// Checks that `answer` is one well-formed GTP response to the line `raw`: `=` or `?`, the
/// request's id when it had one, the text, and one blank line that ends it and nothing else.
fn check_gtp_answer(raw: &str, answer: &str) {
    let body = answer
        .strip_suffix("\n\n")
        .unwrap_or_else(|| panic!("{raw:?}: answer {answer:?} does not end with a blank line"));
    assert!(
        !body.contains("\n\n"),
        "{raw:?}: answer {answer:?} holds a blank line"
    );
    assert!(
        !body.chars().any(|c| c.is_control() && c != '\n'),
        "{raw:?}: answer {answer:?} holds a control character"
    );
    let rest = body
        .strip_prefix('=')
        .or_else(|| body.strip_prefix('?'))
        .unwrap_or_else(|| panic!("{raw:?}: answer {answer:?} starts with neither = nor ?"));
    let id = match read_request(raw) {
        Some(Ok(request)) => request.id,
        _ => rest.chars().take_while(char::is_ascii_digit).collect(),
    };
    let text = rest
        .strip_prefix(id.as_str())
        .unwrap_or_else(|| panic!("{raw:?}: answer {answer:?} does not echo id {id:?}"));
    assert!(
        text.is_empty() || text.starts_with(' ') || text.starts_with('\n'),
        "{raw:?}: answer {answer:?}: no space after the id"
    );
}

/// The lines of `data` a fuzzed GTP session is fed: at most [`MAX_LINES`], none of the
/// commands `skip` names.
fn gtp_lines(data: &[u8], skip: impl Fn(&str, &[String]) -> bool) -> Vec<String> {
    let text = String::from_utf8_lossy(data);
    text.split('\n')
        .take(MAX_LINES)
        .filter(|line| match read_request(line) {
            Some(Ok(r)) => !skip(&r.command, &r.args),
            _ => true,
        })
        .map(String::from)
        .collect()
}

/// The `gtp_go` target: each line of `data` fed to a Go GTP session whose agent plays random
/// playouts. Lines that would read or write files (`loadsgf`, `printsgf FILE`) are skipped;
/// those that would start an analysis that goes on (`lz-analyze`, `kata-analyze`) have only
/// their arguments read, which must give a plan or a `syntax error`. Feeding stops at `quit`.
pub fn gtp_go(data: &[u8]) {
    let agent = players::spec::build_text("playout:seed=1", 1).expect("a playout agent");
    let mut session =
        crate::gtp::go::Session::new(GoRules::default(), agent).expect("a 9 × 9 session");
    let skip = |command: &str, args: &[String]| match command {
        "loadsgf" => true,
        "lz-analyze" | "kata-analyze" => {
            crate::gtp::go::check_analysis_args(command, args);
            true
        }
        "printsgf" => !args.is_empty(),
        _ => false,
    };
    for line in gtp_lines(data, skip) {
        if let Some(answer) = session.handle(&line) {
            check_gtp_answer(&line, &answer);
        }
        assert!(session.analysing.is_none(), "an analysis started");
        if session.quit {
            break;
        }
    }
}

/// The `gtp_liuzhou` target: each line of `data` fed to a Liuzhou GTP session whose agent
/// plays random legal actions; feeding stops at `quit`.
pub fn gtp_liuzhou(data: &[u8]) {
    let agent = players::spec::build_text("random:seed=1", 1).expect("a random agent");
    let mut session =
        crate::gtp::liuzhou::Session::new(Rules::default(), agent).expect("a Liuzhou session");
    for line in gtp_lines(data, |_, _| false) {
        if let Some(answer) = session.handle(&line) {
            check_gtp_answer(&line, &answer);
        }
        if session.quit {
            break;
        }
    }
}

/// An output that fuzzed sessions write into and the body reads back.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a UCI/UCCI session may write at the start of a line.
const UCI_ANSWERS: &[&str] = &[
    "id ",
    "option ",
    "uciok",
    "ucciok",
    "readyok",
    "info ",
    "bestmove ",
    "nobestmove",
    "bye",
];

/// The `uci` target: every line of `data` read by [`parse_command`], then the lines fed as one
/// session to alpha-beta with a 1 MiB table (searches stop at the next line, as a GUI's `stop`
/// would). Options that load a file or size memory or threads (`Model`, `Hash`, `Threads`)
/// are skipped. Every line written is one the protocol has, and every `go` read gets exactly
/// one `bestmove` (or `nobestmove`).
pub fn uci(data: &[u8]) {
    let mut input = Vec::new();
    let mut searches = 0;
    for raw in data.split(|&b| b == b'\n').take(MAX_LINES) {
        if let Ok(line) = std::str::from_utf8(raw) {
            match parse_command(line) {
                Ok(UciCommand::SetOption { name, .. })
                    if ["model", "hash", "hashsize", "threads"]
                        .contains(&name.to_ascii_lowercase().as_str()) =>
                {
                    continue
                }
                Ok(UciCommand::Go(_)) => searches += 1,
                Ok(UciCommand::Quit) => {
                    input.extend_from_slice(raw);
                    break;
                }
                _ => {}
            }
        }
        input.extend_from_slice(raw);
        input.push(b'\n');
    }
    let out = Sink::default();
    let start = crate::uci::Start {
        hash_mb: 1,
        agent: "alphabeta".into(),
        model: None,
        visits: 16,
        config: (serde_yaml::Value::Null, PathBuf::new()),
    };
    let mut session = crate::uci::Session::open(Box::new(out.clone()), start).expect("a session");
    session.run(&input[..]).expect("input from memory reads");
    let written = out.0.lock().expect("no writer left").clone();
    let written = String::from_utf8(written).expect("a session writes UTF-8");
    let mut answers = 0;
    for line in written.lines() {
        assert!(
            UCI_ANSWERS.iter().any(|a| line.starts_with(a)),
            "not a UCI line: {line:?}"
        );
        answers += (line.starts_with("bestmove ") || line == "nobestmove") as usize;
    }
    assert_eq!(answers, searches, "one bestmove per go:\n{written}");
}

/// The `web_api` target: each line of `data` is a request `METHOD PATH [BODY]` to the web API
/// (in-process, no socket; `{id}` in the path stands for the last session created). Engines
/// play MCTS or random moves at up to 8 visits. Every answer is a success or a 4xx refusal
/// with a JSON `{"error": reason}`; nothing panics and no request fails inside (5xx).
pub fn web_api(data: &[u8]) {
    use axum::body::{to_bytes, Body};
    use axum::http::{header, Method, Request};
    use tower::ServiceExt;

    let config = crate::web::Config {
        max_sessions: MAX_LINES,
        max_visits: 8,
        default_visits: 4,
        analysis_max_visits: 8,
        analysis_default_visits: 4,
        ..Default::default()
    };
    let router = crate::web::router(config, crate::web::Setups::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let text = String::from_utf8_lossy(data);
    runtime.block_on(async move {
        let mut last_id = String::from("none");
        for line in text.lines().take(MAX_LINES) {
            let mut parts = line.splitn(3, ' ');
            let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(method) = Method::from_bytes(method.as_bytes()) else {
                continue;
            };
            let body = parts.next().unwrap_or("");
            let mut request = Request::builder()
                .method(method)
                .uri(path.replace("{id}", &last_id));
            if !body.is_empty() {
                request = request.header(header::CONTENT_TYPE, "application/json");
            }
            let Ok(request) = request.body(Body::from(body.to_string())) else {
                continue;
            };
            let response = router.clone().oneshot(request).await.expect("infallible");
            let status = response.status();
            let bytes = to_bytes(response.into_body(), 1 << 20)
                .await
                .expect("a body in memory");
            assert!(
                !status.is_server_error(),
                "{line:?}: {status} {}",
                String::from_utf8_lossy(&bytes)
            );
            if status.is_client_error() {
                let reply: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                    panic!(
                        "{line:?}: {status} is not JSON ({e}): {}",
                        String::from_utf8_lossy(&bytes)
                    )
                });
                let reason = reply["error"].as_str().unwrap_or_default();
                assert!(!reason.is_empty(), "{line:?}: {status} without a reason");
            } else if status == axum::http::StatusCode::CREATED {
                let reply: serde_json::Value =
                    serde_json::from_slice(&bytes).expect("a new session is JSON");
                if let Some(id) = reply["id"].as_str() {
                    last_id = id.to_string();
                }
            }
        }
    });
}
