//! Matches between two agents: colours alternating (or fixed, for a handicap), results with a
//! confidence interval, and what a match keeps of its games ([`MatchLog`]: the record file in
//! the game's own format, the forfeits).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use games::record::{self, RecordFormat};
use games::{Agent, AgentError, Decision, Game, Outcome, Player, RecordMeta};

use crate::spec::AgentSpec;

/// Why a match stopped.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("{agent} played an illegal action in {position}: {reason}")]
    Illegal {
        agent: String,
        position: String,
        reason: String,
    },
}

/// Results from the point of view of agent A (the one that plays First in even games).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchResult {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Games that hit the safety cap on actions (counted as draws too).
    pub capped: u32,
    /// How many games each rule ended (see [`GameRecord::ending`]).
    pub endings: BTreeMap<String, u32>,
    /// Wins, draws and losses of agent A playing each side (by [`Player::index`]).
    pub by_side: [[u32; 3]; 2],
    /// A fingerprint of each distinct game (start, agent A's side, actions): two players that
    /// choose deterministically from the same start play one game again and again.
    pub distinct: BTreeSet<u64>,
}

impl MatchResult {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Mean score per game (win 1, draw ½, loss 0).
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(n)
    }

    /// A 95 % confidence interval of the score (normal approximation over the per-game scores,
    /// clamped to [0, 1]).
    pub fn confidence95(&self) -> (f64, f64) {
        let n = f64::from(self.games());
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let m = self.score();
        let sq = (f64::from(self.wins) + 0.25 * f64::from(self.draws)) / n;
        let var = (sq - m * m).max(0.0);
        let half = 1.96 * (var / n).sqrt();
        ((m - half).max(0.0), (m + half).min(1.0))
    }

    /// The Elo difference the score implies (±inf at 0 or 1).
    pub fn elo(&self) -> f64 {
        let s = self.score();
        -400.0 * (1.0 / s - 1.0).log10()
    }

    /// Games that repeat an earlier game of the match move for move, with the same start and
    /// colours: counted again in the score, they carry no new information about strength.
    pub fn repeats(&self) -> u32 {
        self.games().saturating_sub(self.distinct.len() as u32)
    }

    /// The endings, most frequent first: `checkmate 12, threefold repetition 3`.
    pub fn endings_text(&self) -> String {
        let mut v: Vec<(&String, &u32)> = self.endings.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Agent A's results by the side it played, `sides` naming them (`Black`, `White`):
    /// `as Black 40 wins, 5 draws, 5 losses, 0.850; as White …`, sides it never played left
    /// out.
    pub fn by_side_text(&self, sides: [&str; 2]) -> String {
        let mut parts = Vec::new();
        for (name, [w, d, l]) in sides.iter().zip(self.by_side) {
            let n = w + d + l;
            if n > 0 {
                let score = (f64::from(w) + 0.5 * f64::from(d)) / f64::from(n);
                parts.push(format!(
                    "as {name} {w} wins, {d} draws, {l} losses, {score:.3}"
                ));
            }
        }
        parts.join("; ")
    }

    /// Counts one game that agent A played as `a_plays`.
    pub fn add<G: Game>(&mut self, record: &GameRecord<G>, a_plays: Player) {
        let column = match record.outcome {
            Outcome::Draw => 1,
            Outcome::Win(p) if p == a_plays => 0,
            Outcome::Win(_) => 2,
        };
        match column {
            0 => self.wins += 1,
            1 => self.draws += 1,
            _ => self.losses += 1,
        }
        self.by_side[a_plays.index()][column] += 1;
        self.capped += u32::from(record.capped);
        *self.endings.entry(record.ending.clone()).or_default() += 1;
        // The default hasher's keys are fixed: the same game gets the same fingerprint.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (record.start.hash(), a_plays.index(), &record.moves).hash(&mut h);
        self.distinct.insert(h.finish());
    }
}

/// How one game went.
#[derive(Clone, Debug)]
pub struct GameRecord<G: Game> {
    /// The position the game started from.
    pub start: G,
    /// The actions played, in order.
    pub moves: Vec<G::Action>,
    pub outcome: Outcome,
    /// Stopped by the action cap rather than by the rules.
    pub capped: bool,
    /// The rule that ended it, without the details after a colon (`both passed`, not
    /// `both passed: W+3.5`), so that games can be counted by it.
    pub ending: String,
    /// The player who resigned, if one did.
    pub resigned: Option<Player>,
    /// The player who lost by an answer the game refused, if one did, and why.
    pub forfeit: Option<Forfeit>,
}

