//! Searches that a protocol drives move by move (UCI and UCCI for Xiangqi): limits per move
//! (depth, nodes, a time, or open-ended until stopped), a stop flag, progress reports of one or
//! several lines (UCI's `MultiPV`), moves the search must not play, and the game followed from
//! position to position. Alpha-beta, or
//! the engine's tree search whose timed moves the guard checks ([`crate::guard`]), built from
//! a spec by [`build`] (through [`crate::spec::build_driven`]); the time a clock gives a move
//! is [`crate::timing`]'s.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use games::xiangqi::{Move, Xiangqi};
use games::{Agent, Candidate, Encoding, Game, Outcome};
use search::{Limit, MctsAgent};

use crate::alphabeta::xiangqi::{value_score, AlphaBeta, SearchInfo, SearchResult, MATE};
use crate::alphabeta::{SearchLimits, MAX_PLY};
use crate::guard::{Guard, GuardSpec, DEFAULT_MARGIN};
use crate::spec::{build_mcts, AgentSpec, NetLoader};

/// The tree search reports its progress (an `info` line) this often.
const INFO_EVERY: Duration = Duration::from_secs(1);

/// Visits per move of a tree search whose spec names none (only a time).
const DEFAULT_VISITS: u64 = 800;

/// The driven search `spec` names for Xiangqi: `alphabeta[:hash=MiB]` (its other limits are
/// the protocol's), or a tree search (`mcts`, `net`) of the spec's visits and threads whose
/// timed moves alpha-beta checks when the spec has a `guard` (the share of each timed move;
/// no `time` needed: the protocol gives each move its time). `load_net` finds a `net` spec's
/// network.
pub fn build(
    spec: &AgentSpec,
    label: &str,
    seed: u64,
    load_net: NetLoader<'_, Xiangqi>,
) -> anyhow::Result<Box<dyn DrivenSearch>> {
    match spec {
        AgentSpec::Other(text) if text.split(':').next().map(str::trim) == Some("alphabeta") => {
            let (_, hash) = crate::xiangqi::alphabeta_settings(text)?;
            let ab = AlphaBeta::try_new(hash)?;
            Ok(Box::new(AlphaBetaSearcher { ab, lines: 1 }))
        }
        AgentSpec::Mcts(m) | AgentSpec::Net { mcts: m, .. } => {
            let agent = build_mcts(spec, label, seed, load_net)?;
            let tree = Box::new(MctsSearcher {
                agent,
                visits: m.visits.unwrap_or(DEFAULT_VISITS),
                lines: 1,
            });
            Ok(match m.guard {
                None => tree,
                Some(share) => {
                    let margin = m.guard_margin.unwrap_or(DEFAULT_MARGIN);
                    Box::new(GuardedSearcher {
                        tree,
                        guard: Guard::new(margin),
                        spec: GuardSpec { share, margin },
                    })
                }
            })
        }
        _ => anyhow::bail!("{label:?} is not a search a protocol drives (alphabeta, mcts or net)"),
    }
}

/// One line of a progress report: a root move's line (`info.pv`, the move first) and its
/// score, with the depth, nodes and time of the search so far.
#[derive(Clone, Debug)]
pub struct Line {
    pub info: SearchInfo,
    /// Win, draw and loss probabilities for the player to move, where a network's wdl head
    /// gave them; `None` otherwise (a face may derive them from the score).
    pub wdl: Option<[f32; 3]>,
}

impl Line {
    fn plain(info: SearchInfo) -> Line {
        Line { info, wdl: None }
    }
}

