//! Search settings. Every field is documented; the defaults suit match play.

use std::time::Duration;

use eval::InvalidSetting;

/// How the root spends its visits and what a search recommends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// PUCT everywhere (AlphaZero): the most visited action is the choice, the visit
    /// distribution the policy target.
    #[default]
    Puct,
    /// Gumbel AlphaZero: Gumbel-Top-k sampling and sequential halving at the root, the
    /// deterministic improved-policy rule below it; the improved policy is the policy target
    /// (see [`crate::gumbel`]).
    Gumbel,
}

impl SearchKind {
    pub const NAMES: [&'static str; 2] = ["puct", "gumbel"];

    pub fn name(self) -> &'static str {
        match self {
            SearchKind::Puct => "puct",
            SearchKind::Gumbel => "gumbel",
        }
    }
}

impl std::fmt::Display for SearchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SearchKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "puct" => Ok(SearchKind::Puct),
            "gumbel" => Ok(SearchKind::Gumbel),
            _ => Err(format!("{s:?} is not a search (puct or gumbel)")),
        }
    }
}

/// How the search selects, explores and stores. `Default` is for match play; self-play turns on
/// root noise with [`SearchConfig::with_noise`].
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// PUCT, or Gumbel at the root with the improved-policy rule below it.
    pub search: SearchKind,
    /// Gumbel: actions the root samples (Gumbel-Top-k) before sequential halving; all legal
    /// actions when there are fewer.
    pub gumbel_m: u32,
    /// Gumbel: `c_visit` of σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of σ.
    pub gumbel_c_scale: f32,
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
    /// At each expansion, ask the game for an action that wins at once
    /// ([`crate::Tactics::winning_action`]): a node that has one is proven won on the spot, and
    /// the move that walks into a one-move loss proven lost, whatever the priors say.
    pub decisive: bool,
    /// Share of each expanded node's prior moved to its captures, in proportion to what they
    /// take ([`crate::Tactics::capture_gain`]); 0 leaves the network's prior as it is.
    pub capture_prior: f32,
    /// Weight of a child's implicit minimax value (the minimax of the evaluations below it) in
    /// its PUCT value, beside the mean of its playouts; 0 keeps the mean alone.
    pub minimax_weight: f32,
    /// What a draw reached in the tree costs the player to act at the root: it backs up as
    /// −contempt for that player (and +contempt for the other) in place of 0, so that an
    /// agent expecting to be the stronger plays on rather than into a draw. Keep 0 where
    /// one tree serves both sides (self-play), whose values must stay one game's.
    pub contempt: f32,
    /// Forced playouts (KataGo's, for PUCT self-play): at the root, a child with fewer than
    /// sqrt(k · prior · N) visits is visited next, so noise-raised moves get a real look; the
    /// target then prunes those visits back ([`crate::Search::pruned_visit_distribution`]).
    /// This is k; 0 turns it off (match play, Gumbel).
    pub forced_playouts: f32,
    /// Gather the network's score (where it has a score head, [`eval::Heads::score`]) at
    /// every leaf, and a finished game's margin at every game's end, and back up their sum and
    /// sum of squares per node beside the value: each move's mean score and spread for
    /// analysis ([`crate::Search::candidates`]). Off, or without a score head, the search
    /// calls the evaluator's plain `evaluate` and keeps no scores. [`crate::MctsAgent`] turns
    /// it on (its analyses report scores); self-play leaves it off.
    pub track_scores: bool,
    /// Weight w of the score utility (KataGo's static score utility): PUCT values a child at
    /// q + w · 2/π · atan(s / (2 · √(board area))), s its mean score for the player choosing,
    /// so that among moves of equal value the larger lead is preferred, a bounded bonus that
    /// a sure win cannot trade for points. KataGo's constants: scale 2 · √area, weight 0.1
    /// (`staticScoreUtilityFactor`) beside the dynamic part below. 0 (the default) turns it
    /// off; more than 0 gathers scores as `track_scores` does.
    pub score_utility: f32,
    /// Weight w_d of the dynamic score utility (KataGo's): PUCT adds
    /// w_d · 2/π · atan((s − c) / (2 · √(board area))), c the score the root expects (drawn a
    /// fifth of the way towards 0), from the chooser's view: a bounded wish to do better than
    /// expected that keeps working when the game is already won or lost by far, where the
    /// static term flattens out. KataGo weighs it 0.3 (`dynamicScoreUtilityFactor`). 0 (the
    /// default) turns it off; more than 0 gathers scores as `track_scores` does.
    pub dynamic_score_utility: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            search: SearchKind::Puct,
            gumbel_m: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            virtual_loss: 1.0,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.0,
            max_nodes: 1 << 22,
            cache_entries: 1 << 15,
            reuse_tree: true,
            decisive: false,
            capture_prior: 0.0,
            minimax_weight: 0.0,
            contempt: 0.0,
            forced_playouts: 0.0,
            track_scores: false,
            score_utility: 0.0,
            dynamic_score_utility: 0.0,
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

    /// Range checks for settings read from a config (keys named as in the `selfplay` section).
    /// The search trusts its config: a NaN or infinite constant would silently poison every
    /// PUCT score, so it is refused here.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let c = self.c_puct;
        InvalidSetting::check(c.is_finite() && c > 0.0, "c_puct", c, "a finite number > 0")?;
        let f = self.fpu_reduction;
        InvalidSetting::check(f.is_finite(), "fpu_reduction", f, "a finite number")?;
        let v = self.virtual_loss;
        InvalidSetting::check(
            v.is_finite() && v >= 0.0,
            "virtual_loss",
            v,
            "a finite number ≥ 0",
        )?;
        let a = self.dirichlet_alpha;
        InvalidSetting::check(
            a.is_finite() && a > 0.0,
            "dirichlet_alpha",
            a,
            "a finite number > 0",
        )?;
        let e = self.dirichlet_epsilon;
        InvalidSetting::check((0.0..=1.0).contains(&e), "dirichlet_epsilon", e, "0 to 1")?;
        let m = self.gumbel_m;
        InvalidSetting::check(
            (1..=u32::from(u16::MAX)).contains(&m),
            "gumbel_m",
            m,
            "1 to 65535",
        )?;
        let cv = self.gumbel_c_visit;
        InvalidSetting::check(
            cv.is_finite() && cv >= 0.0,
            "gumbel_c_visit",
            cv,
            "a finite number ≥ 0",
        )?;
        let cs = self.gumbel_c_scale;
        InvalidSetting::check(
            cs.is_finite() && cs > 0.0,
            "gumbel_c_scale",
            cs,
            "a finite number > 0",
        )?;
        let k = self.forced_playouts;
        InvalidSetting::check(
            k.is_finite() && (0.0..=100.0).contains(&k),
            "forced_playouts",
            k,
            "0 to 100",
        )?;
        for (key, w) in [
            ("score_utility", self.score_utility),
            ("dynamic_score_utility", self.dynamic_score_utility),
        ] {
            InvalidSetting::check(
                w.is_finite() && (0.0..=1.0).contains(&w),
                key,
                w,
                "0 (off) to 1",
            )?;
        }
        let cp = self.capture_prior;
        InvalidSetting::check((0.0..=1.0).contains(&cp), "capture_prior", cp, "0 to 1")?;
        // The tree indexes nodes with u32.
        InvalidSetting::check(
            (1..=u32::MAX as usize).contains(&self.max_nodes),
            "max_nodes",
            self.max_nodes,
            format_args!("1 to {}", u32::MAX),
        )
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
    /// With `combine`: how long a batch that is not yet full may wait for more leaves before
    /// it is evaluated as it is.
    pub batch_wait: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions::single(1)
    }
}

