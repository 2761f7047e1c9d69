//! Points and moves as GTP writes them: columns `A`–`T` without `I`, rows `1`–`N` from the
//! bottom; `pass`.

use super::board::{BLACK, WHITE};
use crate::{ParseError, Player};

/// Column letters as GTP writes them (no `I`).
pub const COLUMNS: &[u8; 19] = b"ABCDEFGHJKLMNOPQRST";

/// A point of the board: `row` 0 is the bottom row (GTP row 1), `col` 0 is column `A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    pub row: u8,
    pub col: u8,
}

impl Point {
    pub fn new(row: usize, col: usize) -> Point {
        Point {
            row: row as u8,
            col: col as u8,
        }
    }

    /// The GTP vertex (`D4`).
    pub fn to_gtp(self) -> String {
        format!(
            "{}{}",
            COLUMNS[self.col as usize] as char,
            self.row as usize + 1
        )
    }

    /// Reads a GTP vertex on a `size` board (case-insensitive; not `pass`).
    pub fn parse_gtp(text: &str, size: usize) -> Result<Point, ParseError> {
        let err = |reason: &str| ParseError::new("GTP vertex", text, reason);
        let mut chars = text.chars();
        let letter = chars
            .next()
            .ok_or_else(|| err("empty"))?
            .to_ascii_uppercase();
        let col = COLUMNS
            .iter()
            .position(|&c| c as char == letter)
            .ok_or_else(|| err("column must be a letter A-T without I"))?;
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 2 {
            return Err(err("row must be a number"));
        }
        let row: usize = digits.parse().map_err(|_| err("row must be a number"))?;
        if col >= size || row == 0 || row > size {
            return Err(err(&format!("outside the {size}x{size} board")));
        }
        Ok(Point::new(row - 1, col))
    }
}

/// A move: a stone on a point, or a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Place(Point),
    Pass,
}

impl Move {
    /// The GTP form: a vertex or `pass`.
    pub fn to_gtp(self) -> String {
        match self {
            Move::Place(p) => p.to_gtp(),
            Move::Pass => "pass".into(),
        }
    }

    /// Reads a GTP vertex or `pass` on a `size` board.
    pub fn parse_gtp(text: &str, size: usize) -> Result<Move, ParseError> {
        if text.eq_ignore_ascii_case("pass") {
            Ok(Move::Pass)
        } else {
            Point::parse_gtp(text, size).map(Move::Place)
        }
    }
}

pub(super) fn stone_of(player: Player) -> u8 {
    match player {
        Player::First => BLACK,
        Player::Second => WHITE,
    }
}

/// The colour letter GTP and SGF use (`B`, `W`).
pub fn color_letter(player: Player) -> char {
    match player {
        Player::First => 'B',
        Player::Second => 'W',
    }
}
