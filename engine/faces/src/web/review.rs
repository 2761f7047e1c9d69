//! Game review: a record (pasted, uploaded, or a game of this server) replayed position by
//! position, and the engine's view of each position: its evaluation for the first player, the
//! action it prefers with its line, and for Go the territory and score lead where the network
//! has those heads. The analysis runs in the background, one position at a time, each taking
//! one of the server's thinking slots, and can be stopped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eval::Evaluator;
use games::{Agent, GameRecord, Outcome, Player, RecordMeta};
use players::spec::{build_mcts, preloaded, AgentSpec};
use search::Limit;
use serde::Serialize;

use super::view::{player_key, ActionView, BoardView, Record, WebGame};

/// A loss (on the −1..=1 scale, from the mover's view) from which a played action is marked as
/// a mistake: a tenth of the expected score.
pub const MISTAKE_LOSS: f32 = 0.2;

/// Why a record could not be read: the line (from 1) where the reader found the fault, when it
/// knows one, and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct RecordRefusal {
    pub line: Option<usize>,
    pub reason: String,
}

impl RecordRefusal {
    pub fn new(line: Option<usize>, reason: impl Into<String>) -> RecordRefusal {
        RecordRefusal {
            line,
            reason: reason.into(),
        }
    }
}

/// The line (from 1) of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// One action of the reviewed game, with the points it touches and the players' notation.
#[derive(Clone, Debug, Serialize)]
pub struct MoveView {
    #[serde(flatten)]
    pub action: ActionView,
    /// As players write it, where that differs from `action` (Xiangqi's Chinese notation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
}

/// One position of the reviewed game: its cells and facts, and the action played from it.
#[derive(Clone, Debug, Serialize)]
pub struct PositionView {
    pub position: String,
    /// `first` or `second`; null once the game is over.
    pub to_act: Option<&'static str>,
    pub cells: Vec<Vec<String>>,
    pub info: serde_json::Value,
    /// The action played from here (none after the last).
    pub played: Option<MoveView>,
}

/// What the engine found in one position.
#[derive(Clone, Debug, Serialize)]
pub struct PointView {
    /// Expected result for the first player, −1..=1 (the game's result where it is over).
    pub value_first: f32,
    /// Playouts behind it (0 for a finished position).
    pub visits: u64,
    /// The action the engine prefers, and the line it expects from it (players' notation).
    pub best: Option<MoveView>,
    pub line: Vec<String>,
    /// Go: each point's expected owner from the first player's view (−1..=1), rows top first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ownership: Option<Vec<Vec<f32>>>,
    /// Go: the first player's expected lead in points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_lead: Option<f32>,
}

/// A game of any kind under review, as the handlers and the background analysis use it.
pub trait Reviewable: Send + Sync {
    /// Positions: one more than the actions.
    fn positions_count(&self) -> usize;
    /// The board's geometry (names, size) and the start's cells.
    fn board(&self) -> BoardView;
    fn positions(&self) -> Vec<PositionView>;
    /// The mover of the action played from position `i`.
    fn mover(&self, i: usize) -> Option<Player>;
    /// The game's result as the record or the rules give it, and why.
    fn result(&self) -> (Option<Outcome>, Option<String>);
    /// Searches position `i` with `visits` playouts (blocking).
    fn analyse(&self, i: usize, visits: u64, seed: u64) -> Result<PointView, String>;
    /// The search that analyses, in words.
    fn engine(&self) -> &'static str;
    /// The game as a record file of its format.
    fn record(&self) -> Record;
}

/// A game of `G` under review: the record and the network the analysis uses, if one fits.
pub struct ReviewOf<G: WebGame> {
    pub record: GameRecord<G>,
    pub net: Option<Arc<dyn Evaluator<G>>>,
    /// Every position, the start first.
    states: Vec<G>,
}

impl<G: WebGame> ReviewOf<G> {
    /// The review of `record`; `net` is used where it fits the record's variant.
    pub fn new(record: GameRecord<G>, net: Option<Arc<dyn Evaluator<G>>>, start: &G) -> Self {
        let net = net.filter(|_| record.start.network_fits(start));
        let mut states = Vec::with_capacity(record.actions.len() + 1);
        let mut s = record.start.clone();
        states.push(s.clone());
        for &a in &record.actions {
            s.play_unchecked(a);
            states.push(s.clone());
        }
        ReviewOf {
            record,
            net,
            states,
        }
    }

    fn move_view(state: &G, action: G::Action) -> MoveView {
        let (from, to) = state.action_points(action);
        MoveView {
            action: ActionView {
                action: state.format_action(action),
                from,
                to,
            },
            display: state.display_action(action),
        }
    }
}

impl<G: WebGame> Reviewable for ReviewOf<G> {
    fn positions_count(&self) -> usize {
        self.states.len()
    }

    fn board(&self) -> BoardView {
        self.record.start.board()
    }

