//! Liuzhou chess (六洲棋), by the rules of `docs/rules/liuzhou.md`.
//!
//! The board is 36 points, so each colour's stones are one `u64` bitboard (bit `s` is point
//! `s = 6·(rank−1) + file`). An action is one byte that is also its policy index:
//! `0..36` placements, `36..72` selections (mark, capture, forced, no-move and counter removals;
//! the phase tells which), `72..216` steps as `72 + 4·from + direction`.
//!
//! Choices of this implementation (stated on that page, tested in `tests/liuzhou_rules.rs`):
//! - A placement or step whose reward is owed but that has no legal target at once forfeits it
//!   immediately, so no resting state ever owes a selection it cannot make. A position text that
//!   owes one anyway is settled the same way when read.
//! - `lose_below` must lie in `1..=18`.

mod bits;
mod encode;
mod record;
mod text;

use serde::{Deserialize, Serialize};

use crate::{Game, Outcome, ParseError, Player, Symmetry};
use bits::*;

pub use text::START_LFEN;

/// Number of points on the board.
pub const POINTS: usize = 36;
/// Stones each player owns.
pub const STONES_PER_PLAYER: u32 = 18;
/// Length of the policy vector: 36 placements, 36 selections, 36 × 4 steps.
pub const POLICY_SIZE: usize = 216;
/// Input planes of the network encoding (see [`Liuzhou::encode`]).
pub const PLANES: usize = 19;
/// `move_count` at which the game is drawn.
pub const MOVE_LIMIT: u16 = 144;
/// `moves_since_capture` at which the game is drawn.
pub const NO_CAPTURE_LIMIT: u16 = 36;

/// The variant settings the rules leave open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// A player left with fewer stones than this once placement is over loses (1 or 4).
    pub lose_below: u8,
}

impl Default for Rules {
    fn default() -> Self {
        Rules { lose_below: 1 }
    }
}

impl Rules {
    pub fn validate(&self) -> Result<(), String> {
        if (1..=STONES_PER_PLAYER as u8).contains(&self.lose_below) {
            Ok(())
        } else {
            Err(format!(
                "lose_below must be 1..=18, got {}",
                self.lose_below
            ))
        }
    }
}

/// The phase the state rests in. REMOVAL is automatic and never rests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Place,
    Mark,
    Forced,
    Move,
    Capture,
    Counter,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Place,
        Phase::Mark,
        Phase::Forced,
        Phase::Move,
        Phase::Capture,
        Phase::Counter,
    ];

    /// The phase's name as LFEN writes it (`place`, `mark`, `forced`, `move`, `capture`,
    /// `counter`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Place => "place",
            Phase::Mark => "mark",
            Phase::Forced => "forced",
            Phase::Move => "move",
            Phase::Capture => "capture",
            Phase::Counter => "counter",
        }
    }

    /// Whether placement is over (REMOVAL has run): the win-by-capture rule applies.
    fn after_placement(self) -> bool {
        !matches!(self, Phase::Place | Phase::Mark)
    }
}

/// One atomic action; its byte is its policy index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Action(u8);

/// What an [`Action`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// Put a stone on an empty point.
    Place(u8),
    /// Select an opponent stone (mark or remove, as the phase says).
    Select(u8),
    /// Move a stone one step.
    Step { from: u8, to: u8 },
}

impl Action {
    pub fn place(point: u8) -> Action {
        debug_assert!((point as usize) < POINTS);
        Action(point)
    }

    pub fn select(point: u8) -> Action {
        debug_assert!((point as usize) < POINTS);
        Action(36 + point)
    }

