//! Calibrating a game's strength levels ([`crate::levels`]) in Elo: the anchors play a round
//! robin, every level plays every anchor and the next level, and the ratings are fitted by
//! maximum likelihood ([`crate::ladder::rate`]) with random play at 0.
//!
//! Finished pairings are kept in `pairings.tsv` (this module owns the format), so a stopped
//! calibration started again with the same settings plays only what is missing.

use std::path::{Path, PathBuf};

use crate::ladder::{self, play_pairing, Pairing, PairingPlan};
use crate::levels::{GameLevels, Rating};
use crate::spec::{AgentSpec, NetLoader, OwnPlayers, SpecError};

/// Why a calibration cannot start.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("{game} has no anchor {key:?} (anchors: {known})")]
    NoAnchor {
        game: String,
        key: String,
        known: String,
    },
    #[error("{game} has no level {key:?} (levels: {known})")]
    NoLevel {
        game: String,
        key: String,
        known: String,
    },
    #[error("the first anchor of {0} must be random play, the zero of the scale")]
    FirstNotRandom(String),
    /// A row's spec (`anchor 2`, `level novice`) that does not read.
    #[error("{what}")]
    Spec {
        what: String,
        #[source]
        source: SpecError,
    },
    #[error("{}, line {line}: not a kept pairing (10 tab-separated fields)", path.display())]
    Kept { path: PathBuf, line: usize },
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One player of the calibration: an anchor or a level.
#[derive(Clone, Debug)]
pub struct Entrant {
    pub key: String,
    pub spec: AgentSpec,
    /// The spec as the table writes it; a kept pairing is matched by it.
    pub text: String,
    pub level: bool,
}

/// The players of one calibration, anchors first (random play the first of them), then the
/// levels in the table's order.
#[derive(Clone, Debug)]
pub struct Panel {
    pub entrants: Vec<Entrant>,
}

impl Panel {
    /// The anchors and levels of `rows` that `anchors` and `levels` name (keys; empty: all).
    /// Random play, the zero of the scale, is always in.
    pub fn new(
        rows: &GameLevels,
        anchors: &[String],
        levels: &[String],
    ) -> Result<Panel, CalibrationError> {
        let keys = |list: Vec<&str>| list.join(", ");
        for key in anchors {
            if !rows.anchors.iter().any(|a| &a.key == key) {
                return Err(CalibrationError::NoAnchor {
                    game: rows.game.clone(),
                    key: key.clone(),
                    known: keys(rows.anchors.iter().map(|a| a.key.as_str()).collect()),
                });
            }
        }
        for key in levels {
            if !rows.levels.iter().any(|l| &l.key == key) {
                return Err(CalibrationError::NoLevel {
                    game: rows.game.clone(),
                    key: key.clone(),
                    known: keys(rows.levels.iter().map(|l| l.key.as_str()).collect()),
                });
            }
        }
        if rows.anchors.first().is_none_or(|a| a.spec != "random") {
            return Err(CalibrationError::FirstNotRandom(rows.game.clone()));
        }
        let chosen = |list: &[String], key: &str| list.is_empty() || list.iter().any(|k| k == key);
        let entrant = |key: &str, text: &str, level: bool, what: String| {
            let spec =
                AgentSpec::parse(text).map_err(|source| CalibrationError::Spec { what, source })?;
            Ok::<_, CalibrationError>(Entrant {
                key: key.to_string(),
                spec,
                text: text.to_string(),
                level,
            })
        };
        let mut entrants = Vec::new();
        for (i, a) in rows.anchors.iter().enumerate() {
            if i == 0 || chosen(anchors, &a.key) {
                entrants.push(entrant(
                    &a.key,
                    &a.spec,
                    false,
                    format!("anchor {}", i + 1),
                )?);
            }
        }
        for l in rows.levels.iter().filter(|l| chosen(levels, &l.key)) {
            entrants.push(entrant(&l.key, &l.spec, true, format!("level {}", l.key))?);
        }
        Ok(Panel { entrants })
    }

    /// How many of the entrants are anchors.
    pub fn anchors(&self) -> usize {
        self.entrants.iter().filter(|e| !e.level).count()
    }

    /// The pairings to play, by entrant: every two anchors, every level against every anchor,
    /// and every level against the one before it (levels above every anchor are told apart
    /// only by each other).
    pub fn schedule(&self) -> Vec<(usize, usize)> {
        let n = self.entrants.len();
        let anchors: Vec<usize> = (0..n).filter(|&i| !self.entrants[i].level).collect();
        let levels: Vec<usize> = (0..n).filter(|&i| self.entrants[i].level).collect();
        let mut schedule = Vec::new();
        for (k, &a) in anchors.iter().enumerate() {
            schedule.extend(anchors[k + 1..].iter().map(|&b| (a, b)));
        }
        for &i in &levels {
            schedule.extend(anchors.iter().map(|&a| (i, a)));
        }
        schedule.extend(levels.windows(2).map(|w| (w[1], w[0])));
        schedule
    }

