//! Agent specs: the one grammar that names a player everywhere — on the command line
//! (`--black`, `--agent`), in configs, over GTP and UCI and on the web page — and the one
//! builder that turns a spec into an [`Agent`], with one set of defaults.
//!
//! A spec is `kind` or `kind:key=value,key=value`: `random`, `mcts:visits=800` (random
//! playouts), `net:model=PATH,visits=200` (`model` omitted: the game's default network;
//! `search=gumbel` for Gumbel AlphaZero's root in place of PUCT), and the
//! game's own kinds ([`OwnPlayers`]: Xiangqi's `alphabeta`, `fairy-stockfish`, `uci:cmd=…`; Go's
//! `gtp:cmd=…`, `playout`; Liuzhou's `alphabeta`). Parsing checks every key and value and says
//! which one is wrong.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eval::Evaluator;
use games::{Agent, AgentError, RandomAgent};
use search::{Limit, MctsAgent, MctsAgentConfig, Playable, RunOptions, SearchConfig, SearchKind};

/// A spec that could not be read: the whole spec, the key at fault (if any) and why.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("agent spec {spec:?}{}: {reason}", key.as_ref().map(|k| format!(", key `{k}`")).unwrap_or_default())]
pub struct SpecError {
    pub spec: String,
    pub key: Option<String>,
    pub reason: SpecReason,
}

/// Why a spec could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecReason {
    #[error("no agent kind")]
    NoKind,
    #[error("expected key=value")]
    NotKeyValue,
    #[error("given twice")]
    GivenTwice,
    /// A key the kind does not read.
    #[error("not a key of `{kind}` (keys: {})", allowed.join(", "))]
    UnknownKey {
        kind: &'static str,
        allowed: &'static [&'static str],
    },
    /// A value outside what the key takes (`expected` says what it takes).
    #[error("{value:?} is not {expected}")]
    BadValue { value: String, expected: String },
    /// The key means something only beside another setting (`search=gumbel`, `time=S`, …).
    #[error("needs {0}")]
    Needs(&'static str),
}

/// Why [`build`] made no player.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A kind that is neither generic (`random`, `mcts`, `net`) nor one of the game's own
    /// ([`OwnPlayers::OWN_KINDS`]); the game's factory words the refusal.
    #[error("{refusal}")]
    UnknownKind {
        kind: String,
        game: &'static str,
        refusal: AgentError,
    },
    /// One of the game's own players refused its settings or could not start, or the game has
    /// no guard or handoff for a spec that asks for one.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The network of a `net` agent did not load (the loader's error, with its causes).
    #[error(transparent)]
    Network(anyhow::Error),
    /// A `net` agent's `batch` above what the loaded model runs at once.
    #[error("batch={asked} is more than the model's batch size {most} (the config's inference.batch_size)")]
    BatchTooLarge { asked: usize, most: usize },
    /// A builder of tree searches ([`build_mcts`]) given another kind.
    #[error("agent spec {label:?} is not a tree search (mcts or net)")]
    NotTreeSearch { label: String },
}

/// How an MCTS agent searches; shared by the pure (`mcts`) and network (`net`) kinds.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsSpec {
    /// Playouts per move (`visits=N`).
    pub visits: Option<u64>,
    /// Seconds per move (`time=S`); with `visits`, whichever ends first.
    pub time: Option<f64>,
    /// Search threads in the tree (`threads=N`).
    pub threads: usize,
    /// Leaves per evaluator call (`batch=N`); `net` only: at most the evaluator's batch size;
    /// by default [`default_leaves`].
    pub batch: Option<usize>,
    /// Move choice (`temp=T`): 0 plays the most visited action (Gumbel: the best of its last
    /// candidates, without noise).
    pub temperature: f32,
    /// PUCT or Gumbel (`search=puct|gumbel`).
    pub search: SearchKind,
    /// Gumbel: actions sampled at the root (`gumbel_m=N`).
    pub gumbel_m: Option<u32>,
    /// PUCT exploration constant (`cpuct=C`).
    pub c_puct: Option<f32>,
    /// First-play urgency (`fpu=F`, −2 to 2): an unvisited child is valued at its parent's mean
    /// less F; by default the game's ([`search::Tactics::FPU_REDUCTION`]), else the search's.
    pub fpu_reduction: Option<f32>,
    /// Look for one-move wins at each expansion (`decisive=1|0`; see
    /// [`search::SearchConfig::decisive`]); by default where the game asks for it
    /// ([`search::Tactics::DECISIVE_SEARCH`]).
    pub decisive: Option<bool>,
    /// Share of the prior given to captures (`captures=E`, 0 to 1; see
    /// [`search::SearchConfig::capture_prior`]); by default the game's
    /// ([`search::Tactics::CAPTURE_PRIOR`]).
    pub capture_prior: Option<f32>,
    /// Seed of the agent's randomness (`seed=N`).
    pub seed: Option<u64>,
    /// Resign when the chosen move's searched value is below this (`resign=V`, −1 < V < 1);
    /// never by default, so that match results count only games played out.
    pub resign_below: Option<f32>,
    /// Weight of the implicit minimax value in each child's value (`minimax=W`, 0 to 1; see
    /// [`search::SearchConfig::minimax_weight`]).
    pub minimax_weight: Option<f32>,
    /// What a draw costs the agent in its search (`contempt=C`, 0 to 1; see
    /// [`search::SearchConfig::contempt`]).
    pub contempt: Option<f32>,
    /// Weight of the score lead in the search's utility (`score_utility=W`, 0 to 1; see
    /// [`search::SearchConfig::score_utility`]; needs a network with a score head).
    pub score_utility: Option<f32>,
    /// Weight of the score lead over the lead the root expects (`dynamic_score_utility=W`,
    /// 0 to 1; see [`search::SearchConfig::dynamic_score_utility`]; needs a score head).
    pub dynamic_score_utility: Option<f32>,
    /// Share of each move's time given to a tactical check by the game's alpha-beta
    /// (`guard=S`, 0 < S < 1; needs `time`; see [`crate::guard`]).
    pub guard: Option<f64>,
    /// How far below the check's best the tree's move may score, in the game's score units
    /// (`guard_margin=M`; default [`crate::guard::DEFAULT_MARGIN`]).
    pub guard_margin: Option<i32>,
    /// Alpha-beta plays the rest of the game from the point the game's rule names with `K`
    /// (`handoff=K`; needs `time`; Liuzhou: `K` or fewer empty points in the placement; see
    /// [`crate::handoff`]).
    pub handoff: Option<u32>,
    /// Symmetric images each position is evaluated as, the answers averaged (`views=N`; `net`
    /// only; 1, the position as given, by default; see [`eval::Symmetric`]).
    pub views: usize,
}

