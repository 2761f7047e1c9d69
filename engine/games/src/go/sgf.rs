//! Go game records in SGF (FF[4], GM[1]): the one module that reads and writes them.
//!
//! Reading follows the main line (the first variation at every branch) of a game tree.
//! [`SgfGame::parse`] reads the first game of a collection; [`read_records`] reads every game
//! of a collection and replays each through the rules. Understood: `FF`, `GM`, `SZ`, `KM`,
//! `RU`, `HA`, `PB`, `PW`, `RE`, `PL`, setup (`AB`, `AW`, `AE`) before the first move, and moves
//! `B`/`W` (`[]` or `[tt]` pass). Identifiers are their upper-case letters, as FF[3] allowed
//! (`AddBlack` is `AB`). Other properties (comments included) are checked for syntax and
//! ignored. Writing produces one main line.

use std::fmt::Write as _;

use super::{color_letter, GoRules, GoState, KoRule, Move, Point, MAX_SIZE, MIN_SIZE};
use crate::{
    Encoding, Game, GameRecord, Outcome, PlayError, Player, RecordError, RecordFormat, RecordMeta,
};

/// Why a text is not a usable SGF Go record: the byte offset and the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SGF, byte {offset}: {reason}")]
pub struct SgfError {
    pub offset: usize,
    pub reason: String,
}

fn err<T>(offset: usize, reason: impl Into<String>) -> Result<T, SgfError> {
    Err(SgfError {
        offset,
        reason: reason.into(),
    })
}

/// A game record: what the engine needs to replay and to write it.
#[derive(Clone, Debug, PartialEq)]
pub struct SgfGame {
    pub size: usize,
    /// `KM`; `None` when the record gives none (the spec sets no default: the reader's rules
    /// decide).
    pub komi: Option<f32>,
    /// `RU`, as written.
    pub ruleset: Option<String>,
    pub handicap: Option<u32>,
    pub black_name: Option<String>,
    pub white_name: Option<String>,
    /// `RE`, as written (`B+3.5`, `W+R`, `0`).
    pub result: Option<String>,
    /// Stones set up before the first move.
    pub setup: Vec<(Point, Player)>,
    /// `PL`: who moves first, when set.
    pub first_player: Option<Player>,
    pub moves: Vec<(Player, Move)>,
}

impl Default for SgfGame {
    fn default() -> Self {
        SgfGame {
            size: 19,
            komi: None,
            ruleset: None,
            handicap: None,
            black_name: None,
            white_name: None,
            result: None,
            setup: Vec::new(),
            first_player: None,
            moves: Vec::new(),
        }
    }
}

/// One property as read: identifier, values, and where it began.
struct Property {
    ident: String,
    values: Vec<String>,
    offset: usize,
}

/// A byte cursor over the text.
struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// A bracketed value, unescaped; the cursor is on `[`.
    fn value(&mut self) -> Result<String, SgfError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return err(start, "unterminated property value"),
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        None => return err(start, "unterminated property value"),
                        // An escaped line break is a soft break: it disappears.
                        Some(b'\n') => {
                            self.pos += 1;
                            if self.peek() == Some(b'\r') {
                                self.pos += 1;
                            }
                        }
                        Some(b'\r') => {
                            self.pos += 1;
                            if self.peek() == Some(b'\n') {
                                self.pos += 1;
                            }
                        }
                        Some(c) => {
                            out.push(c);
                            self.pos += 1;
                        }
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        // The input is a &str and only ASCII bytes were dropped, so this stays UTF-8.
        String::from_utf8(out).or_else(|_| err(start, "property value is not UTF-8"))
    }

    /// The properties of one node; the cursor is just after `;`.
    fn node(&mut self) -> Result<Vec<Property>, SgfError> {
        let mut props = Vec::new();
        loop {
            self.skip_ws();
            let offset = self.pos;
            let mut ident = String::new();
            while let Some(c) = self.peek() {
                if c.is_ascii_uppercase() {
                    ident.push(c as char);
                } else if !c.is_ascii_lowercase() {
                    // FF[3] allowed lowercase letters inside identifiers; they are dropped.
                    break;
                }
                self.pos += 1;
            }
            if self.pos == offset {
                return Ok(props);
            }
            if ident.is_empty() {
                return err(offset, "property identifier without an uppercase letter");
            }
            self.skip_ws();
            if self.peek() != Some(b'[') {
                return err(self.pos, format!("property {ident} without a value"));
            }
            let mut values = Vec::new();
            while self.peek() == Some(b'[') {
                values.push(self.value()?);
                self.skip_ws();
            }
            props.push(Property {
                ident,
                values,
                offset,
            });
        }
    }

    /// Skips to the end of the game tree we are in, `depth` levels deep, without recursion.
    fn skip_trees(&mut self, mut depth: usize) -> Result<(), SgfError> {
        while depth > 0 {
            self.skip_ws();
            match self.peek() {
                None => return err(self.pos, "unclosed game tree: missing `)`"),
                Some(b'(') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b')') => {
                    depth -= 1;
                    self.pos += 1;
                }
                Some(b';') => {
                    self.pos += 1;
                    self.node()?;
                }
                Some(c) => return err(self.pos, format!("unexpected {:?}", c as char)),
            }
        }
        Ok(())
    }
}

