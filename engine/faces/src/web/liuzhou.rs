//! Liuzhou on the page: the 6 × 6 points, marked stones, and the phase with what it owes.

use games::liuzhou::{ActionKind, Liuzhou, Phase};
use games::{Game, Player};
use serde_json::json;

use super::view::{fen_cells, BoardView, WebGame};

/// Alpha-beta nodes that stand for one visit of strength: 400 → 100 000 nodes, about a tenth
/// of a second (`docs/liuzhou.md` has the speed).
const ALPHABETA_NODES_PER_VISIT: u64 = 250;
/// MiB of transposition table per alpha-beta session.
const ALPHABETA_HASH_MIB: u64 = 4;

fn point_name(p: u8) -> String {
    format!("{}{}", (b'a' + p % 6) as char, p / 6 + 1)
}

impl WebGame for Liuzhou {
    const TITLE: &'static str = "Liuzhou chess (六洲棋)";
    const SIDES: [&'static str; 2] = ["Black", "White"];

    fn board(&self) -> BoardView {
        let names = (0..6u8)
            .rev()
            .map(|rank| (0..6).map(|file| point_name(rank * 6 + file)).collect())
            .collect();
        // LFEN writes marked stones in lower case, as the page draws them.
        let lfen = self.lfen();
        let cells = fen_cells(lfen.split(' ').next().unwrap_or(""), 6, 6);
        let marked = self.marked();
        // In MOVEMENT a player with no step removes a stone instead (the no-move rule); the
        // page names that case, which the phase alone does not tell.
        let mut actions = Vec::new();
        self.legal_actions(&mut actions);
        let stuck = self.phase() == Phase::Move
            && actions
                .iter()
                .any(|a| matches!(a.kind(), ActionKind::Select(_)));
        BoardView {
            cols: 6,
            rows: 6,
            names,
            cells,
            info: json!({
                "phase": self.phase().name(),
                "stuck": stuck,
                "pending": self.pending(),
                "move_count": self.move_count(),
                "moves_since_capture": self.moves_since_capture(),
                "move_limit": games::liuzhou::MOVE_LIMIT,
                "no_capture_limit": games::liuzhou::NO_CAPTURE_LIMIT,
                "stones": [self.stone_count(Player::First), self.stone_count(Player::Second)],
                "placed": [self.stones_placed(Player::First), self.stones_placed(Player::Second)],
                "stones_per_player": games::liuzhou::STONES_PER_PLAYER,
                "marked": marked.count_ones(),
                "lose_below": self.rules().lose_below,
            }),
        }
    }

    /// The alpha-beta searcher: far stronger than MCTS with random playouts at this game.
    const NATIVE_AGENTS: &'static [&'static str] = &["alphabeta"];

    /// `alphabeta` searches `ALPHABETA_NODES_PER_VISIT × strength` nodes per decision, with a
    /// small table: every live session holds its own.
    fn native_spec(name: &str, strength: u64) -> Option<String> {
        (name == "alphabeta").then(|| {
            format!(
                "alphabeta:nodes={},hash={ALPHABETA_HASH_MIB}",
                strength.saturating_mul(ALPHABETA_NODES_PER_VISIT)
            )
        })
    }

    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>) {
        match action.kind() {
            ActionKind::Place(p) | ActionKind::Select(p) => (None, Some(point_name(p))),
            ActionKind::Step { from, to } => (Some(point_name(from)), Some(point_name(to))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_names_follow_the_spec() {
        assert_eq!(point_name(0), "a1");
        assert_eq!(point_name(5), "f1");
        assert_eq!(point_name(35), "f6");
    }

    #[test]
    fn board_shows_marked_stones_and_the_phase() {
        let s = Liuzhou::from_lfen("bBW3/6/6/6/6/6 w place 0 5 0", Default::default()).unwrap();
        let b = s.board();
        assert_eq!(b.names[0][0], "a6");
        assert_eq!(b.names[5][5], "f1");
        assert_eq!(&b.cells[0][..3], &["b", "B", "W"]);
        assert_eq!(b.cells[5][0], "");
        assert_eq!(b.info["phase"], "place");
        assert_eq!(b.info["marked"], 1);
        assert_eq!(b.info["stuck"], false);
    }
}
