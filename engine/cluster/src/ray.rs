//! Self-play on a Ray cluster. The engine starts the Python driver (`cluster/ray_driver.py`,
//! compiled in) as a child process and speaks to it in JSON lines (`docs/cluster.md`): it
//! connects once, then plays batches of tasks, each task one `engine selfplay` run on a worker
//! that becomes one shard, named here and written by the driver.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use games::Game;
use infer::Precision;
use selfplay::RayConfig;
use serde::{Deserialize, Serialize};

use crate::Played;

/// The driver's source, run with `python -u -c`, so the engine needs no file of the checkout.
pub const DRIVER_SOURCE: &str = include_str!("../../../cluster/ray_driver.py");

/// The protocol version both sides speak.
const PROTOCOL: u32 = 1;

/// Why self-play on the cluster stopped.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "selfplay.ray.python: cannot start {python:?} for the Ray driver: {error} (install Ray \
         with `python3 -m pip install -r cluster/requirements.txt`, or name that Python)"
    )]
    Start {
        python: String,
        error: std::io::Error,
    },
    #[error("the Ray driver: {0}")]
    Driver(String),
    #[error(
        "the Ray driver ended {when} ({status}): the cluster or the driver was lost; what it \
         printed is above. Run the command again to continue: finished shards are kept"
    )]
    Ended { when: String, status: String },
    #[error("the Ray driver said {line:?}, which is not an event of protocol {PROTOCOL}")]
    Protocol { line: String },
    #[error("the Ray driver speaks protocol {0}, this engine {PROTOCOL}")]
    Version(u32),
    #[error("talking to the Ray driver: {0}")]
    Io(#[from] std::io::Error),
}

/// A request to the driver, one JSON object a line.
#[derive(Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Request<'a> {
    Connect {
        address: &'a str,
        engine: &'a Path,
        ship: bool,
    },
    Selfplay {
        game: &'a str,
        model: &'a Path,
        model_name: &'a str,
        config: &'a str,
        out_dir: &'a Path,
        cpus_per_task: u32,
        max_retries: u32,
        tasks: &'a [Task],
    },
    Quit,
}

/// What the driver reports, one JSON object a line.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    Connected {
        protocol: u32,
        ray_version: String,
        nodes: usize,
        cpus: f64,
    },
    /// A task's shard was written.
    Shard {
        task: usize,
        file: String,
        games: usize,
        positions: u64,
    },
    /// A task's shard was already there: not played (or not written) again.
    Skipped {
        task: usize,
        file: String,
    },
    /// A task returned a shard of another model or game: dropped, and the task played again.
    Stale {
        task: usize,
        reason: String,
    },
    Done {
        positions: u64,
        seconds: f64,
    },
    Error {
        message: String,
    },
}

/// One self-play task: `games` games with `seed`, written as `file` in the batch's directory.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Task {
    pub task: usize,
    pub games: usize,
    pub seed: u64,
    pub file: String,
}

/// One batch of tasks against one model.
pub struct Batch<'a> {
    pub game: &'a str,
    /// The model file on this machine; it travels through the object store.
    pub model: &'a Path,
    /// The model as the shards record it (their metadata key `model`).
    pub model_name: &'a str,
    /// The config every task's `engine selfplay` reads (see [`task_config`]).
    pub config: &'a str,
    pub out_dir: &'a Path,
    pub tasks: &'a [Task],
}

/// The Ray backend: its settings, and the driver once the first batch has started it.
pub struct OnRay {
    ray: RayConfig,
    driver: Option<RayDriver>,
}

impl OnRay {
    /// The cluster `ray` names.
    pub fn new(ray: RayConfig) -> OnRay {
        OnRay { ray, driver: None }
    }

