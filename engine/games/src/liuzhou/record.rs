//! Liuzhou game records: PGN-style tag pairs (`Game "Liuzhou"`, the rules, the players, the
//! result, the ending, the start and final positions as LFEN), a blank line, then the actions
//! in the notation of `docs/rules/liuzhou.md`, twelve to a numbered line, and the result
//! marker. Liuzhou has no record format of its own among players; this one reads as PGN to a
//! person and replays by parsing each action in turn from `StartLFEN`.

use super::Liuzhou;
use crate::{Game, GameRecord, Outcome, Player, RecordFormat, RecordMeta};

impl RecordFormat for Liuzhou {
    const EXTENSION: &'static str = "txt";
    const MIME: &'static str = "text/plain; charset=utf-8";

    fn write_record(record: &GameRecord<Self>, meta: &RecordMeta<'_>) -> String {
        let result = match record.result {
            Some(Outcome::Win(Player::First)) => "1-0",
            Some(Outcome::Win(Player::Second)) => "0-1",
            Some(Outcome::Draw) => "1/2-1/2",
            None => "*",
        };
        let end = record.final_state();
        let mut tags = vec![
            ("Game", "Liuzhou".to_string()),
            (
                "Rules",
                format!("lose_below {}", record.start.rules().lose_below),
            ),
            ("Black", meta.names[0].to_string()),
            ("White", meta.names[1].to_string()),
            ("Result", result.to_string()),
        ];
        if let Some(ending) = meta.ending {
            tags.push(("Ending", ending.to_string()));
        }
        tags.extend([
            ("StartLFEN", record.start.lfen()),
            ("FinalLFEN", end.lfen()),
            ("Actions", record.actions.len().to_string()),
        ]);
        let mut text: String = tags
            .iter()
            .map(|(name, value)| {
                let value = value.replace('\\', "\\\\").replace('"', "\\\"");
                format!("[{name} \"{value}\"]\n")
            })
            .collect();
        text.push('\n');
        let mut state = record.start.clone();
        let words: Vec<String> = record
            .actions
            .iter()
            .map(|&a| {
                let word = state.format_action(a);
                state.play_unchecked(a);
                word
            })
            .collect();
        for (i, line) in words.chunks(12).enumerate() {
            text.push_str(&format!("{:>3}. {}\n", i * 12 + 1, line.join(" ")));
        }
        text.push_str(result);
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_replays_from_its_start_to_its_end() {
        let mut record = GameRecord {
            start: Liuzhou::default(),
            actions: Vec::new(),
            result: Some(Outcome::Win(Player::Second)),
            result_text: None,
        };
        let mut state = record.start.clone();
        let mut legal = Vec::new();
        for k in 0..30 {
            legal.clear();
            state.legal_actions(&mut legal);
            let a = legal[(k * 7) % legal.len()];
            record.actions.push(a);
            state.play_unchecked(a);
        }
        let meta = RecordMeta {
            names: ["a \"b\"", "c"],
            ending: Some("Black resigned"),
            resigned: Some(Player::First),
        };
        let text = Liuzhou::write_record(&record, &meta);
        assert!(text.contains("[Black \"a \\\"b\\\"\"]"), "{text}");
        assert!(text.contains("[Ending \"Black resigned\"]"));
        assert!(text.contains(&format!("[FinalLFEN \"{}\"]", state.lfen())));
        let (tags, moves) = text.split_once("\n\n").unwrap();
        assert!(tags.contains("[Result \"0-1\"]"));
        let words: Vec<&str> = moves
            .split_whitespace()
            .filter(|w| !w.ends_with('.'))
            .collect();
        let (result, actions) = words.split_last().unwrap();
        assert_eq!(*result, "0-1");
        let mut replay = Liuzhou::default();
        for a in actions {
            replay.play(replay.parse_action(a).unwrap()).unwrap();
        }
        assert_eq!(replay.lfen(), state.lfen());
    }
}
