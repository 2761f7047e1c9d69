//! `engine train` with `selfplay.backend: ray` on a local two-node Ray cluster: a worker killed
//! during self-play and `engine train` itself killed and started again, and the shards still
//! hold exactly the games asked for, none twice.
//!
//! Ray listens on every interface, so the test runs itself again inside a network namespace
//! (and a PID namespace, which ends every process of the cluster with it) where loopback is the
//! only interface: `unshare --net --pid --fork --mount-proc`, as root. Where Ray or the
//! namespaces cannot be had it says why and passes, unless `ENGINE_REQUIRE_RAY` is set (CI).

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const INSIDE: &str = "ENGINE_RAY_TEST_INSIDE";
const TEST: &str = "train_on_ray_loses_and_duplicates_nothing";
const TASKS: usize = 8;
const GAMES_PER_TASK: usize = 1;

#[test]
fn train_on_ray_loses_and_duplicates_nothing() {
    if std::env::var_os(INSIDE).is_some() {
        inside();
        return;
    }
    if let Err(why) = ready() {
        assert!(
            std::env::var_os("ENGINE_REQUIRE_RAY").is_none(),
            "ENGINE_REQUIRE_RAY is set but {why}"
        );
        eprintln!("skipping the Ray cluster test: {why}");
        return;
    }
    let began = Instant::now();
    let out = Command::new("unshare")
        .args(["--net", "--pid", "--fork", "--mount-proc"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(INSIDE, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inside the namespace:\n{text}");
    assert!(text.contains("1 passed"), "{text}");
    for line in text.lines().filter(|l| l.contains("killed")) {
        eprintln!("{line}");
    }
    eprintln!(
        "the Ray cluster test took {:.0} s",
        began.elapsed().as_secs_f64()
    );
}

/// What cannot work is refused at once, with exit code 2 and the reason, before any cluster is
/// looked for: counts that disagree, a model that cannot be sent.
#[test]
fn bad_ray_settings_are_refused_before_the_cluster_is_contacted() {
    let dir = std::env::temp_dir().join(format!("engine-ray-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("c.yaml");
    std::fs::write(
        &config,
        format!(
            "selfplay: {{backend: ray, ray: {{tasks_per_iteration: 3, games_per_task: 5}}}}\n\
             train: {{run_dir: {}, games_per_iteration: 16}}\n",
            dir.join("run").display()
        ),
    )
    .unwrap();
    let out = Command::new(engine())
        .args(["train", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    testkit::refused(
        &out,
        &["= 15 games an iteration, but train.games_per_iteration is 16"],
    );
    assert!(!dir.join("run").exists());
    let out = Command::new(engine())
        .args([
            "selfplay",
            "--model",
            "uniform",
            "--ray",
            "127.0.0.1:1",
            "--out",
        ])
        .arg(dir.join("shards"))
        .output()
        .unwrap();
    testkit::refused(&out, &["--ray: --model must be an ONNX file"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ray importable, the namespaces available, trainer-bridge built.
fn ready() -> Result<(), String> {
    let ok = |c: &mut Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(Command::new("python3").args(["-c", "import ray"])) {
        return Err(
            "python3 cannot import ray (python3 -m pip install -r cluster/requirements.txt)".into(),
        );
    }
    if !ok(Command::new("unshare").args([
        "--net",
        "--pid",
        "--fork",
        "--mount-proc",
        "ip",
        "link",
        "set",
        "lo",
        "up",
    ])) {
        return Err("cannot make a network namespace (`unshare --net` and `ip`, as root)".into());
    }
    if !trainer().is_file() {
        return Err(format!(
            "{} missing: run `cargo test --workspace`",
            trainer().display()
        ));
    }
    Ok(())
}

fn engine() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_engine"))
}

fn trainer() -> PathBuf {
    engine().with_file_name("trainer-bridge")
}

fn inside() {
    run(Command::new("ip").args(["link", "set", "lo", "up"]));
    let dir = std::env::temp_dir().join(format!("engine-ray-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    start_cluster(&dir);
    let config = dir.join("ray.yaml");
    std::fs::write(
        &config,
        format!(
            "game: {{lose_below: 1}}\ninference: {{batch_size: 16, intra_threads: 1}}\n\
             network: {{blocks: 1, channels: 8, value_hidden: 8}}\n\
             selfplay: {{parallel_games: 2, full_visits: 8, cheap_visits: 2, backend: ray, \
             ray: {{address: '127.0.0.1:6379', tasks_per_iteration: {TASKS}, \
             games_per_task: {GAMES_PER_TASK}, cpus_per_task: 1, max_retries: 3}}}}\n\
             fit: {{steps: 3, batch_size: 16}}\n\
             train: {{run_dir: {}, iterations: 2, games_per_iteration: {}, gate_games: 2, \
             gate_visits: 4, eval_games: 2, eval_visits: 4, eval_mcts_playouts: 8, \
             ladder_opponents: [], match_parallel: 1}}\n",
            dir.join("run").display(),
            TASKS * GAMES_PER_TASK
        ),
    )
    .unwrap();
    let shards = dir.join("run/shards");
    let log = dir.join("train.log");

    // First run: a worker is killed while it plays a task of iteration 0, and the driver once
    // iteration 1 has written its first shard: the run ends with a clear error.
    let mut train = start_train(&config, &log);
    let worker = wait_for(&mut train, &log, "a self-play task of iteration 0", || {
        task_worker()
    });
    run(Command::new("kill").args(["-9", &worker.to_string()]));
    println!("killed worker {worker} during a task");
    wait_for(&mut train, &log, "a shard of iteration 1", || {
        (!task_shards(&shards, 1).is_empty()).then_some(())
    });
    let driver = find_process(|args| args.len() > 3 && args[3].contains("engine selfplay --ray"))
        .expect("the driver runs");
    run(Command::new("kill").args(["-9", &driver.to_string()]));
    let status = train.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "{text}");
    assert!(
        text.contains("the Ray driver ended during self-play")
            && text.contains("Run the command again to continue"),
        "{text}"
    );
    let lost = task_shards(&shards, 1).len();
    println!("killed the driver with {lost} of {TASKS} shards of iteration 1");

    // Second run: continues, and is killed itself once it has added a shard.
    let mut train = start_train(&config, &log);
    wait_for(&mut train, &log, "another shard of iteration 1", || {
        (task_shards(&shards, 1).len() > lost).then_some(())
    });
    train.kill().unwrap();
    train.wait().unwrap();
    let before = task_shards(&shards, 1);
    assert!(
        before.len() < TASKS,
        "iteration 1 finished before the kill: {before:?}"
    );
    let digests_before: BTreeMap<String, u64> =
        before.iter().map(|p| (name(p), digest(p))).collect();
    println!(
        "killed engine train with {} of {TASKS} shards of iteration 1",
        before.len()
    );

    // Third run: continues from state.yaml to the end.
    let mut train = start_train(&config, &log);
    let status = train.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    assert!(text.contains("2 nodes"), "{text}");
    let state = std::fs::read_to_string(dir.join("run/state.yaml")).unwrap();
    assert!(state.starts_with("iterations: 2"), "{state}");

    // Exactly the games asked for: every task's shard once, each of its games, and no two
    // shards alike; the shards written before the kill were kept, not written again.
    let mut seen = HashSet::new();
    for i in 0..2 {
        let files = task_shards(&shards, i);
        let names: Vec<String> = files.iter().map(|p| name(p)).collect();
        assert_eq!(files.len(), TASKS, "iteration {i}: {names:?}");
        for k in 0..TASKS {
            assert!(
                names
                    .iter()
                    .any(|n| n.ends_with(&format!("-i{i:04}-t{k:04}.safetensors"))),
                "{names:?}"
            );
        }
        let mut games = 0;
        for p in &files {
            let shard = shards::Shard::read(p).unwrap();
            assert_eq!(shard.meta.games, GAMES_PER_TASK, "{}", p.display());
            // Iteration 0 plays model 0000; iteration 1 the best after it, 0000 or 0001.
            let model = &shard.meta.model;
            assert!(
                model.ends_with("0000.onnx") || (i == 1 && model.ends_with("0001.onnx")),
                "{model}"
            );
            games += shard.meta.games;
            assert!(
                seen.insert(digest(p)),
                "{} duplicates another shard",
                p.display()
            );
        }
        assert_eq!(games, TASKS * GAMES_PER_TASK);
    }
    for (n, d) in &digests_before {
        assert_eq!(digest(&shards.join(n)), *d, "{n} was written again");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn run(c: &mut Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A head and a second node on 127.0.0.1, one CPU each, their files under `dir`.
fn start_cluster(dir: &Path) {
    let ray = |args: &[&str]| {
        let mut c = Command::new("python3");
        c.args(["-m", "ray.scripts.scripts", "start"])
            .args(args)
            .args([
                "--node-ip-address=127.0.0.1",
                "--num-cpus=1",
                "--disable-usage-stats",
            ])
            // The workers' temporary files (the shipped engine among them) stay in `dir`.
            .env("TMPDIR", dir.join("tmp"))
            .env("RAY_USAGE_STATS_ENABLED", "0");
        run(&mut c);
    };
    let temp = format!("--temp-dir={}", dir.join("ray").display());
    ray(&["--head", "--port=6379", "--include-dashboard=false", &temp]);
    ray(&["--address=127.0.0.1:6379"]);
}

fn start_train(config: &Path, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(engine())
        .args(["train", "--config"])
        .arg(config)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Polls `found` until it gives a value; fails if `train` ends first or five minutes pass (a
/// loaded 2-core machine has taken over two minutes to start the first task).
fn wait_for<T>(
    train: &mut Child,
    log: &Path,
    what: &str,
    mut found: impl FnMut() -> Option<T>,
) -> T {
    let began = Instant::now();
    loop {
        if let Some(v) = found() {
            return v;
        }
        let text = || std::fs::read_to_string(log).unwrap_or_default();
        if let Some(status) = train.try_wait().unwrap() {
            panic!("engine train ended ({status}) before {what}:\n{}", text());
        }
        assert!(
            began.elapsed() < Duration::from_secs(300),
            "no {what} in 5 minutes:\n{}",
            text()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The Ray worker (the parent process) of a running `engine selfplay` task.
fn task_worker() -> Option<u32> {
    let engine =
        find_process(|args| args.get(1) == Some(&"selfplay") && args.contains(&"--model-name"))?;
    let stat = std::fs::read_to_string(format!("/proc/{engine}/stat")).ok()?;
    // `pid (comm) state ppid …`: the command name may hold spaces, not a `)`.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A process of this namespace whose arguments `matches` accepts.
fn find_process(matches: impl Fn(&[&str]) -> bool) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()? {
        let Ok(pid) = entry.ok()?.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        let args: Vec<&str> = cmdline.split('\0').collect();
        if matches(&args) {
            return Some(pid);
        }
    }
    None
}

/// Iteration `i`'s task shards, by name.
fn task_shards(dir: &Path, i: u32) -> Vec<PathBuf> {
    let needle = format!("-i{i:04}-t");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = name(p);
                    n.contains(&needle) && n.ends_with(".safetensors") && !n.starts_with('.')
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// A hash of a shard's positions, policies and values, in order.
fn digest(p: &Path) -> u64 {
    let shard = shards::Shard::read(p).unwrap_or_else(|e| panic!("{e}"));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for s in &shard.samples {
        for x in &s.planes {
            x.to_bits().hash(&mut h);
        }
        for (i, q) in &s.policy {
            (i, q.to_bits()).hash(&mut h);
        }
        s.value.to_bits().hash(&mut h);
    }
    h.finish()
}
