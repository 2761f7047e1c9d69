//! Agents and matches on small games: MCTS with a fake network or random playouts.

// The small test games of the search crate.
#[path = "../../search/tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Mnk;
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::{Agent, Decision, Encoding, Game, Outcome, Player, RandomAgent};
use players::matchplay::{play_game, play_match, RESIGNATION};
use search::{Limit, MctsAgent, MctsAgentConfig, RunOptions, SearchConfig};

fn mcts(evaluator: Arc<dyn Evaluator<Mnk>>, limit: Limit, run: RunOptions) -> MctsAgent<Mnk> {
    MctsAgent::new(
        MctsAgentConfig {
            name: "mcts".into(),
            search: SearchConfig {
                max_nodes: 1 << 20,
                ..SearchConfig::default()
            },
            limit,
            run,
            temperature: 0.0,
            seed: 3,
            resign_below: None,
        },
        evaluator,
    )
}

#[test]
fn mcts_never_loses_tic_tac_toe_to_random() {
    // Value-free network: the exact terminal values are all the search knows.
    let mut a = mcts(
        Arc::new(FakeEvaluator::new(8)),
        Limit::visits(2000),
        RunOptions::single(8),
    );
    let mut b = RandomAgent::new(9);
    let r = play_match(&Mnk::tic_tac_toe(), &mut a, &mut b, 30, 100, |_, _, _| {}).unwrap();
    assert_eq!(r.losses, 0, "{r:?}");
    assert!(r.wins >= 20, "{r:?}");
    let summary = a.summary().unwrap();
    assert!(summary.contains("playouts"), "{summary}");
}

#[test]
fn pure_mcts_with_random_playouts_beats_random() {
    let rollouts: Arc<dyn Evaluator<Mnk>> = Arc::new(eval::RolloutEvaluator::<Mnk>::new(4));
    let mut a = mcts(rollouts, Limit::visits(400), RunOptions::single(1));
    let mut b = RandomAgent::new(5);
    // Three in a row on a 4×4 board: long enough that random playouts must carry the search.
    let r = play_match(&Mnk::new(4, 4, 3), &mut a, &mut b, 20, 100, |_, _, _| {}).unwrap();
    assert!(r.score() >= 0.9, "{r:?}");
}

#[test]
fn a_match_counts_games_by_the_rule_that_ended_them() {
    use games::go::GoState;
    let start = GoState::with_size(5);
    let (mut a, mut b) = (RandomAgent::new(1), RandomAgent::new(2));
    let r = play_match(&start, &mut a, &mut b, 6, 1000, |_, _, _| {}).unwrap();
    assert_eq!(r.endings.values().sum::<u32>(), 6, "{r:?}");
    // The score after the colon is left out, so games group by rule.
    assert!(
        r.endings
            .keys()
            .all(|k| k == "both passed" || k.starts_with("move cap of")),
        "{r:?}"
    );
    // A game cut short by the caller's cap says so.
    let r = play_match(&start, &mut a, &mut b, 2, 3, |_, _, _| {}).unwrap();
    assert_eq!(r.endings_text(), "the action cap 2");
}

#[test]
fn two_mcts_agents_keep_their_trees_through_a_game() {
    let fake: Arc<dyn Evaluator<Mnk>> = Arc::new(FakeEvaluator::new(4).seeded(1));
    let run = RunOptions {
        threads: 2,
        leaves_per_thread: 2,
        combine: true,
        batch_wait: Duration::from_micros(200),
    };
    let mut a = mcts(fake.clone(), Limit::visits(300), run);
    let mut b = mcts(fake, Limit::visits(300), RunOptions::single(4));
    let record = play_game(&Mnk::new(4, 4, 3), &mut a, &mut b, 100).unwrap();
    assert!(!record.capped);
    // After its last move the agent's tree followed the game: its root is the final position
    // or the position before the opponent's reply.
    let s = a.search().unwrap();
    assert!(s.state().outcome().is_some() || s.state().to_act() == Player::Second);
    let report = a.last_report();
    assert!(report.is_none() || report.unwrap().playouts == 300);
}

