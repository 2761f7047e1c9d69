//! Judging a repeated position: which side, if any, forced the repetition.
//!
//! Two rule sets ([`RepetitionRule`]):
//! - **Asian** (the default): the repetition rules of the Asian Xiangqi Federation, the set the
//!   World Xiangqi Federation plays by. Each move of the repeating stretch is a *check*, a
//!   *chase* or *idle*; the side that checks on every move loses (perpetual check), else the
//!   side that chases one and the same piece on every move loses (perpetual chase); when both
//!   sides do the same, or neither, the game is drawn. `docs/rules/xiangqi.md` states the rules
//!   and their limits.
//! - **Simple**: perpetual check only; every other repetition is a draw.
//!
//! The game ([`super::Xiangqi`]) and the alpha-beta search both call [`judge`], so they agree.
//! It runs only when a position repeats: the chase test replays the stretch and asks, for
//! every capture the chasing side could make, whether the victim is protected.

use std::fmt;
use std::str::FromStr;

use super::board::{
    kind_of, MoveList, Position, ADVISOR, BISHOP, CANNON, KING, KNIGHT, OWN_HALF, PAWN, ROOK,
};
use super::{Move, Side};

/// Which rules decide a repeated position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RepetitionRule {
    /// The Asian (AXF) rules: perpetual check loses, perpetual chase loses.
    #[default]
    Asian,
    /// Perpetual check loses; any other repetition is a draw.
    Simple,
}

impl RepetitionRule {
    /// Both rules, the default first (for option lists).
    pub const ALL: [RepetitionRule; 2] = [RepetitionRule::Asian, RepetitionRule::Simple];

    /// The rule's name as options and protocols spell it: `Asian` or `Simple`.
    pub fn name(self) -> &'static str {
        match self {
            RepetitionRule::Asian => "Asian",
            RepetitionRule::Simple => "Simple",
        }
    }
}

impl fmt::Display for RepetitionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A repetition rule name that is neither `Asian` nor `Simple`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown repetition rule '{0}' (expected Asian or Simple)")]
pub struct UnknownRepetitionRule(pub String);

impl FromStr for RepetitionRule {
    type Err = UnknownRepetitionRule;

    /// `Asian` or `Simple`, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RepetitionRule::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownRepetitionRule(text.to_string()))
    }
}

/// The verdict on a repeated position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Draw,
    /// `loser` gave check with every one of its moves and the other side did not.
    PerpetualCheck {
        loser: Side,
    },
    /// `loser` chased the same piece with every one of its moves, and the other side neither
    /// checked throughout nor chased throughout.
    PerpetualChase {
        loser: Side,
    },
}

/// One move of the repeating stretch and whether it gave check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleMove {
    pub mv: Move,
    pub gave_check: bool,
}

/// Judges the stretch of moves `cycle` that led to `end` from an earlier occurrence of the
/// same position (same board, same side to move): so the stretch has an even length, its
/// first move was made by `end.side()`, and none of its moves captured.
pub fn judge(rule: RepetitionRule, end: &Position, cycle: &[CycleMove]) -> Verdict {
    // all_check[s]: every move of side s gave check; any_check[s]: one did.
    let mut all_check = [true; 2];
    let mut any_check = [false; 2];
    let first = end.side();
    for (i, c) in cycle.iter().enumerate() {
        let mover = if i % 2 == 0 { first } else { first.opponent() } as usize;
        all_check[mover] &= c.gave_check;
        any_check[mover] |= c.gave_check;
    }
    match (all_check[0], all_check[1]) {
        (true, false) => return Verdict::PerpetualCheck { loser: Side::Red },
        (false, true) => return Verdict::PerpetualCheck { loser: Side::Black },
        (true, true) => return Verdict::Draw,
        (false, false) => {}
    }
    // A check among a side's moves breaks its chase ("one check, one chase" is allowed).
    if rule == RepetitionRule::Simple || (any_check[0] && any_check[1]) {
        return Verdict::Draw;
    }
    let chasing = perpetual_chases(end, cycle, [!any_check[0], !any_check[1]]);
    match (chasing[0], chasing[1]) {
        (true, false) => Verdict::PerpetualChase { loser: Side::Red },
        (false, true) => Verdict::PerpetualChase { loser: Side::Black },
        _ => Verdict::Draw,
    }
}

/// For each side that is a `candidate`, whether one enemy piece was newly chased by every one
/// of its moves in `cycle` (see [`judge`] for what `end` and `cycle` are).
fn perpetual_chases(end: &Position, cycle: &[CycleMove], candidate: [bool; 2]) -> [bool; 2] {
    // Rewind to the stretch's first position (no move captured).
    let mut pos = end.clone();
    for c in cycle.iter().rev() {
        pos.unmake_quiet(c.mv);
    }
    debug_assert_eq!(pos.key(), end.key(), "the stretch starts where it ends");
    // The pieces (by slot: a slot follows its piece from square to square) each side has
    // chased on every one of its moves so far.
    let mut still = [
        if candidate[0] { u16::MAX } else { 0 },
        if candidate[1] { u16::MAX } else { 0 },
    ];
    for c in cycle {
        let mover = pos.side();
        let m = mover as usize;
        if still[m] != 0 {
            still[m] &= new_chases(&pos, c.mv);
            pos.make(c.mv);
        } else {
            if still[m ^ 1] == 0 {
                break;
            }
            pos.make(c.mv);
        }
    }
    [still[0] != 0, still[1] != 0]
}

