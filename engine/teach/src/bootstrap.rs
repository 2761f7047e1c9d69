//! A teacher's games into training shards, so a network starts from what GNU Go or
//! Fairy-Stockfish know instead of from nothing.
//!
//! [`bootstrap`] plays games of the teacher against itself (or against an opponent agent, the
//! teacher taking Black/Red in even games, or the side `teacher_side` names), asks the teacher
//! about every position, and writes one sample per position into ordinary shards (the format
//! `trainer-bridge fit` reads):
//! - policy: the teacher's distribution over the legal actions, as sparse entries;
//! - value: `value_result_weight · result + (1 − value_result_weight) · teacher's value`, the
//!   result from the mover's point of view (±1, 0); the result alone when the teacher gives no
//!   value;
//! - auxiliary targets ([`shards::Aux`]): the final position's ownership and score from the
//!   mover's side where the game ended by the rules (none after a resignation; the engine's
//!   own area count, GNU Go having captured the dead stones before it passed), and the
//!   teacher's policy at the opponent's next decision as the reply, where that position was
//!   stored.
//!
//! Variety comes from `opening_random_moves` uniformly random actions, then
//! `opening_sampled_moves` actions drawn from the teacher's policy, and (GNU Go) a level drawn
//! per game from `levels`. A position seen again within a shard is stored once, its value (and
//! each auxiliary target) the mean over its occurrences; positions are not merged across shards, so that each shard is
//! decided by its own games alone and a resumed run writes what an uninterrupted one would.
//!
//! Shards hold `games_per_shard` games each: shard k holds games `k·G ..` of the run. They are
//! named `0000000000000-bootstrap-HASH-KKKK.safetensors`, HASH from the game, its start, the
//! teacher, the opponent, the seed and the settings: the zero time stamp sorts them with
//! imported records as the oldest data, and running the same command again keeps every
//! finished shard and plays only the games of the missing ones. Game i's seed depends only on
//! the run's seed and i.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use eval::InvalidSetting;
use games::{random_action, Agent, AgentError, Decision, Encoding, Outcome, Player};
use progress::Progress;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use shards::{Aux, Sample, Shard, ShardError, ShardMeta};

use crate::teacher::{TeachError, Teacher};

/// The `bootstrap` section of a game's config (see `configs/go.yaml`, every key commented).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BootstrapConfig {
    /// Games per shard.
    pub games_per_shard: usize,
    /// Uniformly random actions at the start of every game (both sides), for variety.
    pub opening_random_moves: u32,
    /// Then this many actions drawn from the teacher's policy instead of its best move.
    pub opening_sampled_moves: u32,
    /// Positions before this many actions are played but not stored (nor asked about where
    /// the opponent or the opening chooses): a teacher strong in one part of a game teaches
    /// only that part. Left out of the run's record at 0, so older runs keep their names.
    #[serde(skip_serializing_if = "is_zero")]
    pub store_from_action: u32,
    /// Positions from this many actions on are played but not stored, the other end of the
    /// same window (0: no end): a teacher that searches the opening of a game deeply teaches
    /// only the opening. Left out of the run's record at 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub store_until_action: u32,
    /// Who plays the actions after the window's end. Left out of the run's record at its
    /// default, so older runs keep their names.
    #[serde(skip_serializing_if = "Finish::is_teacher")]
    pub finish: Finish,
    /// The side the teacher plays against an opponent: both in turn, or always the first
    /// (Black, Red) or the second, so that the labels gather where the network is to be
    /// stronger. Left out of the run's record at its default.
    #[serde(skip_serializing_if = "TeacherSide::is_both")]
    pub teacher_side: TeacherSide,
    /// GTP teachers: the softmax temperature over GNU Go's move values (about points); 0 puts
    /// the whole policy on the best move.
    pub policy_temperature: f32,
    /// UCI teachers: the softmax temperature over the MultiPV lines' scores, in centipawns.
    pub cp_temperature: f32,
    /// Weight of the game's result in the value target; the teacher's value has the rest.
    pub value_result_weight: f32,
    /// GTP teachers: points of margin that make a value of tanh(1) ≈ 0.76.
    pub score_scale: f32,
    /// UCI teachers: centipawns at which the expected score is 1/(1 + 10^−1) ≈ 0.91.
    pub cp_scale: f32,
    /// GTP teachers: GNU Go's `level` per game, drawn from this inclusive range; `~` keeps the
    /// command line's level.
    pub levels: Option<[u32; 2]>,
    /// UCI teachers: lines searched (`MultiPV`); the policy spreads over at most this many moves.
    pub multipv: u32,
    /// UCI teachers: search limits of every position; at least one is set, the first reached
    /// ends the search.
    pub depth: Option<u32>,
    pub movetime_ms: Option<u64>,
    pub nodes: Option<u64>,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig {
            games_per_shard: 50,
            opening_random_moves: 2,
            opening_sampled_moves: 12,
            store_from_action: 0,
            store_until_action: 0,
            finish: Finish::Teacher,
            teacher_side: TeacherSide::Both,
            policy_temperature: 2.0,
            cp_temperature: 100.0,
            value_result_weight: 0.5,
            score_scale: 10.0,
            cp_scale: 700.0,
            levels: Some([1, 10]),
            multipv: 8,
            depth: Some(8),
            movetime_ms: None,
            nodes: None,
        }
    }
}

