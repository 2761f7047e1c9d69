//! Ratings of a panel of agents from the games they played against each other: the
//! Bradley–Terry model fitted by maximum likelihood, as BayesElo and Ordo do for engine lists.
//!
//! Agent i has a strength r_i, and scores against j with probability 1 / (1 + e^(r_j − r_i));
//! a draw counts as half a win. The ratings that make the observed scores most likely are found
//! by Newton's method with one agent (the anchor) held at 0; their 95 % intervals come from the
//! inverse of the likelihood's curvature (the Fisher information), so they are intervals of
//! each rating relative to the anchor. A small prior of virtual draws between every two agents
//! that met keeps an agent that won (or lost) every game at a finite rating, as BayesElo's
//! default prior does; with it, a model that beats every fixed opponent still gets a finite
//! rating that rises with its results against stronger ones.
//!
//! [`play_pairing`] plays one pairing of a round robin (`engine ladder`, and the calibration of
//! the levels), each game's players built from their specs.

use crate::matchplay::{play_match_parallel, Colours, MatchError, MatchResult, Openings};
use crate::spec::{self, AgentSpec, BuildError, NetLoader, OwnPlayers};

/// Elo points per unit of r: 400 / ln 10.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The games of two agents of the panel: `score` is agent `a`'s (win 1, draw 1/2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pairing {
    pub a: usize,
    pub b: usize,
    pub games: f64,
    pub score: f64,
}

/// Agent `i`'s games and score over `pairings` (win 1, draw 1/2), from either side.
pub fn totals(pairings: &[Pairing], i: usize) -> (f64, f64) {
    pairings
        .iter()
        .filter(|p| p.a == i || p.b == i)
        .fold((0.0, 0.0), |(g, s), p| {
            let mine = if p.a == i { p.score } else { p.games - p.score };
            (g + p.games, s + mine)
        })
}

/// The fitted ratings, in Elo, the anchor at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    pub elo: Vec<f64>,
    /// Half the width of each rating's 95 % interval (0 for the anchor).
    pub half_width95: Vec<f64>,
}

/// Why ratings cannot be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LadderError {
    #[error("agent {0} is not in the panel")]
    NoSuchAgent(usize),
    #[error("agent {agent} played no game that links it to the anchor: its rating is undefined")]
    Unlinked { agent: usize },
    #[error("a pairing has a negative number of games or a score outside 0..=games")]
    BadPairing,
}

/// Fits the ratings of `agents` agents from `pairings`; agent `anchor` is rated 0, and every two
/// agents that met get `prior_draws` virtual drawn games more (0: the plain maximum likelihood,
/// infinite for an agent that never lost or never won).
pub fn rate(
    agents: usize,
    pairings: &[Pairing],
    anchor: usize,
    prior_draws: f64,
) -> Result<Ratings, LadderError> {
    if anchor >= agents {
        return Err(LadderError::NoSuchAgent(anchor));
    }
    // games[i][j] and score[i][j] (i's score against j), prior included.
    let mut games = vec![vec![0.0; agents]; agents];
    let mut score = vec![vec![0.0; agents]; agents];
    for p in pairings {
        if p.a >= agents || p.b >= agents {
            return Err(LadderError::NoSuchAgent(p.a.max(p.b)));
        }
        if !(p.games >= 0.0 && (0.0..=p.games).contains(&p.score)) || p.a == p.b {
            return Err(LadderError::BadPairing);
        }
        games[p.a][p.b] += p.games;
        games[p.b][p.a] += p.games;
        score[p.a][p.b] += p.score;
        score[p.b][p.a] += p.games - p.score;
    }
    for i in 0..agents {
        for j in 0..agents {
            if i != j && games[i][j] > 0.0 {
                games[i][j] += prior_draws;
                score[i][j] += prior_draws / 2.0;
            }
        }
    }
    if let Some(agent) = unlinked(&games, anchor) {
        return Err(LadderError::Unlinked { agent });
    }

    // Newton's method on the agents other than the anchor.
    let free: Vec<usize> = (0..agents).filter(|&i| i != anchor).collect();
    let mut r = vec![0.0; agents];
    let mut info = vec![vec![0.0; free.len()]; free.len()];
    for _ in 0..200 {
        let (gradient, curvature) = derivatives(&r, &games, &score, &free);
        info = curvature;
        let step = solve(&info, &gradient);
        let mut largest = 0.0f64;
        for (k, &i) in free.iter().enumerate() {
            // A capped step keeps the first iterations of a lopsided table from overshooting.
            let s = step[k].clamp(-2.0, 2.0);
            r[i] += s;
            largest = largest.max(s.abs());
        }
        if largest < 1e-10 {
            break;
        }
    }
    let covariance = invert(&info);
    let mut half_width95 = vec![0.0; agents];
    for (k, &i) in free.iter().enumerate() {
        half_width95[i] = 1.96 * covariance[k][k].max(0.0).sqrt() * ELO_PER_NAT;
    }
    Ok(Ratings {
        elo: r.iter().map(|x| x * ELO_PER_NAT).collect(),
        half_width95,
    })
}

