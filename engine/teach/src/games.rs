//! What each game brings to learning from others: the files its players keep their games in,
//! and the engines that can teach it.

use games::go::GoState;
use games::liuzhou::Liuzhou;
use games::xiangqi::{pgn, Xiangqi};
use games::{Agent, Encoding, GameRecord, RecordError};

use crate::bootstrap::BootstrapConfig;
use crate::gtp_teacher::GtpTeacher;
use crate::teacher::{AgentTeacher, TeachError, Teacher};
use crate::uci_teacher::UciTeacher;

/// A game as `engine import` and `engine bootstrap` see it.
pub trait Learnable: Encoding {
    /// The ending of record files found in directories (`sgf`, `pgn`); `None` when the game
    /// has no record format.
    const RECORD_EXTENSION: Option<&'static str>;

    /// Every game of a record file, replayed in `start`'s variant (one entry per game).
    fn read_records(_start: &Self, _text: &str) -> Vec<Result<GameRecord<Self>, RecordError>> {
        Vec::new()
    }

    /// Reads a record file that is not UTF-8, where the game's files may be in another encoding.
    fn legacy_text() -> Option<fn(&[u8]) -> String> {
        None
    }

    /// The teacher `spec` names: an external engine the game knows how to ask for analysis, or
    /// else `agent()` (any agent spec), which teaches by its choices.
    fn teacher(
        spec: &str,
        config: &BootstrapConfig,
        agent: &mut dyn FnMut() -> Result<Box<dyn Agent<Self>>, TeachError>,
    ) -> Result<Box<dyn Teacher<Self>>, TeachError> {
        let _ = (spec, config);
        Ok(Box::new(AgentTeacher::new(agent()?)))
    }
}

impl Learnable for Liuzhou {
    const RECORD_EXTENSION: Option<&'static str> = None;
}

impl Learnable for GoState {
    const RECORD_EXTENSION: Option<&'static str> = Some("sgf");

    fn read_records(start: &Self, text: &str) -> Vec<Result<GameRecord<Self>, RecordError>> {
        games::go::sgf::read_records(text, start.rules())
    }

    /// `gtp:cmd=…` asks the program for its move values and score estimate (GNU Go).
    fn teacher(
        spec: &str,
        config: &BootstrapConfig,
        agent: &mut dyn FnMut() -> Result<Box<dyn Agent<Self>>, TeachError>,
    ) -> Result<Box<dyn Teacher<Self>>, TeachError> {
        if spec.trim_start().starts_with("gtp:") {
            return Ok(Box::new(GtpTeacher::from_spec(spec, config)?));
        }
        Ok(Box::new(AgentTeacher::new(agent()?)))
    }
}

impl Learnable for Xiangqi {
    const RECORD_EXTENSION: Option<&'static str> = Some("pgn");

    fn read_records(_start: &Self, text: &str) -> Vec<Result<GameRecord<Self>, RecordError>> {
        pgn::read_pgn(text.as_bytes())
    }

    fn legacy_text() -> Option<fn(&[u8]) -> String> {
        Some(|bytes| pgn::decode(bytes).into_owned())
    }

    /// `fairy-stockfish:…` and `uci:cmd=…` are asked for their MultiPV lines and scores.
    fn teacher(
        spec: &str,
        config: &BootstrapConfig,
        agent: &mut dyn FnMut() -> Result<Box<dyn Agent<Self>>, TeachError>,
    ) -> Result<Box<dyn Teacher<Self>>, TeachError> {
        match UciTeacher::from_spec(spec, config)? {
            Some(t) => Ok(Box::new(t)),
            None => Ok(Box::new(AgentTeacher::new(agent()?))),
        }
    }
}
