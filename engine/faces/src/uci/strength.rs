//! The strength options (`UCI_LimitStrength` with `UCI_Elo`, and `Skill Level`): the session
//! plays one of the named Xiangqi levels of `players::levels`, built from the level's spec by
//! the one builder every face uses, so that it plays as the levels' ladder rated it (its depth,
//! visits and temperature included). A level answers each `go` with one search of its own
//! size, which a clock can only shorten, and reports one line. An alpha-beta level stops at
//! `stop` and keeps to `banmoves` at the root; a tree-search level (a few dozen visits) ends
//! its search first, and a banned choice of its gives way to the first allowed move.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use eval::Evaluator;
use games::xiangqi::{Move, Xiangqi};
use games::{Agent, Game};
use players::alphabeta::xiangqi::{value_score, AlphaBeta, SearchInfo, SearchResult};
use players::alphabeta::SearchLimits;
use players::driven::{DrivenSearch, Line};
use players::levels::{self, Level};
use players::spec::{build, preloaded, AgentSpec};
use players::xiangqi::alphabeta_settings;

use super::command::{err, UciError};

/// The game whose levels the options choose among.
const GAME: &str = "xiangqi";
/// The top of `Skill Level`: full strength, no level.
pub(super) const FULL_SKILL: u32 = 20;

/// What the strength options say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Strength {
    pub limit: bool,
    pub elo: u32,
    pub skill: u32,
}

impl Default for Strength {
    /// Full strength; `UCI_Elo` at the strongest level's.
    fn default() -> Self {
        Strength {
            limit: false,
            elo: elo_range().1,
            skill: FULL_SKILL,
        }
    }
}

/// The Elo range `UCI_Elo` offers: the weakest and the strongest level's, whole.
pub(super) fn elo_range() -> (u32, u32) {
    let (lo, hi) = levels::elo_range(GAME).unwrap_or((0.0, 0.0));
    (lo.round().max(0.0) as u32, hi.round().max(0.0) as u32)
}

impl Strength {
    /// The level these options choose: `UCI_LimitStrength` picks the level nearest `UCI_Elo`;
    /// else a `Skill Level` below 20 picks from the weakest (0) up, the levels spread evenly
    /// over 0 … 19; `None` at full strength.
    pub fn level(&self) -> Option<&'static Level> {
        let all = levels::levels(GAME);
        if self.limit {
            return levels::for_elo(GAME, self.elo as f64);
        }
        if self.skill >= FULL_SKILL || all.is_empty() {
            return None;
        }
        all.get(self.skill as usize * all.len() / FULL_SKILL as usize)
    }
}

/// A level as a driven search.
pub(super) enum LevelSearch {
    /// Alpha-beta within the level's own limits.
    AlphaBeta {
        ab: Box<AlphaBeta>,
        own: SearchLimits,
    },
    /// Any other player, as an agent.
    Agent(Box<dyn Agent<Xiangqi>>),
}

impl LevelSearch {
    /// The player of `level`; a level that plays the network takes `net`, the `Model`
    /// option's.
    pub fn build(
        level: &Level,
        net: Option<Arc<dyn Evaluator<Xiangqi>>>,
    ) -> Result<LevelSearch, UciError> {
        let refuse = |reason: String| {
            err(
                "setoption",
                format!("level {} ({}): {reason}", level.key, level.spec),
            )
        };
        let spec = AgentSpec::parse(&level.spec).map_err(|e| refuse(e.to_string()))?;
        if let AgentSpec::Other(text) = &spec {
            if text.starts_with("alphabeta") {
                let (own, hash) = alphabeta_settings(text).map_err(|e| refuse(e.to_string()))?;
                let ab = Box::new(AlphaBeta::try_new(hash).map_err(|e| refuse(e.to_string()))?);
                return Ok(LevelSearch::AlphaBeta { ab, own });
            }
        }
        if matches!(spec, AgentSpec::Net { .. }) && net.is_none() {
            return Err(refuse("it plays the network: set the Model option".into()));
        }
        let agent =
            build(&spec, &level.key, 1, &preloaded(net)).map_err(|e| refuse(format!("{e:#}")))?;
        Ok(LevelSearch::Agent(agent))
    }
}

impl DrivenSearch for LevelSearch {
    fn new_game(&mut self) {
        match self {
            LevelSearch::AlphaBeta { ab, .. } => ab.clear(),
            LevelSearch::Agent(agent) => {
                let _ = agent.new_game(&Xiangqi::start());
            }
        }
    }

    fn set_lines(&mut self, _n: usize) {}

    fn search(
        &mut self,
        game: &Xiangqi,
        limits: SearchLimits,
        _infinite: bool,
        banned: &[Move],
        stop: &Arc<AtomicBool>,
        info: &mut dyn FnMut(&[Line]),
    ) -> SearchResult {
        let agent = match self {
            LevelSearch::AlphaBeta { ab, own } => {
                let movetime = match (own.movetime, limits.movetime) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                ab.set_stop_handle(Arc::clone(stop));
                ab.set_excluded(banned);
                let limits = SearchLimits { movetime, ..*own };
                return ab.search(game, limits, |i| {
                    info(&[Line {
                        info: i.clone(),
                        wdl: None,
                    }])
                });
            }
            LevelSearch::Agent(agent) => agent,
        };
        let start = Instant::now();
        let allowed = |m: &Move| !banned.contains(m);
        let first_allowed = game.legal_moves().as_slice().iter().copied().find(allowed);
        let mut result = SearchResult {
            best: first_allowed,
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if game.outcome().is_some() || first_allowed.is_none() {
            return result;
        }
        agent.set_move_time(limits.movetime);
        // A level's choice that is banned gives way to the first allowed move.
        if let Ok(m) = agent.select_action(game) {
            if allowed(&m) {
                result.best = Some(m);
            }
        }
        let account = agent.explain();
        let Some(best) = result.best else {
            return result;
        };
        let (pv, value, nodes) = match account {
            Some(e) if e.pv.first() == Some(&best) => {
                (e.pv, e.value, e.nodes.or(e.visits).unwrap_or(0))
            }
            _ => (vec![best], None, 0),
        };
        result.score = value.map_or(0, value_score);
        result.depth = pv.len() as u32;
        result.nodes = nodes;
        info(&[Line {
            info: SearchInfo {
                depth: result.depth,
                score: result.score,
                nodes,
                time: start.elapsed(),
                pv,
            },
            wdl: None,
        }]);
        result
    }
}