/// Who plays a game on after `store_until_action`, where nothing more is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    /// The teacher and its opponent, as before the window's end.
    #[default]
    Teacher,
    /// The opponent agent, for both sides: the result then costs the opponent's time instead of
    /// the teacher's, which for a deep teacher is most of a game's time. Needs an opponent.
    Opponent,
}

impl Finish {
    fn is_teacher(&self) -> bool {
        *self == Finish::Teacher
    }
}

/// Which side the teacher takes in a game against an opponent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeacherSide {
    /// The first side in even games, the second in odd ones.
    #[default]
    Both,
    First,
    Second,
}

impl TeacherSide {
    fn is_both(&self) -> bool {
        *self == TeacherSide::Both
    }

    /// The teacher's side in game `index` of a run.
    fn in_game(self, index: usize) -> Player {
        match self {
            TeacherSide::First => Player::First,
            TeacherSide::Second => Player::Second,
            TeacherSide::Both if index.is_multiple_of(2) => Player::First,
            TeacherSide::Both => Player::Second,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl BootstrapConfig {
    /// Range checks: the first key out of range, its value and what is allowed.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        I::check(
            self.games_per_shard >= 1,
            "games_per_shard",
            self.games_per_shard,
            "1 or more",
        )?;
        I::check(
            self.store_until_action == 0 || self.store_until_action > self.store_from_action,
            "store_until_action",
            self.store_until_action,
            "0 (no end), or more than store_from_action",
        )?;
        for (key, t) in [
            ("policy_temperature", self.policy_temperature),
            ("cp_temperature", self.cp_temperature),
        ] {
            I::check(t.is_finite() && t >= 0.0, key, t, "a finite number ≥ 0")?;
        }
        I::check(
            (0.0..=1.0).contains(&self.value_result_weight),
            "value_result_weight",
            self.value_result_weight,
            "0 to 1",
        )?;
        for (key, s) in [
            ("score_scale", self.score_scale),
            ("cp_scale", self.cp_scale),
        ] {
            I::check(s.is_finite() && s > 0.0, key, s, "a finite number > 0")?;
        }
        if let Some([lo, hi]) = self.levels {
            I::check(
                lo <= hi && hi <= 20,
                "levels",
                format_args!("[{lo}, {hi}]"),
                "[MIN, MAX] with 0 ≤ MIN ≤ MAX ≤ 20, or ~",
            )?;
        }
        I::check(
            (1..=500).contains(&self.multipv),
            "multipv",
            self.multipv,
            "1 to 500",
        )?;
        I::check(
            self.depth != Some(0),
            "depth",
            0,
            "1 or more, or ~ (no depth limit)",
        )?;
        I::check(
            self.movetime_ms != Some(0),
            "movetime_ms",
            0,
            "1 or more, or ~",
        )?;
        I::check(self.nodes != Some(0), "nodes", 0, "1 or more, or ~")?;
        I::check(
            self.depth.is_some() || self.movetime_ms.is_some() || self.nodes.is_some(),
            "depth",
            "~",
            "a depth, or a movetime_ms or nodes limit",
        )?;
        Ok(())
    }
}

/// Why a bootstrap run stopped.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("invalid bootstrap config: {0}")]
    Config(InvalidSetting),
    #[error("shard directory {path}: {reason}")]
    OutDir { path: PathBuf, reason: String },
    /// The teacher's own error is its source: printed as a chain, it is said once.
    #[error("teacher")]
    Teacher(#[from] TeachError),
    #[error("opponent: {0}")]
    Opponent(AgentError),
    #[error("{who} chose {action}, illegal in {position}")]
    Illegal {
        who: String,
        action: String,
        position: String,
    },
    #[error(transparent)]
    Shard(#[from] ShardError),
}

/// What a bootstrap run is asked to do, besides the settings.
#[derive(Clone, Copy, Debug)]
pub struct BootstrapOptions<'a> {
    /// The shard directory (created if missing).
    pub out: &'a Path,
    /// Games the run holds when complete (those of finished shards included).
    pub games: usize,
    pub seed: u64,
    /// The teacher's spec: recorded as each shard's `model`, and part of its name.
    pub teacher: &'a str,
    /// The opponent's spec, when the teacher does not play itself.
    pub opponent: Option<&'a str>,
    /// Show progress on stderr (a bar on a terminal, a plain line every few seconds elsewhere).
    pub progress: bool,
}

/// What a bootstrap run did.
#[derive(Clone, Debug, Default)]
pub struct BootstrapSummary {
    /// Games played by this run.
    pub games: usize,
    /// Games in finished shards of an earlier run, kept.
    pub kept_games: usize,
    /// Positions the teacher advised on.
    pub positions: u64,
    /// Samples written (positions less repeats within a shard).
    pub samples: u64,
    /// Shards written by this run.
    pub shards: Vec<PathBuf>,
    /// Finished shards of an earlier run, kept.
    pub kept_shards: Vec<PathBuf>,
    pub seconds: f64,
    /// Wins of the first player, wins of the second, draws.
    pub results: [usize; 3],
    /// Games that ended in a resignation.
    pub resigned: usize,
    /// With an opponent: the teacher's wins, losses and draws.
    pub teacher_results: [usize; 3],
}

impl BootstrapSummary {
    pub fn games_per_second(&self) -> f64 {
        self.games as f64 / self.seconds.max(1e-9)
    }

    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }

    /// One line for logs and the command's output.
    pub fn line(&self) -> String {
        format!(
            "{} games ({:.2}/s), {} positions ({:.1}/s), {} samples in {} shards; \
             {} games in {} finished shards kept; results first/second/draw {}/{}/{}, \
             resigned {}",
            self.games,
            self.games_per_second(),
            self.positions,
            self.positions_per_second(),
            self.samples,
            self.shards.len(),
            self.kept_games,
            self.kept_shards.len(),
            self.results[0],
            self.results[1],
            self.results[2],
            self.resigned,
        )
    }
}

/// What a run's shards are for: the settings that decide their games, hashed into their names
/// and recorded in their `config` metadata.
#[derive(Serialize)]
struct RunRecord<'a> {
    game: &'static str,
    start: String,
    teacher: &'a str,
    opponent: Option<&'a str>,
    seed: u64,
    bootstrap: &'a BootstrapConfig,
}

/// The shard name stem of a run (see the module docs).
pub fn bootstrap_stem(record_yaml: &str) -> String {
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in record_yaml.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:013}-bootstrap-{h:016x}", 0)
}

/// The seed of game `index` of a run seeded `seed` (SplitMix64 of both): the same game
/// whichever run plays it.
pub fn game_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A position of a game in progress, waiting for the result.
struct Pending {
    hash: u64,
    planes: Vec<f32>,
    policy: Vec<(u16, f32)>,
    mover: Player,
    /// Actions played before it in its game.
    ply: u32,
    teacher_value: Option<f32>,
}