impl Default for MctsSpec {
    fn default() -> Self {
        MctsSpec {
            visits: None,
            time: None,
            threads: 1,
            batch: None,
            temperature: 0.0,
            search: SearchKind::Puct,
            gumbel_m: None,
            c_puct: None,
            fpu_reduction: None,
            decisive: None,
            capture_prior: None,
            seed: None,
            resign_below: None,
            minimax_weight: None,
            contempt: None,
            score_utility: None,
            dynamic_score_utility: None,
            guard: None,
            guard_margin: None,
            handoff: None,
            views: 1,
        }
    }
}

/// A parsed agent spec.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentSpec {
    /// `random[:seed=N]`: uniformly random legal actions.
    Random { seed: Option<u64> },
    /// `mcts:…`: MCTS with random playouts, no network (visits default 800).
    Mcts(MctsSpec),
    /// `net[:model=PATH,…]`: MCTS with a network (visits default 200); no `model`: the game's
    /// default network, as the caller's loader finds it.
    Net {
        model: Option<PathBuf>,
        mcts: MctsSpec,
    },
    /// Any other kind (`alphabeta:…`, `uci:…`, …): the whole spec, for the game's own players
    /// to read (see [`OwnPlayers`]).
    Other(String),
}

impl AgentSpec {
    pub fn parse(spec: &str) -> Result<AgentSpec, SpecError> {
        let err = |key: Option<&str>, reason: SpecReason| SpecError {
            spec: spec.to_string(),
            key: key.map(str::to_string),
            reason,
        };
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut pairs = Vec::new();
        for item in rest.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| err(Some(item.trim()), SpecReason::NotKeyValue))?;
            let (k, v) = (k.trim(), v.trim());
            if pairs.iter().any(|(seen, _)| *seen == k) {
                return Err(err(Some(k), SpecReason::GivenTwice));
            }
            pairs.push((k, v));
        }
        let mut mcts = MctsSpec::default();
        let mut model = None;
        let mut seed = None;
        let (kind, allowed): (&'static str, &'static [&'static str]) = match kind.trim() {
            "random" => ("random", &["seed"]),
            "mcts" => (
                "mcts",
                &[
                    "visits",
                    "time",
                    "threads",
                    "temp",
                    "cpuct",
                    "fpu",
                    "seed",
                    "resign",
                    "search",
                    "gumbel_m",
                    "decisive",
                    "captures",
                    "minimax",
                    "contempt",
                    "score_utility",
                    "dynamic_score_utility",
                    "guard",
                    "guard_margin",
                    "handoff",
                ],
            ),
            "net" => (
                "net",
                &[
                    "model",
                    "visits",
                    "time",
                    "threads",
                    "batch",
                    "temp",
                    "cpuct",
                    "fpu",
                    "seed",
                    "resign",
                    "search",
                    "gumbel_m",
                    "decisive",
                    "captures",
                    "minimax",
                    "contempt",
                    "score_utility",
                    "dynamic_score_utility",
                    "guard",
                    "guard_margin",
                    "handoff",
                    "views",
                ],
            ),
            "" => return Err(err(None, SpecReason::NoKind)),
            // Another kind: the game's own factory reads it (and names what is wrong).
            _ => return Ok(AgentSpec::Other(spec.trim().to_string())),
        };
        for (k, v) in pairs {
            if !allowed.contains(&k) {
                return Err(err(Some(k), SpecReason::UnknownKey { kind, allowed }));
            }
            let bad = |what: &str| {
                let (value, expected) = (v.to_string(), what.to_string());
                err(Some(k), SpecReason::BadValue { value, expected })
            };
            match k {
                "seed" => {
                    let s = Some(v.parse::<u64>().map_err(|_| bad("an unsigned integer"))?);
                    seed = s;
                    mcts.seed = s;
                }
                "visits" => {
                    let n = v.parse::<u64>().map_err(|_| bad("a positive integer"))?;
                    if n == 0 || n > MAX_VISITS {
                        return Err(bad(&format!("a visit count in 1..={MAX_VISITS}")));
                    }
                    mcts.visits = Some(n);
                }
                "time" => {
                    let t = v.parse::<f64>().map_err(|_| bad("a number of seconds"))?;
                    if !(t > 0.0 && t.is_finite()) {
                        return Err(bad("a positive number of seconds"));
                    }
                    mcts.time = Some(t);
                }
                "threads" => {
                    let n = v.parse::<usize>().map_err(|_| bad("a positive integer"))?;
                    if n == 0 || n > MAX_THREADS {
                        return Err(bad(&format!("a thread count in 1..={MAX_THREADS}")));
                    }
                    mcts.threads = n;
                }
                "batch" => {
                    let n = v.parse::<usize>().map_err(|_| bad("a positive integer"))?;
                    if n == 0 {
                        return Err(bad("a positive integer"));
                    }
                    mcts.batch = Some(n);
                }
                "temp" => {
                    let t = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(t >= 0.0 && t.is_finite()) {
                        return Err(bad("a temperature ≥ 0"));
                    }
                    mcts.temperature = t;
                }
                "cpuct" => {
                    let c = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(c > 0.0 && c.is_finite()) {
                        return Err(bad("a positive number"));
                    }
                    mcts.c_puct = Some(c);
                }
                "fpu" => {
                    let f = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    // Values lie in [−1, 1]: beyond ±2 the order of unvisited against visited
                    // children no longer changes. A negative reduction values an unvisited
                    // child above its parent's mean, so every move is tried sooner.
                    if !(-2.0..=2.0).contains(&f) {
                        return Err(bad("a reduction from -2 to 2"));
                    }
                    mcts.fpu_reduction = Some(f);
                }
                "decisive" => {
                    mcts.decisive = Some(match v {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        _ => return Err(bad("1 or 0")),
                    });
                }
                "captures" => {
                    let e = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(0.0..=1.0).contains(&e) {
                        return Err(bad("a share from 0 to 1"));
                    }
                    mcts.capture_prior = Some(e);
                }
                "minimax" => {
                    let w = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(0.0..=1.0).contains(&w) {
                        return Err(bad("a weight from 0 to 1"));
                    }
                    mcts.minimax_weight = Some(w);
                }
                "contempt" => {
                    let c = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(0.0..=1.0).contains(&c) {
                        return Err(bad("a value from 0 to 1"));
                    }
                    mcts.contempt = Some(c);
                }
                "score_utility" => {
                    let w = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(0.0..=1.0).contains(&w) {
                        return Err(bad("a weight from 0 to 1"));
                    }
                    mcts.score_utility = Some(w);
                }
                "dynamic_score_utility" => {
                    let w = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    if !(0.0..=1.0).contains(&w) {
                        return Err(bad("a weight from 0 to 1"));
                    }
                    mcts.dynamic_score_utility = Some(w);
                }
                "guard" => {
                    let g = v.parse::<f64>().map_err(|_| bad("a number"))?;
                    if !(g > 0.0 && g < 1.0) {
                        return Err(bad("a share between 0 and 1 (exclusive)"));
                    }
                    mcts.guard = Some(g);
                }
                "guard_margin" => {
                    let c = v.parse::<i32>().map_err(|_| bad("an integer"))?;
                    if !(0..=10_000).contains(&c) {
                        return Err(bad(
                            "a margin from 0 to 10000 (centipawns, hundredths of a stone)",
                        ));
                    }
                    mcts.guard_margin = Some(c);
                }
                "views" => {
                    let n = v.parse::<usize>().map_err(|_| bad("a positive integer"))?;
                    if !(1..=8).contains(&n) {
                        return Err(bad("a number of views from 1 to 8"));
                    }
                    mcts.views = n;
                }
                "handoff" => {
                    let k = v.parse::<u32>().map_err(|_| bad("a number of points"))?;
                    if k > 36 {
                        return Err(bad("a number of points from 0 to 36"));
                    }
                    mcts.handoff = Some(k);
                }
                "resign" => {
                    let r = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    // Values lie in [−1, 1]: −1 or less never resigns, 1 or more always would.
                    if !(r > -1.0 && r < 1.0) {
                        return Err(bad("a value between −1 and 1 (exclusive)"));
                    }
                    mcts.resign_below = Some(r);
                }
                "search" => {
                    mcts.search = v.parse().map_err(|_| bad("a search (puct or gumbel)"))?;
                }
                "gumbel_m" => {
                    let n = v.parse::<u32>().map_err(|_| bad("a positive integer"))?;
                    if !(1..=u32::from(u16::MAX)).contains(&n) {
                        return Err(bad("a number of actions in 1..=65535"));
                    }
                    mcts.gumbel_m = Some(n);
                }
                "model" => {
                    if v.is_empty() {
                        return Err(bad("a model path"));
                    }
                    model = Some(PathBuf::from(v));
                }
                _ => unreachable!("checked against `allowed`"),
            }
        }
        if mcts.gumbel_m.is_some() && mcts.search != SearchKind::Gumbel {
            return Err(err(Some("gumbel_m"), SpecReason::Needs("search=gumbel")));
        }
        if mcts.guard_margin.is_some() && mcts.guard.is_none() {
            return Err(err(Some("guard_margin"), SpecReason::Needs("guard=S")));
        }
        if mcts.guard.is_some() && mcts.time.is_none() {
            // The check takes its share of a move's time; a visit budget has none to share.
            return Err(err(Some("guard"), SpecReason::Needs("time=S")));
        }
        if mcts.handoff.is_some() && mcts.time.is_none() {
            // Alpha-beta plays its part at the tree's time a move.
            return Err(err(Some("handoff"), SpecReason::Needs("time=S")));
        }
        Ok(match kind {
            "random" => AgentSpec::Random { seed },
            "mcts" => {
                if mcts.visits.is_none() && mcts.time.is_none() {
                    mcts.visits = Some(800);
                }
                AgentSpec::Mcts(mcts)
            }
            _ => {
                if mcts.visits.is_none() && mcts.time.is_none() {
                    mcts.visits = Some(200);
                }
                AgentSpec::Net { model, mcts }
            }
        })
    }
}

