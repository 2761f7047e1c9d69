//! Xiangqi (Chinese chess), by the rules of `docs/rules/xiangqi.md`.
//!
//! - [`Position`] (module [`board`]): the mailbox, make/unmake and the fast legal-move generator
//!   that perft and the alpha-beta search use directly.
//! - [`Xiangqi`]: the [`Game`] state: a position plus the history the end-of-game rules need.
//! - [`fen`]: FEN and ICCS move text; [`encode`]: policy indices and input planes;
//!   [`mod@perft`]: perft, divide and the benchmark; [`pgn`]: game records, read in ICCS, WXF
//!   ([`wxf`]) or Chinese ([`chinese`]) notation; [`chinese`] also writes moves for display.
//! - Outside this crate: the alpha-beta agent (`players::alphabeta::xiangqi`, named by
//!   `players::xiangqi`), an external UCI engine as an agent (`players::uci_client`) and
//!   Fairy-Stockfish's perft as an oracle for tests and the benchmark (`players::fairy`).
//!
//! # End of the game (in this order)
//! 1. The side to move with no legal move loses: checkmate and stalemate alike.
//! 2. Repetition: when the position (board and side to move) occurs for the third time since
//!    the last capture, the moves played since its first of those three occurrences are judged
//!    by the game's [`RepetitionRule`] (module [`repetition`]). Under the Asian rules (the
//!    default) a side that checked with every move loses (perpetual check); otherwise a side
//!    that chased one and the same piece with every move loses (perpetual chase); anything
//!    else is a draw. The simple rule judges perpetual check only.
//! 3. Natural limit: 120 plies in a row without a capture is a draw (the FEN's halfmove field
//!    counts those plies).

pub mod board;
pub mod chinese;
pub mod encode;
pub mod fen;
#[doc(hidden)]
pub mod fuzzing;
pub mod perft;
pub mod pgn;
mod relative;
pub mod repetition;
pub mod wxf;

use std::fmt;

pub use board::{MoveList, Position};
pub use fen::START_FEN;
pub use perft::{bench_xiangqi, perft, perft_divide, BenchReport};
pub use repetition::{RepetitionRule, UnknownRepetitionRule, Verdict};

use crate::{Game, Outcome, ParseError, Player, Symmetry};

/// Plies without a capture after which the game is drawn.
pub const NATURAL_LIMIT: u32 = 120;

/// Red moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Side {
    Red = 0,
    Black = 1,
}

impl Side {
    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::Red => Side::Black,
            Side::Black => Side::Red,
        }
    }
    pub fn player(self) -> Player {
        match self {
            Side::Red => Player::First,
            Side::Black => Player::Second,
        }
    }
}

/// A move: from-square and to-square of the padded board, 8 bits each.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Move(pub(crate) u16);

impl Move {
    /// No move (from and to both 0, which no legal move is): an empty slot in a search's tables.
    pub const NULL: Move = Move(0);

