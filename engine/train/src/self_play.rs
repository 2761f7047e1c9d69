//! The self-play step: an iteration's games with the best model, through `cluster`'s one entry
//! (in this process or on a Ray cluster), resumable by shard (games already in the iteration's
//! shards count).

use std::path::Path;

use cluster::Request;
use players::spec::OwnPlayers;
use selfplay::Trainable;

use crate::iteration::Run;
use crate::matches::FP32;
use setup::models;

/// Plays what iteration `i` still lacks of its games with `best_onnx`, on the configured board
/// (shards tagged `i{i:04}`) and on each of `train.other_boards` (tagged `i{i:04}b{size}`);
/// returns the positions per second (0 when nothing was left to play).
pub(crate) fn step<G: OwnPlayers + Trainable>(
    run: &mut Run<'_, G>,
    i: u32,
    best_onnx: &Path,
) -> anyhow::Result<f64> {
    let (train, setup) = (run.train, run.setup);
    let model = best_onnx.to_string_lossy();
    let config = selfplay::SelfplayConfig {
        full_visits: train.full_visits_at(i, setup.selfplay.full_visits),
        ..setup.selfplay.clone()
    };
    let (main, others) = train.games_by_board();
    let mut boards = vec![(run.start, main, None)];
    for (start, (size, games)) in run.other_boards.iter().zip(others) {
        boards.push((start, games, Some(size)));
    }
    let (mut positions, mut seconds) = (0, 0.0);
    for (start, games, size) in boards {
        let (tag, board) = match size {
            None => (format!("i{i:04}"), String::new()),
            Some(s) => (format!("i{i:04}b{s}"), format!(" {s}x{s}")),
        };
        // Each other board's games seeded apart; the configured board's as without other boards.
        let board_salt = size.map_or(0, |s| (s as u64) << 40);
        let played = run.selfplay.run(&Request {
            start,
            model: &model,
            model_name: &model,
            doc: setup.doc,
            config_path: setup.config_path,
            config: &config,
            overrides: models::Overrides {
                precision: Some(train.selfplay_precision),
                ..FP32
            },
            games,
            out: &run.dir.shards,
            tag: &tag,
            seed: train.seed ^ (u64::from(i) << 20) ^ board_salt,
            resume: true,
            label: &format!("iteration {i}: self-play{board}"),
        })?;
        positions += played.positions;
        seconds += played.seconds;
    }
    Ok(if seconds > 0.0 {
        positions as f64 / seconds
    } else {
        0.0
    })
}
