//! Where self-play runs: `selfplay.backend` and its `selfplay.ray` settings. The types only:
//! the `cluster` crate plays a batch on the backend they name (`docs/cluster.md`), since this
//! crate starts no process.

use eval::InvalidSetting;
use serde::{Deserialize, Serialize};

/// Where `engine train` plays its self-play games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// In the training process, on this machine.
    #[default]
    Local,
    /// As tasks on a Ray cluster (`selfplay.ray`), each running `engine selfplay` on a worker.
    Ray,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Ray => "ray",
        }
    }
}

/// The `selfplay.ray` settings: the cluster and how an iteration's games are cut into tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RayConfig {
    /// The cluster's address as `ray.init` takes it (`HOST:PORT` of the head's GCS, `auto`, or
    /// a `ray://` client address).
    pub address: String,
    /// Tasks per iteration; an iteration plays `tasks_per_iteration × games_per_task` games.
    pub tasks_per_iteration: usize,
    /// Games of one task: one `engine selfplay` run on a worker, written as one shard.
    pub games_per_task: usize,
    /// CPUs Ray reserves for a task; the task's network uses as many threads.
    pub cpus_per_task: u32,
    /// Times Ray runs a task again after its worker died.
    pub max_retries: u32,
    /// The Python interpreter that runs the driver (one where `cluster/requirements.txt` is
    /// installed).
    pub python: String,
    /// The engine binary the workers run: `ship` sends this one through the object store; any
    /// other value is a path that exists on every node.
    pub engine: String,
}

impl Default for RayConfig {
    fn default() -> Self {
        RayConfig {
            address: "127.0.0.1:6379".into(),
            tasks_per_iteration: 8,
            games_per_task: 12,
            cpus_per_task: 1,
            max_retries: 3,
            python: "python3".into(),
            engine: SHIP.into(),
        }
    }
}

/// `selfplay.ray.engine` value that sends the running engine binary to the workers.
pub const SHIP: &str = "ship";

impl RayConfig {
    /// Games one iteration plays on the cluster.
    pub fn games_per_iteration(&self) -> usize {
        self.tasks_per_iteration * self.games_per_task
    }

    pub fn validate(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        I::check(
            !self.address.trim().is_empty(),
            "ray.address",
            format_args!("{:?}", self.address),
            "a Ray address such as 127.0.0.1:6379",
        )?;
        for (key, n) in [
            ("ray.tasks_per_iteration", self.tasks_per_iteration),
            ("ray.games_per_task", self.games_per_task),
            ("ray.cpus_per_task", self.cpus_per_task as usize),
        ] {
            I::check(n >= 1, key, n, "1 or more")?;
        }
        I::check(
            self.tasks_per_iteration <= 10_000,
            "ray.tasks_per_iteration",
            self.tasks_per_iteration,
            "1 to 10000",
        )?;
        I::check(
            self.max_retries <= 100,
            "ray.max_retries",
            self.max_retries,
            "0 to 100",
        )?;
        for (key, v) in [("ray.python", &self.python), ("ray.engine", &self.engine)] {
            I::check(
                !v.trim().is_empty(),
                key,
                format_args!("{v:?}"),
                "a program name or path",
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ray_key_out_of_range_is_named() {
        let d = RayConfig::default;
        assert_eq!(d().validate(), Ok(()));
        let cases = [
            (
                RayConfig {
                    address: " ".into(),
                    ..d()
                },
                "ray.address",
            ),
            (
                RayConfig {
                    tasks_per_iteration: 0,
                    ..d()
                },
                "ray.tasks_per_iteration",
            ),
            (
                RayConfig {
                    games_per_task: 0,
                    ..d()
                },
                "ray.games_per_task",
            ),
            (
                RayConfig {
                    cpus_per_task: 0,
                    ..d()
                },
                "ray.cpus_per_task",
            ),
            (
                RayConfig {
                    max_retries: 101,
                    ..d()
                },
                "ray.max_retries",
            ),
            (
                RayConfig {
                    python: "".into(),
                    ..d()
                },
                "ray.python",
            ),
            (
                RayConfig {
                    engine: "".into(),
                    ..d()
                },
                "ray.engine",
            ),
        ];
        for (config, key) in cases {
            assert_eq!(config.validate().unwrap_err().key, key);
        }
    }
}
