//! What several of the binary's test files share.

use std::path::{Path, PathBuf};

/// Writes `dir/tiny.yaml`: a Liuzhou config small enough for `engine train` to run in seconds
/// (a 1 × 8 network, a few games of a few visits), with `fit_steps` optimiser steps per fit and
/// `train` the keys of the `train` section beyond its `run_dir`, which is `dir/run`.
pub fn tiny_train_config(dir: &Path, fit_steps: u64, train: &str) -> PathBuf {
    let config = dir.join("tiny.yaml");
    std::fs::write(
        &config,
        format!(
            "game: {{lose_below: 1}}\ninference: {{batch_size: 16, intra_threads: 1}}\n\
             network: {{blocks: 1, channels: 8, value_hidden: 8}}\n\
             selfplay: {{parallel_games: 4, full_visits: 8, cheap_visits: 2, positions_per_shard: 30}}\n\
             fit: {{steps: {fit_steps}, batch_size: 16}}\n\
             train: {{run_dir: {}, {train}}}\n",
            dir.join("run").display()
        ),
    )
    .unwrap();
    config
}