    /// Plays `request`'s tasks whose shards are missing (all of them unless it resumes),
    /// starting the driver if it is not running.
    pub(crate) fn run<G: Game>(
        &mut self,
        request: &crate::Request<'_, G>,
    ) -> anyhow::Result<Played> {
        let out = request.out;
        let stamp = if request.resume {
            batch_stamp(out, request.tag)?
        } else {
            now_stamp()
        };
        let ray = &self.ray;
        let seed = request.seed;
        let mut tasks = plan(request.games, ray.games_per_task, request.tag, stamp, seed);
        if request.resume {
            keep_current(out, &tasks, G::NAME, request.model_name)?;
            tasks.retain(|t| !out.join(&t.file).exists());
        }
        if tasks.is_empty() {
            return Ok(Played::default());
        }
        let driver = match &mut self.driver {
            Some(d) => d,
            None => self
                .driver
                .insert(RayDriver::start(ray, &std::env::current_exe()?)?),
        };
        let (model, doc) = task_inputs(
            request.doc,
            request.config.full_visits,
            Path::new(request.model),
            request.overrides.precision,
        );
        let config = task_config(&doc, ray);
        let batch = Batch {
            game: G::NAME,
            model: &model,
            model_name: request.model_name,
            config: &config,
            out_dir: out,
            tasks: &tasks,
        };
        let mut played = play(driver, &batch, request.label)?;
        played.line = format!(
            "{} games, {} positions ({:.1}/s), {} shards, on Ray at {} in {} tasks",
            played.games,
            played.positions,
            played.positions_per_second(),
            played.written,
            ray.address,
            tasks.len()
        );
        Ok(played)
    }
}

/// Plays `batch` on the cluster with a progress bar of its games; `label` names it in the log.
fn play(driver: &mut RayDriver, batch: &Batch<'_>, label: &str) -> anyhow::Result<Played> {
    let games: usize = batch.tasks.iter().map(|t| t.games).sum();
    let bar = progress::Progress::new(games as u64, format!("{label} on Ray"), "games");
    let began = Instant::now();
    let mut positions = 0;
    let played = driver.selfplay(batch, |e| {
        if let Event::Shard {
            games,
            positions: p,
            ..
        } = e
        {
            positions += p;
            let rate = positions as f64 / began.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!("{rate:.0} positions/s"));
            bar.inc(*games as u64);
        }
    })?;
    bar.finish();
    tracing::info!(
        "{label} on Ray: {} tasks, {} games, {} positions ({:.1}/s) in {:.1} s; {} shards \
         already there",
        played.written,
        played.games,
        played.positions,
        played.positions_per_second(),
        played.seconds,
        played.skipped
    );
    Ok(played)
}

/// Sets `section.key` of a config document to `value`, making the section where it lacks one.
fn set_key(doc: &mut serde_yaml::Value, section: &str, key: &str, value: serde_yaml::Value) {
    if !doc[section].is_mapping() {
        doc[section] = serde_yaml::Value::Mapping(Default::default());
    }
    doc[section][key] = value;
}

/// What a batch's workers get: the model file and the config they read, with the batch's
/// `full_visits` (an iteration's, by `train.visit_schedule`) and the request's precision. A
/// worker gets one model file, so where the precision comes to int8 here (int8, or auto with
/// the int8 file beside the model) that file is the int8 model itself, loaded as given.
fn task_inputs(
    doc: &serde_yaml::Value,
    full_visits: u32,
    model: &Path,
    precision: Option<Precision>,
) -> (PathBuf, serde_yaml::Value) {
    let mut doc = doc.clone();
    set_key(
        &mut doc,
        "selfplay",
        "full_visits",
        u64::from(full_visits).into(),
    );
    let int8 = infer::precision::int8_path(model);
    let (model, precision) = match precision {
        Some(Precision::Int8 | Precision::Auto) if int8.is_file() => (int8, Some(Precision::Fp32)),
        // Auto without the file plays fp32 here, and so it does there.
        Some(Precision::Auto) => (model.to_owned(), Some(Precision::Fp32)),
        p => (model.to_owned(), p),
    };
    if let Some(p) = precision {
        set_key(&mut doc, "inference", "precision", p.as_str().into());
    }
    (model, doc)
}

/// The driver process, connected to a cluster.
pub struct RayDriver {
    child: Child,
    stdin: ChildStdin,
    events: BufReader<ChildStdout>,
    ray: RayConfig,
}