    #[inline]
    pub(crate) fn new(from: u8, to: u8) -> Move {
        Move((from as u16) << 8 | to as u16)
    }
    #[inline]
    pub fn from(self) -> u8 {
        (self.0 >> 8) as u8
    }
    #[inline]
    pub fn to(self) -> u8 {
        self.0 as u8
    }
    /// The move seen in the left-right mirror.
    pub fn mirrored(self) -> Move {
        let m = |s: u8| board::square(board::rank_of(s), 8 - board::file_of(s));
        Move::new(m(self.from()), m(self.to()))
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if board::ON_BOARD[self.from() as usize] && board::ON_BOARD[self.to() as usize] {
            f.write_str(&fen::format_move(*self))
        } else {
            write!(f, "Move({:#06x})", self.0)
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One position of the game's history since the last capture.
#[derive(Clone, Copy, Debug)]
struct Past {
    key: u64,
    mirrored_key: u64,
    /// Whether the side to move there was in check, i.e. the move into it gave check.
    in_check: bool,
    /// The move into it ([`Move::NULL`] for the first position of the game).
    mv: Move,
}

/// Why a game ended (for logs and protocol faces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The side to move has no legal move (checkmate or stalemate).
    NoMoves,
    /// Third occurrence, one side checked throughout.
    PerpetualCheck,
    /// Third occurrence, one side chased the same piece throughout (Asian rules).
    PerpetualChase,
    /// Third occurrence otherwise.
    Repetition,
    /// 120 plies without capture.
    NaturalLimit,
}

/// A Xiangqi game state: position, move counters and the history since the last capture.
#[derive(Clone)]
pub struct Xiangqi {
    pos: Position,
    halfmove: u32,
    fullmove: u32,
    /// Positions since the last capture, oldest first, the current one last.
    history: Vec<Past>,
    end: Option<(Outcome, EndReason)>,
    rule: RepetitionRule,
}

impl fmt::Debug for Xiangqi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl Default for Xiangqi {
    fn default() -> Self {
        Self::start()
    }
}

impl Xiangqi {
    /// The standard start position.
    pub fn start() -> Xiangqi {
        Xiangqi::from_fen(START_FEN).expect("the start FEN is valid")
    }

    /// A game from a FEN (no earlier history: repetitions count from here), judged by the
    /// default [`RepetitionRule`] (Asian).
    pub fn from_fen(text: &str) -> Result<Xiangqi, ParseError> {
        let (pos, halfmove, fullmove) = fen::parse_fen(text)?;
        Ok(Xiangqi::from_position(pos, halfmove, fullmove))
    }

    fn from_position(pos: Position, halfmove: u32, fullmove: u32) -> Xiangqi {
        let mut g = Xiangqi {
            history: Vec::with_capacity(32),
            pos,
            halfmove,
            fullmove,
            end: None,
            rule: RepetitionRule::default(),
        };
        g.push_history(Move::NULL);
        g.end = g.judge();
        g
    }

    fn push_history(&mut self, mv: Move) {
        let in_check = self.pos.in_check(self.pos.side());
        self.history.push(Past {
            key: self.pos.key(),
            mirrored_key: self.pos.mirrored_key(),
            in_check,
            mv,
        });
    }

    /// The rules that judge a repeated position in this game.
    pub fn repetition_rule(&self) -> RepetitionRule {
        self.rule
    }

    /// Chooses the rules that judge repeated positions from here on (faces set it from their
    /// options; [`RepetitionRule::Asian`] unless set). The current position is judged again,
    /// so a game ended by one rule may go on under the other.
    pub fn set_repetition_rule(&mut self, rule: RepetitionRule) {
        self.rule = rule;
        self.end = self.judge();
    }

    /// The board, side to move and key.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// Plies since the last capture.
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove
    }

    /// Whether the side to move is in check.
    pub fn in_check(&self) -> bool {
        self.history.last().is_some_and(|p| p.in_check)
    }

    /// The side to move.
    pub fn side(&self) -> Side {
        self.pos.side()
    }

    /// Why the game ended, if it did.
    pub fn end_rule(&self) -> Option<EndReason> {
        self.end.map(|(_, r)| r)
    }

    /// How often the current position occurred since the last capture, itself included.
    pub fn occurrences(&self) -> usize {
        let key = self.pos.key();
        self.history.iter().filter(|p| p.key == key).count()
    }

    /// The positions since the last capture, current last, as (Zobrist key, whether the side
    /// to move there was in check): what the search needs for its repetition rules.
    pub fn history(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        self.history.iter().map(|p| (p.key, p.in_check))
    }

    /// The move into each position of [`Xiangqi::history`] ([`Move::NULL`] for the first
    /// position of the game, which no move led to).
    pub fn history_moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.history.iter().map(|p| p.mv)
    }

    /// Decides the end-of-game rules for the current position (see the module docs).
    fn judge(&self) -> Option<(Outcome, EndReason)> {
        let mut pos = self.pos.clone();
        let side = pos.side();
        if !pos.has_legal_move() {
            return Some((Outcome::Win(side.opponent().player()), EndReason::NoMoves));
        }
        let n = self.history.len() - 1;
        let key = self.history[n].key;
        // The key holds the side to move, so only every second position can match.
        let mut earlier = (0..n.saturating_sub(1))
            .rev()
            .step_by(2)
            .filter(|&i| self.history[i].key == key);
        if let (Some(_), Some(first)) = (earlier.next(), earlier.next()) {
            let cycle: Vec<repetition::CycleMove> = self.history[first + 1..]
                .iter()
                .map(|p| repetition::CycleMove {
                    mv: p.mv,
                    gave_check: p.in_check,
                })
                .collect();
            let win = |loser: Side| Outcome::Win(loser.opponent().player());
            return Some(match repetition::judge(self.rule, &self.pos, &cycle) {
                Verdict::Draw => (Outcome::Draw, EndReason::Repetition),
                Verdict::PerpetualCheck { loser } => (win(loser), EndReason::PerpetualCheck),
                Verdict::PerpetualChase { loser } => (win(loser), EndReason::PerpetualChase),
            });
        }
        if self.halfmove >= NATURAL_LIMIT {
            return Some((Outcome::Draw, EndReason::NaturalLimit));
        }
        None
    }