    /// The step `from → to`, if the two points are orthogonal neighbours.
    pub fn step(from: u8, to: u8) -> Option<Action> {
        (0..4)
            .find(|&d| step_target(from, d) == Some(to))
            .map(|d| Action(72 + 4 * from + d))
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The action with policy index `i`, if `i` names one (steps off the board name none).
    pub fn from_index(i: usize) -> Option<Action> {
        match i {
            0..=71 => Some(Action(i as u8)),
            72..=215 => {
                let (from, d) = (((i - 72) / 4) as u8, ((i - 72) % 4) as u8);
                step_target(from, d).map(|_| Action(i as u8))
            }
            _ => None,
        }
    }

    pub fn kind(self) -> ActionKind {
        match self.0 {
            0..=35 => ActionKind::Place(self.0),
            36..=71 => ActionKind::Select(self.0 - 36),
            _ => {
                let from = (self.0 - 72) / 4;
                let to =
                    step_target(from, (self.0 - 72) % 4).expect("steps are built on the board");
                ActionKind::Step { from, to }
            }
        }
    }
}

/// The point one step from `from` in direction `d` (0 up, 1 down, 2 left, 3 right), if on the
/// board.
fn step_target(from: u8, d: u8) -> Option<u8> {
    let (file, rank) = (from % 6, from / 6);
    match d {
        0 if rank < 5 => Some(from + 6),
        1 if rank > 0 => Some(from - 6),
        2 if file > 0 => Some(from - 1),
        3 if file < 5 => Some(from + 1),
        _ => None,
    }
}

/// A Liuzhou position with everything the rules need to go on from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Liuzhou {
    /// Stones by player (marked ones included), one bit per point.
    stones: [u64; 2],
    /// Marked stones of either colour; non-empty only during placement.
    marked: u64,
    to_act: Player,
    phase: Phase,
    /// Marks or captures still owed in `Mark`/`Capture`; 0 otherwise.
    pending: u8,
    move_count: u16,
    moves_since_capture: u16,
    rules: Rules,
    /// Cached after every action: the checks of "End of the game" in `docs/rules/liuzhou.md`.
    outcome: Option<Outcome>,
}

impl Default for Liuzhou {
    fn default() -> Self {
        Liuzhou::new(Rules::default())
    }
}

impl Liuzhou {
    /// The start position under `rules`.
    pub fn new(rules: Rules) -> Liuzhou {
        Liuzhou {
            stones: [0, 0],
            marked: 0,
            to_act: Player::First,
            phase: Phase::Place,
            pending: 0,
            move_count: 0,
            moves_since_capture: 0,
            rules,
            outcome: None,
        }
    }

    /// Reads an LFEN position under `rules`.
    pub fn from_lfen(lfen: &str, rules: Rules) -> Result<Liuzhou, ParseError> {
        text::parse_lfen(lfen, rules)
    }

