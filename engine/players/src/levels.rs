//! Strength levels a person understands: per game an ordered list of named levels (English and
//! Chinese), each an agent spec of the one grammar ([`crate::spec`]) with the Elo it earned in a
//! ladder against fixed anchors (random play at 0, the engine's pure tree search and alpha-beta,
//! Fairy-Stockfish and GNU Go at fixed depths and levels).
//!
//! Weak levels play weaker by design, not by blunders chosen at random: fewer visits, a
//! temperature over the root's visits (`temp=1`: a move drawn in proportion to its visits, so a
//! move the search liked), a shallow alpha-beta. Every limit is a count (visits, depth), so a
//! level plays the same on every CPU and its Elo does not depend on the machine's speed.
//!
//! The figures live in one data file, `levels.tsv` beside this module, compiled in; `engine
//! levels --game GAME --out engine/players/src/levels.tsv` plays the ladder and rewrites that
//! game's rows, so recalibrating is one command. A row with `games` 0 carries an estimate that
//! no match has measured yet ([`Rating::measured`]).

use std::sync::LazyLock;

use crate::spec::AgentSpec;

/// The table compiled into the engine.
const BUILT_IN: &str = include_str!("levels.tsv");

/// The version of the table's format, on its `#format` line.
const FORMAT: &str = "levels 1";

/// A player's Elo as the ladder measured it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// Elo relative to random play (0).
    pub elo: f64,
    /// Half the width of the 95 % interval (0 for the anchor and for estimates).
    pub half_width95: f64,
    /// Games the figure rests on; 0 for an estimate no match has measured.
    pub games: u32,
}

impl Rating {
    /// Whether matches measured this rating (else it is an estimate).
    pub fn measured(&self) -> bool {
        self.games > 0
    }
}

/// A named level a person picks.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Stable identifier (`beginner` … `master`), as the API and `engine play --level` take it.
    pub key: String,
    pub english: String,
    pub chinese: String,
    /// What it plays: an agent spec ([`AgentSpec::parse`]).
    pub spec: String,
    pub rating: Rating,
}

/// A fixed player the levels are rated against.
#[derive(Clone, Debug, PartialEq)]
pub struct Anchor {
    /// Short name in tables (`random`, `alphabeta-d4`, `fairy-d3`, `gnugo-10`).
    pub key: String,
    pub spec: String,
    pub rating: Rating,
}

/// One game's rows: its anchors (the first, random play, rated 0) and its levels, weakest
/// first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameLevels {
    pub game: String,
    pub anchors: Vec<Anchor>,
    pub levels: Vec<Level>,
}

/// The whole table: every game's levels and anchors, in the order of the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub games: Vec<GameLevels>,
}

/// A table that could not be read: the line (from 1) and why.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("levels table, line {line}: {reason}")]
pub struct TableError {
    pub line: usize,
    pub reason: String,
}

/// The games a table may name.
const GAMES: [&str; 3] = ["liuzhou", "xiangqi", "go"];

