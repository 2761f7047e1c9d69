//! GNU Go as a Go teacher over GTP.
//!
//! - Policy: `top_moves_black` / `top_moves_white` list GNU Go's best moves (at most ten) with
//!   their move values (roughly points gained); a softmax of `value / policy_temperature` over
//!   those legal under the engine's rules turns them into probabilities. An empty list means
//!   GNU Go would pass: the policy is then all on the pass (or on the move `genmove` gives).
//! - Value: `estimate_score` (`W+11.3 (upper bound: …)`, komi included), the margin for the
//!   player to act mapped by `tanh(margin / score_scale)`. GNU Go 3.8's `new_score` answers
//!   the same numbers at the same cost, so only `estimate_score` is asked.
//! - Decision: the first listed move (GNU Go's choice). When GNU Go would pass, `genmove`
//!   decides between a pass and a resignation (it resigns on small boards only when all its
//!   groups are dead) and is taken back with `undo`, so GNU Go's board always follows the
//!   moves actually played.
//!
//! Start GNU Go with the engine's rules: `gnugo --mode gtp --chinese-rules
//! --positional-superko --capture-all-dead` (area scoring, no ko fights GNU Go thinks legal
//! and the engine does not, and dead stones removed before it passes, since the engine scores
//! the board as it stands).

use std::time::Duration;

use games::agent::{parse_timeout, split_spec};
use games::go::{color_letter, GoState, Move};
use games::{Decision, Game, Player};
use players::gtp_client::{GtpClient, GtpClientError, DEFAULT_TIMEOUT};

use crate::bootstrap::BootstrapConfig;
use crate::teacher::{softmax, Advice, TeachError, Teacher};

/// GNU Go (or another GTP engine with GNU Go's `top_moves` and `estimate_score`) as a teacher.
pub struct GtpTeacher {
    client: GtpClient,
    name: String,
    temperature: f32,
    score_scale: f32,
    levels: Option<[u32; 2]>,
    /// The level of the current game, when `levels` sets one.
    level: Option<u32>,
}

impl GtpTeacher {
    /// Starts `command_line` (program and arguments split on whitespace), waiting up to
    /// `timeout` for any answer.
    pub fn spawn(
        command_line: &str,
        timeout: Duration,
        config: &BootstrapConfig,
    ) -> Result<GtpTeacher, TeachError> {
        let mut client = GtpClient::spawn_with_timeout(command_line, timeout).map_err(|e| {
            TeachError::Engine {
                engine: command_line.to_string(),
                reason: e.to_string(),
            }
        })?;
        let name = client
            .send("name")
            .and_then(|n| Ok(format!("{} {}", n.trim(), client.send("version")?.trim())))
            .map_err(|e| TeachError::Engine {
                engine: command_line.to_string(),
                reason: e.to_string(),
            })?;
        let name = match name.trim() {
            "" => command_line.to_string(),
            n => n.to_string(),
        };
        Ok(GtpTeacher {
            client,
            name,
            temperature: config.policy_temperature,
            score_scale: config.score_scale,
            levels: config.levels,
            level: None,
        })
    }

    /// The teacher a `gtp:cmd=COMMAND LINE[,timeout=S]` spec names (the grammar of
    /// `players::go::agent_from_spec`).
    pub fn from_spec(spec: &str, config: &BootstrapConfig) -> Result<GtpTeacher, TeachError> {
        let bad = |reason: String| TeachError::Spec {
            spec: spec.to_string(),
            reason,
        };
        let (kind, params) = split_spec(spec).map_err(|e| bad(e.reason))?;
        if kind.trim() != "gtp" {
            return Err(bad(format!("not a gtp teacher (kind `{kind}`)")));
        }
        let (mut cmd, mut timeout) = (None, DEFAULT_TIMEOUT);
        for (k, v) in params {
            match k {
                "cmd" if !v.is_empty() => cmd = Some(v),
                "timeout" => timeout = parse_timeout(v).map_err(bad)?,
                _ => return Err(bad(format!("unknown or empty parameter '{k}' for gtp"))),
            }
        }
        let cmd = cmd.ok_or_else(|| bad("gtp needs cmd=COMMAND".into()))?;
        GtpTeacher::spawn(cmd, timeout, config)
    }

    fn send(&mut self, request: &str) -> Result<String, TeachError> {
        self.client.send(request).map_err(|e| match e {
            GtpClientError::Malformed { answer, .. } => TeachError::Garbage {
                engine: self.name.clone(),
                request: request.to_string(),
                line: answer,
                reason: "not a GTP answer".into(),
            },
            e => TeachError::Engine {
                engine: self.name.clone(),
                reason: e.to_string(),
            },
        })
    }

    fn garbage(&self, request: &str, line: &str, reason: String) -> TeachError {
        TeachError::Garbage {
            engine: self.name.clone(),
            request: request.to_string(),
            line: line.to_string(),
            reason,
        }
    }