impl RayDriver {
    /// Starts the driver and connects it to `ray.address`; `engine` is the binary the workers
    /// run (shipped to them unless `ray.engine` names a path on every node).
    pub fn start(ray: &RayConfig, engine: &Path) -> Result<RayDriver, ClusterError> {
        let mut command = Command::new(&ray.python);
        command
            .args(["-u", "-c", DRIVER_SOURCE])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Ray would report usage to its makers: not from here.
            .env("RAY_USAGE_STATS_ENABLED", "0");
        crate::child::die_with_this_thread(&mut command);
        let mut child = command.spawn().map_err(|error| ClusterError::Start {
            python: ray.python.clone(),
            error,
        })?;
        let stdin = child.stdin.take().expect("piped");
        let events = BufReader::new(child.stdout.take().expect("piped"));
        let mut driver = RayDriver {
            child,
            stdin,
            events,
            ray: ray.clone(),
        };
        let ship = ray.engine == selfplay::SHIP;
        let engine = if ship {
            engine.to_owned()
        } else {
            PathBuf::from(&ray.engine)
        };
        driver.send(&Request::Connect {
            address: &ray.address,
            engine: &engine,
            ship,
        })?;
        match driver.next_event("connecting to the cluster")? {
            Event::Connected {
                protocol,
                ray_version,
                nodes,
                cpus,
            } => {
                if protocol != PROTOCOL {
                    return Err(ClusterError::Version(protocol));
                }
                tracing::info!(
                    "Ray {ray_version} at {}: {nodes} nodes, {cpus} CPUs",
                    ray.address
                );
            }
            other => return Err(unexpected(other)),
        }
        Ok(driver)
    }

    /// Plays `batch` on the cluster; `on_event` sees each event as it comes.
    pub fn selfplay(
        &mut self,
        batch: &Batch<'_>,
        mut on_event: impl FnMut(&Event),
    ) -> Result<Played, ClusterError> {
        let began = Instant::now();
        self.send(&Request::Selfplay {
            game: batch.game,
            model: batch.model,
            model_name: batch.model_name,
            config: batch.config,
            out_dir: batch.out_dir,
            cpus_per_task: self.ray.cpus_per_task,
            max_retries: self.ray.max_retries,
            tasks: batch.tasks,
        })?;
        let mut played = Played::default();
        loop {
            let event = self.next_event("during self-play")?;
            on_event(&event);
            match event {
                Event::Shard {
                    games, positions, ..
                } => {
                    played.games += games;
                    played.positions += positions;
                    played.written += 1;
                }
                Event::Skipped { .. } => played.skipped += 1,
                Event::Stale { task, reason } => {
                    tracing::warn!("task {task}: stale shard dropped ({reason}); playing it again")
                }
                Event::Done { .. } => break,
                other => return Err(unexpected(other)),
            }
        }
        played.seconds = began.elapsed().as_secs_f64();
        Ok(played)
    }

    fn send(&mut self, request: &Request<'_>) -> Result<(), ClusterError> {
        let mut line = serde_json::to_string(request).map_err(std::io::Error::other)?;
        line.push('\n');
        // A driver that died shows up as a broken pipe: say how it ended instead.
        if self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return Err(self.ended("before a request"));
        }
        Ok(())
    }

    fn next_event(&mut self, when: &str) -> Result<Event, ClusterError> {
        let mut line = String::new();
        if self.events.read_line(&mut line)? == 0 {
            return Err(self.ended(when));
        }
        let event = parse_event(&line)?;
        if let Event::Error { message } = event {
            return Err(ClusterError::Driver(message));
        }
        Ok(event)
    }

    fn ended(&mut self, when: &str) -> ClusterError {
        let status = match self.child.wait() {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        };
        ClusterError::Ended {
            when: when.to_string(),
            status,
        }
    }
}

impl Drop for RayDriver {
    fn drop(&mut self) {
        let _ = self.send(&Request::Quit);
        let _ = self.child.wait();
    }
}

fn unexpected(event: Event) -> ClusterError {
    match event {
        Event::Error { message } => ClusterError::Driver(message),
        other => ClusterError::Driver(format!("unexpected event {other:?}")),
    }
}

/// One line of the driver's output as an event.
pub fn parse_event(line: &str) -> Result<Event, ClusterError> {
    serde_json::from_str(line.trim()).map_err(|_| ClusterError::Protocol {
        line: line.trim().chars().take(200).collect(),
    })
}

/// The config a task's `engine selfplay` reads: the run's, with the whole task in one shard,
/// the network on the task's CPUs, and local self-play (a task plays where it runs).
pub fn task_config(doc: &serde_yaml::Value, ray: &RayConfig) -> String {
    let mut doc = doc.clone();
    set_key(&mut doc, "selfplay", "backend", "local".into());
    set_key(
        &mut doc,
        "selfplay",
        "positions_per_shard",
        (1u64 << 40).into(),
    );
    let threads = u64::from(ray.cpus_per_task);
    set_key(&mut doc, "inference", "intra_threads", threads.into());
    serde_yaml::to_string(&doc).unwrap_or_default()
}