impl Table {
    /// Reads a table in the format [`Table::to_text`] writes.
    pub fn parse(text: &str) -> Result<Table, TableError> {
        let mut table = Table::default();
        let mut format_seen = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |reason: String| TableError { line, reason };
            if let Some(version) = raw.strip_prefix("#format\t") {
                if version.trim() != FORMAT {
                    return Err(err(format!(
                        "format {:?}, this engine reads {FORMAT:?}",
                        version.trim()
                    )));
                }
                format_seen = true;
                continue;
            }
            if raw.trim().is_empty() || raw.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = raw.split('\t').collect();
            let [game, role, key, english, chinese, elo, half, games, spec] = fields[..] else {
                return Err(err(format!(
                    "{} tab-separated fields, expected 9 (game role key english chinese elo \
                     half95 games spec)",
                    fields.len()
                )));
            };
            if !GAMES.contains(&game) {
                return Err(err(format!("unknown game {game:?} (liuzhou, xiangqi, go)")));
            }
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(err(format!("key {key:?} is empty or has a space")));
            }
            let number = |what: &str, v: &str| -> Result<f64, TableError> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| err(format!("{what} {v:?} is not a finite number")))
            };
            let rating = Rating {
                elo: number("elo", elo)?,
                half_width95: number("half95", half)?,
                games: games
                    .parse()
                    .map_err(|_| err(format!("games {games:?} is not a count")))?,
            };
            if rating.half_width95 < 0.0 {
                return Err(err(format!("half95 {half} is negative")));
            }
            AgentSpec::parse(spec).map_err(|e| err(e.to_string()))?;
            if table.game(game).is_none() {
                table.games.push(GameLevels {
                    game: game.to_string(),
                    ..GameLevels::default()
                });
            }
            let rows = table
                .games
                .iter_mut()
                .find(|g| g.game == game)
                .expect("pushed above");
            let taken = rows.anchors.iter().any(|a| a.key == key)
                || rows.levels.iter().any(|l| l.key == key);
            if taken {
                return Err(err(format!("{game} has key {key:?} twice")));
            }
            match role {
                "anchor" => rows.anchors.push(Anchor {
                    key: key.to_string(),
                    spec: spec.to_string(),
                    rating,
                }),
                "level" => {
                    if english.is_empty() || chinese.is_empty() {
                        return Err(err("a level needs its English and Chinese names".into()));
                    }
                    rows.levels.push(Level {
                        key: key.to_string(),
                        english: english.to_string(),
                        chinese: chinese.to_string(),
                        spec: spec.to_string(),
                        rating,
                    })
                }
                _ => return Err(err(format!("role {role:?} is not anchor or level"))),
            }
        }
        if !format_seen {
            return Err(TableError {
                line: 1,
                reason: format!("no `#format\t{FORMAT}` line"),
            });
        }
        Ok(table)
    }

    /// The table as text, with the header that explains it.
    pub fn to_text(&self) -> String {
        let mut out = String::from(HEADER);
        out.push_str(&format!("#format\t{FORMAT}\n"));
        out.push_str("#game\trole\tkey\tenglish\tchinese\telo\thalf95\tgames\tspec\n");
        for g in &self.games {
            let row = |role: &str, key: &str, en: &str, zh: &str, r: &Rating, spec: &str| {
                format!(
                    "{}\t{role}\t{key}\t{en}\t{zh}\t{:.0}\t{:.0}\t{}\t{spec}\n",
                    g.game, r.elo, r.half_width95, r.games
                )
            };
            for a in &g.anchors {
                out.push_str(&row("anchor", &a.key, "-", "-", &a.rating, &a.spec));
            }
            for l in &g.levels {
                out.push_str(&row(
                    "level", &l.key, &l.english, &l.chinese, &l.rating, &l.spec,
                ));
            }
        }
        out
    }

    /// One game's rows.
    pub fn game(&self, game: &str) -> Option<&GameLevels> {
        self.games.iter().find(|g| g.game == game)
    }

    /// The table with `rows` in place of their game's rows (appended if the game had none).
    pub fn with_game(mut self, rows: GameLevels) -> Table {
        match self.games.iter_mut().find(|g| g.game == rows.game) {
            Some(slot) => *slot = rows,
            None => self.games.push(rows),
        }
        self
    }
}

const HEADER: &str = "\
# Strength levels per game (players::levels), and the fixed anchors they were rated against.
# Written by `engine levels --game GAME --out engine/players/src/levels.tsv` (docs/web.md, Levels):
# Elo by maximum likelihood over every game of the ladder, random play at 0; half95 is half the
# width of the 95 % interval; games is how many games the figure rests on (0: not measured yet).
# Rows of a game: its anchors, then its levels from the weakest to the strongest. Tab-separated.
";

/// The table compiled into the engine. Its test (`the_built_in_table_reads`) keeps it readable.
pub fn table() -> &'static Table {
    static TABLE: LazyLock<Table> = LazyLock::new(|| {
        Table::parse(BUILT_IN).unwrap_or_else(|e| panic!("engine/players/src/levels.tsv: {e}"))
    });
    &TABLE
}

