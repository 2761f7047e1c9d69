//! Self-play: many games at once, their search leaves pooled into the evaluator's fixed-size
//! batches, every fully searched position written to shards with its policy target (the visit
//! distribution of a PUCT search, the improved policy of a Gumbel one) and, once the game ends,
//! its result from the mover's point of view, with the auxiliary targets of `shards::Aux`: the
//! final position's ownership and score from the mover's side, and the opponent's next policy
//! target as the reply.
//!
//! The games in flight are split into groups (`pipeline_groups`); one thread drives each
//! group's games (gather → evaluate → apply → move) with a batch of its own, so that while one
//! group's batch is in the network the others do their tree work. A game's tree belongs to one
//! thread, which keeps the search lock-free and the batches full; the evaluator uses its own
//! threads inside each call. The calling thread writes the shards.

mod backend;
pub mod shaping;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use eval::{Evaluator, InvalidSetting};
use games::{Outcome, Player};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use search::{BatchReport, BatchStats, EvalCache, LeafBatch, Search, SearchConfig};
use serde::{Deserialize, Serialize};
use shards::{Aux, PolicyTarget, Sample, Shard, ShardMeta};

pub use backend::{Backend, RayConfig, SHIP};
pub use search::SearchKind;
pub use shaping::{Shaping, Trainable};

/// How often `run` reports progress while no game ends.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Gather passes over all games per batch at most (more would pile virtual loss on few trees).
const MAX_GATHER_PASSES: usize = 4;

/// Self-play settings (the `selfplay` section of a game's config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Games played at once; their leaves share the evaluator's batches.
    pub parallel_games: usize,
    /// Groups the games in flight are split into, each driven by a thread of its own with a
    /// batch of its own in flight: one group's tree work overlaps another's network call.
    pub pipeline_groups: usize,
    /// The search: `puct` (visit counts as targets) or `gumbel` (Gumbel root, sequential
    /// halving, improved-policy targets; no Dirichlet noise).
    #[serde(deserialize_with = "search_kind")]
    pub search: SearchKind,
    /// Gumbel: actions sampled at the root before sequential halving.
    pub gumbel_m: u32,
    /// Gumbel: σ's `c_visit`.
    pub gumbel_c_visit: f32,
    /// Gumbel: σ's `c_scale`.
    pub gumbel_c_scale: f32,
    /// Root visits of a full search: its position becomes a training sample. PUCT counts the
    /// visits kept from the previous move; Gumbel spends this many new ones.
    pub full_visits: u32,
    /// Root visits of a cheap search (playout-cap randomisation); not stored.
    pub cheap_visits: u32,
    /// Probability that a move gets a full search.
    pub full_fraction: f64,
    /// Moves (actions) from the start played with `temperature`; later ones with
    /// `final_temperature`.
    pub temperature_moves: u32,
    pub temperature: f32,
    pub final_temperature: f32,
    /// Dirichlet noise at the root: concentration and weight.
    pub dirichlet_alpha: f32,
    pub dirichlet_epsilon: f32,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// PUCT: k of the forced playouts of full searches (a root child below sqrt(k · prior · N)
    /// visits goes first), pruned back out of the policy target; 0 off.
    pub forced_playouts: f32,
    /// Weight of the score utility in PUCT ([`SearchConfig::score_utility`]); 0 off.
    pub score_utility: f32,
    /// Weight of the dynamic score utility in PUCT
    /// ([`SearchConfig::dynamic_score_utility`]); 0 off.
    pub dynamic_score_utility: f32,
    /// A player whose root value falls below this resigns (−1 disables resignation).
    pub resign_threshold: f32,
    /// Share of games that ignore resignation, to measure how often it would have been wrong.
    pub resign_playout_fraction: f64,
    /// No resignation before this many actions.
    pub resign_min_moves: u32,
    /// Samples per shard; a shard holds only complete games, so it may hold a few more.
    pub positions_per_shard: usize,
    /// Tree size limit per game, in nodes.
    pub max_nodes: usize,
    /// Weight of the game's draw tie-break (Liuzhou: the stone balance) in the value target of
    /// drawn games; 0 keeps draws at 0. Search still scores finished games exactly.
    pub draw_tiebreak_weight: f32,
    /// Weight of the game's result in a sample's value target; the rest is the root value of
    /// the position's own search (the mover's expected result as the search saw it). 1 keeps
    /// the result alone; less lowers the noise of outcomes decided long after the position.
    pub value_result_weight: f32,
    /// λ of the short-term value targets (KataGo's); 0 off. Off, the rest of the value target
    /// beside the result (1 − `value_result_weight`) is the position's own root value; on, it
    /// is H_t, an exponentially weighted average over the position's and the following
    /// positions' root values ending at the result ([`short_term_values`]): for the position at
    /// ply t of a game of T plies (a resigned game's last ply is the resigning one),
    /// H_t = Σ_{k=t}^{T−1} (1 − λ) λ^(k−t) · v_k + λ^(T−t) · r, where v_k is the root value
    /// of ply k's search (full or cheap) and r the result (with `draw_tiebreak_weight`), both
    /// from the view of ply t's mover: a value of a ply the opponent decided is negated, one of
    /// the same player's further actions (a Liuzhou turn of several) is not. λ = 0 is the
    /// position's own root value, λ = 1 the result alone; between them each action further on
    /// weighs λ times less. The target is `value_result_weight` · r + (1 −
    /// `value_result_weight`) · H_t, so `value_result_weight` 1 leaves this key no effect.
    pub value_horizon: f32,
    /// Where `engine train` plays: `local` or `ray` (the `ray` settings).
    pub backend: Backend,
    pub ray: RayConfig,
}

