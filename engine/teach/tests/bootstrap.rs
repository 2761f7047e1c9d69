//! `teach::bootstrap`: teachers' games into shards, read back with `shards::Shard::read`.
//!
//! The GNU Go and Fairy-Stockfish tests need the Debian packages `gnugo` and
//! `fairy-stockfish`; without them they say so and pass, unless `ENGINE_REQUIRE_ORACLES=1`
//! (CI), where they fail.

use std::path::{Path, PathBuf};

use games::go::{GoState, Move, Point};
use games::xiangqi::Xiangqi;
use games::{Agent, Game, RandomAgent};
use shards::Shard;
use teach::bootstrap::{
    bootstrap, BootstrapConfig, BootstrapError, BootstrapOptions, BootstrapSummary, Finish,
};
use teach::gtp_teacher::{parse_score_estimate, parse_top_moves, GtpTeacher};
use teach::teacher::{Advice, AgentTeacher, TeachError, Teacher};
use teach::uci_teacher::{
    final_lines, parse_info_line, UciLine, UciScore, UciTeacher, UciTeacherSpec, MATE_CP,
};

/// `path` when it exists, else `None` after saying why (or a panic under
/// `ENGINE_REQUIRE_ORACLES=1`).
fn oracle(path: &str, package: &str) -> Option<String> {
    testkit::oracle(&[PathBuf::from(path)], package, "test not run")
}