/// The main line's nodes of one game tree.
type MainLine = Vec<Vec<Property>>;

/// Moves (`B`/`W` properties) among `nodes`.
fn moves_in(nodes: &[Vec<Property>]) -> usize {
    nodes
        .iter()
        .flatten()
        .filter(|p| p.ident == "B" || p.ident == "W")
        .count()
}

impl Reader<'_> {
    /// A reader at the start of `text`, past a UTF-8 byte-order mark if there is one.
    fn new(text: &str) -> Reader<'_> {
        let text = text.as_bytes();
        let pos = if text.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        Reader { text, pos }
    }

    /// The main line of the game tree whose `(` is under the cursor; the cursor ends after
    /// the tree's `)`. On error, also the number of moves the main line gave whole before it.
    fn tree(&mut self) -> Result<MainLine, (SgfError, usize)> {
        let mut nodes = Vec::new();
        let fail = |e: SgfError, nodes: &MainLine| (e, moves_in(nodes));
        if self.peek() != Some(b'(') {
            return Err((
                SgfError {
                    offset: self.pos,
                    reason: "expected `(` to open a game tree".into(),
                },
                0,
            ));
        }
        self.pos += 1;
        let mut depth = 1;
        loop {
            self.skip_ws();
            match self.peek() {
                None => {
                    return Err(fail(
                        SgfError {
                            offset: self.pos,
                            reason: "unclosed game tree: missing `)`".into(),
                        },
                        &nodes,
                    ))
                }
                Some(b';') => {
                    self.pos += 1;
                    let node = self.node().map_err(|e| fail(e, &nodes))?;
                    nodes.push(node);
                }
                Some(b'(') => {
                    if nodes.is_empty() {
                        let e = SgfError {
                            offset: self.pos,
                            reason: "a game tree must start with a node".into(),
                        };
                        return Err((e, 0));
                    }
                    // The first variation continues the main line.
                    self.pos += 1;
                    depth += 1;
                }
                Some(b')') => {
                    self.pos += 1;
                    depth -= 1;
                    if nodes.is_empty() {
                        let e = SgfError {
                            offset: self.pos - 1,
                            reason: "empty game tree".into(),
                        };
                        return Err((e, 0));
                    }
                    // The main line ends here: skip the sibling variations.
                    self.skip_trees(depth).map_err(|e| fail(e, &nodes))?;
                    return Ok(nodes);
                }
                Some(c) => {
                    let e = SgfError {
                        offset: self.pos,
                        reason: format!("unexpected {:?}", c as char),
                    };
                    return Err(fail(e, &nodes));
                }
            }
        }
    }
}

/// The nodes of the main line of the first game tree.
fn main_line(text: &str) -> Result<MainLine, SgfError> {
    let mut r = Reader::new(text);
    r.skip_ws();
    r.tree().map_err(|(e, _)| e)
}

/// The main line of every game tree of a collection, in order. A syntax error ends the
/// collection (where the next game starts is then unknown): it is the last entry, with the
/// number of moves its game gave whole before it.
fn collection(text: &str) -> Vec<Result<MainLine, (SgfError, usize)>> {
    let mut r = Reader::new(text);
    let mut games = Vec::new();
    loop {
        r.skip_ws();
        if r.peek().is_none() {
            if games.is_empty() {
                let e = SgfError {
                    offset: r.pos,
                    reason: "no game tree in the text".into(),
                };
                games.push(Err((e, 0)));
            }
            return games;
        }
        let tree = r.tree();
        let broken = tree.is_err();
        games.push(tree);
        if broken {
            return games;
        }
    }
}