/// How a game ended, for the auxiliary targets of its positions.
struct GameEnd<G> {
    last: G,
    resigned: bool,
    /// Who decided at each ply.
    movers: Vec<Player>,
}

impl<G: Encoding> GameEnd<G> {
    /// The auxiliary targets of the game's stored positions `pending` (in the order played):
    /// the last position's ownership and score from each mover's side where the game ended by
    /// the rules (a resigned game's last position is no end; GNU Go teaches with
    /// `--capture-all-dead`, so its finished boards hold no dead stones), and as the reply the
    /// teacher's policy at the opponent's next decision ([`shards::reply_ply`]) where it was
    /// stored.
    fn aux(&self, pending: &[Pending]) -> Vec<Aux> {
        let ended = !self.resigned && self.last.outcome().is_some();
        pending
            .iter()
            .map(|p| Aux {
                ownership: self.last.final_ownership(p.mover).filter(|_| ended),
                score: self.last.final_score(p.mover).filter(|_| ended),
                reply: shards::reply_ply(&self.movers, p.ply as usize)
                    .and_then(|ply| pending.binary_search_by_key(&ply, |q| q.ply as usize).ok())
                    .map(|k| pending[k].policy.clone()),
                surprise: None,
            })
            .collect()
    }
}

/// One shard's samples, repeats merged: the first occurrence's planes and policy; the value and
/// each auxiliary target the mean over the occurrences that have one.
#[derive(Default)]
struct ShardBuffer {
    samples: Vec<Sample>,
    /// Per sample: its occurrences, and those with an ownership, a score, a reply.
    counts: Vec<[u32; 4]>,
    index: HashMap<u64, usize>,
}

impl ShardBuffer {
    fn add(&mut self, p: Pending, value: f32, aux: Aux) {
        let has = |present: bool| u32::from(present);
        let n = [
            1,
            has(aux.ownership.is_some()),
            has(aux.score.is_some()),
            has(aux.reply.is_some()),
        ];
        let Some(&i) = self.index.get(&p.hash) else {
            self.index.insert(p.hash, self.samples.len());
            self.samples.push(Sample {
                planes: p.planes,
                policy: p.policy,
                value,
                aux,
            });
            self.counts.push(n);
            return;
        };
        let s = &mut self.samples[i];
        s.value += value;
        if let Some(o) = aux.ownership {
            match &mut s.aux.ownership {
                Some(sum) => sum.iter_mut().zip(o).for_each(|(a, b)| *a += b),
                none => *none = Some(o),
            }
        }
        if let Some(v) = aux.score {
            *s.aux.score.get_or_insert(0.0) += v;
        }
        if let Some(r) = aux.reply {
            let sum = s.aux.reply.get_or_insert_with(Vec::new);
            for (j, p) in r {
                match sum.iter_mut().find(|e| e.0 == j) {
                    Some(e) => e.1 += p,
                    None => sum.push((j, p)),
                }
            }
        }
        for (c, k) in self.counts[i].iter_mut().zip(n) {
            *c += k;
        }
    }

    fn into_samples(self) -> Vec<Sample> {
        self.samples
            .into_iter()
            .zip(self.counts)
            .map(|(mut s, [n, own, score, reply])| {
                s.value = (s.value / n as f32).clamp(-1.0, 1.0);
                if let Some(o) = &mut s.aux.ownership {
                    o.iter_mut()
                        .for_each(|x| *x = (*x / own as f32).clamp(-1.0, 1.0));
                }
                if let Some(v) = &mut s.aux.score {
                    *v /= score as f32;
                }
                if let Some(r) = &mut s.aux.reply {
                    r.iter_mut().for_each(|e| e.1 /= reply as f32);
                }
                s
            })
            .collect()
    }
}

