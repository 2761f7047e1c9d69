//! Agent specs: the strings that name a player on the command line, such as `random`,
//! `mcts:visits=800` or `net:model=models/liuzhou/best.onnx,visits=200,threads=2`.
//!
//! A spec is `kind` or `kind:key=value,key=value`. Parsing checks every key and value and
//! says which one is wrong; building turns a spec into an [`Agent`] for any game. A new kind of
//! agent (an external program over UCI or GTP, say) is one more [`AgentSpec`] variant, one more
//! arm in [`AgentSpec::parse`] and one in [`build`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eval::Evaluator;
use games::{Agent, Game, RandomAgent};
use search::{Limit, MctsAgent, MctsAgentConfig, RunOptions, SearchConfig};

/// A spec that could not be read: the whole spec, the key at fault (if any) and why.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("agent spec {spec:?}{}: {reason}", key.as_ref().map(|k| format!(", key `{k}`")).unwrap_or_default())]
pub struct SpecError {
    pub spec: String,
    pub key: Option<String>,
    pub reason: String,
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
    /// Move choice (`temp=T`): 0 plays the most visited action.
    pub temperature: f32,
    /// PUCT exploration constant (`cpuct=C`).
    pub c_puct: Option<f32>,
    /// Seed of the agent's randomness (`seed=N`).
    pub seed: Option<u64>,
    /// Resign when the chosen move's searched value is below this (`resign=V`, −1 < V < 1);
    /// never by default, so that match results count only games played out.
    pub resign_below: Option<f32>,
}