    fn positions(&self) -> Vec<PositionView> {
        self.states
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let board = s.board();
                PositionView {
                    position: s.to_text(),
                    to_act: s.outcome().is_none().then(|| player_key(s.to_act())),
                    cells: board.cells,
                    info: board.info,
                    played: self.record.actions.get(i).map(|&a| Self::move_view(s, a)),
                }
            })
            .collect()
    }

    fn mover(&self, i: usize) -> Option<Player> {
        (i + 1 < self.states.len()).then(|| self.states[i].to_act())
    }

    fn result(&self) -> (Option<Outcome>, Option<String>) {
        let last = self.states.last().expect("a review has its start");
        match last.outcome() {
            Some(o) => (Some(o), last.end_reason()),
            None => (self.record.result, self.record.result_text.clone()),
        }
    }

    fn analyse(&self, i: usize, visits: u64, seed: u64) -> Result<PointView, String> {
        let state = &self.states[i];
        if let Some(o) = state.outcome() {
            return Ok(PointView {
                value_first: o.value_for(Player::First),
                visits: 0,
                best: None,
                line: Vec::new(),
                ownership: None,
                score_lead: None,
            });
        }
        let spec = AgentSpec::tree(self.net.is_some(), visits, 1, seed);
        let mut mcts = build_mcts(&spec, "review", seed, &preloaded(self.net.clone()))
            .map_err(|e| format!("{e:#}"))?;
        mcts.set_limit(Limit {
            visits: Some(visits),
            time: None,
        });
        mcts.new_game(state).map_err(|e| e.to_string())?;
        let found = mcts
            .analyse(state, None)
            .map_err(|e| e.to_string())?
            .ok_or("the search gave no analysis")?;
        let sign = if state.to_act() == Player::First {
            1.0
        } else {
            -1.0
        };
        let best = found.candidates.first();
        let mut line = Vec::new();
        if let Some(c) = best {
            let mut s = state.clone();
            for &a in &c.pv {
                if !s.is_legal(a) {
                    break;
                }
                line.push(s.display_action(a).unwrap_or_else(|| s.format_action(a)));
                s.play_unchecked(a);
            }
        }
        let (mut ownership, mut score_lead) = (None, None);
        if let Some(net) = &self.net {
            let children: Vec<_> = found
                .candidates
                .iter()
                .map(|c| (c.action, c.visits))
                .collect();
            if let Ok(Some(aux)) = search::root_aux(net.as_ref(), state, &children) {
                ownership = aux
                    .ownership
                    .and_then(|o| state.ownership_grid(&o))
                    .map(|g| {
                        g.into_iter()
                            .map(|row| row.into_iter().map(|x| sign * x).collect())
                            .collect()
                    });
                score_lead = aux.score.map(|s| sign * s);
            }
        }
        Ok(PointView {
            value_first: sign * found.value,
            visits: found.playouts,
            best: best.map(|c| Self::move_view(state, c.action)),
            line,
            ownership,
            score_lead,
        })
    }

    fn engine(&self) -> &'static str {
        if self.net.is_some() {
            "net"
        } else {
            "mcts"
        }
    }

    fn record(&self) -> Record {
        let (result, ending) = self.result();
        let record = GameRecord {
            start: self.record.start.clone(),
            actions: self.record.actions.clone(),
            result,
            result_text: None,
        };
        let meta = RecordMeta {
            names: ["", ""],
            ending: ending.as_deref(),
            resigned: None,
        };
        Record {
            filename: format!("{}-review.{}", G::NAME, G::EXTENSION),
            mime: G::MIME,
            text: G::write_record(&record, &meta),
        }
    }
}

/// Where a review's analysis stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Idle,
    /// Waiting for an analysis slot.
    Queued,
    Running,
    Done,
    Stopped,
    Failed,
}

/// The part of a review that the analysis changes.
#[derive(Debug)]
pub struct Progress {
    pub status: Status,
    pub visits: u64,
    /// One per position, filled as the analysis goes.
    pub points: Vec<Option<PointView>>,
    pub error: Option<String>,
}

