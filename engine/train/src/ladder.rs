//! The training run's rating ladder: every pairing the loop has played (the best models
//! against the fixed opponents and against earlier bests, the fixed opponents among
//! themselves), kept in `state.yaml`, and the ratings fitted from all of them
//! (`players::ladder`), anchored at `random` = 0. Earlier bests keep the ladder from
//! saturating: a model that beats every fixed opponent still gains rating by beating them.

use players::ladder::{self, Pairing, Ratings};
use serde::{Deserialize, Serialize};

/// The anchor of every run's ladder.
pub const ANCHOR: &str = "random";

/// BayesElo's prior: virtual draws between every two agents that met.
pub const PRIOR_DRAWS: f64 = 1.0;

/// The games of one pairing: `score` is `a`'s (win 1, draw 1/2). Agents are named by their
/// spec (`random`, `mcts:visits=800`) or as `model NNNN`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderGames {
    pub a: String,
    pub b: String,
    pub games: u32,
    pub score: f64,
}

/// The ladder's name of model `n`.
pub fn model_name(n: u32) -> String {
    format!("model {n:04}")
}

/// Whether `a` and `b` have met.
pub fn played(results: &[LadderGames], a: &str, b: &str) -> bool {
    results
        .iter()
        .any(|r| (r.a == a && r.b == b) || (r.a == b && r.b == a))
}

/// The ratings of every agent in `results` that is linked to the anchor, best first: (name,
/// Elo, half-width of its 95 % interval, games, score).
pub fn table(results: &[LadderGames]) -> Vec<(String, f64, f64, u32, f64)> {
    let Some((names, ratings)) = fit(results) else {
        return Vec::new();
    };
    let mut rows: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (games, score) = results
                .iter()
                .filter(|r| &r.a == name || &r.b == name)
                .fold((0, 0.0), |(g, s), r| {
                    let mine = if &r.a == name {
                        r.score
                    } else {
                        f64::from(r.games) - r.score
                    };
                    (g + r.games, s + mine)
                });
            (
                name.clone(),
                ratings.elo[i],
                ratings.half_width95[i],
                games,
                score / f64::from(games.max(1)),
            )
        })
        .collect();
    rows.sort_by(|x, y| y.1.total_cmp(&x.1));
    rows
}

/// `name`'s rating and the half-width of its interval, if it is on the ladder.
pub fn rating_of(results: &[LadderGames], name: &str) -> Option<(f64, f64)> {
    let (names, ratings) = fit(results)?;
    let i = names.iter().position(|n| n == name)?;
    Some((ratings.elo[i], ratings.half_width95[i]))
}

/// The ratings of the agents linked to the anchor by games (others are left out).
fn fit(results: &[LadderGames]) -> Option<(Vec<String>, Ratings)> {
    // The anchor's component: agents reachable from it through pairings with games.
    let mut names = vec![ANCHOR.to_string()];
    loop {
        let before = names.len();
        for r in results.iter().filter(|r| r.games > 0) {
            for (x, y) in [(&r.a, &r.b), (&r.b, &r.a)] {
                if names.contains(x) && !names.contains(y) {
                    names.push(y.clone());
                }
            }
        }
        if names.len() == before {
            break;
        }
    }
    if names.len() < 2 {
        return None;
    }
    let index = |n: &str| names.iter().position(|m| m == n);
    let pairings: Vec<Pairing> = results
        .iter()
        .filter_map(|r| {
            Some(Pairing {
                a: index(&r.a)?,
                b: index(&r.b)?,
                games: f64::from(r.games),
                score: r.score,
            })
        })
        .collect();
    let ratings = ladder::rate(names.len(), &pairings, 0, PRIOR_DRAWS).ok()?;
    Some((names, ratings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(a: &str, b: &str, games: u32, score: f64) -> LadderGames {
        LadderGames {
            a: a.into(),
            b: b.into(),
            games,
            score,
        }
    }

    #[test]
    fn later_bests_rise_above_a_saturated_panel() {
        // Both models beat every fixed opponent; the second also beats the first.
        let results = vec![
            games(ANCHOR, "mcts:visits=800", 10, 1.0),
            games("model 0001", ANCHOR, 10, 10.0),
            games("model 0001", "mcts:visits=800", 10, 10.0),
            games("model 0002", ANCHOR, 10, 10.0),
            games("model 0002", "mcts:visits=800", 10, 10.0),
            games("model 0002", "model 0001", 10, 8.0),
        ];
        let rows = table(&results);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["model 0002", "model 0001", "mcts:visits=800", "random"]
        );
        let (r1, _) = rating_of(&results, "model 0001").unwrap();
        let (r2, h2) = rating_of(&results, "model 0002").unwrap();
        assert!(r2 > r1 && r2.is_finite() && h2.is_finite(), "{rows:?}");
        assert_eq!(rating_of(&results, ANCHOR), Some((0.0, 0.0)));
        assert!(played(&results, "model 0001", "model 0002"));
        assert!(!played(&results, "model 0001", "model 0003"));
    }

    #[test]
    fn agents_not_linked_to_the_anchor_are_left_out() {
        let results = vec![
            games("model 0001", ANCHOR, 4, 3.0),
            games("model 0007", "model 0008", 4, 2.0),
        ];
        assert_eq!(table(&results).len(), 2);
        assert_eq!(rating_of(&results, "model 0007"), None);
        assert!(table(&[]).is_empty());
    }
}
