//! A game between two agents that repeat a chase, played by the match code: under the Asian
//! rules (the default) it ends with the chaser's loss, and the written record says why.

use games::xiangqi::{RepetitionRule, Xiangqi};
use games::{Agent, AgentError, Game, Outcome, Player, RecordFormat, RecordMeta};
use players::matchplay::play_game;

/// Plays its moves in turn, round and round.
struct Script {
    moves: Vec<&'static str>,
    next: usize,
}

impl Agent<Xiangqi> for Script {
    fn name(&self) -> String {
        "script".to_string()
    }

    fn select_action(&mut self, state: &Xiangqi) -> Result<<Xiangqi as Game>::Action, AgentError> {
        let text = self.moves[self.next % self.moves.len()];
        self.next += 1;
        Ok(state
            .parse_action(text)
            .expect("the script's moves are ICCS"))
    }
}

fn chase_game(rule: RepetitionRule) -> (players::matchplay::GameRecord<Xiangqi>, String) {
    // Red's rook runs after the unprotected black horse, which runs between b7 and c9.
    let mut start = Xiangqi::from_fen("4k4/9/1n7/9/9/9/9/2R6/9/3K5 w - - 0 1").unwrap();
    start.set_repetition_rule(rule);
    let mut red = Script {
        moves: vec!["c2b2", "b2c2"],
        next: 0,
    };
    let mut black = Script {
        moves: vec!["b7c9", "c9b7"],
        next: 0,
    };
    let record = play_game(&start, &mut red, &mut black, 100).unwrap();
    let meta = RecordMeta {
        names: ["chaser", "runner"],
        ending: Some(&record.ending),
        resigned: None,
    };
    let pgn = Xiangqi::write_record(&record.to_record(), &meta);
    (record, pgn)
}

#[test]
fn a_repeated_chase_loses_the_game_for_the_chaser() {
    let (record, pgn) = chase_game(RepetitionRule::Asian);
    // The start comes back for the third time after eight plies.
    assert_eq!(record.moves.len(), 8);
    assert_eq!(record.outcome, Outcome::Win(Player::Second));
    assert!(!record.capped);
    assert_eq!(record.ending, "perpetual chase by Red");
    assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
    assert!(pgn.contains("[Termination \"rules infraction\"]"), "{pgn}");
    assert!(pgn.contains("{perpetual chase by Red} 0-1"), "{pgn}");

    // The simple rule scores the same game as a draw.
    let (record, pgn) = chase_game(RepetitionRule::Simple);
    assert_eq!(record.moves.len(), 8);
    assert_eq!(record.outcome, Outcome::Draw);
    assert_eq!(record.ending, "threefold repetition");
    assert!(pgn.contains("{threefold repetition} 1/2-1/2"), "{pgn}");
    assert!(!pgn.contains("Termination"), "{pgn}");
}