impl AgentSpec {
    /// The tree search a protocol face sets up from its options: `net` (with the network the
    /// caller's loader gives) or `mcts`, `visits` per move on `threads` threads, seeded.
    pub fn tree(network: bool, visits: u64, threads: usize, seed: u64) -> AgentSpec {
        let mcts = MctsSpec {
            visits: Some(visits),
            threads,
            seed: Some(seed),
            ..MctsSpec::default()
        };
        if network {
            AgentSpec::Net { model: None, mcts }
        } else {
            AgentSpec::Mcts(mcts)
        }
    }

    /// Searches by `kind` (a tree search's `search=`); other kinds ignore it.
    pub fn searching(mut self, kind: SearchKind) -> AgentSpec {
        if let AgentSpec::Mcts(m) | AgentSpec::Net { mcts: m, .. } = &mut self {
            m.search = kind;
        }
        self
    }

    /// Resign below `value` (a tree search's `resign=`); other kinds ignore it.
    pub fn resigning_below(mut self, value: Option<f32>) -> AgentSpec {
        if let AgentSpec::Mcts(m) | AgentSpec::Net { mcts: m, .. } = &mut self {
            m.resign_below = value;
        }
        self
    }
}

/// A loader for faces that hold their network already (or none).
pub fn preloaded<G: Playable>(
    net: Option<Arc<dyn Evaluator<G>>>,
) -> impl Fn(Option<&Path>) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    move |_| {
        net.clone()
            .ok_or_else(|| anyhow::anyhow!("no network is loaded for {}", G::NAME))
    }
}

