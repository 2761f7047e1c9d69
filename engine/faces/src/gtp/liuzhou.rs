//! Liuzhou over GTP version 2 (`engine gtp --game liuzhou`): the framing of [`super::frame`]
//! with the commands of `docs/liuzhou.md`'s dialect, which programs outside the project are
//! written against. Actions are in the README's notation (`c3`, `c3-c4`, `xc3`), positions
//! LFEN; the same colour may act several times in a row, so `play` and `genmove` check whose
//! turn it is rather than assume alternation. Moves come from one agent built by
//! `players::spec` (the shipped network's tree search by default), under the controller's clock
//! when it sends `time_settings`.

use std::path::Path;

use games::liuzhou::{Liuzhou, Rules};
use games::{Agent, Decision, Game, Outcome, Player};
use players::spec::AgentSpec;
use setup::models;

use super::clock::{GameClock, TimeSystem};
use super::frame::{
    answer, arity, common_command, parse_colour, parse_count, read_request, Conversation,
};
use super::{build_agent, GtpConfig};

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
    build_agent(&spec, config, start, doc, path)
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
