//! The `network:` section of a game's YAML config.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The shape of the residual tower and its two heads. Read from the `network:` key of
/// `configs/<game>.yaml`; stored as JSON in every ONNX model's metadata (key `network`).
///
/// Each size has a range ([`NetConfig::RANGES`]): well beyond what this loop trains, but small
/// enough that a typo such as `blocks: 100000` is refused at once instead of allocating for
/// hours.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks after the stem, 0..=64. 0 is a working network: the stem feeds the
    /// heads directly.
    pub blocks: usize,
    /// Channels of the stem and of every residual block, 1..=512.
    pub channels: usize,
    /// Channels of the policy head's 1×1 convolution, 1..=64.
    #[serde(default = "default_policy_channels")]
    pub policy_channels: usize,
    /// Channels of the value head's 1×1 convolution, 1..=64.
    #[serde(default = "default_value_channels")]
    pub value_channels: usize,
    /// Width of the value head's hidden fully connected layer, 1..=1024.
    #[serde(default = "default_value_hidden")]
    pub value_hidden: usize,
}

fn default_policy_channels() -> usize {
    2
}
fn default_value_channels() -> usize {
    1
}
fn default_value_hidden() -> usize {
    64
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            blocks: 4,
            channels: 48,
            policy_channels: default_policy_channels(),
            value_channels: default_value_channels(),
            value_hidden: default_value_hidden(),
        }
    }
}

/// Why a config's `network:` section could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // The io error is shown, not chained as a `source`: chains would print it twice.
    #[error("{path}: cannot read: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// The file's other sections belong to other parts of the loop: only `network:` is read here.
#[derive(Deserialize)]
struct ConfigFile {
    network: Option<serde_yaml::Value>,
}

impl NetConfig {
    /// Reads the `network:` section of a YAML config file.
    pub fn from_yaml_file(path: &Path) -> Result<NetConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_owned(),
            error,
        })?;
        Self::from_yaml_str(&text).map_err(|reason| ConfigError::Invalid {
            path: path.to_owned(),
            reason,
        })
    }

    /// Reads the `network:` section of a YAML document; the reason names the key at fault.
    pub fn from_yaml_str(text: &str) -> Result<NetConfig, String> {
        let file: ConfigFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let section = file.network.ok_or("no `network:` section")?;
        let cfg: NetConfig =
            serde_yaml::from_value(section).map_err(|e| format!("network: {e}"))?;
        cfg.validate().map_err(|e| format!("network: {e}"))?;
        Ok(cfg)
    }

    /// The allowed range of each key (see the fields).
    pub const RANGES: [(&'static str, usize, usize); 5] = [
        ("blocks", 0, 64),
        ("channels", 1, 512),
        ("policy_channels", 1, 64),
        ("value_channels", 1, 64),
        ("value_hidden", 1, 1024),
    ];

    /// Every size must lie in its range ([`NetConfig::RANGES`]); the reason names the key.
    pub fn validate(&self) -> Result<(), String> {
        let values = [
            self.blocks,
            self.channels,
            self.policy_channels,
            self.value_channels,
            self.value_hidden,
        ];
        for ((key, lo, hi), v) in Self::RANGES.into_iter().zip(values) {
            if !(lo..=hi).contains(&v) {
                let note = if key == "blocks" {
                    " (0: the stem feeds the heads directly)"
                } else {
                    ""
                };
                return Err(format!("`{key}` is {v}, outside {lo}..={hi}{note}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_network_section_and_ignores_others() {
        let cfg = NetConfig::from_yaml_str(
            "selfplay:\n  games: 10\nnetwork:\n  blocks: 3\n  channels: 32\n  value_hidden: 16\n",
        )
        .unwrap();
        assert_eq!(cfg.blocks, 3);
        assert_eq!(cfg.channels, 32);
        assert_eq!(cfg.value_hidden, 16);
        assert_eq!(cfg.policy_channels, 2);
    }

    #[test]
    fn rejects_unknown_keys_missing_section_and_zero_sizes() {
        let e = NetConfig::from_yaml_str("network:\n  blocks: 3\n  channels: 8\n  chanels: 3\n")
            .unwrap_err();
        assert!(e.contains("chanels"), "{e}");
        let e = NetConfig::from_yaml_str("selfplay: {}\n").unwrap_err();
        assert!(e.contains("network"), "{e}");
        let e = NetConfig::from_yaml_str("network:\n  blocks: 3\n  channels: 0\n").unwrap_err();
        assert!(e.contains("channels"), "{e}");
    }

    #[test]
    fn sizes_out_of_range_name_the_key_and_the_range() {
        for (text, expect) in [
            (
                "blocks: 100000\n  channels: 8",
                "network: `blocks` is 100000, outside 0..=64",
            ),
            (
                "blocks: 1\n  channels: 0",
                "network: `channels` is 0, outside 1..=512",
            ),
            (
                "blocks: 1\n  channels: 513",
                "network: `channels` is 513, outside 1..=512",
            ),
            (
                "blocks: 1\n  channels: 8\n  value_hidden: 5000",
                "`value_hidden` is 5000",
            ),
            (
                "blocks: 1\n  channels: 8\n  policy_channels: 0",
                "`policy_channels` is 0",
            ),
        ] {
            let e = NetConfig::from_yaml_str(&format!("network:\n  {text}\n")).unwrap_err();
            assert!(e.contains(expect), "{text}: {e}");
        }
        // The bounds themselves are allowed; blocks: 0 is a network of stem and heads.
        let cfg = NetConfig::from_yaml_str("network:\n  blocks: 0\n  channels: 512\n").unwrap();
        assert_eq!((cfg.blocks, cfg.channels), (0, 512));
    }

    #[test]
    fn shipped_configs_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // Configs for other purposes (arena, selfplay) may carry no network.
            let text = std::fs::read_to_string(&path).unwrap();
            if path.extension().is_some_and(|e| e == "yaml") && text.contains("network:") {
                NetConfig::from_yaml_file(&path).unwrap();
                seen += 1;
            }
        }
        assert!(seen >= 1, "no configs in {}", dir.display());
    }
}
