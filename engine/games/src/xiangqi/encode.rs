//! The network interface: a compact policy index over every (from, to) pair any piece can ever
//! play, and the input planes. Both are in the mover's frame: for Black the ranks are flipped
//! (rank r ↔ 9 − r, files unchanged), so the network always sees its own side at the bottom.
//!
//! The policy index enumerates, in order of (from, to) as 0..90 squares of that frame, the pairs
//! on one rank or file (rooks, cannons, generals, soldiers), knight jumps, advisor steps between
//! the five advisor points and bishop steps between the seven bishop points of the mover's half:
//! 2 062 indices instead of the 8 100 of a from × to grid, and the mapping round-trips exactly.

use super::board::{self, file_of, rank_of, square};
use super::{Move, Side, Xiangqi, NATURAL_LIMIT};
use crate::{Encoding, TensorShape};

const fn abs(x: i32) -> i32 {
    if x < 0 {
        -x
    } else {
        x
    }
}

const fn advisor_point(r: i32, f: i32) -> bool {
    matches!((r, f), (0 | 2, 3 | 5) | (1, 4))
}

const fn bishop_point(r: i32, f: i32) -> bool {
    matches!((r, f), (0 | 4, 2 | 6) | (2, 0 | 4 | 8))
}

/// Whether some piece of the mover could ever move from `a` to `b` (0..90 in the mover's frame).
const fn is_pair(a: usize, b: usize) -> bool {
    if a == b {
        return false;
    }
    let (ar, af) = ((a / 9) as i32, (a % 9) as i32);
    let (br, bf) = ((b / 9) as i32, (b % 9) as i32);
    let (dr, df) = (abs(ar - br), abs(af - bf));
    (dr == 0 || df == 0)
        || (dr == 1 && df == 2)
        || (dr == 2 && df == 1)
        || (dr == 1 && df == 1 && advisor_point(ar, af) && advisor_point(br, bf))
        || (dr == 2 && df == 2 && bishop_point(ar, af) && bishop_point(br, bf))
}

const fn count_pairs() -> usize {
    let mut n = 0;
    let mut a = 0;
    while a < 90 {
        let mut b = 0;
        while b < 90 {
            if is_pair(a, b) {
                n += 1;
            }
            b += 1;
        }
        a += 1;
    }
    n
}

/// The length of the policy vector.
pub const POLICY_SIZE: usize = count_pairs();
const NONE: u16 = u16::MAX;

const fn index_table() -> ([u16; 8100], [u16; POLICY_SIZE]) {
    let mut index = [NONE; 8100];
    let mut pairs = [0u16; POLICY_SIZE];
    let mut n = 0;
    let mut a = 0;
    while a < 90 {
        let mut b = 0;
        while b < 90 {
            if is_pair(a, b) {
                index[a * 90 + b] = n as u16;
                pairs[n] = (a * 90 + b) as u16;
                n += 1;
            }
            b += 1;
        }
        a += 1;
    }
    (index, pairs)
}

static TABLES: ([u16; 8100], [u16; POLICY_SIZE]) = index_table();

/// A square's 0..90 index in the frame of the mover (`black`: ranks flipped).
#[inline]
fn frame90(sq: u8, black: bool) -> usize {
    let r = rank_of(sq);
    let r = if black { 9 - r } else { r };
    r * 9 + file_of(sq)
}

#[inline]
fn unframe90(i: usize, black: bool) -> u8 {
    let (r, f) = (i / 9, i % 9);
    square(if black { 9 - r } else { r }, f)
}

/// The policy index of `m` for the mover (`black` = Black to move), if the pair is one any
/// piece could play.
#[inline]
pub fn move_index(m: Move, black: bool) -> Option<usize> {
    let i = TABLES.0[frame90(m.from(), black) * 90 + frame90(m.to(), black)];
    (i != NONE).then_some(i as usize)
}

/// The move at policy index `i` for the mover.
#[inline]
pub fn index_move(i: usize, black: bool) -> Option<Move> {
    let pair = *TABLES.1.get(i)? as usize;
    Some(Move::new(
        unframe90(pair / 90, black),
        unframe90(pair % 90, black),
    ))
}

/// Input planes: the mover's K A B N R C P, the opponent's K A B N R C P, a plane of ones if the
/// position occurred before (since the last capture), a plane holding plies-since-capture
/// / 120, then the squares the mover attacks at least once and at least twice, and the same
/// for the opponent ([`super::board::Position::attack_counts`]: defended pieces count as
/// attacked). A small tower sees a rook's or cannon's reach across the board only after many
/// layers; the attack planes hand it over, with the hanging pieces they imply.
pub const PLANES: usize = 20;

