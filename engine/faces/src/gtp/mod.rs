//! The Go Text Protocol, version 2: one framing ([`frame`]) and one clock ([`clock`]) under
//! two dialects, Go's ([`go`]) and Liuzhou's ([`liuzhou`]), and the one `gtp` config section
//! both read ([`GtpConfig`]): it names an agent spec of the one grammar, which
//! `players::spec` builds.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use eval::Evaluator;
use games::Agent;
use players::spec::{build, AgentSpec, OwnPlayers};
use serde::Deserialize;
use setup::models;

pub mod clock;
pub mod frame;
pub mod go;
pub mod liuzhou;

pub use frame::serve_stdio;

/// The `gtp` section of a Go or Liuzhou config.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GtpConfig {
    /// Who answers `genmove`: an agent spec as `engine match` takes them (`net`, `mcts`,
    /// `random`, and the game's own kinds: Go's `playout`, Liuzhou's `alphabeta:depth=6`); the
    /// keys below fill in what it leaves out.
    pub agent: String,
    /// Seed of `random`, `playout`, `mcts` and `net`.
    pub seed: u64,
    /// Visits per move for `mcts` and `net` whose spec gives neither `visits` nor `time` (a
    /// clock may cut a move short).
    pub visits: u64,
    /// Threads searching one tree for `mcts` and `net`.
    pub threads: usize,
    /// The ONNX model of `net` (or `uniform`, a network-free stand-in; no model: the game's
    /// default network where the face finds one).
    pub model: Option<String>,
    /// `mcts` and `net` answer `genmove` with `resign` when their chosen move's value is below
    /// this (values lie in −1..=1; −1 never resigns).
    pub resign_threshold: f32,
}

impl Default for GtpConfig {
    /// Liuzhou's section; configs/go.yaml gives Go 800 visits.
    fn default() -> Self {
        GtpConfig {
            agent: "net".into(),
            seed: 1,
            visits: 400,
            threads: 1,
            model: None,
            resign_threshold: -0.9,
        }
    }
}

/// Keys only a `net` spec takes.
const NETWORK_KEYS: &[&str] = &["model", "batch", "views"];

impl GtpConfig {
    /// The agent's kind (`net`, `mcts`, …): its label in records.
    pub fn kind(&self) -> &str {
        let text = self.agent.trim();
        text.split_once(':').map_or(text, |(k, _)| k).trim()
    }

    /// The agent spec the section names: `agent`, with `seed`, `visits`, `threads`, `model`
    /// and `resign_threshold` added where its kind takes them and it does not give them.
    pub fn spec(&self) -> anyhow::Result<AgentSpec> {
        let text = self.agent.trim();
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let given: Vec<&str> = rest
            .split(',')
            .filter_map(|pair| pair.split_once('=').map(|(k, _)| k.trim()))
            .collect();
        let mut extra: Vec<String> = Vec::new();
        let mut fill = |key: &str, value: String| {
            if !given.contains(&key) {
                extra.push(format!("{key}={value}"));
            }
        };
        match kind.trim() {
            "random" | "playout" => fill("seed", self.seed.to_string()),
            tree @ ("mcts" | "net") => {
                if !given.contains(&"time") {
                    fill("visits", self.visits.to_string());
                }
                fill("threads", self.threads.to_string());
                fill("seed", self.seed.to_string());
                let r = self.resign_threshold;
                if !(-1.0..1.0).contains(&r) {
                    anyhow::bail!("gtp.resign_threshold {r} is outside -1 (never resign) up to 1");
                }
                if r > -1.0 {
                    fill("resign", r.to_string());
                }
                if let (Some(model), "net") = (&self.model, tree) {
                    fill("model", model.clone());
                }
            }
            _ => {}
        }
        let whole = match (rest.trim().is_empty(), extra.is_empty()) {
            (_, true) => text.to_string(),
            (true, false) => format!("{}:{}", kind.trim(), extra.join(",")),
            (false, false) => format!("{text},{}", extra.join(",")),
        };
        AgentSpec::parse(&whole).with_context(|| format!("gtp.agent {text:?} (or --agent)"))
    }

    /// The tree search with random playouts in place of a `net` agent that has no network:
    /// the kind becomes `mcts`, the keys only a network takes are dropped.
    pub fn without_network(&mut self) {
        let text = self.agent.trim();
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        if kind.trim() != "net" {
            return;
        }
        let kept: Vec<&str> = rest
            .split(',')
            .filter(|pair| {
                let key = pair.split_once('=').map_or(*pair, |(k, _)| k).trim();
                !key.is_empty() && !NETWORK_KEYS.contains(&key)
            })
            .collect();
        self.agent = if kept.is_empty() {
            "mcts".into()
        } else {
            format!("mcts:{}", kept.join(","))
        };
    }
}

/// Builds `spec` (from `config`, see [`GtpConfig::spec`]) with `players::spec`: a `net`
/// agent's network is its `model`, loaded with the inference settings of the config `doc`
/// read from `path`, for positions like `start`.
pub fn build_agent<G: OwnPlayers>(
    spec: &AgentSpec,
    config: &GtpConfig,
    start: &G,
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<Box<dyn Agent<G>>> {
    build_agent_and_network(spec, config, start, doc, path).map(|(agent, _)| agent)
}

/// An agent and the network it loaded, if any.
pub type AgentAndNetwork<G> = (Box<dyn Agent<G>>, Option<Arc<dyn Evaluator<G>>>);

/// [`build_agent`], and the network it loaded, if any (analysis reads its auxiliary heads).
pub fn build_agent_and_network<G: OwnPlayers>(
    spec: &AgentSpec,
    config: &GtpConfig,
    start: &G,
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<AgentAndNetwork<G>> {
    let loaded = std::cell::RefCell::new(None);
    let load = |model: Option<&Path>| -> anyhow::Result<Arc<dyn Evaluator<G>>> {
        let model = model.context("no model named")?;
        let text = model
            .to_str()
            .with_context(|| format!("model {}: not a UTF-8 path", model.display()))?;
        let net = models::evaluator(start, text, doc, path)
            .with_context(|| format!("model {text} (gtp.model or --model)"))?;
        *loaded.borrow_mut() = Some(net.clone());
        Ok(net)
    };
    let agent = build(spec, config.kind(), config.seed, &load)?;
    Ok((agent, loaded.into_inner()))
}
