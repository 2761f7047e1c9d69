//! A batch in this process: one evaluator shared by the batch's games.

use std::path::Path;

use progress::Progress;
use selfplay::ShardSink;
use selfplay::Trainable;
use setup::models;

use crate::{Played, Request};

/// Plays the games `request` still lacks; seeds differ from an earlier run's by the games
/// already played, so a resumed batch does not repeat them.
pub(crate) fn run<G: Trainable>(request: &Request<'_, G>) -> anyhow::Result<Played> {
    let done = if request.resume {
        games_in_shards(request.out, request.tag)?
    } else {
        0
    };
    let todo = request.games.saturating_sub(done);
    if todo == 0 {
        return Ok(Played::default());
    }
    let evaluator = models::evaluator_with(
        request.start,
        request.model,
        request.doc,
        request.config_path,
        request.overrides,
    )?;
    tracing::info!("{} with {}", request.label, evaluator.describe());
    let config_text = serde_yaml::to_string(request.doc)?;
    let sink = ShardSink {
        dir: request.out,
        tag: request.tag,
        model: request.model_name,
        config: &config_text,
    };
    let bar = Progress::new(todo as u64, request.label, "games");
    let seed = request.seed ^ done as u64;
    let summary = selfplay::run(
        request.start,
        evaluator.as_ref(),
        request.config,
        todo,
        &sink,
        seed,
        |s| {
            bar.set_message(format!("{:.0} positions/s", s.positions_per_second()));
            bar.set_position(s.games as u64);
        },
    )?;
    bar.finish();
    let line = summary.line();
    tracing::info!("{}: {line}", request.label);
    Ok(Played {
        games: summary.games,
        positions: summary.positions,
        written: summary.shards.len(),
        skipped: 0,
        seconds: summary.seconds,
        line,
    })
}

/// Games recorded in the shards tagged `tag` in `dir`.
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