impl std::str::FromStr for AgentSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        AgentSpec::parse(s)
    }
}

/// Loads the network of a `net` agent: its `model=` value, or `None` for the game's default.
pub type NetLoader<'a, G> = &'a dyn Fn(Option<&Path>) -> anyhow::Result<Arc<dyn Evaluator<G>>>;

/// The kinds of player a game has beside the generic `random`, `mcts` and `net`, and the
/// handicap a match may give the first of them.
pub trait OwnPlayers: Playable {
    /// Their kinds, the preferred one first (empty when the game has none).
    const OWN_KINDS: &'static [&'static str] = &[];

    /// The start of a match whose first agent takes `stones` handicap stones (`engine match
    /// --handicap`): Go's fixed placement, White to move; other games have none.
    fn handicap_start(&self, stones: usize) -> anyhow::Result<Self> {
        let _ = stones;
        anyhow::bail!("a handicap is for Go matches; {} has none", Self::NAME)
    }

    /// `agent`, a tree search of `time` a move, with its moves checked by the game's
    /// alpha-beta (a spec's `guard`); games without such a check refuse.
    fn guarded(
        agent: Box<dyn Agent<Self>>,
        time: Duration,
        guard: crate::guard::GuardSpec,
    ) -> Result<Box<dyn Agent<Self>>, AgentError> {
        let _ = (agent, time, guard);
        Err(AgentError::new(
            "guard",
            format!("{} has no guard (Xiangqi and Liuzhou have)", Self::NAME),
        ))
    }

    /// `agent`, a tree search of `time` a move, handing the game to the game's alpha-beta
    /// where `points` (a spec's `handoff`) says; games without such a part refuse.
    fn handed_off(
        agent: Box<dyn Agent<Self>>,
        time: Duration,
        points: u32,
    ) -> Result<Box<dyn Agent<Self>>, AgentError> {
        let _ = (agent, time, points);
        Err(AgentError::new(
            "handoff",
            format!("{} has no handoff (Liuzhou has)", Self::NAME),
        ))
    }

    /// Builds the player a whole spec of one of [`OwnPlayers::OWN_KINDS`] names.
    fn own_agent(spec: &str) -> Result<Box<dyn Agent<Self>>, AgentError> {
        let kind = spec.split_once(':').map_or(spec, |(k, _)| k).trim();
        Err(AgentError::new(
            spec,
            format!(
                "unknown agent kind {kind:?} for {} (expected random, mcts or net{})",
                Self::NAME,
                Self::OWN_KINDS
                    .iter()
                    .map(|k| format!(", {k}"))
                    .collect::<String>()
            ),
        ))
    }
}

/// Most visits per move and threads per tree a spec may ask for.
pub const MAX_VISITS: u64 = 100_000_000;
pub const MAX_THREADS: usize = 256;