fn single(p: &Property) -> Result<&str, SgfError> {
    match p.values.as_slice() {
        [v] => Ok(v.trim()),
        _ => err(p.offset, format!("{} takes one value", p.ident)),
    }
}

fn parse_point(value: &str, size: usize, offset: usize) -> Result<Point, SgfError> {
    let b = value.as_bytes();
    if b.len() != 2 || !b[0].is_ascii_lowercase() || !b[1].is_ascii_lowercase() {
        return err(offset, format!("bad point {value:?}"));
    }
    let col = (b[0] - b'a') as usize;
    let from_top = (b[1] - b'a') as usize;
    if col >= size || from_top >= size {
        return err(
            offset,
            format!("point {value:?} is off the {size}x{size} board"),
        );
    }
    Ok(Point::new(size - 1 - from_top, col))
}

/// A setup value: one point or a rectangle `aa:cc`.
fn parse_points(value: &str, size: usize, offset: usize) -> Result<Vec<Point>, SgfError> {
    match value.split_once(':') {
        None => Ok(vec![parse_point(value, size, offset)?]),
        Some((a, b)) => {
            let (a, b) = (parse_point(a, size, offset)?, parse_point(b, size, offset)?);
            let mut out = Vec::new();
            for row in a.row.min(b.row)..=a.row.max(b.row) {
                for col in a.col.min(b.col)..=a.col.max(b.col) {
                    out.push(Point::new(row as usize, col as usize));
                }
            }
            Ok(out)
        }
    }
}

fn point_text(p: Point, size: usize) -> String {
    let col = (b'a' + p.col) as char;
    let row = (b'a' + (size - 1 - p.row as usize) as u8) as char;
    format!("{col}{row}")
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace(']', "\\]")
}

impl SgfGame {
    /// Reads the main line of the first game in an SGF collection.
    pub fn parse(text: &str) -> Result<SgfGame, SgfError> {
        SgfGame::from_nodes(&main_line(text)?, &mut None)
    }

    /// The record a main line gives. `at_move` is left naming the move being read when an
    /// error comes (`None` in the root properties and the setup before the first move).
    fn from_nodes(
        nodes: &[Vec<Property>],
        at_move: &mut Option<usize>,
    ) -> Result<SgfGame, SgfError> {
        let mut game = SgfGame::default();
        // Root properties first: the board size decides how points read.
        for p in &nodes[0] {
            let v = || single(p);
            match p.ident.as_str() {
                "GM" if v()? != "1" => {
                    return err(p.offset, format!("GM[{}] is not Go (GM[1])", v()?));
                }
                "FF" => match v()?.parse::<u32>() {
                    Ok(1..=4) => {}
                    _ => return err(p.offset, format!("unsupported FF[{}]", v()?)),
                },
                "SZ" => {
                    let text = v()?;
                    let (a, b) = text.split_once(':').unwrap_or((text, text));
                    let (a, b) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
                    match (a, b) {
                        (Ok(a), Ok(b)) if a == b && (MIN_SIZE..=MAX_SIZE).contains(&a) => {
                            game.size = a
                        }
                        (Ok(a), Ok(b)) if a == b => {
                            return err(
                                p.offset,
                                format!("board size {a} is outside {MIN_SIZE}..={MAX_SIZE}"),
                            )
                        }
                        (Ok(_), Ok(_)) => return err(p.offset, "only square boards"),
                        _ => return err(p.offset, format!("bad SZ[{text}]")),
                    }
                }
                "KM" => match v()?.parse::<f32>() {
                    Ok(k) if k.is_finite() && k.abs() <= 1000.0 => game.komi = Some(k),
                    _ => return err(p.offset, format!("bad KM[{}]", v()?)),
                },
                "HA" => match v()?.parse::<u32>() {
                    Ok(h) => game.handicap = Some(h),
                    _ => return err(p.offset, format!("bad HA[{}]", v()?)),
                },
                "RU" => game.ruleset = Some(v()?.to_string()),
                "PB" => game.black_name = Some(v()?.to_string()),
                "PW" => game.white_name = Some(v()?.to_string()),
                "RE" => game.result = Some(v()?.to_string()),
                _ => {}
            }
        }
        let size = game.size;
        for node in nodes {
            // SGF allows a point in at most one of AB, AW, AE of a node, once.
            let mut set_here: Vec<Point> = Vec::new();
            for p in node {
                let is_move = p.ident == "B" || p.ident == "W";
                *at_move = (is_move || !game.moves.is_empty()).then_some(game.moves.len() + 1);
                match p.ident.as_str() {
                    "B" | "W" => {
                        let who = if p.ident == "B" {
                            Player::First
                        } else {
                            Player::Second
                        };
                        let v = single(p)?;
                        let mv = if v.is_empty() || (v == "tt" && size <= 19) {
                            Move::Pass
                        } else {
                            Move::Place(parse_point(v, size, p.offset)?)
                        };
                        game.moves.push((who, mv));
                    }
                    "AB" | "AW" | "AE" => {
                        if !game.moves.is_empty() {
                            return err(p.offset, "setup after the first move is not supported");
                        }
                        for v in &p.values {
                            for pt in parse_points(v.trim(), size, p.offset)? {
                                if set_here.contains(&pt) {
                                    return err(
                                        p.offset,
                                        format!(
                                            "{} sets up point {} ({}) that this node already set",
                                            p.ident,
                                            point_text(pt, size),
                                            pt.to_gtp()
                                        ),
                                    );
                                }
                                set_here.push(pt);
                                game.setup.retain(|&(q, _)| q != pt);
                                match p.ident.as_str() {
                                    "AB" => game.setup.push((pt, Player::First)),
                                    "AW" => game.setup.push((pt, Player::Second)),
                                    _ => {}
                                }
                            }
                        }
                    }
                    "PL" => {
                        if !game.moves.is_empty() {
                            return err(p.offset, "PL after the first move is not supported");
                        }
                        game.first_player = Some(match single(p)? {
                            "B" | "b" => Player::First,
                            "W" | "w" => Player::Second,
                            other => return err(p.offset, format!("bad PL[{other}]")),
                        });
                    }
                    _ => {}
                }
            }
        }
        // A canonical order, so that writing and reading again gives an equal record.
        game.setup.sort();
        Ok(game)
    }