/// Reads `search`, naming the key when the value is not a search.
fn search_kind<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SearchKind, D::Error> {
    let name = String::deserialize(d)?;
    name.parse().map_err(|_| {
        serde::de::Error::custom(format!(
            "`search` is {name:?}; allowed: {}",
            SearchKind::NAMES.join(" or ")
        ))
    })
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        let search = SearchConfig::default();
        SelfplayConfig {
            parallel_games: 64,
            pipeline_groups: 1,
            search: search.search,
            gumbel_m: search.gumbel_m,
            gumbel_c_visit: search.gumbel_c_visit,
            gumbel_c_scale: search.gumbel_c_scale,
            full_visits: 200,
            cheap_visits: 50,
            full_fraction: 0.25,
            temperature_moves: 20,
            temperature: 1.0,
            final_temperature: 0.2,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.25,
            c_puct: 1.5,
            forced_playouts: 0.0,
            score_utility: 0.0,
            dynamic_score_utility: 0.0,
            resign_threshold: -0.95,
            resign_playout_fraction: 0.2,
            resign_min_moves: 40,
            positions_per_shard: 2048,
            max_nodes: 1 << 17,
            draw_tiebreak_weight: 0.0,
            value_result_weight: 1.0,
            value_horizon: 0.0,
            backend: Backend::Local,
            ray: RayConfig::default(),
        }
    }
}

impl SelfplayConfig {
    /// Range checks, run when the config is read and again by [`run`]. The first key out of
    /// range is reported with its value and what is allowed.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        let at_least_one = "1 or more";
        let fraction = "0 to 1";
        I::check(
            self.parallel_games >= 1,
            "parallel_games",
            self.parallel_games,
            at_least_one,
        )?;
        I::check(
            (1..=MAX_PIPELINE_GROUPS).contains(&self.pipeline_groups),
            "pipeline_groups",
            self.pipeline_groups,
            format_args!("1 to {MAX_PIPELINE_GROUPS}"),
        )?;
        I::check(
            self.full_visits >= 1,
            "full_visits",
            self.full_visits,
            at_least_one,
        )?;
        I::check(
            self.cheap_visits >= 1,
            "cheap_visits",
            self.cheap_visits,
            at_least_one,
        )?;
        I::check(
            (0.0..=1.0).contains(&self.full_fraction),
            "full_fraction",
            self.full_fraction,
            fraction,
        )?;
        for (key, t) in [
            ("temperature", self.temperature),
            ("final_temperature", self.final_temperature),
        ] {
            I::check(t.is_finite() && t >= 0.0, key, t, "a finite number ≥ 0")?;
        }
        // Root values lie in [-1, 1]: a threshold of 1 or more resigns every game.
        I::check(
            (-1.0..1.0).contains(&self.resign_threshold),
            "resign_threshold",
            self.resign_threshold,
            "-1 (never resign) up to but not including 1",
        )?;
        I::check(
            (0.0..=1.0).contains(&self.resign_playout_fraction),
            "resign_playout_fraction",
            self.resign_playout_fraction,
            fraction,
        )?;
        I::check(
            self.positions_per_shard >= 1,
            "positions_per_shard",
            self.positions_per_shard,
            at_least_one,
        )?;
        I::check(
            self.max_nodes >= 1024,
            "max_nodes",
            self.max_nodes,
            format_args!("1024 to {}", u32::MAX),
        )?;
        I::check(
            (0.0..=1.0).contains(&self.draw_tiebreak_weight),
            "draw_tiebreak_weight",
            self.draw_tiebreak_weight,
            fraction,
        )?;
        I::check(
            (0.0..=1.0).contains(&self.value_result_weight),
            "value_result_weight",
            self.value_result_weight,
            fraction,
        )?;
        I::check(
            (0.0..=1.0).contains(&self.value_horizon),
            "value_horizon",
            self.value_horizon,
            "0 (off) to 1",
        )?;
        self.ray.validate()?;
        // c_puct, forced_playouts, the Dirichlet noise, the Gumbel constants and the upper bound
        // of max_nodes.
        self.search_config().validate()
    }

    /// The temperature of move `index` (0-based).
    pub fn temperature_at(&self, index: u32) -> f32 {
        if index < self.temperature_moves {
            self.temperature
        } else {
            self.final_temperature
        }
    }

    /// What the shards' policy targets are.
    pub fn policy_target(&self) -> PolicyTarget {
        match self.search {
            SearchKind::Puct => PolicyTarget::Visits,
            SearchKind::Gumbel => PolicyTarget::Improved,
        }
    }

    /// The search settings of every game's tree.
    pub fn search_config(&self) -> SearchConfig {
        SearchConfig {
            search: self.search,
            gumbel_m: self.gumbel_m,
            gumbel_c_visit: self.gumbel_c_visit,
            gumbel_c_scale: self.gumbel_c_scale,
            c_puct: self.c_puct,
            forced_playouts: self.forced_playouts,
            score_utility: self.score_utility,
            dynamic_score_utility: self.dynamic_score_utility,
            max_nodes: self.max_nodes,
            reuse_tree: true,
            ..SearchConfig::default()
        }
        .with_noise(self.dirichlet_alpha, self.dirichlet_epsilon)
    }
}