#[test]
fn a_timed_search_stops_on_time_with_a_choice() {
    let fake = FakeEvaluator::new(1).with_batch_cost(Duration::from_millis(2));
    let mut s = search::Search::new(Mnk::new(4, 4, 3), SearchConfig::default(), 1);
    let r = s
        .run(
            &fake,
            Limit::time(Duration::from_millis(30)),
            RunOptions::single(1),
        )
        .unwrap();
    assert!(r.elapsed < Duration::from_millis(500), "{:?}", r.elapsed);
    assert!(r.playouts >= 1);
    assert!(s.best_action().is_some());
    // Even a limit shorter than one evaluation leaves the root expanded.
    let mut s = search::Search::new(Mnk::new(4, 4, 3), SearchConfig::default(), 1);
    s.run(
        &fake,
        Limit::time(Duration::from_nanos(1)),
        RunOptions::single(1),
    )
    .unwrap();
    assert!(s.best_action().is_some());
}

#[test]
fn random_playouts_score_from_the_player_to_act() {
    let e = eval::RolloutEvaluator::<Mnk>::new(1);
    // A finished position is scored exactly, for the player to act; the policy is uniform.
    let won = Mnk::from_rows(3, 3, 3, "xxx oo. ...", Player::Second);
    let mut policy = vec![1.0; 9];
    let mut value = [0.5];
    e.evaluate(&[&won], &mut policy, &mut value).unwrap();
    assert_eq!(value, [-1.0], "o to act has lost");
    assert!(policy.iter().all(|&p| p == 0.0));
    // x to act can only complete the top row: every playout is that win.
    let forced = Mnk::from_rows(3, 3, 3, "xx. oox xoo", Player::First);
    e.evaluate(&[&forced], &mut policy, &mut value).unwrap();
    assert_eq!(value, [1.0]);
}

