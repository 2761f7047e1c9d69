//! Go on square boards from 2×2 to 19×19, by the rules of `spec/go.md`: area scoring with komi,
//! suicide illegal unless allowed, positional superko unless simple ko is chosen, two passes or a
//! move cap end the game.
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
pub mod playout;
pub mod sgf;

use std::fmt::Write as _;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{Game, Outcome, ParseError, Player, Symmetry, TensorShape};
use board::{mix, Board, Stones, BLACK, EMPTY, WHITE};
pub use board::{MAX_SIZE, MIN_SIZE};

/// Column letters as GTP writes them (no `I`).
pub const COLUMNS: &[u8; 19] = b"ABCDEFGHJKLMNOPQRST";

/// Earlier positions encoded besides the current one.
const PAST: usize = 7;
/// Input planes: (now + PAST) × 2 colours + side to move.
pub const PLANES: usize = 2 * (PAST + 1) + 1;

/// Which repetitions are forbidden.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KoRule {
    /// No stone may recreate any earlier whole-board position (the default).
    #[default]
    PositionalSuperko,
    /// Only the immediate recapture of a single stone is forbidden.
    Simple,
}

/// When a game that runs too long is stopped and scored as it stands. Configs write `auto`,
/// `unlimited` or `{moves: N}` (YAML's tagged `!moves N` is read too); N is at least 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveCap {
    /// After 2·N² moves (passes included): the self-play default.
    #[default]
    Auto,
    /// Never (GTP play, where the controller ends the game).
    Unlimited,
    /// After this many moves.
    Moves(u32),
}

impl<'de> Deserialize<'de> for MoveCap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, EnumAccess, MapAccess, VariantAccess};

        const EXPECTED: &str = "a move_cap of `auto`, `unlimited` or `{moves: N}` with N ≥ 1";

        fn moves<E: de::Error>(n: u32) -> Result<MoveCap, E> {
            if n == 0 {
                return Err(E::custom(
                    "move_cap: moves must be at least 1 (`unlimited` means no cap)",
                ));
            }
            Ok(MoveCap::Moves(n))
        }

        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = MoveCap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MoveCap, E> {
                match v {
                    "auto" => Ok(MoveCap::Auto),
                    "unlimited" => Ok(MoveCap::Unlimited),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
            // `{moves: N}`: the form the configs document (and JSON writes).
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MoveCap, A::Error> {
                let key: String = map
                    .next_key()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                if key != "moves" {
                    return Err(de::Error::custom(format!(
                        "move_cap: unknown key `{key}`: expected `{{moves: N}}`"
                    )));
                }
                let n: u32 = map.next_value()?;
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "move_cap: unexpected key `{extra}` after `moves`"
                    )));
                }
                moves(n)
            }
            // `!moves N`: the tagged form serde_yaml writes for this enum.
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<MoveCap, A::Error> {
                let (tag, variant): (String, _) = data.variant()?;
                match tag.as_str() {
                    "moves" => moves(variant.newtype_variant::<u32>()?),
                    "auto" => variant.unit_variant().map(|()| MoveCap::Auto),
                    "unlimited" => variant.unit_variant().map(|()| MoveCap::Unlimited),
                    other => Err(de::Error::unknown_variant(
                        other,
                        &["auto", "unlimited", "moves"],
                    )),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The variant settings of a game of Go. Read from the `rules` section of a Go config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoRules {
    /// Board side, 2 to 19.
    pub size: usize,
    /// Points added to White's area score.
    pub komi: f32,
    /// Whether a move may remove its own group (multi-stone suicide changes the position).
    pub allow_suicide: bool,
    pub ko: KoRule,
    pub move_cap: MoveCap,
}

impl Default for GoRules {
    fn default() -> Self {
        GoRules {
            size: 9,
            komi: 7.5,
            allow_suicide: false,
            ko: KoRule::PositionalSuperko,
            move_cap: MoveCap::Auto,
        }
    }
}

/// Settings that cannot make a game.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("board size {0} is outside {MIN_SIZE}..={MAX_SIZE}")]
    Size(usize),
    #[error("komi {0} is not a finite number of points within ±1000")]
    Komi(f32),
}

impl GoRules {
    /// Default rules on an `size × size` board.
    pub fn with_size(size: usize) -> GoRules {
        GoRules {
            size,
            ..GoRules::default()
        }
    }

    pub fn validate(&self) -> Result<(), RulesError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.size) {
            return Err(RulesError::Size(self.size));
        }
        if !self.komi.is_finite() || self.komi.abs() > 1000.0 {
            return Err(RulesError::Komi(self.komi));
        }
        Ok(())
    }

    /// The number of moves after which the game stops, if any.
    pub fn cap(&self) -> Option<u32> {
        match self.move_cap {
            MoveCap::Auto => Some(2 * (self.size * self.size) as u32),
            MoveCap::Unlimited => None,
            MoveCap::Moves(n) => Some(n),
        }
    }
}

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

