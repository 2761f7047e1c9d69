//! A game record read from a file a person or another program wrote (SGF for Go, PGN for
//! Xiangqi): where the game started, the actions along its main line, and the result the file
//! gives. The readers live with each game's text formats; importers turn records into
//! training samples without knowing which format they came from.

use std::path::Path;

use crate::{Game, Outcome, Player};

/// One game of a record file, replayed and checked against the rules.
#[derive(Clone, Debug)]
pub struct GameRecord<G: Game> {
    /// The position before the first action (setup stones, handicap or a FEN included).
    pub start: G,
    /// The actions of the main line, each legal in the position it was played from.
    pub actions: Vec<G::Action>,
    /// The result as the file states it; `None` when the file gives none or calls the game
    /// void (such a game has no value target).
    pub result: Option<Outcome>,
    /// The result's text as written (`B+R`, `1-0`), for listings.
    pub result_text: Option<String>,
}

impl<G: Game> GameRecord<G> {
    /// The position after every action.
    pub fn final_state(&self) -> G {
        let mut state = self.start.clone();
        for &a in &self.actions {
            state.play_unchecked(a);
        }
        state
    }

    /// Every position from which an action was played, with that action.
    pub fn positions(&self) -> impl Iterator<Item = (G, G::Action)> + '_ {
        let mut state = self.start.clone();
        self.actions.iter().map(move |&a| {
            let before = state.clone();
            state.play_unchecked(a);
            (before, a)
        })
    }
}

/// What a written record says beside the moves.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordMeta<'a> {
    /// The players' names, first player first.
    pub names: [&'a str; 2],
    /// Why the game ended, in words (a rule, or `Black resigned`), when it did.
    pub ending: Option<&'a str>,
    /// The player who resigned, if one did: formats write a resignation their own way.
    pub resigned: Option<Player>,
}

/// The record file a game's players use (PGN for Xiangqi, SGF for Go): the one writer the
/// web page's download, `engine match` and every other face share.
pub trait RecordFormat: Game {
    /// The file name's ending, without the dot.
    const EXTENSION: &'static str;
    /// The media type of a download.
    const MIME: &'static str;

    /// One game as the format writes it; games written one after another make a file that
    /// holds them all.
    fn write_record(record: &GameRecord<Self>, meta: &RecordMeta<'_>) -> String;
}

/// Why one game of a record file cannot be used: the game's number in the file (from 1), the
/// move number where it broke (when it is a move), and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game}{}: {reason}", move_number.map(|m| format!(", move {m}")).unwrap_or_default())]
pub struct RecordError {
    pub game: usize,
    pub move_number: Option<usize>,
    pub reason: String,
}

/// Writes a record file through a temporary file renamed into place, so that a reader never
/// sees half a file.
pub fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