    pub fn lfen(&self) -> String {
        text::write_lfen(self)
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn pending(&self) -> u8 {
        self.pending
    }

    pub fn move_count(&self) -> u16 {
        self.move_count
    }

    pub fn moves_since_capture(&self) -> u16 {
        self.moves_since_capture
    }

    /// The stones of `player`, marked ones included.
    pub fn stones(&self, player: Player) -> u64 {
        self.stones[player.index()]
    }

    pub fn marked(&self) -> u64 {
        self.marked
    }

    /// Stones `player` has on the board (marked ones included).
    pub fn stone_count(&self, player: Player) -> u32 {
        self.stones[player.index()].count_ones()
    }

    /// Stones `player` has placed so far: all 18 once placement is over. Placements alternate
    /// strictly (marks never change whose placement is next) and nothing leaves the board
    /// before REMOVAL, so during placement this is what the board shows.
    pub fn stones_placed(&self, player: Player) -> u32 {
        if self.phase.after_placement() {
            STONES_PER_PLAYER
        } else {
            self.stone_count(player)
        }
    }

    /// The legal targets among `victim`'s stones: those in no shape, or all candidates when
    /// every candidate is in a shape. Marking may only choose unmarked stones.
    pub fn targets(&self, victim: Player, marking: bool) -> u64 {
        let own = self.stones[victim.index()];
        let unmarked = own & !self.marked;
        let candidates = if marking { unmarked } else { own };
        let free = candidates & !shape_members(unmarked);
        if free != 0 {
            free
        } else {
            candidates
        }
    }

    /// Steps available to the player to act, as `(from, direction)` bitboards of movers.
    fn movers(&self) -> [u64; 4] {
        let own = self.stones[self.to_act.index()];
        let empty = !(self.stones[0] | self.stones[1]) & BOARD;
        [
            own & (empty >> 6),
            own & (empty << 6),
            own & (empty << 1) & !FILE_A,
            own & (empty >> 1) & !FILE_F,
        ]
    }

    fn has_step(&self) -> bool {
        self.movers().iter().any(|&m| m != 0)
    }

    /// The points the player to act may select in the current phase (0 where it steps or places).
    fn selection_targets(&self) -> u64 {
        let victim = self.to_act.opponent();
        match self.phase {
            Phase::Place => 0,
            Phase::Mark => self.targets(victim, true),
            Phase::Forced | Phase::Capture | Phase::Counter => self.targets(victim, false),
            Phase::Move if self.has_step() => 0,
            Phase::Move => self.targets(victim, false),
        }
    }

    fn remove(&mut self, victim: Player, point: u8) {
        self.stones[victim.index()] &= !(1u64 << point);
        self.moves_since_capture = 0;
    }

    /// The acting player owes `k` marks (`Mark`) or captures (`Capture`); forfeits them at once
    /// when no target exists.
    fn owe_selections(&mut self, phase: Phase, k: u8) {
        let marking = phase == Phase::Mark;
        if self.targets(self.to_act.opponent(), marking) == 0 {
            self.selections_done(phase);
        } else {
            self.phase = phase;
            self.pending = k;
        }
    }

    /// The marks after a placement, or the captures after a step, are settled.
    fn selections_done(&mut self, phase: Phase) {
        self.pending = 0;
        if phase == Phase::Mark {
            self.placement_done();
        } else {
            self.phase = Phase::Move;
            self.to_act = self.to_act.opponent();
        }
    }

    /// A placement (with its marks) is complete: the opponent places, or REMOVAL runs.
    fn placement_done(&mut self) {
        if self.stones[0] | self.stones[1] == BOARD {
            // REMOVAL, automatic: not an action, so move_count stays.
            self.to_act = Player::Second;
            if self.marked != 0 {
                let marked = self.marked;
                self.stones[0] &= !marked;
                self.stones[1] &= !marked;
                self.marked = 0;
                self.phase = Phase::Move;
            } else {
                self.phase = Phase::Forced;
            }
        } else {
            self.phase = Phase::Place;
            self.to_act = self.to_act.opponent();
        }
    }

    /// The end-of-game checks, in the order `docs/rules/liuzhou.md` gives them.
    fn compute_outcome(&self) -> Option<Outcome> {
        if self.phase.after_placement() {
            let lb = self.rules.lose_below as u32;
            let first_out = self.stone_count(Player::First) < lb;
            let second_out = self.stone_count(Player::Second) < lb;
            match (first_out, second_out) {
                (true, true) => return Some(Outcome::Draw),
                (true, false) => return Some(Outcome::Win(Player::Second)),
                (false, true) => return Some(Outcome::Win(Player::First)),
                (false, false) => {}
            }
        }
        if self.move_count >= MOVE_LIMIT || self.moves_since_capture >= NO_CAPTURE_LIMIT {
            return Some(Outcome::Draw);
        }
        let can_act = match self.phase {
            Phase::Place => true,
            Phase::Move => self.has_step() || self.selection_targets() != 0,
            _ => self.selection_targets() != 0,
        };
        (!can_act).then_some(Outcome::Win(self.to_act.opponent()))
    }

    /// Settles a state read from text: owed selections without targets are forfeited (as play
    /// would have done), then the outcome is computed.
    fn settle(&mut self) {
        if matches!(self.phase, Phase::Mark | Phase::Capture)
            && self.targets(self.to_act.opponent(), self.phase == Phase::Mark) == 0
        {
            self.selections_done(self.phase);
        }
        self.outcome = self.compute_outcome();
    }
}

impl Game for Liuzhou {
    type Action = Action;
    const NAME: &'static str = "liuzhou";

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
        let name = |p: Player| ["Black", "White"][p.index()];
        let lb = self.rules.lose_below as u32;
        let out: Vec<Player> = [Player::First, Player::Second]
            .into_iter()
            .filter(|&p| self.phase.after_placement() && self.stone_count(p) < lb)
            .collect();
        let fewer = |p: Player| match lb {
            1 => format!("{} has no stones left", name(p)),
            _ => format!("{} has fewer than {lb} stones", name(p)),
        };
        // In the order `compute_outcome` checks them.
        Some(match out[..] {
            [p] => fewer(p),
            [_, _] if lb == 1 => "neither side has stones left".to_string(),
            [_, _] => format!("both sides have fewer than {lb} stones"),
            _ if self.move_count >= MOVE_LIMIT => format!("the move limit of {MOVE_LIMIT} actions"),
            _ if self.moves_since_capture >= NO_CAPTURE_LIMIT => {
                format!("{NO_CAPTURE_LIMIT} actions without a capture")
            }
            _ => format!("{} cannot act", name(self.to_act)),
        })
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        if self.outcome.is_some() {
            return;
        }
        match self.phase {
            Phase::Place => {
                let empty = !(self.stones[0] | self.stones[1]) & BOARD;
                push_points(out, empty, 0);
            }
            Phase::Move if self.has_step() => {
                for (d, movers) in self.movers().into_iter().enumerate() {
                    let mut m = movers;
                    while m != 0 {
                        let from = m.trailing_zeros() as u8;
                        m &= m - 1;
                        out.push(Action(72 + 4 * from + d as u8));
                    }
                }
            }
            _ => push_points(out, self.selection_targets(), 36),
        }
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match action.kind() {
            ActionKind::Place(p) => {
                self.phase == Phase::Place && (self.stones[0] | self.stones[1]) & (1 << p) == 0
            }
            ActionKind::Select(p) => self.selection_targets() & (1 << p) != 0,
            ActionKind::Step { from, to } => {
                self.phase == Phase::Move
                    && self.stones[self.to_act.index()] & (1 << from) != 0
                    && (self.stones[0] | self.stones[1]) & (1 << to) == 0
            }
        }
    }

