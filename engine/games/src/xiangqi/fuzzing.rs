//! The body of the `xiangqi_text` fuzz target, here so the stable test suite can run the same
//! checks over the fuzz corpus (`fuzz/corpus/xiangqi_text/`).

use super::{fen, perft, Xiangqi};
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
