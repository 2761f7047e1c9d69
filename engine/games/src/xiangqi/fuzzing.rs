//! The bodies of the `xiangqi_text` and `xiangqi_pgn` fuzz targets, here so the stable test
//! suite can run the same checks over the fuzz corpora (`fuzz/corpus/xiangqi_text/`,
//! `fuzz/corpus/xiangqi_pgn/`).

use super::{fen, perft, pgn, Xiangqi};
use crate::Game;

/// Reads `data` as a FEN on the first line and moves (ICCS) after it, and checks, without ever
/// panicking on bad input, that: the FEN either fails with an error or round-trips; every move
/// text either fails or names squares; `is_legal` agrees with the generated moves; legal moves
/// play and the bulk perft count equals the number of generated moves.
pub fn check_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let Some(first) = lines.next() else { return };
    let Ok(mut game) = Xiangqi::from_fen(first) else {
        return;
    };
    let written = game.to_text();
    let again = Xiangqi::from_fen(&written).expect("a written FEN reads back");
    assert_eq!(again.to_text(), written, "FEN round trip");
    for token in lines.flat_map(str::split_whitespace).take(200) {
        let Ok(m) = game.parse_action(token) else {
            continue;
        };
        assert_eq!(game.parse_action(&game.format_action(m)), Ok(m));
        let mut legal = Vec::new();
        game.legal_actions(&mut legal);
        assert_eq!(game.is_legal(m), legal.contains(&m), "is_legal of {token}");
        let (mut pos, _, _) = fen::parse_fen(&game.to_text()).expect("own FEN");
        if game.outcome().is_none() {
            assert_eq!(perft(&mut pos, 1), legal.len() as u64);
        }
        let before = game.to_text();
        if game.play(m).is_err() {
            assert_eq!(game.to_text(), before, "a refused move changed the game");
        }
    }
}

/// Reads `data` as a PGN file (any encoding the reader takes) and checks, without ever
/// panicking on bad input, that every game it reads replays legally from its start to the
/// position its record ends in, and that the game written back as PGN reads back to the same
/// start, moves and result.
pub fn check_pgn(data: &[u8]) {
    for game in pgn::read_pgn_games(data).into_iter().flatten() {
        let record = &game.record;
        let mut state = record.start.clone();
        for &m in &record.actions {
            assert!(
                state.outcome().is_none(),
                "a move after the end in {}",
                state.to_text()
            );
            state.play(m).expect("a read game replays legally");
        }
        assert_eq!(state.to_text(), record.final_state().to_text());
        let written = pgn::write_pgn(record, &[]);
        let mut again = pgn::read_pgn(written.as_bytes());
        assert_eq!(again.len(), 1, "one game written, one read:\n{written}");
        let again = again
            .pop()
            .expect("one game")
            .unwrap_or_else(|e| panic!("a written game reads back ({e}):\n{written}"));
        assert_eq!(again.start.to_text(), record.start.to_text(), "{written}");
        assert_eq!(again.actions, record.actions, "{written}");
        assert_eq!(again.result, record.result, "{written}");
    }
}