#[test]
fn a_protocol_can_shorten_the_time_change_the_limit_and_halt_a_search() {
    let fake: Arc<dyn Evaluator<Mnk>> = Arc::new(FakeEvaluator::new(8));
    let own = Limit::time(Duration::from_millis(500));
    let mut a = mcts(fake, own, RunOptions::single(8));
    // A move time shortens the agent's own time, never lengthens it; none restores it.
    a.set_move_time(Some(Duration::from_millis(100)));
    assert_eq!(a.limit().time, Some(Duration::from_millis(100)));
    a.set_move_time(Some(Duration::from_secs(10)));
    assert_eq!(a.limit(), own);
    a.set_move_time(None);
    assert_eq!(a.limit(), own);

    // A new limit is searched to the visit.
    a.set_limit(Limit::visits(300));
    let board = Mnk::new(4, 4, 3);
    a.select_action(&board).unwrap();
    assert_eq!(a.last_report().unwrap().playouts, 300);

    // A raised halt flag ends even a long search once the root has children.
    let halt = Arc::new(std::sync::atomic::AtomicBool::new(true));
    a.set_halt(Some(halt));
    a.set_limit(Limit::time(Duration::from_secs(600)));
    a.new_game(&board).unwrap();
    let t0 = std::time::Instant::now();
    a.select_action(&board).unwrap();
    assert!(
        a.last_report().unwrap().playouts <= 16,
        "{:?}",
        a.last_report()
    );
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_lost_agent_resigns_below_its_threshold_and_the_match_scores_it() {
    // X (First) threatens both the top row and the left column: O, to act, cannot block both.
    let lost = Mnk::from_rows(3, 3, 3, "x.x .o. x.o", Player::Second);
    let fake: Arc<dyn Evaluator<Mnk>> = Arc::new(FakeEvaluator::new(8));
    let mut o = mcts(fake.clone(), Limit::visits(500), RunOptions::single(8));
    // By default an agent plays on, and says how it sees its move.
    assert!(matches!(o.decide(&lost).unwrap(), Decision::Play(_)));
    let seen = o.explain().unwrap().value.unwrap();
    assert!(seen < -0.9, "a lost position valued {seen}");
    o.set_resign_below(Some(-0.5));
    assert_eq!(o.decide(&lost).unwrap(), Decision::Resign);
    let mut x = RandomAgent::new(1);
    let record = play_game(&lost, &mut x, &mut o, 100).unwrap();
    assert_eq!(record.outcome, Outcome::Win(Player::First));
    assert_eq!((record.actions(), record.ending.as_str()), (0, RESIGNATION));
    // Where it still has a chance it plays.
    let open = Mnk::tic_tac_toe();
    let mut first = mcts(fake, Limit::visits(500), RunOptions::single(8));
    first.set_resign_below(Some(-0.5));
    assert!(matches!(first.decide(&open).unwrap(), Decision::Play(_)));
}

#[test]
fn analysis_searches_even_a_forced_position_and_keeps_the_tree_for_the_move() {
    // X to act with one empty square left: a move needs no search, an analysis does one.
    let forced = Mnk::from_rows(3, 3, 3, "xox xoo ox.", Player::First);
    let mut a = mcts(
        Arc::new(FakeEvaluator::new(8)),
        Limit::visits(50),
        RunOptions::single(8),
    );
    let analysis = a.analyse(&forced, None).unwrap().unwrap();
    assert_eq!(analysis.playouts, 50);
    assert_eq!(analysis.candidates.len(), 1);
    assert!(analysis.candidates[0].visits >= 49, "{analysis:?}");
    // A move from the same position plays the one action without a report.
    a.select_action(&forced).unwrap();
    assert!(a.last_report().is_none());

    // In an open position the analysis lists every action, most visited first with its line;
    // the move that follows reuses its tree.
    let open = Mnk::tic_tac_toe();
    let analysis = a.analyse(&open, None).unwrap().unwrap();
    assert_eq!(analysis.visits, 50);
    assert_eq!(analysis.candidates.len(), 9);
    for pair in analysis.candidates.windows(2) {
        assert!(pair[0].visits >= pair[1].visits, "{analysis:?}");
    }
    for c in &analysis.candidates {
        assert_eq!(c.pv[0], c.action);
        assert_eq!(c.value.is_some(), c.visits > 0, "{c:?}");
    }
    // A timed analysis adds to the same tree.
    let more = a
        .analyse(&open, Some(Duration::from_millis(20)))
        .unwrap()
        .unwrap();
    assert_eq!(more.visits, 50 + more.playouts);
    a.select_action(&open).unwrap();
    assert_eq!(
        u64::from(a.search().unwrap().root_visits()),
        more.visits + 50
    );

    // A finished game is refused.
    let mut done = Mnk::tic_tac_toe();
    for i in [0, 3, 1, 4, 2] {
        let mut actions = Vec::new();
        done.legal_actions(&mut actions);
        let a = actions
            .into_iter()
            .find(|&a| done.action_index(a) == i)
            .unwrap();
        done.play(a).unwrap();
    }
    assert!(done.outcome().is_some());
    assert!(a.analyse(&done, None).is_err());
}

#[test]
fn analysis_puts_a_proven_win_first() {
    // X to act wins at once in the top row; O threatens nothing it can finish first.
    let win = Mnk::from_rows(3, 3, 3, "xx. oo. ...", Player::First);
    let mut a = mcts(
        Arc::new(FakeEvaluator::new(8)),
        Limit::visits(300),
        RunOptions::single(8),
    );
    let analysis = a.analyse(&win, None).unwrap().unwrap();
    let first = &analysis.candidates[0];
    assert_eq!(win.action_index(first.action), 2, "{analysis:?}");
    assert_eq!(first.proven, Some(Outcome::Win(Player::First)));
    assert_eq!(first.proof_length, Some(1));
    assert_eq!(first.value, Some(1.0));
    assert_eq!(analysis.value, 1.0);
}

#[test]
fn a_parallel_match_counts_every_game_the_same_way_each_time() {
    let run = || {
        let mut pairs: Vec<players::matchplay::AgentPair<Mnk>> = (0..3)
            .map(|k| {
                let a: Box<dyn Agent<Mnk>> = Box::new(mcts(
                    Arc::new(FakeEvaluator::new(8)),
                    Limit::visits(200),
                    RunOptions::single(8),
                ));
                let b: Box<dyn Agent<Mnk>> = Box::new(RandomAgent::new(10 + k));
                (a, b)
            })
            .collect();
        let seen = std::sync::Mutex::new(Vec::new());
        let r = players::matchplay::play_match_parallel(
            &Mnk::tic_tac_toe(),
            &mut pairs,
            11,
            100,
            players::matchplay::Colours::Alternate,
            players::matchplay::Openings::default(),
            |g, record, a_plays, _| {
                // Each game's record replays to its own end, with A's colour by its number.
                let mut state = record.start.clone();
                for &m in &record.moves {
                    state.play(m).unwrap();
                }
                assert_eq!(state.outcome(), Some(record.outcome));
                let first = if g % 2 == 0 {
                    Player::First
                } else {
                    Player::Second
                };
                assert_eq!(a_plays, first);
                seen.lock().unwrap().push(g);
            },
        )
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..11).collect::<Vec<_>>());
        r
    };
    let first = run();
    assert_eq!(first.games(), 11);
    assert_eq!(first.losses, 0, "{first:?}");
    assert_eq!(first, run());
}

