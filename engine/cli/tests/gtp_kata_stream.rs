//! `kata-genmove_analyze` over `engine gtp`'s stdin and stdout, as a GUI meets it: the answer
//! streams `info` lines while the move is searched, ends with `play MOVE` and a blank line, and
//! a command sent meanwhile waits for it rather than cutting it short.

use std::io::Write;
use std::process::{Command, Stdio};

const ENGINE: &str = env!("CARGO_BIN_EXE_engine");

#[test]
fn genmove_analyze_streams_its_search_then_plays_and_later_commands_wait() {
    let out = Command::new(ENGINE)
        .args(["gtp", "--agent", "mcts", "--visits", "3000", "--seed", "1"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            // Every line at once: `name` arrives while the move is searched.
            child.stdin.take().unwrap().write_all(
                b"7 kata-genmove_analyze b 2\nname\nkata-genmove_analyze w 1 frob 2\nquit\n",
            )?;
            child.wait_with_output()
        })
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let answers: Vec<&str> = stdout.split("\n\n").collect();
    let first: Vec<&str> = answers[0].lines().collect();
    assert_eq!(first[0], "=7", "{stdout}");
    let (play, infos) = first[1..].split_last().expect("lines after =");
    assert!(!infos.is_empty(), "reports while searching: {stdout}");
    for info in infos {
        assert!(info.starts_with("info move "), "{info}");
        for key in [
            " visits ",
            " winrate ",
            " scoreMean ",
            " scoreStdev ",
            " pv ",
        ] {
            assert!(info.contains(key), "{key} in {info}");
        }
    }
    let mv = play.strip_prefix("play ").expect("the move last");
    assert!(!mv.is_empty() && mv != "resign", "{stdout}");
    // `name` was answered after the move, not in the middle of it.
    assert!(answers[1].starts_with("= "), "{stdout}");
    assert!(
        answers[2].starts_with("? syntax error"),
        "a bad argument: {stdout}"
    );
}
