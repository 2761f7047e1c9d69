//! Liuzhou over GTP version 2 (`engine gtp --game liuzhou`): the framing of [`super::frame`]
//! with the commands of `docs/liuzhou.md`'s dialect, which programs outside the project are
//! written against. Actions are in the README's notation (`c3`, `c3-c4`, `xc3`), positions
//! LFEN; the same colour may act several times in a row, so `play` and `genmove` check whose
//! turn it is rather than assume alternation. Moves come from one agent built by
//! `players::spec` (the shipped network's tree search by default), under the controller's clock
//! when it sends `time_settings`.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use eval::Evaluator;
use games::liuzhou::{Liuzhou, Rules};
use games::{Agent, Decision, Game, Outcome, Player};
use players::spec::{build, AgentSpec};
use serde::Deserialize;
use setup::models;

use crate::gtp::clock::{GameClock, TimeSystem};
use crate::gtp::frame::{
    answer, arity, common_command, parse_colour, parse_count, read_request, Conversation,
};

/// The `gtp` section of a Liuzhou config.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GtpConfig {
    /// Who answers `genmove`: an agent spec as `engine match` takes them (`net`, `mcts`,
    /// `alphabeta:depth=6`, `random`); the keys below fill in what it leaves out.
    pub agent: String,
    /// Seed of `random`, `mcts` and `net`.
    pub seed: u64,
    /// Visits per action for `mcts` and `net` whose spec gives neither `visits` nor `time` (a
    /// clock may cut an action short).
    pub visits: u64,
    /// Threads searching one tree for `mcts` and `net`.
    pub threads: usize,
    /// The ONNX model of `net` (no model: the default network, `engine models list`).
    pub model: Option<String>,
    /// `mcts` and `net` answer `genmove` with `resign` when their chosen action's value is
    /// below this (values lie in −1..=1; −1 never resigns).
    pub resign_threshold: f32,
}

impl Default for GtpConfig {
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

impl GtpConfig {
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
            "random" => fill("seed", self.seed.to_string()),
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
}

/// The agent the `gtp` section names (see [`GtpConfig::spec`]): a `net` agent without a model
/// plays the default network, or the tree search with random playouts where there is none.
/// `doc` and `path` are the config the network's inference settings come from.
pub fn make_agent(
    config: &GtpConfig,
    start: &Liuzhou,
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<Box<dyn Agent<Liuzhou>>> {
    let spec = match config.spec()? {
        AgentSpec::Net { model: None, mcts } => {
            let fallback = "the tree search with random playouts (mcts)";
            match models::default_network(Liuzhou::NAME, fallback) {
                Some(place) => AgentSpec::Net {
                    model: Some(place.model().into()),
                    mcts,
                },
                None => AgentSpec::Mcts(mcts),
            }
        }
        spec => spec,
    };
    let load = |model: Option<&Path>| -> anyhow::Result<Arc<dyn Evaluator<Liuzhou>>> {
        let model = model.context("no model named")?;
        let text = model
            .to_str()
            .with_context(|| format!("model {}: not a UTF-8 path", model.display()))?;
        models::evaluator(start, text, doc, path)
            .with_context(|| format!("model {text} (gtp.model or --model)"))
    };
    let label = config.agent.split(':').next().unwrap_or("agent").trim();
    build(&spec, label, config.seed, &load)
}

/// Every command of the dialect, as `list_commands` prints them.
pub const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "liuzhou-to-move",
    "liuzhou-legal",
    "liuzhou-lfen",
    "liuzhou-set-lfen",
    "final_score",
    "time_settings",
    "time_left",
];

/// Why a command failed: the text after `?`.
type Failure = String;

/// One Liuzhou GTP conversation: the position, the positions before each action (for `undo`)
/// and the agent.
pub struct Session {
    /// The variant rules (`lose_below`) of every position the session holds.
    rules: Rules,
    state: Liuzhou,
    /// The positions before each action since `clear_board` or `liuzhou-set-lfen`.
    undo: Vec<Liuzhou>,
    agent: Box<dyn Agent<Liuzhou>>,
    /// Both colours' time under `time_settings` (no limit until it comes), counted down by
    /// the engine's own actions and corrected by `time_left`.
    clock: GameClock,
    /// Set by `quit`.
    pub quit: bool,
}

impl Session {
    /// A session at the start position of `rules`.
    pub fn new(rules: Rules, agent: Box<dyn Agent<Liuzhou>>) -> anyhow::Result<Session> {
        rules.validate().map_err(anyhow::Error::msg)?;
        let mut s = Session {
            rules,
            state: Liuzhou::new(rules),
            undo: Vec::new(),
            agent,
            clock: GameClock::default(),
            quit: false,
        };
        s.new_game().map_err(anyhow::Error::msg)?;
        Ok(s)
    }

    /// The current position.
    pub fn state(&self) -> &Liuzhou {
        &self.state
    }

    fn new_game(&mut self) -> Result<(), Failure> {
        self.clock.reset();
        self.jump_to(Liuzhou::new(self.rules))
    }

    /// Makes `state` the position with no history, and tells the agent so.
    fn jump_to(&mut self, state: Liuzhou) -> Result<(), Failure> {
        self.state = state;
        self.undo.clear();
        self.agent.new_game(&self.state).map_err(|e| e.to_string())
    }

    /// Answers one input line, or `None` for a line with no command (empty or a comment).
    pub fn handle(&mut self, raw: &str) -> Option<String> {
        let request = match read_request(raw)? {
            Ok(r) => r,
            Err(reply) => return Some(reply),
        };
        let args = request.arg_strs();
        Some(answer(&request.id, self.execute(&request.command, &args)))
    }

