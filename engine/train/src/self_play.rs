//! The self-play step: an iteration's games with the best model, in this process or on a Ray
//! cluster, resumable by shard (games already in the iteration's shards count).

use std::path::Path;
use std::time::Instant;

use players::spec::OwnPlayers;
use setup::models;

use crate::iteration::Run;
use crate::matches::FP32;
use crate::{cluster, progress};

/// Plays what iteration `i` (its shards tagged `tag`) still lacks of its games in this process,
/// with `best_onnx`, on the configured board and on each of `train.other_boards` (their shards
/// tagged `{tag}b{size}`); returns the positions per second (0 when nothing was left to play).
pub(crate) fn local<G: OwnPlayers>(
    run: &Run<'_, G>,
    i: u32,
    best_onnx: &Path,
    tag: &str,
) -> anyhow::Result<f64> {
    let (main, others) = run.train.games_by_board();
    let mut boards = vec![(run.start, main, None)];
    for (start, (size, games)) in run.other_boards.iter().zip(others) {
        boards.push((start, games, Some(size)));
    }
    let (mut positions, mut seconds) = (0.0, 0.0);
    for (start, games, size) in boards {
        let tag = match size {
            None => tag.to_string(),
            Some(size) => format!("{tag}b{size}"),
        };
        let done = games_in_shards(&run.dir.shards, &tag)?;
        let todo = games.saturating_sub(done);
        if todo == 0 {
            continue;
        }
        let began = Instant::now();
        let rate = local_board(run, start, i, best_onnx, &tag, (done, todo), size)?;
        let took = began.elapsed().as_secs_f64();
        positions += rate * took;
        seconds += took;
    }
    Ok(if seconds > 0.0 {
        positions / seconds
    } else {
        0.0
    })
}

/// Plays `todo` games of iteration `i` from `start` into shards tagged `tag`, where `done` are
/// there already; `size` is the board of one of `train.other_boards`, `None` the configured
/// one. Returns the positions per second.
fn local_board<G: OwnPlayers>(
    run: &Run<'_, G>,
    start: &G,
    i: u32,
    best_onnx: &Path,
    tag: &str,
    (done, todo): (usize, usize),
    size: Option<usize>,
) -> anyhow::Result<f64> {
    let (setup, shards_dir) = (run.setup, &run.dir.shards);
    let model = best_onnx.to_string_lossy();
    let evaluator = models::evaluator_with(start, &model, setup.doc, setup.config_path, FP32)?;
    let board = size.map_or(String::new(), |s| format!(" {s}x{s}"));
    let bar = progress(todo as u64, &format!("iteration {i}: self-play{board}"));
    let sink = selfplay::ShardSink {
        dir: shards_dir,
        tag,
        model: &model,
        config: &run.config_text,
    };
    // Each other board's games seeded apart; the configured board's as without other boards.
    let board_salt = size.map_or(0, |s| (s as u64) << 40);
    let seed = run.train.seed ^ (u64::from(i) << 20) ^ done as u64 ^ board_salt;
    let config = selfplay::SelfplayConfig {
        full_visits: run.train.full_visits_at(i, setup.selfplay.full_visits),
        ..setup.selfplay.clone()
    };
    let summary = selfplay::run(start, evaluator.as_ref(), &config, todo, &sink, seed, |s| {
        bar.set_message(format!("{:.0} positions/s", s.positions_per_second()));
        bar.set_position(s.games as u64);
    })?;
    bar.finish();
    tracing::info!("iteration {i}: self-play{board}: {}", summary.line());
    Ok(summary.positions_per_second())
}