    /// `m` in Chinese notation (炮二平五), for display.
    pub fn chinese_notation(&self, m: Move) -> String {
        chinese::chinese_notation(&self.pos, m)
    }

    /// A move after which the opponent has no legal move, if there is one (checkmate or
    /// stalemate in one): `judge` settles that first, as a win for the mover, so the board alone
    /// answers (no copy of the history).
    pub fn mate_in_one(&self) -> Option<Move> {
        let moves = self.legal_moves();
        let mut pos = self.pos.clone();
        moves.as_slice().iter().copied().find(|&m| {
            let undo = pos.make(m);
            let mated = !pos.has_legal_move();
            pos.unmake(m, undo);
            mated
        })
    }

    /// The legal moves (empty once the game is over).
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if self.end.is_none() {
            self.pos.clone().gen_legal(&mut list);
        }
        list
    }
}

impl Game for Xiangqi {
    type Action = Move;
    const NAME: &'static str = "xiangqi";

    fn to_act(&self) -> Player {
        self.pos.side().player()
    }

    fn end_reason(&self) -> Option<String> {
        let (outcome, reason) = self.end?;
        let name = |p: Player| ["Red", "Black"][p.index()];
        Some(match reason {
            EndReason::NoMoves if self.in_check() => "checkmate".to_string(),
            EndReason::NoMoves => format!("{} has no legal move", name(self.to_act())),
            EndReason::PerpetualCheck => match outcome {
                Outcome::Win(p) => format!("perpetual check by {}", name(p.opponent())),
                // `judge` scores checks by both sides as a repetition, so not reached.
                Outcome::Draw => "perpetual check by both sides".to_string(),
            },
            EndReason::PerpetualChase => match outcome {
                Outcome::Win(p) => format!("perpetual chase by {}", name(p.opponent())),
                Outcome::Draw => "perpetual chase by both sides".to_string(),
            },
            EndReason::Repetition => "threefold repetition".to_string(),
            EndReason::NaturalLimit => {
                format!("{NATURAL_LIMIT} plies without a capture")
            }
        })
    }

    fn outcome(&self) -> Option<Outcome> {
        self.end.map(|(o, _)| o)
    }

    fn legal_actions(&self, out: &mut Vec<Move>) {
        out.extend_from_slice(self.legal_moves().as_slice());
    }

    fn is_legal(&self, action: Move) -> bool {
        self.end.is_none() && self.pos.clone().is_legal(action)
    }

    fn play_unchecked(&mut self, action: Move) {
        let undo = self.pos.make(action);
        if undo.captured() != board::EMPTY {
            self.halfmove = 0;
            self.history.clear();
        } else {
            self.halfmove = self.halfmove.saturating_add(1);
        }
        if self.pos.side() == Side::Red {
            self.fullmove = self.fullmove.saturating_add(1);
        }
        self.push_history(action);
        self.end = self.judge();
    }

