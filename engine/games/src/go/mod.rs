//! Go on square boards from 2×2 to 19×19, by the rules of `docs/rules/go.md`: area scoring with
//! komi, suicide illegal unless allowed, positional superko unless simple ko is chosen, two
//! passes or a move cap end the game.
//!
//! Coordinates are GTP's: columns `A`–`T` without `I`, rows `1`–`N` from the bottom; `pass`.
//!
//! Text format (`to_text` / `parse_position`), FEN-like: the rows from the top, `/`-separated,
//! `X` black, `O` white, a number for a run of empty points; then the side to move (`b`/`w`),
//! the number of consecutive passes, the simple-ko point (`-` if none) and the number of moves
//! played. Example, empty 9×9: `9/9/9/9/9/9/9/9/9 b 0 - 0`; `.` is also read as one empty
//! point, and the last three fields may be left out. The text holds no history:
//! superko compares against positions from the read one on (its ko point stays banned).
//!
//! Network interface: 17 planes of `N × N` (rank 0 at the bottom, index `rank · N + file`):
//! for t = 0…7 (now and the 7 earlier positions), plane 2t the stones of the player to move and
//! plane 2t+1 the opponent's; plane 16 is all ones when Black is to move. The policy has `N² + 1`
//! entries: `rank · N + file` for a stone, `N²` for pass.

mod board;
mod encode;
pub mod handicap;
mod notation;
pub mod playout;
mod rules;
pub mod sgf;
mod text;

pub use handicap::HandicapError;
use notation::stone_of;
pub use notation::{color_letter, Move, Point, COLUMNS};
pub use rules::{GoRules, KoRule, MoveCap, RulesError};

use std::sync::Arc;

use crate::{Game, Outcome, ParseError, Player, Symmetry};
use board::{mix, Board, Stones, BLACK, EMPTY, WHITE};
pub use board::{MAX_SIZE, MIN_SIZE};

/// Earlier positions encoded besides the current one.
const PAST: usize = 7;
/// Input planes: (now + PAST) × 2 colours + side to move.
pub const PLANES: usize = 2 * (PAST + 1) + 1;

/// Where a game (or a read position) started: replaying `GoState::record` from here gives the
/// state again, which `transform` needs because superko history hashes cannot be transformed.
#[derive(Clone, Debug)]
struct Root {
    /// `(row, col, colour)` of every stone.
    stones: Vec<(u8, u8, Player)>,
    to_act: Player,
    passes: u8,
    ko: Option<Point>,
    moves: u32,
    /// The stones are Black's handicap (White moves first).
    handicap: bool,
}

/// Code of one recorded move: bit 15 set for White, then `row · N + col` or `PASS_CODE`.
const PASS_CODE: u16 = 0x7FFF;
const WHITE_BIT: u16 = 0x8000;

/// A game of Go in progress.
#[derive(Clone, Debug)]
pub struct GoState {
    rules: Arc<GoRules>,
    board: Board,
    to_act: Player,
    /// Consecutive passes just played.
    passes: u8,
    /// The point the simple-ko rule bans for the next move (padded index), 0 if none.
    ko: usize,
    /// Moves played, passes included, since the game began (read positions carry theirs).
    moves: u32,
    outcome: Option<Outcome>,
    /// Stone hashes of every position since the root, the current one last.
    history: Vec<u64>,
    /// Sum of `history`: folds the superko history into `hash()`.
    history_sum: u64,
    /// Most stones on the board in any position of `history`: a move that would exceed it
    /// cannot repeat one, which skips most superko look-ups.
    max_stones: u32,
    /// Earlier boards for the encoding: a ring of `past_len` entries, newest at `past_head - 1`.
    past: [Stones; PAST],
    past_head: u8,
    past_len: u8,
    root: Arc<Root>,
    record: Vec<u16>,
}

impl GoState {
    /// The empty board, Black to move.
    pub fn new(rules: GoRules) -> Result<GoState, RulesError> {
        rules.validate()?;
        let root = Root {
            stones: Vec::new(),
            to_act: Player::First,
            passes: 0,
            ko: None,
            moves: 0,
            handicap: false,
        };
        Ok(GoState::from_root(Arc::new(rules), Arc::new(root)))
    }