    /// The start position under `rules`, whose size and komi (when it has one) the record
    /// overrides. A handicap (`HA` of 2 or more with as many `AB` stones and nothing else set
    /// up, White to move) starts a handicap game.
    pub fn start(&self, rules: &GoRules) -> Result<GoState, SgfError> {
        let rules = GoRules {
            size: self.size,
            komi: self.komi.unwrap_or(rules.komi),
            ..rules.clone()
        };
        let black_only = self.setup.iter().all(|&(_, who)| who == Player::First);
        let white_first = match (self.first_player, self.moves.first()) {
            (Some(who), _) | (None, Some(&(who, _))) => who == Player::Second,
            (None, None) => true,
        };
        if let Some(h) = self.handicap.filter(|&h| h >= 2) {
            if black_only && white_first && self.setup.len() == h as usize {
                let stones: Vec<Point> = self.setup.iter().map(|&(p, _)| p).collect();
                return GoState::with_handicap(rules, &stones).map_err(|e| SgfError {
                    offset: 0,
                    reason: format!("handicap: {e}"),
                });
            }
        }
        let first = self
            .first_player
            .unwrap_or(match (self.moves.first(), self.handicap) {
                (Some(&(who, _)), _) => who,
                // Handicap stones are Black's move: White starts.
                (None, Some(h)) if h >= 2 => Player::Second,
                _ => Player::First,
            });
        GoState::from_setup(rules, &self.setup, first).map_err(|e| SgfError {
            offset: 0,
            reason: e.to_string(),
        })
    }

    /// Plays the record from its start under `rules` (size and komi from the record). The
    /// first `limit` moves only, when given (GTP `loadsgf FILE N` stops before move N).
    pub fn replay(&self, rules: &GoRules, limit: Option<usize>) -> Result<GoState, SgfError> {
        let mut state = self.start(rules)?;
        let n = limit.unwrap_or(usize::MAX).min(self.moves.len());
        for (i, &(who, mv)) in self.moves[..n].iter().enumerate() {
            state.play_as(who, mv).map_err(|e| SgfError {
                offset: 0,
                reason: format!(
                    "move {} ({} {}): {e}",
                    i + 1,
                    color_letter(who),
                    mv.to_gtp()
                ),
            })?;
        }
        Ok(state)
    }

    /// The record of the game that led to `state`, from its start.
    pub fn from_state(state: &GoState) -> SgfGame {
        let start = state.start();
        SgfGame {
            size: state.size(),
            komi: Some(state.komi()),
            ruleset: Some(ruleset_name(state.rules()).into()),
            handicap: match state.handicap_stones().len() {
                0 => None,
                n => Some(n as u32),
            },
            black_name: None,
            white_name: None,
            result: state.outcome().map(|_| state.score_text()),
            setup: state.start_stones(),
            first_player: (start.to_act() == Player::Second).then_some(Player::Second),
            moves: state.moves_since_start(),
        }
    }

