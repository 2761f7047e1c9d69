//! Liuzhou's alpha-beta: composed positions (LFEN), the same player acting several times in a
//! row, agreement with a plain minimax on decided positions, legality over random positions,
//! limits. Its speed and depth are measured by `cargo run --release -p players --example
//! liuzhou_alphabeta_figures`.

use std::time::{Duration, Instant};

use games::liuzhou::{Liuzhou, Phase, Rules, START_LFEN};
use games::{Agent, Game, Outcome, Player};
use players::alphabeta::core::Searcher;
use players::alphabeta::liuzhou::{
    plies_to_end, LiuzhouAlphaBeta, LiuzhouAlphaBetaAgent, SearchLimits, SearchResult, WIN,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn pos(lfen: &str) -> Liuzhou {
    Liuzhou::from_lfen(lfen, Rules::default()).unwrap()
}

fn search(s: &Liuzhou, limits: SearchLimits) -> SearchResult {
    LiuzhouAlphaBeta::new(4).search(s, limits, |_| {})
}

fn best(s: &Liuzhou, r: &SearchResult) -> String {
    s.format_action(r.best.expect("a best action"))
}

#[test]
fn steps_into_a_square_and_captures_the_last_stone() {
    // Black's b4-c4 completes c3 d3 c4 d4; the capture that follows takes White's only stone.
    let s = pos("W5/6/1B1B2/2BB2/6/6 b move 0 80 3");
    for depth in [1, 2, 3, 5] {
        let r = search(&s, SearchLimits::depth(depth));
        assert_eq!(best(&s, &r), "b4-c4", "depth {depth}");
        assert_eq!(r.score, WIN - 2, "depth {depth}: won in two actions");
    }
}

#[test]
fn completes_a_square_when_placing_and_marks() {
    // Black places d4 to complete c3 d3 c4 d4 and so marks a White stone; White's stones
    // around leave Black no other shape to make.
    let s = pos("B4B/6/1WB1W1/1WBBW1/2WW2/B5 b place 0 12 0");
    for depth in [1, 2, 3, 4] {
        let r = search(&s, SearchLimits::depth(depth));
        assert_eq!(best(&s, &r), "d4", "depth {depth}");
        assert!(r.score > 50, "a mark is most of a stone: {}", r.score);
    }
}

#[test]
fn captures_a_stone_that_threatens_a_shape() {
    // Black completes c3 d3 c4 d4 with b4-c4; White's c5 can step to b5 and complete a5 b5 a6
    // b6, so the capture takes one of the stones of that threat.
    let s = pos("WW4/W1W3/1B1B2/2BB2/4W1/W5 b move 0 80 3");
    let r = search(&s, SearchLimits::depth(4));
    assert_eq!(best(&s, &r), "b4-c4");
    let mut after = s.clone();
    after.play(r.best.unwrap()).unwrap();
    assert_eq!(
        (after.phase(), after.to_act()),
        (Phase::Capture, Player::First)
    );
    let r2 = search(&after, SearchLimits::depth(4));
    let taken = best(&after, &r2);
    assert!(
        ["xa6", "xb6", "xa5", "xc5"].contains(&taken.as_str()),
        "{taken}"
    );
}

#[test]
fn an_action_searched_first_gets_its_exact_score_and_banned_ones_are_not_chosen() {
    // b4-c4 completes a square and wins; any other step leaves White its stone.
    let s = pos("W5/6/1B1B2/2BB2/6/6 b move 0 80 3");
    let win = s.parse_action("b4-c4").unwrap();
    let mut actions = Vec::new();
    s.legal_actions(&mut actions);
    let other = *actions.iter().find(|&&a| a != win).unwrap();
    let r = LiuzhouAlphaBeta::new(4).search_with_first(&s, SearchLimits::depth(4), other, &[]);
    assert_eq!((r.best, r.score), (Some(win), WIN - 2));
    let first = r.first.expect("the first action's score");
    // (The search stops once it has found the win.)
    let depth = SearchLimits::depth(r.depth);
    assert!(first < WIN - 100, "{first}");
    // Its score is the one a search of it alone finds at that depth (up to the table, which
    // the other actions' searches fill with positions that a transposition reaches at another
    // depth).
    let others: Vec<_> = actions.iter().copied().filter(|&a| a != other).collect();
    let alone = LiuzhouAlphaBeta::new(4).search_with_first(&s, depth, other, &others);
    assert_eq!((alone.best, alone.first), (Some(other), Some(alone.score)));
    assert!((alone.score - first).abs() <= 10, "{} {first}", alone.score);
    // The winning action first scores as the search; banned, it is not chosen.
    let r = LiuzhouAlphaBeta::new(4).search_with_first(&s, SearchLimits::depth(4), win, &[]);
    assert_eq!((r.best, r.first), (Some(win), Some(WIN - 2)));
    let r = LiuzhouAlphaBeta::new(4).search_with_first(&s, SearchLimits::depth(4), other, &[win]);
    assert!(r.best.is_some_and(|a| a != win), "{r:?}");
}

#[test]
fn blocks_a_square_the_opponent_is_about_to_complete() {
    // White's c5-b5 would complete a5 b5 a6 b6; Black has no shape to make and steps b4-b5.
    let s = pos("WW4/W1W3/1B4/6/4BB/W3BW b move 0 60 3");
    let r = search(&s, SearchLimits::depth(4));
    assert_eq!(best(&s, &r), "b4-b5", "score {}", r.score);
}

#[test]
fn the_same_player_capturing_twice_is_valued_for_that_player() {
    // Black owes two captures and White has two stones: both captures by Black win.
    let s = pos("W4W/6/6/2BB2/2BB2/6 b capture 2 90 3");
    for depth in [1, 2, 4] {
        let r = search(&s, SearchLimits::depth(depth));
        assert_eq!(r.score, WIN - 2, "depth {depth}");
    }
    // The line shows Black acting twice.
    let mut agent = LiuzhouAlphaBetaAgent::try_new(SearchLimits::depth(3), 1).unwrap();
    let a = agent.select_action(&s).unwrap();
    let e = agent.explain().unwrap();
    assert_eq!(e.value, Some(1.0));
    assert_eq!(e.pv.len(), 2, "{:?}", e.pv);
    assert_eq!(e.pv[0], a);
    let mut t = s.clone();
    for &x in &e.pv {
        assert_eq!(t.to_act(), Player::First);
        t.play(x).unwrap();
    }
    assert_eq!(t.outcome(), Some(Outcome::Win(Player::First)));
}

#[test]
fn a_capture_that_cannot_stop_two_threats_is_valued_as_the_loss_it_is() {
    // Black owes one capture and has one stone; White threatens c5-b5 (a5 b5 a6 b6) and f4-f5
    // (e5 f5 e6 f6). One capture stops one threat; White completes the other and takes Black's
    // last stone: lost in three actions (Black's capture, White's step, White's capture).
    let s = pos("WW2WW/W1W1W1/5W/6/6/5B b capture 1 90 3");
    for depth in [1, 3, 5] {
        let r = search(&s, SearchLimits::depth(depth));
        assert_eq!(r.score, -(WIN - 3), "depth {depth}");
    }
}

#[test]
fn marks_twice_after_a_line_and_values_it_for_the_marker() {
    // Black placed a line on rank 1 and owes two marks: it marks twice in a row, and the value
    // of the position is Black's (two White stones will leave the board).
    let s = pos("WW4/W5/6/6/WW4/BBBBBB b mark 2 20 0");
    let d1 = search(&s, SearchLimits::depth(1));
    let d3 = search(&s, SearchLimits::depth(3));
    assert!(
        d1.score > 100 && d3.score > 100,
        "{} {}",
        d1.score,
        d3.score
    );
    let mut t = s.clone();
    t.play(d3.best.unwrap()).unwrap();
    assert_eq!(
        (t.to_act(), t.phase(), t.pending()),
        (Player::First, Phase::Mark, 1)
    );
    let again = search(&t, SearchLimits::depth(3));
    assert!(again.score > 50, "{}", again.score);
}

/// Plain minimax from Black's side (max where Black acts, min where White does), counting
/// only decided games: `Some(WIN − n)` if Black wins in n actions at best play within `depth`,
/// `Some(−(WIN − n))` if Black loses so, `Some(0)` for a draw; `None` if not decided there.
fn decided(s: &Liuzhou, depth: u32, ply: i32) -> Option<i32> {
    if let Some(o) = s.outcome() {
        return Some(match o {
            Outcome::Draw => 0,
            Outcome::Win(Player::First) => WIN - ply,
            Outcome::Win(Player::Second) => -(WIN - ply),
        });
    }
    if depth == 0 {
        return None;
    }
    let mut actions = Vec::new();
    s.legal_actions(&mut actions);
    let black = s.to_act() == Player::First;
    let mut best: Option<i32> = None;
    let mut open = false;
    for a in actions {
        let mut c = s.clone();
        c.play_unchecked(a);
        match decided(&c, depth - 1, ply + 1) {
            None => open = true,
            Some(v) => {
                best = Some(match best {
                    None => v,
                    Some(b) if black => b.max(v),
                    Some(b) => b.min(v),
                });
            }
        }
    }
    let b = best?;
    // An undecided line is better for the mover than a loss and worse than a win.
    let mover_wins = if black { b > 0 } else { b < 0 };
    (!open || (mover_wins && b != 0)).then_some(b)
}

/// Random games under `lose_below = 4`, positions from their last actions.
fn late_positions(count: usize, seed: u64) -> Vec<Liuzhou> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut s = Liuzhou::new(Rules { lose_below: 4 });
        let mut trail = Vec::new();
        let mut actions = Vec::new();
        while s.outcome().is_none() {
            actions.clear();
            s.legal_actions(&mut actions);
            trail.push(s.clone());
            s.play_unchecked(actions[rng.gen_range(0..actions.len())]);
        }
        let from = trail.len().saturating_sub(6);
        out.extend(trail.drain(from..));
    }
    out
}