    /// `rows` with the ratings of this panel's entrants (by entrant); the others keep theirs.
    pub fn measured(&self, mut rows: GameLevels, ratings: &[Rating]) -> GameLevels {
        let of = |key: &str, level: bool| {
            self.entrants
                .iter()
                .position(|e| e.key == key && e.level == level)
                .map(|i| ratings[i])
        };
        for a in &mut rows.anchors {
            if let Some(r) = of(&a.key, false) {
                a.rating = r;
            }
        }
        for l in &mut rows.levels {
            if let Some(r) = of(&l.key, true) {
                l.rating = r;
            }
        }
        rows
    }
}

/// A finished pairing as `pairings.tsv` keeps it: the two players' keys and specs and the
/// settings that shaped the games, then the first player's wins, draws and losses.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptPairing {
    pub a: String,
    pub b: String,
    pub spec_a: String,
    pub spec_b: String,
    pub games: u32,
    pub openings: usize,
    pub seed: u64,
    pub wdl: [u32; 3],
}

impl KeptPairing {
    fn line(&self) -> String {
        let [w, d, l] = self.wdl;
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{w}\t{d}\t{l}\n",
            self.a, self.b, self.spec_a, self.spec_b, self.games, self.openings, self.seed
        )
    }

    fn parse(line: &str) -> Option<KeptPairing> {
        let f: Vec<&str> = line.split('\t').collect();
        let [a, b, spec_a, spec_b, games, openings, seed, w, d, l] = f[..] else {
            return None;
        };
        Some(KeptPairing {
            a: a.into(),
            b: b.into(),
            spec_a: spec_a.into(),
            spec_b: spec_b.into(),
            games: games.parse().ok()?,
            openings: openings.parse().ok()?,
            seed: seed.parse().ok()?,
            wdl: [w.parse().ok()?, d.parse().ok()?, l.parse().ok()?],
        })
    }

    /// The same two specs, either way round, under the same settings (keys may be renamed).
    fn same_pairing(&self, other: &KeptPairing) -> bool {
        let settings = |k: &KeptPairing| (k.games, k.openings, k.seed);
        settings(self) == settings(other)
            && ((self.spec_a == other.spec_a && self.spec_b == other.spec_b)
                || (self.spec_a == other.spec_b && self.spec_b == other.spec_a))
    }

    /// Games and score of the player whose spec is `spec_a` (this pairing's `b` if not `a`).
    fn score_for(&self, spec_a: &str) -> (u32, f64) {
        let [w, d, l] = if self.spec_a == spec_a {
            self.wdl
        } else {
            [self.wdl[2], self.wdl[1], self.wdl[0]]
        };
        (w + d + l, f64::from(w) + f64::from(d) / 2.0)
    }
}

const PAIRINGS: &str = "pairings.tsv";
const PAIRINGS_HEADER: &str =
    "# engine levels: finished pairings (a b spec_a spec_b games openings seed wins draws losses)\n";

/// The finished pairings of a calibration, read from and written to `pairings.tsv` in a folder
/// (none kept without one).
#[derive(Debug, Default)]
pub struct KeptPairings {
    path: Option<PathBuf>,
    kept: Vec<KeptPairing>,
}

impl KeptPairings {
    /// The pairings kept in `dir`, created if missing (none before the first is finished).
    pub fn open(dir: Option<&Path>) -> Result<KeptPairings, CalibrationError> {
        let Some(dir) = dir else {
            return Ok(KeptPairings::default());
        };
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CalibrationError::Io { what, path, source }
        };
        std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
        let path = dir.join(PAIRINGS);
        let mut kept = Vec::new();
        if path.exists() {
            let text = std::fs::read_to_string(&path).map_err(io("reading", &path))?;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() || line.starts_with('#') {
                    continue;
                }
                kept.push(
                    KeptPairing::parse(line).ok_or_else(|| CalibrationError::Kept {
                        path: path.clone(),
                        line: i + 1,
                    })?,
                );
            }
        }
        Ok(KeptPairings {
            path: Some(path),
            kept,
        })
    }

    fn find(&self, wanted: &KeptPairing) -> Option<&KeptPairing> {
        self.kept.iter().find(|k| k.same_pairing(wanted))
    }

    /// Adds a finished pairing and rewrites the file (through a temporary file).
    fn keep(&mut self, done: KeptPairing) -> Result<(), CalibrationError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        self.kept.push(done);
        let text: String = std::iter::once(PAIRINGS_HEADER.to_string())
            .chain(self.kept.iter().map(KeptPairing::line))
            .collect();
        games::record::write_file(path, &text).map_err(|source| CalibrationError::Io {
            what: "writing",
            path: path.clone(),
            source,
        })
    }
}