/// Arena nodes allowed per visit: an expansion adds one node per legal action (362 on 19 × 19),
/// and the subtree kept from the moves before can hold as many again, so twice the largest
/// expansion. This bounds a tree (32 bytes a node) by its strength; pages are touched only as
/// used, so games with fewer actions use less. (128 a visit is too few: a 9 × 9 game at 100
/// visits fills that arena.)
const NODES_PER_VISIT: u64 = 768;

/// Arena nodes of a search that only a clock limits: 2^24, 512 MiB of address space, touched
/// only as used. A 19 × 19 expansion takes 362 nodes, so this holds about 46 000 expanded
/// positions, many seconds of search.
const UNBOUNDED_NODES: usize = 1 << 24;

/// Builds the agent `spec` names, for every face: `label` names it in tables and records;
/// `seed` is used where the spec gives none; `load_net` finds `net` agents' networks.
pub fn build<G: OwnPlayers>(
    spec: &AgentSpec,
    label: &str,
    seed: u64,
    load_net: NetLoader<'_, G>,
) -> Result<Box<dyn Agent<G>>, BuildError> {
    Ok(match spec {
        AgentSpec::Other(text) => G::own_agent(text).map_err(|refusal| {
            let kind = text.split(':').next().unwrap_or(text).trim();
            if G::OWN_KINDS.contains(&kind) {
                BuildError::Agent(refusal)
            } else {
                BuildError::UnknownKind {
                    kind: kind.to_string(),
                    game: G::NAME,
                    refusal,
                }
            }
        })?,
        AgentSpec::Random { seed: s } => Box::new(RandomAgent::new(s.unwrap_or(seed))),
        AgentSpec::Mcts(m) | AgentSpec::Net { mcts: m, .. } => {
            let agent = Box::new(build_mcts(spec, label, seed, load_net)?);
            let agent = match (m.guard, m.time) {
                (Some(share), Some(time)) => {
                    let guard = crate::guard::GuardSpec {
                        share,
                        margin: m.guard_margin.unwrap_or(crate::guard::DEFAULT_MARGIN),
                    };
                    G::guarded(agent, Duration::from_secs_f64(time), guard)?
                }
                _ => agent,
            };
            match (m.handoff, m.time) {
                (Some(points), Some(time)) => {
                    G::handed_off(agent, Duration::from_secs_f64(time), points)?
                }
                _ => agent,
            }
        }
    })
}

/// [`build`] for a protocol that drives Xiangqi's search itself (UCI and UCCI: limits per
/// move, `stop`, progress, banned moves): alpha-beta or a tree search, whose timed moves the
/// guard checks when the spec has a `guard` (see [`crate::driven::build`]).
pub fn build_driven(
    spec: &AgentSpec,
    label: &str,
    seed: u64,
    load_net: NetLoader<'_, games::xiangqi::Xiangqi>,
) -> anyhow::Result<Box<dyn crate::driven::DrivenSearch>> {
    crate::driven::build(spec, label, seed, load_net)
}

/// [`build`] for a spec given as text that needs no network loaded (`random`, `mcts:…`, the
/// game's own kinds): faces that hold no network, fuzzing and tests.
pub fn build_text<G: OwnPlayers>(text: &str, seed: u64) -> Result<Box<dyn Agent<G>>, BuildError> {
    let spec = AgentSpec::parse(text)?;
    let label = text.split(':').next().unwrap_or(text).trim();
    build(&spec, label, seed, &preloaded(None))
}

/// [`build`] for the tree-search kinds (`mcts`, `net`), as the concrete agent that protocol
/// faces drive directly (a halt flag for UCI's `stop`, analysis under a clock). Refuses other
/// kinds.
pub fn build_mcts<G: Playable>(
    spec: &AgentSpec,
    label: &str,
    seed: u64,
    load_net: NetLoader<'_, G>,
) -> Result<MctsAgent<G>, BuildError> {
    let (m, evaluator, run, cache) = match spec {
        AgentSpec::Mcts(m) => {
            let seed = m.seed.unwrap_or(seed);
            let evaluator: Arc<dyn Evaluator<G>> = Arc::new(eval::RolloutEvaluator::<G>::new(seed));
            // One leaf per thread at a time: plain sequential MCTS on one thread.
            let run = RunOptions {
                threads: m.threads,
                leaves_per_thread: 1,
                combine: false,
                batch_wait: Duration::from_micros(500),
            };
            // A rollout's value is one random sample: caching it would freeze the noise.
            (m, evaluator, run, false)
        }
        AgentSpec::Net { model, mcts: m } => {
            let mut evaluator = load_net(model.as_deref()).map_err(BuildError::Network)?;
            if m.views > 1 {
                evaluator = Arc::new(eval::Symmetric::new(evaluator, m.views));
            }
            let most = evaluator.batch_size().max(1);
            if let Some(b) = m.batch.filter(|&b| b > most) {
                // The caller's context names the agent; the label would say it twice.
                return Err(BuildError::BatchTooLarge { asked: b, most });
            }
            let batch = m
                .batch
                .unwrap_or_else(|| {
                    default_leaves(m.visits, most, evaluator.calls_cost_whole_batch())
                })
                .clamp(1, most);
            // Threads share the evaluator's batch: each gathers its part of it.
            let run = RunOptions {
                threads: m.threads,
                leaves_per_thread: batch.div_ceil(m.threads).max(1),
                combine: m.threads > 1,
                batch_wait: Duration::from_micros(500),
            };
            (m, evaluator, run, true)
        }
        _ => {
            let label = label.to_string();
            return Err(BuildError::NotTreeSearch { label });
        }
    };
    let defaults = SearchConfig::default();
    let search = SearchConfig {
        search: m.search,
        gumbel_m: m.gumbel_m.unwrap_or(defaults.gumbel_m),
        c_puct: m.c_puct.unwrap_or(defaults.c_puct),
        fpu_reduction: m
            .fpu_reduction
            .or(G::FPU_REDUCTION)
            .unwrap_or(defaults.fpu_reduction),
        decisive: m.decisive.unwrap_or(G::DECISIVE_SEARCH),
        capture_prior: m.capture_prior.unwrap_or(G::CAPTURE_PRIOR),
        minimax_weight: m.minimax_weight.unwrap_or(defaults.minimax_weight),
        contempt: m.contempt.unwrap_or(defaults.contempt),
        score_utility: m.score_utility.unwrap_or(defaults.score_utility),
        dynamic_score_utility: m
            .dynamic_score_utility
            .unwrap_or(defaults.dynamic_score_utility),
        cache_entries: if cache { defaults.cache_entries } else { 0 },
        max_nodes: arena_nodes(m.visits),
        ..defaults
    };
    Ok(MctsAgent::new(
        mcts_config(label, m, search, run),
        evaluator,
    ))
}

