//! The options that choose a session's searcher, and the spec of the one grammar they make.

use players::spec::AgentSpec;

use super::command::{err, UciError};

/// Most of a timed move the `Guard` option may give alpha-beta's check, in percent: the tree
/// search keeps a tenth at least.
pub(super) const MAX_GUARD_PERCENT: u64 = 90;
/// Largest `GuardMargin`, in centipawns (a mate scores beyond it).
pub(super) const MAX_GUARD_MARGIN: u64 = 10_000;
/// `Guard` at start, in percent: with [`DEFAULT_GUARD_MARGIN`], the strongest network player
/// measured against Fairy-Stockfish and alpha-beta (models/xiangqi/README.md, "Strength").
pub(super) const DEFAULT_GUARD_PERCENT: u64 = 80;
/// `GuardMargin` at start, in centipawns.
pub(super) const DEFAULT_GUARD_MARGIN: u64 = 30;

/// Most lines the `MultiPV` option asks for: more than the legal moves of any Xiangqi
/// position, so that every move can be listed.
pub(super) const MAX_MULTI_PV: usize = 128;

/// Visits per move of the tree search when `go` sets no limit of its own.
pub const DEFAULT_VISITS: u64 = 800;

/// The options that choose a session's searcher (`Agent`, `Visits`, `Threads`, `Guard`,
/// `GuardMargin`, `Hash`), turned into a spec of the one grammar by [`SearchOptions::spec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    pub agent: String,
    pub visits: u64,
    pub threads: usize,
    /// Percent of a timed move given to alpha-beta's check (0: none).
    pub guard_percent: u64,
    /// Centipawns.
    pub guard_margin: u64,
    /// Alpha-beta's table, MiB.
    pub hash_mb: usize,
}

impl Default for SearchOptions {
    /// The options at start without flags.
    fn default() -> Self {
        SearchOptions {
            agent: "net".into(),
            visits: DEFAULT_VISITS,
            threads: 1,
            guard_percent: DEFAULT_GUARD_PERCENT,
            guard_margin: DEFAULT_GUARD_MARGIN,
            hash_mb: 64,
        }
    }
}

impl SearchOptions {
    /// The searcher these options ask for: `alphabeta:hash=MiB`, or the tree search (`net`,
    /// its network the `Model` option's, or `mcts`) of `visits` per move (`go` may limit a
    /// search further) on `threads` threads, its timed moves checked by alpha-beta in
    /// `guard_percent` of their time.
    pub fn spec(&self) -> Result<AgentSpec, UciError> {
        let network = match self.agent.as_str() {
            "alphabeta" => return Ok(AgentSpec::Other(format!("alphabeta:hash={}", self.hash_mb))),
            "mcts" => false,
            "net" => true,
            other => {
                return Err(err(
                    "setoption",
                    format!("unknown Agent '{other}' (alphabeta, mcts, net)"),
                ))
            }
        };
        let mut spec = AgentSpec::tree(network, self.visits, self.threads, 1);
        if let (AgentSpec::Mcts(m) | AgentSpec::Net { mcts: m, .. }, true) =
            (&mut spec, self.guard_percent > 0)
        {
            // The guard's share of each move's time: `go` gives the time.
            m.guard = Some(self.guard_percent as f64 / 100.0);
            m.guard_margin = Some(self.guard_margin as i32);
        }
        Ok(spec)
    }
}