/// Why self-play stopped.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    #[error("invalid self-play config: {0}")]
    Config(InvalidSetting),
    #[error("shard directory {path}: {reason}")]
    OutDir { path: PathBuf, reason: String },
    #[error(transparent)]
    Eval(#[from] eval::EvalError),
    #[error(transparent)]
    Shard(#[from] shards::ShardError),
    #[error("search: {0}")]
    Search(String),
}

/// What a self-play run did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub games: usize,
    /// Actions played (every move of every game, full or cheap).
    pub positions: u64,
    /// Positions stored as training samples.
    pub samples: u64,
    pub shards: Vec<PathBuf>,
    pub seconds: f64,
    /// Wins of the first player, wins of the second, draws.
    pub results: [usize; 3],
    pub resigned: usize,
    /// Games that ignored resignation in which the player that would have resigned did not lose.
    pub resign_false: usize,
    /// Games that ignored resignation in which some player would have resigned.
    pub resign_would: usize,
    pub batches: BatchReport,
    /// Wall time during which at least one evaluator call was running (`batches.eval_time`
    /// adds up the calls, which overlap when several groups are in flight).
    pub evaluator_time: Duration,
    /// Groups of games played at once, each with a batch of its own in flight.
    pub groups: usize,
}

impl Summary {
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }

    pub fn average_length(&self) -> f64 {
        self.positions as f64 / self.games.max(1) as f64
    }

    /// Share of the wall time in which at least one evaluator call was running; in the rest
    /// every group was doing tree work (selection, expansion, backup, moves).
    pub fn evaluator_busy(&self) -> f64 {
        (self.evaluator_time.as_secs_f64() / self.seconds.max(1e-9)).min(1.0)
    }

    /// One line for logs and the command's output.
    pub fn line(&self) -> String {
        format!(
            "{} games, {} positions ({:.1}/s), {} samples in {} shards, batch fill {:.0}%, \
             evaluator busy {:.0}% ({} pipeline group{}), results first/second/draw {}/{}/{}, average length {:.1}, \
             resigned {}, resignation wrong in {}/{} checked games",
            self.games,
            self.positions,
            self.positions_per_second(),
            self.samples,
            self.shards.len(),
            100.0 * self.batches.fill(),
            100.0 * self.evaluator_busy(),
            self.groups,
            if self.groups == 1 { "" } else { "s" },
            self.results[0],
            self.results[1],
            self.results[2],
            self.average_length(),
            self.resigned,
            self.resign_false,
            self.resign_would,
        )
    }
}

/// Where and how shards are written.
pub struct ShardSink<'a> {
    pub dir: &'a Path,
    /// Part of every shard's name (after the time stamp), such as `g0003` or `selfplay`.
    pub tag: &'a str,
    /// The producing model, recorded in each shard.
    pub model: &'a str,
    /// The producing configuration (YAML), recorded in each shard.
    pub config: &'a str,
}

impl ShardSink<'_> {
    /// Creates the directory if missing and proves that a file can be written in it, so that
    /// a bad directory fails before any game is played rather than at the first shard.
    pub fn prepare(&self) -> Result<(), SelfplayError> {
        let fail = |reason: String| SelfplayError::OutDir {
            path: self.dir.to_owned(),
            reason,
        };
        if self.dir.exists() && !self.dir.is_dir() {
            return Err(fail("exists and is not a directory".into()));
        }
        std::fs::create_dir_all(self.dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
        // A dot-name ending in `.tmp`, like the shard writer's own temporary files: readers
        // skip it should a kill leave it behind.
        let probe = self
            .dir
            .join(format!(".write-probe.{}.tmp", std::process::id()));
        std::fs::write(&probe, b"").map_err(|e| fail(format!("cannot write a file in it: {e}")))?;
        let _ = std::fs::remove_file(&probe);
        Ok(())
    }
}

/// A position waiting for its game's result.
struct Pending {
    planes: Vec<f32>,
    policy: Vec<(u16, f32)>,
    mover: Player,
    /// The position's place in the game: actions played before it.
    ply: u32,
    /// The root value of the position's search, from the mover's side.
    root_value: f32,
    /// KL(policy target ‖ the network's root prior) ([`policy_surprise`]).
    surprise: Option<f32>,
}

/// One game in progress.
struct Slot<G: Trainable> {
    search: Search<G>,
    moves: u32,
    /// Playouts of the current move's search.
    visits: u32,
    /// Root visits the current move's search must reach.
    target: u32,
    full: bool,
    samples: Vec<Pending>,
    /// Who decided at each ply so far (full search or not): the reply target looks past a
    /// player's own further actions to the opponent's next decision.
    movers: Vec<Player>,
    /// The root value of each ply's search so far (full or cheap), from its mover's side: the
    /// short-term value targets average them ([`short_term_values`]).
    root_values: Vec<f32>,
    /// This game never resigns; `would_resign` records who would have.
    playout: bool,
    would_resign: Option<Player>,
    /// The game ended by resignation.
    resigned: bool,
}

/// The groups' caches hold this many times one search's default between them (each at least
/// one search's default): room for the positions of several games at once without growing
/// with `parallel_games`.
const SHARED_CACHE_FACTOR: usize = 8;

/// Most groups `pipeline_groups` accepts: each is a thread with a batch of its own in flight.
pub const MAX_PIPELINE_GROUPS: usize = 64;

/// The share of `total` that group `g` of `groups` takes (the first groups take the remainder).
fn share(total: usize, groups: usize, g: usize) -> usize {
    total / groups + usize::from(g < total % groups)
}