    /// GNU Go's own move where it lists none: a pass, a resignation, or (rarely) a move;
    /// taken back at once so that its board still shows `state`.
    fn fallback(&mut self, state: &GoState) -> Result<Decision<Move>, TeachError> {
        let request = format!("genmove {}", color_letter(state.to_act()));
        let answer = self.send(&request)?;
        let answer = answer.trim();
        if answer.eq_ignore_ascii_case("resign") {
            return Ok(Decision::Resign);
        }
        let mv = Move::parse_gtp(answer, state.size())
            .map_err(|e| self.garbage(&request, answer, e.to_string()))?;
        self.send("undo")?;
        Ok(Decision::Play(if state.is_legal(mv) {
            mv
        } else {
            Move::Pass
        }))
    }
}

/// Reads a `top_moves` answer: `MOVE VALUE MOVE VALUE …` (possibly empty) on a `size` board.
pub fn parse_top_moves(answer: &str, size: usize) -> Result<Vec<(Move, f32)>, String> {
    let tokens: Vec<&str> = answer.split_whitespace().collect();
    let pairs = tokens.chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return Err(format!(
            "{} tokens: expected move and value pairs",
            tokens.len()
        ));
    }
    pairs
        .map(|pair| {
            let mv = Move::parse_gtp(pair[0], size).map_err(|e| e.to_string())?;
            let value = pair[1]
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("move value {:?} is not a number", pair[1]))?;
            Ok((mv, value))
        })
        .collect()
}

/// Reads an `estimate_score` (or `new_score`, `final_score`) answer: `B+3.5`, `W+11.3 (upper
/// bound: …)`, `0`. Returns Black's margin: positive when Black leads.
pub fn parse_score_estimate(answer: &str) -> Result<f32, String> {
    let first = answer
        .split_whitespace()
        .next()
        .ok_or_else(|| "empty answer".to_string())?;
    let number = |text: &str| {
        text.parse::<f32>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("margin {text:?} is not a number"))
    };
    if let Some(m) = first.strip_prefix("B+") {
        number(m)
    } else if let Some(m) = first.strip_prefix("W+") {
        number(m).map(|m| -m)
    } else if first == "0" || first.eq_ignore_ascii_case("jigo") {
        Ok(0.0)
    } else {
        Err(format!("{first:?} is not B+N, W+N or 0"))
    }
}

impl Teacher<GoState> for GtpTeacher {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, start: &GoState, seed: u64) -> Result<(), TeachError> {
        let mut requests = vec![
            format!("boardsize {}", start.size()),
            "clear_board".to_string(),
            format!("komi {}", start.komi()),
            // GNU Go's seed is a C int.
            format!("set_random_seed {}", seed % (1 << 31)),
        ];
        self.level = self.levels.map(|[lo, hi]| {
            let span = u64::from(hi.saturating_sub(lo)) + 1;
            lo + (seed.rotate_left(17) % span) as u32
        });
        if let Some(level) = self.level {
            requests.push(format!("level {level}"));
        }
        // Setup stones are sent as moves: they capture nothing, so the boards agree.
        for (p, who) in start.start_stones() {
            requests.push(format!("play {} {}", color_letter(who), p.to_gtp()));
        }
        for (who, mv) in start.moves_since_start() {
            requests.push(format!("play {} {}", color_letter(who), mv.to_gtp()));
        }
        for r in requests {
            self.send(&r)?;
        }
        Ok(())
    }

    fn advise(&mut self, state: &GoState) -> Result<Advice<Move>, TeachError> {
        let request = match state.to_act() {
            Player::First => "top_moves_black",
            Player::Second => "top_moves_white",
        };
        let answer = self.send(request)?;
        let listed = parse_top_moves(&answer, state.size())
            .map_err(|reason| self.garbage(request, &answer, reason))?;
        let (moves, values): (Vec<Move>, Vec<f32>) = listed
            .into_iter()
            .filter(|(mv, _)| state.is_legal(*mv))
            .unzip();

        // Asked after `top_moves`, the estimate reuses GNU Go's analysis of the position: it
        // costs next to nothing (asked first, about 60 ms at level 10).
        let score = self.send("estimate_score")?;
        let black_margin = parse_score_estimate(&score)
            .map_err(|reason| self.garbage("estimate_score", &score, reason))?;
        let margin = match state.to_act() {
            Player::First => black_margin,
            Player::Second => -black_margin,
        };
        let value = Some((margin / self.score_scale).tanh());

        if moves.is_empty() {
            let decision = self.fallback(state)?;
            let shown = match decision {
                Decision::Play(mv) => mv,
                Decision::Resign => Move::Pass,
            };
            return Ok(Advice {
                policy: vec![(shown, 1.0)],
                value,
                decision,
            });
        }
        let probs = softmax(&values, self.temperature);
        // GNU Go lists its choice first.
        let decision = Decision::Play(moves[0]);
        Ok(Advice {
            policy: moves.into_iter().zip(probs).collect(),
            value,
            decision,
        })
    }

    fn observe(&mut self, before: &GoState, action: Move) -> Result<(), TeachError> {
        let r = format!("play {} {}", color_letter(before.to_act()), action.to_gtp());
        self.send(&r).map(|_| ())
    }

    fn game_setting(&self) -> Option<String> {
        self.level.map(|l| format!("level {l}"))
    }
}