/// A fresh, empty directory for one test's shards.
fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("teach-bootstrap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A teacher that checks every piece of advice it passes on: legal actions only, none twice,
/// probabilities summing to 1, a value in [−1, 1].
struct Checked<T>(T);

impl<G: Game, T: Teacher<G>> Teacher<G> for Checked<T> {
    fn name(&self) -> String {
        self.0.name()
    }
    fn new_game(&mut self, start: &G, seed: u64) -> Result<(), TeachError> {
        self.0.new_game(start, seed)
    }
    fn advise(&mut self, state: &G) -> Result<Advice<G::Action>, TeachError> {
        let advice = self.0.advise(state)?;
        let mut seen = std::collections::HashSet::new();
        for &(a, p) in &advice.policy {
            assert!(state.is_legal(a), "{a:?} illegal in {}", state.to_text());
            assert!(seen.insert(a), "{a:?} twice");
            assert!((0.0..=1.0).contains(&p), "{a:?}: {p}");
        }
        let sum: f32 = advice.policy.iter().map(|e| e.1).sum();
        assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
        if let Some(v) = advice.value {
            assert!((-1.0..=1.0).contains(&v), "value {v}");
        }
        Ok(advice)
    }
    fn observe(&mut self, before: &G, action: G::Action) -> Result<(), TeachError> {
        self.0.observe(before, action)
    }
}

/// Reads every shard of a run and checks what shards promise: games counted, policies that
/// sum to 1 over indices in range, values in [−1, 1]. Returns the shards.
fn check_shards(paths: &[PathBuf], game: &str, teacher: &str, games: usize) -> Vec<Shard> {
    let shards: Vec<Shard> = paths.iter().map(|p| Shard::read(p).unwrap()).collect();
    assert_eq!(shards.iter().map(|s| s.meta.games).sum::<usize>(), games);
    for s in &shards {
        assert_eq!(s.meta.game, game);
        assert!(s.meta.model.starts_with(teacher), "{}", s.meta.model);
        assert!(s.meta.config.contains("bootstrap:"), "{}", s.meta.config);
        assert!(!s.samples.is_empty());
        for sample in &s.samples {
            let sum: f32 = sample.policy.iter().map(|e| e.1).sum();
            assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
            assert!(sample
                .policy
                .iter()
                .all(|&(i, p)| (i as usize) < s.meta.policy_size && p > 0.0));
            assert!((-1.0..=1.0).contains(&sample.value), "{}", sample.value);
        }
    }
    shards
}

const GNUGO: &str = "/usr/games/gnugo";

fn gnugo_spec(path: &str) -> String {
    format!(
        "gtp:cmd={path} --mode gtp --level 0 --chinese-rules --positional-superko \
         --capture-all-dead"
    )
}

fn gnugo_config() -> BootstrapConfig {
    BootstrapConfig {
        games_per_shard: 2,
        opening_random_moves: 2,
        opening_sampled_moves: 6,
        levels: Some([0, 0]),
        ..BootstrapConfig::default()
    }
}

fn run_gnugo(path: &str, out: &Path, games: usize) -> BootstrapSummary {
    let spec = gnugo_spec(path);
    let config = gnugo_config();
    let mut teacher = Checked(GtpTeacher::from_spec(&spec, &config).unwrap());
    let opts = BootstrapOptions {
        out,
        games,
        seed: 11,
        teacher: &spec,
        opponent: None,
        progress: false,
    };
    bootstrap(&GoState::with_size(9), &mut teacher, None, &config, &opts).unwrap()
}

#[test]
fn gnugo_games_become_shards() {
    let Some(path) = oracle(GNUGO, "gnugo") else {
        return;
    };
    let out = out_dir("gnugo");
    let summary = run_gnugo(&path, &out, 4);
    assert_eq!((summary.games, summary.shards.len()), (4, 2));
    assert_eq!(summary.results.iter().sum::<usize>(), 4);
    assert!(summary.samples <= summary.positions && summary.samples > 20);
    let shards = check_shards(&summary.shards, "go", "gtp:", 4);
    assert_eq!(
        shards.iter().map(|s| s.samples.len() as u64).sum::<u64>(),
        summary.samples
    );
    // The teacher's value is blended in: not every value target is a bare result.
    assert!(shards
        .iter()
        .flat_map(|s| &s.samples)
        .any(|s| s.value.abs() != 1.0 && s.value != 0.0));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_resumed_run_plays_only_the_missing_shards_and_plays_them_alike() {
    let Some(path) = oracle(GNUGO, "gnugo") else {
        return;
    };
    let out = out_dir("resume");
    let first = run_gnugo(&path, &out, 4);
    let before: Vec<Shard> = first
        .shards
        .iter()
        .map(|p| Shard::read(p).unwrap())
        .collect();
    std::fs::remove_file(&first.shards[1]).unwrap();

    let second = run_gnugo(&path, &out, 6);
    assert_eq!(second.kept_shards, first.shards[..1]);
    assert_eq!((second.kept_games, second.games), (2, 4));
    assert_eq!(second.shards.len(), 2);
    assert_eq!(second.shards[0], first.shards[1]);
    // Game seeds depend only on the run's seed and the game's number.
    let again = Shard::read(&second.shards[0]).unwrap();
    assert_eq!(again.samples, before[1].samples);

    let third = run_gnugo(&path, &out, 6);
    assert_eq!(
        (third.games, third.kept_games, third.kept_shards.len()),
        (0, 6, 3)
    );
    check_shards(&third.kept_shards, "go", "gtp:", 6);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn fairy_stockfish_teaches_xiangqi() {
    let Some(path) = oracle("/usr/games/fairy-stockfish", "fairy-stockfish") else {
        return;
    };
    // The spec's search settings replace the config's (depth 8, MultiPV 8 by default).
    let spec = format!("fairy-stockfish:path={path},depth=1,multipv=4");
    let config = BootstrapConfig {
        games_per_shard: 2,
        opening_random_moves: 2,
        opening_sampled_moves: 4,
        ..BootstrapConfig::default()
    };
    let mut teacher = Checked(UciTeacher::from_spec(&spec, &config).unwrap().unwrap());
    let out = out_dir("fairy");
    let opts = BootstrapOptions {
        out: &out,
        games: 2,
        seed: 5,
        teacher: &spec,
        opponent: None,
        progress: false,
    };
    let summary = bootstrap(&Xiangqi::start(), &mut teacher, None, &config, &opts).unwrap();
    assert_eq!((summary.games, summary.shards.len()), (2, 1));
    let shards = check_shards(&summary.shards, "xiangqi", "fairy-stockfish", 2);
    let samples = &shards[0].samples;
    assert!(samples.iter().all(|s| s.policy.len() <= 4));
    assert!(samples.iter().any(|s| s.policy.len() > 1));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_agent_teaches_against_an_opponent() {
    // No oracle needed: a random agent teaches (one-hot policies, results as values) against
    // another on 5 × 5.
    let config = BootstrapConfig {
        games_per_shard: 3,
        ..BootstrapConfig::default()
    };
    let mut teacher = AgentTeacher::new(Box::new(RandomAgent::new(1)) as Box<dyn Agent<GoState>>);
    // Built as the command line builds agents: boxed.
    let mut opponent: Option<Box<dyn Agent<GoState>>> = Some(Box::new(RandomAgent::new(2)));
    let out = out_dir("agent");
    let opts = BootstrapOptions {
        out: &out,
        games: 4,
        seed: 3,
        teacher: "random:seed=1",
        opponent: Some("random:seed=2"),
        progress: false,
    };
    let summary = bootstrap(
        &GoState::with_size(5),
        &mut teacher,
        opponent.as_deref_mut(),
        &config,
        &opts,
    )
    .unwrap();
    assert_eq!((summary.games, summary.shards.len()), (4, 2));
    assert_eq!(summary.teacher_results.iter().sum::<usize>(), 4);
    let shards = check_shards(&summary.shards, "go", "random:seed=1 vs random:seed=2", 4);
    for s in shards.iter().flat_map(|s| &s.samples) {
        assert_eq!(s.policy.len(), 1);
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_teacher_specs_and_settings_say_why() {
    let config = BootstrapConfig::default();
    for (spec, needle) in [
        ("gtp", "needs cmd"),
        ("gtp:cmd=x,level=3", "unknown or empty parameter 'level'"),
        ("gtp:cmd=x,timeout=-1", "timeout '-1'"),
        ("gtp:cmd=/nonexistent/gnugo", "cannot start"),
    ] {
        let e = GtpTeacher::from_spec(spec, &config).err().expect(spec);
        assert!(e.to_string().contains(needle), "{spec}: {e}");
    }
    assert!(UciTeacher::from_spec("alphabeta:depth=3", &config)
        .unwrap()
        .is_none());
    let e = UciTeacher::from_spec("uci:cmd=x,rankbase=2", &config)
        .err()
        .unwrap();
    assert!(e.to_string().contains("rankbase"), "{e}");
    let spec = UciTeacherSpec::parse("uci:cmd=x,depth=9,movetime=300,nodes=5000,multipv=12")
        .unwrap()
        .unwrap();
    assert_eq!(
        (spec.depth, spec.movetime_ms, spec.nodes, spec.multipv),
        (Some(9), Some(300), Some(5000), Some(12))
    );
    for (spec, needle) in [
        ("fairy-stockfish:path=x,depth=0", "depth '0'"),
        ("fairy-stockfish:path=x,multipv=501", "multipv '501'"),
        ("uci:cmd=x,movetime=soon", "movetime 'soon'"),
        ("uci:cmd=x,nodes=-3", "nodes '-3'"),
    ] {
        let e = UciTeacherSpec::parse(spec).expect_err(spec);
        assert!(e.to_string().contains(needle), "{spec}: {e}");
    }

    let bad = BootstrapConfig {
        value_result_weight: 2.0,
        ..BootstrapConfig::default()
    };
    let mut teacher = AgentTeacher::new(Box::new(RandomAgent::new(1)) as Box<dyn Agent<GoState>>);
    let out = out_dir("bad");
    let opts = BootstrapOptions {
        out: &out,
        games: 1,
        seed: 0,
        teacher: "random",
        opponent: None,
        progress: false,
    };
    let e = bootstrap(&GoState::with_size(5), &mut teacher, None, &bad, &opts).unwrap_err();
    assert!(e.to_string().contains("value_result_weight"), "{e}");
}

/// A GTP "engine" in a few lines of shell that answers `top_moves_*` with `reply`.
fn garbage_engine(reply: &str) -> String {
    let path = std::env::temp_dir().join(format!("teach_garbage_gtp_{}.sh", std::process::id()));
    let script = format!(
        "while IFS= read -r line; do case \"$line\" in \
         name) printf '= liar\\n\\n' ;; \
         top_moves*) printf '= {reply}\\n\\n' ;; \
         *) printf '=\\n\\n' ;; esac; done\n"
    );
    std::fs::write(&path, script).unwrap();
    format!("gtp:cmd=sh {},timeout=5", path.display())
}

#[test]
fn a_teacher_answering_garbage_is_an_error_naming_it_and_the_line() {
    let config = BootstrapConfig::default();
    let mut teacher = GtpTeacher::from_spec(&garbage_engine("E5 lots"), &config).unwrap();
    let state = GoState::with_size(9);
    teacher.new_game(&state, 0).unwrap();
    let e = teacher.advise(&state).unwrap_err().to_string();
    assert!(
        e.contains("liar") && e.contains("top_moves_black") && e.contains("E5 lots"),
        "{e}"
    );
}

#[test]
fn parsers_read_top_moves_score_estimates_and_info_lines() {
    let vertex = |v| Move::Place(Point::parse_gtp(v, 9).unwrap());
    assert_eq!(
        parse_top_moves("F6 75.01 D3 74.01 pass 1.5 ", 9).unwrap(),
        [
            (vertex("F6"), 75.01),
            (vertex("D3"), 74.01),
            (Move::Pass, 1.5)
        ]
    );
    assert!(parse_top_moves("", 9).unwrap().is_empty());
    for bad in ["F6", "F6 75 D3", "Z9 1.0", "F6 lots", "F6 inf", "K10 3.0"] {
        assert!(parse_top_moves(bad, 9).is_err(), "{bad}");
    }

    assert_eq!(
        parse_score_estimate("W+11.3 (upper bound: 11.3, lower: 11.3)"),
        Ok(-11.3)
    );
    assert_eq!(
        parse_score_estimate("B+1.7 (upper bound: -1.7, lower: -1.7)"),
        Ok(1.7)
    );
    assert_eq!(parse_score_estimate("0"), Ok(0.0));
    for bad in ["", "W+", "B+x", "white wins", "W+-3", "B+nan"] {
        assert!(parse_score_estimate(bad).is_err(), "{bad}");
    }

    let line = parse_info_line(
        "info depth 3 seldepth 3 multipv 2 score cp -105 nodes 812 nps 270666 tbhits 0 time 3 \
         pv b1c3 f10e9 b3b7",
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        line,
        UciLine {
            depth: 3,
            multipv: 2,
            score: UciScore::Cp(-105),
            first_move: "b1c3".into()
        }
    );
    let mate = parse_info_line("info depth 2 seldepth 2 multipv 1 score mate 1 pv e2d2")
        .unwrap()
        .unwrap();
    assert_eq!(mate.score, UciScore::Mate(1));
    let mated = parse_info_line("info depth 9 score mate -3 nodes 5 pv a1a2 b1b2")
        .unwrap()
        .unwrap();
    assert_eq!((mated.multipv, mated.score), (1, UciScore::Mate(-3)));
    // Bounds, strings, current-move reports and other output say nothing about a line.
    for ignored in [
        "info depth 8 seldepth 10 multipv 1 score cp 35 lowerbound nodes 9 pv h2e2",
        "info depth 8 seldepth 10 multipv 1 score cp 35 upperbound nodes 9 pv h2e2",
        "info depth 8 multipv 2 score mate 4 upperbound pv h2e2",
        "info string NNUE evaluation using xiangqi.nnue enabled",
        "info depth 5 currmove h2e2 currmovenumber 1",
        "info depth 5 multipv 1 score cp 20 nodes 100",
        "bestmove h2e2 ponder h10g8",
        "readyok",
    ] {
        assert_eq!(parse_info_line(ignored), Ok(None), "{ignored}");
    }
    for bad in [
        "info depth x multipv 1 score cp 3 pv a1a2",
        "info depth 3 multipv 1 score cp pv a1a2",
        "info depth 3 multipv 0 score cp 3 pv a1a2",
        "info depth 3 score wdl 3 pv a1a2",
    ] {
        assert!(parse_info_line(bad).is_err(), "{bad}");
    }

    // Mates outrank material, shorter mates longer ones.
    let cp = |s: UciScore| s.centipawns();
    assert!(cp(UciScore::Mate(1)) > cp(UciScore::Mate(2)));
    assert!(cp(UciScore::Mate(30)) > cp(UciScore::Cp(5_000)));
    assert!(cp(UciScore::Mate(-1)) < cp(UciScore::Mate(-5)));
    assert!(cp(UciScore::Mate(-30)) < cp(UciScore::Cp(-5_000)));
    assert_eq!(cp(UciScore::Mate(0)), -MATE_CP);

    // The deepest report of each line is the one that counts.
    let l = |depth, multipv, cp, mv: &str| UciLine {
        depth,
        multipv,
        score: UciScore::Cp(cp),
        first_move: mv.into(),
    };
    assert_eq!(
        final_lines([
            l(1, 1, 10, "a"),
            l(1, 2, 5, "b"),
            l(2, 2, 30, "c"),
            l(2, 1, 20, "d")
        ]),
        [l(2, 1, 20, "d"), l(2, 2, 30, "c")]
    );
}

#[test]
fn the_documented_section_is_the_default() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/go.yaml");
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let section: BootstrapConfig = serde_yaml::from_value(doc["bootstrap"].clone()).unwrap();
    assert_eq!(section, BootstrapConfig::default());
}

#[test]
fn the_xiangqi_section_reads_and_validates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/xiangqi.yaml");
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let section: BootstrapConfig = serde_yaml::from_value(doc["bootstrap"].clone()).unwrap();
    section.validate().unwrap();
    assert_eq!((section.multipv, section.depth), (8, Some(8)));
}

#[test]
fn an_agent_teacher_gives_the_value_its_agent_explains() {
    use games::liuzhou::{Liuzhou, Rules};
    use players::alphabeta::liuzhou::{score_value, LiuzhouAlphaBeta, LiuzhouAlphaBetaAgent};
    use players::alphabeta::SearchLimits;

    // Black has a square to complete at d3: alpha-beta sees it, and its score is the value.
    let state = Liuzhou::from_lfen("6/6/2BB2/2B3/WWW3/6 b place 0 6 0", Rules::default()).unwrap();
    let limits = SearchLimits {
        depth: Some(3),
        ..SearchLimits::default()
    };
    let agent = LiuzhouAlphaBetaAgent::try_new(limits, 1).unwrap();
    let mut teacher = AgentTeacher::new(Box::new(agent) as Box<dyn Agent<Liuzhou>>);
    teacher.new_game(&state, 0).unwrap();
    let advice = teacher.advise(&state).unwrap();
    let score = LiuzhouAlphaBeta::new(1)
        .search(&state, limits, |_| {})
        .score;
    assert_eq!(advice.value, Some(score_value(score)));
    assert!(advice.value.unwrap() > 0.0, "{advice:?}");
    assert_eq!(advice.policy.len(), 1);

    // Random play explains nothing: the result alone will be the value target.
    let mut teacher = AgentTeacher::new(Box::new(RandomAgent::new(1)) as Box<dyn Agent<Liuzhou>>);
    teacher.new_game(&state, 0).unwrap();
    assert_eq!(teacher.advise(&state).unwrap().value, None);
}

/// Plays the first legal action and gives no value; logs each position it is asked about as
/// (its game's number, the actions before it, the player to act).
#[derive(Default)]
struct FirstLegal {
    game: usize,
    ply: u32,
    asked: Vec<(usize, u32, games::Player)>,
}

impl<G: Game> Teacher<G> for FirstLegal {
    fn name(&self) -> String {
        "first-legal".into()
    }
    fn new_game(&mut self, _start: &G, _seed: u64) -> Result<(), TeachError> {
        self.game += 1;
        self.ply = 0;
        Ok(())
    }
    fn advise(&mut self, state: &G) -> Result<Advice<G::Action>, TeachError> {
        self.asked.push((self.game, self.ply, state.to_act()));
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        Ok(Advice {
            policy: vec![(actions[0], 1.0)],
            value: None,
            decision: games::Decision::Play(actions[0]),
        })
    }
    fn observe(&mut self, _before: &G, _action: G::Action) -> Result<(), TeachError> {
        self.ply += 1;
        Ok(())
    }
}

/// Four Liuzhou games of [`FirstLegal`] (against `random:seed=2` when `against_random`) into
/// a fresh directory named `name`, removed afterwards: the run's result, the teacher's log and
/// the input planes of the samples written.
fn first_legal_run(
    config: &BootstrapConfig,
    against_random: bool,
    name: &str,
) -> (
    Result<BootstrapSummary, BootstrapError>,
    FirstLegal,
    Vec<Vec<f32>>,
) {
    use games::liuzhou::Liuzhou;

    let mut teacher = FirstLegal::default();
    let mut opponent: Option<Box<dyn Agent<Liuzhou>>> =
        against_random.then(|| Box::new(RandomAgent::new(2)) as Box<dyn Agent<Liuzhou>>);
    let out = out_dir(name);
    let opts = BootstrapOptions {
        out: &out,
        games: 4,
        seed: 5,
        teacher: "first-legal",
        opponent: against_random.then_some("random:seed=2"),
        progress: false,
    };
    let result = bootstrap(
        &Liuzhou::default(),
        &mut teacher,
        opponent.as_deref_mut(),
        config,
        &opts,
    );
    let planes = match &result {
        Ok(summary) => check_shards(&summary.shards, "liuzhou", "first-legal vs random", 4)
            .into_iter()
            .flat_map(|s| s.samples)
            .map(|s| s.planes)
            .collect(),
        Err(_) => Vec::new(),
    };
    let _ = std::fs::remove_dir_all(&out);
    (result, teacher, planes)
}

/// Asserts that `config` without an opponent is refused, `key` named, before any game.
fn refused_without_opponent(config: &BootstrapConfig, key: &str) {
    let (result, teacher, _) = first_legal_run(config, false, &format!("{key}-without-opponent"));
    match result {
        Err(BootstrapError::Config(e)) => assert_eq!(e.key, key),
        other => panic!("{other:?}"),
    }
    assert!(teacher.asked.is_empty());
}

#[test]
fn positions_outside_the_store_window_are_played_but_not_stored() {
    // The same four games (a deterministic teacher, a seeded opponent) stored from the start,
    // from action 20 on, and up to action 20.
    let run = |store_from_action: u32, store_until_action: u32, finish: Finish| {
        let config = BootstrapConfig {
            games_per_shard: 2,
            store_from_action,
            store_until_action,
            finish,
            ..BootstrapConfig::default()
        };
        let name = format!("store-{store_from_action}-{store_until_action}-{finish:?}");
        let (summary, teacher, samples) = first_legal_run(&config, true, &name);
        (summary.unwrap(), teacher.asked, samples)
    };
    let (all, all_asked, all_samples) = run(0, 0, Finish::Teacher);
    let (late, late_asked, late_samples) = run(20, 0, Finish::Teacher);
    let (early, early_asked, early_samples) = run(0, 20, Finish::Teacher);
    let (opp, opp_asked, opp_samples) = run(0, 20, Finish::Opponent);

    // Every Liuzhou game is longer than 20 actions: each loses exactly its first 20.
    assert_eq!(all.positions, all_asked.len() as u64);
    assert_eq!(late.positions, all.positions - 4 * 20);
    assert!(!late_samples.is_empty() && late_samples.len() < all_samples.len());
    assert!(late_samples.iter().all(|p| all_samples.contains(p)));
    // Up to action 20: exactly the first 20 of each game, the positions the other run left out.
    assert_eq!(early.positions, 4 * 20);
    assert!(!early_samples.is_empty() && early_samples.iter().all(|p| all_samples.contains(p)));
    assert!(early_samples.iter().all(|p| !late_samples.contains(p)));
    // Finished by the opponent: the same window, stored alike, and the teacher never asked
    // after it, where the teacher's own finish asks it on its turns to the end.
    assert_eq!(opp.positions, 4 * 20);
    assert_eq!(opp.games, 4);
    // Game 0 is the same game up to the window's end (later ones draw the opponent's dice
    // differently after it).
    assert_eq!(opp_samples[..10], early_samples[..10]);
    assert!(
        opp_asked.iter().all(|&(_, ply, _)| ply < 20),
        "{opp_asked:?}"
    );
    assert!(early_asked.iter().any(|&(_, ply, _)| ply >= 20));
    // Without an opponent there is nobody to finish: refused before any game.
    let config = BootstrapConfig {
        store_until_action: 20,
        finish: Finish::Opponent,
        ..BootstrapConfig::default()
    };
    refused_without_opponent(&config, "finish");
    // Before action 20 the teacher is asked only where it chooses: on its own side's turns
    // (and not during the random opening), where the run that stores everything asks on both.
    for game in 1..=4 {
        let early = |asked: &[(usize, u32, games::Player)]| -> Vec<games::Player> {
            asked
                .iter()
                .filter(|&&(g, ply, _)| g == game && ply < 20)
                .map(|a| a.2)
                .collect()
        };
        let (a, l) = (early(&all_asked), early(&late_asked));
        assert_eq!(a.len(), 20);
        assert!(a.contains(&games::Player::First) && a.contains(&games::Player::Second));
        assert!(
            !l.is_empty() && l.len() < 20 && l.iter().all(|&p| p == l[0]),
            "{l:?}"
        );
    }
}

#[test]
fn the_teacher_takes_the_side_it_is_given() {
    use games::Player;
    use teach::bootstrap::TeacherSide;

    // Before action 20 nothing is stored, so the teacher is asked only where it chooses: the
    // players to act there are its sides, game by game.
    let sides = |teacher_side: TeacherSide| -> Vec<Vec<Player>> {
        let config = BootstrapConfig {
            games_per_shard: 2,
            store_from_action: 20,
            teacher_side,
            ..BootstrapConfig::default()
        };
        let (result, teacher, _) =
            first_legal_run(&config, true, &format!("side-{teacher_side:?}"));
        result.unwrap();
        (1..=4)
            .map(|game| {
                let mut seen: Vec<Player> = teacher
                    .asked
                    .iter()
                    .filter(|&&(g, ply, _)| g == game && ply < 20)
                    .map(|a| a.2)
                    .collect();
                seen.dedup();
                seen
            })
            .collect()
    };
    let (first, second) = (vec![Player::First], vec![Player::Second]);
    assert_eq!(sides(TeacherSide::First), vec![first.clone(); 4]);
    assert_eq!(sides(TeacherSide::Second), vec![second.clone(); 4]);
    assert_eq!(
        sides(TeacherSide::Both),
        vec![first.clone(), second.clone(), first, second]
    );

    // Against itself the teacher plays both sides: a side asked for is refused, key named.
    let config = BootstrapConfig {
        teacher_side: TeacherSide::First,
        ..BootstrapConfig::default()
    };
    refused_without_opponent(&config, "teacher_side");
}