/// Plays the tasks of iteration `i` (its shards tagged `tag`) whose shards are missing on the
/// cluster, starting the run's driver if it is not running; returns the positions per second
/// (0 when nothing was left to play).
pub(crate) fn on_ray<G: OwnPlayers>(
    run: &mut Run<'_, G>,
    i: u32,
    best_onnx: &Path,
    tag: &str,
) -> anyhow::Result<f64> {
    let (sp, shards_dir) = (&run.setup.selfplay, &run.dir.shards);
    let model_name = best_onnx.to_string_lossy();
    let seed = run.train.seed ^ (u64::from(i) << 20);
    let stamp = cluster::batch_stamp(shards_dir, tag)?;
    let games = run.train.games_per_iteration;
    let tasks = cluster::plan(games, sp.ray.games_per_task, tag, stamp, seed);
    cluster::keep_current(shards_dir, &tasks, G::NAME, &model_name)?;
    let todo: Vec<cluster::Task> = tasks
        .into_iter()
        .filter(|t| !shards_dir.join(&t.file).exists())
        .collect();
    if todo.is_empty() {
        return Ok(0.0);
    }
    let driver = match &mut run.ray {
        Some(d) => d,
        None => run.ray.insert(cluster::RayDriver::start(
            &sp.ray,
            &std::env::current_exe()?,
        )?),
    };
    let visits = run.train.full_visits_at(i, sp.full_visits);
    let task_config = cluster::task_config(&with_full_visits(run.setup.doc, visits), &sp.ray);
    let batch = cluster::Batch {
        game: G::NAME,
        model: best_onnx,
        model_name: &model_name,
        config: &task_config,
        out_dir: shards_dir,
        tasks: &todo,
    };
    let played = ray_selfplay(driver, &batch, &format!("iteration {i}"))?;
    Ok(played.positions_per_second())
}

/// The config `doc` with `selfplay.full_visits` set to `visits` (the iteration's, by
/// `train.visit_schedule`), as the cluster's tasks read it.
fn with_full_visits(doc: &serde_yaml::Value, visits: u32) -> serde_yaml::Value {
    let mut doc = doc.clone();
    if !doc["selfplay"].is_mapping() {
        doc["selfplay"] = serde_yaml::Value::Mapping(Default::default());
    }
    doc["selfplay"]["full_visits"] = u64::from(visits).into();
    doc
}

/// Plays `batch` on the cluster with a progress bar of its games; `what` names it in the log.
pub fn ray_selfplay(
    driver: &mut cluster::RayDriver,
    batch: &cluster::Batch<'_>,
    what: &str,
) -> anyhow::Result<cluster::Played> {
    let games: usize = batch.tasks.iter().map(|t| t.games).sum();
    let bar = progress(games as u64, &format!("{what}: self-play on Ray"));
    let began = Instant::now();
    let mut positions = 0;
    let played = driver.selfplay(batch, |e| {
        if let cluster::Event::Shard {
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
        "{what}: self-play on Ray: {} tasks, {} games, {} positions ({:.1}/s) in {:.1} s; {} \
         shards already there",
        played.written,
        played.games,
        played.positions,
        played.positions_per_second(),
        played.seconds,
        played.skipped
    );
    Ok(played)
}

/// Games recorded in the shards tagged `tag` (the shards of one iteration).
fn games_in_shards(dir: &Path, tag: &str) -> anyhow::Result<usize> {
    let needle = format!("-{tag}-");
    let mut games = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.contains(&needle) && name.ends_with(shards::EXTENSION) && !name.starts_with('.') {
            match shards::ShardMeta::read(&path) {
                Ok((meta, _)) => games += meta.games,
                Err(e) => tracing::warn!("ignoring {e}"),
            }
        }
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tasks_config_carries_the_iterations_full_visits() {
        let doc: serde_yaml::Value =
            serde_yaml::from_str("selfplay: {full_visits: 200, cheap_visits: 50}\n").unwrap();
        let out = with_full_visits(&doc, 64);
        assert_eq!(out["selfplay"]["full_visits"], 64);
        assert_eq!(out["selfplay"]["cheap_visits"], 50);
        let empty: serde_yaml::Value = serde_yaml::from_str("game: {}\n").unwrap();
        assert_eq!(with_full_visits(&empty, 8)["selfplay"]["full_visits"], 8);
    }
}