    /// The record as SGF FF[4] text, one main line.
    pub fn to_sgf(&self) -> String {
        let n = self.size;
        let mut s = String::from("(;FF[4]GM[1]CA[UTF-8]AP[engine:");
        s.push_str(env!("CARGO_PKG_VERSION"));
        write!(s, "]SZ[{n}]").unwrap();
        if let Some(k) = self.komi {
            write!(s, "KM[{k}]").unwrap();
        }
        if let Some(ru) = &self.ruleset {
            write!(s, "RU[{}]", escape(ru)).unwrap();
        }
        if let Some(h) = self.handicap {
            write!(s, "HA[{h}]").unwrap();
        }
        for (key, value) in [
            ("PB", &self.black_name),
            ("PW", &self.white_name),
            ("RE", &self.result),
        ] {
            if let Some(v) = value {
                write!(s, "{key}[{}]", escape(v)).unwrap();
            }
        }
        for (key, who) in [("AB", Player::First), ("AW", Player::Second)] {
            let points: Vec<_> = self.setup.iter().filter(|s| s.1 == who).collect();
            if !points.is_empty() {
                s.push_str(key);
                for &(p, _) in points {
                    write!(s, "[{}]", point_text(p, n)).unwrap();
                }
            }
        }
        if let Some(who) = self.first_player {
            write!(s, "PL[{}]", color_letter(who)).unwrap();
        }
        for (i, &(who, mv)) in self.moves.iter().enumerate() {
            if i % 10 == 0 {
                s.push('\n');
            }
            let v = match mv {
                Move::Place(p) => point_text(p, n),
                Move::Pass => String::new(),
            };
            write!(s, ";{}[{v}]", color_letter(who)).unwrap();
        }
        s.push_str(")\n");
        s
    }
}

/// Every game of an SGF collection (`(;…)(;…)`), replayed under `rules` (the record's `SZ` and
/// `KM` override the rules' size and komi), one entry per game so that a bad game costs only
/// itself. A syntax error ends the collection: it is the last entry.
///
/// Errors name the game (from 1) and, for a move, its number (from 1; for a syntax error, the
/// first move the text does not give whole). Moves must alternate: the first move (or `PL`)
/// decides who starts, and a move by the player who just moved is an error, since a record
/// that lets one side play twice cannot give samples whose mover the rules agree with (SGF
/// expresses such positions through setup). An illegal move, a point off the board and setup
/// after the first move are errors too.
pub fn read_records(text: &str, rules: &GoRules) -> Vec<Result<GameRecord<GoState>, RecordError>> {
    collection(text)
        .into_iter()
        .enumerate()
        .map(|(i, tree)| {
            let game = i + 1;
            let nodes = tree.map_err(|(e, moves)| RecordError {
                game,
                move_number: Some(moves + 1),
                reason: e.to_string(),
            })?;
            let mut at_move = None;
            let sgf = SgfGame::from_nodes(&nodes, &mut at_move).map_err(|e| RecordError {
                game,
                move_number: at_move,
                reason: e.to_string(),
            })?;
            sgf.record(rules, game)
        })
        .collect()
}

/// The outcome an SGF `RE` value states: `B+…`/`W+…` (score, `R`esign, `T`ime, `F`orfeit or
/// nothing) a win, `0`, `Draw` or `Jigo` a draw; `Void`, `?` and anything else none.
pub fn result_outcome(text: &str) -> Option<Outcome> {
    let t = text.trim();
    if t == "0" || t.eq_ignore_ascii_case("draw") || t.eq_ignore_ascii_case("jigo") {
        return Some(Outcome::Draw);
    }
    let (winner, rest) = t.split_once('+')?;
    let winner = match winner.trim() {
        "B" | "b" => Player::First,
        "W" | "w" => Player::Second,
        _ => return None,
    };
    // `B+0` is a tie by score, however oddly written.
    match rest.trim().parse::<f32>() {
        Ok(0.0) => Some(Outcome::Draw),
        _ => Some(Outcome::Win(winner)),
    }
}