    /// The empty board with Black's handicap `stones` on it, White to move (GTP
    /// `fixed_handicap`, `set_free_handicap`; SGF `HA` with `AB`). The stones are the start of
    /// the game, not moves: [`GoState::moves_since_start`] does not list them.
    pub fn with_handicap(rules: GoRules, stones: &[Point]) -> Result<GoState, HandicapError> {
        rules.validate()?;
        handicap::check_placement(rules.size, stones)?;
        let mut sorted = stones.to_vec();
        sorted.sort();
        let root = Root {
            stones: sorted
                .iter()
                .map(|p| (p.row, p.col, Player::First))
                .collect(),
            to_act: Player::Second,
            passes: 0,
            ko: None,
            moves: 0,
            handicap: true,
        };
        Ok(GoState::from_root(Arc::new(rules), Arc::new(root)))
    }

    /// The handicap stones the game started with (none when it did not start with a handicap).
    pub fn handicap_stones(&self) -> Vec<Point> {
        if self.root.handicap {
            self.start_stones().into_iter().map(|(p, _)| p).collect()
        } else {
            Vec::new()
        }
    }

    /// An empty board with default rules; panics on a size outside 2..=19.
    pub fn with_size(size: usize) -> GoState {
        GoState::new(GoRules::with_size(size)).expect("board size within 2..=19")
    }

    /// A position with stones set up (SGF `AB`/`AW`, handicap), `to_act` to move. Points listed
    /// twice take the later colour; groups left without liberties are refused.
    pub fn from_setup(
        rules: GoRules,
        stones: &[(Point, Player)],
        to_act: Player,
    ) -> Result<GoState, ParseError> {
        rules
            .validate()
            .map_err(|e| ParseError::new("setup", "rules", e.to_string()))?;
        let n = rules.size;
        let mut grid = vec![None; n * n];
        for &(p, who) in stones {
            if p.row as usize >= n || p.col as usize >= n {
                return Err(ParseError::new("setup", p.to_gtp(), "outside the board"));
            }
            grid[p.row as usize * n + p.col as usize] = Some(who);
        }
        let root = text::root_from_grid(n, &grid, to_act, 0, None, 0, "setup")?;
        Ok(GoState::from_root(Arc::new(rules), Arc::new(root)))
    }

    fn from_root(rules: Arc<GoRules>, root: Arc<Root>) -> GoState {
        let mut board = Board::new(rules.size);
        for &(r, c, who) in &root.stones {
            board.setup_stone(board.point(r as usize, c as usize), stone_of(who));
        }
        let ko = root
            .ko
            .map_or(0, |p| board.point(p.row as usize, p.col as usize));
        let hash = board.hash();
        let mut state = GoState {
            rules,
            max_stones: board.stone_count(),
            board,
            to_act: root.to_act,
            passes: root.passes,
            ko,
            moves: root.moves,
            outcome: None,
            history: vec![hash],
            history_sum: hash,
            past: [[[0; board::WORDS]; 2]; PAST],
            past_head: 0,
            past_len: 0,
            root,
            record: Vec::new(),
        };
        state.update_outcome();
        state
    }

    pub fn rules(&self) -> &GoRules {
        &self.rules
    }

    pub fn size(&self) -> usize {
        self.board.size()
    }

    pub fn komi(&self) -> f32 {
        self.rules.komi
    }

    /// Moves played (passes included).
    pub fn moves_played(&self) -> u32 {
        self.moves
    }

    /// Consecutive passes just played.
    pub fn consecutive_passes(&self) -> u8 {
        self.passes
    }

    /// The stone on `p`, if any (`None` off the board too).
    pub fn stone_at(&self, p: Point) -> Option<Player> {
        if p.row as usize >= self.size() || p.col as usize >= self.size() {
            return None;
        }
        match self
            .board
            .color(self.board.point(p.row as usize, p.col as usize))
        {
            BLACK => Some(Player::First),
            WHITE => Some(Player::Second),
            _ => None,
        }
    }

    /// The liberties of the group on `p`: 0 for an empty point or one off the board.
    pub fn liberties(&self, p: Point) -> usize {
        let Some(who) = self.stone_at(p) else {
            return 0;
        };
        let n = self.size();
        let mut seen = vec![false; n * n];
        let mut free = vec![false; n * n];
        let mut stack = vec![p];
        seen[p.row as usize * n + p.col as usize] = true;
        while let Some(q) = stack.pop() {
            let (r, c) = (q.row as usize, q.col as usize);
            let around = [
                (r > 0).then(|| (r - 1, c)),
                (r + 1 < n).then_some((r + 1, c)),
                (c > 0).then(|| (r, c - 1)),
                (c + 1 < n).then_some((r, c + 1)),
            ];
            for (r, c) in around.into_iter().flatten() {
                let next = Point::new(r, c);
                match self.stone_at(next) {
                    None => free[r * n + c] = true,
                    Some(o) if o == who && !seen[r * n + c] => {
                        seen[r * n + c] = true;
                        stack.push(next);
                    }
                    Some(_) => {}
                }
            }
        }
        free.iter().filter(|&&f| f).count()
    }

