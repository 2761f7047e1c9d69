//! Xiangqi game records in PGN, as Xiangqi GUIs and databases write them.
//!
//! # Reading ([`read_pgn`], [`read_pgn_games`])
//! - **Encoding**: UTF-8 (a BOM is skipped); bytes that are not valid UTF-8 are read as GBK
//!   (GB 18030); a UTF-16 file needs its BOM. CRLF and LF line ends alike.
//! - **Games**: any number per file. A game is its tag pairs (`[Name "value"]`, `\"` and `\\`
//!   escaped) and its movetext; a tag after movetext, or movetext after a result marker, starts
//!   the next game.
//! - **Tags read**: `FEN` (the start position, else the standard one), `Result` (`1-0`, `0-1`,
//!   `1/2-1/2`; `*`, a missing tag or any other value give no result; without the tag the
//!   movetext's result marker is used), `Game` (must name Chinese chess or Xiangqi when present).
//!   `Format` (ICCS/WXF/Chinese) is kept as a tag but not needed: the notation is recognised
//!   move by move. Every tag is kept in [`PgnGame::tags`].
//! - **Movetext**: move numbers (`1.`, `1...`, also glued to the move, `1.h2e2`), comments in
//!   braces and from `;` to the end of the line, variations in parentheses (skipped: only the
//!   main line is read), NAGs (`$1`) and `!`/`?`/`+`/`#` suffixes are passed over. Moves in any
//!   of three notations, mixed freely:
//!   - **ICCS**: `h2e2`, `h2-e2`, `H2-E2` (see [`super::fen`]);
//!   - **WXF**: `C2.5`, `H8+7`, `R+.3`, `+C-1`, `3+.4` (see [`super::wxf`]);
//!   - **Chinese**: `炮二平五`, `马8进7`, `马８进７`, `傌二進三`, `前炮退一` (see [`super::chinese`]).
//!
//! Each move is resolved against the legal moves of the position reached. A game whose text
//! cannot be read (an unknown, illegal or ambiguous move; a comment, variation or tag that is
//! not closed; a bad FEN; a move after the rules have already ended the game, such as a third
//! repetition this engine scores) is an `Err` for that game alone, and the file's other games
//! are still read. [`RecordError::game`] counts games from 1; [`RecordError::move_number`] is
//! the **ply** at fault, counted from 1 at the game's start position (`None` for a fault
//! outside the moves); the reason quotes the move as numbered in the file (`12...`) and its
//! line.
//!
//! # Writing ([`write_pgn`])
//! Tags `Game "Chinese Chess"`, the caller's tags, `Red`, `Black`, `Result`, `FEN` when the game
//! does not start from the standard position, `Format "ICCS"`; then the moves in ICCS as Xiangqi
//! GUIs write them (`1. H2-E2 H9-G7`), lines of at most 80 characters, and the result marker.
//! As the game's [`RecordFormat`], the rule that ended the game goes into a comment before the
//! result marker (PGN's `Termination` tag takes fixed words only); a game lost by perpetual
//! check or perpetual chase also gets `Termination "rules infraction"` unless the caller's tags
//! give a `Termination`.
//! [`wxf_notation`](super::wxf::wxf_notation) and
//! [`chinese_notation`](super::chinese::chinese_notation) write single moves in the other two
//! notations, and read back to the same moves.

use std::borrow::Cow;

use super::board::Position;
use super::{chinese, fen, wxf, EndReason, Move, Side, Xiangqi};
use crate::{Game, GameRecord, Outcome, Player, RecordError, RecordFormat, RecordMeta};

/// Why a move's text names no legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveTextError {
    #[error("'{0}' is not a move in ICCS, WXF or Chinese notation")]
    Unreadable(String),
    #[error("'{0}' is not a legal move here")]
    Illegal(String),
    #[error("'{0}' is ambiguous: it fits {list}", list = moves_text(.1))]
    Ambiguous(String, Vec<Move>),
}

fn moves_text(moves: &[Move]) -> String {
    let names: Vec<String> = moves.iter().map(|&m| fen::format_move(m)).collect();
    names.join(", ")
}