fn stone_of(player: Player) -> u8 {
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
        };
        Ok(GoState::from_root(Arc::new(rules), Arc::new(root)))
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
        let root = root_from_grid(n, &grid, to_act, 0, None, 0, "setup")?;
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

/// Whether `k` can be the simple-ko point: a single stone was just captured there, so it is
/// empty, walled in by one colour, and one of those walls is a lone stone whose last liberty
/// it is (the capturer). A pass clears the ko point. Which side is to move is not checked:
/// GTP and SGF may hand the turn to the capturer again.
fn check_ko_point(
    n: usize,
    grid: &[Option<Player>],
    k: Point,
    passes: u8,
) -> Result<(), &'static str> {
    let at = |r: usize, c: usize| grid[r * n + c];
    let nbrs = |r: usize, c: usize| {
        [
            (r > 0).then(|| (r - 1, c)),
            (r + 1 < n).then(|| (r + 1, c)),
            (c > 0).then(|| (r, c - 1)),
            (c + 1 < n).then(|| (r, c + 1)),
        ]
        .into_iter()
        .flatten()
    };
    let (kr, kc) = (k.row as usize, k.col as usize);
    if at(kr, kc).is_some() {
        return Err("occupied");
    }
    if passes > 0 {
        return Err("a pass clears the ko point");
    }
    let mut walls = nbrs(kr, kc).map(|(r, c)| at(r, c));
    let colour = walls.next().flatten().ok_or("not surrounded by stones")?;
    if !walls.all(|w| w == Some(colour)) {
        return Err("not surrounded by stones of one colour");
    }
    let capturer = nbrs(kr, kc).any(|(r, c)| {
        nbrs(r, c).all(|(qr, qc)| (qr, qc) == (kr, kc) || at(qr, qc) == Some(colour.opponent()))
    });
    if !capturer {
        return Err("no lone stone beside it has it as its last liberty");
    }
    Ok(())
}

/// Builds a root from a grid of `n²` cells (`row · n + col`), refusing groups without liberties.
fn root_from_grid(
    n: usize,
    grid: &[Option<Player>],
    to_act: Player,
    passes: u8,
    ko: Option<Point>,
    moves: u32,
    format: &'static str,
) -> Result<Root, ParseError> {
    // Every group needs a liberty: flood from each stone.
    let mut seen = vec![false; n * n];
    for start in 0..n * n {
        let Some(who) = grid[start] else { continue };
        if seen[start] {
            continue;
        }
        let mut stack = vec![start];
        seen[start] = true;
        let mut free = false;
        while let Some(s) = stack.pop() {
            let (r, c) = (s / n, s % n);
            let nbrs = [
                (r > 0).then(|| s - n),
                (r + 1 < n).then(|| s + n),
                (c > 0).then(|| s - 1),
                (c + 1 < n).then(|| s + 1),
            ];
            for q in nbrs.into_iter().flatten() {
                match grid[q] {
                    None => free = true,
                    Some(o) if o == who && !seen[q] => {
                        seen[q] = true;
                        stack.push(q);
                    }
                    _ => {}
                }
            }
        }
        if !free {
            let p = Point::new(start / n, start % n);
            return Err(ParseError::new(
                format,
                p.to_gtp(),
                "group without liberties",
            ));
        }
    }
    if let Some(k) = ko {
        check_ko_point(n, grid, k, passes).map_err(|reason| {
            ParseError::new(format, "ko", format!("ko point {}: {reason}", k.to_gtp()))
        })?;
    }
    let stones = (0..n * n)
        .filter_map(|i| grid[i].map(|who| ((i / n) as u8, (i % n) as u8, who)))
        .collect();
    Ok(Root {
        stones,
        to_act,
        passes,
        ko,
        moves,
    })
}

