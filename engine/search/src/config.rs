//! Search settings. Every field is documented; the defaults suit match play.

use std::time::Duration;

/// How the search selects, explores and stores. `Default` is for match play; self-play turns on
/// root noise with [`SearchConfig::with_noise`].
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// Exploration constant of PUCT: weight of `prior · sqrt(N_parent) / (1 + N_child)`.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's mean less this.
    pub fpu_reduction: f32,
    /// Each visit in flight counts as a loss of this size for the player choosing it.
    pub virtual_loss: f32,
    /// Dirichlet concentration of the root noise.
    pub dirichlet_alpha: f32,
    /// Weight of the root noise in the root priors; 0 turns it off (match play).
    pub dirichlet_epsilon: f32,
    /// Arena capacity in nodes (32 bytes each for small actions; memory is only touched as
    /// nodes are used). When full, leaves are evaluated but no longer expanded.
    pub max_nodes: usize,
    /// Entries of the cache of network results keyed by position hash; 0 turns it off.
    pub cache_entries: usize,
    /// Keep the chosen child's subtree as the next root.
    pub reuse_tree: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            c_puct: 1.5,
            fpu_reduction: 0.25,
            virtual_loss: 1.0,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.0,
            max_nodes: 1 << 22,
            cache_entries: 1 << 16,
            reuse_tree: true,
        }
    }
}

impl SearchConfig {
    /// Root noise on, as in self-play.
    pub fn with_noise(mut self, alpha: f32, epsilon: f32) -> Self {
        self.dirichlet_alpha = alpha;
        self.dirichlet_epsilon = epsilon;
        self
    }
}

/// When one search stops: after `visits` new playouts, after `time`, whichever comes first.
/// At least one must be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Limit {
    pub visits: Option<u64>,
    pub time: Option<Duration>,
}

impl Limit {
    pub fn visits(n: u64) -> Self {
        Limit {
            visits: Some(n),
            time: None,
        }
    }

    pub fn time(t: Duration) -> Self {
        Limit {
            visits: None,
            time: Some(t),
        }
    }
}

/// How the threads of one search reach the evaluator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Threads descending in the one tree.
    pub threads: usize,
    /// Leaves each thread gathers (with virtual loss) before evaluating them together; capped
    /// by the evaluator's batch size.
    pub leaves_per_thread: usize,
    /// Combine the leaves of all threads into the evaluator's fixed-size batch (through a
    /// [`crate::Batcher`]) instead of each thread calling the evaluator with its own. Right for
    /// a network whose cost is per batch; wrong for cheap per-state evaluators.
    pub combine: bool,
}

impl RunOptions {
    /// One thread filling whole batches itself.
    pub fn single(leaves: usize) -> Self {
        RunOptions {
            threads: 1,
            leaves_per_thread: leaves.max(1),
            combine: false,
        }
    }
}
