//! Liuzhou on the page: the 6 × 6 points, marked stones, and the phase with what it owes.

use games::liuzhou::{ActionKind, Liuzhou, Phase};
use games::{Game, GameRecord, Outcome, Player};
use serde_json::json;

use super::review::RecordRefusal;
use super::view::{fen_cells, BoardView, WebGame};

/// Alpha-beta nodes that stand for one visit of strength: 400 → 100 000 nodes, about a tenth
/// of a second (`docs/liuzhou.md` has the speed).
const ALPHABETA_NODES_PER_VISIT: u64 = 250;
/// MiB of transposition table per alpha-beta session.
const ALPHABETA_HASH_MIB: u64 = 4;

fn point_name(p: u8) -> String {
    format!("{}{}", (b'a' + p % 6) as char, p / 6 + 1)
}

impl WebGame for Liuzhou {
    const TITLE: &'static str = "Liuzhou chess (六洲棋)";
    const SIDES: [&'static str; 2] = ["Black", "White"];

    fn board(&self) -> BoardView {
        let names = (0..6u8)
            .rev()
            .map(|rank| (0..6).map(|file| point_name(rank * 6 + file)).collect())
            .collect();
        // LFEN writes marked stones in lower case, as the page draws them.
        let lfen = self.lfen();
        let cells = fen_cells(lfen.split(' ').next().unwrap_or(""), 6, 6);
        let marked = self.marked();
        // In MOVEMENT a player with no step removes a stone instead (the no-move rule); the
        // page names that case, which the phase alone does not tell.
        let mut actions = Vec::new();
        self.legal_actions(&mut actions);
        let stuck = self.phase() == Phase::Move
            && actions
                .iter()
                .any(|a| matches!(a.kind(), ActionKind::Select(_)));
        BoardView {
            cols: 6,
            rows: 6,
            names,
            cells,
            info: json!({
                "phase": self.phase().name(),
                "stuck": stuck,
                "pending": self.pending(),
                "move_count": self.move_count(),
                "moves_since_capture": self.moves_since_capture(),
                "move_limit": games::liuzhou::MOVE_LIMIT,
                "no_capture_limit": games::liuzhou::NO_CAPTURE_LIMIT,
                "stones": [self.stone_count(Player::First), self.stone_count(Player::Second)],
                "placed": [self.stones_placed(Player::First), self.stones_placed(Player::Second)],
                "stones_per_player": games::liuzhou::STONES_PER_PLAYER,
                "marked": marked.count_ones(),
                "lose_below": self.rules().lose_below,
            }),
        }
    }

    /// The alpha-beta searcher: far stronger than MCTS with random playouts at this game.
    const NATIVE_AGENTS: &'static [&'static str] = &["alphabeta"];

    /// `alphabeta` searches `ALPHABETA_NODES_PER_VISIT × strength` nodes per decision, with a
    /// small table: every live session holds its own.
    fn native_spec(name: &str, strength: u64) -> Option<String> {
        (name == "alphabeta").then(|| {
            format!(
                "alphabeta:nodes={},hash={ALPHABETA_HASH_MIB}",
                strength.saturating_mul(ALPHABETA_NODES_PER_VISIT)
            )
        })
    }

    fn action_points(&self, action: Self::Action) -> (Option<String>, Option<String>) {
        match action.kind() {
            ActionKind::Place(p) | ActionKind::Select(p) => (None, Some(point_name(p))),
            ActionKind::Step { from, to } => (Some(point_name(from)), Some(point_name(to))),
        }
    }

    /// The record `engine serve` and `engine match` write (tag pairs, `StartLFEN`, numbered
    /// actions, a result), or a bare action list, optionally after an LFEN line.
    fn read_record(start: &Self, text: &str) -> Result<GameRecord<Self>, RecordRefusal> {
        read_liuzhou(start, text)
    }
}