/// The planes before the attack planes: what the encoding held without them.
pub const BASE_PLANES: usize = 16;

/// Floats in one plane: the 10 x 9 points.
pub(crate) const PLANE: usize = 90;

/// The full input of a position given its first [`BASE_PLANES`] planes (an input encoded
/// without the attack planes): the pieces are read back from their planes, the attack planes
/// worked out from them. The attacks in the mover's frame do not depend on the mover's colour,
/// so the mover is placed as Red. An error says why the planes hold no position.
pub fn with_attack_planes(base: &[f32]) -> Result<Vec<f32>, String> {
    if base.len() != BASE_PLANES * PLANE {
        return Err(format!(
            "{} input floats, expected {} ({BASE_PLANES} planes of {PLANE})",
            base.len(),
            BASE_PLANES * PLANE
        ));
    }
    let mut pos = board::Position::empty();
    let mut used = [0usize; 2];
    for i in 0..PLANE {
        let mut found = None;
        for plane in 0..14 {
            match base[plane * PLANE + i] {
                0.0 => {}
                1.0 if found.is_none() => found = Some(plane),
                1.0 => return Err(format!("two pieces on point {i}")),
                x => return Err(format!("piece plane {plane} holds {x} on point {i}")),
            }
        }
        let Some(plane) = found else { continue };
        let (side, kind) = (plane / 7, (plane % 7) as u8 + 1);
        let slot = if kind == board::KING {
            0
        } else {
            used[side] += 1;
            used[side]
        };
        if slot >= board::MAX_PER_SIDE || (kind == board::KING && pos.slots[side][0] != 0) {
            return Err(format!("too many pieces of one kind or side at point {i}"));
        }
        let colour = if side == 0 {
            board::RED_BIT
        } else {
            board::BLACK_BIT
        };
        pos.put(colour | kind, board::from_index90(i), slot);
    }
    if pos.slots[0][0] == 0 || pos.slots[1][0] == 0 {
        return Err("a side has no general".into());
    }
    let mut out = vec![0.0; PLANES * PLANE];
    out[..base.len()].copy_from_slice(base);
    write_attack_planes(&pos, Side::Red, &mut out);
    Ok(out)
}

/// Writes the attack planes (the last four of [`PLANES`]) of `pos` with `us` to move.
pub(crate) fn write_attack_planes(pos: &board::Position, us: Side, out: &mut [f32]) {
    let black = us == Side::Black;
    for (first, side) in [(BASE_PLANES, us), (BASE_PLANES + 2, us.opponent())] {
        for (i, &n) in pos.attack_counts(side).iter().enumerate() {
            let at = plane_offset(board::from_index90(i), black);
            out[first * PLANE + at] = f32::from(n >= 1);
            out[(first + 1) * PLANE + at] = f32::from(n >= 2);
        }
    }
}

/// Where a square lies within a plane: `rank * 9 + file` in the mover's frame (rank 0 = the
/// mover's back rank), the point order of [`crate::Symmetry::point_table`].
#[inline]
pub fn plane_offset(sq: u8, black: bool) -> usize {
    frame90(sq, black)
}

impl Encoding for Xiangqi {
    fn shape(&self) -> TensorShape {
        TensorShape {
            planes: PLANES,
            height: 10,
            width: 9,
            policy_size: POLICY_SIZE,
        }
    }

    fn action_index(&self, action: Move) -> usize {
        // Legal moves always have an index; anything else maps to 0 rather than panic in a
        // hot loop (the contract only covers legal actions).
        move_index(action, self.pos.side() == Side::Black).unwrap_or(0)
    }

    fn index_action(&self, index: usize) -> Option<Move> {
        index_move(index, self.pos.side() == Side::Black)
    }

    fn encode(&self, out: &mut [f32]) {
        let plane = PLANE;
        out[..PLANES * plane].fill(0.0);
        let us = self.pos.side();
        let black = us == Side::Black;
        for side in [us, us.opponent()] {
            let base = if side == us { 0 } else { 7 };
            for sq in self.pos.pieces(side) {
                let kind = board::kind_of(self.pos.piece_at(sq)) as usize;
                out[(base + kind - 1) * plane + plane_offset(sq, black)] = 1.0;
            }
        }
        if self.occurrences() > 1 {
            out[14 * plane..15 * plane].fill(1.0);
        }
        let clock = self.halfmove.min(NATURAL_LIMIT) as f32 / NATURAL_LIMIT as f32;
        out[15 * plane..16 * plane].fill(clock);
        write_attack_planes(&self.pos, us, out);
    }
}
