//! Xiangqi on the page: the 9 × 10 points, the river and the palaces (drawn by the page), the
//! pieces from the FEN, and moves in ICCS (`h2e2`).

use games::xiangqi::{pgn, Xiangqi};
use games::{Game, GameRecord};
use serde_json::json;

use super::review::RecordRefusal;
use super::view::{fen_cells, BoardView, WebGame};

/// An alpha-beta node costs far less than an MCTS visit with a playout: this many nodes stand
/// for one visit of strength (400 → 100 000 nodes, a fraction of a second).
const ALPHABETA_NODES_PER_VISIT: u64 = 250;
/// MiB of transposition table per alpha-beta session.
const ALPHABETA_HASH_MIB: u64 = 4;

impl WebGame for Xiangqi {
    const TITLE: &'static str = "Xiangqi (象棋)";
    const SIDES: [&'static str; 2] = ["Red", "Black"];

    fn board(&self) -> BoardView {
        let fen = self.to_text();
        let names = (0..10)
            .rev()
            .map(|rank| {
                (b'a'..=b'i')
                    .map(|f| format!("{}{rank}", f as char))
                    .collect()
            })
            .collect();
        BoardView {
            cols: 9,
            rows: 10,
            names,
            cells: fen_cells(fen.split(' ').next().unwrap_or(""), 9, 10),
            info: json!({ "in_check": self.outcome().is_none() && self.in_check() }),
        }
    }

    /// The alpha-beta searcher: far stronger than MCTS with random playouts at this game.
    const NATIVE_AGENTS: &'static [&'static str] = &["alphabeta"];

    /// `alphabeta` searches `ALPHABETA_NODES_PER_VISIT × strength` nodes per move, with a small
    /// hash table: every live session holds its own.
    fn native_spec(name: &str, strength: u64) -> Option<String> {
        (name == "alphabeta").then(|| {
            format!(
                "alphabeta:nodes={},hash={ALPHABETA_HASH_MIB}",
                strength.saturating_mul(ALPHABETA_NODES_PER_VISIT)
            )
        })
    }

    fn display_action(&self, action: Self::Action) -> Option<String> {
        Some(self.chinese_notation(action))
    }

    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>) {
        let iccs = self.format_action(action);
        let (from, to) = iccs.split_at(iccs.len() / 2);
        (Some(from.to_string()), Some(to.to_string()))
    }

    /// The first game of a PGN file, moves in ICCS, WXF or Chinese notation (any encoding the
    /// reader knows).
    fn read_record(_start: &Self, text: &str) -> Result<GameRecord<Self>, RecordRefusal> {
        let first = pgn::read_pgn(text.as_bytes()).into_iter().next();
        let Some(game) = first else {
            return Err(RecordRefusal::new(None, "no game in the record"));
        };
        game.map_err(|e| {
            // The reader names a move's line in its reason: `1. h2e3 (line 7): …`.
            let line: Option<usize> = e
                .reason
                .split_once(" (line ")
                .and_then(|(_, rest)| rest.split(')').next().and_then(|n| n.trim().parse().ok()));
            let said = line.map_or(e.reason.clone(), |l| {
                e.reason.replacen(&format!(" (line {l})"), "", 1)
            });
            let reason = match e.move_number {
                Some(m) => format!("move {m}: {said}"),
                None => said,
            };
            RecordRefusal::new(line, reason)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_names_and_pieces_follow_iccs() {
        let s = Xiangqi::default();
        let b = s.board();
        assert_eq!((b.cols, b.rows), (9, 10));
        assert_eq!(b.names[0][0], "a9");
        assert_eq!(b.names[9][8], "i0");
        assert_eq!(b.cells[9][4], "K", "the red king on e0");
        assert_eq!(b.cells[0][4], "k", "the black king on e9");
        assert_eq!(b.names[7][7], "h2");
        assert_eq!(b.cells[7][7], "C", "a red cannon on h2");
        let a = s.parse_action("h2e2").unwrap();
        assert_eq!(
            s.action_points(a),
            (Some("h2".to_string()), Some("e2".to_string()))
        );
    }
}