/// One game read from a PGN file: every tag as written, and the replayed record.
#[derive(Clone, Debug)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub record: GameRecord<Xiangqi>,
}

impl PgnGame {
    /// The value of tag `name` (names compared without regard to case).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads every game of a PGN file (see the module docs).
pub fn read_pgn(bytes: &[u8]) -> Vec<Result<GameRecord<Xiangqi>, RecordError>> {
    read_pgn_games(bytes)
        .into_iter()
        .map(|g| g.map(|g| g.record))
        .collect()
}

/// [`read_pgn`], keeping each game's tags.
pub fn read_pgn_games(bytes: &[u8]) -> Vec<Result<PgnGame, RecordError>> {
    let text = decode(bytes);
    split_games(lex(&text))
        .into_iter()
        .enumerate()
        .map(|(i, raw)| replay(i + 1, raw))
        .collect()
}

/// The text of a file: UTF-8 (BOM skipped), UTF-16 with a BOM, else GBK.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        if encoding == encoding_rs::UTF_8 {
            if let Ok(s) = std::str::from_utf8(&bytes[bom..]) {
                return Cow::Borrowed(s);
            }
        } else {
            return encoding.decode_without_bom_handling(&bytes[bom..]).0;
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => encoding_rs::GB18030.decode_without_bom_handling(bytes).0,
    }
}

/// Which notation a move's text is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    Iccs,
    Wxf,
    Chinese,
}

/// The notation `text` is written in, if it looks like a move at all.
pub fn notation_of(text: &str) -> Option<Notation> {
    let t = strip_suffixes(text);
    if iccs_squares(t).is_some() {
        Some(Notation::Iccs)
    } else if t.is_ascii() {
        wxf::parse_spec(t).map(|_| Notation::Wxf)
    } else {
        chinese::parse_spec(t).map(|_| Notation::Chinese)
    }
}

/// Reads a move in ICCS, WXF or Chinese notation (recognised from the text) and finds it among
/// the legal moves of `pos`.
pub fn parse_move_text(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    let mut legal = super::MoveList::new();
    pos.clone().gen_legal(&mut legal);
    resolve(pos, legal.as_slice(), text)
}

fn strip_suffixes(text: &str) -> &str {
    text.trim().trim_end_matches(['!', '?', '+', '#'])
}

/// `h2e2`, `h2-e2`, `H2-E2` as a from/to pair.
fn iccs_squares(text: &str) -> Option<Move> {
    let t: String = text.to_ascii_lowercase();
    let b = t.as_bytes();
    let joined = match b.len() {
        4 => t.clone(),
        5 if b[2] == b'-' => format!("{}{}", &t[..2], &t[3..]),
        _ => return None,
    };
    let j = joined.as_bytes();
    let square = |f: u8, r: u8| (b'a'..=b'i').contains(&f) && r.is_ascii_digit();
    if square(j[0], j[1]) && square(j[2], j[3]) {
        fen::parse_move(&joined).ok()
    } else {
        None
    }
}

fn resolve(pos: &Position, legal: &[Move], text: &str) -> Result<Move, MoveTextError> {
    let t = strip_suffixes(text);
    if let Some(m) = iccs_squares(t) {
        return if legal.contains(&m) {
            Ok(m)
        } else {
            Err(MoveTextError::Illegal(t.to_string()))
        };
    }
    if t.is_ascii() {
        wxf::resolve_wxf(pos, legal, t)
    } else {
        chinese::resolve_chinese(pos, legal, t)
    }
}

/// A piece of PGN text.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Tag(String, String),
    /// A tag that could not be read, with the reason.
    BadTag(String),
    /// A move (or move number, or result) with its line.
    Word(String, usize),
    /// A comment or variation that is not closed, with the reason.
    Unclosed(String),
}

