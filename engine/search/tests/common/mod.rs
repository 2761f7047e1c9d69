//! Small games for search tests: m,n,k-games (tic-tac-toe and larger boards) and a take-away
//! game in which a player sometimes acts twice in a row. Plus an exact solver to check against.
#![allow(dead_code)]

use std::collections::HashMap;

use games::{Encoding, Game, Outcome, ParseError, Player, Symmetry, TensorShape};

/// Stones on a `w`×`h` board (at most 16 points); `k` in a row (row, column or diagonal) wins;
/// a full board is a draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mnk {
    w: u8,
    h: u8,
    k: u8,
    /// 0 empty, 1 First, 2 Second.
    cells: [u8; 16],
    to_act: Player,
    outcome: Option<Outcome>,
}

impl Mnk {
    pub fn new(w: u8, h: u8, k: u8) -> Self {
        assert!(usize::from(w * h) <= 16);
        Mnk {
            w,
            h,
            k,
            cells: [0; 16],
            to_act: Player::First,
            outcome: None,
        }
    }

    pub fn tic_tac_toe() -> Self {
        Mnk::new(3, 3, 3)
    }

    /// A position from rows written top to bottom with `x`, `o`, `.` (`x` is First), and the
    /// player to act.
    pub fn from_rows(w: u8, h: u8, k: u8, rows: &str, to_act: Player) -> Self {
        let mut g = Mnk::new(w, h, k);
        for (i, c) in rows.chars().filter(|c| !c.is_whitespace()).enumerate() {
            g.cells[i] = match c {
                'x' => 1,
                'o' => 2,
                _ => 0,
            };
        }
        g.to_act = to_act;
        g.outcome = g.compute_outcome();
        g
    }

    fn n(&self) -> usize {
        usize::from(self.w * self.h)
    }

    fn compute_outcome(&self) -> Option<Outcome> {
        let (w, h, k) = (self.w as i32, self.h as i32, self.k as i32);
        for y in 0..h {
            for x in 0..w {
                let c = self.cells[(y * w + x) as usize];
                if c == 0 {
                    continue;
                }
                for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                    let run = (0..k).all(|i| {
                        let (xx, yy) = (x + dx * i, y + dy * i);
                        xx >= 0
                            && yy >= 0
                            && xx < w
                            && yy < h
                            && self.cells[(yy * w + xx) as usize] == c
                    });
                    if run {
                        return Some(Outcome::Win(if c == 1 {
                            Player::First
                        } else {
                            Player::Second
                        }));
                    }
                }
            }
        }
        if self.cells[..self.n()].iter().all(|&c| c != 0) {
            return Some(Outcome::Draw);
        }
        None
    }
}

impl Game for Mnk {
    type Action = u8;
    const NAME: &'static str = "mnk";

    fn to_act(&self) -> Player {
        self.to_act
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<u8>) {
        if self.outcome.is_some() {
            return;
        }
        out.extend((0..self.n() as u8).filter(|&i| self.cells[usize::from(i)] == 0));
    }

    fn play_unchecked(&mut self, action: u8) {
        self.cells[usize::from(action)] = if self.to_act == Player::First { 1 } else { 2 };
        self.to_act = self.to_act.opponent();
        self.outcome = self.compute_outcome();
    }

    fn symmetries(&self) -> &'static [Symmetry] {
        &[Symmetry::IDENTITY]
    }

    fn transform(&self, _sym: Symmetry) -> Self {
        self.clone()
    }

    fn transform_action(&self, _sym: Symmetry, action: u8) -> u8 {
        action
    }

    fn hash(&self) -> u64 {
        let mut h = 0u64;
        for &c in &self.cells[..self.n()] {
            h = h * 3 + u64::from(c);
        }
        (h << 1 | self.to_act.index() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn parse_action(&self, text: &str) -> Result<u8, ParseError> {
        text.parse::<u8>()
            .ok()
            .filter(|&i| usize::from(i) < self.n())
            .ok_or_else(|| ParseError::new("action", text, "not a point index"))
    }

    fn format_action(&self, action: u8) -> String {
        action.to_string()
    }

    fn to_text(&self) -> String {
        let cells: String = self.cells[..self.n()]
            .iter()
            .map(|&c| match c {
                1 => 'x',
                2 => 'o',
                _ => '.',
            })
            .collect();
        format!(
            "{cells} {}",
            if self.to_act == Player::First {
                'x'
            } else {
                'o'
            }
        )
    }

    fn parse_position(&self, text: &str) -> Result<Self, ParseError> {
        let (cells, side) = text
            .split_once(' ')
            .ok_or_else(|| ParseError::new("mnk", "position", "expected `<cells> <side>`"))?;
        let to_act = match side {
            "x" => Player::First,
            "o" => Player::Second,
            _ => return Err(ParseError::new("mnk", "side", "expected x or o")),
        };
        Ok(Mnk::from_rows(self.w, self.h, self.k, cells, to_act))
    }
}

impl Encoding for Mnk {
    fn shape(&self) -> TensorShape {
        TensorShape {
            planes: 2,
            height: usize::from(self.h),
            width: usize::from(self.w),
            policy_size: self.n(),
        }
    }

    fn action_index(&self, action: u8) -> usize {
        usize::from(action)
    }

    fn index_action(&self, index: usize) -> Option<u8> {
        (index < self.n()).then_some(index as u8)
    }

    fn encode(&self, out: &mut [f32]) {
        let me = if self.to_act == Player::First { 1 } else { 2 };
        let n = self.n();
        for i in 0..n {
            out[i] = f32::from(u8::from(self.cells[i] == me));
            out[n + i] = f32::from(u8::from(self.cells[i] != 0 && self.cells[i] != me));
        }
    }
}

impl search::Tactics for Mnk {}

/// Take-away with bonus actions: a pile of stones; the player to act takes 1, 2 or 3; taking
/// exactly 2 lets the same player act again. Whoever takes the last stone wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BonusNim {
    pub pile: u32,
    pub to_act: Player,
}