/// The levels of `game` (`liuzhou`, `xiangqi`, `go`: a game's `NAME`), weakest first; empty
/// for a game the table does not know.
pub fn levels(game: &str) -> &'static [Level] {
    table().game(game).map_or(&[], |g| &g.levels)
}

/// The anchors `game`'s levels were rated against, random play first.
pub fn anchors(game: &str) -> &'static [Anchor] {
    table().game(game).map_or(&[], |g| &g.anchors)
}

/// The level of `game` named `name`: its key, English or Chinese name (ASCII case ignored).
pub fn level(game: &str, name: &str) -> Option<&'static Level> {
    let name = name.trim();
    levels(game).iter().find(|l| {
        l.key.eq_ignore_ascii_case(name)
            || l.english.eq_ignore_ascii_case(name)
            || l.chinese == name
    })
}

/// The level of `game` nearest to `elo` (the weaker of two equally near): below the range the
/// weakest, above it the strongest. Nearest rather than a blend of two levels' settings, since
/// only the levels themselves were measured; `None` for a game with no levels.
pub fn for_elo(game: &str, elo: f64) -> Option<&'static Level> {
    let mut best: Option<&'static Level> = None;
    for l in levels(game) {
        let nearer = best.is_none_or(|b| (l.rating.elo - elo).abs() < (b.rating.elo - elo).abs());
        if nearer {
            best = Some(l);
        }
    }
    best
}

