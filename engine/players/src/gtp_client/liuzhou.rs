//! Another Liuzhou program over GTP (the dialect of `engine gtp --game liuzhou`, `docs/liuzhou.md`)
//! as an [`Agent`], so that it can play matches: each game starts with `boardsize 6` and
//! `clear_board` (and `liuzhou-set-lfen` when it starts elsewhere), the opponent's actions are
//! sent with `play`, and `genmove` asks for its own, once per action: the same colour is asked
//! again while it still acts (marks, captures, removals).
//!
//! An answer to `genmove` that is not a legal action here (an error answer, text that is not
//! an action, an action the rules refuse) is a forfeit ([`Agent::forfeits`]): a match scores
//! the game as lost by the program and says why. `resign` is a resignation. A program that
//! dies or does not answer in time stops the match, as with any agent that breaks down.

use games::liuzhou::{Action, Liuzhou, START_LFEN};
use games::{Agent, AgentError, Decision, Game, Player};

use crate::gtp_client::{GtpClient, GtpClientError, GtpPeer, GtpSpec};

/// A Liuzhou GTP program in a child process.
pub struct LiuzhouGtpAgent {
    peer: GtpPeer<Action>,
}

impl LiuzhouGtpAgent {
    /// Starts the program of `spec`; its name is taken from GTP `name` (and `version`).
    pub fn start(spec: &GtpSpec<'_>) -> Result<LiuzhouGtpAgent, GtpClientError> {
        Ok(LiuzhouGtpAgent {
            peer: GtpPeer::start(spec)?,
        })
    }

    pub fn client(&mut self) -> &mut GtpClient {
        self.peer.client()
    }
}

/// GTP's colour word for `who`.
pub fn colour_letter(who: Player) -> &'static str {
    match who {
        Player::First => "b",
        Player::Second => "w",
    }
}

impl Agent<Liuzhou> for LiuzhouGtpAgent {
    fn name(&self) -> String {
        self.peer.name()
    }

    fn new_game(&mut self, start: &Liuzhou) -> Result<(), AgentError> {
        self.peer.forget();
        self.peer.send("boardsize 6")?;
        self.peer.send("clear_board")?;
        let lfen = start.lfen();
        if lfen != START_LFEN {
            self.peer.send(&format!("liuzhou-set-lfen {lfen}"))?;
        }
        Ok(())
    }

    /// A resignation, for callers that cannot end a game early, is an error.
    fn select_action(&mut self, state: &Liuzhou) -> Result<Action, AgentError> {
        match self.decide(state)? {
            Decision::Play(a) => Ok(a),
            Decision::Resign => Err(self.peer.error("resigned")),
        }
    }

    fn decide(&mut self, state: &Liuzhou) -> Result<Decision<Action>, AgentError> {
        let who = state.to_act();
        self.peer.forget();
        let request = format!("genmove {}", colour_letter(who));
        let answer = match self.peer.client().send(&request) {
            Ok(answer) => answer,
            Err(e) => return Err(self.peer.genmove_failed(e, "not a GTP answer")),
        };
        let word = answer.trim();
        if word.eq_ignore_ascii_case("resign") {
            return Ok(Decision::Resign);
        }
        let action = match state.parse_action(&word.to_ascii_lowercase()) {
            Ok(a) => a,
            Err(e) => {
                return Err(self.peer.forfeit(format!(
                    "answered `{request}` with {word:?}, not an action ({e})"
                )))
            }
        };
        if !state.is_legal(action) {
            return Err(self.peer.forfeit(format!(
                "answered `{request}` with {word}, illegal in {}",
                state.lfen()
            )));
        }
        self.peer.played(who, action);
        Ok(Decision::Play(action))
    }

    fn forfeits(&self, error: &AgentError) -> bool {
        self.peer.forfeits(error)
    }