/// A game lost by an answer the game refused: an external program's illegal or unreadable
/// action (see [`Agent::forfeits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    pub player: Player,
    /// The agent's name.
    pub agent: String,
    /// What it answered, and why that is no action here.
    pub reason: String,
}

impl<G: Game> GameRecord<G> {
    /// The number of actions played.
    pub fn actions(&self) -> usize {
        self.moves.len()
    }

    /// The game as a record file holds it (see [`games::RecordFormat`]).
    pub fn to_record(&self) -> games::GameRecord<G> {
        games::GameRecord {
            start: self.start.clone(),
            actions: self.moves.clone(),
            result: Some(self.outcome),
            result_text: None,
        }
    }
}

impl<G: RecordFormat> GameRecord<G> {
    /// The game in its format's record (PGN, SGF, …): `names` of the first and second player,
    /// the ending in words with `sides` naming the colours (a resignation, a forfeit with its
    /// reason, the cap of `max_actions` actions, else the rule).
    pub fn record_text(&self, names: [&str; 2], sides: [&str; 2], max_actions: usize) -> String {
        let ending = match (self.resigned, &self.forfeit) {
            (Some(p), _) => Some(format!("{} resigned", sides[p.index()])),
            (None, Some(f)) => Some(format!(
                "{} forfeited: {}",
                sides[f.player.index()],
                f.reason
            )),
            (None, None) if self.capped => {
                Some(format!("drawn at the cap of {max_actions} actions"))
            }
            (None, None) => None,
        };
        let meta = RecordMeta {
            names,
            ending: ending.as_deref().or(Some(self.ending.as_str())),
            resigned: self.resigned,
        };
        G::write_record(&self.to_record(), &meta)
    }
}