impl RunOptions {
    /// One thread filling whole batches itself.
    pub fn single(leaves: usize) -> Self {
        RunOptions {
            threads: 1,
            leaves_per_thread: leaves.max(1),
            combine: false,
            batch_wait: Duration::from_micros(500),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_bad_constants_name_their_key() {
        assert_eq!(SearchConfig::default().validate(), Ok(()));
        let bad = |c: SearchConfig| c.validate().unwrap_err();
        let d = SearchConfig::default;
        let e = bad(SearchConfig {
            c_puct: f32::INFINITY,
            ..d()
        });
        assert_eq!((e.key, e.value.as_str()), ("c_puct", "inf"));
        assert_eq!(
            e.to_string(),
            "`c_puct` is inf; allowed: a finite number > 0"
        );
        assert_eq!(bad(d().with_noise(0.0, 0.25)).key, "dirichlet_alpha");
        assert_eq!(bad(d().with_noise(0.3, 2.0)).key, "dirichlet_epsilon");
        assert_eq!(bad(d().with_noise(0.3, f32::NAN)).key, "dirichlet_epsilon");
        let e = bad(SearchConfig {
            max_nodes: 0,
            ..d()
        });
        assert_eq!(e.key, "max_nodes");
        assert!(e.allowed.contains("4294967295"), "{e}");
        for (c, key) in [
            (SearchConfig { gumbel_m: 0, ..d() }, "gumbel_m"),
            (
                SearchConfig {
                    gumbel_c_visit: -1.0,
                    ..d()
                },
                "gumbel_c_visit",
            ),
            (
                SearchConfig {
                    gumbel_c_scale: f32::NAN,
                    ..d()
                },
                "gumbel_c_scale",
            ),
        ] {
            assert_eq!(bad(c).key, key);
        }
    }

    #[test]
    fn search_kinds_read_and_print() {
        for name in SearchKind::NAMES {
            assert_eq!(name.parse::<SearchKind>().unwrap().to_string(), name);
        }
        assert!("alphabeta".parse::<SearchKind>().is_err());
        assert_eq!(SearchKind::default(), SearchKind::Puct);
    }
}