    /// Every stone of `who`, bottom row first.
    pub fn stones_of(&self, who: Player) -> Vec<Point> {
        let color = stone_of(who);
        self.board
            .points()
            .filter(|&p| self.board.color(p) == color)
            .map(|p| {
                let (r, c) = self.board.coords(p);
                Point::new(r, c)
            })
            .collect()
    }

    /// Area score `(black, white)`: stones plus empty regions reaching only that colour.
    pub fn area(&self) -> (u32, u32) {
        self.board.area()
    }

    /// Black's area minus White's area and komi: positive when Black leads.
    pub fn score(&self) -> f32 {
        let (b, w) = self.board.area();
        b as f32 - w as f32 - self.rules.komi
    }

    /// The score as GTP and SGF write results: `B+3.5`, `W+0.5`, `0`.
    pub fn score_text(&self) -> String {
        playout::score_text(self.score())
    }

    /// Who owns each point (`row · N + col`) by the area rule: +1 Black, −1 White, 0 nobody.
    pub fn ownership(&self) -> Vec<i8> {
        self.board.ownership()
    }

    /// This position as a game that goes on: passes forgotten, and a move cap of 3·N² more
    /// moves so that playouts from it always end.
    pub(crate) fn continuation(&self) -> GoState {
        let n = self.size() as u32;
        let mut s = self.clone();
        s.rules = Arc::new(GoRules {
            move_cap: MoveCap::Moves(self.moves + 3 * n * n),
            ..(*self.rules).clone()
        });
        s.passes = 0;
        s.update_outcome();
        s
    }

    /// Hands the turn to `who` without a move (GTP and SGF let one side play twice).
    pub fn set_to_act(&mut self, who: Player) {
        self.to_act = who;
    }

    /// Plays `mv` for `who`, whoever's turn it is and even after two passes, as GTP `play` and
    /// SGF records do. Refuses occupied points, suicide (unless allowed) and (super)ko.
    pub fn play_as(&mut self, who: Player, mv: Move) -> Result<(), crate::PlayError> {
        let saved = self.to_act;
        self.to_act = who;
        if !self.is_legal_move(mv) {
            self.to_act = saved;
            return Err(crate::PlayError::Illegal {
                action: mv.to_gtp(),
                reason: self.why_illegal(mv).into(),
            });
        }
        self.play_unchecked(mv);
        Ok(())
    }