/// What a calibration reports as it goes, for a progress display.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// A pairing starts to play.
    Playing { a: &'a str, b: &'a str },
    /// A game of it ended (from the games' threads).
    Game,
    /// A pairing's result: played, or `kept` from an earlier run (its `games` not played).
    Result {
        a: &'a str,
        b: &'a str,
        games: u32,
        score: f64,
        kept: bool,
    },
}

/// Plays `panel`'s schedule with `plan` (the pairings `kept` holds are not played again, the
/// others are added to it) and fits the ratings, random play at 0 with `prior_draws` virtual
/// draws between every two players that met. Returns each entrant's rating. An error of
/// `report` (a closed output) ends the calibration, except for [`Event::Game`], which comes
/// from the games' threads.
pub fn calibrate<G: OwnPlayers>(
    start: &G,
    load: NetLoader<'_, G>,
    panel: &Panel,
    plan: &PairingPlan,
    prior_draws: f64,
    kept: &mut KeptPairings,
    report: impl Fn(Event<'_>) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<Vec<Rating>> {
    let mut pairings = Vec::new();
    for (round, (a, b)) in panel.schedule().into_iter().enumerate() {
        let (pa, pb) = (&panel.entrants[a], &panel.entrants[b]);
        let wanted = KeptPairing {
            a: pa.key.clone(),
            b: pb.key.clone(),
            spec_a: pa.text.clone(),
            spec_b: pb.text.clone(),
            games: plan.games,
            openings: plan.openings,
            seed: plan.seed,
            wdl: [0; 3],
        };
        let (games, score, was_kept) = match kept.find(&wanted) {
            Some(k) => {
                let (g, s) = k.score_for(&pa.text);
                (g, s, true)
            }
            None => {
                report(Event::Playing {
                    a: &pa.key,
                    b: &pb.key,
                })?;
                let r = play_pairing(
                    start,
                    load,
                    [
                        (&pa.spec, &pa.key, &format!("{} ({})", pa.key, pa.text)),
                        (&pb.spec, &pb.key, &format!("{} ({})", pb.key, pb.text)),
                    ],
                    round,
                    plan,
                    || {
                        // Only a progress count: the result's report says what failed.
                        let _ = report(Event::Game);
                    },
                )?;
                let done = KeptPairing {
                    wdl: [r.wins, r.draws, r.losses],
                    ..wanted
                };
                let (g, s) = done.score_for(&pa.text);
                kept.keep(done)?;
                (g, s, false)
            }
        };
        report(Event::Result {
            a: &pa.key,
            b: &pb.key,
            games,
            score,
            kept: was_kept,
        })?;
        pairings.push(Pairing {
            a,
            b,
            games: f64::from(games),
            score,
        });
    }
    // Entrant 0 is random play, the zero of the scale.
    let n = panel.entrants.len();
    let ratings = ladder::rate(n, &pairings, 0, prior_draws)?;
    Ok((0..n)
        .map(|i| Rating {
            elo: ratings.elo[i],
            half_width95: ratings.half_width95[i],
            games: ladder::totals(&pairings, i).0 as u32,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levels::{self, Anchor, Level};

    #[test]
    fn a_kept_pairing_reads_back_and_counts_from_either_side() {
        let k = KeptPairing {
            a: "novice".into(),
            b: "random".into(),
            spec_a: "net:visits=1".into(),
            spec_b: "random".into(),
            games: 10,
            openings: 2,
            seed: 1,
            wdl: [7, 2, 1],
        };
        let back = KeptPairing::parse(k.line().trim_end()).unwrap();
        assert_eq!(back, k);
        assert_eq!(k.score_for("net:visits=1"), (10, 8.0));
        assert_eq!(k.score_for("random"), (10, 2.0));
        let swapped = KeptPairing {
            spec_a: "random".into(),
            spec_b: "net:visits=1".into(),
            ..k.clone()
        };
        assert!(k.same_pairing(&swapped));
        assert!(!k.same_pairing(&KeptPairing {
            games: 12,
            ..k.clone()
        }));
        assert!(!k.same_pairing(&KeptPairing {
            spec_a: "net:visits=2".into(),
            ..k.clone()
        }));
        assert!(KeptPairing::parse("a\tb\tc").is_none());
    }

    fn rows() -> GameLevels {
        let rating = Rating {
            elo: 0.0,
            half_width95: 0.0,
            games: 0,
        };
        let anchor = |key: &str, spec: &str| Anchor {
            key: key.into(),
            spec: spec.into(),
            rating,
        };
        let level = |key: &str, visits: u32| Level {
            key: key.into(),
            english: key.into(),
            chinese: String::new(),
            spec: format!("mcts:visits={visits}"),
            rating,
        };
        GameLevels {
            game: "liuzhou".into(),
            anchors: vec![
                anchor("random", "random"),
                anchor("mcts-8", "mcts:visits=8"),
            ],
            levels: vec![level("one", 1), level("two", 2), level("three", 3)],
        }
    }

    #[test]
    fn the_panel_keeps_random_play_and_plays_anchors_levels_and_neighbours() {
        let all = Panel::new(&rows(), &[], &[]).unwrap();
        assert_eq!(all.anchors(), 2);
        // Anchors 0–1, each level against both anchors, then each level against the one below.
        assert_eq!(
            all.schedule(),
            [
                (0, 1),
                (2, 0),
                (2, 1),
                (3, 0),
                (3, 1),
                (4, 0),
                (4, 1),
                (3, 2),
                (4, 3)
            ]
        );
        let some = Panel::new(&rows(), &["mcts-8".into()], &["two".into()]).unwrap();
        let keys: Vec<&str> = some.entrants.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["random", "mcts-8", "two"]);
        let rated = Rating {
            elo: 50.0,
            half_width95: 9.0,
            games: 4,
        };
        let measured = some.measured(rows(), &[rated, rated, rated]);
        assert_eq!(measured.levels[1].rating, rated);
        assert_eq!(
            measured.levels[0].rating,
            rows().levels[0].rating,
            "not played"
        );

        let err = |anchors: &[&str], levels: &[&str], rows: &GameLevels| {
            let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            Panel::new(rows, &owned(anchors), &owned(levels))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&["stockfish"], &[], &rows()),
            "liuzhou has no anchor \"stockfish\" (anchors: random, mcts-8)"
        );
        assert_eq!(
            err(&[], &["four"], &rows()),
            "liuzhou has no level \"four\" (levels: one, two, three)"
        );
        let mut no_random = rows();
        no_random.anchors.remove(0);
        assert!(matches!(
            Panel::new(&no_random, &[], &[]),
            Err(CalibrationError::FirstNotRandom(_))
        ));
        // The built-in table's rows make a panel.
        let built_in = levels::table().game("liuzhou").unwrap();
        assert!(Panel::new(built_in, &[], &[]).is_ok());
    }

    #[test]
    fn kept_pairings_are_written_and_read_back_and_a_broken_line_is_named() {
        let dir = std::env::temp_dir().join(format!("calibration-kept-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        let pairing = KeptPairing {
            a: "one".into(),
            b: "random".into(),
            spec_a: "mcts:visits=1".into(),
            spec_b: "random".into(),
            games: 2,
            openings: 0,
            seed: 1,
            wdl: [1, 1, 0],
        };
        let mut kept = KeptPairings::open(Some(&dir)).unwrap();
        kept.keep(pairing.clone()).unwrap();
        let again = KeptPairings::open(Some(&dir)).unwrap();
        assert_eq!(again.find(&pairing), Some(&pairing));
        std::fs::write(dir.join(PAIRINGS), "# header\n\na\tb\n").unwrap();
        let e = KeptPairings::open(Some(&dir)).unwrap_err();
        assert!(matches!(e, CalibrationError::Kept { line: 3, .. }), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_small_calibration_rates_every_entrant_and_keeps_its_pairings() {
        use games::liuzhou::Liuzhou;
        let panel = Panel::new(&rows(), &["mcts-8".into()], &["one".into()]).unwrap();
        let plan = PairingPlan {
            workers: 1,
            games: 2,
            max_actions: 400,
            openings: 0,
            seed: 3,
        };
        let load = crate::spec::preloaded::<Liuzhou>(None);
        let mut kept = KeptPairings::default();
        let played = std::sync::atomic::AtomicU32::new(0);
        let ratings = calibrate(
            &Liuzhou::default(),
            &load,
            &panel,
            &plan,
            1.0,
            &mut kept,
            |e| {
                if let Event::Game = e {
                    played.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            },
        )
        .unwrap();
        // Three pairings of two games; random play at 0, each entrant in two pairings.
        assert_eq!(played.into_inner(), 6);
        assert_eq!(ratings.len(), 3);
        assert_eq!(ratings[0].elo, 0.0);
        assert!(ratings.iter().all(|r| r.games == 4 && r.elo.is_finite()));
    }
}