impl SgfGame {
    /// This record replayed under `rules` as game number `game` of its file; see
    /// [`read_records`] for what is refused.
    pub fn record(&self, rules: &GoRules, game: usize) -> Result<GameRecord<GoState>, RecordError> {
        let fail = |move_number: Option<usize>, reason: String| RecordError {
            game,
            move_number,
            reason,
        };
        let start = self.start(rules).map_err(|e| fail(None, e.reason))?;
        let mut state = start.clone();
        let mut actions = Vec::with_capacity(self.moves.len());
        for (i, &(who, mv)) in self.moves.iter().enumerate() {
            let here = Some(i + 1);
            let letter = color_letter(who);
            if who != state.to_act() {
                let reason = if i == 0 {
                    format!(
                        "{letter} {} but PL gives the first move to {}",
                        mv.to_gtp(),
                        color_letter(state.to_act())
                    )
                } else {
                    format!(
                        "{letter} {} after a move of {letter}: the same colour twice",
                        mv.to_gtp()
                    )
                };
                return Err(fail(here, reason));
            }
            state.play_as(who, mv).map_err(|e| {
                let why = match e {
                    PlayError::Illegal { reason, .. } => reason,
                    other => other.to_string(),
                };
                fail(
                    here,
                    format!("illegal move {letter} {}: {why}", mv.to_gtp()),
                )
            })?;
            actions.push(mv);
        }
        Ok(GameRecord {
            start,
            actions,
            result: self.result.as_deref().and_then(result_outcome),
            result_text: self.result.clone(),
        })
    }
}

/// The SGF `RU` name closest to `rules`: area scoring with superko and no suicide is Chinese,
/// with suicide New Zealand.
pub fn ruleset_name(rules: &GoRules) -> &'static str {
    if rules.allow_suicide {
        "NZ"
    } else {
        "Chinese"
    }
}

/// Writes the record of `state`'s game with player names and a result (the score when the game
/// is over and `result` is `None`): the function `engine match` calls.
pub fn game_record(state: &GoState, black: &str, white: &str, result: Option<&str>) -> String {
    let mut game = SgfGame::from_state(state);
    game.black_name = Some(black.into());
    game.white_name = Some(white.into());
    if let Some(r) = result {
        game.result = Some(r.into());
    }
    game.to_sgf()
}

impl RecordFormat for GoState {
    const EXTENSION: &'static str = "sgf";
    const MIME: &'static str = "application/x-go-sgf";

    /// SGF FF[4]: a resignation is the winner's colour and `R`; otherwise the score of the
    /// final position.
    fn write_record(record: &GameRecord<Self>, meta: &RecordMeta<'_>) -> String {
        let resigned = meta.resigned.map(|p| match p {
            Player::First => "W+R",
            Player::Second => "B+R",
        });
        game_record(
            &record.final_state(),
            meta.names[0],
            meta.names[1],
            resigned,
        )
    }
}

/// The fuzz target's body, kept here so the corpus also runs as a plain test on stable Rust.
/// Whatever the bytes, nothing panics; a record that reads must write and read back equal, and
/// a record that replays must give the same position when its own record is replayed; every
/// game of a collection that reads as a record (what `engine import --game go` reads, under
/// the default rules and under simple ko with suicide allowed, as a config may ask) must end
/// where its own moves lead, and each of its positions must encode and index its move as
/// import's training samples do.
pub fn fuzz_sgf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let permissive = GoRules {
        allow_suicide: true,
        ko: KoRule::Simple,
        ..GoRules::default()
    };
    for rules in [GoRules::default(), permissive] {
        for record in read_records(text, &rules).into_iter().flatten() {
            let mut state = record.start.clone();
            let shape = state.shape();
            let mut planes = vec![0.0; shape.input_len()];
            for &mv in &record.actions {
                state.encode(&mut planes);
                assert!(state.action_index(mv) < shape.policy_size, "{mv:?}");
                state
                    .play_as(state.to_act(), mv)
                    .expect("record moves replay");
            }
            assert_eq!(
                state.to_text(),
                record.final_state().to_text(),
                "record replay"
            );
        }
    }
    let Ok(game) = SgfGame::parse(text) else {
        return;
    };
    let again = SgfGame::parse(&game.to_sgf()).expect("own SGF reads back");
    assert_eq!(again, game, "SGF round trip");
    if let Ok(state) = game.replay(&GoRules::default(), None) {
        let record = SgfGame::from_state(&state);
        let replayed = SgfGame::parse(&record.to_sgf())
            .expect("own SGF reads back")
            .replay(&GoRules::default(), None)
            .expect("own record replays");
        assert_eq!(replayed.to_text(), state.to_text(), "replayed record");
    }
}
