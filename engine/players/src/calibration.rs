//! Calibrating a game's strength levels ([`crate::levels`]) in Elo: the anchors play a round
//! robin, every level plays every anchor and the next level, and the ratings are fitted by
//! maximum likelihood ([`crate::ladder::rate`]) with random play at 0.
//!
//! Finished pairings are kept in `pairings.tsv` (this module owns the format), so a stopped
//! calibration started again with the same settings plays only what is missing.

use std::path::{Path, PathBuf};

use crate::ladder::{self, play_pairing, LadderError, Pairing, PairingError, PairingPlan};
use crate::levels::{GameLevels, Rating};
use crate::spec::{AgentSpec, NetLoader, OwnPlayers, SpecError};

/// Why a calibration cannot start or go on.
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
    #[error(transparent)]
    Pairing(#[from] PairingError),
    #[error(transparent)]
    Rate(#[from] LadderError),
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

/// A calibration under way: `panel`'s schedule played pairing by pairing ([`Calibration::play`],
/// the caller showing each result as it comes), then the ratings fitted.
pub struct Calibration<'a, G: OwnPlayers> {
    start: &'a G,
    load: NetLoader<'a, G>,
    panel: &'a Panel,
    plan: PairingPlan,
    kept: KeptPairings,
    schedule: Vec<(usize, usize)>,
    /// The result of each pairing of the schedule, once played or found kept.
    results: Vec<Option<Pairing>>,
}

impl<'a, G: OwnPlayers> Calibration<'a, G> {
    /// A calibration of `panel` with `plan`: the pairings `kept` holds are not played again,
    /// the others are added to it as they finish.
    pub fn new(
        start: &'a G,
        load: NetLoader<'a, G>,
        panel: &'a Panel,
        plan: PairingPlan,
        kept: KeptPairings,
    ) -> Self {
        let schedule = panel.schedule();
        Calibration {
            start,
            load,
            panel,
            plan,
            kept,
            results: vec![None; schedule.len()],
            schedule,
        }
    }

    /// The pairings, by entrant ([`Panel::schedule`]); [`Calibration::play`] takes their
    /// numbers.
    pub fn schedule(&self) -> &[(usize, usize)] {
        &self.schedule
    }

    /// The pairing `round` as `pairings.tsv` keeps it, with no result yet.
    fn wanted(&self, round: usize) -> KeptPairing {
        let (a, b) = self.schedule[round];
        let (pa, pb) = (&self.panel.entrants[a], &self.panel.entrants[b]);
        KeptPairing {
            a: pa.key.clone(),
            b: pb.key.clone(),
            spec_a: pa.text.clone(),
            spec_b: pb.text.clone(),
            games: self.plan.games,
            openings: self.plan.openings,
            seed: self.plan.seed,
            wdl: [0; 3],
        }
    }

    /// Whether pairing `round` was kept from an earlier run (then [`Calibration::play`] plays
    /// no game).
    pub fn is_kept(&self, round: usize) -> bool {
        self.kept.find(&self.wanted(round)).is_some()
    }

    /// Plays pairing `round` of the schedule, or takes its kept result; `on_game` after each
    /// game played (from the games' threads). Returns the first player's games and score.
    pub fn play(
        &mut self,
        round: usize,
        on_game: impl Fn() + Sync,
    ) -> Result<(u32, f64), CalibrationError> {
        let wanted = self.wanted(round);
        let (a, b) = self.schedule[round];
        let (games, score) = match self.kept.find(&wanted) {
            Some(k) => k.score_for(&wanted.spec_a),
            None => {
                let (pa, pb) = (&self.panel.entrants[a], &self.panel.entrants[b]);
                let r = play_pairing(
                    self.start,
                    self.load,
                    [
                        (&pa.spec, &pa.key, &format!("{} ({})", pa.key, pa.text)),
                        (&pb.spec, &pb.key, &format!("{} ({})", pb.key, pb.text)),
                    ],
                    round,
                    &self.plan,
                    on_game,
                )?;
                let done = KeptPairing {
                    wdl: [r.wins, r.draws, r.losses],
                    ..wanted
                };
                let result = done.score_for(&done.spec_a);
                self.kept.keep(done)?;
                result
            }
        };
        self.results[round] = Some(Pairing {
            a,
            b,
            games: f64::from(games),
            score,
        });
        Ok((games, score))
    }

    /// Each entrant's rating from the pairings played so far, random play (entrant 0) at 0 and
    /// `prior_draws` virtual draws between every two players that met.
    pub fn ratings(&self, prior_draws: f64) -> Result<Vec<Rating>, CalibrationError> {
        let pairings: Vec<Pairing> = self.results.iter().flatten().copied().collect();
        let n = self.panel.entrants.len();
        let ratings = ladder::rate(n, &pairings, 0, prior_draws)?;
        Ok((0..n)
            .map(|i| Rating {
                elo: ratings.elo[i],
                half_width95: ratings.half_width95[i],
                games: ladder::totals(&pairings, i).0 as u32,
            })
            .collect())
    }
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
        use std::sync::atomic::{AtomicU32, Ordering};
        let panel = Panel::new(&rows(), &["mcts-8".into()], &["one".into()]).unwrap();
        let plan = PairingPlan {
            workers: 1,
            games: 2,
            max_actions: 400,
            openings: 0,
            seed: 3,
        };
        let dir = std::env::temp_dir().join(format!("calibration-run-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        let load = crate::spec::preloaded::<Liuzhou>(None);
        let start = Liuzhou::default();
        let run = |played: &AtomicU32| {
            let kept = KeptPairings::open(Some(&dir)).unwrap();
            let mut c = Calibration::new(&start, &load, &panel, plan, kept);
            let mut results = Vec::new();
            for round in 0..c.schedule().len() {
                let was_kept = c.is_kept(round);
                let r = c.play(round, || {
                    played.fetch_add(1, Ordering::Relaxed);
                });
                results.push((r.unwrap(), was_kept));
            }
            (results, c.ratings(1.0).unwrap())
        };
        let played = AtomicU32::new(0);
        let (first, ratings) = run(&played);
        // Three pairings of two games; random play at 0, each entrant in two pairings.
        assert_eq!(played.load(Ordering::Relaxed), 6);
        assert!(first.iter().all(|((games, _), kept)| *games == 2 && !kept));
        assert_eq!(ratings.len(), 3);
        assert_eq!(ratings[0].elo, 0.0);
        assert!(ratings.iter().all(|r| r.games == 4 && r.elo.is_finite()));
        // Again with the same folder: every pairing kept, nothing played, the same ratings.
        let (again, ratings_again) = run(&played);
        assert_eq!(played.load(Ordering::Relaxed), 6);
        assert!(again.iter().all(|(_, kept)| *kept));
        assert_eq!(
            again.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
            first.iter().map(|(r, _)| *r).collect::<Vec<_>>()
        );
        assert_eq!(ratings_again, ratings);
        std::fs::remove_dir_all(&dir).ok();
    }
}
