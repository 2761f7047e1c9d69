//! Go game records in SGF (FF[4], GM[1]): the one module that reads and writes them.
//!
//! Reading follows the main line (the first variation at every branch) of the first game in
//! the collection. Understood: `FF`, `GM`, `SZ`, `KM`, `RU`, `HA`, `PB`, `PW`, `RE`, `PL`,
//! setup (`AB`, `AW`, `AE`) before the first move, and moves `B`/`W` (`[]` or `[tt]` pass).
//! Other properties are checked for syntax and ignored. Writing produces one main line.

use std::fmt::Write as _;
use std::path::Path;

use super::{color_letter, GoRules, GoState, Move, Point, MAX_SIZE, MIN_SIZE};
use crate::{Game, Player};

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

/// The nodes of the main line of the first game tree.
fn main_line(text: &str) -> Result<Vec<Vec<Property>>, SgfError> {
    let mut r = Reader {
        text: text.as_bytes(),
        pos: 0,
    };
    r.skip_ws();
    if r.peek() != Some(b'(') {
        return err(r.pos, "expected `(` to open a game tree");
    }
    r.pos += 1;
    let mut depth = 1;
    let mut nodes = Vec::new();
    loop {
        r.skip_ws();
        match r.peek() {
            None => return err(r.pos, "unclosed game tree: missing `)`"),
            Some(b';') => {
                r.pos += 1;
                nodes.push(r.node()?);
            }
            Some(b'(') => {
                if nodes.is_empty() {
                    return err(r.pos, "a game tree must start with a node");
                }
                // The first variation continues the main line.
                r.pos += 1;
                depth += 1;
            }
            Some(b')') => {
                r.pos += 1;
                depth -= 1;
                if nodes.is_empty() {
                    return err(r.pos - 1, "empty game tree");
                }
                // The main line ends here: skip the sibling variations.
                r.skip_trees(depth)?;
                return Ok(nodes);
            }
            Some(c) => return err(r.pos, format!("unexpected {:?}", c as char)),
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
        let nodes = main_line(text)?;
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
        for node in &nodes {
            // SGF allows a point in at most one of AB, AW, AE of a node, once.
            let mut set_here: Vec<Point> = Vec::new();
            for p in node {
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
    /// overrides.
    pub fn start(&self, rules: &GoRules) -> Result<GoState, SgfError> {
        let rules = GoRules {
            size: self.size,
            komi: self.komi.unwrap_or(rules.komi),
            ..rules.clone()
        };
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
            handicap: None,
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

/// Writes `text` to `path` through a temporary file renamed into place.
pub fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The fuzz target's body, kept here so the corpus also runs as a plain test on stable Rust.
/// Whatever the bytes, nothing panics; a record that reads must write and read back equal, and
/// a record that replays must give the same position when its own record is replayed.
pub fn fuzz_sgf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
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