    fn play_unchecked(&mut self, action: Action) {
        let me = self.to_act;
        let opp = me.opponent();
        self.move_count += 1;
        match action.kind() {
            ActionKind::Place(p) => {
                self.stones[me.index()] |= 1 << p;
                self.moves_since_capture = 0;
                match reward(self.stones[me.index()] & !self.marked, p) {
                    0 => self.placement_done(),
                    k => self.owe_selections(Phase::Mark, k),
                }
            }
            ActionKind::Select(p) => match self.phase {
                Phase::Mark => {
                    self.marked |= 1 << p;
                    self.moves_since_capture = 0;
                    self.pending -= 1;
                    if self.pending == 0 || self.targets(opp, true) == 0 {
                        self.selections_done(Phase::Mark);
                    }
                }
                Phase::Capture => {
                    self.remove(opp, p);
                    self.pending -= 1;
                    if self.pending == 0 || self.targets(opp, false) == 0 {
                        self.selections_done(Phase::Capture);
                    }
                }
                Phase::Forced => {
                    self.remove(opp, p);
                    // White removes first, then Black; then White moves first.
                    if me == Player::First {
                        self.phase = Phase::Move;
                    }
                    self.to_act = opp;
                }
                Phase::Move => {
                    // No legal step: remove instead, and the opponent answers in COUNTER.
                    self.remove(opp, p);
                    self.phase = Phase::Counter;
                    self.to_act = opp;
                }
                Phase::Counter => {
                    // The stuck player (the opponent) moves next.
                    self.remove(opp, p);
                    self.phase = Phase::Move;
                    self.to_act = opp;
                }
                Phase::Place => debug_assert!(false, "selection during placement"),
            },
            ActionKind::Step { from, to } => {
                self.stones[me.index()] ^= (1 << from) | (1 << to);
                self.moves_since_capture += 1;
                match reward(self.stones[me.index()], to) {
                    0 => self.to_act = opp,
                    k => self.owe_selections(Phase::Capture, k),
                }
            }
        }
        self.outcome = self.compute_outcome();
    }