/// What a match keeps of its games besides the score: every game's record, in the order of
/// the games' numbers, in one file rewritten (through a temporary file) after each game, so a
/// stopped match keeps the games it finished; and a line for each forfeit. Games end on the
/// pairs' threads in any order; the maps put them back in order.
pub struct MatchLog {
    /// The names of agents A and B.
    names: [String; 2],
    /// The game's colours, first player first (`Red`, `Black`).
    sides: [&'static str; 2],
    max_actions: usize,
    path: Option<PathBuf>,
    records: Mutex<BTreeMap<u32, String>>,
    forfeits: Mutex<BTreeMap<u32, String>>,
}

impl MatchLog {
    /// A log for agents A and B named `names` in a game whose colours are `sides`, whose
    /// records go to `path` (none without). The file is written empty at once, so a path that
    /// cannot be written fails before the games.
    pub fn new(
        names: [&str; 2],
        sides: [&'static str; 2],
        max_actions: usize,
        path: Option<&Path>,
    ) -> std::io::Result<MatchLog> {
        if let Some(path) = path {
            record::write_file(path, "")?;
        }
        Ok(MatchLog {
            names: names.map(str::to_string),
            sides,
            max_actions,
            path: path.map(Path::to_path_buf),
            records: Mutex::default(),
            forfeits: Mutex::default(),
        })
    }

    /// Keeps game number `g` (from 0), which agent A played as `a_plays`: its forfeit, if it
    /// was one, said in the log at once, and the record file rewritten. An error is the record
    /// file's; the game is kept all the same.
    pub fn add<G: RecordFormat>(
        &self,
        g: u32,
        game: &GameRecord<G>,
        a_plays: Player,
    ) -> std::io::Result<()> {
        let [a, b] = [self.names[0].as_str(), self.names[1].as_str()];
        if let Some(f) = &game.forfeit {
            let side = if f.player == a_plays { a } else { b };
            let line = format!(
                "game {}: {side} ({}) forfeited: {}: {}",
                g + 1,
                self.sides[f.player.index()],
                f.agent,
                f.reason
            );
            tracing::warn!("{line}");
            lock(&self.forfeits).insert(g, line);
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        let names = match a_plays {
            Player::First => [a, b],
            Player::Second => [b, a],
        };
        let mut records = lock(&self.records);
        records.insert(g, game.record_text(names, self.sides, self.max_actions));
        let text: Vec<&str> = records.values().map(String::as_str).collect();
        record::write_file(path, &text.join("\n"))
    }

    /// The forfeits, one line each (`game 3: gnugo[white] (Black) forfeited: …`), in the order
    /// of the games.
    pub fn forfeits(&self) -> Vec<String> {
        lock(&self.forfeits).values().cloned().collect()
    }
}

/// The map behind `m`, also after a thread panicked while holding it (each insert is whole).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An agent's name in a match's or a ladder's tables: its spec in short (`random`,
/// `net(m.onnx, 200 visits)`) and `side` in brackets, the flag or place it came from
/// (`random[black]`).
pub fn agent_label(spec: &AgentSpec, side: &str) -> String {
    // A Gumbel search (PUCT is the default and goes unnamed), a guard and a handoff say so.
    let extras = |m: &crate::spec::MctsSpec| {
        let kind = match m.search {
            search::SearchKind::Gumbel => ", gumbel",
            search::SearchKind::Puct => "",
        };
        let guard = m.guard.map_or(String::new(), |g| {
            let margin = m.guard_margin.unwrap_or(crate::guard::DEFAULT_MARGIN);
            format!(", guard {g}, margin {margin}")
        });
        let handoff = m
            .handoff
            .map_or(String::new(), |k| format!(", handoff {k}"));
        let views = if m.views > 1 {
            format!(", {} views", m.views)
        } else {
            String::new()
        };
        format!("{kind}{views}{guard}{handoff}")
    };
    let s = match spec {
        AgentSpec::Random { .. } => "random".to_string(),
        AgentSpec::Mcts(m) => format!(
            "mcts({}{})",
            m.visits
                .map(|v| format!("{v} visits"))
                .or(m.time.map(|t| format!("{t} s")))
                .unwrap_or_default(),
            extras(m)
        ),
        AgentSpec::Other(text) => text.clone(),
        AgentSpec::Net { model, mcts } => format!(
            "net({}, {}{})",
            model
                .as_deref()
                .map_or("default model".into(), |m| m.display().to_string()),
            mcts.visits
                .map(|v| format!("{v} visits"))
                .or(mcts.time.map(|t| format!("{t} s")))
                .unwrap_or_default(),
            extras(mcts)
        ),
    };
    format!("{s}[{side}]")
}

/// The ending of a game an agent gave up.
pub const RESIGNATION: &str = "resignation";

/// The ending of a game an agent lost by an answer the game refused ([`Forfeit`]).
pub const FORFEIT: &str = "forfeit";

/// Plays one game from `start`: `first` acts for `Player::First`, `second` for `Second`.
/// A game still running after `max_actions` is scored a draw; an agent that resigns loses, and
/// so does one whose error is a forfeit ([`Agent::forfeits`]: an external program's illegal
/// or unreadable answer). Any other error of an agent stops the game and is returned.
pub fn play_game<G: Game>(
    start: &G,
    first: &mut dyn Agent<G>,
    second: &mut dyn Agent<G>,
    max_actions: usize,
) -> Result<GameRecord<G>, MatchError> {
    first.new_game(start)?;
    second.new_game(start)?;
    let mut state = start.clone();
    let mut moves = Vec::new();
    for _ in 0..max_actions {
        if let Some(outcome) = state.outcome() {
            return Ok(GameRecord {
                start: start.clone(),
                moves,
                outcome,
                capped: false,
                ending: ending(&state),
                resigned: None,
                forfeit: None,
            });
        }
        let agent: &mut dyn Agent<G> = match state.to_act() {
            Player::First => &mut *first,
            Player::Second => &mut *second,
        };
        let action = match agent.decide(&state) {
            Ok(Decision::Play(a)) => a,
            Ok(Decision::Resign) => {
                return Ok(GameRecord {
                    start: start.clone(),
                    moves,
                    outcome: Outcome::Win(state.to_act().opponent()),
                    capped: false,
                    ending: RESIGNATION.to_string(),
                    resigned: Some(state.to_act()),
                    forfeit: None,
                })
            }
            Err(e) if agent.forfeits(&e) => {
                return Ok(GameRecord {
                    start: start.clone(),
                    moves,
                    outcome: Outcome::Win(state.to_act().opponent()),
                    capped: false,
                    ending: FORFEIT.to_string(),
                    resigned: None,
                    forfeit: Some(Forfeit {
                        player: state.to_act(),
                        agent: e.agent,
                        reason: e.reason,
                    }),
                })
            }
            Err(e) => return Err(e.into()),
        };
        let before = state.clone();
        state.play(action).map_err(|e| MatchError::Illegal {
            agent: agent.name(),
            position: before.to_text(),
            reason: e.to_string(),
        })?;
        first.observe(&before, action)?;
        second.observe(&before, action)?;
        moves.push(action);
    }
    let outcome = state.outcome();
    Ok(GameRecord {
        start: start.clone(),
        moves,
        outcome: outcome.unwrap_or(Outcome::Draw),
        capped: outcome.is_none(),
        ending: ending(&state),
        resigned: None,
        forfeit: None,
    })
}

/// The rule that ended `state`'s game, without the details after a colon; "the action cap"
/// for a game still running.
fn ending<G: Game>(state: &G) -> String {
    match state.end_reason() {
        Some(r) => r.split(':').next().unwrap_or_default().to_string(),
        None => "the action cap".to_string(),
    }
}

/// Plays `games` games between `a` and `b`, swapping colours every game (A is First in even
/// games). `on_game(index, record, result so far)` is called after each game.
pub fn play_match<G: Game>(
    start: &G,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    games: u32,
    max_actions: usize,
    mut on_game: impl FnMut(u32, &GameRecord<G>, &MatchResult),
) -> Result<MatchResult, MatchError> {
    let mut result = MatchResult::default();
    for g in 0..games {
        let (record, a_plays) = play_numbered(start, a, b, g, max_actions, Colours::Alternate)?;
        result.add(&record, a_plays);
        on_game(g, &record, &result);
    }
    Ok(result)
}

/// Who plays which colour in a match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colours {
    /// Agent A plays First in even games and Second in odd ones.
    #[default]
    Alternate,
    /// Agent A plays First in every game (a handicap match: the start gives First its stones).
    AFirst,
}

/// Where a match's games start: from the match's start position, or (`moves` > 0) from a
/// position `moves` uniformly random actions later, drawn from `seed` and the game pair, so
/// that the two games of a pair (2k and 2k + 1, which swap colours) share their opening and
/// different pairs differ. Deterministic agents would otherwise play the same two games over
/// and over, and a match's interval would count repeats as evidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Openings {
    pub moves: usize,
    pub seed: u64,
}

impl Openings {
    /// The start of game number `g`. An action after which the game would be over is never
    /// drawn; the opening stops short where every action would end it.
    pub fn position<G: Game>(&self, start: &G, g: u32) -> G {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let mut state = start.clone();
        let pair = u64::from(g / 2);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(
            self.seed ^ pair.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let mut actions = Vec::new();
        for _ in 0..self.moves {
            actions.clear();
            state.legal_actions(&mut actions);
            actions.retain(|&a| {
                let mut next = state.clone();
                next.play_unchecked(a);
                next.outcome().is_none()
            });
            let Some(&a) = actions.choose(&mut rng) else {
                break;
            };
            state.play_unchecked(a);
        }
        state
    }
}

/// Game number `g` of a match between `a` and `b`: A plays First in even games, or in all of
/// them. Returns the record and A's colour.
fn play_numbered<G: Game>(
    start: &G,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    g: u32,
    max_actions: usize,
    colours: Colours,
) -> Result<(GameRecord<G>, Player), MatchError> {
    Ok(if g.is_multiple_of(2) || colours == Colours::AFirst {
        (play_game(start, a, b, max_actions)?, Player::First)
    } else {
        (play_game(start, b, a, max_actions)?, Player::Second)
    })
}

/// Agents A and B of one thread of [`play_match_parallel`].
pub type AgentPair<G> = (Box<dyn Agent<G>>, Box<dyn Agent<G>>);

/// Plays `games` games as [`play_match`] does, several at once: pair k of `pairs` (agents A
/// and B, each pair on a thread of its own) plays games k, k + pairs.len(), …, with colours by
/// the game's number as in a sequential match (or A First in every game, by `colours`), each
/// from its opening (`openings`). The result does not depend on the threads' timing;
/// `on_game(game number, record, A's colour, result so far)` is called after each game, from
/// the pairs' threads.
pub fn play_match_parallel<G: Game>(
    start: &G,
    pairs: &mut [AgentPair<G>],
    games: u32,
    max_actions: usize,
    colours: Colours,
    openings: Openings,
    on_game: impl Fn(u32, &GameRecord<G>, Player, &MatchResult) + Sync,
) -> Result<MatchResult, MatchError> {
    let step = pairs.len().max(1);
    let total = std::sync::Mutex::new(MatchResult::default());
    std::thread::scope(|scope| -> Result<(), MatchError> {
        let handles: Vec<_> = pairs
            .iter_mut()
            .enumerate()
            .map(|(k, (a, b))| {
                let (total, on_game) = (&total, &on_game);
                scope.spawn(move || -> Result<(), MatchError> {
                    for g in (k as u32..games).step_by(step) {
                        let opening = openings.position(start, g);
                        let (record, a_plays) =
                            play_numbered(&opening, &mut **a, &mut **b, g, max_actions, colours)?;
                        let mut t = total.lock().unwrap_or_else(|p| p.into_inner());
                        t.add(&record, a_plays);
                        on_game(g, &record, a_plays, &t);
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a match thread panicked")?;
        }
        Ok(())
    })?;
    Ok(total.into_inner().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings_are_shared_by_a_pair_and_differ_between_pairs() {
        use games::xiangqi::Xiangqi;
        let start = Xiangqi::start();
        let openings = Openings { moves: 4, seed: 7 };
        let text = |g| openings.position(&start, g).to_text();
        assert_eq!(text(0), text(1), "the two games of a pair");
        assert_eq!(text(6), text(7));
        let distinct: std::collections::HashSet<_> = (0..20).step_by(2).map(text).collect();
        assert!(
            distinct.len() >= 9,
            "pairs differ: {} of 10",
            distinct.len()
        );
        // Four actions in, from the start; none at all by default.
        let p = openings.position(&start, 3);
        assert_eq!(p.to_act(), Player::First);
        assert_ne!(p.to_text(), start.to_text());
        assert_eq!(
            Openings::default().position(&start, 5).to_text(),
            start.to_text()
        );
        // An opening never ends the game: from a mate-in-one position the mate is not drawn.
        let mate = Xiangqi::from_fen("3k5/1R7/9/9/9/9/9/9/9/R4K3 w - - 0 1").unwrap();
        for g in 0..40 {
            let p = Openings { moves: 1, seed: g }.position(&mate, 0);
            assert!(p.outcome().is_none(), "{}", p.to_text());
        }
    }

    #[test]
    fn score_and_interval() {
        let r = MatchResult {
            wins: 150,
            draws: 20,
            losses: 30,
            capped: 0,
            ..Default::default()
        };
        assert_eq!(r.games(), 200);
        assert!((r.score() - 0.8).abs() < 1e-12);
        let (lo, hi) = r.confidence95();
        assert!(lo < 0.8 && hi > 0.8);
        // Per-game variance: E[s²] − m² = (150 + 5)/200 − 0.64 = 0.135; half-width 1.96·√(0.135/200).
        let half = 1.96 * (0.135f64 / 200.0).sqrt();
        assert!((hi - 0.8 - half).abs() < 1e-12 && (0.8 - lo - half).abs() < 1e-12);
        assert!(r.elo() > 0.0);
        let all = MatchResult {
            wins: 10,
            ..Default::default()
        };
        assert_eq!(all.confidence95(), (1.0, 1.0));
    }

    #[test]
    fn results_by_side_add_up_to_the_whole() {
        use games::liuzhou::{Liuzhou, Rules};
        let record = |outcome| GameRecord::<Liuzhou> {
            start: Liuzhou::new(Rules::default()),
            moves: Vec::new(),
            outcome,
            capped: false,
            ending: "test".into(),
            resigned: None,
            forfeit: None,
        };
        let mut r = MatchResult::default();
        // As First: a win and a draw; as Second: a loss (First won) and a win.
        r.add(&record(Outcome::Win(Player::First)), Player::First);
        r.add(&record(Outcome::Draw), Player::First);
        r.add(&record(Outcome::Win(Player::First)), Player::Second);
        r.add(&record(Outcome::Win(Player::Second)), Player::Second);
        assert_eq!((r.wins, r.draws, r.losses), (2, 1, 1));
        assert_eq!(r.by_side, [[1, 1, 0], [1, 0, 1]]);
        assert_eq!(
            r.by_side_text(["Black", "White"]),
            "as Black 1 wins, 1 draws, 0 losses, 0.750; as White 1 wins, 0 draws, 1 losses, 0.500"
        );
        // A handicap match: one side only.
        let mut h = MatchResult::default();
        h.add(&record(Outcome::Draw), Player::First);
        assert_eq!(
            h.by_side_text(["Black", "White"]),
            "as Black 0 wins, 1 draws, 0 losses, 0.500"
        );
    }

    #[test]
    fn games_repeated_move_for_move_are_counted() {
        use games::liuzhou::{Action, Liuzhou, Rules};
        let game = |moves: Vec<Action>| GameRecord::<Liuzhou> {
            start: Liuzhou::new(Rules::default()),
            moves,
            outcome: Outcome::Draw,
            capped: false,
            ending: "test".into(),
            resigned: None,
            forfeit: None,
        };
        let (a, b) = (Action::place(0), Action::place(7));
        let mut r = MatchResult::default();
        r.add(&game(vec![a, b]), Player::First);
        r.add(&game(vec![a, b]), Player::Second); // other colours: another game
        r.add(&game(vec![b, a]), Player::First);
        assert_eq!(r.repeats(), 0);
        r.add(&game(vec![a, b]), Player::First);
        r.add(&game(vec![a, b]), Player::Second);
        assert_eq!((r.games(), r.repeats()), (5, 2));
    }

    #[test]
    fn a_match_log_writes_the_games_in_order_and_names_the_forfeits() {
        use games::liuzhou::{Liuzhou, Rules};
        let game = |forfeit: Option<Forfeit>| GameRecord::<Liuzhou> {
            start: Liuzhou::new(Rules::default()),
            moves: Vec::new(),
            outcome: Outcome::Win(Player::First),
            capped: false,
            ending: if forfeit.is_some() { FORFEIT } else { "test" }.into(),
            resigned: None,
            forfeit,
        };
        let forfeit = Forfeit {
            player: Player::Second,
            agent: "gtp".into(),
            reason: "answered `z9`".into(),
        };
        let (first, second) = (game(None), game(Some(forfeit)));
        let path = std::env::temp_dir().join(format!("match-log-{}.txt", std::process::id()));
        let sides = ["Black", "White"];
        let log = MatchLog::new(["a[black]", "b[white]"], sides, 100, Some(&path)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "",
            "written at once"
        );
        // Game 2 ends first; A plays Second in it, so B is the first player and forfeits.
        log.add(1, &second, Player::Second).unwrap();
        log.add(0, &first, Player::First).unwrap();
        let expected = [
            first.record_text(["a[black]", "b[white]"], sides, 100),
            second.record_text(["b[white]", "a[black]"], sides, 100),
        ]
        .join("\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        assert!(
            expected.contains("White forfeited: answered `z9`"),
            "{expected}"
        );
        assert_eq!(
            log.forfeits(),
            ["game 2: a[black] (White) forfeited: gtp: answered `z9`"]
        );
        std::fs::remove_file(&path).ok();
        let nowhere = std::path::Path::new("/no/such/dir/games.txt");
        assert!(MatchLog::new(["a", "b"], sides, 100, Some(nowhere)).is_err());
    }

    #[test]
    fn an_agent_label_names_the_search_and_where_the_agent_came_from() {
        let label = |text: &str| agent_label(&AgentSpec::parse(text).unwrap(), "1");
        assert_eq!(label("random"), "random[1]");
        assert_eq!(label("mcts:visits=50"), "mcts(50 visits)[1]");
        assert_eq!(
            label("net:model=m.onnx,time=2,search=gumbel"),
            "net(m.onnx, 2 s, gumbel)[1]"
        );
    }
}
