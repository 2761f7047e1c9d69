//! `engine analyse` run as the binary: the candidates it lists for each game, in text and
//! JSON, and its answers to bad input.

use std::process::Command;

use serde_json::Value;

mod go_networks;

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");
/// The repository root, where `configs/` lives.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Runs `engine analyse ARGS` in the repository root: (exit code, stdout, stderr).
fn analyse(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(ENGINE)
        .arg("analyse")
        .args(args)
        .current_dir(ROOT)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn analyse_json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = analyse(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn a_xiangqi_win_in_one_comes_first_and_proven() {
    // Red's rooks hold rank 8 and the a-file: the Black king on d9 has no move, so any Red move
    // that keeps it so wins at once (a side with no legal move loses), among them the mates
    // a7a9 and a7d7.
    let fen = "3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1";
    let a = analyse_json(&["--game", "xiangqi", "--fen", fen, "--visits", "2000"]);
    assert_eq!(a["game"], "xiangqi");
    assert_eq!(a["to_act"], "Red");
    assert_eq!(a["value"], 1.0);
    let first = &a["candidates"][0];
    assert_eq!(first["proven"], "won", "{a}");
    assert_eq!(first["proof_length"], 1, "{a}");
    assert_eq!(first["value"], 1.0);
    assert_eq!(first["line"].as_array().unwrap().len(), 1);
    assert_eq!(first["line"][0], first["action"]);
}

#[test]
fn liuzhou_lists_candidates_with_consistent_figures() {
    let a = analyse_json(&[
        "--game", "liuzhou", "--moves", "c3 d4", "--visits", "800", "--top", "0",
    ]);
    assert_eq!(a["position"], "6/6/3W2/2B3/6/6 b place 0 2 0");
    assert_eq!(a["to_act"], "Black");
    let candidates = a["candidates"].as_array().unwrap();
    // Every legal placement, visited or not.
    assert_eq!(candidates.len(), 34);
    assert_eq!(a["legal"], 34);
    let visits: u64 = candidates
        .iter()
        .map(|c| c["visits"].as_u64().unwrap())
        .sum();
    // The root's own first visit expands it; every later playout passes through one child. A
    // network's batches are filled whole, so the search may pass 800 by part of a batch.
    let playouts = a["playouts"].as_u64().unwrap();
    assert!(
        (800..800 + 64).contains(&playouts),
        "{playouts} playouts for 800 visits"
    );
    assert!(
        (playouts - 1..=playouts).contains(&visits),
        "children's visits {visits} of {playouts}"
    );
    let shares: f64 = candidates
        .iter()
        .map(|c| c["share"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    for pair in candidates.windows(2) {
        assert!(pair[0]["visits"].as_u64() >= pair[1]["visits"].as_u64());
    }
    for c in candidates {
        let line = c["line"].as_array().unwrap();
        assert_eq!(line[0], c["action"]);
        let value = c["value"].as_f64();
        if c["visits"].as_u64().unwrap() > 0 {
            assert!(value.is_some_and(|v| (-1.0..=1.0).contains(&v)), "{c}");
        } else {
            assert!(value.is_none(), "{c}");
        }
    }
}

#[test]
fn go_text_table_and_time_limit() {
    let (code, out, err) = analyse(&[
        "--game",
        "go",
        "--moves",
        "E5 C3",
        "--seconds",
        "0.3",
        "--top",
        "3",
        "--agent",
        "mcts",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Black to act; mcts (random playouts): "),
        "{out}"
    );
    assert!(out.contains("action"), "{out}");
    assert!(out.contains("(3 of 80 legal actions shown"), "{out}");
    // Header, column names, three rows, the note.
    let rows = out.lines().skip_while(|l| !l.starts_with("action")).count();
    assert_eq!(rows, 5, "{out}");
}

#[test]
fn bad_input_is_named_and_exits_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--position", "6/6/6 b place"],
            "--position '6/6/6 b place'",
        ),
        (&["--moves", "c3 c3"], "--moves: action 2 (c3)"),
        (&["--moves", "c3 zz9"], "--moves: action 2 (zz9)"),
        (&["--agent", "alpha"], "--agent \"alpha\""),
        (&["--model", "/nope.onnx"], "--model"),
        (&["--visits", "0"], "--visits 0"),
        (&["--seconds=-1"], "--seconds -1"),
        (&["--seconds", "NaN"], "--seconds NaN"),
        (&["--threads", "0"], "--threads 0"),
        (&["--search", "alphazero"], "--search"),
        (
            &[
                "--game",
                "xiangqi",
                "--fen",
                "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1",
                "--moves",
                "e0d0",
            ],
            "--moves: action 1 (e0d0)",
        ),
    ];
    for (args, expected) in cases {
        let (code, out, err) = analyse(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_finished_game_has_nothing_to_analyse() {
    // Two passes end a Go game.
    let (code, _, err) = analyse(&["--game", "go", "--moves", "pass pass"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the game is over"), "{err}");
}

#[test]
fn the_shipped_liuzhou_model_guides_the_search_by_default() {
    let a = analyse_json(&["--visits", "300", "--top", "0"]);
    // The checkout's network, found from the engine's build wherever it runs.
    let agent = a["agent"].as_str().unwrap();
    assert!(
        agent.starts_with("net (/") && agent.ends_with("models/liuzhou/best.onnx)"),
        "{agent}"
    );
    let candidates = a["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 36);
    let priors: Vec<f64> = candidates
        .iter()
        .map(|c| c["prior"].as_f64().unwrap())
        .collect();
    let sum: f64 = priors.iter().sum();
    assert!((sum - 1.0).abs() < 1e-3, "priors sum to {sum}");
    // A trained network is not uniform: its favourite placements stand out.
    let max = priors.iter().cloned().fold(0.0, f64::max);
    assert!(max > 2.0 / 36.0, "largest prior {max}");
    let value = a["value"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&value));
}

#[test]
fn another_agent_asked_for_leaves_the_shipped_model_alone() {
    let a = analyse_json(&["--agent", "mcts", "--visits", "100"]);
    assert_eq!(a["agent"], "mcts (random playouts)");
}

#[test]
fn a_gumbel_search_spends_its_visits_by_sequential_halving() {
    let a = analyse_json(&["--search", "gumbel", "--visits", "300", "--top", "0"]);
    let agent = a["agent"].as_str().unwrap();
    assert!(
        agent.starts_with("net (/") && agent.ends_with("models/liuzhou/best.onnx), gumbel"),
        "{agent}"
    );
    assert_eq!(a["playouts"], 300);
    let candidates = a["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 36);
    let visits: Vec<u64> = candidates
        .iter()
        .map(|c| c["visits"].as_u64().unwrap())
        .collect();
    // The root's own evaluation, then 299 visits among 16 sampled placements: the last two
    // kept share most of them, the 20 never sampled get none.
    assert_eq!(visits.iter().sum::<u64>(), 299);
    assert_eq!(visits.iter().filter(|&&v| v > 0).count(), 16);
    assert!(visits[0] >= 70 && visits[0] - visits[1] <= 1, "{visits:?}");
}

/// On a Go board the default network was not made for (configs/go.yaml's fully connected
/// heads play 9 × 9 only), the engine passes it over, says so, and analyses with the tree
/// search with random playouts; `engine selfplay` plays uniform priors there. The shipped
/// network plays every size, 13 × 13 too.
#[test]
fn the_default_go_network_is_passed_over_on_another_board() {
    let dir = std::env::temp_dir().join(format!("engine-analyse-13-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("go13.yaml");
    std::fs::write(&config, "game:\n  name: go\n  size: 13\n").unwrap();
    let config = config.to_str().unwrap();
    let (code, stdout, stderr) = analyse(&["--config", config, "--visits", "30"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.is_empty());
    assert!(!stderr.contains(" only, not this"), "{stderr}");
    go_networks::go_network(&dir.join("models"), false);
    let out = Command::new(ENGINE)
        .args(["analyse", "--config", config, "--visits", "30"])
        .current_dir(ROOT)
        .env("RUST_LOG", "warn")
        .env("ENGINE_MODELS", dir.join("models"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plays 9x9 only, not this 13x13 board"),
        "{stderr}"
    );
    let out = Command::new(ENGINE)
        .args(["selfplay", "--config", config, "--games", "1", "--out"])
        .arg(dir.join("shards"))
        .env("RUST_LOG", "warn")
        .env("ENGINE_MODELS", dir.join("models"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