/// Arena nodes for a search of at most `visits` (see [`NODES_PER_VISIT`]); a search that only
/// a clock limits gets [`UNBOUNDED_NODES`].
fn arena_nodes(visits: Option<u64>) -> usize {
    match visits {
        Some(v) => usize::try_from(v.saturating_mul(NODES_PER_VISIT) + 1024)
            .unwrap_or(UNBOUNDED_NODES)
            .min(UNBOUNDED_NODES),
        None => UNBOUNDED_NODES,
    }
}

/// Leaves a `net` agent gathers per evaluator call when its spec gives no `batch`.
///
/// Each leaf of a call is chosen without the values of the others (virtual loss stands in
/// for them), so with few visits per move many leaves per call cost strength
/// (docs/experiments/search.md, "Leaves per network call"). On the CPU a call runs only the
/// rows it holds, rounded up to 8, so 8 leaves search about as fast as more: there the default
/// is [`SMALL_CALL`] (fewer for budgets under 96 visits, a twelfth of them). Where a call
/// costs the whole batch whatever it holds (`whole_batch_calls`: GPUs, TensorRT) it is a
/// twelfth of the visits up to the batch, and the batch when only time limits the search.
/// `batch=N` chooses.
pub fn default_leaves(
    visits: Option<u64>,
    evaluator_batch: usize,
    whole_batch_calls: bool,
) -> usize {
    let most = if whole_batch_calls {
        evaluator_batch.max(1)
    } else {
        evaluator_batch.clamp(1, SMALL_CALL)
    };
    match visits {
        Some(v) => usize::try_from(v.div_ceil(12))
            .unwrap_or(most)
            .clamp(1, most),
        None => most,
    }
}

/// Leaves per call of a CPU search by default.
pub const SMALL_CALL: usize = 8;