/// A search that a protocol drives: alpha-beta, or the engine's tree search (with random
/// playouts or a network).
pub trait DrivenSearch: Send {
    /// Forgets everything learned from the previous game.
    fn new_game(&mut self);
    /// The GUI set up `start` and `moves` after it: a searcher that keeps its tree follows.
    fn follow(&mut self, _start: &Xiangqi, _moves: &[Move]) {}
    /// How many lines each report gives (1 at start): the best `n` root moves, best first,
    /// or all of them where there are fewer.
    fn set_lines(&mut self, n: usize);
    /// Searches `game` within `limits` (until `stop` is set; `infinite`: only then), reporting
    /// progress to `info` (the lines, best first); never answers one of the `banned` moves
    /// (UCCI's `banmoves`).
    fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        infinite: bool,
        banned: &[Move],
        stop: &Arc<AtomicBool>,
        info: &mut dyn FnMut(&[Line]),
    ) -> SearchResult;
}

struct AlphaBetaSearcher {
    ab: AlphaBeta,
    lines: usize,
}

impl DrivenSearch for AlphaBetaSearcher {
    fn new_game(&mut self) {
        self.ab.clear();
    }
    fn set_lines(&mut self, n: usize) {
        self.lines = n.max(1);
    }
    fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        _infinite: bool,
        banned: &[Move],
        stop: &Arc<AtomicBool>,
        info: &mut dyn FnMut(&[Line]),
    ) -> SearchResult {
        self.ab.set_stop_handle(Arc::clone(stop));
        if self.lines > 1 {
            return multi_pv(&mut self.ab, game, limits, banned, self.lines, stop, info);
        }
        self.ab.set_excluded(banned);
        self.ab
            .search(game, limits, |i| info(&[Line::plain(i.clone())]))
    }
}

/// Alpha-beta's best `n` root moves with exact scores, deepening one depth at a time: at each
/// depth the root is searched `n` times, each time without the moves already picked (nor the
/// `banned` ones), so line k is the best move outside lines 1..k and its score is exact. Each
/// of those searches deepens again from depth 1, cheaply: the table keeps what the earlier
/// depths found. A depth is reported once all its lines are complete; `stop`, the time or the
/// nodes ending one midway leave the last complete depth's lines as the answer.
fn multi_pv(
    ab: &mut AlphaBeta,
    game: &Xiangqi,
    limits: SearchLimits,
    banned: &[Move],
    n: usize,
    stop: &Arc<AtomicBool>,
    info: &mut dyn FnMut(&[Line]),
) -> SearchResult {
    let start = Instant::now();
    let deadline = limits.movetime.map(|t| start + t);
    let allowed = game
        .legal_moves()
        .as_slice()
        .iter()
        .filter(|m| !banned.contains(m))
        .count();
    let n = n.min(allowed);
    let mut result = SearchResult {
        best: game
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .find(|m| !banned.contains(m)),
        score: 0,
        depth: 0,
        nodes: 0,
    };
    let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 8);
    let mut nodes = 0;
    'deepen: for depth in 1..=max_depth {
        let mut lines: Vec<Line> = Vec::with_capacity(n);
        let mut excluded = banned.to_vec();
        while lines.len() < n {
            let time_left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let spent = stop.load(Ordering::Relaxed)
                || time_left == Some(Duration::ZERO)
                || limits.nodes.is_some_and(|most| nodes >= most);
            // Depth 1 always completes, so that there is a move to answer.
            if spent && depth > 1 {
                break 'deepen;
            }
            ab.set_excluded(&excluded);
            let mut last = None;
            let found = ab.search(
                game,
                SearchLimits {
                    depth: Some(depth),
                    movetime: time_left.filter(|_| depth > 1),
                    nodes: limits
                        .nodes
                        .filter(|_| depth > 1)
                        .map(|most| most.saturating_sub(nodes)),
                },
                |i| last = Some(i.clone()),
            );
            nodes += found.nodes;
            let (Some(best), Some(mut line)) = (found.best, last) else {
                break 'deepen;
            };
            // A search that found a mate ends short of `depth`, complete; any other that did
            // ran out of time, nodes or was stopped.
            if line.depth < depth && line.mate_in().is_none() && depth > 1 {
                break 'deepen;
            }
            if line.pv.first() != Some(&best) {
                line.pv = vec![best];
            }
            excluded.push(best);
            lines.push(Line::plain(line));
        }
        for line in &mut lines {
            line.info.depth = depth;
            line.info.nodes = nodes;
            line.info.time = start.elapsed();
        }
        let Some(first) = lines.first() else {
            break;
        };
        result.best = first.info.pv.first().copied();
        result.score = first.info.score;
        result.depth = depth;
        info(&lines);
        // The next depth rarely takes less than all the ones before it.
        if deadline.is_some_and(|d| Instant::now() + start.elapsed() > d) {
            break;
        }
    }
    ab.set_excluded(banned);
    result.nodes = nodes;
    result
}