    fn execute(&mut self, command: &str, args: &[&str]) -> Result<String, Failure> {
        if let Some(answer) = common_command(command, args, COMMANDS, &mut self.quit) {
            return answer;
        }
        let arity = |n: usize| arity(command, args, n);
        match command {
            "boardsize" => {
                arity(1)?;
                let n: usize = args[0]
                    .parse()
                    .map_err(|_| "syntax error: boardsize takes an integer".to_string())?;
                if n != 6 {
                    return Err("unacceptable size".into());
                }
                self.new_game()?;
                Ok(String::new())
            }
            "clear_board" => {
                arity(0)?;
                self.new_game()?;
                Ok(String::new())
            }
            "komi" => {
                arity(1)?;
                args[0]
                    .parse::<f32>()
                    .map_err(|_| "syntax error: komi takes a number".to_string())?;
                Ok(String::new())
            }
            "play" => {
                arity(2)?;
                let who = colour(args[0])?;
                self.play(who, args[1])?;
                Ok(String::new())
            }
            "genmove" => {
                arity(1)?;
                let who = colour(args[0])?;
                self.generate(who)
            }
            "undo" => {
                arity(0)?;
                let previous = self.undo.pop().ok_or("cannot undo")?;
                self.state = previous;
                // A position says all the rules need: the agent starts from it afresh.
                self.agent
                    .new_game(&self.state)
                    .map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            "liuzhou-to-move" => arity(0).map(|_| colour_word(self.state.to_act()).into()),
            "liuzhou-legal" => {
                arity(0)?;
                let mut actions = Vec::new();
                self.state.legal_actions(&mut actions);
                Ok(actions
                    .iter()
                    .map(|&a| self.state.format_action(a))
                    .collect::<Vec<_>>()
                    .join(" "))
            }
            "liuzhou-lfen" => arity(0).map(|_| self.state.lfen()),
            "liuzhou-set-lfen" => {
                if args.is_empty() {
                    return Err("syntax error: liuzhou-set-lfen takes an LFEN position".into());
                }
                let state = Liuzhou::from_lfen(&args.join(" "), self.rules)
                    .map_err(|e| format!("syntax error: cannot read LFEN: {e}"))?;
                self.jump_to(state)?;
                Ok(String::new())
            }
            "final_score" => {
                arity(0)?;
                match self.state.outcome() {
                    Some(Outcome::Win(Player::First)) => Ok("B+".into()),
                    Some(Outcome::Win(Player::Second)) => Ok("W+".into()),
                    Some(Outcome::Draw) => Ok("0".into()),
                    None => Err("the game is not over".into()),
                }
            }
            // The agent takes its share of the clock (see `GameClock::move_time`).
            "time_settings" => {
                arity(3)?;
                let main = parse_count("main time", args[0])?;
                let byo = parse_count("byo-yomi time", args[1])?;
                let stones = parse_count("byo-yomi stones", args[2])?;
                self.clock
                    .set(Some(TimeSystem::Canadian { main, byo, stones }));
                Ok(String::new())
            }
            "time_left" => {
                arity(3)?;
                let who = colour(args[0])?;
                let secs = parse_count("time", args[1])?;
                let stones = parse_count("stones", args[2])?;
                self.clock.set_left(who, secs, stones);
                Ok(String::new())
            }
            _ => Err("unknown command".into()),
        }
    }

    /// `play`: `text` for `who`, when it is `who`'s turn and the action is legal; otherwise
    /// `illegal move` and nothing changes.
    fn play(&mut self, who: Player, text: &str) -> Result<(), Failure> {
        let action = self
            .state
            .parse_action(&text.to_ascii_lowercase())
            .map_err(|e| format!("syntax error: cannot read action {text:?}: {e}"))?;
        if who != self.state.to_act() || !self.state.is_legal(action) {
            return Err("illegal move".into());
        }
        self.apply(action)
    }

    /// `genmove`: the agent's action for `who`, played; `resign` leaves the position as it is.
    fn generate(&mut self, who: Player) -> Result<String, Failure> {
        if self.state.outcome().is_some() {
            return Err("the game is over".into());
        }
        let to_act = self.state.to_act();
        if who != to_act {
            return Err(format!(
                "it is {}'s turn, not {}'s",
                colour_word(to_act),
                colour_word(who)
            ));
        }
        self.agent.set_move_time(self.clock.move_time(who));
        let t0 = std::time::Instant::now();
        let decision = self.agent.decide(&self.state).map_err(|e| e.to_string());
        self.clock.account(who, t0.elapsed());
        match decision? {
            Decision::Resign => Ok("resign".into()),
            Decision::Play(action) => {
                if !self.state.is_legal(action) {
                    return Err(format!(
                        "the agent chose {}, illegal here",
                        self.state.format_action(action)
                    ));
                }
                let text = self.state.format_action(action);
                self.apply(action)?;
                Ok(text)
            }
        }
    }

    /// Plays a legal `action` and tells the agent.
    fn apply(&mut self, action: games::liuzhou::Action) -> Result<(), Failure> {
        let before = self.state.clone();
        self.state.play_unchecked(action);
        self.undo.push(before);
        let before = self.undo.last().expect("just pushed");
        self.agent
            .observe(before, action)
            .map_err(|e| e.to_string())
    }
}

impl Conversation for Session {
    fn handle(&mut self, line: &str) -> Option<String> {
        Session::handle(self, line)
    }

    fn quit(&self) -> bool {
        self.quit
    }
}

/// The colour a `play`, `genmove` or `time_left` names.
fn colour(text: &str) -> Result<Player, Failure> {
    parse_colour(text)
        .ok_or_else(|| format!("syntax error: invalid color {text:?} (b, w, black, white)"))
}

/// `black` or `white`.
fn colour_word(who: Player) -> &'static str {
    match who {
        Player::First => "black",
        Player::Second => "white",
    }
}
