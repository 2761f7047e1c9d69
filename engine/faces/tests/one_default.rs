//! One default for every face: the same tree search asked for through `engine match` (a spec),
//! `engine play` and `engine serve` (a person's choice), `engine gtp` (its config section) and
//! `engine uci` (its options) is built by the one builder into the same search — the same
//! leaves per network call, threads and arena — so the strengths `engine match` measures are
//! what every face plays.

use std::sync::Arc;

use eval::fake::FakeEvaluator;
use eval::Evaluator;
use faces::gtp::GtpConfig;
use faces::uci;
use faces::web::view::Choice;
use games::go::GoState;
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use players::spec::{build_mcts, preloaded, AgentSpec};
use search::{Playable, RunOptions};

/// The search `spec` builds for `G` with a network of batch 64.
fn built<G: Playable>(spec: &AgentSpec) -> (RunOptions, usize) {
    let net: Arc<dyn Evaluator<G>> = Arc::new(FakeEvaluator::new(64));
    let agent = build_mcts::<G>(spec, "net", 1, &preloaded(Some(net))).unwrap();
    (agent.run_options(), agent.search_config().max_nodes)
}

#[test]
fn every_face_builds_the_same_network_search() {
    for visits in [64, 200, 800] {
        let matched = built::<Liuzhou>(&AgentSpec::parse(&format!("net:visits={visits}")).unwrap());
        let choice = Choice {
            name: "net".into(),
            visits,
            seed: 1,
        };
        let (text, _) = choice.spec::<Liuzhou>().unwrap();
        let played = built::<Liuzhou>(&AgentSpec::parse(&text).unwrap());
        let gtp = GtpConfig {
            agent: "net".into(),
            visits,
            ..GtpConfig::default()
        };
        let gtp = built::<GoState>(&gtp.spec().unwrap());
        let uci = uci::SearchOptions {
            agent: "net".into(),
            visits,
            ..uci::SearchOptions::default()
        };
        let uci = built::<Xiangqi>(&uci.spec().unwrap());
        assert_eq!(played, matched, "play/serve at {visits} visits");
        assert_eq!(gtp, matched, "gtp at {visits} visits");
        assert_eq!(uci, matched, "uci at {visits} visits");
    }
    // On the CPU a network call holds 8 leaves unless the spec says otherwise.
    let (run, _) = built::<Liuzhou>(&AgentSpec::parse("net:visits=200").unwrap());
    assert_eq!(run.leaves_per_thread, 8);
}

#[test]
fn pure_mcts_is_the_same_everywhere_too() {
    let matched = AgentSpec::parse("mcts:visits=300").unwrap();
    let gtp = GtpConfig {
        agent: "mcts".into(),
        visits: 300,
        ..GtpConfig::default()
    }
    .spec()
    .unwrap();
    let none = || preloaded::<GoState>(None);
    let a = build_mcts::<GoState>(&matched, "mcts", 1, &none()).unwrap();
    let b = build_mcts::<GoState>(&gtp, "mcts", 1, &none()).unwrap();
    assert_eq!(a.run_options(), b.run_options());
    assert_eq!(a.run_options().leaves_per_thread, 1);
    assert_eq!(
        a.search_config().cache_entries,
        0,
        "a rollout is not cached"
    );
}
