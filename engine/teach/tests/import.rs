//! Importing SGF files into shards: what the report says, what the shards hold (read back with
//! `Shard::read`), how bad files and games are reported or stop a strict run, and that a second
//! import of the same files replaces the first one's shards.

use std::path::{Path, PathBuf};

use games::go::sgf::read_records;
use games::go::{GoRules, GoState};
use games::{Encoding, Game, GameRecord, Outcome};
use shards::Shard;
use teach::{
    import, import_files, import_stem, record_samples, ImportError, ImportOptions, ShardWriter,
};

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("teach-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn network() -> GoState {
    GoState::new(GoRules::default()).unwrap()
}

fn read_go(text: &str) -> Vec<Result<GameRecord<GoState>, games::RecordError>> {
    read_records(text, &GoRules::default())
}

/// Runs an import of `paths` and returns its result and report.
fn run(
    paths: &[PathBuf],
    opts: &ImportOptions,
) -> (Result<teach::ImportSummary, ImportError>, String) {
    let mut out = Vec::new();
    let result = import_files(paths, read_go, &network(), opts, &mut out);
    (result, String::from_utf8(out).unwrap())
}

fn shard_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Policy index (row · 9 + col, 81 for pass) and value of every sample, shard by shard.
fn targets(paths: &[PathBuf]) -> Vec<Vec<(u16, f32)>> {
    paths
        .iter()
        .map(|p| {
            let shard = Shard::read(p).unwrap();
            assert_eq!(shard.meta.game, "go");
            assert_eq!((shard.meta.height, shard.meta.width), (9, 9));
            assert_eq!(shard.meta.policy_size, 82);
            assert_eq!(shard.meta.model, "records");
            assert_eq!(shard.symmetries.len(), 8);
            shard
                .samples
                .iter()
                .map(|s| {
                    assert_eq!(s.policy.len(), 1, "one-hot");
                    assert_eq!(s.policy[0].1, 1.0, "one-hot");
                    (s.policy[0].0, s.value)
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_directory_of_records_becomes_shards() {
    let out = tmpdir("ok");
    let crlf = std::fs::read(data("ok/ff3_crlf.sgf")).unwrap();
    assert!(
        crlf.windows(2).any(|w| w == b"\r\n"),
        "the CRLF file keeps its line ends"
    );
    let mut opts = ImportOptions::new(&out, "sgf");
    opts.positions_per_shard = 4;
    opts.list = true;
    opts.config = "rules: {size: 9}\n".into();
    let (summary, report) = run(&[data("ok")], &opts);
    let summary = summary.unwrap();

    let dir = data("ok").display().to_string();
    let lines: Vec<&str> = report.lines().collect();
    let expected = [
        format!("{dir}/collection.sgf#1 moves=4 result=B+R final=9/9/2O3O2/9/4X4/9/6X2/9/9 b 0 - 4"),
        format!("{dir}/collection.sgf#2 moves=3 result=W+3.5 final=9/9/2O3X2/9/4O4/9/2X6/9/9 b 0 - 3"),
        format!("{dir}/collection.sgf#3 moves=2 result=Void final=9/9/2O6/9/4X4/9/9/9/9 b 0 - 2"),
        format!("{dir}/collection.sgf#4 moves=1 result=? final=9/9/9/9/4X4/9/9/9/9 w 0 - 1"),
        format!("{dir}/collection.sgf#5 moves=1 result=? final=9/9/9/9/4X4/9/9/9/9 w 0 - 1"),
        format!("{dir}/ff3_crlf.sgf#1 moves=2 result=0 final=9/9/3O5/9/4X4/9/9/9/9 b 0 - 2"),
        format!("{dir}/ff3_crlf.sgf#2 moves=1 result=W+F final=O8/1X7/9/9/9/9/9/9/9 w 0 - 1"),
        format!("{dir}/nested/big.SGF#1 moves=2 result=B+T final=19/19/19/15X3/19/19/19/19/19/19/19/19/19/19/19/3O15/19/19/19 b 0 - 2"),
        format!("{dir}/nested/big.SGF#1: skipped: its board is 19x19, the network's is 9x9"),
        format!("{dir}/small.sgf#1 moves=2 result=W+F final=5/1O3/2X2/5/5 b 0 - 2"),
        format!("{dir}/small.sgf#1: skipped: its board is 5x5, the network's is 9x9"),
        format!("wrote 3 shards to {}", out.display()),
        "imported 4 games, 10 positions; skipped 5 games (3 without a result, 2 of another board size)".to_string(),
    ];
    assert_eq!(lines, expected, "{report}");

    assert_eq!(summary.files, 4);
    assert_eq!(
        (summary.games, summary.positions, summary.skipped()),
        (4, 10, 5)
    );
    assert_eq!((summary.no_result, summary.other_shape), (3, 2));
    assert_eq!((summary.bad_games, summary.bad_files), (0, 0));
    assert_eq!(summary.shards, shard_files(&out));

    // E5 = 40, C7 = 56, G3 = 24, G7 = 60, pass = 81, D7 = 57, B8 = 64.
    assert_eq!(
        targets(&summary.shards),
        vec![
            // B+R: Black's moves +1, White's −1 (the variation W[gg] is not the main line).
            vec![(40, 1.0), (56, -1.0), (24, 1.0), (60, -1.0)],
            // Handicap: White moves first; W+3.5. Then the draw's first move.
            vec![(40, 1.0), (81, -1.0), (56, 1.0), (40, 0.0)],
            // The draw's second move; W+F with Black to move.
            vec![(57, 0.0), (64, -1.0)],
        ]
    );
    let games: Vec<usize> = summary
        .shards
        .iter()
        .map(|p| Shard::read(p).unwrap().meta.games)
        .collect();
    assert_eq!(
        games,
        vec![1, 1, 2],
        "games by the shard that holds their last position"
    );
    let meta = Shard::read(&summary.shards[0]).unwrap().meta;
    assert_eq!(meta.config, "rules: {size: 9}\n");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn planes_are_the_positions_encoded_for_their_mover() {
    let records = read_go("(;GM[1]SZ[9]HA[2]AB[cg][gc]RE[W+3.5];W[ee];B[];W[cc])");
    let record = records[0].as_ref().unwrap();
    let samples = record_samples(record).unwrap();
    assert_eq!(samples.len(), 3);
    for (sample, (state, action)) in samples.iter().zip(record.positions()) {
        let mut planes = vec![0.0; state.shape().input_len()];
        state.encode(&mut planes);
        assert_eq!(sample.planes, planes);
        assert_eq!(
            sample.policy,
            vec![(state.action_index(action) as u16, 1.0)]
        );
        assert_eq!(
            sample.value,
            Outcome::Win(games::Player::Second).value_for(state.to_act())
        );
    }
    let records = read_go("(;GM[1]SZ[9]RE[Void];B[ee])");
    assert!(record_samples(records[0].as_ref().unwrap()).is_none());
}

#[test]
fn importing_the_same_files_again_replaces_their_shards() {
    let out = tmpdir("again");
    let mut opts = ImportOptions::new(&out, "sgf");
    opts.positions_per_shard = 2;
    let (first, _) = run(&[data("ok")], &opts);
    let first = first.unwrap();
    assert_eq!(first.shards.len(), 5);
    // The same files by another path, the directory and one of its files named twice.
    let again_paths = [data("ok/../ok"), data("ok").join("collection.sgf")];
    let (again, _) = run(&again_paths, &opts);
    let again = again.unwrap();
    assert_eq!(again.files, 4, "each file once");
    assert_eq!(again.shards, first.shards);
    assert_eq!(shard_files(&out), first.shards);
    // Fewer, larger shards: the earlier run's extra ones go.
    opts.positions_per_shard = 100;
    let (bigger, _) = run(&[data("ok")], &opts);
    let bigger = bigger.unwrap();
    assert_eq!(bigger.shards.len(), 1);
    assert_eq!(shard_files(&out), bigger.shards);
    assert_eq!(Shard::read(&bigger.shards[0]).unwrap().samples.len(), 10);
    // Names: the stem of the files, numbered; they sort before time-stamped self-play names.
    let name = bigger.shards[0].file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("0000000000000-import-"), "{name}");
    assert!(name.ends_with("-0000.safetensors"), "{name}");
    assert!(name < "1700000000000-g0001-0000.safetensors");
    // Other files get other names.
    let (other, _) = run(&[data("ok/small.sgf"), data("ok/ff3_crlf.sgf")], &opts);
    assert_ne!(other.unwrap().shards, bigger.shards);
    assert_eq!(shard_files(&out).len(), 2);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_games_and_files_are_reported_and_skipped() {
    let out = tmpdir("bad");
    let opts = ImportOptions::new(&out, "sgf");
    let (summary, report) = run(&[data("bad")], &opts);
    let summary = summary.unwrap();
    let dir = data("bad").display().to_string();
    let lines: Vec<&str> = report.lines().collect();
    let expected = [
        format!("{dir}/illegal.sgf: game 1, move 3: illegal move B D6: point occupied"),
        format!("{dir}/latin1.sgf: not UTF-8 text (first bad byte at offset 18)"),
        format!(
            "{dir}/offboard.sgf: game 1, move 2: SGF, byte 26: point \"zz\" is off the 9x9 board"
        ),
        format!("{dir}/syntax.sgf: game 2, move 3: SGF, byte 58: unexpected ']'"),
        format!("{dir}/truncated.sgf: game 1, move 3: SGF, byte 33: unterminated property value"),
        format!("wrote 1 shards to {}", out.display()),
        "imported 2 games, 2 positions; skipped 4 games (4 unreadable); 1 files unreadable"
            .to_string(),
    ];
    assert_eq!(lines, expected, "{report}");
    assert_eq!(
        (summary.files, summary.bad_files, summary.bad_games),
        (5, 1, 4)
    );
    // illegal.sgf's second game (W+R, Black's move) and syntax.sgf's first (B+R).
    assert_eq!(targets(&summary.shards), vec![vec![(72, -1.0), (40, 1.0)]]);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn strict_stops_at_the_first_bad_game_and_writes_nothing() {
    let out = tmpdir("strict");
    let mut opts = ImportOptions::new(&out, "sgf");
    opts.strict = true;
    let (result, report) = run(&[data("ok"), data("bad")], &opts);
    match result {
        Err(ImportError::BadGame { path, error }) => {
            assert_eq!(path, data("bad").join("illegal.sgf"));
            assert_eq!((error.game, error.move_number), (1, Some(3)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(report, "");
    assert!(shard_files(&out).is_empty());

    for (file, game, move_number) in [
        ("offboard.sgf", 1, Some(2)),
        ("syntax.sgf", 2, Some(3)),
        ("truncated.sgf", 1, Some(3)),
    ] {
        let (result, _) = run(&[data("bad").join(file)], &opts);
        match result {
            Err(ImportError::BadGame { error, .. }) => {
                assert_eq!(
                    (error.game, error.move_number),
                    (game, move_number),
                    "{file}"
                );
            }
            other => panic!("{file}: {other:?}"),
        }
    }
    let (result, _) = run(&[data("bad/latin1.sgf")], &opts);
    let e = result.unwrap_err();
    assert!(matches!(e, ImportError::NotUtf8 { offset: 18, .. }), "{e}");
    assert!(e
        .to_string()
        .ends_with("latin1.sgf: not UTF-8 text (first bad byte at offset 18)"));
    assert!(shard_files(&out).is_empty());
}

#[test]
fn paths_and_options_that_cannot_work_are_errors() {
    let out = tmpdir("paths");
    let opts = ImportOptions::new(&out, "sgf");
    let (result, _) = run(&[data("missing.sgf")], &opts);
    assert!(matches!(result, Err(ImportError::Io { .. })), "{result:?}");
    let (result, _) = run(&[data("ok/nested")], &ImportOptions::new(&out, "pgn"));
    assert!(
        matches!(result, Err(ImportError::NoFiles { .. })),
        "{result:?}"
    );
    let mut zero = ImportOptions::new(&out, "sgf");
    zero.positions_per_shard = 0;
    let (result, _) = run(&[data("ok")], &zero);
    assert!(matches!(result, Err(ImportError::Options(_))), "{result:?}");
    // The output is a file.
    let file_out = ImportOptions::new(data("ok/small.sgf"), "sgf");
    let (result, _) = run(&[data("ok")], &file_out);
    assert!(matches!(result, Err(ImportError::Io { .. })), "{result:?}");
    // A file named directly is read whatever its name.
    let (result, report) = run(&[data("ok/notes.txt")], &opts);
    assert_eq!(result.unwrap().bad_games, 1, "{report}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn records_in_memory_import_under_their_source_name() {
    let out = tmpdir("memory");
    let mut opts = ImportOptions::new(&out, "sgf");
    opts.list = true;
    let records = read_go("(;GM[1]SZ[9]RE[B+R];B[ee];W[cc])(;GM[1]SZ[9];B[ee];W[ee])");
    let mut report = Vec::new();
    let summary = import(records, "upload", &network(), &opts, &mut report).unwrap();
    let report = String::from_utf8(report).unwrap();
    assert!(
        report.starts_with("upload#1 moves=2 result=B+R final="),
        "{report}"
    );
    assert!(
        report.contains("upload: game 2, move 2: illegal move W E5"),
        "{report}"
    );
    assert_eq!(
        (summary.games, summary.positions, summary.bad_games),
        (1, 2, 1)
    );
    let name = summary.shards[0].file_name().unwrap().to_str().unwrap();
    assert_eq!(
        name,
        ShardWriter::shard_name(&import_stem(&["upload".into()]), 0)
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_writer_splits_games_across_shards_and_counts_each_once() {
    let out = tmpdir("writer");
    let state = network();
    let mut writer = ShardWriter::new(&state, &out, "w", "m", "", 3).unwrap();
    let sample = |v: f32| {
        let mut planes = vec![0.0; state.shape().input_len()];
        state.encode(&mut planes);
        shards::Sample {
            planes,
            policy: vec![(81, 1.0)],
            value: v,
            aux: Default::default(),
        }
    };
    for n in [2, 5, 1, 0] {
        writer
            .add_game((0..n).map(|_| sample(1.0)).collect())
            .unwrap();
    }
    assert_eq!(writer.positions(), 8);
    let paths = writer.finish().unwrap();
    let counts: Vec<(usize, usize)> = paths
        .iter()
        .map(|p| {
            let s = Shard::read(p).unwrap();
            (s.samples.len(), s.meta.games)
        })
        .collect();
    assert_eq!(counts, vec![(3, 1), (3, 0), (2, 3)]);
    std::fs::remove_dir_all(&out).unwrap();
}