    fn symmetries(&self) -> &'static [Symmetry] {
        &Symmetry::MIRROR_ONLY
    }

    fn transform(&self, sym: Symmetry) -> Xiangqi {
        if sym == Symmetry::IDENTITY {
            return self.clone();
        }
        debug_assert_eq!(sym, Symmetry::MIRROR_FILES, "Xiangqi has only the mirror");
        let mut pos = Position::empty();
        for side in [Side::Red, Side::Black] {
            for (slot, &sq) in self.pos.slots[side as usize].iter().enumerate() {
                if sq != 0 {
                    let m = board::square(board::rank_of(sq), 8 - board::file_of(sq));
                    pos.put(self.pos.piece_at(sq), m, slot);
                }
            }
        }
        pos.set_side(self.pos.side());
        let history = self
            .history
            .iter()
            .map(|p| Past {
                key: p.mirrored_key,
                mirrored_key: p.key,
                in_check: p.in_check,
                mv: if p.mv == Move::NULL {
                    Move::NULL
                } else {
                    p.mv.mirrored()
                },
            })
            .collect();
        Xiangqi {
            pos,
            halfmove: self.halfmove,
            fullmove: self.fullmove,
            history,
            end: self.end,
            rule: self.rule,
        }
    }

    fn transform_action(&self, sym: Symmetry, action: Move) -> Move {
        if sym == Symmetry::IDENTITY {
            action
        } else {
            action.mirrored()
        }
    }

    fn hash(&self) -> u64 {
        // The encoding also shows the repetition flag and the capture clock; the outcome
        // depends on the history, summarised by both.
        let extra = (self.halfmove as u64) << 8 | (self.occurrences() as u64).min(255);
        self.pos.key() ^ extra.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn parse_action(&self, text: &str) -> Result<Move, ParseError> {
        fen::parse_move(text)
    }

    fn format_action(&self, action: Move) -> String {
        fen::format_move(action)
    }

    fn to_text(&self) -> String {
        fen::to_fen(&self.pos, self.halfmove, self.fullmove)
    }

    /// A position read from FEN, judged by this game's repetition rule.
    fn parse_position(&self, text: &str) -> Result<Xiangqi, ParseError> {
        let mut g = Xiangqi::from_fen(text)?;
        if g.rule != self.rule {
            g.set_repetition_rule(self.rule);
        }
        Ok(g)
    }

    fn render(&self) -> String {
        let mut s = String::new();
        for rank in (0..10).rev() {
            s.push_str(&format!("{rank} "));
            for file in 0..9 {
                let p = self.pos.piece_at(board::square(rank, file));
                s.push(if p == board::EMPTY {
                    '.'
                } else {
                    fen::piece_char(p)
                });
                s.push(' ');
            }
            s.push('\n');
        }
        s.push_str("  a b c d e f g h i\n");
        s.push_str(&format!(
            "{} to move\n",
            if self.side() == Side::Red {
                "Red"
            } else {
                "Black"
            }
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    /// The verdict on a history A B C D A B C D A (Red to move at the end, as at A) whose
    /// moves gave check as `checks` says, cycling through the four moves of the cycle.
    fn verdict(checks: [bool; 4]) -> Option<(Outcome, EndReason)> {
        let mut g = Xiangqi::start();
        // Made-up keys and no moves: only the check flags are there to judge.
        g.rule = RepetitionRule::Simple;
        g.history.clear();
        for i in 0..9 {
            g.history.push(Past {
                key: [7, 8, 9, 10][i % 4],
                mirrored_key: 0,
                in_check: i > 0 && checks[(i - 1) % 4],
                mv: Move::NULL,
            });
        }
        g.judge()
    }

    #[test]
    fn repetition_verdicts() {
        // Moves 1 and 3 of each cycle are Red's (Red is to move at A), 2 and 4 Black's.
        let red_checks = [true, false, true, false];
        let black_checks = [false, true, false, true];
        assert_eq!(
            verdict(red_checks),
            Some((Outcome::Win(Player::Second), EndReason::PerpetualCheck))
        );
        assert_eq!(
            verdict(black_checks),
            Some((Outcome::Win(Player::First), EndReason::PerpetualCheck))
        );
        assert_eq!(
            verdict([true; 4]),
            Some((Outcome::Draw, EndReason::Repetition))
        );
        assert_eq!(
            verdict([false; 4]),
            Some((Outcome::Draw, EndReason::Repetition))
        );
        // One quiet move of the checking side in the stretch: no perpetual.
        assert_eq!(
            verdict([true, false, false, false]),
            Some((Outcome::Draw, EndReason::Repetition))
        );
    }

    /// The attack planes worked out from the piece planes alone are those the encoder writes,
    /// for either side to move.
    #[test]
    fn attack_planes_are_rebuilt_from_the_piece_planes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut full = vec![0.0; encode::PLANES * 90];
        let mut moves = Vec::new();
        let mut checked = 0;
        for _ in 0..20 {
            let mut g = Xiangqi::start();
            while g.outcome().is_none() && checked < 3000 {
                g.encode(&mut full);
                let rebuilt = encode::with_attack_planes(&full[..encode::BASE_PLANES * 90]);
                assert_eq!(rebuilt.as_deref(), Ok(&full[..]), "{:?}", g.pos);
                checked += 1;
                moves.clear();
                g.legal_actions(&mut moves);
                let m = moves[rng.gen_range(0..moves.len())];
                g.play_unchecked(m);
            }
        }
        assert!(checked > 1000);
        let mut base = full[..encode::BASE_PLANES * 90].to_vec();
        assert!(encode::with_attack_planes(&base[..90]).is_err());
        base[0] = 0.5;
        let e = encode::with_attack_planes(&base).unwrap_err();
        assert!(e.contains("point 0"), "{e}");
        base.iter_mut().take(14 * 90).for_each(|x| *x = 0.0);
        let e = encode::with_attack_planes(&base).unwrap_err();
        assert!(e.contains("general"), "{e}");
    }
}
