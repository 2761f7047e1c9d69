//! Bitboard tables and shape tests for the 6 × 6 board.

use crate::Symmetry;

/// All 36 points.
pub const BOARD: u64 = (1 << 36) - 1;
/// File a (the left edge).
pub const FILE_A: u64 = 0x0000_4104_1041;
/// File f (the right edge).
pub const FILE_F: u64 = FILE_A << 5;
/// Bottom-left corners of the 25 possible 2 × 2 squares (files a–e, ranks 1–5).
const SQUARE_CORNERS: u64 = (BOARD >> 6) & !FILE_F;
const RANK_1: u64 = 0x3F;

/// Every stone of `stones` that belongs to a complete square or line of `stones`.
/// Callers pass one colour's unmarked stones: marked stones belong to no shape.
#[inline]
pub fn shape_members(stones: u64) -> u64 {
    let corners = stones & (stones >> 1) & (stones >> 6) & (stones >> 7) & SQUARE_CORNERS;
    let mut members = corners | corners << 1 | corners << 6 | corners << 7;
    for i in 0..6 {
        let rank = RANK_1 << (6 * i);
        if stones & rank == rank {
            members |= rank;
        }
        let file = FILE_A << i;
        if stones & file == file {
            members |= file;
        }
    }
    members
}

/// The reward of putting a stone on `p`, given the mover's unmarked stones with `p` among
/// them: 2 for a line through `p`, else 1 for a square containing `p`, else 0.
#[inline]
pub fn reward(stones: u64, p: u8) -> u8 {
    let (file, rank) = (p % 6, p / 6);
    let rank_mask = RANK_1 << (6 * rank);
    let file_mask = FILE_A << file;
    if stones & rank_mask == rank_mask || stones & file_mask == file_mask {
        return 2;
    }
    // The (up to four) squares containing p, by their bottom-left corner.
    let corners = SQUARE_CORNERS & (1u64 << p | 1u64 << p >> 1 | 1u64 << p >> 6 | 1u64 << p >> 7);
    let full = stones & (stones >> 1) & (stones >> 6) & (stones >> 7);
    u8::from(corners & full != 0)
}

/// The empty points where `own` (one colour's unmarked stones) completes a shape with its
/// next action: a placement there when `placing`, else a step onto it by one of its stones
/// (that stone leaving its own point, which may break the shape it would complete).
pub fn completing_points(own: u64, empty: u64, placing: bool) -> u64 {
    let mut out = 0;
    let mut points = empty & BOARD;
    while points != 0 {
        let p = points.trailing_zeros() as u8;
        points &= points - 1;
        let to = 1u64 << p;
        let completes = if placing {
            reward(own | to, p) > 0
        } else {
            // Neighbours of p among own stones: each may step onto p.
            let mut from = own
                & ((to << 6) | (to >> 6) | ((to << 1) & !FILE_A) | ((to >> 1) & !FILE_F))
                & BOARD;
            let mut found = false;
            while from != 0 && !found {
                let s = from & from.wrapping_neg();
                from &= from - 1;
                found = reward((own & !s) | to, p) > 0;
            }
            found
        };
        if completes {
            out |= to;
        }
    }
    out
}

/// Where `sym` takes point `p`.
#[inline]
pub fn transform_point(sym: Symmetry, p: u8) -> u8 {
    let (rank, file) = sym.map(p as usize / 6, p as usize % 6, 6, 6);
    (rank * 6 + file) as u8
}

/// A bitboard seen through `sym`.
pub fn transform_board(sym: Symmetry, board: u64) -> u64 {
    let mut out = 0;
    let mut b = board;
    while b != 0 {
        let p = b.trailing_zeros() as u8;
        b &= b - 1;
        out |= 1u64 << transform_point(sym, p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(names: &[&str]) -> u64 {
        names.iter().fold(0, |b, n| {
            let n = n.as_bytes();
            b | 1u64 << ((n[1] - b'1') * 6 + (n[0] - b'a'))
        })
    }

    #[test]
    fn edge_masks() {
        assert_eq!(FILE_A, pts(&["a1", "a2", "a3", "a4", "a5", "a6"]));
        assert_eq!(FILE_F, pts(&["f1", "f2", "f3", "f4", "f5", "f6"]));
        assert_eq!(SQUARE_CORNERS.count_ones(), 25);
    }

    #[test]
    fn square_and_line_members() {
        let sq = pts(&["c3", "d3", "c4", "d4", "f6"]);
        assert_eq!(shape_members(sq), pts(&["c3", "d3", "c4", "d4"]));
        let line = pts(&["a2", "b2", "c2", "d2", "e2", "f2"]);
        assert_eq!(shape_members(line), line);
        let col = pts(&["e1", "e2", "e3", "e4", "e5", "e6", "a1"]);
        assert_eq!(shape_members(col), col & !pts(&["a1"]));
        // Diagonals never count.
        assert_eq!(shape_members(pts(&["a1", "b2", "c3", "d4", "e5", "f6"])), 0);
        // No wrap-around between f and a.
        assert_eq!(shape_members(pts(&["f1", "a2", "f2", "a3"])), 0);
    }

    #[test]
    fn rewards() {
        let sq = pts(&["c3", "d3", "c4", "d4"]);
        for p in ["c3", "d3", "c4", "d4"] {
            assert_eq!(reward(sq, pts(&[p]).trailing_zeros() as u8), 1, "{p}");
        }
        let two_squares = pts(&["b3", "c3", "d3", "b4", "c4", "d4"]);
        assert_eq!(reward(two_squares, pts(&["c4"]).trailing_zeros() as u8), 1);
        let line = pts(&["a2", "b2", "c2", "d2", "e2", "f2"]);
        assert_eq!(reward(line, pts(&["d2"]).trailing_zeros() as u8), 2);
        // Shapes not through p do not reward.
        assert_eq!(
            reward(sq | pts(&["a6"]), pts(&["a6"]).trailing_zeros() as u8),
            0
        );
    }

    #[test]
    fn completing_points_by_placement_and_by_step() {
        let three = pts(&["c3", "d3", "c4"]);
        let empty = BOARD & !three;
        assert_eq!(completing_points(three, empty, true), pts(&["d4"]));
        // No stone of `three` can step onto d4 and keep the other three in place.
        assert_eq!(completing_points(three, empty, false), 0);
        // e4 steps to d4 and completes the square; a stone that would leave the square it
        // completes (c4 to b4, say) does not.
        let four = three | pts(&["e4"]);
        let empty = BOARD & !four;
        assert_eq!(completing_points(four, empty, false), pts(&["d4"]));
        // Five of a row and a stone below the gap: the step completes the line.
        let row = pts(&["a2", "b2", "c2", "e2", "f2", "d1"]);
        assert_eq!(completing_points(row, BOARD & !row, false), pts(&["d2"]));
        assert_eq!(completing_points(row, BOARD & !row, true), pts(&["d2"]));
        // A point that is not empty is never counted.
        assert_eq!(completing_points(four, empty & !pts(&["d4"]), false), 0);
        // No wrap-around from file f to file a of the next rank.
        let edge = pts(&["a3", "b3", "b4", "f3"]);
        assert_eq!(
            completing_points(edge, BOARD & !edge, false) & pts(&["a4"]),
            0
        );
    }
}