fn lex(text: &str) -> Vec<Token> {
    let cs: Vec<char> = text.chars().collect();
    let n = cs.len();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut line_start = true;
    while i < n {
        let c = cs[i];
        if c == '\n' {
            line += 1;
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        match c {
            '{' => match cs[i..].iter().position(|&c| c == '}') {
                Some(len) => {
                    line += cs[i..i + len].iter().filter(|&&c| c == '\n').count();
                    i += len + 1;
                }
                None => {
                    out.push(Token::Unclosed(format!(
                        "the comment opened on line {line} is not closed"
                    )));
                    i = n;
                }
            },
            ';' => {
                while i < n && cs[i] != '\n' {
                    i += 1;
                }
            }
            '%' if at_line_start => {
                while i < n && cs[i] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                let opened = line;
                let mut depth = 0usize;
                let mut in_comment = false;
                while i < n {
                    match cs[i] {
                        '\n' => line += 1,
                        '{' if !in_comment => in_comment = true,
                        '}' if in_comment => in_comment = false,
                        '(' if !in_comment => depth += 1,
                        ')' if !in_comment => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                if depth > 0 {
                    out.push(Token::Unclosed(format!(
                        "the variation opened on line {opened} is not closed"
                    )));
                }
            }
            // Closing brackets with nothing open are passed over, like a stray `)`.
            ')' | '}' | ']' => i += 1,
            '[' => {
                let end = cs[i..].iter().position(|&c| c == '\n').map_or(n, |k| i + k);
                match parse_tag(&cs[i + 1..end]) {
                    Some((name, value, used)) => {
                        out.push(Token::Tag(name, value));
                        i += 1 + used;
                    }
                    None => {
                        out.push(Token::BadTag(format!(
                            "the tag on line {line} is not closed or not of the form [Name \"value\"]"
                        )));
                        i = end;
                    }
                }
            }
            '$' => {
                i += 1;
                while i < n && cs[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => {
                let start = i;
                while i < n && !cs[i].is_whitespace() && !"{}()[];".contains(cs[i]) {
                    i += 1;
                }
                out.push(Token::Word(cs[start..i].iter().collect(), line));
            }
        }
    }
    out
}

/// Reads `Name "value"]` (what follows the `[`, up to the end of its line): the name, the
/// unescaped value and how many characters the tag used.
fn parse_tag(cs: &[char]) -> Option<(String, String, usize)> {
    let mut i = 0;
    while i < cs.len() && cs[i].is_whitespace() {
        i += 1;
    }
    let start = i;
    while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
        i += 1;
    }
    let name: String = cs[start..i].iter().collect();
    while i < cs.len() && cs[i].is_whitespace() {
        i += 1;
    }
    if name.is_empty() || cs.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    let mut value = String::new();
    loop {
        match *cs.get(i)? {
            '\\' => {
                value.push(*cs.get(i + 1)?);
                i += 2;
            }
            '"' => break,
            c => {
                value.push(c);
                i += 1;
            }
        }
    }
    i += 1;
    while i < cs.len() && cs[i].is_whitespace() {
        i += 1;
    }
    (cs.get(i) == Some(&']')).then(|| (name, value.trim().to_string(), i + 1))
}

/// One game's tokens before replay.
#[derive(Default)]
struct RawGame {
    tags: Vec<(String, String)>,
    /// Moves with their lines, and faults (`Err`) where they occurred.
    moves: Vec<Result<(String, usize), String>>,
    /// A fault in the tag section.
    tag_fault: Option<String>,
    marker: Option<String>,
}

impl RawGame {
    fn has_movetext(&self) -> bool {
        !self.moves.is_empty() || self.marker.is_some()
    }
    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.tag_fault.is_none() && !self.has_movetext()
    }
}

const RESULTS: [&str; 6] = ["1-0", "0-1", "1/2-1/2", "½-½", "1/2", "*"];

/// A move number (`12.`, `12...`, `12…`), possibly glued to the move that follows: the move,
/// if any. `None` when `word` is not a move number at all.
fn after_move_number(word: &str) -> Option<&str> {
    let digits = word
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(word.len());
    if digits == 0 {
        return None;
    }
    let rest = &word[digits..];
    if rest.is_empty() {
        return Some("");
    }
    let after = rest.trim_start_matches(['.', '…', '．']);
    if after.len() == rest.len() {
        return None;
    }
    // `33.4` is a WXF move (tandem soldiers), not move 33 and a `4`.
    if after.is_empty() || after.chars().count() >= 3 {
        Some(after)
    } else {
        None
    }
}

fn split_games(tokens: Vec<Token>) -> Vec<RawGame> {
    let mut games = Vec::new();
    let mut game = RawGame::default();
    for token in tokens {
        let starts_tag = matches!(token, Token::Tag(..) | Token::BadTag(_));
        let after_marker = game.marker.is_some();
        if (starts_tag && game.has_movetext()) || (!starts_tag && after_marker) {
            games.push(std::mem::take(&mut game));
        }
        match token {
            Token::Tag(name, value) => game.tags.push((name, value)),
            Token::BadTag(reason) => {
                game.tag_fault.get_or_insert(reason);
            }
            Token::Unclosed(reason) => game.moves.push(Err(reason)),
            Token::Word(word, line) => {
                if RESULTS.contains(&word.as_str()) {
                    game.marker = Some(word);
                } else if word.chars().all(|c| matches!(c, '.' | '…')) {
                    // The `...` of a Black move on its own.
                } else {
                    match after_move_number(&word) {
                        Some("") => {}
                        Some(mv) => game.moves.push(Ok((mv.to_string(), line))),
                        None => game.moves.push(Ok((word, line))),
                    }
                }
            }
        }
    }
    if !game.is_empty() {
        games.push(game);
    }
    games
}

/// The outcome a result text gives (Red is [`Player::First`]).
fn outcome_of(text: &str) -> Option<Outcome> {
    match text.trim() {
        "1-0" | "红胜" | "紅勝" => Some(Outcome::Win(Player::First)),
        "0-1" | "黑胜" | "黑勝" => Some(Outcome::Win(Player::Second)),
        "1/2-1/2" | "½-½" | "1/2" | "和棋" | "和局" => Some(Outcome::Draw),
        _ => None,
    }
}

fn is_xiangqi_game_tag(value: &str) -> bool {
    let v = value.to_lowercase();
    v.is_empty()
        || v.contains("chinese")
        || v.contains("xiangqi")
        || v.contains("象棋")
        || v.contains("象碁")
}

fn replay(number: usize, raw: RawGame) -> Result<PgnGame, RecordError> {
    let fault = |move_number: Option<usize>, reason: String| RecordError {
        game: number,
        move_number,
        reason,
    };
    if let Some(reason) = raw.tag_fault {
        return Err(fault(None, reason));
    }
    let tag = |name: &str| {
        raw.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if let Some(game) = tag("Game") {
        if !is_xiangqi_game_tag(game) {
            return Err(fault(
                None,
                format!("the Game tag says '{game}', not Chinese Chess"),
            ));
        }
    }
    let start = match tag("FEN") {
        Some(text) => Xiangqi::from_fen(text).map_err(|e| fault(None, format!("FEN tag: {e}")))?,
        None => Xiangqi::start(),
    };
    let first_move_number: usize = start
        .to_text()
        .split_whitespace()
        .last()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let black_first = start.side() == Side::Black;
    let mut state = start.clone();
    let mut actions = Vec::new();
    for item in &raw.moves {
        let ply = actions.len() + 1;
        let (text, line) = match item {
            Ok(m) => m,
            Err(reason) => return Err(fault((ply > 1).then_some(ply), reason.clone())),
        };
        let half = actions.len() + black_first as usize;
        let label = format!(
            "{}{}",
            first_move_number + half / 2,
            if half & 1 == 0 { "." } else { "..." }
        );
        let at = |why: String| fault(Some(ply), format!("{label} {text} (line {line}): {why}"));
        if let Some(why) = state.end_reason() {
            return Err(at(format!(
                "the game is already over ({why}) but the record goes on"
            )));
        }
        let legal = state.legal_moves();
        let m = resolve(state.position(), legal.as_slice(), text).map_err(|e| at(e.to_string()))?;
        state.play_unchecked(m);
        actions.push(m);
    }
    let result_text = match tag("Result") {
        Some(t) if t != "*" => Some(t.to_string()),
        _ => raw.marker.clone().filter(|m| m != "*"),
    };
    Ok(PgnGame {
        record: GameRecord {
            start,
            actions,
            result: result_text.as_deref().and_then(outcome_of),
            result_text,
        },
        tags: raw.tags,
    })
}

/// The PGN result text of an outcome.
pub fn result_text(result: Option<Outcome>) -> &'static str {
    match result {
        Some(Outcome::Win(Player::First)) => "1-0",
        Some(Outcome::Win(Player::Second)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A move in ICCS as Xiangqi GUIs write it in PGN (`H2-E2`).
fn iccs_upper(m: Move) -> String {
    let t = fen::format_move(m).to_ascii_uppercase();
    format!("{}-{}", &t[..2], &t[2..])
}

/// Writes one game as PGN (see the module docs). `tags` are written after `Game` in the order
/// given, except `Red` and `Black` (`?` when absent), which come before `Result`; `Game`,
/// `Result`, `FEN` and `Format` given in `tags` are ignored (the record decides them).
pub fn write_pgn(record: &GameRecord<Xiangqi>, tags: &[(&str, &str)]) -> String {
    write_pgn_with(record, tags, None)
}

impl RecordFormat for Xiangqi {
    const EXTENSION: &'static str = "pgn";
    const MIME: &'static str = "application/x-chess-pgn";

    fn write_record(record: &GameRecord<Self>, meta: &RecordMeta<'_>) -> String {
        let tags = [("Red", meta.names[0]), ("Black", meta.names[1])];
        write_pgn_with(record, &tags, meta.ending)
    }
}

/// [`write_pgn`], with `comment` (if any) before the result marker.
fn write_pgn_with(
    record: &GameRecord<Xiangqi>,
    tags: &[(&str, &str)],
    comment: Option<&str>,
) -> String {
    let owned = ["Game", "Result", "FEN", "Format", "Red", "Black"];
    let given = |name: &str| {
        tags.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| v)
    };
    let mut out = String::from("[Game \"Chinese Chess\"]\n");
    for &(name, value) in tags {
        if !owned.iter().any(|o| o.eq_ignore_ascii_case(name)) {
            out.push_str(&format!("[{name} \"{}\"]\n", escape(value)));
        }
    }
    for side in ["Red", "Black"] {
        let value = given(side).unwrap_or("?");
        out.push_str(&format!("[{side} \"{}\"]\n", escape(value)));
    }
    let result = result_text(record.result);
    out.push_str(&format!("[Result \"{result}\"]\n"));
    let infraction = matches!(
        record.final_state().end_rule(),
        Some(EndReason::PerpetualCheck | EndReason::PerpetualChase)
    );
    if infraction && given("Termination").is_none() {
        out.push_str("[Termination \"rules infraction\"]\n");
    }
    let start_fen = record.start.to_text();
    if start_fen != Xiangqi::start().to_text() {
        out.push_str(&format!("[FEN \"{start_fen}\"]\n"));
    }
    out.push_str("[Format \"ICCS\"]\n\n");

    let first_number: usize = start_fen
        .split_whitespace()
        .last()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let black_first = record.start.side() == Side::Black;
    let mut words = Vec::new();
    for (i, &m) in record.actions.iter().enumerate() {
        let half = i + black_first as usize;
        let number = first_number + half / 2;
        if half & 1 == 0 {
            words.push(format!("{number}."));
        } else if i == 0 {
            words.push(format!("{number}..."));
        }
        words.push(iccs_upper(m));
    }
    if let Some(text) = comment {
        words.push(format!("{{{}}}", text.replace('}', ")")));
    }
    words.push(result.to_string());
    let mut line_len = 0;
    for word in words {
        if line_len > 0 && line_len + 1 + word.len() > 80 {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        line_len += word.len();
        out.push_str(&word);
    }
    out.push('\n');
    out
}