/// The log-likelihood's gradient over `free` agents, and minus its Hessian (the Fisher
/// information), at ratings `r`.
fn derivatives(
    r: &[f64],
    games: &[Vec<f64>],
    score: &[Vec<f64>],
    free: &[usize],
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = free.len();
    let mut gradient = vec![0.0; n];
    let mut info = vec![vec![0.0; n]; n];
    for (k, &i) in free.iter().enumerate() {
        for j in 0..r.len() {
            if games[i][j] == 0.0 {
                continue;
            }
            let p = 1.0 / (1.0 + (r[j] - r[i]).exp());
            gradient[k] += score[i][j] - games[i][j] * p;
            let w = games[i][j] * p * (1.0 - p);
            info[k][k] += w;
            if let Some(l) = free.iter().position(|&f| f == j) {
                info[k][l] -= w;
            }
        }
    }
    (gradient, info)
}

/// The first agent with no chain of games to `anchor`, if any.
fn unlinked(games: &[Vec<f64>], anchor: usize) -> Option<usize> {
    let mut seen = vec![false; games.len()];
    let mut stack = vec![anchor];
    seen[anchor] = true;
    while let Some(i) = stack.pop() {
        for (j, &g) in games[i].iter().enumerate() {
            if g > 0.0 && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    seen.iter().position(|&s| !s)
}

/// Solves `m x = b` for a symmetric positive definite `m` (Gaussian elimination with partial
/// pivoting: the panels are a few dozen agents at most).
fn solve(m: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .zip(b)
        .map(|(row, &v)| row.iter().copied().chain([v]).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        let d = a[col][col];
        if d.abs() < 1e-300 {
            continue;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col] / d;
                if f != 0.0 {
                    let pivot_row = a[col].clone();
                    for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    (0..n)
        .map(|i| {
            if a[i][i].abs() < 1e-300 {
                0.0
            } else {
                a[i][n] / a[i][i]
            }
        })
        .collect()
}

fn invert(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let columns: Vec<Vec<f64>> = (0..n)
        .map(|c| solve(m, &(0..n).map(|r| f64::from(r == c)).collect::<Vec<_>>()))
        .collect();
    (0..n)
        .map(|r| (0..n).map(|c| columns[c][r]).collect())
        .collect()
}

/// How a round robin plays each pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairingPlan {
    /// Games at a time, each with a pair of players of its own.
    pub workers: u32,
    pub games: u32,
    pub max_actions: usize,
    /// Random actions at the start of each pair of games ([`Openings`]).
    pub openings: usize,
    pub seed: u64,
}

/// Why a pairing did not finish: a player that could not be built, or a game that stopped.
#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    /// `what` names the player (`agent 2`, `novice (net:visits=1)`).
    #[error("{what}")]
    Build {
        what: String,
        #[source]
        source: BuildError,
    },
    #[error(transparent)]
    Match(#[from] MatchError),
}

/// Plays pairing number `round` of a round robin: `plan.games` games of the first of `sides`
/// (spec, name, what an error calls it) against the second, colours alternating, with
/// `plan.workers` pairs of players seeded apart by round and worker; `on_game` after each game.
pub fn play_pairing<G: OwnPlayers>(
    start: &G,
    load: NetLoader<'_, G>,
    sides: [(&AgentSpec, &str, &str); 2],
    round: usize,
    plan: &PairingPlan,
    on_game: impl Fn() + Sync,
) -> Result<MatchResult, PairingError> {
    let [(spec_a, name_a, what_a), (spec_b, name_b, what_b)] = sides;
    let build = |spec, name, seed, what: &str| {
        spec::build(spec, name, seed, load).map_err(|source| PairingError::Build {
            what: what.to_string(),
            source,
        })
    };
    let mut pairs = Vec::new();
    for w in 0..u64::from(plan.workers) {
        let seed = plan.seed.wrapping_add(1000 * round as u64 + 2 * w);
        pairs.push((
            build(spec_a, name_a, seed, what_a)?,
            build(spec_b, name_b, seed + 1, what_b)?,
        ));
    }
    let openings = Openings {
        moves: plan.openings,
        seed: plan.seed,
    };
    Ok(play_match_parallel(
        start,
        &mut pairs,
        plan.games,
        plan.max_actions,
        Colours::Alternate,
        openings,
        |_, _, _, _| on_game(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_names_the_player_that_could_not_be_built_with_the_cause() {
        use games::liuzhou::Liuzhou;
        let load = crate::spec::preloaded::<Liuzhou>(None);
        let random = AgentSpec::parse("random").unwrap();
        let net = AgentSpec::parse("net:visits=2").unwrap();
        let plan = PairingPlan {
            workers: 1,
            games: 2,
            max_actions: 10,
            openings: 0,
            seed: 1,
        };
        let sides = [(&random, "a", "agent 1"), (&net, "b", "agent 2")];
        let e = play_pairing(&Liuzhou::default(), &load, sides, 0, &plan, || {}).unwrap_err();
        assert!(
            matches!(&e, PairingError::Build { what, source: BuildError::Network(_) } if what == "agent 2"),
            "{e:?}"
        );
        let text = format!("{:#}", anyhow::Error::from(e));
        assert!(text.starts_with("agent 2: "), "{text}");
        assert!(text.contains("no network is loaded for liuzhou"), "{text}");
        let r = play_pairing(&Liuzhou::default(), &load, [sides[0]; 2], 0, &plan, || {});
        assert_eq!(r.unwrap().games(), 2);
    }

    #[test]
    fn totals_count_a_pairing_from_either_side() {
        let pairings = [
            Pairing {
                a: 0,
                b: 1,
                games: 4.0,
                score: 3.0,
            },
            Pairing {
                a: 2,
                b: 0,
                games: 2.0,
                score: 0.5,
            },
        ];
        assert_eq!(totals(&pairings, 0), (6.0, 4.5));
        assert_eq!(totals(&pairings, 1), (4.0, 1.0));
        assert_eq!(totals(&pairings, 2), (2.0, 0.5));
        assert_eq!(totals(&pairings, 3), (0.0, 0.0));
    }

    /// The expected score of a against b at true Elo ratings.
    fn expected(a: f64, b: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf((b - a) / 400.0))
    }

    #[test]
    fn ratings_of_a_table_of_expected_scores_are_the_true_ones() {
        let truth = [0.0, 150.0, 400.0, 420.0];
        let mut pairings = Vec::new();
        for a in 0..truth.len() {
            for b in a + 1..truth.len() {
                let games = 200.0;
                pairings.push(Pairing {
                    a,
                    b,
                    games,
                    score: games * expected(truth[a], truth[b]),
                });
            }
        }
        let r = rate(truth.len(), &pairings, 0, 0.0).unwrap();
        for (got, want) in r.elo.iter().zip(truth) {
            assert!((got - want).abs() < 1e-6, "{:?} vs {truth:?}", r.elo);
        }
        assert_eq!(r.half_width95[0], 0.0);
        assert!(r.half_width95[1..].iter().all(|&h| h > 10.0 && h < 100.0));
        // Anchoring elsewhere shifts every rating by the same amount.
        let shifted = rate(truth.len(), &pairings, 2, 0.0).unwrap();
        for (s, e) in shifted.elo.iter().zip(&r.elo) {
            assert!((s - (e - 400.0)).abs() < 1e-6);
        }
    }

    #[test]
    fn a_hand_computed_pair() {
        // 30 of 40: e^r = 30/10, so r = ln 3 and the Elo gap 400 log10 3 = 190.85.
        let p = [Pairing {
            a: 1,
            b: 0,
            games: 40.0,
            score: 30.0,
        }];
        let r = rate(2, &p, 0, 0.0).unwrap();
        assert!(
            (r.elo[1] - 400.0 * 3f64.log10()).abs() < 1e-9,
            "{:?}",
            r.elo
        );
        // Fisher information 40·(3/4)(1/4) = 7.5 nats⁻²: half-width 1.96/√7.5 nats.
        let want = 1.96 / 7.5f64.sqrt() * ELO_PER_NAT;
        assert!((r.half_width95[1] - want).abs() < 1e-6);
    }

    #[test]
    fn an_unbeaten_agent_gets_a_finite_rating_that_rises_with_stronger_victims() {
        // Agent 2 beats random (0) 20–0; agent 1 is beaten by it 15–5 and beats random 18–2.
        let base = [
            Pairing {
                a: 2,
                b: 0,
                games: 20.0,
                score: 20.0,
            },
            Pairing {
                a: 1,
                b: 0,
                games: 20.0,
                score: 18.0,
            },
        ];
        let alone = rate(3, &base, 0, 1.0).unwrap();
        assert!(alone.elo.iter().all(|e| e.is_finite()));
        let with_win = [
            base[0],
            base[1],
            Pairing {
                a: 2,
                b: 1,
                games: 20.0,
                score: 15.0,
            },
        ];
        let more = rate(3, &with_win, 0, 1.0).unwrap();
        assert!(
            more.elo[2].is_finite() && more.elo[2] > more.elo[1],
            "{more:?}"
        );
        assert!(more.half_width95[2] < alone.half_width95[2] * 1.5);
    }

    #[test]
    fn bad_tables_are_refused() {
        let p = |a, b, games, score| Pairing { a, b, games, score };
        assert_eq!(
            rate(3, &[p(0, 1, 10.0, 5.0)], 0, 1.0),
            Err(LadderError::Unlinked { agent: 2 })
        );
        assert_eq!(
            rate(2, &[p(0, 1, 10.0, 11.0)], 0, 1.0),
            Err(LadderError::BadPairing)
        );
        assert_eq!(
            rate(2, &[p(0, 5, 10.0, 1.0)], 0, 1.0),
            Err(LadderError::NoSuchAgent(5))
        );
        assert_eq!(rate(2, &[], 3, 1.0), Err(LadderError::NoSuchAgent(3)));
    }
}