    fn observe(&mut self, before: &Liuzhou, action: Action) -> Result<(), AgentError> {
        let who = before.to_act();
        self.peer.observe(who, action, || {
            format!(
                "play {} {}",
                colour_letter(who),
                before.format_action(action)
            )
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::matchplay::{play_game, FORFEIT};
    use games::{Outcome, RandomAgent};

    /// A Liuzhou GTP program in a few lines of shell that answers `genmove` with `answer`
    /// (`hang`: not at all) and everything else with an empty success, `play xf6` with an error.
    fn fake(name: &str, answer: &str) -> LiuzhouGtpAgent {
        let path =
            std::env::temp_dir().join(format!("fake_lz_gtp_{}_{name}.sh", std::process::id()));
        let genmove = match answer {
            // exec: the process that hangs is the one killed, no orphan is left.
            "hang" => "exec sleep 30".to_string(),
            "?" => "printf '? cannot\\n\\n'".to_string(),
            answer => format!("printf '= {answer}\\n\\n'"),
        };
        let script = format!(
            "while IFS= read -r line; do case \"$line\" in \
             name) printf '= fake\\n\\n' ;; \
             genmove*) {genmove} ;; \
             'play b xf6') printf '? illegal move\\n\\n' ;; \
             quit) printf '=\\n\\n'; exit 0 ;; \
             *) printf '=\\n\\n' ;; esac; done\n"
        );
        std::fs::write(&path, script).unwrap();
        let cmd = format!("sh {}", path.display());
        let params = [("cmd", cmd.as_str()), ("timeout", "0.5")];
        LiuzhouGtpAgent::start(&GtpSpec::parse("gtp", &params).unwrap()).unwrap()
    }

    #[test]
    fn a_legal_answer_is_played_and_resign_resigns() {
        let start = Liuzhou::default();
        let mut a = fake("c3", "C3");
        assert_eq!(a.name(), "fake");
        a.new_game(&start).unwrap();
        let d = a.decide(&start).unwrap();
        assert_eq!(d, Decision::Play(start.parse_action("c3").unwrap()));
        let mut r = fake("resign", "resign");
        r.new_game(&start).unwrap();
        assert_eq!(r.decide(&start).unwrap(), Decision::Resign);
        assert!(r.select_action(&start).is_err());
    }

    #[test]
    fn refused_unreadable_and_illegal_answers_are_forfeits() {
        let start = Liuzhou::default();
        for (name, answer, why) in [
            (
                "z9",
                "z9",
                "answered `genmove b` with \"z9\", not an action",
            ),
            (
                "mark",
                "xc3",
                "answered `genmove b` with xc3, illegal in 6/6/6/6/6/6 b",
            ),
            ("refuse", "?", "answered `genmove b` with an error: cannot"),
        ] {
            let mut a = fake(name, answer);
            a.new_game(&start).unwrap();
            let e = a.decide(&start).unwrap_err();
            assert!(e.reason.contains(why), "{name}: {e}");
            assert!(a.forfeits(&e), "{name}");
            // The loser is the program; its opponent wins, and the game says why.
            let mut a = fake(name, answer);
            let mut b = RandomAgent::new(1);
            let record = play_game(&start, &mut b, &mut a, 100).unwrap();
            assert_eq!(record.outcome, Outcome::Win(Player::First), "{name}");
            assert_eq!(record.ending, FORFEIT);
            assert_eq!(record.moves.len(), 1, "Black placed, White forfeited");
            let f = record.forfeit.unwrap();
            assert_eq!((f.player, f.agent.as_str()), (Player::Second, "fake"));
            assert!(f.reason.contains("answered `genmove w`"), "{}", f.reason);
        }
    }

    #[test]
    fn a_program_that_breaks_down_is_no_forfeit() {
        let start = Liuzhou::default();
        let mut a = fake("hang", "hang");
        a.new_game(&start).unwrap();
        let e = a.decide(&start).unwrap_err();
        assert!(e.reason.contains("no answer to `genmove b`"), "{e}");
        assert!(!a.forfeits(&e));
        let mut a = fake("hang2", "hang");
        let mut b = RandomAgent::new(1);
        assert!(play_game(&start, &mut a, &mut b, 100).is_err());
        // A refused `play` is a disagreement on the rules, not an answer: the match stops.
        let mut c = fake("noplay", "c3");
        let mid = Liuzhou::from_lfen("6/6/6/6/6/5W b place 0 1 0", start.rules()).unwrap();
        c.new_game(&mid).unwrap();
        let e = c
            .observe(&mid, mid.parse_action("xf6").unwrap())
            .unwrap_err();
        assert!(!c.forfeits(&e), "{e}");
    }
}