/// The tasks of a batch of `games` games, each `ray.games_per_task` (the last one the rest),
/// their shards named `STAMP-TAG-tNNNN.safetensors`: fixed by the batch's tag and the task's
/// index once `stamp` is (see [`batch_stamp`]). Seeds are `seed` mixed with the index.
pub fn plan(games: usize, per_task: usize, tag: &str, stamp: u64, seed: u64) -> Vec<Task> {
    let per_task = per_task.max(1);
    (0..games.div_ceil(per_task))
        .map(|k| Task {
            task: k,
            games: per_task.min(games - k * per_task),
            seed: seed ^ ((k as u64 + 1) << 40),
            file: task_file(stamp, tag, k),
        })
        .collect()
}

/// Task `k`'s shard name: the stamp first, so that names sort by age as shards' names do.
pub fn task_file(stamp: u64, tag: &str, k: usize) -> String {
    format!("{stamp:013}-{tag}-t{k:04}.{}", shards::EXTENSION)
}

/// The stamp of the batch tagged `tag` in `dir`: the one its task shards already carry (a
/// resumed batch keeps its names), else the time now in milliseconds.
pub fn batch_stamp(dir: &Path, tag: &str) -> std::io::Result<u64> {
    let needle = format!("-{tag}-t");
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if let Some((stamp, _)) = name.split_once(&needle) {
                if let Ok(s) = stamp.parse() {
                    if name.ends_with(shards::EXTENSION) {
                        return Ok(s);
                    }
                }
            }
        }
    }
    Ok(now_stamp())
}

