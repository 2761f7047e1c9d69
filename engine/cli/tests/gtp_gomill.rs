//! `engine gtp` under a match driver nobody here wrote: gomill's ringmaster (PyPI `gomill`,
//! Python 2.7 only) plays it against `gnugo --level 1` and checks every move with its own board.
//!
//! Needs `GOMILL_PYTHON` naming a Python 2.7 interpreter that can import gomill, and gnugo;
//! otherwise it says what is missing and passes. Run:
//! `GOMILL_PYTHON=~/.pyenv/versions/2.7.18/bin/python cargo test -p engine --test gtp_gomill`
//! (with `PYTHONPATH` pointing at gomill's site-packages if it is installed elsewhere).

use std::path::Path;
use std::process::Command;

#[test]
fn ringmaster_plays_engine_against_gnugo() {
    let Ok(python) = std::env::var("GOMILL_PYTHON") else {
        eprintln!("SKIPPED: GOMILL_PYTHON is not set (a Python 2.7 with gomill installed)");
        return;
    };
    let gnugo = "/usr/games/gnugo";
    if !Path::new(gnugo).exists() {
        eprintln!("SKIPPED: gnugo not found (apt-get install gnugo)");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gomill");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ctl = dir.join("match.ctl");
    let games = 4;
    std::fs::write(
        &ctl,
        format!(
            r#"competition_type = 'playoff'
board_size = 9
komi = 7.5
record_games = True
players = {{
    'engine': Player('{engine} gtp --config {config} --agent playout'),
    'gnugo': Player('{gnugo} --mode gtp --level 1 --chinese-rules --positional-superko'),
}}
matchups = [
    Matchup('engine', 'gnugo', alternating=True, number_of_games={games},
            scorer='players', move_limit=1000),
]
"#,
            engine = env!("CARGO_BIN_EXE_engine"),
            config = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/go.yaml"),
        ),
    )
    .unwrap();
    let ringmaster = "import sys; sys.argv[0] = 'ringmaster'; \
                      from gomill import ringmaster_command_line as r; r.main()";
    let run = Command::new(&python)
        .args(["-c", ringmaster])
        .arg(&ctl)
        .arg("run")
        .output()
        .expect("run gomill ringmaster");
    let out = String::from_utf8_lossy(&run.stdout);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "ringmaster failed:\n{out}\n{err}");
    let show = Command::new(&python)
        .args(["-c", ringmaster])
        .arg(&ctl)
        .arg("show")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&show.stdout);
    eprintln!("{report}");
    assert!(
        report.contains(&format!("({games}/{games} games)")),
        "every game finished: {report}"
    );
    // A protocol error, an illegal move or a crash would show as a void or forfeited game.
    for bad in ["void", "forfeit", "error", "disagreed", "unknown result"] {
        assert!(!report.to_lowercase().contains(bad), "{bad}: {report}");
    }
    let records = std::fs::read_dir(dir.join("match.games")).unwrap().count();
    assert_eq!(records, games, "one SGF per game");
}