impl Game for BonusNim {
    type Action = u8;
    const NAME: &'static str = "bonusnim";

    fn to_act(&self) -> Player {
        self.to_act
    }

    fn outcome(&self) -> Option<Outcome> {
        // The player who took the last stone is the one not to act... unless the bonus kept
        // them on: `to_act` is set to the winner's opponent when the pile empties.
        (self.pile == 0).then(|| Outcome::Win(self.to_act.opponent()))
    }

    fn legal_actions(&self, out: &mut Vec<u8>) {
        out.extend((1..=3u8).filter(|&t| u32::from(t) <= self.pile));
    }

    fn play_unchecked(&mut self, take: u8) {
        self.pile -= u32::from(take);
        if take != 2 || self.pile == 0 {
            self.to_act = self.to_act.opponent();
        }
    }

    fn symmetries(&self) -> &'static [Symmetry] {
        &[Symmetry::IDENTITY]
    }

    fn transform(&self, _sym: Symmetry) -> Self {
        self.clone()
    }

    fn transform_action(&self, _sym: Symmetry, action: u8) -> u8 {
        action
    }

    fn hash(&self) -> u64 {
        (u64::from(self.pile) << 1 | self.to_act.index() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn parse_action(&self, text: &str) -> Result<u8, ParseError> {
        match text {
            "1" => Ok(1),
            "2" => Ok(2),
            "3" => Ok(3),
            _ => Err(ParseError::new("action", text, "expected 1, 2 or 3")),
        }
    }

    fn format_action(&self, action: u8) -> String {
        action.to_string()
    }

    fn to_text(&self) -> String {
        format!("{} {}", self.pile, self.to_act.index())
    }

    fn parse_position(&self, text: &str) -> Result<Self, ParseError> {
        let bad = || ParseError::new("bonusnim", text, "expected `<pile> <0|1>`");
        let (p, s) = text.split_once(' ').ok_or_else(bad)?;
        Ok(BonusNim {
            pile: p.parse().map_err(|_| bad())?,
            to_act: match s {
                "0" => Player::First,
                "1" => Player::Second,
                _ => return Err(bad()),
            },
        })
    }
}

impl Encoding for BonusNim {
    fn shape(&self) -> TensorShape {
        TensorShape {
            planes: 1,
            height: 1,
            width: 1,
            policy_size: 3,
        }
    }

    fn action_index(&self, take: u8) -> usize {
        usize::from(take - 1)
    }

    fn index_action(&self, index: usize) -> Option<u8> {
        (index < 3).then_some(index as u8 + 1)
    }

    fn encode(&self, out: &mut [f32]) {
        out[0] = self.pile as f32;
    }
}

impl search::Tactics for BonusNim {}

/// The exact value of `state` for its player to act (+1 win, 0 draw, −1 loss), by exhaustive
/// search that never assumes players alternate.
pub fn solve<G: Game>(state: &G, memo: &mut HashMap<u64, i8>) -> i8 {
    if let Some(o) = state.outcome() {
        return o.value_for(state.to_act()) as i8;
    }
    if let Some(&v) = memo.get(&state.hash()) {
        return v;
    }
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    let me = state.to_act();
    let best = actions
        .iter()
        .map(|&a| action_value(state, a, me, memo))
        .max()
        .expect("a live state has actions");
    memo.insert(state.hash(), best);
    best
}

/// The exact value for `me` of playing `a` in `state`.
pub fn action_value<G: Game>(
    state: &G,
    a: G::Action,
    me: Player,
    memo: &mut HashMap<u64, i8>,
) -> i8 {
    let mut next = state.clone();
    next.play_unchecked(a);
    let v = solve(&next, memo);
    if next.to_act() == me {
        v
    } else {
        -v
    }
}

/// A perfect value network: the exact value of every state for its player to act (by
/// [`solve`]), with a uniform policy.
pub struct Oracle {
    memo: std::sync::Mutex<HashMap<u64, i8>>,
    batch: usize,
}

impl Oracle {
    pub fn new(batch: usize) -> Self {
        Oracle {
            memo: std::sync::Mutex::new(HashMap::new()),
            batch,
        }
    }
}

impl<G: Game> eval::Evaluator<G> for Oracle {
    fn batch_size(&self) -> usize {
        self.batch
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), eval::EvalError> {
        policy.fill(0.0);
        let mut memo = self.memo.lock().unwrap();
        for (v, s) in value.iter_mut().zip(states) {
            *v = f32::from(solve(*s, &mut memo));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "oracle".into()
    }
}