/// See [`WebGame::read_record`] for Liuzhou.
fn read_liuzhou(start: &Liuzhou, text: &str) -> Result<GameRecord<Liuzhou>, RecordRefusal> {
    let rules = start.rules();
    let mut first: Option<Liuzhou> = None;
    let mut state = start.clone();
    let mut actions = Vec::new();
    let mut result_text: Option<String> = None;
    let mut seen = false;
    let at = |line: usize, reason: String| RecordRefusal::new(Some(line), reason);
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        seen = true;
        let lfen = |text: &str, state: &mut Liuzhou, first: &mut Option<Liuzhou>| {
            if !actions.is_empty() {
                return Err(at(line, "a start position after the first action".into()));
            }
            *state = Liuzhou::from_lfen(text, rules).map_err(|e| at(line, format!("LFEN: {e}")))?;
            *first = Some(state.clone());
            Ok(())
        };
        if let Some(tag) = t.strip_prefix('[') {
            let Some((name, value)) = tag
                .strip_suffix(']')
                .and_then(|x| x.split_once(' '))
                .map(|(n, v)| (n, v.trim().trim_matches('"')))
            else {
                return Err(at(line, format!("{t:?} is not a tag [Name \"value\"]")));
            };
            match name {
                "StartLFEN" => lfen(value, &mut state, &mut first)?,
                "Result" if value != "*" => result_text = Some(value.to_string()),
                _ => {}
            }
            continue;
        }
        // An LFEN (its board has rows separated by `/`) gives the start, before any action.
        let word = t.split_whitespace().next().unwrap_or("");
        if word.contains('/') && word != "1/2-1/2" {
            lfen(t, &mut state, &mut first)?;
            continue;
        }
        for word in t.split(|c: char| c.is_whitespace() || c == ',') {
            let numbered = word
                .strip_suffix('.')
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            if word.is_empty() || numbered {
                continue;
            }
            if ["1-0", "0-1", "1/2-1/2", "*"].contains(&word) {
                if word != "*" {
                    result_text = Some(word.to_string());
                }
                continue;
            }
            if let Some(why) = state.end_reason() {
                return Err(at(
                    line,
                    format!("{word}: the game is already over ({why})"),
                ));
            }
            let a = state
                .parse_action(word)
                .map_err(|e| at(line, format!("{word:?}: {e}")))?;
            if !state.is_legal(a) {
                return Err(at(line, format!("{word} is not legal here")));
            }
            state.play_unchecked(a);
            actions.push(a);
        }
    }
    if !seen {
        return Err(RecordRefusal::new(None, "the record is empty"));
    }
    let result = match result_text.as_deref() {
        Some("1-0") => Some(Outcome::Win(Player::First)),
        Some("0-1") => Some(Outcome::Win(Player::Second)),
        Some("1/2-1/2") => Some(Outcome::Draw),
        _ => None,
    };
    Ok(GameRecord {
        start: first.unwrap_or_else(|| start.clone()),
        actions,
        result,
        result_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_names_follow_the_spec() {
        assert_eq!(point_name(0), "a1");
        assert_eq!(point_name(5), "f1");
        assert_eq!(point_name(35), "f6");
    }

    #[test]
    fn records_read_from_tags_a_bare_lfen_or_an_action_list() {
        let start = Liuzhou::default();
        let plain = Liuzhou::read_record(&start, "c3, d4 c4\nd3 1-0").unwrap();
        assert_eq!(plain.actions.len(), 4);
        assert_eq!(plain.result, Some(Outcome::Win(Player::First)));
        assert_eq!(plain.start.lfen(), start.lfen());

        let lfen = "bBW3/6/6/6/6/6 w place 0 5 0";
        let from = Liuzhou::read_record(&start, &format!("{lfen}\nd1")).unwrap();
        assert_eq!(from.start.lfen(), lfen);
        assert_eq!(from.actions.len(), 1);

        let tagged = format!(
            "[Game \"Liuzhou\"]\n[Result \"0-1\"]\n[StartLFEN \"{lfen}\"]\n\n  1. d1 e1\n0-1\n"
        );
        let r = Liuzhou::read_record(&start, &tagged).unwrap();
        assert_eq!((r.actions.len(), r.start.lfen()), (2, lfen.to_string()));
        assert_eq!(r.result, Some(Outcome::Win(Player::Second)));

        let e = Liuzhou::read_record(&start, "c3\nd4 c3").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.reason.contains("c3"), "{e}");
        let e = Liuzhou::read_record(&start, "c3\n6/6/6/6/6/6 b place 0 0 0").unwrap_err();
        assert!(e.reason.contains("after the first action"), "{e}");
        let e = Liuzhou::read_record(&start, "[Result 1-0").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn board_shows_marked_stones_and_the_phase() {
        let s = Liuzhou::from_lfen("bBW3/6/6/6/6/6 w place 0 5 0", Default::default()).unwrap();
        let b = s.board();
        assert_eq!(b.names[0][0], "a6");
        assert_eq!(b.names[5][5], "f1");
        assert_eq!(&b.cells[0][..3], &["b", "B", "W"]);
        assert_eq!(b.cells[5][0], "");
        assert_eq!(b.info["phase"], "place");
        assert_eq!(b.info["marked"], 1);
        assert_eq!(b.info["stuck"], false);
    }
}