impl Game for GoState {
    type Action = Move;
    const NAME: &'static str = "go";

    fn shape(&self) -> TensorShape {
        let n = self.size();
        TensorShape {
            planes: PLANES,
            height: n,
            width: n,
            policy_size: n * n + 1,
        }
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

    #[inline]
    fn action_index(&self, action: Move) -> usize {
        let n = self.size();
        match action {
            Move::Place(p) => p.row as usize * n + p.col as usize,
            Move::Pass => n * n,
        }
    }

    fn index_action(&self, index: usize) -> Option<Move> {
        let n = self.size();
        match index.cmp(&(n * n)) {
            std::cmp::Ordering::Less => Some(Move::Place(Point::new(index / n, index % n))),
            std::cmp::Ordering::Equal => Some(Move::Pass),
            std::cmp::Ordering::Greater => None,
        }
    }

    fn encode(&self, out: &mut [f32]) {
        let n = self.size();
        let area = n * n;
        assert_eq!(out.len(), PLANES * area, "encode buffer length");
        out.fill(0.0);
        let me = self.to_act.index();
        let them = 1 - me;
        for t in 0..=PAST {
            let stones = if t == 0 {
                Some(self.board.stones())
            } else {
                self.past_stones(t)
            };
            let Some(stones) = stones else { break };
            for (i, p) in self.board.points().enumerate() {
                let bit = 1u64 << (p % 64);
                if stones[me][p / 64] & bit != 0 {
                    out[2 * t * area + i] = 1.0;
                } else if stones[them][p / 64] & bit != 0 {
                    out[(2 * t + 1) * area + i] = 1.0;
                }
            }
        }
        if self.to_act == Player::First {
            out[2 * (PAST + 1) * area..].fill(1.0);
        }
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
        let n = self.size();
        let mut s = String::new();
        for row in (0..n).rev() {
            let mut empty = 0;
            for col in 0..n {
                match self.board.color(self.board.point(row, col)) {
                    BLACK | WHITE => {
                        if empty > 0 {
                            write!(s, "{empty}").unwrap();
                            empty = 0;
                        }
                        let black = self.board.color(self.board.point(row, col)) == BLACK;
                        s.push(if black { 'X' } else { 'O' });
                    }
                    _ => empty += 1,
                }
            }
            if empty > 0 {
                write!(s, "{empty}").unwrap();
            }
            if row > 0 {
                s.push('/');
            }
        }
        let side = if self.to_act == Player::First {
            'b'
        } else {
            'w'
        };
        let ko = if self.ko == 0 {
            "-".to_string()
        } else {
            let (r, c) = self.board.coords(self.ko);
            Point::new(r, c).to_gtp()
        };
        write!(s, " {side} {} {ko} {}", self.passes, self.moves).unwrap();
        s
    }

    fn parse_position(&self, text: &str) -> Result<GoState, ParseError> {
        const F: &str = "Go position";
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < 2 || fields.len() > 5 {
            return Err(ParseError::new(
                F,
                "text",
                "expected `rows side [passes] [ko] [moves]`",
            ));
        }
        let rows: Vec<&str> = fields[0].split('/').collect();
        let n = rows.len();
        if !(MIN_SIZE..=MAX_SIZE).contains(&n) {
            return Err(ParseError::new(
                F,
                "rows",
                format!("{n} rows; the board side must be {MIN_SIZE} to {MAX_SIZE}"),
            ));
        }
        let mut grid = vec![None; n * n];
        for (i, row_text) in rows.iter().enumerate() {
            let row = n - 1 - i;
            let field = || format!("row {}", row + 1);
            let mut col = 0;
            let mut digits = String::new();
            let flush = |digits: &mut String, col: &mut usize| -> Result<(), ParseError> {
                if !digits.is_empty() {
                    let k: usize = digits
                        .parse()
                        .map_err(|_| ParseError::new(F, field(), "bad run length"))?;
                    if k == 0 {
                        return Err(ParseError::new(F, field(), "run length 0"));
                    }
                    *col += k;
                    digits.clear();
                }
                Ok(())
            };
            for ch in row_text.chars() {
                if ch.is_ascii_digit() {
                    if digits.len() >= 2 {
                        return Err(ParseError::new(F, field(), "run length too long"));
                    }
                    digits.push(ch);
                    continue;
                }
                flush(&mut digits, &mut col)?;
                if ch == '.' {
                    // Diagrams may spell empty points out.
                    col += 1;
                    continue;
                }
                let who = match ch {
                    'X' | 'x' => Player::First,
                    'O' | 'o' => Player::Second,
                    _ => {
                        return Err(ParseError::new(
                            F,
                            field(),
                            format!("unexpected character {ch:?}"),
                        ))
                    }
                };
                if col >= n {
                    return Err(ParseError::new(F, field(), "row longer than the board"));
                }
                grid[row * n + col] = Some(who);
                col += 1;
            }
            flush(&mut digits, &mut col)?;
            if col != n {
                return Err(ParseError::new(
                    F,
                    field(),
                    format!("row covers {col} points, expected {n}"),
                ));
            }
        }
        let to_act = match fields[1] {
            "b" | "B" => Player::First,
            "w" | "W" => Player::Second,
            other => {
                return Err(ParseError::new(
                    F,
                    "side",
                    format!("expected b or w, found {other:?}"),
                ))
            }
        };
        let passes = match fields.get(2) {
            None => 0,
            Some(t) => t
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= 2)
                .ok_or_else(|| ParseError::new(F, "passes", "expected 0, 1 or 2"))?,
        };
        let ko = match fields.get(3) {
            None | Some(&"-") => None,
            Some(t) => {
                Some(Point::parse_gtp(t, n).map_err(|e| ParseError::new(F, "ko", e.to_string()))?)
            }
        };
        let moves = match fields.get(4) {
            None => 0,
            Some(t) => t
                .parse::<u32>()
                .map_err(|_| ParseError::new(F, "moves", "expected a move count"))?,
        };
        let root = root_from_grid(n, &grid, to_act, passes, ko, moves, F)?;
        let rules = if n == self.size() {
            self.rules.clone()
        } else {
            Arc::new(GoRules {
                size: n,
                ..(*self.rules).clone()
            })
        };
        Ok(GoState::from_root(rules, Arc::new(root)))
    }

    fn render(&self) -> String {
        let n = self.size();
        let letters: String = COLUMNS[..n]
            .iter()
            .flat_map(|&c| [' ', c as char])
            .collect();
        let mut s = format!("   {letters}\n");
        for row in (0..n).rev() {
            write!(s, "{:>2} ", row + 1).unwrap();
            for col in 0..n {
                let p = self.board.point(row, col);
                let ch = match self.board.color(p) {
                    BLACK => 'X',
                    WHITE => 'O',
                    _ if p == self.ko => '*',
                    _ => '.',
                };
                write!(s, " {ch}").unwrap();
            }
            writeln!(s, " {}", row + 1).unwrap();
        }
        writeln!(s, "   {letters}").unwrap();
        let (b, w) = self.area();
        write!(
            s,
            "{} to move, move {}, komi {}, area B {b} W {w}",
            if self.to_act == Player::First {
                "Black"
            } else {
                "White"
            },
            self.moves,
            self.rules.komi
        )
        .unwrap();
        s
    }
}

#[cfg(test)]
mod tests;