/// A tree search whose timed moves alpha-beta checks in a share of their time (a spec's
/// `guard`; see [`crate::guard`]).
struct GuardedSearcher {
    tree: Box<dyn DrivenSearch>,
    guard: Guard<AlphaBeta>,
    spec: GuardSpec,
}

impl DrivenSearch for GuardedSearcher {
    fn new_game(&mut self) {
        self.tree.new_game();
        self.guard.clear();
    }

    fn follow(&mut self, start: &Xiangqi, moves: &[Move]) {
        self.tree.follow(start, moves);
    }

    fn set_lines(&mut self, n: usize) {
        self.tree.set_lines(n);
    }

    fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        infinite: bool,
        banned: &[Move],
        stop: &Arc<AtomicBool>,
        info: &mut dyn FnMut(&[Line]),
    ) -> SearchResult {
        // Only a move with a time has a share to give; analysis and visit budgets go unchecked.
        let Some(time) = limits.movetime.filter(|_| !infinite) else {
            return self.tree.search(game, limits, infinite, banned, stop, info);
        };
        let start = Instant::now();
        let tree_limits = SearchLimits {
            movetime: Some(self.spec.tree_time(time)),
            ..limits
        };
        let found = self
            .tree
            .search(game, tree_limits, false, banned, stop, info);
        let Some(tree_move) = found.best.filter(|_| !stop.load(Ordering::Relaxed)) else {
            return found;
        };
        self.guard.set_stop_handle(Arc::clone(stop));
        let budget = time.saturating_sub(start.elapsed());
        match self.guard.check(game, tree_move, budget, banned) {
            Some(checked) => {
                // The check weighs one move against the tree's: one line.
                info(&[Line::plain(SearchInfo {
                    depth: checked.depth,
                    score: checked.score,
                    nodes: checked.nodes,
                    time: start.elapsed(),
                    pv: checked.best.into_iter().collect(),
                })]);
                SearchResult {
                    best: checked.best,
                    score: checked.score,
                    depth: checked.depth,
                    nodes: checked.nodes,
                }
            }
            None => found,
        }
    }
}

/// The engine's tree search (random playouts or a network) as a driven search. It keeps its
/// tree from move to move when the positions it is told of follow one game.
struct MctsSearcher {
    agent: MctsAgent<Xiangqi>,
    /// Visits per move when `go` sets no limit.
    visits: u64,
    /// Lines per report.
    lines: usize,
}

impl DrivenSearch for MctsSearcher {
    fn new_game(&mut self) {
        let _ = self.agent.release();
    }

    fn set_lines(&mut self, n: usize) {
        self.lines = n.max(1);
    }

    fn follow(&mut self, start: &Xiangqi, moves: &[Move]) {
        // The agent advances its tree through the moves after its root and ignores the rest.
        let mut s = start.clone();
        for &m in moves {
            let _ = self.agent.observe(&s, m);
            s.play_unchecked(m);
        }
    }

    fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        infinite: bool,
        banned: &[Move],
        stop: &Arc<AtomicBool>,
        info: &mut dyn FnMut(&[Line]),
    ) -> SearchResult {
        const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);
        let limit = if infinite {
            Limit::time(FOREVER)
        } else {
            // A tree search has no depth: it searches `nodes` visits, or for the time given
            // (`movetime` or the clock's share), or else the `Visits` option's number.
            Limit {
                visits: match (limits.nodes, limits.movetime) {
                    (Some(n), _) => Some(n.max(1)),
                    (None, Some(_)) => None,
                    (None, None) => Some(self.visits),
                },
                time: limits.movetime,
            }
        };
        self.agent.set_halt(Some(Arc::clone(stop)));
        let start = Instant::now();
        let deadline = limit.time.map(|t| start + t);
        let mut visits_left = limit.visits;
        // One legal move needs no thought unless the GUI asked to watch one.
        let legal = game.legal_moves();
        if legal.as_slice().len() == 1 && !infinite && banned.is_empty() {
            return SearchResult {
                best: legal.as_slice().first().copied(),
                score: 0,
                depth: 0,
                nodes: 0,
            };
        }
        let mut playouts = 0;
        // The search runs in slices of at most `INFO_EVERY`, one tree throughout, so that a GUI
        // (analysing with `go infinite`, or waiting on a long move) sees its progress.
        let mut analysis = None;
        loop {
            let now = Instant::now();
            let slice = deadline.map_or(INFO_EVERY, |d| {
                d.saturating_duration_since(now).min(INFO_EVERY)
            });
            self.agent.set_limit(Limit {
                visits: visits_left,
                time: Some(slice),
            });
            let Ok(Some(found)) = self.agent.analyse(game, None) else {
                break;
            };
            visits_left = visits_left.map(|v| v.saturating_sub(found.playouts));
            playouts += found.playouts;
            // A proven result is final: more search would only walk its proof again.
            let settled = self
                .agent
                .search()
                .is_some_and(|s| s.proven_result().is_some());
            let done = stop.load(Ordering::Relaxed)
                || visits_left == Some(0)
                || deadline.is_some_and(|d| Instant::now() >= d)
                || settled;
            if !done {
                if let Some(search) = self.agent.search() {
                    let mut lines = self.lines_of(game, &found.candidates, banned, playouts, start);
                    if let Some(first) = lines.first_mut() {
                        // One line is scored as the search's value; several each by its move.
                        if self.lines == 1 {
                            first.info.score = value_score(search.root_value());
                        }
                        info(&lines);
                    }
                }
            }
            analysis = Some(found);
            if done {
                break;
            }
        }
        // The move the search plays (its proof's quickest win where it has one), or with no
        // search the first legal move.
        let chosen = self
            .agent
            .search()
            .filter(|_| analysis.is_some())
            .and_then(|s| s.best_action());
        // A banned choice gives way to the most searched move that is not banned (or, with no
        // tree, the first legal one); its own value is then the score.
        let stand_in = chosen.filter(|m| banned.contains(m)).map(|_| {
            let searched = self
                .agent
                .search()
                .map(|s| s.root_children())
                .unwrap_or_default();
            let child = searched
                .into_iter()
                .filter(|c| !banned.contains(&c.action))
                .max_by_key(|c| c.visits);
            match child {
                Some(c) => (Some(c.action), value_score(c.q as f32)),
                None => (
                    game.legal_moves()
                        .as_slice()
                        .iter()
                        .copied()
                        .find(|m| !banned.contains(m)),
                    0,
                ),
            }
        });
        let best = stand_in.map_or(chosen, |(m, _)| m);
        let mut result = SearchResult {
            best,
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if let (Some(best), Some(_), Some(search)) = (best, &analysis, self.agent.search()) {
            let pv = search.principal_variation(best);
            let mut after = game.clone();
            after.play_unchecked(best);
            result.score = match search.proven_result() {
                _ if stand_in.is_some() => stand_in.map_or(0, |(_, score)| score),
                // A proof to the game's end is a mate (or a rule win) in that many plies, as
                // alpha-beta says it; plies beyond alpha-beta's reach stay a value.
                Some((Outcome::Win(p), plies)) if (plies as usize) < MAX_PLY => {
                    let mate = MATE - plies as i32;
                    if p == game.to_act() {
                        mate
                    } else {
                        -mate
                    }
                }
                _ if after.outcome() == Some(Outcome::Win(game.to_act())) => MATE - 1,
                _ => value_score(search.root_value()),
            };
            result.depth = pv.len() as u32;
            result.nodes = playouts;
            let mut lines = vec![Line::plain(SearchInfo {
                depth: result.depth,
                score: result.score,
                nodes: result.nodes,
                time: start.elapsed(),
                pv,
            })];
            if self.lines > 1 {
                let (own, others): (Vec<_>, Vec<_>) = search
                    .candidates()
                    .into_iter()
                    .partition(|c| c.action == best);
                if let (Some(c), None) = (own.first(), stand_in) {
                    lines[0].info.score = line_score(c);
                }
                let mut more = self.lines_of(game, &others, banned, playouts, start);
                more.truncate(self.lines - 1);
                lines.extend(more);
            }
            lines[0].wdl = self.head_wdl(game, &lines[..1])[0];
            info(&lines);
        }
        result
    }
}