    /// Why `mv` is illegal for the player to move (ignoring whether the game is over).
    fn why_illegal(&self, mv: Move) -> &'static str {
        let Move::Place(pt) = mv else {
            return "legal";
        };
        if pt.row as usize >= self.size() || pt.col as usize >= self.size() {
            return "outside the board";
        }
        let p = self.board.point(pt.row as usize, pt.col as usize);
        if self.board.color(p) != EMPTY {
            "point occupied"
        } else if p == self.ko {
            "ko"
        } else if self
            .board
            .try_place(p, stone_of(self.to_act), self.rules.allow_suicide)
            .is_none()
        {
            "suicide"
        } else {
            "repeats an earlier position (superko)"
        }
    }

    /// Legality by the board and ko rules alone, whether or not the game is over.
    #[inline]
    fn is_legal_move(&self, mv: Move) -> bool {
        let Move::Place(pt) = mv else {
            return true;
        };
        let n = self.size();
        if pt.row as usize >= n || pt.col as usize >= n {
            return false;
        }
        self.is_legal_point(self.board.point(pt.row as usize, pt.col as usize))
    }

    #[inline]
    fn is_legal_point(&self, p: usize) -> bool {
        if self.board.color(p) != EMPTY || p == self.ko {
            return false;
        }
        match self
            .board
            .try_place(p, stone_of(self.to_act), self.rules.allow_suicide)
        {
            None => false,
            Some((hash, delta)) => match self.rules.ko {
                KoRule::Simple => true,
                KoRule::PositionalSuperko => !self.repeats(hash, delta),
            },
        }
    }

    /// Whether stones with `hash`, `delta` stones more than now, occurred before.
    #[inline]
    fn repeats(&self, hash: u64, delta: i32) -> bool {
        let stones = self.board.stone_count() as i64 + delta as i64;
        // Without an early exit the scan vectorises: cheaper than branching on every entry.
        stones <= self.max_stones as i64
            && self
                .history
                .iter()
                .fold(false, |seen, &h| seen | (h == hash))
    }

    /// Whether `p` is a true eye of the player to move (used by playout policies).
    pub(crate) fn is_own_eye(&self, p: usize) -> bool {
        self.board.is_own_eye(p, stone_of(self.to_act))
    }

    pub(crate) fn board(&self) -> &Board {
        &self.board
    }

    pub(crate) fn legal_at_padded(&self, p: usize) -> bool {
        self.is_legal_point(p)
    }

    fn update_outcome(&mut self) {
        let capped = self.rules.cap().is_some_and(|cap| self.moves >= cap);
        self.outcome = if self.passes >= 2 || capped {
            let s = self.score();
            Some(if s > 0.0 {
                Outcome::Win(Player::First)
            } else if s < 0.0 {
                Outcome::Win(Player::Second)
            } else {
                Outcome::Draw
            })
        } else {
            None
        };
    }

    fn push_past(&mut self) {
        self.past[self.past_head as usize] = *self.board.stones();
        self.past_head = ((self.past_head as usize + 1) % PAST) as u8;
        self.past_len = (self.past_len + 1).min(PAST as u8);
    }

    /// The stones `t` positions ago (1 ≤ t ≤ PAST), if the game is that old.
    fn past_stones(&self, t: usize) -> Option<&Stones> {
        (t <= self.past_len as usize)
            .then(|| &self.past[(self.past_head as usize + PAST - t) % PAST])
    }

    fn point_code(&self, mv: Move) -> u16 {
        let code = match mv {
            Move::Place(p) => p.row as u16 * self.size() as u16 + p.col as u16,
            Move::Pass => PASS_CODE,
        };
        if self.to_act == Player::Second {
            code | WHITE_BIT
        } else {
            code
        }
    }

    /// Moves since the start of the game (or the read position), each with its player.
    pub fn moves_since_start(&self) -> Vec<(Player, Move)> {
        let n = self.size() as u16;
        self.record
            .iter()
            .map(|&code| {
                let who = if code & WHITE_BIT != 0 {
                    Player::Second
                } else {
                    Player::First
                };
                let c = code & !WHITE_BIT;
                let mv = if c == PASS_CODE {
                    Move::Pass
                } else {
                    Move::Place(Point::new((c / n) as usize, (c % n) as usize))
                };
                (who, mv)
            })
            .collect()
    }

    /// The state the game started from (the empty board, a setup or a read position).
    pub fn start(&self) -> GoState {
        GoState::from_root(self.rules.clone(), self.root.clone())
    }

    /// Changes the komi of this game (GTP `komi`): it decides only the score, so no move
    /// needs replaying.
    pub fn set_komi(&mut self, komi: f32) -> Result<(), RulesError> {
        let rules = GoRules {
            komi,
            ..(*self.rules).clone()
        };
        rules.validate()?;
        self.rules = Arc::new(rules);
        self.update_outcome();
        Ok(())
    }

    /// Stones setup of this state's start, for SGF `AB`/`AW`.
    pub fn start_stones(&self) -> Vec<(Point, Player)> {
        self.root
            .stones
            .iter()
            .map(|&(r, c, who)| (Point::new(r as usize, c as usize), who))
            .collect()
    }

    fn map_point(&self, sym: Symmetry, p: Point) -> Point {
        let n = self.size();
        let (r, c) = sym.map(p.row as usize, p.col as usize, n, n);
        Point::new(r, c)
    }
}

impl Game for GoState {
    type Action = Move;
    const NAME: &'static str = "go";

    fn on_board(&self, size: usize) -> Option<Self> {
        GoState::new(GoRules {
            size,
            ..self.rules().clone()
        })
        .ok()
    }

    #[inline]
    fn to_act(&self) -> Player {
        self.to_act
    }

    #[inline]
    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn end_reason(&self) -> Option<String> {
        self.outcome?;
        let result = self.score_text();
        Some(if self.passes >= 2 {
            format!("both passed: {result}")
        } else {
            let cap = self.rules.cap().unwrap_or(self.moves);
            format!("move cap of {cap} reached: {result}")
        })
    }

