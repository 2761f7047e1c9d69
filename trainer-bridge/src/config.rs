//! The `network:` section of a game's YAML config.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The shape of the residual tower and its two heads. Read from the `network:` key of
/// `configs/<game>.yaml`; stored as JSON in every ONNX model's metadata (key `network`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks after the stem.
    pub blocks: usize,
    /// Channels of the stem and of every residual block.
    pub channels: usize,
    /// Channels of the policy head's 1×1 convolution.
    #[serde(default = "default_policy_channels")]
    pub policy_channels: usize,
    /// Channels of the value head's 1×1 convolution.
    #[serde(default = "default_value_channels")]
    pub value_channels: usize,
    /// Width of the value head's hidden fully connected layer.
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
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
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
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
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

    /// Every size must be at least 1 (blocks may be 0: a stem and heads only).
    pub fn validate(&self) -> Result<(), String> {
        for (key, v) in [
            ("channels", self.channels),
            ("policy_channels", self.policy_channels),
            ("value_channels", self.value_channels),
            ("value_hidden", self.value_hidden),
        ] {
            if v == 0 {
                return Err(format!("{key} must be at least 1"));
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