/// A root move's score in a report of several lines: a proven win or loss as a mate in its
/// proof's plies, else its mean value in centipawns.
fn line_score(c: &Candidate<Move>) -> i32 {
    match (c.proven, c.proof_length, c.value) {
        (Some(Outcome::Draw), _, _) => 0,
        (Some(_), Some(plies), Some(v)) if (plies as usize) < MAX_PLY => {
            let mate = MATE - plies as i32;
            if v > 0.0 {
                mate
            } else {
                -mate
            }
        }
        (_, _, v) => value_score(v.unwrap_or(0.0)),
    }
}

impl MctsSearcher {
    /// The lines of the first [`MctsSearcher::lines`] `candidates` (the search's order: most
    /// visited first) that are not `banned`, each scored by its own value: a proven win or
    /// loss as a mate in its proof's plies, else its mean value in centipawns; with the
    /// network's win/draw/loss where it has that head.
    fn lines_of(
        &self,
        game: &Xiangqi,
        candidates: &[Candidate<Move>],
        banned: &[Move],
        playouts: u64,
        start: Instant,
    ) -> Vec<Line> {
        let lines = candidates
            .iter()
            .filter(|c| !banned.contains(&c.action) && c.visits > 0)
            .take(self.lines)
            .map(|c| {
                Line::plain(SearchInfo {
                    depth: c.pv.len() as u32,
                    score: line_score(c),
                    nodes: playouts,
                    time: start.elapsed(),
                    pv: c.pv.clone(),
                })
            })
            .collect::<Vec<_>>();
        let heads = self.head_wdl(game, &lines);
        lines
            .into_iter()
            .zip(heads)
            .map(|(line, wdl)| Line { wdl, ..line })
            .collect()
    }