#[test]
fn decided_positions_agree_with_plain_minimax() {
    let mut checked = 0;
    for s in late_positions(240, 7) {
        let Some(truth) = decided(&s, 3, 0) else {
            continue;
        };
        let truth = if s.to_act() == Player::First {
            truth
        } else {
            -truth
        };
        let r = search(&s, SearchLimits::depth(5));
        assert_eq!(r.score, truth, "{}", s.lfen());
        if let Some(n) = plies_to_end(truth) {
            // Depth 1 already sees what selections and shapes decide at once.
            let d1 = search(&s, SearchLimits::depth(1));
            if n.abs() <= 1 {
                assert_eq!(d1.score, truth, "{}", s.lfen());
            }
            // A win found shallow stays a win as long deeper.
            if let Some(m) = plies_to_end(d1.score).filter(|&m| m > 0) {
                assert_eq!(m, n, "{}", s.lfen());
            }
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} decided positions");
}

#[test]
fn never_plays_an_illegal_action_and_its_lines_are_legal() {
    let mut rng = SmallRng::seed_from_u64(11);
    for lose_below in [1, 4] {
        let mut agent = LiuzhouAlphaBetaAgent::try_new(
            SearchLimits {
                nodes: Some(3_000),
                ..Default::default()
            },
            1,
        )
        .unwrap();
        for _ in 0..6 {
            let mut s = Liuzhou::new(Rules { lose_below });
            agent.new_game(&s).unwrap();
            let mut actions = Vec::new();
            while s.outcome().is_none() {
                // The agent plays every third decision; random play elsewhere.
                let a = if rng.gen_range(0..3) == 0 {
                    let a = agent.select_action(&s).unwrap();
                    let e = agent.explain().unwrap();
                    assert_eq!(e.pv.first(), Some(&a));
                    assert!(e.value.is_some_and(|v| (-1.0..=1.0).contains(&v)));
                    let mut t = s.clone();
                    for &x in &e.pv {
                        assert!(t.is_legal(x), "pv {:?} in {}", e.pv, s.lfen());
                        t.play_unchecked(x);
                    }
                    a
                } else {
                    actions.clear();
                    s.legal_actions(&mut actions);
                    actions[rng.gen_range(0..actions.len())]
                };
                s.play(a).unwrap_or_else(|e| panic!("{e} in {}", s.lfen()));
            }
        }
    }
}

#[test]
fn a_finished_game_has_no_best_action() {
    let s = pos("6/6/2BB2/2BB2/6/6 w move 0 90 3");
    assert!(s.outcome().is_some());
    assert_eq!(search(&s, SearchLimits::depth(3)).best, None);
    let mut agent = LiuzhouAlphaBetaAgent::try_new(SearchLimits::depth(3), 1).unwrap();
    assert!(agent.select_action(&s).is_err());
}

#[test]
fn limits_are_honoured() {
    let s = pos(START_LFEN);
    let t = Instant::now();
    let r = search(&s, SearchLimits::movetime(Duration::from_millis(100)));
    let took = t.elapsed();
    // The clock is read every 1 024 nodes; a loaded machine may add a little.
    assert!(took < Duration::from_millis(400), "{took:?}");
    assert!(r.best.is_some() && r.depth >= 1);
    let r = search(
        &s,
        SearchLimits {
            nodes: Some(20_000),
            ..Default::default()
        },
    );
    assert!(r.nodes <= 20_000 + 1_100, "{}", r.nodes);
    let r = search(&s, SearchLimits::depth(2));
    assert_eq!(r.depth, 2);
    // Both set: the first limit reached ends it.
    let r = search(
        &s,
        SearchLimits {
            depth: Some(30),
            movetime: Some(Duration::from_millis(50)),
            nodes: None,
        },
    );
    assert!(r.depth < 30);
}

#[test]
fn a_protocol_clock_shortens_the_time_and_explain_reports_the_search() {
    let own = SearchLimits::movetime(Duration::from_millis(500));
    let mut agent = LiuzhouAlphaBetaAgent::try_new(own, 1).unwrap();
    assert_eq!(agent.explain(), None);
    agent.set_move_time(Some(Duration::from_millis(50)));
    assert_eq!(agent.limits().movetime, Some(Duration::from_millis(50)));
    agent.set_move_time(Some(Duration::from_secs(5)));
    assert_eq!(agent.limits(), own);
    agent.set_move_time(None);
    assert_eq!(agent.limits(), own);
    let mut depth_only = LiuzhouAlphaBetaAgent::try_new(SearchLimits::depth(40), 1).unwrap();
    depth_only.set_move_time(Some(Duration::from_millis(30)));
    let t = Instant::now();
    depth_only.select_action(&pos(START_LFEN)).unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    let e = depth_only.explain().unwrap();
    assert!(e.nodes.unwrap() > 0 && !e.pv.is_empty());
    depth_only.new_game(&pos(START_LFEN)).unwrap();
    assert_eq!(depth_only.explain(), None);
}

#[test]
fn the_one_builder_makes_it() {
    use players::spec::{build, AgentSpec, BuildError, OwnPlayers};
    assert_eq!(Liuzhou::OWN_KINDS, &["alphabeta", "gtp"]);
    let spec = AgentSpec::parse("alphabeta:depth=2,hash=1").unwrap();
    let load = |_: Option<&std::path::Path>| anyhow::bail!("no network");
    let mut agent = build::<Liuzhou>(&spec, "ab", 0, &load).unwrap();
    assert_eq!(agent.name(), "alphabeta-d2");
    let s = pos(START_LFEN);
    assert!(s.is_legal(agent.select_action(&s).unwrap()));
    match build::<Liuzhou>(&AgentSpec::parse("minimax").unwrap(), "x", 0, &load) {
        Err(BuildError::UnknownKind { kind, game, .. }) => {
            assert_eq!((kind.as_str(), game), ("minimax", "liuzhou"))
        }
        other => panic!("expected UnknownKind, got {:?}", other.err()),
    }
}
