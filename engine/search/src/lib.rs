//! Tree-parallel Monte Carlo tree search in the AlphaZero style.
//!
//! - [`tree`]: the node arena; statistics in atomics so that many threads share one tree
//!   without locks, virtual loss keeping their paths apart, values kept per node from the
//!   point of view of the player who acted into it (never flipped per ply).
//! - [`Search`]: one game's tree and root state; PUCT with priors, first-play urgency,
//!   Dirichlet root noise, exact terminal values, tree reuse, a cache of network results.
//! - [`gumbel`]: Gumbel AlphaZero's root (Gumbel-Top-k, sequential halving) and improved
//!   policy, selectable in place of PUCT ([`SearchKind`]).
//! - Batching: [`Search::gather`] / [`LeafBatch::apply`] let the trees of many games fill one
//!   batch (self-play); [`Batcher`] combines the leaves of many threads (match play).
//! - [`tactics`]: each game's defaults for the search ([`Tactics`]: winning actions, the prior
//!   of captures, first-play urgency) and [`Playable`], the bound of generic players.
//! - [`aux`]: a network's ownership, score and win/draw/loss at the root, for analysis.
//! - Agents: [`MctsAgent`] (a network, or random playouts via [`eval::RolloutEvaluator`]).
//!
//! The search sees the network only through [`eval::Evaluator`]: never a tensor.

pub mod agent;
pub mod aux;
pub mod batch;
pub mod bench;
pub mod cache;
pub mod config;
pub mod gumbel;
pub mod noise;
mod search;
pub mod tactics;
pub mod tree;

pub use agent::{MctsAgent, MctsAgentConfig};
pub use aux::{root_aux, RootAux};
pub use batch::{BatchReport, BatchStats, Batcher};
pub use cache::EvalCache;
pub use config::{Limit, RunOptions, SearchConfig, SearchKind};
pub use search::{
    batched_round, ChildInfo, GatherCounts, LeafBatch, Search, SearchError, SearchReport, PV_MAX,
};
pub use tactics::{Playable, Tactics};
