//! The one self-play entry: a batch in this process writes its shards, a resumed batch plays
//! only the games its shards lack, and the Ray backend is reached through the same request.

use std::path::{Path, PathBuf};

use cluster::{Request, Selfplay};
use games::liuzhou::Liuzhou;
use selfplay::{RayConfig, SelfplayConfig};

fn tmpdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Liuzhou's built-in config, with searches small enough for a test.
fn config() -> (serde_yaml::Value, PathBuf, SelfplayConfig) {
    let (doc, path) = setup::config::read("liuzhou", None).unwrap();
    let sp = SelfplayConfig {
        parallel_games: 2,
        full_visits: 8,
        cheap_visits: 4,
        ..setup::config::selfplay(&doc, &path).unwrap()
    };
    (doc, path, sp)
}

fn request<'a>(
    start: &'a Liuzhou,
    (doc, path, sp): &'a (serde_yaml::Value, PathBuf, SelfplayConfig),
    out: &'a Path,
    games: usize,
    resume: bool,
) -> Request<'a, Liuzhou> {
    Request {
        start,
        model: "uniform",
        model_name: "runs/x/models/0003.onnx",
        doc,
        config_path: path,
        config: sp,
        overrides: Default::default(),
        games,
        out,
        tag: "i0003",
        seed: 7,
        resume,
        label: "test: self-play",
    }
}

/// Games and models recorded in `dir`'s shards.
fn shards_in(dir: &Path) -> (usize, Vec<String>) {
    let mut games = 0;
    let mut models = Vec::new();
    for path in shards::newest_first(dir).unwrap() {
        let (meta, _) = shards::ShardMeta::read(&path).unwrap();
        games += meta.games;
        models.push(meta.model);
    }
    (games, models)
}

#[test]
fn a_resumed_local_batch_plays_only_what_its_shards_lack() {
    let (start, setup) = (Liuzhou::default(), config());
    let out = tmpdir("resume");
    let mut local = Selfplay::Local;

    let played = local.run(&request(&start, &setup, &out, 2, true)).unwrap();
    assert_eq!(played.games, 2);
    assert!(played.written >= 1 && played.positions > 0, "{played:?}");
    assert!(played.line.starts_with("2 games, "), "{}", played.line);
    let (games, models) = shards_in(&out);
    assert_eq!(games, 2);
    assert!(models.iter().all(|m| m == "runs/x/models/0003.onnx"));

    // Nothing left: no game, no shard, no network loaded.
    let again = local.run(&request(&start, &setup, &out, 2, true)).unwrap();
    assert_eq!((again.games, again.written), (0, 0));
    assert!(again.line.is_empty());
    assert_eq!(shards_in(&out).0, 2);

    // One more game asked for: one played.
    let more = local.run(&request(&start, &setup, &out, 3, true)).unwrap();
    assert_eq!(more.games, 1);
    assert_eq!(shards_in(&out).0, 3);

    // Not resuming, the batch plays all its games whatever is there.
    let fresh = local.run(&request(&start, &setup, &out, 2, false)).unwrap();
    assert_eq!(fresh.games, 2);
    assert_eq!(shards_in(&out).0, 5);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_bad_shard_directory_fails_before_any_game() {
    let (start, setup) = (Liuzhou::default(), config());
    let dir = tmpdir("badout");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f.txt");
    std::fs::write(&file, "x").unwrap();
    for mut backend in [Selfplay::Local, Selfplay::on_ray(RayConfig::default())] {
        let e = backend
            .run(&request(&start, &setup, &file, 2, false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exists and is not a directory"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ray_backend_takes_the_same_request() {
    let (start, setup) = (Liuzhou::default(), config());
    let out = tmpdir("ray");
    let mut ray = Selfplay::on_ray(RayConfig {
        python: "/nonexistent/python3".into(),
        games_per_task: 1,
        ..RayConfig::default()
    });
    // The batch has tasks to play, so the backend starts its driver, which cannot start.
    let e = ray
        .run(&request(&start, &setup, &out, 2, false))
        .unwrap_err()
        .to_string();
    assert!(e.contains("selfplay.ray.python"), "{e}");
    // Resumed with every task's shard there, it plays nothing and needs no driver.
    let played = Selfplay::Local
        .run(&request(&start, &setup, &out, 1, false))
        .unwrap();
    assert_eq!(played.games, 1);
    let shard = shards::newest_first(&out).unwrap().remove(0);
    let task = out.join(cluster::ray::task_file(42, "i0003", 0));
    std::fs::rename(&shard, &task).unwrap();
    let none = ray.run(&request(&start, &setup, &out, 1, true)).unwrap();
    assert_eq!((none.games, none.written), (0, 0));
    assert!(task.exists());
    // A second task missing: the driver is needed again.
    let e = ray
        .run(&request(&start, &setup, &out, 2, true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("selfplay.ray.python"), "{e}");
    let _ = std::fs::remove_dir_all(&out);
}
