//! Samples into numbered shards of a fixed stem, so that writing the same data again replaces
//! the same files.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use games::{Encoding, Symmetry};
use shards::{Sample, Shard, ShardError, ShardMeta};

/// Writes samples to `DIR/STEM-NNNN.safetensors` (`NNNN` from 0000), at most `per_shard`
/// positions a shard. A game's positions may span two shards; a shard's `games` metadata counts
/// the games whose last position it holds, so the counts of all shards add up to the games.
pub struct ShardWriter {
    dir: PathBuf,
    stem: String,
    per_shard: usize,
    game: &'static str,
    shape: games::TensorShape,
    symmetries: Vec<(Symmetry, Vec<u16>)>,
    model: String,
    config: String,
    buffer: Vec<Sample>,
    /// Games whose last sample is in `buffer`.
    games_in_buffer: usize,
    written: Vec<PathBuf>,
}

impl ShardWriter {
    /// A writer for samples of `like`'s variant (its shape and symmetries go into every
    /// shard); `model` and `config` are recorded as each shard's metadata. `per_shard` is at
    /// least 1. The directory is created if missing.
    pub fn new<G: Encoding>(
        like: &G,
        dir: &Path,
        stem: &str,
        model: &str,
        config: &str,
        per_shard: usize,
    ) -> Result<ShardWriter, ShardError> {
        fs::create_dir_all(dir).map_err(|error| ShardError::Io {
            path: dir.to_owned(),
            error,
        })?;
        Ok(ShardWriter {
            dir: dir.to_owned(),
            stem: stem.to_owned(),
            per_shard: per_shard.max(1),
            game: G::NAME,
            shape: like.shape(),
            symmetries: shards::symmetry_maps(like),
            model: model.to_owned(),
            config: config.to_owned(),
            buffer: Vec::new(),
            games_in_buffer: 0,
            written: Vec::new(),
        })
    }

    /// The file name of shard number `k` of `stem`.
    pub fn shard_name(stem: &str, k: usize) -> String {
        format!("{stem}-{k:04}.{}", shards::EXTENSION)
    }

    /// Adds the positions of one game, writing every shard that fills.
    pub fn add_game(&mut self, samples: Vec<Sample>) -> Result<(), ShardError> {
        let mut samples = samples.into_iter().peekable();
        while samples.peek().is_some() {
            let room = self.per_shard - self.buffer.len();
            self.buffer.extend(samples.by_ref().take(room));
            if self.buffer.len() == self.per_shard && samples.peek().is_some() {
                self.flush()?;
            }
        }
        self.games_in_buffer += 1;
        if self.buffer.len() == self.per_shard {
            self.flush()?;
        }
        Ok(())
    }

    /// Positions added so far.
    pub fn positions(&self) -> usize {
        self.written.len() * self.per_shard + self.buffer.len()
    }

    /// Writes what is left, then removes shards of the same stem numbered past the last one
    /// written (left by an earlier, longer run), so that the directory holds exactly this run's
    /// shards of the stem. Returns their paths.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, ShardError> {
        if !self.buffer.is_empty() {
            self.flush()?;
        }
        let io = |path: &Path, error| ShardError::Io {
            path: path.to_owned(),
            error,
        };
        let prefix = format!("{}-", self.stem);
        let suffix = format!(".{}", shards::EXTENSION);
        for entry in fs::read_dir(&self.dir).map_err(|e| io(&self.dir, e))? {
            let path = entry.map_err(|e| io(&self.dir, e))?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let number = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(&suffix))
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<usize>().ok());
            if number.is_some_and(|k| k >= self.written.len()) {
                fs::remove_file(&path).map_err(|e| io(&path, e))?;
            }
        }
        Ok(self.written)
    }

    fn flush(&mut self) -> Result<(), ShardError> {
        let created_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let shard = Shard {
            meta: ShardMeta {
                game: self.game.to_string(),
                planes: self.shape.planes,
                height: self.shape.height,
                width: self.shape.width,
                policy_size: self.shape.policy_size,
                model: self.model.clone(),
                config: self.config.clone(),
                created_unix,
                games: self.games_in_buffer,
                policy_target: shards::PolicyTarget::Teacher,
            },
            samples: std::mem::take(&mut self.buffer),
            symmetries: self.symmetries.clone(),
        };
        let path = self
            .dir
            .join(ShardWriter::shard_name(&self.stem, self.written.len()));
        shard.write(&path)?;
        self.written.push(path);
        self.games_in_buffer = 0;
        Ok(())
    }
}
