//! Handicap over GTP, `engine gtp` beside GNU Go (`gnugo --mode gtp`): both are given the same
//! command sequences and must answer alike — the same stones (as sets) for `fixed_handicap` on
//! every board size, `?` from both where the placement is refused — and a handicap game the
//! engine writes with `printsgf` must load in GNU Go as the same position.
//!
//! When gnugo is missing the test says so and passes, unless `ENGINE_REQUIRE_ORACLES=1` (CI).

use std::path::Path;

use games::go::{Move, Point};
use players::gtp_client::{GtpClient, GtpClientError};

fn gnugo() -> Option<String> {
    testkit::gnugo("handicap not compared with GNU Go")
}

fn engine() -> GtpClient {
    GtpClient::spawn(&format!(
        "{} gtp --agent playout --config {}",
        env!("CARGO_BIN_EXE_engine"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/go.yaml"),
    ))
    .expect("start engine gtp")
}

/// An answer reduced to what both programs must agree on: `?` for a refusal, else the
/// answer's words sorted (vertex lists compare as sets).
fn verdict(answer: Result<String, GtpClientError>) -> String {
    match answer {
        Ok(text) => {
            let mut words: Vec<String> = text.split_whitespace().map(str::to_uppercase).collect();
            words.sort();
            format!("= {}", words.join(" "))
        }
        Err(GtpClientError::Refused { .. }) => "?".to_string(),
        Err(e) => panic!("{e}"),
    }
}

/// Sends `commands` to both, in order, and checks every answer agrees.
fn same_answers(ours: &mut GtpClient, theirs: &mut GtpClient, commands: &[String]) -> usize {
    for c in commands {
        let (a, b) = (verdict(ours.send(c)), verdict(theirs.send(c)));
        assert_eq!(
            a, b,
            "`{c}`: engine {a:?}, gnugo {b:?} (after {commands:?})"
        );
    }
    commands.len()
}

#[test]
fn handicap_commands_answer_as_gnu_go_does() {
    let Some(gnugo) = gnugo() else { return };
    let mut ours = engine();
    let mut theirs = GtpClient::spawn(&format!("{gnugo} --mode gtp")).expect("start gnugo");
    let mut compared = 0;
    let mut placed = 0;
    for size in [7, 8, 9, 11, 12, 13, 19] {
        for n in 0..=10 {
            let commands = [
                format!("boardsize {size}"),
                "clear_board".into(),
                format!("fixed_handicap {n}"),
            ];
            compared += same_answers(&mut ours, &mut theirs, &commands);
            // White moves next, and both boards hold the same stones: the first free point
            // is legal for White in both.
            let stones = ours.send("printsgf").unwrap();
            if stones.contains("HA[") {
                placed += 1;
                let mv = format!("play w {}", if size > 7 { "B2" } else { "A1" });
                compared += same_answers(&mut ours, &mut theirs, &[mv]);
            }
        }
    }
    assert_eq!(
        placed,
        3 * 3 + 4 * 8,
        "2 to 4 stones on 7, 8, 12; 2 to 9 on 9, 11, 13, 19"
    );
    // Refusals: a board with stones, a second handicap, boards too small, no number.
    let refusals: Vec<Vec<String>> = vec![
        vec![
            "boardsize 9",
            "clear_board",
            "play b E5",
            "fixed_handicap 2",
        ],
        vec![
            "boardsize 9",
            "clear_board",
            "fixed_handicap 4",
            "fixed_handicap 4",
        ],
        vec![
            "boardsize 19",
            "clear_board",
            "fixed_handicap 9",
            "fixed_handicap 2",
        ],
        vec!["boardsize 6", "clear_board", "fixed_handicap 2"],
        vec!["boardsize 5", "clear_board", "fixed_handicap 4"],
        vec!["boardsize 9", "clear_board", "fixed_handicap x"],
        vec!["boardsize 9", "clear_board", "fixed_handicap -2"],
        // A free placement someone else chose, then refusals of bad lists.
        vec!["boardsize 9", "clear_board", "set_free_handicap C3 G7 E5"],
        vec![
            "boardsize 9",
            "clear_board",
            "set_free_handicap A1 B1 C1 D1 E1 F1 G1 H1 J1 A2",
        ],
        vec!["boardsize 9", "clear_board", "set_free_handicap E5"],
        vec!["boardsize 9", "clear_board", "set_free_handicap E5 E5"],
        vec!["boardsize 9", "clear_board", "set_free_handicap E5 Z5"],
        vec![
            "boardsize 9",
            "clear_board",
            "play w E5",
            "set_free_handicap C3 G7",
        ],
        vec!["boardsize 9", "clear_board", "place_free_handicap 1"],
        vec![
            "boardsize 9",
            "clear_board",
            "play b C3",
            "place_free_handicap 2",
        ],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    for commands in &refusals {
        compared += same_answers(&mut ours, &mut theirs, commands);
    }
    eprintln!("{compared} answers compared with GNU Go");
}

/// What `list_stones COLOR` answers, as sorted points.
fn stones(client: &mut GtpClient, color: &str, size: usize) -> Vec<Point> {
    let mut v: Vec<Point> = client
        .send(&format!("list_stones {color}"))
        .unwrap()
        .split_whitespace()
        .map(|t| match Move::parse_gtp(t, size).unwrap() {
            Move::Place(p) => p,
            Move::Pass => panic!("a pass among the stones"),
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_handicap_game_written_by_printsgf_loads_in_gnu_go() {
    let Some(gnugo) = gnugo() else { return };
    let mut ours = engine();
    let mut theirs = GtpClient::spawn(&format!("{gnugo} --mode gtp")).expect("start gnugo");
    for c in ["boardsize 9", "clear_board", "komi 0.5", "fixed_handicap 5"] {
        ours.send(c).unwrap();
    }
    for c in ["genmove w", "genmove b", "genmove w", "genmove b"] {
        ours.send(c).unwrap();
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("handicap_{}.sgf", std::process::id()));
    ours.send(&format!("printsgf {}", file.display())).unwrap();
    assert_eq!(
        theirs.send(&format!("loadsgf {}", file.display())).unwrap(),
        "white",
        "White to move after two moves each"
    );
    // Our own record, read back by us, holds the same stones as GNU Go's board.
    let mut again = engine();
    again.send(&format!("loadsgf {}", file.display())).unwrap();
    let sgf = again.send("printsgf").unwrap();
    assert_eq!(sgf, ours.send("printsgf").unwrap(), "{sgf}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("HA[5]"), "{text}");
    let state = games::go::sgf::SgfGame::parse(&text)
        .unwrap()
        .replay(&games::go::GoRules::with_size(9), None)
        .unwrap();
    for (color, who) in [
        ("black", games::Player::First),
        ("white", games::Player::Second),
    ] {
        assert_eq!(
            stones(&mut theirs, color, 9),
            state.stones_of(who),
            "{color}\n{text}"
        );
    }
    std::fs::remove_file(&file).unwrap();
}