/// The Elo of `game`'s weakest and strongest levels, the range an Elo setting (`UCI_Elo`) spans.
pub fn elo_range(game: &str) -> Option<(f64, f64)> {
    let l = levels(game);
    Some((l.first()?.rating.elo, l.last()?.rating.elo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_reads_and_writes_back_the_same() {
        let t = Table::parse(BUILT_IN).unwrap();
        assert_eq!(
            t.games.iter().map(|g| g.game.as_str()).collect::<Vec<_>>(),
            ["liuzhou", "xiangqi", "go"]
        );
        assert_eq!(Table::parse(&t.to_text()).unwrap(), t);
        assert_eq!(
            t.to_text(),
            BUILT_IN,
            "the file is as `engine levels` writes it"
        );
    }

    #[test]
    fn every_game_has_five_to_eight_levels_ordered_by_elo_above_random() {
        for game in GAMES {
            let l = levels(game);
            assert!((5..=8).contains(&l.len()), "{game}: {} levels", l.len());
            for w in l.windows(2) {
                assert!(
                    w[0].rating.elo < w[1].rating.elo,
                    "{game}: {} ({}) not below {} ({})",
                    w[0].key,
                    w[0].rating.elo,
                    w[1].key,
                    w[1].rating.elo
                );
            }
            let a = anchors(game);
            assert_eq!(a[0].spec, "random", "{game}: random play anchors the scale");
            assert_eq!(a[0].rating.elo, 0.0);
            assert!(
                l[0].rating.elo > 0.0,
                "{game}: the weakest level beats random"
            );
        }
    }

    /// Plays `plies` actions of every level of `G` from its start, each checked legal; `net`
    /// levels search with a fake network (the real ones are played by `engine/cli/tests/levels.rs`).
    fn levels_play_legal_actions<G: crate::spec::OwnPlayers>(start: G, plies: usize) {
        use games::Agent;
        let net = |_: Option<&std::path::Path>| -> anyhow::Result<
            std::sync::Arc<dyn eval::Evaluator<G>>,
        > { Ok(std::sync::Arc::new(eval::fake::FakeEvaluator::new(8))) };
        for l in levels(G::NAME) {
            let spec = AgentSpec::parse(&l.spec).unwrap();
            let mut agent = crate::spec::build(&spec, &l.key, 7, &net).unwrap();
            let mut state = start.clone();
            agent.new_game(&state).unwrap();
            let mut legal = Vec::new();
            for _ in 0..plies {
                if state.outcome().is_some() {
                    break;
                }
                let a = agent.select_action(&state).unwrap();
                legal.clear();
                state.legal_actions(&mut legal);
                assert!(
                    legal.contains(&a),
                    "{} {}: {a:?} is not legal",
                    G::NAME,
                    l.key
                );
                agent.observe(&state, a).unwrap();
                state.play(a).unwrap();
            }
        }
    }

    #[test]
    fn every_level_plays_legal_actions() {
        levels_play_legal_actions(games::liuzhou::Liuzhou::default(), 12);
        levels_play_legal_actions(games::xiangqi::Xiangqi::start(), 12);
        let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
        levels_play_legal_actions(go, 12);
    }

    #[test]
    fn levels_are_found_by_key_english_or_chinese_name() {
        assert_eq!(level("xiangqi", "master").unwrap().key, "master");
        assert_eq!(level("xiangqi", "Club Player").unwrap().key, "club");
        assert_eq!(level("go", "入门").unwrap().key, "beginner");
        assert!(level("go", "grandmaster").is_none());
        assert!(levels("chess").is_empty());
        assert!(for_elo("chess", 1000.0).is_none());
        assert!(elo_range("chess").is_none());
    }

    #[test]
    fn for_elo_is_monotone_and_clamps_to_the_range() {
        for game in GAMES {
            let l = levels(game);
            let (low, high) = elo_range(game).unwrap();
            assert_eq!(for_elo(game, low - 1000.0).unwrap(), &l[0]);
            assert_eq!(for_elo(game, high + 1000.0).unwrap(), l.last().unwrap());
            let index = |elo: f64| {
                let found = for_elo(game, elo).unwrap();
                l.iter().position(|x| x == found).unwrap()
            };
            let mut last = 0;
            for step in 0..=400 {
                let elo = low - 200.0 + (high - low + 400.0) * f64::from(step) / 400.0;
                let i = index(elo);
                assert!(i >= last, "{game}: Elo {elo} gives level {i} after {last}");
                last = i;
            }
            for x in l {
                assert_eq!(index(x.rating.elo), l.iter().position(|y| y == x).unwrap());
            }
        }
    }

    #[test]
    fn bad_tables_name_the_line_and_reason() {
        let head = "#format\tlevels 1\n";
        for (text, line, needle) in [
            ("go\tanchor\trandom\t-\t-\t0\t0\t0\trandom\n", 1, "#format"),
            ("#format\tlevels 9\n", 1, "levels 9"),
            ("go\tanchor\trandom\n", 2, "expected 9"),
            (
                "chess\tanchor\tr\t-\t-\t0\t0\t0\trandom\n",
                2,
                "unknown game",
            ),
            ("go\tanchor\tr\t-\t-\tx\t0\t0\trandom\n", 2, "elo"),
            ("go\tanchor\tr\t-\t-\t0\t-5\t0\trandom\n", 2, "negative"),
            ("go\tanchor\tr\t-\t-\t0\t0\t-1\trandom\n", 2, "games"),
            ("go\tanchor\tr\t-\t-\t0\t0\t0\tmcts:visits=0\n", 2, "visits"),
            ("go\tplayer\tr\t-\t-\t0\t0\t0\trandom\n", 2, "role"),
            ("go\tlevel\tr\t\t入门\t0\t0\t0\trandom\n", 2, "names"),
            (
                "go\tanchor\tr\t-\t-\t0\t0\t0\trandom\ngo\tlevel\tr\ta\tb\t0\t0\t0\trandom\n",
                3,
                "twice",
            ),
        ] {
            let text = if text.starts_with("#format") || line == 1 {
                text.to_string()
            } else {
                format!("{head}{text}")
            };
            let e = Table::parse(&text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn with_game_replaces_one_game_and_keeps_the_others() {
        let t = table().clone();
        let mut go = t.game("go").unwrap().clone();
        go.levels[0].rating = Rating {
            elo: 123.0,
            half_width95: 45.0,
            games: 60,
        };
        let u = t.clone().with_game(go.clone());
        assert_eq!(u.game("go"), Some(&go));
        assert_eq!(u.game("xiangqi"), t.game("xiangqi"));
        assert_eq!(u.games.len(), 3);
    }
}
