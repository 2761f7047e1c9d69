//! Turn structure in Liuzhou: one player often acts several times in a row (a step that forms a
//! shape, then its captures). The search must back values up by each node's own player.

use eval::fake::FakeEvaluator;
use games::liuzhou::{Liuzhou, Rules};
use games::{Game, Outcome, Player};
use search::{Limit, RunOptions, Search, SearchConfig};

fn best(lfen: &str, visits: u64) -> (String, Search<Liuzhou>) {
    best_with(lfen, visits, SearchConfig::default())
}

fn best_with(lfen: &str, visits: u64, config: SearchConfig) -> (String, Search<Liuzhou>) {
    let state = Liuzhou::from_lfen(lfen, Rules::default()).unwrap();
    // A value-free evaluator: only the rules' exact results can steer the search.
    let fake = FakeEvaluator::new(1);
    let mut s = Search::new(state.clone(), config, 1);
    s.run(&fake, Limit::visits(visits), RunOptions::single(1))
        .unwrap();
    let a = s.best_action().unwrap();
    (state.format_action(a), s)
}

#[test]
fn the_step_that_earns_two_captures_wins() {
    // Black to move; White has two stones left. f2-f1 completes the first rank (a line: two
    // captures), and Black then acts twice more, taking both stones: three Black actions in a
    // row end the game. Every other step lets White move.
    let (action, s) = best("W1W3/6/6/6/5B/BBBBB1 b move 0 60 3", 3000);
    assert_eq!(action, "f2-f1");
    assert!(s.root_value() > 0.9, "root value {}", s.root_value());
}

#[test]
fn the_second_of_two_captures_is_seen_through() {
    // Black owes two captures and White has two stones: both captures are Black's, one after
    // the other, and together they win. A search that flipped sides per action would think
    // White answers the first capture.
    let state =
        Liuzhou::from_lfen("W1W3/6/6/6/6/BBBBBB b capture 2 61 0", Rules::default()).unwrap();
    assert_eq!(state.to_act(), Player::First);
    let fake = FakeEvaluator::new(1);
    let mut s = Search::new(state, SearchConfig::default(), 2);
    s.run(&fake, Limit::visits(200), RunOptions::single(1))
        .unwrap();
    assert!(s.root_value() > 0.95, "root value {}", s.root_value());
    // The solver proves the win through the first capture it sees through and then follows
    // that proof, so the other captures keep the one visit (the fake network's 0) they had.
    // Any capture seen through is a proven win for Black, and valued as one.
    assert_eq!(s.root_value(), 1.0);
    let children = s.root_children();
    assert!(children.iter().any(|c| c.proven.is_some()));
    for c in children
        .iter()
        .filter(|c| c.proven.is_some() || c.visits > 1)
    {
        assert_eq!(c.proven, Some(Outcome::Win(Player::First)));
        assert!(c.q > 0.95, "a first capture valued {}", c.q);
    }
}

#[test]
fn the_captures_that_leave_a_stuck_stone_win() {
    // Black owes two captures; White has a6 (walled in by b6 and a5), d4 and f4. Taking d4 and
    // f4 leaves White only the stuck a6: White must then remove a Black stone instead of
    // moving, Black answers by removing a6, and White has none left. Taking a6 first leaves
    // White a stone that can run. Black acts twice in a row before White's forced removal.
    let (action, s) = best("WB4/B5/3W1W/6/6/BBB3 b capture 2 70 0", 4000);
    assert!(["xd4", "xf4"].contains(&action.as_str()), "chose {action}");
    let state = s.state();
    let q = |text: &str| {
        let a = state.parse_action(text).unwrap();
        s.root_children().iter().find(|c| c.action == a).unwrap().q
    };
    assert!(
        q(&action) > 0.9,
        "the winning capture is valued {}",
        q(&action)
    );
    assert!(
        q("xa6") < 0.5,
        "freeing White's last mobile stone is valued {}",
        q("xa6")
    );
}

#[test]
fn minimax_backups_read_turns_that_continue() {
    // The position of `the_step_that_earns_two_captures_wins`, searched with implicit minimax
    // backups: Black's three actions in a row are one turn, so the win is Black's best line
    // and the root (entered by White) is worth −1 from White's side.
    let lfen = "W1W3/6/6/6/5B/BBBBB1 b move 0 60 3";
    let config = SearchConfig {
        minimax_weight: 0.5,
        ..SearchConfig::default()
    };
    let (action, s) = best_with(lfen, 3000, config);
    assert_eq!(action, "f2-f1");
    let tree = s.tree();
    assert_eq!(tree.minimax_q(tree.root()), Some(-1.0));
    // Without the weight nothing is tracked.
    let (_, plain) = best(lfen, 100);
    assert_eq!(plain.tree().minimax_q(plain.tree().root()), None);
}

#[test]
fn contempt_prices_draws_for_the_roots_player() {
    // 35 actions without a capture: any step, by either side, draws. With contempt c every
    // root child is worth −c to the player who searches, whichever colour that is.
    for (side, contempt) in [("b", 0.0), ("b", 0.3), ("w", 0.3)] {
        let lfen = format!("WWW3/6/6/6/6/BBB3 {side} move 0 60 35");
        let config = SearchConfig {
            contempt,
            ..SearchConfig::default()
        };
        let (_, s) = best_with(&lfen, 200, config);
        let children = s.root_children();
        assert!(children.len() > 1);
        for c in children.iter().filter(|c| c.visits > 0) {
            assert_eq!(c.proven, Some(Outcome::Draw));
            assert!(
                (c.q + f64::from(contempt)).abs() < 1e-6,
                "{lfen}: a draw valued {} with contempt {contempt}",
                c.q
            );
        }
    }
}
