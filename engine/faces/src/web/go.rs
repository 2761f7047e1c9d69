//! Go on the page: the N × N points with star points (drawn by the page), stones from the
//! position text, GTP vertices (`E5`, `pass`), and SGF records.

use games::go::sgf::SgfGame;
use games::go::{GoState, COLUMNS};
use games::{Game, GameRecord};
use serde_json::json;

use super::review::{line_of, RecordRefusal};
use super::view::{fen_cells, BoardView, WebGame};

impl WebGame for GoState {
    const TITLE: &'static str = "Go (围棋)";
    const SIDES: [&'static str; 2] = ["Black", "White"];

    fn board(&self) -> BoardView {
        let n = self.size();
        let text = self.to_text();
        let names = (0..n)
            .rev()
            .map(|row| {
                (0..n)
                    .map(|col| format!("{}{}", COLUMNS[col] as char, row + 1))
                    .collect()
            })
            .collect();
        BoardView {
            cols: n,
            rows: n,
            names,
            cells: fen_cells(text.split(' ').next().unwrap_or(""), n, n),
            info: json!({
                "komi": self.komi(),
                "moves": self.moves_played(),
                "passes": self.consecutive_passes(),
                "area_score": self.score_text(),
            }),
        }
    }

    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>) {
        let text = self.format_action(action);
        if text.eq_ignore_ascii_case("pass") {
            (None, None)
        } else {
            (None, Some(text))
        }
    }

    /// The first game of an SGF collection, its size and komi from the record.
    fn read_record(start: &Self, text: &str) -> Result<GameRecord<Self>, RecordRefusal> {
        let sgf = SgfGame::parse(text)
            .map_err(|e| RecordRefusal::new(Some(line_of(text, e.offset)), e.reason))?;
        sgf.record(start.rules(), 1).map_err(|e| {
            let reason = match e.move_number {
                Some(m) => format!("move {m}: {}", e.reason),
                None => e.reason,
            };
            RecordRefusal::new(None, reason)
        })
    }

    /// The default network plays one board size.
    fn network_fits(&self, start: &Self) -> bool {
        self.size() == start.size()
    }

    /// Ownership comes row by row from the first line up; the board is drawn top row first.
    fn ownership_grid(&self, cells: &[f32]) -> Option<Vec<Vec<f32>>> {
        let n = self.size();
        (cells.len() == n * n).then(|| {
            (0..n)
                .rev()
                .map(|row| cells[row * n..(row + 1) * n].to_vec())
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_names_follow_gtp_and_pass_has_no_point() {
        let s = GoState::with_size(9);
        let b = s.board();
        assert_eq!(b.names[0][0], "A9");
        assert_eq!(b.names[8][8], "J1", "GTP skips I");
        assert!(b.cells.iter().flatten().all(|c| c.is_empty()));
        let mut s2 = s.clone();
        s2.play(s2.parse_action("E5").unwrap()).unwrap();
        assert_eq!(s2.board().cells[4][4], "X");
        let pass = s.parse_action("pass").unwrap();
        assert_eq!(s.action_points(pass), (None, None));
    }
}