/// Group `g`'s random seed; group 0 keeps the run's seed, so one group plays what a run of one
/// driving thread plays.
fn group_seed(seed: u64, g: usize) -> u64 {
    seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Wall time during which at least one evaluator call was running, however many groups call
/// at once.
#[derive(Default)]
struct Busy {
    /// Held only to count a call in or out.
    state: std::sync::Mutex<BusyState>,
}

#[derive(Default)]
struct BusyState {
    /// Calls running now.
    running: usize,
    /// When the current busy stretch began (while `running > 0`).
    since: Option<Instant>,
    /// Busy time of the finished stretches.
    done: Duration,
}

impl Busy {
    fn enter(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.running == 0 {
            s.since = Some(Instant::now());
        }
        s.running += 1;
    }

    fn leave(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.running -= 1;
        if s.running == 0 {
            if let Some(since) = s.since.take() {
                s.done += since.elapsed();
            }
        }
    }

    fn total(&self) -> Duration {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.done + s.since.map_or(Duration::ZERO, |since| since.elapsed())
    }
}

/// The run's evaluator, its calls counted into [`Busy`].
struct Timed<'a, G: Trainable> {
    inner: &'a dyn Evaluator<G>,
    busy: &'a Busy,
}

impl<G: Trainable> Evaluator<G> for Timed<'_, G> {
    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), eval::EvalError> {
        self.busy.enter();
        let result = self.inner.evaluate(states, policy, value);
        self.busy.leave();
        result
    }

    fn fits(&self, shape: games::TensorShape) -> bool {
        self.inner.fits(shape)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn calls_cost_whole_batch(&self) -> bool {
        self.inner.calls_cost_whole_batch()
    }
}

/// A finished game, handed from its group's thread to the thread that writes shards.
struct Finished {
    samples: Vec<Sample>,
    outcome: Outcome,
    resigned: bool,
    /// The player that would have resigned, in a game that ignored resignation.
    would_resign: Option<Player>,
}

/// What a group's thread tells the thread that writes shards.
enum Event {
    Finished(Finished),
    Failed(SelfplayError),
}

/// What every group shares.
struct Shared<'a, G: Trainable> {
    start: &'a G,
    evaluator: &'a dyn Evaluator<G>,
    config: &'a SelfplayConfig,
    search_config: SearchConfig,
    /// Entries of each group's evaluation cache (0: none).
    cache_entries: usize,
    stats: BatchStats,
    /// Actions played in all groups.
    positions: AtomicU64,
    /// Set when the run fails: the groups stop at their next batch.
    stop: AtomicBool,
}