/// An agent that notes the colour it is asked to move for.
struct Noting(RandomAgent, Arc<std::sync::Mutex<Vec<Player>>>);

impl<G: Game> Agent<G> for Noting {
    fn name(&self) -> String {
        "noting".into()
    }

    fn select_action(&mut self, state: &G) -> Result<G::Action, games::AgentError> {
        self.1.lock().unwrap().push(state.to_act());
        self.0.select_action(state)
    }
}

#[test]
fn a_handicap_match_keeps_the_colours() {
    use games::go::{handicap, GoRules, GoState};
    use players::matchplay::{play_match_parallel, AgentPair, Colours, Openings};
    let stones = handicap::fixed_handicap(9, 3).unwrap();
    let start = GoState::with_handicap(GoRules::with_size(9), &stones).unwrap();
    for (colours, a_colours) in [
        (Colours::AFirst, vec![Player::First]),
        (Colours::Alternate, vec![Player::First, Player::Second]),
    ] {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let a: Box<dyn Agent<GoState>> = Box::new(Noting(RandomAgent::new(1), seen.clone()));
        let b: Box<dyn Agent<GoState>> = Box::new(RandomAgent::new(2));
        let mut pairs: Vec<AgentPair<GoState>> = vec![(a, b)];
        let r = play_match_parallel(
            &start,
            &mut pairs,
            4,
            30,
            colours,
            Openings::default(),
            |_, _, _, _| {},
        )
        .unwrap();
        assert_eq!(r.games(), 4);
        let mut seen = seen.lock().unwrap().clone();
        seen.sort_by_key(|p| p.index());
        seen.dedup();
        assert_eq!(seen, a_colours, "{colours:?}");
    }
}

#[test]
fn a_gumbel_agent_from_a_spec_plays_well_with_visits_or_a_clock() {
    use players::spec::{build_mcts, AgentSpec};
    let no_net = |_: Option<&std::path::Path>| -> anyhow::Result<Arc<dyn Evaluator<Mnk>>> {
        anyhow::bail!("no network here")
    };
    let spec = AgentSpec::parse("mcts:search=gumbel,visits=300,gumbel_m=9").unwrap();
    let mut a = build_mcts::<Mnk>(&spec, "gumbel", 1, &no_net).unwrap();
    assert_eq!(a.search_config().search, search::SearchKind::Gumbel);
    assert_eq!(a.search_config().gumbel_m, 9);
    let mut b = RandomAgent::new(9);
    let r = play_match(&Mnk::tic_tac_toe(), &mut a, &mut b, 20, 100, |_, _, _| {}).unwrap();
    assert_eq!(r.losses, 0, "{r:?}");
    // A clock alone: the halving is planned for a nominal budget and goes on past it.
    let spec = AgentSpec::parse("mcts:search=gumbel,time=0.05").unwrap();
    let mut a = build_mcts::<Mnk>(&spec, "gumbel", 1, &no_net).unwrap();
    let start = Mnk::tic_tac_toe();
    let action = a.select_action(&start).unwrap();
    assert!(start.clone().play(action).is_ok());
    assert!(a.last_report().unwrap().playouts > 9);
}