/// The enemy pieces (a bit per slot) that the legal move `m` of the side to move in `pos`
/// newly chases: chased after it (see [`chased`]) and not before.
pub fn new_chases(pos: &Position, m: Move) -> u16 {
    let mover = pos.side();
    // A side in check may not carry out its threats; they are threats all the same, and its
    // evasion does not make them new.
    let before = chases(pos, mover, !pos.in_check(mover));
    let mut after = pos.clone();
    after.make(m);
    chases(&after, mover, true) & !before
}

/// Value classes for the chase rules: an attacker of a lower class chases a piece of a higher
/// class even when that piece is protected (horse or cannon on a rook; advisor or elephant on
/// a rook, horse or cannon).
fn class(kind: u8) -> u8 {
    match kind {
        ROOK => 3,
        KNIGHT | CANNON => 2,
        ADVISOR | BISHOP => 1,
        _ => 0,
    }
}

/// The enemy pieces (a bit per slot of the other side) that `attacker` chases in `pos`,
/// whoever is to move there: pieces it could capture by a legal move, other than the general
/// and soldiers that have not crossed the river, with a general or soldier never the
/// capturer; and only if the victim is of a higher class than the capturer, or else
/// unprotected (no legal recapture) and unable to capture the capturer itself (a mutual
/// attack is an offer to exchange, not a chase).
pub fn chased(pos: &Position, attacker: Side) -> u16 {
    chases(pos, attacker, true)
}

/// [`chased`], or with `legal_only` false, counting captures that would leave the capturer's
/// general in check too.
fn chases(pos: &Position, attacker: Side, legal_only: bool) -> u16 {
    let victim_side = attacker.opponent();
    let mut p = pos.clone();
    p.side = attacker;
    let in_check = p.in_check(attacker);
    let mut captures = MoveList::new();
    p.gen_captures(&mut captures);
    let mut set = 0u16;
    for &m in captures.as_slice() {
        let (from, to) = (m.from(), m.to());
        let (hunter, victim) = (kind_of(p.piece_at(from)), kind_of(p.piece_at(to)));
        if matches!(hunter, KING | PAWN) || victim == KING {
            continue;
        }
        // A soldier on its own half has not crossed the river.
        if victim == PAWN && OWN_HALF[victim_side as usize][to as usize] {
            continue;
        }
        let bit = 1u16 << p.slot_at(to);
        if set & bit != 0 || (legal_only && !p.is_safe(m, in_check)) {
            continue;
        }
        if class(victim) > class(hunter) || (!protected(&mut p, m) && !strikes_back(&p, m)) {
            set |= bit;
        }
    }
    set
}

/// Whether, after the capture `m` (legal, by the side to move), the other side can legally
/// take back on the same point.
fn protected(p: &mut Position, m: Move) -> bool {
    let undo = p.make(m);
    let defender = p.side();
    let in_check = p.in_check(defender);
    let mut list = MoveList::new();
    p.gen_captures(&mut list);
    let answer = list
        .as_slice()
        .iter()
        .any(|&r| r.to() == m.to() && p.is_safe(r, in_check));
    p.unmake(m, undo);
    answer
}

/// Whether the victim of the capture `m` could instead legally capture the capturer.
fn strikes_back(p: &Position, m: Move) -> bool {
    let mut q = p.clone();
    q.side = q.side.opponent();
    q.is_legal(Move::new(m.to(), m.from()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xiangqi::fen::parse_fen;

    /// The black pieces Red chases in `fen`, as points (`e6`).
    fn chased_points(fen: &str) -> Vec<String> {
        let (pos, _, _) = parse_fen(fen).unwrap();
        let set = chased(&pos, Side::Red);
        pos.pieces(Side::Black)
            .filter(|&sq| set & (1 << pos.slot_at(sq)) != 0)
            .map(|sq| super::super::fen::format_move(Move::new(sq, sq))[..2].to_string())
            .collect()
    }

    #[test]
    fn what_counts_as_chased() {
        // A rook on a soldier: not before it crosses the river, yes after.
        assert!(chased_points("4k4/9/9/4p4/9/9/9/9/4R4/3K5 w").is_empty());
        assert_eq!(chased_points("4k4/9/9/9/9/9/4p4/9/4R4/3K5 w"), ["e3"]);
        // Generals and soldiers never chase.
        assert!(chased_points("4k4/9/9/9/9/4n4/4P4/9/9/3K5 w").is_empty());
        assert!(chased_points("4k4/9/9/9/9/9/9/3n5/3K5/9 w").is_empty());
        // A protected horse is not chased by a rook, but is by an elephant.
        assert!(chased_points("3k5/4r4/9/9/R3n4/9/9/9/9/4K4 w").is_empty());
        assert_eq!(chased_points("2r1k4/9/9/9/9/2n6/9/B8/9/3K5 w"), ["c4"]);
        // A rook is chased by a cannon even when protected.
        assert_eq!(chased_points("r3k4/9/9/9/9/9/9/r8/N8/C2K5 w"), ["a2"]);
        // A rook pinned to its general does not chase off the pin line.
        assert!(chased_points("5k3/9/9/9/3n5/9/9/9/r2RK4/9 w").is_empty());
        assert_eq!(chased_points("5k3/9/9/9/3n5/9/9/9/3RK4/9 w"), ["d5"]);
    }

    #[test]
    fn rule_names_read_back() {
        for rule in RepetitionRule::ALL {
            assert_eq!(rule.name().parse::<RepetitionRule>(), Ok(rule));
        }
        assert_eq!(" asian".parse(), Ok(RepetitionRule::Asian));
        assert_eq!(RepetitionRule::default(), RepetitionRule::Asian);
        let e = "chinese".parse::<RepetitionRule>().unwrap_err();
        assert!(e.to_string().contains("'chinese'"), "{e}");
    }
}