fn mcts_config(name: &str, m: &MctsSpec, search: SearchConfig, run: RunOptions) -> MctsAgentConfig {
    MctsAgentConfig {
        name: name.to_string(),
        search,
        limit: Limit {
            visits: m.visits,
            time: m.time.map(Duration::from_secs_f64),
        },
        run,
        temperature: m.temperature,
        seed: m.seed.unwrap_or(0),
        resign_below: m.resign_below,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_agents_gather_few_leaves_on_the_cpu_and_more_where_calls_cost_the_batch() {
        // The CPU: 8 leaves, fewer for small budgets (a twelfth of the visits).
        assert_eq!(default_leaves(Some(200), 64, false), 8);
        assert_eq!(default_leaves(Some(5000), 64, false), 8);
        assert_eq!(default_leaves(Some(60), 64, false), 5);
        assert_eq!(default_leaves(Some(1), 64, false), 1);
        assert_eq!(default_leaves(None, 64, false), 8);
        assert_eq!(default_leaves(Some(200), 4, false), 4);
        // A GPU: a twelfth of the visits up to the batch; time alone, the whole batch.
        assert_eq!(default_leaves(Some(200), 64, true), 17);
        assert_eq!(default_leaves(Some(800), 64, true), 64);
        assert_eq!(default_leaves(Some(5000), 64, true), 64);
        assert_eq!(default_leaves(Some(1), 64, true), 1);
        assert_eq!(default_leaves(Some(64), 8, true), 6);
        assert_eq!(default_leaves(None, 64, true), 64);
        assert_eq!(default_leaves(Some(100), 0, true), 1);
        assert_eq!(default_leaves(Some(100), 0, false), 1);
    }

    #[test]
    fn reads_every_kind() {
        assert_eq!(
            AgentSpec::parse("random").unwrap(),
            AgentSpec::Random { seed: None }
        );
        assert_eq!(
            AgentSpec::parse("random:seed=7").unwrap(),
            AgentSpec::Random { seed: Some(7) }
        );
        let AgentSpec::Mcts(m) = AgentSpec::parse("mcts").unwrap() else {
            panic!("not mcts")
        };
        assert_eq!(m.visits, Some(800));
        let AgentSpec::Mcts(m) = AgentSpec::parse("mcts:time=0.5, threads=2,temp=1").unwrap()
        else {
            panic!("not mcts")
        };
        assert_eq!(
            (m.visits, m.time, m.threads, m.temperature),
            (None, Some(0.5), 2, 1.0)
        );
        let AgentSpec::Net { model, mcts } =
            AgentSpec::parse("net:model=models/liuzhou/x.onnx,visits=200,batch=64").unwrap()
        else {
            panic!("not net")
        };
        assert_eq!(model, Some(PathBuf::from("models/liuzhou/x.onnx")));
        assert_eq!((mcts.visits, mcts.batch), (Some(200), Some(64)));
        assert_eq!(mcts.resign_below, None);
        let AgentSpec::Mcts(m) = AgentSpec::parse("mcts:resign=-0.95").unwrap() else {
            panic!("not mcts")
        };
        assert_eq!(m.resign_below, Some(-0.95));
        assert_eq!(m.search, SearchKind::Puct, "PUCT unless asked");
        let AgentSpec::Net { mcts, .. } =
            AgentSpec::parse("net:model=m.onnx,search=gumbel,visits=16,gumbel_m=8").unwrap()
        else {
            panic!("not net")
        };
        assert_eq!(
            (mcts.search, mcts.visits, mcts.gumbel_m),
            (SearchKind::Gumbel, Some(16), Some(8))
        );
        assert_eq!(mcts.decisive, None, "the game's default unless asked");
        for (text, decisive) in [("net:decisive=0", false), ("mcts:decisive=1", true)] {
            let (AgentSpec::Net { mcts: m, .. } | AgentSpec::Mcts(m)) =
                AgentSpec::parse(text).unwrap()
            else {
                panic!("{text}: not a tree search")
            };
            assert_eq!(m.decisive, Some(decisive), "{text}");
        }
        let AgentSpec::Net { mcts, .. } = AgentSpec::parse("net:minimax=0.5").unwrap() else {
            panic!("not net")
        };
        assert_eq!(mcts.minimax_weight, Some(0.5));
        let no_net =
            |_: Option<&Path>| -> anyhow::Result<Arc<dyn Evaluator<games::liuzhou::Liuzhou>>> {
                anyhow::bail!("no network")
            };
        let spec = AgentSpec::parse("mcts:minimax=0.25").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().minimax_weight, 0.25);
        let spec = AgentSpec::parse("mcts:contempt=0.2").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().contempt, 0.2);
        let spec = AgentSpec::parse("mcts:score_utility=0.1").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().score_utility, 0.1);
        let spec = AgentSpec::parse("mcts:dynamic_score_utility=0.3").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().dynamic_score_utility, 0.3);
        let spec = AgentSpec::parse("mcts:fpu=0.1").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().fpu_reduction, 0.1);
        let spec = AgentSpec::parse("mcts").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(
            agent.search_config().fpu_reduction,
            SearchConfig::default().fpu_reduction
        );
        // Xiangqi's own default: unvisited moves at the parent's mean.
        let agent = build_mcts::<games::xiangqi::Xiangqi>(&spec, "mcts", 1, &|_| {
            anyhow::bail!("no network")
        })
        .unwrap();
        assert_eq!(agent.search_config().fpu_reduction, 0.0);
        let spec = AgentSpec::parse("mcts:fpu=-0.2").unwrap();
        let agent = build_mcts::<games::liuzhou::Liuzhou>(&spec, "mcts", 1, &no_net).unwrap();
        assert_eq!(agent.search_config().fpu_reduction, -0.2);
        let e = AgentSpec::parse("net:fpu=-3").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("fpu"));
    }

    #[test]
    fn names_the_key_at_fault() {
        let e = AgentSpec::parse("mcts:visits=lots").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("visits"));
        assert!(
            matches!(&e.reason, SpecReason::BadValue { value, .. } if value == "lots"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "agent spec \"mcts:visits=lots\", key `visits`: \"lots\" is not a positive integer"
        );
        let e = AgentSpec::parse("random:visits=5").unwrap_err();
        assert_eq!(
            e.reason,
            SpecReason::UnknownKey {
                kind: "random",
                allowed: &["seed"]
            }
        );
        assert_eq!(e.reason.to_string(), "not a key of `random` (keys: seed)");
        let e = AgentSpec::parse("mcts:model=x").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("model"));
        // No model: the game's default network.
        assert!(matches!(
            AgentSpec::parse("net:visits=5").unwrap(),
            AgentSpec::Net { model: None, .. }
        ));
        assert_eq!(
            AgentSpec::parse("alphabeta:depth=4").unwrap(),
            AgentSpec::Other("alphabeta:depth=4".into())
        );
        assert_eq!(AgentSpec::parse("").unwrap_err().reason, SpecReason::NoKind);
        assert_eq!(
            AgentSpec::parse("mcts:visits=1,visits=2")
                .unwrap_err()
                .reason,
            SpecReason::GivenTwice
        );
        assert_eq!(
            AgentSpec::parse("mcts:visits").unwrap_err().reason,
            SpecReason::NotKeyValue
        );
        assert!(AgentSpec::parse("mcts:threads=0").is_err());
        assert!(AgentSpec::parse("mcts:time=-1").is_err());
        assert!(AgentSpec::parse("mcts:temp=nan").is_err());
        for (bad, key) in [
            ("net:search=alphabeta", "search"),
            ("net:search=gumbel,gumbel_m=0", "gumbel_m"),
            ("mcts:gumbel_m=8", "gumbel_m"),
            ("net:decisive=yes", "decisive"),
            ("net:captures=1.5", "captures"),
            ("mcts:captures=x", "captures"),
            ("net:minimax=2", "minimax"),
            ("net:contempt=-0.1", "contempt"),
            ("mcts:contempt=x", "contempt"),
            ("net:score_utility=2", "score_utility"),
            ("mcts:score_utility=x", "score_utility"),
            ("net:dynamic_score_utility=1.5", "dynamic_score_utility"),
            ("mcts:dynamic_score_utility=x", "dynamic_score_utility"),
            ("mcts:minimax=x", "minimax"),
            ("net:time=1,guard=1", "guard"),
            ("net:time=1,guard=0", "guard"),
            ("net:visits=800,guard=0.5", "guard"),
            ("net:time=1,guard_margin=50", "guard_margin"),
            ("net:time=1,guard=0.5,guard_margin=-1", "guard_margin"),
            ("net:views=0", "views"),
            ("net:views=9", "views"),
            ("net:views=two", "views"),
            ("mcts:views=8", "views"),
        ] {
            let e = AgentSpec::parse(bad).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{bad}: {e}");
        }
        let e = AgentSpec::parse("net:visits=800,guard=0.5").unwrap_err();
        assert_eq!(e.reason, SpecReason::Needs("time=S"));
        assert_eq!(e.reason.to_string(), "needs time=S");
        for bad in [
            "mcts:resign=-1",
            "mcts:resign=1",
            "net:model=m.onnx,resign=x",
        ] {
            let e = AgentSpec::parse(bad).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("resign"), "{bad}");
        }
        let AgentSpec::Net { mcts, .. } =
            AgentSpec::parse("net:time=1,guard=0.4,guard_margin=80").unwrap()
        else {
            panic!("a net spec")
        };
        assert_eq!((mcts.guard, mcts.guard_margin), (Some(0.4), Some(80)));
        let AgentSpec::Net { mcts, .. } = AgentSpec::parse("net:visits=100,views=8").unwrap()
        else {
            panic!("a net spec")
        };
        assert_eq!(mcts.views, 8);
        let AgentSpec::Net { mcts, .. } = AgentSpec::parse("net:visits=100").unwrap() else {
            panic!("a net spec")
        };
        assert_eq!(mcts.views, 1, "the position as given unless asked");
    }

    #[test]
    fn build_errors_say_which_part_failed() {
        use games::liuzhou::Liuzhou;
        let no_net = |_: Option<&Path>| -> anyhow::Result<Arc<dyn Evaluator<Liuzhou>>> {
            Err(anyhow::anyhow!("no such file").context("loading m.onnx"))
        };
        let built =
            |text: &str| build::<Liuzhou>(&AgentSpec::parse(text).unwrap(), "x", 1, &no_net);

        // A kind the game does not have: the game's own words, which list its kinds.
        match built("minimax:depth=3") {
            Err(BuildError::UnknownKind {
                kind,
                game,
                refusal,
            }) => {
                assert_eq!((kind.as_str(), game), ("minimax", "liuzhou"));
                assert!(
                    refusal.to_string().contains("alphabeta or gtp"),
                    "{refusal}"
                );
            }
            other => panic!("expected UnknownKind, got {:?}", other.err()),
        }
        // One of its own kinds with a bad setting is the player's refusal, not an unknown kind.
        assert!(matches!(
            built("alphabeta:depth=0"),
            Err(BuildError::Agent(_))
        ));
        // The loader's error and its causes, as the loader gave them.
        match built("net:model=m.onnx,visits=4") {
            Err(e @ BuildError::Network(_)) => {
                assert_eq!(format!("{e:#}"), "loading m.onnx: no such file")
            }
            other => panic!("expected Network, got {:?}", other.err()),
        }
        let fake = |_: Option<&Path>| -> anyhow::Result<Arc<dyn Evaluator<Liuzhou>>> {
            Ok(Arc::new(eval::fake::FakeEvaluator::new(8)))
        };
        let spec = AgentSpec::parse("net:visits=4,batch=9").unwrap();
        match build::<Liuzhou>(&spec, "x", 1, &fake) {
            Err(BuildError::BatchTooLarge { asked: 9, most: 8 }) => {}
            other => panic!("expected BatchTooLarge, got {:?}", other.err()),
        }
        let spec = AgentSpec::parse("random").unwrap();
        match build_mcts::<Liuzhou>(&spec, "r", 1, &fake) {
            Err(BuildError::NotTreeSearch { label }) => assert_eq!(label, "r"),
            other => panic!(
                "expected NotTreeSearch, got {:?}",
                other.err().map(|e| e.to_string())
            ),
        }
        assert!(matches!(
            build_text::<Liuzhou>("mcts:visits=x", 1),
            Err(BuildError::Spec(SpecError { .. }))
        ));
    }
}