/// The time now in milliseconds since 1970, as shard names begin.
pub fn now_stamp() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// Shards of `tasks` already in `dir` that another model or game played (stale: an earlier
/// run's task finishing late under this name, or a file copied in) are renamed `NAME.stale`,
/// where no reader looks, so that their tasks are played again. Returns the games of the
/// tasks' shards that stay.
pub fn keep_current(
    dir: &Path,
    tasks: &[Task],
    game: &str,
    model_name: &str,
) -> anyhow::Result<usize> {
    let mut games = 0;
    for t in tasks {
        let path = dir.join(&t.file);
        if !path.exists() {
            continue;
        }
        let reason = match shards::ShardMeta::read(&path) {
            Ok((meta, _)) if meta.game != game => format!("a {} shard", meta.game),
            Ok((meta, _)) if meta.model != model_name => format!("played by {}", meta.model),
            Ok((meta, _)) => {
                games += meta.games;
                continue;
            }
            Err(e) => format!("unreadable: {e}"),
        };
        let aside = path.with_extension("stale");
        tracing::warn!(
            "{}: {reason}, not {model_name}: moved to {} and its task played again",
            path.display(),
            aside.display()
        );
        std::fs::rename(&path, &aside)?;
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_cut_into_named_tasks() {
        let tasks = plan(25, 10, "i0003", 1_700_000_000_000, 7);
        let games: Vec<usize> = tasks.iter().map(|t| t.games).collect();
        assert_eq!(games, [10, 10, 5]);
        assert_eq!(tasks[2].file, "1700000000000-i0003-t0002.safetensors");
        let seeds: std::collections::HashSet<u64> = tasks.iter().map(|t| t.seed).collect();
        assert_eq!(seeds.len(), 3);
    }

    #[test]
    fn a_resumed_batch_keeps_its_stamp() {
        let dir = std::env::temp_dir().join(format!("engine-stamp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("0000000000042-i0001-t0003.safetensors"), b"").unwrap();
        std::fs::write(dir.join("0000000000099-i0002-0000.safetensors"), b"").unwrap();
        assert_eq!(batch_stamp(&dir, "i0001").unwrap(), 42);
        assert!(batch_stamp(&dir, "i0002").unwrap() > 1_000_000_000_000);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn events_parse_and_bad_lines_are_typed_errors() {
        let e = parse_event(
            r#"{"event":"shard","task":2,"file":"x.safetensors","games":3,"positions":90}"#,
        )
        .unwrap();
        assert_eq!(
            e,
            Event::Shard {
                task: 2,
                file: "x.safetensors".into(),
                games: 3,
                positions: 90
            }
        );
        for bad in ["", "hello", r#"{"event":"party"}"#, r#"{"event":"shard"}"#] {
            assert!(matches!(
                parse_event(bad),
                Err(ClusterError::Protocol { .. })
            ));
        }
    }

    #[test]
    fn the_task_config_plays_one_shard_on_the_task_cpus() {
        let doc: serde_yaml::Value =
            serde_yaml::from_str("selfplay: {backend: ray, parallel_games: 4}\n").unwrap();
        let ray = RayConfig {
            cpus_per_task: 3,
            ..RayConfig::default()
        };
        let text = task_config(&doc, &ray);
        let back: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back["selfplay"]["backend"], "local");
        assert_eq!(back["selfplay"]["parallel_games"], 4);
        assert_eq!(back["inference"]["intra_threads"], 3);
        assert!(back["selfplay"]["positions_per_shard"].as_u64().unwrap() > 1 << 30);
    }

    #[test]
    fn a_stale_shard_is_moved_aside_and_its_task_played_again() {
        let dir = std::env::temp_dir().join(format!("engine-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let tasks = plan(6, 2, "i0001", 5, 1);
        let shard = |model: &str| shards::Shard {
            meta: shards::ShardMeta {
                game: "liuzhou".into(),
                planes: 1,
                height: 1,
                width: 1,
                policy_size: 2,
                model: model.into(),
                config: String::new(),
                created_unix: 0,
                games: 2,
                policy_target: shards::PolicyTarget::Visits,
            },
            samples: vec![shards::Sample {
                planes: vec![0.5],
                policy: vec![(1, 1.0)],
                value: 1.0,
                aux: Default::default(),
            }],
            symmetries: vec![(games::Symmetry::IDENTITY, vec![0, 1])],
        };
        shard("m/0001.onnx")
            .write(&dir.join(&tasks[0].file))
            .unwrap();
        shard("m/0000.onnx")
            .write(&dir.join(&tasks[1].file))
            .unwrap();
        std::fs::write(dir.join(&tasks[2].file), b"not a shard").unwrap();
        assert_eq!(
            keep_current(&dir, &tasks, "liuzhou", "m/0001.onnx").unwrap(),
            2
        );
        assert!(dir.join(&tasks[0].file).exists());
        for t in &tasks[1..] {
            assert!(!dir.join(&t.file).exists());
        }
        let aside = dir.join(&tasks[1].file).with_extension("stale");
        assert!(aside.exists());
        // Readers look only at `.safetensors` files: the stale one is never read.
        assert_eq!(shards::newest_first(&dir).unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_tasks_config_carries_the_iterations_full_visits() {
        let doc: serde_yaml::Value =
            serde_yaml::from_str("selfplay: {full_visits: 200, cheap_visits: 50}\n").unwrap();
        let m = Path::new("m.onnx");
        let (_, out) = task_inputs(&doc, 64, m, None);
        assert_eq!(out["selfplay"]["full_visits"], 64);
        assert_eq!(out["selfplay"]["cheap_visits"], 50);
        let empty: serde_yaml::Value = serde_yaml::from_str("game: {}\n").unwrap();
        assert_eq!(
            task_inputs(&empty, 8, m, None).1["selfplay"]["full_visits"],
            8
        );
    }

    #[test]
    fn the_workers_get_the_int8_file_where_the_precision_comes_to_int8() {
        let dir = std::env::temp_dir().join(format!("ray-int8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (with, without) = (dir.join("a.onnx"), dir.join("b.onnx"));
        std::fs::write(dir.join("a.int8.onnx"), b"int8").unwrap();
        let doc: serde_yaml::Value =
            serde_yaml::from_str("inference: {precision: auto}\n").unwrap();
        let shipped = |model: &Path, p| {
            let (file, doc) = task_inputs(&doc, 8, model, p);
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                doc["inference"]["precision"].as_str().unwrap().to_string(),
            )
        };
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        use Precision::*;
        assert_eq!(shipped(&with, Some(Auto)), pair("a.int8.onnx", "fp32"));
        assert_eq!(shipped(&with, Some(Int8)), pair("a.int8.onnx", "fp32"));
        assert_eq!(shipped(&with, Some(Fp32)), pair("a.onnx", "fp32"));
        assert_eq!(shipped(&without, Some(Auto)), pair("b.onnx", "fp32"));
        // Int8 without the file: the worker's load says what is missing.
        assert_eq!(shipped(&without, Some(Int8)), pair("b.onnx", "int8"));
        // No precision asked: the config's.
        assert_eq!(shipped(&with, None), pair("a.onnx", "auto"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_python_is_a_clear_error() {
        let ray = RayConfig {
            python: "/nonexistent/python3".into(),
            ..RayConfig::default()
        };
        let e = RayDriver::start(&ray, Path::new("engine"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("selfplay.ray.python") && e.contains("requirements.txt"),
            "{e}"
        );
    }
}
