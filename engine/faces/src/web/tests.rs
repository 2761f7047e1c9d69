//! API tests: every endpoint, its answers and its refusals, through the router itself.

use axum::body::{to_bytes, Body};
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;

use super::*;

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// The reason of a refusal, checking that it is one.
    fn error(&self, status: StatusCode) -> String {
        assert_eq!(self.status, status, "body: {}", self.text);
        self.json()["error"]
            .as_str()
            .expect("an error has a reason")
            .to_string()
    }
}

async fn send(app: &AppState, method: Method, uri: &str, body: Option<&str>) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .unwrap();
    let resp = routes(app.clone()).oneshot(req).await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
    Reply {
        status,
        headers,
        text: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn app() -> AppState {
    App::new(Config::default(), Setups::default())
}

async fn new_game(app: &AppState, body: Value) -> Value {
    let r = send(app, Method::POST, "/api/sessions", Some(&body.to_string())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

fn id(session: &Value) -> String {
    session["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn page_and_assets_are_served_with_a_strict_policy() {
    let app = app();
    for (path, mime) in [
        ("/", "text/html"),
        ("/assets/app.js", "text/javascript"),
        ("/assets/i18n.js", "text/javascript"),
        ("/assets/review.js", "text/javascript"),
        ("/assets/style.css", "text/css"),
    ] {
        let r = send(&app, Method::GET, path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(r.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with(mime));
        assert!(r.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("default-src 'self'"));
        assert!(!r.text.is_empty(), "{path} is empty");
    }
    let r = send(&app, Method::GET, "/nope", None).await;
    assert!(r.error(StatusCode::NOT_FOUND).contains("no such"));
}

#[tokio::test]
async fn games_lists_games_agents_and_strengths() {
    let app = app();
    let r = send(&app, Method::GET, "/api/games", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let v = r.json();
    let names: Vec<&str> = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"liuzhou"));
    assert_eq!(v["games"][0]["sides"], json!(["Black", "White"]));
    assert!(v["agents"]
        .as_array()
        .unwrap()
        .contains(&json!(v["default_agent"])));
    assert_eq!(v["max_visits"], Config::default().max_visits);
}

#[tokio::test]
async fn new_game_starts_from_the_configured_position() {
    let app = app();
    let s = new_game(&app, json!({"game": "liuzhou", "side": "black", "seed": 1})).await;
    assert_eq!(s["game"], "liuzhou");
    assert_eq!(s["human"], "first");
    assert_eq!(s["to_act"], "first");
    assert_eq!(s["human_to_act"], true);
    assert_eq!(s["engine_to_act"], false);
    assert_eq!(s["position"], games::liuzhou::START_LFEN);
    assert_eq!(s["strength"], Config::default().default_visits);
    assert_eq!(s["board"]["cols"], 6);
    assert_eq!(s["board"]["info"]["phase"], "place");
    assert_eq!(s["legal"].as_array().unwrap().len(), 36);
    assert_eq!(s["can_undo"], false);
    assert!(s["outcome"].is_null() && s["eval"].is_null() && s["last"].is_null());
    assert_eq!(id(&s).len(), 32);
    // Sides by number and in the other side's words.
    let s = new_game(&app, json!({"game": "liuzhou", "side": "Second"})).await;
    assert_eq!(s["human"], "second");
    assert_eq!(s["engine_to_act"], true);
    let s = new_game(
        &app,
        json!({"game": "liuzhou", "side": "none", "strength": 5}),
    )
    .await;
    assert!(s["human"].is_null());
    assert_eq!(s["strength"], 5);
}

#[tokio::test]
async fn new_game_refuses_bad_requests_with_reasons() {
    let app = app();
    let post = |body: &'static str| {
        let app = app.clone();
        async move { send(&app, Method::POST, "/api/sessions", Some(body)).await }
    };
    let e = post(r#"{"game":"chess","side":"first"}"#)
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("unknown game \"chess\""), "{e}");
    let e = post(r#"{"game":"liuzhou","side":"red"}"#)
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("side \"red\""), "{e}");
    let e = post(r#"{"game":"liuzhou","side":"first","agent":"deep-blue"}"#)
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("unknown agent"), "{e}");
    let e = post(r#"{"game":"liuzhou","side":"first","strength":0}"#)
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("strength 0"), "{e}");
    let e = post(r#"{"game":"liuzhou","side":"first","strength":1000000000}"#)
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("outside"), "{e}");
    // Malformed JSON, a missing field, a field of the wrong type, an unknown field.
    post(r#"{"game":"liuzhou","#)
        .await
        .error(StatusCode::BAD_REQUEST);
    let e = post(r#"{"game":"liuzhou"}"#)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(e.contains("side"), "{e}");
    post(r#"{"game":"liuzhou","side":"first","strength":"lots"}"#)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY);
    let e = post(r#"{"game":"liuzhou","side":"first","colour":"x"}"#)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(e.contains("colour"), "{e}");
    // Not JSON at all, and too large.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/sessions")
        .body(Body::from("game=liuzhou"))
        .unwrap();
    let r = routes(app.clone()).oneshot(req).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let big = format!(
        r#"{{"game":"liuzhou","side":"first","agent":"{}"}}"#,
        "a".repeat(10_000)
    );
    let r = send(&app, Method::POST, "/api/sessions", Some(&big)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text);
    // Nothing was stored by any of these.
    assert_eq!(app.store.len(), 0);
}

#[tokio::test]
async fn show_legal_and_delete() {
    let app = app();
    let s = new_game(&app, json!({"game": "liuzhou", "side": "first"})).await;
    let base = format!("/api/sessions/{}", id(&s));
    let r = send(&app, Method::GET, &base, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["id"], s["id"]);
    let r = send(&app, Method::GET, &format!("{base}/legal"), None).await;
    let legal = r.json()["legal"].as_array().unwrap().clone();
    assert_eq!(legal.len(), 36);
    assert!(legal.contains(&json!({"action": "c3", "from": null, "to": "c3"})));
    let r = send(&app, Method::DELETE, &base, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    for path in [
        base.clone(),
        format!("{base}/legal"),
        format!("{base}/record"),
    ] {
        let e = send(&app, Method::GET, &path, None)
            .await
            .error(StatusCode::NOT_FOUND);
        assert!(e.contains("no session"), "{e}");
    }
    send(&app, Method::DELETE, &base, None)
        .await
        .error(StatusCode::NOT_FOUND);
    send(&app, Method::GET, "/api/sessions/../../etc/passwd", None)
        .await
        .error(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn play_engine_undo_round() {
    let app = app();
    let s = new_game(
        &app,
        json!({"game": "liuzhou", "side": "first", "agent": "random", "seed": 4}),
    )
    .await;
    let base = format!("/api/sessions/{}", id(&s));
    // Bad actions: unreadable, illegal here, not JSON, a missing field.
    let e = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"z9"}"#),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(e.contains("z9"), "{e}");
    let e = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"xc3"}"#),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(e.contains("illegal"), "{e}");
    send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action": "c3""#),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    send(&app, Method::POST, &format!("{base}/play"), Some("{}"))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY);
    // Not the engine's turn; nothing to undo.
    send(&app, Method::POST, &format!("{base}/engine"), None)
        .await
        .error(StatusCode::CONFLICT);
    send(&app, Method::POST, &format!("{base}/undo"), None)
        .await
        .error(StatusCode::CONFLICT);

    let r = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"c3"}"#),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let s = r.json();
    assert_eq!(
        s["history"],
        json!([{"action": "c3", "player": "first", "engine": false}])
    );
    assert_eq!(s["last"], json!({"action": "c3", "from": null, "to": "c3"}));
    assert_eq!(s["board"]["cells"][3][2], "B");
    assert_eq!(s["engine_to_act"], true);
    send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"d4"}"#),
    )
    .await
    .error(StatusCode::CONFLICT);

    let r = send(&app, Method::POST, &format!("{base}/engine"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let v = r.json();
    let played = v["played"]["action"].as_str().unwrap();
    assert_eq!(v["session"]["history"][1]["action"], played);
    assert_eq!(v["session"]["history"][1]["engine"], true);
    assert_eq!(v["session"]["last"], v["played"]);
    assert_eq!(v["session"]["human_to_act"], true);
    // The random agent reports its choice as the whole line, and no search figures.
    assert_eq!(v["session"]["eval"]["pv"], json!([played]));
    assert!(v["session"]["eval"]["visits"].is_null());

    let r = send(&app, Method::POST, &format!("{base}/undo"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let u = r.json();
    assert_eq!(u["undone"], 2);
    assert_eq!(u["session"]["position"], games::liuzhou::START_LFEN);
    assert_eq!(u["session"]["history"], json!([]));
    assert_eq!(u["session"]["human_to_act"], true);
}

#[tokio::test]
async fn the_searching_engine_reports_visits_value_and_line() {
    let app = app();
    let s = new_game(
        &app,
        json!({"game": "liuzhou", "side": "second", "agent": "mcts", "strength": 300, "seed": 2}),
    )
    .await;
    assert_eq!(s["agent"], "mcts");
    let base = format!("/api/sessions/{}", id(&s));
    let r = send(&app, Method::POST, &format!("{base}/engine"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let v = r.json();
    let eval = &v["session"]["eval"];
    assert!(eval["visits"].as_u64().unwrap() >= 300, "{eval}");
    let value = eval["value_first"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&value), "{value}");
    let pv: Vec<&str> = eval["pv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(pv[0], v["played"]["action"]);
    assert!(pv.len() >= 2, "{pv:?}");
    // The line is legal from the position the engine saw.
    let mut line = Liuzhou::default();
    for a in pv {
        line.play(line.parse_action(a).unwrap()).unwrap();
    }
    // The evaluation of the engine's last decision stays shown through the person's reply.
    let a = v["session"]["legal"][0]["action"].as_str().unwrap();
    let r = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(&json!({ "action": a }).to_string()),
    )
    .await;
    assert_eq!(&r.json()["eval"], eval);
}

#[tokio::test]
async fn the_network_agent_is_offered_only_with_a_network() {
    let app = app();
    let v = send(&app, Method::GET, "/api/games", None).await.json();
    assert_eq!(
        v["games"][0]["agents"],
        json!(["alphabeta", "mcts", "random"])
    );
    let e = send(
        &app,
        Method::POST,
        "/api/sessions",
        Some(r#"{"game":"liuzhou","side":"first","agent":"net"}"#),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("needs a model for liuzhou"), "{e}");

    // A network (the test double: uniform priors, value 0) makes `net` available.
    let net: Arc<dyn Evaluator<Liuzhou>> = Arc::new(eval::fake::FakeEvaluator::new(8));
    let app = App::new(
        Config {
            default_agent: "net".into(),
            ..Config::default()
        },
        Setups {
            liuzhou: Setup {
                start: Liuzhou::default(),
                net: Some(net),
            },
            ..Setups::default()
        },
    );
    let v = send(&app, Method::GET, "/api/games", None).await.json();
    assert_eq!(
        v["games"][0]["agents"],
        json!(["alphabeta", "mcts", "net", "random"])
    );
    let s = new_game(
        &app,
        json!({"game": "liuzhou", "side": "second", "strength": 50}),
    )
    .await;
    assert_eq!(s["agent"], "net", "the configured default");
    let r = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/engine", id(&s)),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["session"]["eval"]["visits"].as_u64().unwrap() >= 50);
}

#[tokio::test]
async fn a_game_with_its_own_agent_defaults_to_it() {
    let app = app();
    let v = send(&app, Method::GET, "/api/games", None).await.json();
    let xq = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "xiangqi")
        .unwrap()
        .clone();
    assert_eq!(xq["agents"], json!(["alphabeta", "mcts", "random"]));
    assert_eq!(xq["default_agent"], "alphabeta");
    assert_eq!(xq["sides"], json!(["Red", "Black"]));
    let s = new_game(
        &app,
        json!({"game": "xiangqi", "side": "black", "strength": 20}),
    )
    .await;
    assert_eq!(s["agent"], "alphabeta");
    assert_eq!(s["engine_to_act"], true, "Red moves first");
    let r = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/engine", id(&s)),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let played = r.json()["played"].clone();
    assert!(
        played["from"].is_string() && played["to"].is_string(),
        "{played}"
    );
    // Alpha-beta explains itself: a value for the bar, its nodes and its line.
    let eval = r.json()["session"]["eval"].clone();
    let v = eval["value_first"].as_f64().expect("a value");
    assert!(v.abs() < 0.5, "the start is about even: {eval}");
    assert!(eval["nodes"].as_u64().unwrap() > 0, "{eval}");
    assert!(eval["visits"].is_null(), "{eval}");
    assert_eq!(eval["pv"][0], played["action"], "{eval}");
    // Liuzhou has an alpha-beta of its own too.
    let s = new_game(&app, json!({"game": "liuzhou", "side": "black"})).await;
    assert_eq!(s["agent"], "alphabeta");
    // Go has no agent of its own: the configured default.
    let s = new_game(&app, json!({"game": "go", "side": "black"})).await;
    assert_eq!(s["agent"], "mcts");
    // Another game's own agent is unknown here.
    let e = send(
        &app,
        Method::POST,
        "/api/sessions",
        Some(r#"{"game":"go","side":"first","agent":"alphabeta"}"#),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    assert!(e.contains("unknown agent"), "{e}");
}

#[tokio::test]
async fn a_placement_that_makes_a_square_owes_a_mark_the_page_can_see() {
    // Black a1 b1 a2, White d1 e1 f1; Black to place: b2 completes a square.
    let start = Liuzhou::from_lfen("6/6/6/6/B5/BB1WWW b place 0 6 0", Default::default()).unwrap();
    let app = App::new(
        Config::default(),
        Setups {
            liuzhou: Setup {
                start: start.clone(),
                net: None,
            },
            ..Setups::default()
        },
    );
    let s = new_game(&app, json!({"game": "liuzhou", "side": "black"})).await;
    assert_eq!(s["position"], start.lfen());
    let base = format!("/api/sessions/{}", id(&s));
    let r = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"b2"}"#),
    )
    .await;
    let s = r.json();
    assert_eq!(s["board"]["info"]["phase"], "mark");
    assert_eq!(s["board"]["info"]["pending"], 1);
    assert_eq!(s["human_to_act"], true, "the same player marks");
    let mut targets: Vec<String> = s["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert!(a["from"].is_null());
            a["action"].as_str().unwrap().to_string()
        })
        .collect();
    targets.sort();
    assert_eq!(targets, ["xd1", "xe1", "xf1"]);
    let r = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"xe1"}"#),
    )
    .await;
    let s = r.json();
    assert_eq!(s["board"]["cells"][5][4], "w", "e1 is a marked white stone");
    assert_eq!(s["board"]["info"]["marked"], 1);
    assert_eq!(s["board"]["info"]["phase"], "place");
    assert_eq!(s["engine_to_act"], true);
    // Undo takes back only the mark: the square's owner is back to choosing.
    let u = send(&app, Method::POST, &format!("{base}/undo"), None)
        .await
        .json();
    assert_eq!(u["undone"], 1);
    assert_eq!(u["session"]["board"]["info"]["phase"], "mark");
}

#[tokio::test]
async fn a_whole_game_through_the_api_and_its_record() {
    let app = app();
    let s = new_game(&app, json!({"game": "liuzhou", "side": "white", "seed": 9})).await;
    let base = format!("/api/sessions/{}", id(&s));
    let mut rounds = 0;
    let s = loop {
        rounds += 1;
        assert!(rounds < 1000, "the game must end");
        let s = send(&app, Method::GET, &base, None).await.json();
        if !s["outcome"].is_null() {
            break s;
        }
        if s["engine_to_act"] == true {
            let r = send(&app, Method::POST, &format!("{base}/engine"), None).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        } else {
            // The person plays the first legal action the page would offer.
            let a = s["legal"][0]["action"].as_str().unwrap().to_string();
            let body = json!({ "action": a }).to_string();
            let r = send(&app, Method::POST, &format!("{base}/play"), Some(&body)).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
    };
    assert!(s["legal"].as_array().unwrap().is_empty());
    assert!(s["outcome"]["text"].as_str().unwrap().len() > 3);
    let e = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"a1"}"#),
    )
    .await
    .error(StatusCode::CONFLICT);
    assert!(e.contains("over"), "{e}");
    send(&app, Method::POST, &format!("{base}/engine"), None)
        .await
        .error(StatusCode::CONFLICT);

    let r = send(&app, Method::GET, &format!("{base}/record"), None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.headers[header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap()
        .contains("attachment; filename=\"liuzhou.txt\""));
    let history: Vec<String> = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["action"].as_str().unwrap().to_string())
        .collect();
    // The record replays to the final position: the actions after the blank line, in order.
    let words: Vec<&str> = r
        .text
        .split("\n\n")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .filter(|w| !w.ends_with('.'))
        .collect();
    let (result, actions) = words.split_last().unwrap();
    assert_eq!(
        actions,
        history.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(["1-0", "0-1", "1/2-1/2"].contains(result));
    assert!(r.text.contains(&format!("[Result \"{result}\"]")));
    assert!(r.text.contains("[White \"human\"]"));
    let mut replay = Liuzhou::default();
    for a in actions {
        replay.play(replay.parse_action(a).unwrap()).unwrap();
    }
    assert!(r
        .text
        .contains(&format!("[FinalLFEN \"{}\"]", replay.lfen())));
    assert_eq!(s["position"], replay.lfen());
}

#[tokio::test]
async fn every_served_game_plays_to_its_end_through_the_api() {
    let app = app();
    for game in game_infos(&app.setups, &app.config) {
        let s = new_game(
            &app,
            json!({"game": game.name, "side": "none", "agent": "random", "seed": 3}),
        )
        .await;
        assert_eq!(s["sides"], json!(game.sides));
        let b = &s["board"];
        let (rows, cols) = (b["rows"].as_u64().unwrap(), b["cols"].as_u64().unwrap());
        assert_eq!(b["names"].as_array().unwrap().len() as u64, rows);
        assert_eq!(b["cells"][0].as_array().unwrap().len() as u64, cols);
        // Every legal action names points of the board (or none, like a pass).
        let names: Vec<&Value> = b["names"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap())
            .collect();
        for a in s["legal"].as_array().unwrap() {
            for end in [&a["from"], &a["to"]] {
                assert!(
                    end.is_null() || names.contains(&end),
                    "{} names {end}",
                    game.name
                );
            }
        }
        let base = format!("/api/sessions/{}", id(&s));
        let mut last = s;
        for _ in 0..Config::default().max_actions {
            if !last["outcome"].is_null() {
                break;
            }
            let r = send(&app, Method::POST, &format!("{base}/engine"), None).await;
            assert_eq!(r.status, StatusCode::OK, "{}: {}", game.name, r.text);
            last = r.json()["session"].clone();
        }
        assert!(!last["outcome"].is_null(), "{} ended", game.name);
        let reason = last["outcome"]["reason"].as_str().unwrap();
        assert!(reason.len() > 3, "{}: the rule that ended it", game.name);
        assert_eq!(last["outcome"]["resigned"], false);
        let r = send(&app, Method::GET, &format!("{base}/record"), None).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.headers[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap()
            .starts_with("attachment"));
        assert!(r.text.len() > 20, "{}: {}", game.name, r.text);
    }
}

#[tokio::test]
async fn xiangqi_history_is_also_in_chinese_notation() {
    let app = app();
    let s = new_game(
        &app,
        json!({"game": "xiangqi", "side": "red", "agent": "random"}),
    )
    .await;
    let base = format!("/api/sessions/{}", id(&s));
    let r = send(
        &app,
        Method::POST,
        &format!("{base}/play"),
        Some(r#"{"action":"h2e2"}"#),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let h = &r.json()["history"][0];
    assert_eq!(
        (h["action"].as_str(), h["display"].as_str()),
        (Some("h2e2"), Some("炮二平五"))
    );
    // Games whose notation is the players' own have no second form.
    let s = new_game(
        &app,
        json!({"game": "go", "side": "black", "agent": "random"}),
    )
    .await;
    let r = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/play", id(&s)),
        Some(r#"{"action":"E5"}"#),
    )
    .await;
    assert!(r.json()["history"][0]["display"].is_null(), "{}", r.text);
}

#[tokio::test]
async fn resigning_ends_the_game_and_the_record_says_so() {
    let app = app();
    for (game, side, reason, in_record) in [
        (
            "liuzhou",
            "black",
            "Black resigned",
            "[Ending \"Black resigned\"]",
        ),
        ("xiangqi", "red", "Red resigned", "{Red resigned} 0-1"),
        ("go", "black", "Black resigned", "RE[W+R]"),
    ] {
        let s = new_game(&app, json!({"game": game, "side": side, "agent": "random"})).await;
        let base = format!("/api/sessions/{}", id(&s));
        let r = send(&app, Method::POST, &format!("{base}/resign"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{game}: {}", r.text);
        let v = r.json();
        assert_eq!(v["outcome"]["winner"], "second", "{game}");
        assert_eq!(v["outcome"]["reason"], reason, "{game}");
        assert_eq!(v["outcome"]["resigned"], true);
        assert_eq!(v["human_to_act"], false);
        assert_eq!(v["can_undo"], false);
        // The position would go on, but the game does not.
        assert!(v["legal"].as_array().unwrap().is_empty());
        for (method, path) in [
            (Method::POST, "resign"),
            (Method::POST, "engine"),
            (Method::POST, "undo"),
        ] {
            let e = send(&app, method, &format!("{base}/{path}"), None)
                .await
                .error(StatusCode::CONFLICT);
            assert!(e.contains("over"), "{game} {path}: {e}");
        }
        let r = send(&app, Method::GET, &format!("{base}/record"), None).await;
        assert!(r.text.contains(in_record), "{game}: {}", r.text);
    }
    // Watching the engine play itself, nobody can resign.
    let s = new_game(
        &app,
        json!({"game": "liuzhou", "side": "none", "agent": "random"}),
    )
    .await;
    let e = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/resign", id(&s)),
        None,
    )
    .await
    .error(StatusCode::CONFLICT);
    assert!(e.contains("nobody"), "{e}");
}

#[tokio::test]
async fn a_method_a_path_does_not_take_is_refused_in_json() {
    let app = app();
    let s = new_game(&app, json!({"game": "liuzhou", "side": "black"})).await;
    for (method, path) in [
        (Method::GET, format!("/api/sessions/{}/resign", id(&s))),
        (Method::DELETE, "/api/games".to_string()),
        (Method::PUT, "/api/sessions".to_string()),
    ] {
        let e = send(&app, method.clone(), &path, None)
            .await
            .error(StatusCode::METHOD_NOT_ALLOWED);
        assert!(e.contains(method.as_str()) && e.contains(&path), "{e}");
    }
}

#[tokio::test]
async fn a_session_path_that_is_not_utf8_is_refused_in_json() {
    let app = app();
    for path in ["/api/sessions/%FF", "/api/sessions/%C3%28/legal"] {
        let e = send(&app, Method::GET, path, None)
            .await
            .error(StatusCode::BAD_REQUEST);
        assert!(e.contains("UTF-8"), "{path}: {e}");
    }
}

#[tokio::test]
async fn a_random_engine_does_not_wait_for_a_thinking_slot() {
    let app = App::new(
        Config {
            max_thinking: 1,
            ..Config::default()
        },
        Setups::default(),
    );
    // Every slot is taken (as by a long search in another game).
    let _slot = app.thinking.clone().acquire_owned().await.unwrap();
    let random = new_game(
        &app,
        json!({"game": "go", "side": "white", "agent": "random"}),
    )
    .await;
    let path = format!("/api/sessions/{}/engine", id(&random));
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        send(&app, Method::POST, &path, None),
    )
    .await
    .expect("the random move is not queued behind the search");
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // A searching engine does wait.
    let mcts = new_game(
        &app,
        json!({"game": "go", "side": "white", "agent": "mcts"}),
    )
    .await;
    let path = format!("/api/sessions/{}/engine", id(&mcts));
    let waited = tokio::time::timeout(
        Duration::from_millis(200),
        send(&app, Method::POST, &path, None),
    )
    .await;
    assert!(waited.is_err(), "the search waits for the slot");
}

#[tokio::test]
async fn idle_sessions_give_their_search_memory_back() {
    let app = app();
    let s = new_game(
        &app,
        json!({"game": "go", "side": "black", "agent": "mcts", "strength": 50}),
    )
    .await;
    let random = new_game(
        &app,
        json!({"game": "go", "side": "black", "agent": "random"}),
    )
    .await;
    let base = format!("/api/sessions/{}", id(&s));
    for (session, action) in [(&s, "E5"), (&random, "E5")] {
        let path = format!("/api/sessions/{}", id(session));
        let body = json!({ "action": action }).to_string();
        let r = send(&app, Method::POST, &format!("{path}/play"), Some(&body)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = send(&app, Method::POST, &format!("{path}/engine"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    assert_eq!(app.store.release_idle(Duration::from_secs(3600)), 0);
    // Only the searching engine had a tree to give back, and gives it once.
    assert_eq!(app.store.release_idle(Duration::ZERO), 1);
    assert_eq!(app.store.release_idle(Duration::ZERO), 0);
    // The game goes on: the next engine move searches a fresh tree.
    let legal = send(&app, Method::GET, &format!("{base}/legal"), None)
        .await
        .json();
    let a = legal["legal"][0]["action"].as_str().unwrap().to_string();
    let body = json!({ "action": a }).to_string();
    let r = send(&app, Method::POST, &format!("{base}/play"), Some(&body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = send(&app, Method::POST, &format!("{base}/engine"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["session"]["eval"]["visits"].as_u64().unwrap() >= 50);
    // Used again, it has a tree to give back again.
    assert_eq!(app.store.release_idle(Duration::ZERO), 1);
}

#[tokio::test]
async fn idleness_counts_from_the_end_of_a_think() {
    let app = app();
    let s = new_game(
        &app,
        json!({"game": "go", "side": "white", "agent": "mcts", "strength": 2000}),
    )
    .await;
    let t0 = std::time::Instant::now();
    let r = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/engine", id(&s)),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let think = t0.elapsed();
    // Idle for less than the think took: the fresh tree stays.
    assert_eq!(app.store.release_idle(think / 2), 0);
}

#[tokio::test]
async fn the_server_gives_idle_search_memory_back_by_itself() {
    let app = App::new(
        Config {
            release_after_s: 1,
            ..Config::default()
        },
        Setups::default(),
    );
    for _ in 0..2 {
        let s = new_game(
            &app,
            json!({"game": "liuzhou", "side": "white", "agent": "mcts", "strength": 50}),
        )
        .await;
        let path = format!("/api/sessions/{}/engine", id(&s));
        assert_eq!(
            send(&app, Method::POST, &path, None).await.status,
            StatusCode::OK
        );
    }
    // The sweep (every second here) has found both idle and taken their trees: idle for a
    // second by the third tick even if the moves above took two seconds on a loaded machine.
    tokio::time::sleep(Duration::from_millis(4000)).await;
    assert_eq!(app.store.release_idle(Duration::ZERO), 0);
}

#[tokio::test]
async fn the_engine_thinks_off_the_request_thread() {
    use crate::web::view::tests::GATE_OPEN;
    use std::sync::atomic::Ordering;
    // The gate agent exists only in tests and is not among the names the API accepts, so the
    // session is made here rather than through the API.
    let app = app();
    let req = NewGame {
        game: "liuzhou".into(),
        side: "second".into(),
        agent: Some("gate".into()),
        strength: None,
        level: None,
        seed: None,
    };
    let order = Order {
        req: &req,
        id: Store::new_id(),
        visits: 1,
        seed: 0,
    };
    let gated = order.id.clone();
    let session = new_session(&app, &order).unwrap();
    app.store.insert(gated.clone(), session).unwrap();
    let other = id(&new_game(&app, json!({"game": "liuzhou", "side": "first"})).await);

    // The test runtime has one thread: a think on it would block every request below.
    let engine = tokio::spawn({
        let app = app.clone();
        let path = format!("/api/sessions/{gated}/engine");
        async move { send(&app, Method::POST, &path, None).await }
    });
    let mut busy = false;
    for _ in 0..1000 {
        let r = send(&app, Method::GET, &format!("/api/sessions/{gated}"), None).await;
        if r.status == StatusCode::CONFLICT {
            busy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(busy, "the thinking session answers busy");
    // Meanwhile the server answers everything else.
    let r = send(&app, Method::GET, "/api/games", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{other}/play"),
        Some(r#"{"action":"c3"}"#),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(!engine.is_finished(), "the engine is still thinking");
    GATE_OPEN.store(true, Ordering::SeqCst);
    let r = engine.await.unwrap();
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["session"]["history"][0]["engine"], true);
}

#[tokio::test]
async fn sessions_are_bounded_and_busy_ones_are_kept() {
    let app = App::new(
        Config {
            max_sessions: 2,
            ..Config::default()
        },
        Setups::default(),
    );
    let a = id(&new_game(&app, json!({"game": "liuzhou", "side": "first"})).await);
    let b = id(&new_game(&app, json!({"game": "liuzhou", "side": "first"})).await);
    // Touch `a` so that `b` is the least recently used.
    send(&app, Method::GET, &format!("/api/sessions/{a}"), None).await;
    let c = id(&new_game(&app, json!({"game": "liuzhou", "side": "first"})).await);
    assert_eq!(app.store.len(), 2);
    send(&app, Method::GET, &format!("/api/sessions/{b}"), None)
        .await
        .error(StatusCode::NOT_FOUND);
    // While a session is taken (as during a think) requests on it are refused as busy, and it
    // is never evicted: with both taken, a new game is refused.
    let ga = app.store.get(&a).unwrap().try_lock_owned().unwrap();
    let gc = app.store.get(&c).unwrap().try_lock_owned().unwrap();
    let e = send(&app, Method::GET, &format!("/api/sessions/{a}"), None)
        .await
        .error(StatusCode::CONFLICT);
    assert!(e.contains("thinking"), "{e}");
    let r = send(
        &app,
        Method::POST,
        "/api/sessions",
        Some(r#"{"game":"liuzhou","side":"first"}"#),
    )
    .await;
    r.error(StatusCode::SERVICE_UNAVAILABLE);
    drop((ga, gc));
    new_game(&app, json!({"game": "liuzhou", "side": "first"})).await;
    assert_eq!(app.store.len(), 2);
}

#[tokio::test]
async fn idle_sessions_expire() {
    let app = App::new(
        Config {
            idle_timeout_s: 1,
            ..Config::default()
        },
        Setups::default(),
    );
    let a = id(&new_game(&app, json!({"game": "liuzhou", "side": "first"})).await);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    send(&app, Method::GET, &format!("/api/sessions/{a}"), None)
        .await
        .error(StatusCode::NOT_FOUND);
}

#[test]
fn config_validation_names_the_bad_key() {
    Config::default().validate().unwrap();
    let bad = Config {
        max_sessions: 0,
        ..Config::default()
    };
    assert!(bad.validate().unwrap_err().contains("max_sessions"));
    let bad = Config {
        release_after_s: 0,
        ..Config::default()
    };
    assert!(bad.validate().unwrap_err().contains("release_after_s"));
    let bad = Config {
        default_visits: 0,
        ..Config::default()
    };
    assert!(bad.validate().unwrap_err().contains("default_visits"));
    let bad = Config {
        default_agent: "oracle".into(),
        ..Config::default()
    };
    assert!(bad.validate().unwrap_err().contains("oracle"));
}

#[test]
fn the_shipped_serve_config_reads_and_is_valid() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/serve.yaml");
    let doc = setup::config::load(&path).unwrap();
    let cfg: Config = setup::config::section(&doc, "serve", &path).unwrap();
    cfg.validate().unwrap();
    assert!(cfg.addr.ip().is_loopback());
    // Every key is spelled out in the file, so its values are the documented defaults.
    assert_eq!(cfg, Config::default());
}

#[tokio::test]
async fn a_hint_is_the_engines_choice_in_the_persons_place_and_plays_nothing() {
    let app = app();
    for (game, agent) in [
        ("liuzhou", "mcts"),
        ("xiangqi", "alphabeta"),
        ("go", "mcts"),
    ] {
        let s = new_game(
            &app,
            json!({"game": game, "side": "first", "agent": agent, "strength": 60}),
        )
        .await;
        let base = format!("/api/sessions/{}", id(&s));
        let r = send(&app, Method::POST, &format!("{base}/hint"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{game}: {}", r.text);
        let h = r.json();
        let action = h["hint"]["action"].as_str().unwrap().to_string();
        assert!(
            s["legal"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["action"] == action),
            "{game}: hint {action} is not legal"
        );
        assert_eq!(h["eval"]["pv"][0], action.as_str(), "{game}: {h}");
        assert!(
            h["eval"]["visits"].is_u64() || h["eval"]["nodes"].is_u64(),
            "{game}: {h}"
        );
        // Nothing was played: the person is still to act, and may follow the hint.
        let now = send(&app, Method::GET, &base, None).await.json();
        assert_eq!(now["history"].as_array().unwrap().len(), 0, "{game}");
        assert_eq!(now["human_to_act"], true, "{game}");
        let body = json!({ "action": action }).to_string();
        let r = send(&app, Method::POST, &format!("{base}/play"), Some(&body)).await;
        assert_eq!(r.status, StatusCode::OK, "{game}: {}", r.text);
        // Now the engine is to act: no hint for the person.
        let e = send(&app, Method::POST, &format!("{base}/hint"), None)
            .await
            .error(StatusCode::CONFLICT);
        assert!(e.contains("not yours"), "{game}: {e}");
    }
    // No person, no hint; a finished game has none either.
    let watch = new_game(
        &app,
        json!({"game": "go", "side": "none", "agent": "random"}),
    )
    .await;
    let e = send(
        &app,
        Method::POST,
        &format!("/api/sessions/{}/hint", id(&watch)),
        None,
    )
    .await
    .error(StatusCode::CONFLICT);
    assert!(e.contains("nobody"), "{e}");
    let s = new_game(
        &app,
        json!({"game": "go", "side": "black", "agent": "random"}),
    )
    .await;
    let base = format!("/api/sessions/{}", id(&s));
    send(&app, Method::POST, &format!("{base}/resign"), None).await;
    let e = send(&app, Method::POST, &format!("{base}/hint"), None)
        .await
        .error(StatusCode::CONFLICT);
    assert!(e.contains("over"), "{e}");
}

// ---- reviews ----

async fn new_review(app: &AppState, body: Value) -> Value {
    let r = send(app, Method::POST, "/api/reviews", Some(&body.to_string())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

async fn analyse(app: &AppState, review: &Value, body: Value) -> Reply {
    let uri = format!("/api/reviews/{}/analyse", id(review));
    send(app, Method::POST, &uri, Some(&body.to_string())).await
}

async fn progress(app: &AppState, review: &Value) -> Value {
    let uri = format!("/api/reviews/{}/progress", id(review));
    let r = send(app, Method::GET, &uri, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()
}

/// Waits until the review's analysis is no longer queued or running.
async fn settled(app: &AppState, review: &Value) -> Value {
    for _ in 0..6000 {
        let p = progress(app, review).await;
        if !matches!(p["status"].as_str(), Some("queued" | "running")) {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the analysis did not finish");
}

/// Waits until `cond` holds of the review's progress.
async fn progress_until(app: &AppState, review: &Value, cond: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..3000 {
        let p = progress(app, review).await;
        if cond(&p) {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the review's progress never got there: {}",
        progress(app, review).await
    );
}

const LIUZHOU_ACTIONS: &str = "c3 d4 c4 d3 a1 f6";
const XIANGQI_PGN: &str = "[Game \"Chinese Chess\"]\n\n1. h2e2 h9g7\n2. 马二进三 b9c7\n";
const GO_SGF: &str = "(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc];B[gc];W[])";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_of_every_game_is_reviewed_position_by_position() {
    let app = app();
    for (game, record, actions) in [
        ("liuzhou", LIUZHOU_ACTIONS, 6),
        ("xiangqi", XIANGQI_PGN, 4),
        ("go", GO_SGF, 4),
    ] {
        let v = new_review(&app, json!({"game": game, "record": record})).await;
        assert_eq!(v["game"], game);
        let positions = v["positions"].as_array().unwrap();
        assert_eq!(positions.len(), actions + 1, "{game}");
        assert!(positions[actions]["played"].is_null());
        assert_eq!(v["status"], "idle");
        assert_eq!(v["engine"], "mcts", "no network in the test setups");
        let r = analyse(&app, &v, json!({"strength": 16, "seed": 3})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let p = settled(&app, &v).await;
        assert_eq!(p["status"], "done", "{p}");
        assert_eq!(p["analysed"], actions + 1);
        assert_eq!(p["visits"], 16);
        let points = p["points"].as_array().unwrap();
        for (i, point) in points.iter().enumerate() {
            let value = point["value_first"].as_f64().unwrap();
            assert!((-1.0..=1.0).contains(&value), "{game} {i}: {value}");
            assert!(point["visits"].as_u64().unwrap() >= 16, "{game} {i}");
            let best = &point["best"]["action"];
            assert!(best.is_string(), "{game} {i}: a preferred action");
            assert!(point["line"][0].is_string(), "{game} {i}: its line");
        }
        let losses = p["losses"].as_array().unwrap();
        assert_eq!(losses.len(), actions);
        assert!(losses.iter().all(Value::is_number));
        // Mistakes are the actions that lost at least MISTAKE_LOSS, biggest first.
        let mistakes: Vec<usize> = p["mistakes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_u64().unwrap() as usize)
            .collect();
        for w in mistakes.windows(2) {
            assert!(losses[w[0]].as_f64() >= losses[w[1]].as_f64());
        }
        for (i, l) in losses.iter().enumerate() {
            let big = l.as_f64().unwrap() >= f64::from(review::MISTAKE_LOSS);
            assert_eq!(mistakes.contains(&i), big, "{game} action {i}");
        }
    }
}

#[tokio::test]
async fn xiangqi_review_shows_moves_and_lines_in_chinese() {
    let app = app();
    let v = new_review(&app, json!({"game": "xiangqi", "record": XIANGQI_PGN})).await;
    let first = &v["positions"][0]["played"];
    assert_eq!(first["action"], "h2e2");
    assert_eq!(first["display"], "炮二平五");
    assert_eq!(
        (first["from"].as_str(), first["to"].as_str()),
        (Some("h2"), Some("e2"))
    );
    assert_eq!(
        v["positions"][2]["played"]["action"], "h0g2",
        "read from 马二进三"
    );
}

#[tokio::test]
async fn a_malformed_record_is_refused_with_its_line_and_reason() {
    let app = app();
    let bad = |game: &str, record: &str| {
        let body = json!({"game": game, "record": record}).to_string();
        let app = app.clone();
        async move {
            let r = send(&app, Method::POST, "/api/reviews", Some(&body)).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
            let v = r.json();
            assert_eq!(v["code"], "bad_record", "{v}");
            v
        }
    };
    let v = bad("liuzhou", "c3 d4\nc4 zz9\n").await;
    assert_eq!(v["line"], 2, "{v}");
    assert!(v["error"].as_str().unwrap().contains("zz9"), "{v}");
    let v = bad("liuzhou", "c3 c3").await;
    assert!(v["error"].as_str().unwrap().contains("not legal"), "{v}");
    let v = bad("liuzhou", "[StartLFEN \"nonsense/\"]\n").await;
    assert_eq!(v["line"], 1, "{v}");
    assert!(bad("liuzhou", "  \n").await["error"]
        .as_str()
        .unwrap()
        .contains("empty"));
    let v = bad(
        "xiangqi",
        "[Game \"Chinese Chess\"]\n\n1. h2e2 h9g7\n2. h2h9\n",
    )
    .await;
    assert_eq!(v["line"], 4, "{v}");
    assert!(v["error"].as_str().unwrap().contains("h2h9"), "{v}");
    let v = bad("go", "(;GM[1]SZ[9]\n;B[ee]\n;W[ee").await;
    assert_eq!(v["line"], 3, "{v}");
    let v = bad("go", "(;GM[1]SZ[9];B[ee];W[ee])").await;
    assert!(v["error"].as_str().unwrap().contains("move 2"), "{v}");
    // Not a record at all, and requests that are not reviews.
    let r = send(
        &app,
        Method::POST,
        "/api/reviews",
        Some(r#"{"game":"chess","record":"1. e4"}"#),
    )
    .await;
    assert_eq!(r.json()["code"], "unknown_game");
    r.error(StatusCode::BAD_REQUEST);
    send(
        &app,
        Method::POST,
        "/api/reviews",
        Some(r#"{"game":"go","record":"(;)","session":"x"}"#),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    send(&app, Method::GET, "/api/reviews/nope", None)
        .await
        .error(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn records_are_bounded_in_size_and_length() {
    let app = App::new(
        Config {
            max_record_bytes: 200,
            max_actions: 4,
            ..Config::default()
        },
        Setups::default(),
    );
    let long = json!({"game": "liuzhou", "record": "a1 ".repeat(100)}).to_string();
    send(&app, Method::POST, "/api/reviews", Some(&long))
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE);
    let r = send(
        &app,
        Method::POST,
        "/api/reviews",
        Some(&json!({"game": "liuzhou", "record": LIUZHOU_ACTIONS}).to_string()),
    )
    .await;
    assert_eq!(r.json()["code"], "too_long");
    r.error(StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_keeps_to_the_strength_and_thinking_limits_and_stops() {
    let app = App::new(
        Config {
            max_thinking: 1,
            analysis_max_visits: 64,
            ..Config::default()
        },
        Setups::default(),
    );
    let a = new_review(&app, json!({"game": "go", "record": GO_SGF})).await;
    let b = new_review(&app, json!({"game": "liuzhou", "record": LIUZHOU_ACTIONS})).await;
    let e = analyse(&app, &a, json!({"strength": 65})).await;
    assert_eq!(e.json()["code"], "bad_strength");
    e.error(StatusCode::BAD_REQUEST);

    // While a player's engine holds the only thinking slot, no position is analysed.
    let player = app.thinking.clone().acquire_owned().await.unwrap();
    assert_eq!(
        analyse(&app, &a, json!({"strength": 8})).await.status,
        StatusCode::OK
    );
    assert_eq!(
        analyse(&app, &b, json!({"strength": 8})).await.status,
        StatusCode::OK
    );
    progress_until(&app, &a, |p| p["status"] == "running").await;
    let again = analyse(&app, &a, json!({"strength": 8})).await;
    assert_eq!(again.json()["code"], "review_running");
    again.error(StatusCode::CONFLICT);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(progress(&app, &a).await["analysed"], 0);
    // One review analyses at a time (max_analysing 1): the other waits its turn.
    assert_eq!(progress(&app, &b).await["status"], "queued");

    // Stopped while waiting for the slot: the queued one never starts, the running one ends
    // after the position it is on.
    let stop = |r: &Value| format!("/api/reviews/{}/stop", id(r));
    assert_eq!(
        send(&app, Method::POST, &stop(&b), None).await.json()["status"],
        "stopped"
    );
    // Started again while its first run still waits: that run ends unseen, the second works.
    assert_eq!(
        analyse(&app, &b, json!({"strength": 8})).await.status,
        StatusCode::OK
    );
    send(&app, Method::POST, &stop(&a), None).await;
    drop(player);
    let p = settled(&app, &a).await;
    assert_eq!(p["status"], "stopped");
    assert!(p["analysed"].as_u64().unwrap() < 5, "{p}");

    // Resumed, it analyses what is left.
    assert_eq!(
        analyse(&app, &a, json!({"strength": 8})).await.status,
        StatusCode::OK
    );
    assert_eq!(settled(&app, &a).await["analysed"], 5);
    let p = settled(&app, &b).await;
    assert_eq!(
        (p["status"].as_str(), p["analysed"].as_u64()),
        (Some("done"), Some(7))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_reviewed_and_its_records_load_back() {
    let app = app();
    for game in ["liuzhou", "xiangqi", "go"] {
        let s = new_game(
            &app,
            json!({"game": game, "side": "none", "agent": "random", "seed": 5}),
        )
        .await;
        let engine = format!("/api/sessions/{}/engine", id(&s));
        let mut view = s.clone();
        while view["outcome"].is_null() {
            view = send(&app, Method::POST, &engine, None).await.json()["session"].clone();
        }
        let moves = view["history"].as_array().unwrap().len();
        let v = new_review(&app, json!({"session": id(&s)})).await;
        assert_eq!(
            v["positions"].as_array().unwrap().len(),
            moves + 1,
            "{game}"
        );
        assert_eq!(
            v["result"],
            view["outcome"]["winner"].as_str().unwrap_or("draw"),
            "{game}"
        );
        let last = &v["positions"][moves];
        assert_eq!(last["position"], view["position"], "{game}");
        // The review's record, loaded again, is the same game.
        let rec = send(
            &app,
            Method::GET,
            &format!("/api/reviews/{}/record", id(&v)),
            None,
        )
        .await;
        assert_eq!(rec.status, StatusCode::OK);
        let again = new_review(&app, json!({"game": game, "record": rec.text})).await;
        assert_eq!(again["positions"], v["positions"], "{game}");
        let r = send(
            &app,
            Method::DELETE,
            &format!("/api/reviews/{}", id(&v)),
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_review_shows_territory_and_score_lead_from_the_network() {
    let net: Arc<dyn Evaluator<GoState>> = Arc::new(eval::fake::FakeEvaluator::new(8).with_aux());
    let app = App::new(
        Config::default(),
        Setups {
            go: Setup {
                start: GoState::with_size(9),
                net: Some(net),
            },
            ..Setups::default()
        },
    );
    let v = new_review(&app, json!({"game": "go", "record": GO_SGF})).await;
    assert_eq!(v["engine"], "net");
    analyse(&app, &v, json!({"strength": 8, "seed": 1})).await;
    let p = settled(&app, &v).await;
    assert_eq!(p["status"], "done", "{p}");
    let point = &p["points"][1];
    let own = point["ownership"].as_array().expect("ownership");
    assert_eq!(own.len(), 9);
    assert!(own.iter().all(|r| r.as_array().unwrap().len() == 9));
    assert!(point["score_lead"].is_number());
    // A 13 × 13 record does not fit the 9 × 9 network: random playouts, no territory.
    let big = new_review(
        &app,
        json!({"game": "go", "record": "(;GM[1]SZ[13];B[gg])"}),
    )
    .await;
    assert_eq!(big["engine"], "mcts");
}

// ---- levels ----

#[tokio::test]
async fn named_levels_are_offered_with_their_elo_and_play() {
    let net: Arc<dyn Evaluator<Liuzhou>> = Arc::new(eval::fake::FakeEvaluator::new(8));
    let app = App::new(
        Config::default(),
        Setups {
            liuzhou: Setup {
                start: Liuzhou::default(),
                net: Some(net),
            },
            ..Setups::default()
        },
    );
    let v = send(&app, Method::GET, "/api/games", None).await.json();
    let levels = |g: usize| v["games"][g]["levels"].as_array().unwrap().clone();
    let lz = levels(0);
    assert_eq!(lz.len(), players::levels::levels("liuzhou").len());
    assert_eq!(lz[0]["key"], "beginner");
    assert_eq!(lz[0]["chinese"], "入门");
    let elos: Vec<f64> = lz.iter().map(|l| l["elo"].as_f64().unwrap()).collect();
    assert!(
        elos.windows(2).all(|w| w[0] <= w[1]),
        "weakest first: {elos:?}"
    );
    // Without a network only the levels that need none: Xiangqi's alpha-beta ones; Go none.
    let xq = levels(1);
    assert!(!xq.is_empty() && xq.len() < players::levels::levels("xiangqi").len());
    assert!(levels(2).is_empty());

    for level in ["beginner", "大师"] {
        let s = new_game(
            &app,
            json!({"game": "liuzhou", "side": "second", "level": level, "seed": 2}),
        )
        .await;
        assert_eq!(s["agent"], "net");
        assert!(s["level"].is_string());
        let r = send(
            &app,
            Method::POST,
            &format!("/api/sessions/{}/engine", id(&s)),
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let s = new_game(
        &app,
        json!({"game": "xiangqi", "side": "first", "level": xq[0]["key"]}),
    )
    .await;
    assert_eq!(s["agent"], "alphabeta");
    let bad = |body: Value| {
        let app = app.clone();
        async move {
            let r = send(&app, Method::POST, "/api/sessions", Some(&body.to_string())).await;
            let code = r.json()["code"].as_str().unwrap().to_string();
            r.error(StatusCode::BAD_REQUEST);
            code
        }
    };
    assert_eq!(
        bad(json!({"game": "go", "side": "first", "level": "master"})).await,
        "unknown_level"
    );
    assert_eq!(
        bad(json!({"game": "liuzhou", "side": "first", "level": "master", "strength": 5})).await,
        "level_and_agent"
    );
    // Old links that name visits still play.
    let s = new_game(&app, json!({"game": "go", "side": "first", "strength": 25})).await;
    assert_eq!(
        (s["strength"].as_u64(), s["level"].is_null()),
        (Some(25), true)
    );
}