    fn legal_actions(&self, out: &mut Vec<Move>) {
        if self.outcome.is_some() {
            return;
        }
        for p in self.board.points() {
            if self.is_legal_point(p) {
                let (r, c) = self.board.coords(p);
                out.push(Move::Place(Point::new(r, c)));
            }
        }
        out.push(Move::Pass);
    }

    #[inline]
    fn is_legal(&self, action: Move) -> bool {
        self.outcome.is_none() && self.is_legal_move(action)
    }

    fn play(&mut self, action: Move) -> Result<(), crate::PlayError> {
        if self.outcome.is_some() {
            return Err(crate::PlayError::GameOver);
        }
        if !self.is_legal_move(action) {
            return Err(crate::PlayError::Illegal {
                action: action.to_gtp(),
                reason: self.why_illegal(action).into(),
            });
        }
        self.play_unchecked(action);
        Ok(())
    }

    fn play_unchecked(&mut self, action: Move) {
        let code = self.point_code(action);
        self.record.push(code);
        self.push_past();
        self.moves += 1;
        match action {
            Move::Pass => {
                self.passes = self.passes.saturating_add(1);
                self.ko = 0;
            }
            Move::Place(pt) => {
                let p = self.board.point(pt.row as usize, pt.col as usize);
                let placed = self.board.place(p, stone_of(self.to_act));
                self.passes = 0;
                self.ko = if placed.captured == 1
                    && placed.suicided == 0
                    && self.board.is_lone_stone_in_atari(p)
                {
                    placed.capture_point
                } else {
                    0
                };
                let hash = self.board.hash();
                self.history.push(hash);
                self.history_sum = self.history_sum.wrapping_add(hash);
                self.max_stones = self.max_stones.max(self.board.stone_count());
            }
        }
        self.to_act = self.to_act.opponent();
        self.update_outcome();
    }

    fn symmetries(&self) -> &'static [Symmetry] {
        &Symmetry::ALL
    }

    fn transform(&self, sym: Symmetry) -> GoState {
        let root = Root {
            stones: self
                .root
                .stones
                .iter()
                .map(|&(r, c, who)| {
                    let p = self.map_point(sym, Point::new(r as usize, c as usize));
                    (p.row, p.col, who)
                })
                .collect(),
            ko: self.root.ko.map(|p| self.map_point(sym, p)),
            ..(*self.root).clone()
        };
        let mut s = GoState::from_root(self.rules.clone(), Arc::new(root));
        for (who, mv) in self.moves_since_start() {
            s.to_act = who;
            s.play_unchecked(self.transform_action(sym, mv));
        }
        s.to_act = self.to_act;
        s
    }

    fn transform_action(&self, sym: Symmetry, action: Move) -> Move {
        match action {
            Move::Place(p) => Move::Place(self.map_point(sym, p)),
            Move::Pass => Move::Pass,
        }
    }

    fn hash(&self) -> u64 {
        let mut h = self.board.hash();
        h ^= mix(self.history_sum ^ 0x4849_5354);
        h ^= mix(self.to_act as u64
            | (self.passes as u64) << 1
            | (self.ko as u64) << 8
            | (self.outcome.is_some() as u64) << 20);
        for t in 1..=PAST {
            let Some(stones) = self.past_stones(t) else {
                break;
            };
            for w in stones.iter().flatten() {
                h = mix(h ^ w);
            }
        }
        h
    }

    fn parse_action(&self, text: &str) -> Result<Move, ParseError> {
        Move::parse_gtp(text.trim(), self.size())
    }

    fn format_action(&self, action: Move) -> String {
        action.to_gtp()
    }

    fn to_text(&self) -> String {
        text::write(self)
    }

    fn parse_position(&self, text: &str) -> Result<GoState, ParseError> {
        text::read(self, text)
    }

    /// The area rule's owners ([`GoState::ownership`]): stones, and empty regions that reach
    /// only one colour; dame and seki's shared liberties 0. Dead stones count as alive: the
    /// target is sound for games played out to the end, as self-play's are.
    fn final_ownership(&self, player: Player) -> Option<Vec<f32>> {
        let sign = if player == Player::First { 1.0 } else { -1.0 };
        Some(
            self.ownership()
                .into_iter()
                .map(|o| sign * o as f32)
                .collect(),
        )
    }

    /// The area margin with komi ([`GoState::score`]) from `player`'s side.
    fn final_score(&self, player: Player) -> Option<f32> {
        let sign = if player == Player::First { 1.0 } else { -1.0 };
        Some(sign * self.score())
    }

    fn render(&self) -> String {
        text::render(self)
    }
}

#[cfg(test)]
mod tests;