/// Plays `games` games from `start` with `evaluator` and writes their samples to shards.
/// `on_progress` is called after every finished game and at least once a second between
/// games (for progress bars).
///
/// The games in flight are split into `pipeline_groups` groups, each driven by a thread of its
/// own that gathers its games' leaves into a batch, evaluates it and backs it up; while one
/// group's batch is in the network, the others do their tree work. Every group plays a fixed
/// share of the games from a seed of its own, so a run is reproducible for a given seed and
/// number of groups (with a deterministic evaluator); the calling thread writes the shards.
pub fn run<G: Trainable>(
    start: &G,
    evaluator: &dyn Evaluator<G>,
    config: &SelfplayConfig,
    games: usize,
    sink: &ShardSink<'_>,
    seed: u64,
    mut on_progress: impl FnMut(&Summary),
) -> Result<Summary, SelfplayError> {
    config.validate().map_err(SelfplayError::Config)?;
    sink.prepare()?;
    let began = Instant::now();
    let groups = config
        .pipeline_groups
        .min(config.parallel_games)
        .min(games)
        .max(1);
    let mut search_config = config.search_config();
    search_config.decisive = G::DECISIVE_SEARCH;
    search_config.capture_prior = G::CAPTURE_PRIOR;
    // One cache for a group's games: they share openings and one network, and a cache per
    // game would hold the same positions many times over (hundreds of MiB for Go at 64
    // games). Not one for all groups: which group's lookups came first would depend on
    // timing, and the games would no longer be reproducible.
    let cache_entries = (search_config.cache_entries * SHARED_CACHE_FACTOR / groups)
        .max(search_config.cache_entries);
    search_config.cache_entries = 0;
    let busy = Busy::default();
    let timed = Timed {
        inner: evaluator,
        busy: &busy,
    };
    let shared = Shared {
        start,
        evaluator: &timed,
        config,
        search_config,
        cache_entries,
        stats: BatchStats::default(),
        positions: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    };
    let mut summary = Summary {
        groups,
        ..Summary::default()
    };
    let mut buffer: Vec<Sample> = Vec::new();
    let mut buffer_games = 0usize;
    let snapshot = |summary: &mut Summary| {
        summary.seconds = began.elapsed().as_secs_f64();
        summary.positions = shared.positions.load(Relaxed);
        summary.batches = shared.stats.report();
        summary.evaluator_time = busy.total();
    };

    let (tx, rx) = mpsc::channel::<Event>();
    let outcome = std::thread::scope(|scope| {
        for g in 0..groups {
            let tx = tx.clone();
            let shared = &shared;
            let plan = GroupPlan {
                games: share(games, groups, g),
                in_flight: share(config.parallel_games, groups, g),
                seed: group_seed(seed, g),
            };
            std::thread::Builder::new()
                .name(format!("selfplay-{g}"))
                .spawn_scoped(scope, move || {
                    if let Err(e) = play_group(shared, plan, &tx) {
                        shared.stop.store(true, Relaxed);
                        let _ = tx.send(Event::Failed(e));
                    }
                })
                .map_err(|e| SelfplayError::Search(format!("cannot start a thread: {e}")))?;
        }
        drop(tx);
        let mut failed = None;
        let mut last_report = Instant::now();
        loop {
            let wait = PROGRESS_EVERY.saturating_sub(last_report.elapsed());
            match rx.recv_timeout(wait) {
                Ok(Event::Finished(game)) if failed.is_none() => {
                    record(game, &mut summary, &mut buffer);
                    buffer_games += 1;
                    if buffer.len() >= config.positions_per_shard {
                        if let Err(e) = flush(
                            start,
                            sink,
                            config,
                            &mut buffer,
                            &mut buffer_games,
                            &mut summary,
                        ) {
                            shared.stop.store(true, Relaxed);
                            failed = Some(e);
                            continue;
                        }
                    }
                    snapshot(&mut summary);
                    on_progress(&summary);
                    last_report = Instant::now();
                }
                Ok(Event::Finished(_)) => {}
                Ok(Event::Failed(e)) => {
                    failed.get_or_insert(e);
                }
                // Games end in waves: report between them too, so a rate is seen while they
                // play.
                Err(RecvTimeoutError::Timeout) => {
                    if failed.is_none() {
                        snapshot(&mut summary);
                        on_progress(&summary);
                    }
                    last_report = Instant::now();
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        failed.map_or(Ok(()), Err)
    });
    outcome?;
    flush(
        start,
        sink,
        config,
        &mut buffer,
        &mut buffer_games,
        &mut summary,
    )?;
    snapshot(&mut summary);
    Ok(summary)
}

/// One group's games: how many it plays, how many at once, and its seed.
#[derive(Clone, Copy)]
struct GroupPlan {
    games: usize,
    in_flight: usize,
    seed: u64,
}

/// Plays a group's games on the calling thread, sending each finished game to `tx`.
fn play_group<G: Trainable>(
    shared: &Shared<'_, G>,
    plan: GroupPlan,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SelfplayError> {
    let config = shared.config;
    let mut rng = SmallRng::seed_from_u64(plan.seed);
    let cache = (shared.cache_entries > 0).then(|| Arc::new(EvalCache::new(shared.cache_entries)));
    let batch_size = shared.evaluator.batch_size().max(1);
    let mut started = 0usize;
    let mut slots: Vec<Slot<G>> = Vec::new();

    let new_slot = |rng: &mut SmallRng, started: &mut usize| {
        *started += 1;
        let mut slot = Slot {
            search: Search::new(
                shared.start.clone(),
                shared.search_config.clone(),
                rng.gen(),
            )
            .with_cache(cache.clone()),
            moves: 0,
            visits: 0,
            target: 0,
            full: false,
            samples: Vec::new(),
            movers: Vec::new(),
            root_values: Vec::new(),
            playout: rng.gen_bool(config.resign_playout_fraction),
            would_resign: None,
            resigned: false,
        };
        next_move(&mut slot, config, rng, 0);
        begin_search(&mut slot, config);
        slot
    };
    while slots.len() < plan.in_flight.min(plan.games) {
        slots.push(new_slot(&mut rng, &mut started));
    }

    let mut batch = LeafBatch::new();
    let per_game = batch_size.div_ceil(slots.len().max(1)).max(1);
    let mut first = 0usize;
    while !slots.is_empty() && !shared.stop.load(Relaxed) {
        // Gather: visit games round-robin from a rotating start until the batch is full. Cache
        // hits and terminal leaves finish on the spot without filling the batch, so a few more
        // passes (virtual loss keeps their paths apart) top it up.
        batch.clear();
        let n = slots.len();
        for _pass in 0..MAX_GATHER_PASSES {
            let before = batch.len();
            for k in 0..n {
                let room = batch_size - batch.len();
                if room == 0 {
                    break;
                }
                let i = (first + k) % n;
                let s = &slots[i];
                // Leaves gathered in earlier passes are still in flight: count them too.
                let root = s.search.tree().stats(s.search.tree().root());
                let missing = s.target.saturating_sub(root.visits + root.in_flight) as usize;
                if missing > 0 {
                    s.search
                        .gather(&mut batch, i as u32, per_game.min(room).min(missing));
                }
            }
            if batch.len() >= batch_size || batch.len() == before {
                break;
            }
        }
        first = (first + 1) % n;
        if !batch.is_empty() {
            batch.evaluate(shared.evaluator, &shared.stats)?;
            batch.apply(|tag| &slots[tag as usize].search);
        }

        // Move in every game whose search is done; finish and replace ended games.
        let mut i = 0;
        while i < slots.len() {
            if slots[i].search.root_visits() < slots[i].target {
                i += 1;
                continue;
            }
            let ended = make_move(&mut slots[i], config, &mut rng, &shared.positions)?;
            match ended {
                None => i += 1,
                Some(outcome) => {
                    let slot = slots.swap_remove(i);
                    let game = finish_game(slot, outcome, config);
                    if tx.send(Event::Finished(game)).is_err() {
                        return Ok(());
                    }
                    if started < plan.games {
                        slots.push(new_slot(&mut rng, &mut started));
                    }
                    // Keep i: the swapped-in slot is checked next.
                }
            }
        }
    }
    Ok(())
}

/// Chooses the search of move `index` (0-based): its size (playout-cap randomisation) and
/// noise.
fn next_move<G: Trainable>(
    slot: &mut Slot<G>,
    config: &SelfplayConfig,
    rng: &mut SmallRng,
    index: u32,
) {
    slot.full = rng.gen_bool(config.full_fraction);
    let visits = if slot.full {
        config.full_visits
    } else {
        config.cheap_visits
    };
    slot.visits = visits.max(1);
    // Only full searches become training targets; noise would only weaken the cheap ones.
    slot.search.set_root_noise(slot.full);
    // The Gumbel noise draws the move itself, so every move gets it, at its temperature.
    slot.search.set_gumbel_noise(config.temperature_at(index));
}

/// Starts the search at the slot's root. PUCT counts the visits carried over by tree reuse
/// towards its target; the Gumbel root plans its halving for `visits` new ones.
fn begin_search<G: Trainable>(slot: &mut Slot<G>, config: &SelfplayConfig) {
    slot.search.begin_search(Some(u64::from(slot.visits)));
    slot.target = match config.search {
        SearchKind::Puct => slot.visits,
        SearchKind::Gumbel => slot.search.root_visits() + slot.visits,
    };
}

/// Records the finished search (if full), resigns or plays a move. Returns the outcome when the
/// game has ended.
fn make_move<G: Trainable>(
    slot: &mut Slot<G>,
    config: &SelfplayConfig,
    rng: &mut SmallRng,
    positions: &AtomicU64,
) -> Result<Option<Outcome>, SelfplayError> {
    let state = slot.search.state().clone();
    let mover = state.to_act();
    slot.movers.push(mover);
    slot.root_values.push(slot.search.root_value());
    if slot.full {
        let mut planes = vec![0.0; state.shape().input_len()];
        state.encode(&mut planes);
        let target = match config.search {
            SearchKind::Puct => slot.search.pruned_visit_distribution(),
            SearchKind::Gumbel => slot.search.improved_policy(),
        };
        let policy: Vec<(u16, f32)> = target
            .into_iter()
            .filter(|&(_, p)| p > 0.0)
            .map(|(a, p)| (state.action_index(a) as u16, p))
            .collect();
        let prior: Vec<(u16, f32)> = slot
            .search
            .root_network_prior()
            .into_iter()
            .map(|(a, p)| (state.action_index(a) as u16, p))
            .collect();
        let surprise = (!policy.is_empty()).then(|| policy_surprise(&policy, &prior));
        slot.samples.push(Pending {
            planes,
            policy,
            mover,
            ply: slot.moves,
            root_value: slot.search.root_value(),
            surprise,
        });
    }
    if slot.moves >= config.resign_min_moves && slot.search.root_value() < config.resign_threshold {
        if slot.playout {
            slot.would_resign.get_or_insert(mover);
        } else {
            slot.resigned = true;
            return Ok(Some(Outcome::Win(mover.opponent())));
        }
    }
    let temperature = config.temperature_at(slot.moves);
    let action = slot
        .search
        .choose_action(temperature, rng)
        .ok_or_else(|| SelfplayError::Search(format!("no action chosen in {}", state.to_text())))?;
    // The next search's size first: it decides whether the new root gets noise.
    next_move(slot, config, rng, slot.moves + 1);
    slot.search
        .advance(action)
        .map_err(|e| SelfplayError::Search(e.to_string()))?;
    begin_search(slot, config);
    slot.moves += 1;
    positions.fetch_add(1, Relaxed);
    if let Some(outcome) = slot.search.state().outcome() {
        return Ok(Some(outcome));
    }
    Ok(None)
}

/// The smallest prior [`policy_surprise`] divides by: an action the network gave (almost) no
/// chance costs at most ln(10⁶) ≈ 13.8 nats per unit of the target's mass.
const PRIOR_FLOOR: f32 = 1e-6;

/// How surprising a search's policy target was to the network that played (KataGo's policy
/// surprise): KL(target ‖ prior) = Σ target(a) · ln(target(a) / prior(a)) in nats over the
/// actions with a share of the target, each prior floored at [`PRIOR_FLOOR`]; `prior` is the
/// network's policy at the root before noise ([`Search::root_network_prior`]), both as (policy
/// index, probability). 0 when the search agreed with the network; never negative.
pub fn policy_surprise(target: &[(u16, f32)], prior: &[(u16, f32)]) -> f32 {
    let mut by_index = prior.to_vec();
    by_index.sort_unstable_by_key(|&(i, _)| i);
    let prior_of = |i: u16| {
        by_index
            .binary_search_by_key(&i, |&(j, _)| j)
            .map_or(0.0, |k| by_index[k].1)
    };
    let kl: f64 = target
        .iter()
        .filter(|&&(_, t)| t > 0.0)
        .map(|&(i, t)| f64::from(t) * (f64::from(t) / f64::from(prior_of(i).max(PRIOR_FLOOR))).ln())
        .sum();
    kl.max(0.0) as f32
}

/// The short-term value target H_t of every ply t of a finished game
/// ([`SelfplayConfig::value_horizon`]): `movers[k]` decided at ply k, `root_values[k]` is its
/// search's root value from its own side, `result(p)` the game's result for player p, and
/// `lambda` the decay per action. H_t, from ply t's mover's side, is
/// Σ_{k=t}^{T−1} (1 − λ) λ^(k−t) · v_k + λ^(T−t) · result(mover_t), with v_k the root value of
/// ply k from that side (negated where the other player decided ply k) and T the plies played.
pub fn short_term_values(
    movers: &[Player],
    root_values: &[f32],
    result: impl Fn(Player) -> f32,
    lambda: f32,
) -> Vec<f32> {
    debug_assert_eq!(movers.len(), root_values.len());
    let first_view = |p: Player, v: f32| if p == Player::First { v } else { -v };
    // From the end: the values' part in the first player's view, and λ^(T−t).
    let (mut values, mut weight) = (0.0f32, 1.0f32);
    let mut out = vec![0.0; movers.len()];
    for t in (0..movers.len()).rev() {
        let m = movers[t];
        values = (1.0 - lambda) * first_view(m, root_values[t]) + lambda * values;
        weight *= lambda;
        out[t] = first_view(m, values) + weight * result(m);
    }
    out
}

/// A finished game's samples, valued by its outcome from each mover's point of view (blended
/// with the position's root value, or its short-term value target where `value_horizon` > 0,
/// where `value_result_weight` < 1), with their auxiliary
/// targets ([`aux_targets`]).
fn finish_game<G: Trainable>(slot: Slot<G>, outcome: Outcome, config: &SelfplayConfig) -> Finished {
    let last = slot.search.state();
    let result = |mover: Player| match outcome {
        Outcome::Draw => (config.draw_tiebreak_weight * last.draw_tiebreak(mover)).clamp(-1.0, 1.0),
        _ => outcome.value_for(mover),
    };
    let w = config.value_result_weight;
    let horizon = (config.value_horizon > 0.0 && w < 1.0).then(|| {
        short_term_values(
            &slot.movers,
            &slot.root_values,
            result,
            config.value_horizon,
        )
    });
    let value = |p: &Pending| {
        let rest = horizon.as_ref().map_or(p.root_value, |h| h[p.ply as usize]);
        (w * result(p.mover) + (1.0 - w) * rest).clamp(-1.0, 1.0)
    };
    let aux = aux_targets(last, &slot.samples, &slot.movers, slot.resigned);
    let samples = slot
        .samples
        .into_iter()
        .zip(aux)
        .map(|(p, aux)| Sample {
            value: value(&p),
            planes: p.planes,
            policy: p.policy,
            aux,
        })
        .collect();
    Finished {
        samples,
        outcome,
        resigned: slot.resigned,
        would_resign: slot.would_resign,
    }
}

/// The auxiliary targets of a game's samples (`samples`, in the order played; `movers[k]` the
/// player who decided at ply k), which ended in `last`:
/// - the ownership and score of `last` from each sample's mover's side ([`Game::final_ownership`],
///   [`Game::final_score`]); none for a resigned game, whose last position is no game's end;
/// - the reply: the policy target of the opponent's next decision, the first later ply whose
///   mover is the other player (past the mover's own further actions, as in a Liuzhou turn of
///   several). None where the game ended first, or where that decision had a cheap search and
///   so no stored target.
fn aux_targets<G: Trainable>(
    last: &G,
    samples: &[Pending],
    movers: &[Player],
    resigned: bool,
) -> Vec<Aux> {
    let end = |mover: Player| {
        if resigned {
            (None, None)
        } else {
            (last.final_ownership(mover), last.final_score(mover))
        }
    };
    let mut out: Vec<Aux> = Vec::with_capacity(samples.len());
    // Plies ascend, so the sample at a ply is found by binary search.
    let at_ply = |ply: usize| {
        samples
            .binary_search_by_key(&ply, |p| p.ply as usize)
            .ok()
            .map(|k| &samples[k])
    };
    for p in samples {
        let (ownership, score) = end(p.mover);
        let reply = shards::reply_ply(movers, p.ply as usize)
            .and_then(at_ply)
            .filter(|next| !next.policy.is_empty())
            .map(|next| next.policy.clone());
        out.push(Aux {
            ownership,
            score,
            reply,
            surprise: p.surprise,
        });
    }
    out
}

/// Counts a finished game into the summary and its samples into the shard buffer.
fn record(game: Finished, summary: &mut Summary, buffer: &mut Vec<Sample>) {
    summary.games += 1;
    summary.results[match game.outcome {
        Outcome::Win(Player::First) => 0,
        Outcome::Win(Player::Second) => 1,
        Outcome::Draw => 2,
    }] += 1;
    summary.resigned += usize::from(game.resigned);
    if let Some(p) = game.would_resign {
        summary.resign_would += 1;
        if game.outcome != Outcome::Win(p.opponent()) {
            summary.resign_false += 1;
        }
    }
    summary.samples += game.samples.len() as u64;
    buffer.extend(game.samples);
}

fn flush<G: Trainable>(
    start: &G,
    sink: &ShardSink<'_>,
    config: &SelfplayConfig,
    buffer: &mut Vec<Sample>,
    games: &mut usize,
    summary: &mut Summary,
) -> Result<(), SelfplayError> {
    if buffer.is_empty() {
        return Ok(());
    }
    let shape = start.shape();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let shard = Shard {
        meta: ShardMeta {
            game: G::NAME.to_string(),
            planes: shape.planes,
            height: shape.height,
            width: shape.width,
            policy_size: shape.policy_size,
            model: sink.model.to_string(),
            config: sink.config.to_string(),
            created_unix: now.as_secs(),
            games: *games,
            policy_target: config.policy_target(),
        },
        samples: std::mem::take(buffer),
        symmetries: shards::symmetry_maps(start),
    };
    // Time first so names sort by age; the sequence number separates shards of one millisecond.
    let name = format!(
        "{:013}-{}-{:04}.{}",
        now.as_millis(),
        sink.tag,
        summary.shards.len(),
        shards::EXTENSION
    );
    let path = sink.dir.join(name);
    shard.write(&path)?;
    tracing::debug!("wrote {} ({} samples)", path.display(), shard.samples.len());
    summary.shards.push(path);
    *games = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::liuzhou::Liuzhou;

    fn pending(ply: u32, mover: Player, action: u16) -> Pending {
        Pending {
            planes: Vec::new(),
            policy: vec![(action, 1.0)],
            mover,
            ply,
            root_value: 0.0,
            surprise: None,
        }
    }

    #[test]
    fn policy_surprise_is_the_kl_divergence_of_the_target_from_the_prior() {
        // Target (0.5, 0.5, 0) against prior (0.25, 0.25, 0.5): 2 · 0.5 · ln 2 = ln 2.
        let prior = [(7, 0.5), (3, 0.25), (5, 0.25)];
        let kl = policy_surprise(&[(3, 0.5), (5, 0.5)], &prior);
        assert!((kl - std::f32::consts::LN_2).abs() < 1e-6, "{kl}");
        // A search that agrees with the network is no surprise.
        assert!(policy_surprise(&[(7, 0.5), (3, 0.25), (5, 0.25)], &prior).abs() < 1e-6);
        // Target (0.8, 0.2) against (0.5, 0.5): 0.8 ln 1.6 + 0.2 ln 0.4.
        let kl = policy_surprise(&[(1, 0.8), (2, 0.2)], &[(2, 0.5), (1, 0.5)]);
        let want = 0.8 * 1.6f32.ln() + 0.2 * 0.4f32.ln();
        assert!((kl - want).abs() < 1e-6, "{kl} vs {want}");
        // An action the prior lacks costs ln(1 / PRIOR_FLOOR).
        let kl = policy_surprise(&[(9, 1.0)], &prior);
        assert!((kl - (1.0 / PRIOR_FLOOR).ln()).abs() < 1e-3, "{kl}");
    }

    /// Black (First) decides plies 0, 1 and 3, White ply 2; Black wins.
    #[test]
    fn short_term_values_average_the_later_root_values_from_the_movers_side() {
        use Player::{First as B, Second as W};
        let movers = [B, B, W, B];
        let values = [0.2, 0.4, -0.6, 0.8];
        let result = |p: Player| if p == B { 1.0 } else { -1.0 };
        let h = short_term_values(&movers, &values, result, 0.5);
        // Ply 0: 0.5·0.2 + 0.25·0.4 + 0.125·0.6 (White's −0.6 seen by Black) + 0.0625·0.8
        // + 0.0625·1.
        let want = [
            0.5 * 0.2 + 0.25 * 0.4 + 0.125 * 0.6 + 0.0625 * 0.8 + 0.0625,
            0.5 * 0.4 + 0.25 * 0.6 + 0.125 * 0.8 + 0.125,
            // White's side: its own −0.6, Black's 0.8 as −0.8, then the loss.
            0.5 * -0.6 + 0.25 * -0.8 - 0.25,
            0.5 * 0.8 + 0.5,
        ];
        for (t, (got, want)) in h.iter().zip(want).enumerate() {
            assert!((got - want).abs() < 1e-6, "ply {t}: {got} vs {want}");
        }
        assert!((h[0] - 0.3875).abs() < 1e-6 && (h[2] + 0.75).abs() < 1e-6);
        // λ = 0: each position's own root value; λ = 1: the result alone.
        assert_eq!(short_term_values(&movers, &values, result, 0.0), values);
        assert_eq!(
            short_term_values(&movers, &values, result, 1.0),
            [1.0, 1.0, -1.0, 1.0]
        );
    }

    /// Black acts at plies 0–1 (a Liuzhou turn of two actions), White at 2–4, Black at 5; plies
    /// 1, 3 and 5 had cheap searches (no sample).
    #[test]
    fn the_reply_is_the_opponents_next_decision_when_it_was_stored() {
        use Player::{First as B, Second as W};
        let movers = [B, B, W, W, W, B];
        let samples = [pending(0, B, 10), pending(2, W, 12), pending(4, W, 14)];
        let last = Liuzhou::from_lfen("6/6/6/6/BB4/BW4 w move 0 50 0", Default::default()).unwrap();
        let aux = aux_targets(&last, &samples, &movers, false);
        // Ply 0 (Black): past Black's own ply 1 to White's ply 2, stored.
        assert_eq!(aux[0].reply, Some(vec![(12, 1.0)]));
        // Ply 2 (White): Black's next decision is ply 5, a cheap search.
        assert_eq!(aux[1].reply, None);
        assert_eq!(aux[2].reply, None);
        // Ownership and score of the last position, from each sample's mover's side.
        assert_eq!(aux[0].score, Some(2.0));
        assert_eq!(aux[1].score, Some(-2.0));
        let black = aux[0].ownership.as_ref().unwrap();
        assert_eq!(black[..8], [1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]);
        let white = aux[1].ownership.as_ref().unwrap();
        assert!(black.iter().zip(white).all(|(b, w)| *b == -*w));

        // A resigned game's last position is no end: no ownership, no score.
        let aux = aux_targets(&last, &samples, &movers, true);
        assert!(aux
            .iter()
            .all(|a| a.ownership.is_none() && a.score.is_none()));
        assert_eq!(aux[0].reply, Some(vec![(12, 1.0)]));
    }
}