    /// The network's win, draw and loss for the player to move in `game` after each line's
    /// first move (the position after it evaluated by the wdl head, in one call, and turned to
    /// the mover's view); `None` for every line where the network has no such head, the call
    /// fails, or the move ends the game (its score says how).
    fn head_wdl(&self, game: &Xiangqi, lines: &[Line]) -> Vec<Option<[f32; 3]>> {
        let mut out = vec![None; lines.len()];
        let evaluator = self.agent.evaluator();
        if !evaluator.heads().wdl {
            return out;
        }
        let mut at = Vec::new();
        let mut states = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let Some(&m) = line.info.pv.first() else {
                continue;
            };
            let mut after = game.clone();
            after.play_unchecked(m);
            if after.outcome().is_none() {
                at.push(i);
                states.push(after);
            }
        }
        if states.is_empty() {
            return out;
        }
        let refs: Vec<&Xiangqi> = states.iter().collect();
        let mut policy = vec![0.0; refs.len() * game.shape().policy_size];
        let mut value = vec![0.0; refs.len()];
        let Ok(aux) = evaluator.evaluate_aux(&refs, &mut policy, &mut value) else {
            return out;
        };
        for (k, &i) in at.iter().enumerate() {
            if let Some(logits) = aux.wdl_of(k) {
                let most = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e = logits.map(|l| (l - most).exp());
                let sum: f32 = e.iter().sum();
                // The position after the move is the opponent's to play: its win is our loss.
                out[i] = Some([e[2] / sum, e[1] / sum, e[0] / sum]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::preloaded;

    /// Pure MCTS with `visits` per move, as the `Agent mcts` option builds it.
    fn tree_search(visits: u64) -> MctsAgent<Xiangqi> {
        let spec = AgentSpec::tree(false, visits, 1, 1);
        crate::spec::build_mcts(&spec, "mcts", 1, &preloaded(None)).unwrap()
    }

    #[test]
    fn the_tree_search_follows_the_gui_positions() {
        let mut s = MctsSearcher {
            agent: tree_search(200),
            visits: 200,
            lines: 1,
        };
        let start = Xiangqi::start();
        let stop = Arc::new(AtomicBool::new(false));
        let limits = SearchLimits::default();
        let first = s.search(&start, limits, false, &[], &stop, &mut |_| {});
        let best = first.best.unwrap();
        assert_eq!(first.nodes, 200);
        // The GUI sends the game so far: our move and a reply.
        let mut after = start.clone();
        after.play(best).unwrap();
        let reply = after.parse_action("h9g7").unwrap();
        s.follow(&start, &[best, reply]);
        after.play(reply).unwrap();
        let search = s.agent.search().unwrap();
        assert_eq!(search.state().hash(), after.hash(), "the tree followed");
        // The subtree under the two moves was kept (when the search went there at all).
        let kept = search.root_visits();
        let second = s.search(&after, limits, false, &[], &stop, &mut |_| {});
        assert_eq!(second.nodes, 200);
        assert_eq!(s.agent.search().unwrap().root_visits(), kept + 200);
    }

    #[test]
    fn the_guard_replaces_a_timed_move_that_leaves_material() {
        /// A tree search that always answers one move.
        struct Fixed(Move);
        impl DrivenSearch for Fixed {
            fn new_game(&mut self) {}
            fn set_lines(&mut self, _n: usize) {}
            fn search(
                &mut self,
                _game: &Xiangqi,
                _limits: SearchLimits,
                _infinite: bool,
                _banned: &[Move],
                _stop: &Arc<AtomicBool>,
                _info: &mut dyn FnMut(&[Line]),
            ) -> SearchResult {
                SearchResult {
                    best: Some(self.0),
                    score: 0,
                    depth: 1,
                    nodes: 1,
                }
            }
        }
        // Red's rook takes the free knight on a5 (a0a5); the general's step d0d1 leaves it.
        let game = Xiangqi::from_fen("3aka3/9/9/9/n8/9/9/9/9/R2K5 w - - 0 1").unwrap();
        let step = game.parse_action("d0d1").unwrap();
        let take = game.parse_action("a0a5").unwrap();
        let mut s = GuardedSearcher {
            tree: Box::new(Fixed(step)),
            guard: Guard::new(crate::guard::DEFAULT_MARGIN),
            spec: GuardSpec {
                share: 0.5,
                margin: crate::guard::DEFAULT_MARGIN,
            },
        };
        let stop = Arc::new(AtomicBool::new(false));
        let timed = SearchLimits::movetime(Duration::from_millis(400));
        let mut lines = Vec::new();
        let r = s.search(&game, timed, false, &[], &stop, &mut |l| {
            lines.push(l[0].info.pv.clone())
        });
        assert_eq!(r.best, Some(take));
        assert_eq!(
            lines.last(),
            Some(&vec![take]),
            "the check's move is reported"
        );
        // A banned move is never the check's answer; an untimed search goes unchecked.
        let r = s.search(&game, timed, false, &[take], &stop, &mut |_| {});
        assert_ne!(r.best, Some(take));
        let r = s.search(
            &game,
            SearchLimits::depth(3),
            false,
            &[],
            &stop,
            &mut |_| {},
        );
        assert_eq!(r.best, Some(step));
    }

    #[test]
    fn alpha_beta_lines_are_the_best_moves_in_order_with_their_own_scores() {
        // Red's cannon takes a rook (a2a6 over the pawn on a4), its horse a knight (g5i6;
        // Black's pawn on h6 keeps the knight from taking the horse first); nothing else
        // wins material.
        let game = Xiangqi::from_fen("5k3/9/9/r6pn/6N2/P8/9/C8/9/3K5 w - - 0 1").unwrap();
        let mut s = AlphaBetaSearcher {
            ab: AlphaBeta::new(4),
            lines: 1,
        };
        s.set_lines(3);
        let stop = Arc::new(AtomicBool::new(false));
        let mut reports: Vec<Vec<(u32, i32, Vec<Move>)>> = Vec::new();
        let r = s.search(
            &game,
            SearchLimits::depth(4),
            false,
            &[],
            &stop,
            &mut |lines| {
                reports.push(
                    lines
                        .iter()
                        .map(|l| (l.info.depth, l.info.score, l.info.pv.clone()))
                        .collect(),
                )
            },
        );
        assert_eq!(reports.len(), 4, "one report a depth");
        let rook = game.parse_action("a2a6").unwrap();
        let knight = game.parse_action("g5i6").unwrap();
        for (d, report) in reports.iter().enumerate() {
            assert_eq!(report.len(), 3);
            assert!(report.iter().all(|l| l.0 == d as u32 + 1));
            assert_eq!(
                (report[0].2[0], report[1].2[0]),
                (rook, knight),
                "depth {}",
                d + 1
            );
            assert_ne!(report[2].2[0], rook);
            assert_ne!(report[2].2[0], knight);
            // A rook is worth a knight and about 330 more; the third line wins nothing and
            // gives the pawn on a4 away.
            let (a, b, c) = (report[0].1, report[1].1, report[2].1);
            assert!(a - b > 200 && b - c > 150, "{a} {b} {c}");
        }
        assert_eq!((r.best, r.depth), (Some(rook), 4));
        assert_eq!(r.score, reports[3][0].1);

        // Banned moves make no line: the knight's capture leads.
        let r = s.search(
            &game,
            SearchLimits::depth(3),
            false,
            &[rook],
            &stop,
            &mut |lines| assert!(lines.iter().all(|l| l.info.pv[0] != rook)),
        );
        assert_eq!(r.best, Some(knight));
        // A search stopped before it starts still answers a legal move, from depth 1.
        stop.store(true, Ordering::Relaxed);
        let r = s.search(
            &game,
            SearchLimits::depth(9),
            false,
            &[],
            &stop,
            &mut |_| {},
        );
        assert!(r.best.is_some_and(|m| game.is_legal(m)) && r.depth == 1);
    }

    #[test]
    fn a_proven_tree_search_reports_a_mate_and_its_line() {
        // Red mates in two (b2e2+ e9f9 a1f1#); the tree search proves a mate within a few
        // moves and reports it as a mate, its line ending in the mate.
        let fen = "4k4/9/9/9/9/9/9/1R7/R8/3K5 w - - 0 1";
        let game = Xiangqi::from_fen(fen).unwrap();
        let mut s = MctsSearcher {
            agent: tree_search(20_000),
            visits: 20_000,
            lines: 1,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let mut said = None;
        let r = s.search(
            &game,
            SearchLimits::default(),
            false,
            &[],
            &stop,
            &mut |l| said = Some(l[0].info.clone()),
        );
        let info = said.unwrap();
        let mate = info.mate_in().expect("a mate score");
        assert!((2..=6).contains(&mate), "mate in {mate}");
        assert_eq!(r.score, info.score);
        let mut end = game.clone();
        for &m in &info.pv {
            end.play(m).unwrap();
        }
        assert_eq!(
            end.outcome(),
            Some(Outcome::Win(games::Player::First)),
            "{:?}",
            info.pv
        );
        assert_eq!(info.pv.len() as i32, 2 * mate - 1);
    }
}