/// Plays the missing games of the run `opts` describes and writes their shards (see the module
/// docs). `start` is the first position of every game, in the configured variant.
pub fn bootstrap<'o, G: Encoding>(
    start: &G,
    teacher: &mut dyn Teacher<G>,
    mut opponent: Option<&mut (dyn Agent<G> + 'o)>,
    config: &BootstrapConfig,
    opts: &BootstrapOptions<'_>,
) -> Result<BootstrapSummary, BootstrapError> {
    config.validate().map_err(BootstrapError::Config)?;
    InvalidSetting::check(
        config.finish == Finish::Teacher || opponent.is_some(),
        "finish",
        "opponent",
        "teacher, or opponent with an --opponent agent",
    )
    .map_err(BootstrapError::Config)?;
    InvalidSetting::check(
        config.teacher_side == TeacherSide::Both || opponent.is_some(),
        "teacher_side",
        format!("{:?}", config.teacher_side).to_lowercase(),
        "both, or first or second with an --opponent agent",
    )
    .map_err(BootstrapError::Config)?;
    prepare_dir(opts.out)?;
    let record = RunRecord {
        game: G::NAME,
        start: start.to_text(),
        teacher: opts.teacher,
        opponent: opts.opponent,
        seed: opts.seed,
        bootstrap: config,
    };
    let record_yaml = serde_yaml::to_string(&record).map_err(|e| BootstrapError::OutDir {
        path: opts.out.to_owned(),
        reason: format!("cannot describe the run: {e}"),
    })?;
    let stem = bootstrap_stem(&record_yaml);
    let model = match opts.opponent {
        Some(o) => format!("{} vs {o}", opts.teacher),
        None => opts.teacher.to_string(),
    };

    // Which shards are finished, which games are missing.
    let per = config.games_per_shard;
    let mut summary = BootstrapSummary::default();
    let mut todo = Vec::new();
    for k in 0..opts.games.div_ceil(per) {
        let first = k * per;
        let count = per.min(opts.games - first);
        let path = opts
            .out
            .join(format!("{stem}-{k:04}.{}", shards::EXTENSION));
        match ShardMeta::read(&path) {
            Ok((meta, _)) if meta.games == count && meta.game == G::NAME => {
                summary.kept_games += count;
                summary.kept_shards.push(path);
            }
            _ => todo.push((path, first, count)),
        }
    }

    let bar = if opts.progress {
        Progress::new(todo.iter().map(|t| t.2 as u64).sum(), "bootstrap", "games")
    } else {
        Progress::hidden()
    };
    let began = Instant::now();
    let shape = start.shape();
    let symmetries = shards::symmetry_maps(start);
    for (path, first, count) in todo {
        let mut buffer = ShardBuffer::default();
        for index in first..first + count {
            let seed = game_seed(opts.seed, index);
            let teacher_side = config.teacher_side.in_game(index);
            let (outcome, pending, end) = play_game(
                start,
                teacher,
                opponent.as_deref_mut(),
                teacher_side,
                config,
                seed,
                &mut summary,
            )?;
            summary.results[match outcome {
                Outcome::Win(Player::First) => 0,
                Outcome::Win(Player::Second) => 1,
                Outcome::Draw => 2,
            }] += 1;
            if opponent.is_some() {
                let v = outcome.value_for(teacher_side);
                summary.teacher_results[if v > 0.0 {
                    0
                } else if v < 0.0 {
                    1
                } else {
                    2
                }] += 1;
            }
            let w = config.value_result_weight;
            let aux = end.aux(&pending);
            for (p, aux) in pending.into_iter().zip(aux) {
                let result = outcome.value_for(p.mover);
                let value = match p.teacher_value {
                    Some(t) => w * result + (1.0 - w) * t,
                    None => result,
                };
                buffer.add(p, value.clamp(-1.0, 1.0), aux);
            }
            summary.games += 1;
            summary.seconds = began.elapsed().as_secs_f64();
            bar.set_message(format!(
                "{:.1} positions/s{}",
                summary.positions_per_second(),
                teacher
                    .game_setting()
                    .map(|s| format!(", last game at {s}"))
                    .unwrap_or_default()
            ));
            bar.inc(1);
        }
        let samples = buffer.into_samples();
        summary.samples += samples.len() as u64;
        let shard = Shard {
            meta: ShardMeta {
                game: G::NAME.to_string(),
                planes: shape.planes,
                height: shape.height,
                width: shape.width,
                policy_size: shape.policy_size,
                model: model.clone(),
                config: record_yaml.clone(),
                created_unix: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs(),
                games: count,
                policy_target: shards::PolicyTarget::Teacher,
            },
            samples,
            symmetries: symmetries.clone(),
        };
        shard.write(&path)?;
        tracing::debug!("wrote {} ({} samples)", path.display(), shard.samples.len());
        summary.shards.push(path);
    }
    bar.finish();
    summary.seconds = began.elapsed().as_secs_f64();
    Ok(summary)
}