    fn symmetries(&self) -> &'static [Symmetry] {
        &Symmetry::ALL
    }

    fn transform(&self, sym: Symmetry) -> Liuzhou {
        let map = |b: u64| transform_board(sym, b);
        Liuzhou {
            stones: [map(self.stones[0]), map(self.stones[1])],
            marked: map(self.marked),
            ..self.clone()
        }
    }

    fn transform_action(&self, sym: Symmetry, action: Action) -> Action {
        let p = |s: u8| transform_point(sym, s);
        match action.kind() {
            ActionKind::Place(s) => Action::place(p(s)),
            ActionKind::Select(s) => Action::select(p(s)),
            ActionKind::Step { from, to } => {
                Action::step(p(from), p(to)).expect("symmetries keep neighbours adjacent")
            }
        }
    }

    fn hash(&self) -> u64 {
        let small = self.to_act as u64
            | (self.phase as u64) << 1
            | (self.pending as u64) << 4
            | (self.move_count as u64) << 8
            | (self.moves_since_capture as u64) << 24
            | (self.rules.lose_below as u64) << 40;
        mix(self.stones[0] ^ 0x9E37_79B9_7F4A_7C15)
            ^ mix(self.stones[1] ^ 0xC2B2_AE3D_27D4_EB4F).rotate_left(21)
            ^ mix(self.marked ^ 0x1656_67B1_9E37_79F9).rotate_left(42)
            ^ mix(small ^ 0x27D4_EB2F_1656_67C5).rotate_left(7)
    }

    fn parse_action(&self, text: &str) -> Result<Action, ParseError> {
        text::parse_action(text)
    }

    fn format_action(&self, action: Action) -> String {
        text::format_action(action)
    }

    fn to_text(&self) -> String {
        self.lfen()
    }

    fn parse_position(&self, text: &str) -> Result<Liuzhou, ParseError> {
        Liuzhou::from_lfen(text, self.rules)
    }

    fn render(&self) -> String {
        text::render(self)
    }

    /// The stone on each point (marked ones included): +1 `player`'s, −1 the opponent's, 0
    /// empty; point `s` at index `s`, as in the input planes.
    fn final_ownership(&self, player: Player) -> Option<Vec<f32>> {
        let (mine, theirs) = (self.stones(player), self.stones(player.opponent()));
        Some(
            (0..POINTS)
                .map(|s| {
                    let bit = 1u64 << s;
                    if mine & bit != 0 {
                        1.0
                    } else if theirs & bit != 0 {
                        -1.0
                    } else {
                        0.0
                    }
                })
                .collect(),
        )
    }

    /// The stone difference: `player`'s stones less the opponent's.
    fn final_score(&self, player: Player) -> Option<f32> {
        Some(self.stone_count(player) as f32 - self.stone_count(player.opponent()) as f32)
    }
}

fn push_points(out: &mut Vec<Action>, mut points: u64, base: u8) {
    while points != 0 {
        out.push(Action(base + points.trailing_zeros() as u8));
        points &= points - 1;
    }
}

/// A 64-bit finaliser (splitmix64): spreads every input bit over the output.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Fixed positions from every phase (both `lose_below` variants) for benchmarks.
pub fn bench_positions() -> Vec<Liuzhou> {
    include_str!("bench_positions.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (lfen, lb) = l.split_once(';').expect("LFEN;lose_below");
            let rules = Rules {
                lose_below: lb.trim().parse().expect("lose_below"),
            };
            Liuzhou::from_lfen(lfen, rules).expect("bench positions are valid")
        })
        .collect()
}

/// The fuzz target's body, kept here so the corpus also runs as a plain test on stable Rust:
/// the first line of `data` is read as LFEN (under both variants), every further line as an
/// action, played when legal. Nothing may panic; a state that reads back must round-trip.
pub fn fuzz_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    for lose_below in [1, 4] {
        let Ok(mut state) = Liuzhou::from_lfen(first, Rules { lose_below }) else {
            continue;
        };
        let again = Liuzhou::from_lfen(&state.lfen(), state.rules).expect("own LFEN reads back");
        assert_eq!(again.lfen(), state.lfen());
        for line in lines.clone() {
            if let Ok(action) = state.parse_action(line) {
                let _ = state.play(action);
            }
        }
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        let _ = state.render();
    }
}