/// One review: its game, and the analysis's progress.
pub struct Review {
    pub game: Box<dyn Reviewable>,
    /// The positions as the page draws them, made once.
    positions: Vec<PositionView>,
    board: BoardView,
    pub name: &'static str,
    pub title: &'static str,
    pub sides: [&'static str; 2],
    pub progress: Mutex<Progress>,
    /// Set to end a running analysis after the position it is on.
    // Written by the handlers and the store, read by the analysis task between positions.
    pub stop: AtomicBool,
    /// The number of the latest analysis started; an older one still waiting for its slot
    /// (stopped, then superseded) ends without a word when it sees a newer number.
    // Only ever increases.
    pub run: AtomicU64,
}

/// The mover's loss for each action (`None` until both positions around it are analysed).
fn losses(game: &dyn Reviewable, points: &[Option<PointView>]) -> Vec<Option<f32>> {
    (0..game.positions_count().saturating_sub(1))
        .map(|i| {
            let (a, b) = (points[i].as_ref()?, points[i + 1].as_ref()?);
            let sign = if game.mover(i)? == Player::First {
                1.0
            } else {
                -1.0
            };
            Some(sign * (a.value_first - b.value_first))
        })
        .collect()
}

/// What `GET /api/reviews/{id}` answers: the game, and [`ProgressView`].
#[derive(Serialize)]
pub struct ReviewView {
    pub id: String,
    pub game: &'static str,
    pub title: &'static str,
    pub sides: [&'static str; 2],
    pub board: BoardView,
    pub positions: Vec<PositionView>,
    /// `first`, `second`, `draw`, or null when the record gives no result.
    pub result: Option<&'static str>,
    pub ending: Option<String>,
    /// `net` or `mcts`.
    pub engine: &'static str,
    #[serde(flatten)]
    pub progress: ProgressView,
}

/// Where the analysis stands (`GET /api/reviews/{id}/progress`, and part of the review).
#[derive(Serialize)]
pub struct ProgressView {
    pub status: Status,
    pub visits: u64,
    /// Positions analysed so far, of `positions.len()`.
    pub analysed: usize,
    pub points: Vec<Option<PointView>>,
    /// Per action: how much the mover's expected result fell (−1..=1 scale), once known.
    pub losses: Vec<Option<f32>>,
    /// Actions whose loss is at least [`MISTAKE_LOSS`], biggest first.
    pub mistakes: Vec<usize>,
    pub error: Option<String>,
}

impl Review {
    pub fn new(
        game: Box<dyn Reviewable>,
        meta: (&'static str, &'static str, [&'static str; 2]),
    ) -> Self {
        let n = game.positions_count();
        Review {
            positions: game.positions(),
            board: game.board(),
            game,
            name: meta.0,
            title: meta.1,
            sides: meta.2,
            progress: Mutex::new(Progress {
                status: Status::Idle,
                visits: 0,
                points: vec![None; n],
                error: None,
            }),
            stop: AtomicBool::new(false),
            run: AtomicU64::new(0),
        }
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        // Every change under this lock is one assignment: a poisoned lock is still whole.
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn view(&self, id: &str) -> ReviewView {
        let (result, ending) = self.game.result();
        ReviewView {
            id: id.to_string(),
            game: self.name,
            title: self.title,
            sides: self.sides,
            board: self.board.clone(),
            positions: self.positions.clone(),
            result: result.map(|o| match o {
                Outcome::Win(p) => player_key(p),
                Outcome::Draw => "draw",
            }),
            ending,
            engine: self.game.engine(),
            progress: self.progress_view(),
        }
    }

    pub fn progress_view(&self) -> ProgressView {
        let p = self.lock();
        let losses = losses(self.game.as_ref(), &p.points);
        let mut mistakes: Vec<usize> = (0..losses.len())
            .filter(|&i| losses[i].is_some_and(|l| l >= MISTAKE_LOSS))
            .collect();
        mistakes.sort_by(|&a, &b| {
            losses[b]
                .partial_cmp(&losses[a])
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        ProgressView {
            status: p.status,
            visits: p.visits,
            analysed: p.points.iter().filter(|x| x.is_some()).count(),
            points: p.points.clone(),
            losses,
            mistakes,
            error: p.error.clone(),
        }
    }
}

/// The reviews kept: bounded in number (the least recently used makes room, its analysis
/// stopped), and dropped after `idle` untouched.
pub struct Reviews {
    // A std mutex: held only for map operations, never across an await.
    slots: Mutex<HashMap<String, (Arc<Review>, Instant)>>,
    max: usize,
    idle: Duration,
}

impl Reviews {
    pub fn new(max: usize, idle: Duration) -> Reviews {
        Reviews {
            slots: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<Review>, Instant)>> {
        // One map call per operation: a poisoned lock is still whole.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, id: String, review: Arc<Review>) {
        let mut slots = self.lock();
        let now = Instant::now();
        let idle = self.idle;
        slots.retain(|_, (r, used)| {
            let keep = now.duration_since(*used) < idle;
            if !keep {
                r.stop.store(true, Ordering::SeqCst);
            }
            keep
        });
        if slots.len() >= self.max {
            if let Some(k) = slots
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            {
                if let Some((r, _)) = slots.remove(&k) {
                    r.stop.store(true, Ordering::SeqCst);
                }
            }
        }
        slots.insert(id, (review, now));
    }

    pub fn get(&self, id: &str) -> Option<Arc<Review>> {
        let mut slots = self.lock();
        let (review, used) = slots.get_mut(id)?;
        if used.elapsed() >= self.idle {
            review.stop.store(true, Ordering::SeqCst);
            slots.remove(id);
            return None;
        }
        *used = Instant::now();
        Some(review.clone())
    }

    pub fn remove(&self, id: &str) -> bool {
        match self.lock().remove(id) {
            Some((r, _)) => {
                r.stop.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// Reviews kept.
    pub fn count(&self) -> usize {
        self.lock().len()
    }
}