impl Default for MctsSpec {
    fn default() -> Self {
        MctsSpec {
            visits: None,
            time: None,
            threads: 1,
            batch: None,
            temperature: 0.0,
            c_puct: None,
            seed: None,
            resign_below: None,
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
    /// `net:model=PATH,…`: MCTS with a network (visits default 200).
    Net { model: PathBuf, mcts: MctsSpec },
    /// Any other kind (`alphabeta:…`, `uci:…`, …): the whole spec, for the game's own agent
    /// factory to read (see [`GameAgents`]).
    Other(String),
}

impl AgentSpec {
    pub fn parse(spec: &str) -> Result<AgentSpec, SpecError> {
        let err = |key: Option<&str>, reason: String| SpecError {
            spec: spec.to_string(),
            key: key.map(str::to_string),
            reason,
        };
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut pairs = Vec::new();
        for item in rest.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| err(Some(item.trim()), "expected key=value".into()))?;
            let (k, v) = (k.trim(), v.trim());
            if pairs.iter().any(|(seen, _)| *seen == k) {
                return Err(err(Some(k), "given twice".into()));
            }
            pairs.push((k, v));
        }
        let mut mcts = MctsSpec::default();
        let mut model = None;
        let mut seed = None;
        let allowed: &[&str] = match kind.trim() {
            "random" => &["seed"],
            "mcts" => &[
                "visits", "time", "threads", "temp", "cpuct", "seed", "resign",
            ],
            "net" => &[
                "model", "visits", "time", "threads", "batch", "temp", "cpuct", "seed", "resign",
            ],
            "" => return Err(err(None, "no agent kind".into())),
            // Another kind: the game's own factory reads it (and names what is wrong).
            _ => return Ok(AgentSpec::Other(spec.trim().to_string())),
        };
        for (k, v) in pairs {
            if !allowed.contains(&k) {
                return Err(err(
                    Some(k),
                    format!(
                        "not a key of `{}` (keys: {})",
                        kind.trim(),
                        allowed.join(", ")
                    ),
                ));
            }
            let bad = |what: &str| err(Some(k), format!("{v:?} is not {what}"));
            match k {
                "seed" => {
                    let s = Some(v.parse::<u64>().map_err(|_| bad("an unsigned integer"))?);
                    seed = s;
                    mcts.seed = s;
                }
                "visits" => {
                    let n = v.parse::<u64>().map_err(|_| bad("a positive integer"))?;
                    if n == 0 {
                        return Err(bad("a positive integer"));
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
                    if n == 0 || n > 1024 {
                        return Err(bad("a thread count in 1..=1024"));
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
                "resign" => {
                    let r = v.parse::<f32>().map_err(|_| bad("a number"))?;
                    // Values lie in [−1, 1]: −1 or less never resigns, 1 or more always would.
                    if !(r > -1.0 && r < 1.0) {
                        return Err(bad("a value between −1 and 1 (exclusive)"));
                    }
                    mcts.resign_below = Some(r);
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
        Ok(match kind.trim() {
            "random" => AgentSpec::Random { seed },
            "mcts" => {
                if mcts.visits.is_none() && mcts.time.is_none() {
                    mcts.visits = Some(800);
                }
                AgentSpec::Mcts(mcts)
            }
            _ => {
                let model = model.ok_or_else(|| err(Some("model"), "required for `net`".into()))?;
                if mcts.visits.is_none() && mcts.time.is_none() {
                    mcts.visits = Some(200);
                }
                AgentSpec::Net { model, mcts }
            }
        })
    }
}

impl std::str::FromStr for AgentSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        AgentSpec::parse(s)
    }
}

/// Loads the network of a `net` agent from its `model=` value (see `crate::models`).
pub type NetLoader<'a, G> = &'a dyn Fn(&Path) -> anyhow::Result<Arc<dyn Evaluator<G>>>;

/// Builds a game's own kinds of agent from a whole spec (Xiangqi's `alphabeta:…`, `uci:…`).
pub type GameAgents<'a, G> = &'a dyn Fn(&str) -> anyhow::Result<Box<dyn Agent<G>>>;

/// Builds the agent `spec` names. `name` labels it in tables; `seed` is used where the spec
/// gives none; `game_agents` builds the kinds this module does not know.
pub fn build<G: Game>(
    spec: &AgentSpec,
    name: &str,
    seed: u64,
    load_net: NetLoader<'_, G>,
    game_agents: GameAgents<'_, G>,
) -> anyhow::Result<Box<dyn Agent<G>>> {
    Ok(match spec {
        AgentSpec::Other(text) => game_agents(text)?,
        AgentSpec::Random { seed: s } => Box::new(RandomAgent::new(s.unwrap_or(seed))),
        AgentSpec::Mcts(m) => {
            let seed = m.seed.unwrap_or(seed);
            let evaluator: Arc<dyn Evaluator<G>> = Arc::new(eval::RolloutEvaluator::<G>::new(seed));
            let search = SearchConfig {
                c_puct: m.c_puct.unwrap_or(SearchConfig::default().c_puct),
                // A rollout's value is one random sample: caching it would freeze the noise.
                cache_entries: 0,
                ..SearchConfig::default()
            };
            // One leaf per thread at a time: plain sequential MCTS on one thread.
            let run = RunOptions {
                threads: m.threads,
                leaves_per_thread: 1,
                combine: false,
                batch_wait: Duration::from_micros(500),
                whole_batches: false,
            };
            Box::new(MctsAgent::new(mcts_config(name, m, search, run), evaluator))
        }
        AgentSpec::Net { model, mcts: m } => {
            let evaluator = load_net(model)?;
            let most = evaluator.batch_size().max(1);
            if let Some(b) = m.batch.filter(|&b| b > most) {
                // The caller's context names the agent; the label would say it twice.
                anyhow::bail!(
                    "batch={b} is more than the model's batch size {most} \
                     (the config's inference.batch_size)"
                );
            }
            let batch = m
                .batch
                .unwrap_or_else(|| default_leaves(m.visits, most))
                .clamp(1, most);
            let search = SearchConfig {
                c_puct: m.c_puct.unwrap_or(SearchConfig::default().c_puct),
                ..SearchConfig::default()
            };
            // Threads share the evaluator's batch: each gathers its part of it.
            let run = RunOptions {
                threads: m.threads,
                leaves_per_thread: batch.div_ceil(m.threads).max(1),
                combine: m.threads > 1,
                batch_wait: Duration::from_micros(500),
                // A batch costs the same full or not: fill the last one too.
                whole_batches: true,
            };
            Box::new(MctsAgent::new(mcts_config(name, m, search, run), evaluator))
        }
    })
}

/// Leaves a `net` agent gathers per evaluator call when its spec gives no `batch`: about one
/// twelfth of the visits, at most `evaluator_batch`; a whole batch when only time limits it.
///
/// A whole batch costs the evaluator no more than a part of one, but each leaf in it was
/// chosen without the values of the others (virtual loss stands in for them), and with few
/// visits per move that blindness costs strength: the shipped Liuzhou model at 200 visits
/// scored 0.765 against pure MCTS with 800 playouts gathering 64 leaves per call, and 0.988
/// gathering 16 (README). Fewer still is stronger again but slower: at 400 visits, 8 leaves per
/// call beat this default (34) by 0.725 over 40 games, searching 2.9 times slower. This
/// default keeps most of the strength at a fraction of the cost; `batch=N` chooses otherwise.
pub fn default_leaves(visits: Option<u64>, evaluator_batch: usize) -> usize {
    let most = evaluator_batch.max(1);
    match visits {
        Some(v) => usize::try_from(v.div_ceil(12))
            .unwrap_or(most)
            .clamp(1, most),
        None => most,
    }
}

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
    fn net_agents_gather_fewer_leaves_with_fewer_visits() {
        assert_eq!(default_leaves(Some(200), 64), 17);
        assert_eq!(default_leaves(Some(800), 64), 64);
        assert_eq!(default_leaves(Some(5000), 64), 64);
        assert_eq!(default_leaves(Some(1), 64), 1);
        assert_eq!(default_leaves(Some(64), 8), 6);
        // Time alone: the whole batch, as fast as the evaluator goes.
        assert_eq!(default_leaves(None, 64), 64);
        assert_eq!(default_leaves(Some(100), 0), 1);
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
        assert_eq!(model, PathBuf::from("models/liuzhou/x.onnx"));
        assert_eq!((mcts.visits, mcts.batch), (Some(200), Some(64)));
        assert_eq!(mcts.resign_below, None);
        let AgentSpec::Mcts(m) = AgentSpec::parse("mcts:resign=-0.95").unwrap() else {
            panic!("not mcts")
        };
        assert_eq!(m.resign_below, Some(-0.95));
    }

    #[test]
    fn names_the_key_at_fault() {
        let e = AgentSpec::parse("mcts:visits=lots").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("visits"));
        assert!(e.to_string().contains("\"lots\""), "{e}");
        let e = AgentSpec::parse("mcts:model=x").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("model"));
        assert_eq!(
            AgentSpec::parse("net:visits=5").unwrap_err().key.as_deref(),
            Some("model")
        );
        assert_eq!(
            AgentSpec::parse("alphabeta:depth=4").unwrap(),
            AgentSpec::Other("alphabeta:depth=4".into())
        );
        assert!(AgentSpec::parse("").is_err());
        assert_eq!(
            AgentSpec::parse("mcts:visits=1,visits=2")
                .unwrap_err()
                .reason,
            "given twice"
        );
        assert!(AgentSpec::parse("mcts:visits").is_err());
        assert!(AgentSpec::parse("mcts:threads=0").is_err());
        assert!(AgentSpec::parse("mcts:time=-1").is_err());
        assert!(AgentSpec::parse("mcts:temp=nan").is_err());
        for bad in [
            "mcts:resign=-1",
            "mcts:resign=1",
            "net:model=m.onnx,resign=x",
        ] {
            let e = AgentSpec::parse(bad).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("resign"), "{bad}");
        }
    }
}