/// Creates the directory if missing and proves a file can be written in it, so that a bad
/// directory fails before any game is played.
fn prepare_dir(dir: &Path) -> Result<(), BootstrapError> {
    let fail = |reason: String| BootstrapError::OutDir {
        path: dir.to_owned(),
        reason,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail("exists and is not a directory".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
    // A dot-name ending in `.tmp`: shard readers skip it should a kill leave it behind.
    let probe = dir.join(format!(".write-probe.{}.tmp", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(format!("cannot write a file in it: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Plays one game; returns its outcome, its advised positions and how it ended.
fn play_game<'o, G: Encoding>(
    start: &G,
    teacher: &mut dyn Teacher<G>,
    mut opponent: Option<&mut (dyn Agent<G> + 'o)>,
    teacher_side: Player,
    config: &BootstrapConfig,
    seed: u64,
    summary: &mut BootstrapSummary,
) -> Result<(Outcome, Vec<Pending>, GameEnd<G>), BootstrapError> {
    let mut rng = SmallRng::seed_from_u64(seed);
    teacher.new_game(start, seed)?;
    if let Some(o) = opponent.as_deref_mut() {
        o.new_game(start).map_err(BootstrapError::Opponent)?;
    }
    let random = config.opening_random_moves;
    let sampled = random.saturating_add(config.opening_sampled_moves);
    let mut state = start.clone();
    let mut pending = Vec::new();
    let mut ply = 0u32;
    let mut movers = Vec::new();
    let mut resigned = false;
    let outcome = loop {
        if let Some(outcome) = state.outcome() {
            break outcome;
        }
        let mover = state.to_act();
        movers.push(mover);
        let past_window = config.store_until_action != 0 && ply >= config.store_until_action;
        let store = ply >= config.store_from_action && !past_window;
        let opponent_moves =
            mover != teacher_side || (past_window && config.finish == Finish::Opponent);
        let advice = if store {
            Some(teacher.advise(&state)?)
        } else {
            None
        };
        if let Some(advice) = &advice {
            summary.positions += 1;
            if let Some(p) = pending_sample(&state, &advice.policy, advice.value, ply) {
                pending.push(p);
            }
        }
        let (decision, who) = if ply < random {
            (
                random_action(&state, &mut rng).map(Decision::Play),
                "opening",
            )
        } else if let Some(o) = opponent.as_deref_mut().filter(|_| opponent_moves) {
            let d = o.decide(&state).map_err(BootstrapError::Opponent)?;
            (Some(d), "the opponent")
        } else {
            // The teacher chooses: asked here where its answer was not stored.
            let advice = match advice {
                Some(advice) => advice,
                None => teacher.advise(&state)?,
            };
            if ply < sampled && !advice.policy.is_empty() {
                (
                    Some(Decision::Play(sample(&advice.policy, &mut rng))),
                    "the teacher's policy",
                )
            } else {
                (Some(advice.decision), "the teacher")
            }
        };
        let action = match decision {
            Some(Decision::Play(a)) => a,
            Some(Decision::Resign) => {
                summary.resigned += 1;
                resigned = true;
                break Outcome::Win(mover.opponent());
            }
            // No legal action yet no outcome: the rules forbid it, so it is the rules' error.
            None => {
                return Err(BootstrapError::Illegal {
                    who: who.into(),
                    action: "nothing".into(),
                    position: state.to_text(),
                })
            }
        };
        if !state.is_legal(action) {
            return Err(BootstrapError::Illegal {
                who: who.into(),
                action: state.format_action(action),
                position: state.to_text(),
            });
        }
        teacher.observe(&state, action)?;
        if let Some(o) = opponent.as_deref_mut() {
            o.observe(&state, action)
                .map_err(BootstrapError::Opponent)?;
        }
        state.play_unchecked(action);
        ply += 1;
    };
    let end = GameEnd {
        last: state,
        resigned,
        movers,
    };
    Ok((outcome, pending, end))
}

/// The sample of `state` with the teacher's policy: illegal and repeated entries dropped,
/// probabilities renormalised. `None` when nothing legal is left.
fn pending_sample<G: Encoding>(
    state: &G,
    policy: &[(G::Action, f32)],
    teacher_value: Option<f32>,
    ply: u32,
) -> Option<Pending> {
    let mut entries: Vec<(u16, f32)> = Vec::with_capacity(policy.len());
    for &(a, p) in policy {
        if !(p.is_finite() && p > 0.0 && state.is_legal(a)) {
            continue;
        }
        let i = state.action_index(a) as u16;
        match entries.iter_mut().find(|(j, _)| *j == i) {
            Some(e) => e.1 += p,
            None => entries.push((i, p)),
        }
    }
    let total: f32 = entries.iter().map(|e| e.1).sum();
    if entries.is_empty() || total <= 0.0 {
        return None;
    }
    entries.iter_mut().for_each(|e| e.1 /= total);
    let mut planes = vec![0.0; state.shape().input_len()];
    state.encode(&mut planes);
    Some(Pending {
        hash: state.hash(),
        planes,
        policy: entries,
        mover: state.to_act(),
        ply,
        teacher_value: teacher_value
            .filter(|v| v.is_finite())
            .map(|v| v.clamp(-1.0, 1.0)),
    })
}

/// An action drawn from a policy (weights need not sum to exactly 1).
fn sample<A: Copy>(policy: &[(A, f32)], rng: &mut SmallRng) -> A {
    let total: f32 = policy.iter().map(|e| e.1.max(0.0)).sum();
    let mut x = rng.gen::<f32>() * total;
    for &(a, p) in policy {
        x -= p.max(0.0);
        if x < 0.0 {
            return a;
        }
    }
    policy[policy.len() - 1].0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_name_their_key() {
        BootstrapConfig::default().validate().unwrap();
        let bad = |f: fn(&mut BootstrapConfig)| {
            let mut c = BootstrapConfig::default();
            f(&mut c);
            c.validate().unwrap_err().key
        };
        assert_eq!(bad(|c| c.games_per_shard = 0), "games_per_shard");
        assert_eq!(
            bad(|c| {
                c.store_from_action = 36;
                c.store_until_action = 36;
            }),
            "store_until_action"
        );
        assert_eq!(bad(|c| c.value_result_weight = 1.5), "value_result_weight");
        assert_eq!(
            bad(|c| c.policy_temperature = f32::NAN),
            "policy_temperature"
        );
        assert_eq!(bad(|c| c.cp_scale = 0.0), "cp_scale");
        assert_eq!(bad(|c| c.levels = Some([5, 2])), "levels");
        assert_eq!(bad(|c| c.multipv = 0), "multipv");
        assert_eq!(
            bad(|c| {
                c.depth = None;
            }),
            "depth"
        );
        assert_eq!(bad(|c| c.nodes = Some(0)), "nodes");
    }

    #[test]
    fn game_seeds_differ_and_repeat() {
        assert_eq!(game_seed(7, 3), game_seed(7, 3));
        assert_ne!(game_seed(7, 3), game_seed(7, 4));
        assert_ne!(game_seed(7, 3), game_seed(8, 3));
    }

    #[test]
    fn the_config_section_reads_from_yaml() {
        let c: BootstrapConfig =
            serde_yaml::from_str("games_per_shard: 10\nlevels: [0, 3]\ndepth: ~\nnodes: 20000\n")
                .unwrap();
        assert_eq!(c.games_per_shard, 10);
        assert_eq!(c.levels, Some([0, 3]));
        assert_eq!((c.depth, c.nodes), (None, Some(20000)));
        c.validate().unwrap();
        assert!(serde_yaml::from_str::<BootstrapConfig>("depht: 3\n").is_err());
    }
}
