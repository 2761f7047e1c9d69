//! The `network:` section of a game's YAML config.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The shape of the residual tower and its heads. Read from the `network:` key of
/// `configs/<game>.yaml`; stored as JSON in every ONNX model's metadata (key `network`).
///
/// Each size has a range ([`NetConfig::RANGES`]): well beyond what this loop trains, but small
/// enough that a typo such as `blocks: 100000` is refused at once instead of allocating for
/// hours.
///
/// The keys after `value_hidden` choose the KataGo-style parts (see [`crate::net`]): global
/// pooling in the tower and the heads, and the auxiliary heads. Each defaults to 0 (off), which
/// builds the plain ResNet, and is left out of the JSON when 0, so that a plain network's
/// metadata holds the five sizes alone. Every value is a whole number (the engine reads the
/// section as sizes): the switches take 0 or 1.
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
    /// Every `pool_every`-th residual block (blocks pool_every − 1, 2·pool_every − 1, … counted
    /// from 0) is a global-pooling block, 0..=64; 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pool_every: usize,
    /// Channels pooled over the board: the last `pool_channels` of a pooling block's first
    /// convolution, and the pooled branch of a pooling policy head, 0..=512. Needed (≥ 1, and
    /// below `channels` in a pooling block) where anything in the tower or the policy head
    /// pools; ignored otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pool_channels: usize,
    /// 1: the policy head adds biases from globally pooled features to its channels; where the
    /// game's policy is one entry per point and then pass (Go), the points' logits come from a
    /// 1×1 convolution and the pass logit from the pooled features, so the weights do not
    /// depend on the board's size. 0: a fully connected layer over the flattened channels.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub policy_pool: bool,
    /// 1: the value head pools its channels over the board (mean, mean scaled by the board's
    /// width, max) before its fully connected layers. 0: it flattens them.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub value_pool: bool,
    /// 1: an `ownership` output, each point's final owner (−1..1, the mover's view), a 1×1
    /// convolution of the value head's channels.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub ownership: bool,
    /// 1: a `score` output, the final score margin (the mover's view, unbounded), from the value
    /// head's hidden layer.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub score: bool,
    /// 1: a `wdl` output, win/draw/loss logits for the mover, from the value head's hidden layer.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub wdl: bool,
    /// 1: a `reply_policy` output, logits of the opponent's reply, in the policy's form from the
    /// policy head's channels.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub reply: bool,
    /// 1: a soft policy head (KataGo's auxiliary soft policy target), in the policy's form from
    /// the policy head's channels, trained against the policy target raised to the power
    /// 1/`fit.soft_policy_temperature` and renormalised, so that the shared layers also learn
    /// to rank the unlikely moves. Training only: it is not an ONNX output, and a model
    /// exported with it computes exactly what one without it does.
    #[serde(default, with = "switch", skip_serializing_if = "is_off")]
    pub soft_policy: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_off(b: &bool) -> bool {
    !*b
}

/// A switch written as 0 or 1 (the engine reads every `network` value as a whole number).
mod switch {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(on: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(u8::from(*on))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        match u64::deserialize(d)? {
            0 => Ok(false),
            1 => Ok(true),
            n => Err(D::Error::custom(format!("{n}: give 0 (off) or 1 (on)"))),
        }
    }
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
            pool_every: 0,
            pool_channels: 0,
            policy_pool: false,
            value_pool: false,
            ownership: false,
            score: false,
            wdl: false,
            reply: false,
            soft_policy: false,
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
        // A switch given anything but 0 or 1 is named here (serde's message would not say which
        // key it was).
        if let Some(map) = section.as_mapping() {
            for key in Self::SWITCHES {
                match map.get(key) {
                    Some(v) if !matches!(v.as_u64(), Some(0 | 1)) => {
                        let shown = serde_yaml::to_string(v).unwrap_or_default();
                        return Err(format!(
                            "network: `{key}` is {}: give 0 (off) or 1 (on)",
                            shown.trim()
                        ));
                    }
                    _ => {}
                }
            }
        }
        let cfg: NetConfig =
            serde_yaml::from_value(section).map_err(|e| format!("network: {e}"))?;
        cfg.validate().map_err(|e| format!("network: {e}"))?;
        Ok(cfg)
    }

    /// The keys that are switches, 0 (off) or 1 (on).
    pub const SWITCHES: [&'static str; 7] = [
        "policy_pool",
        "value_pool",
        "ownership",
        "score",
        "wdl",
        "reply",
        "soft_policy",
    ];

    /// The allowed range of each size (see the fields).
    pub const RANGES: [(&'static str, usize, usize); 7] = [
        ("blocks", 0, 64),
        ("channels", 1, 512),
        ("policy_channels", 1, 64),
        ("value_channels", 1, 64),
        ("value_hidden", 1, 1024),
        ("pool_every", 0, 64),
        ("pool_channels", 0, 512),
    ];

    /// Every size must lie in its range ([`NetConfig::RANGES`]), and what pools must have
    /// channels to pool; the reason names the key.
    pub fn validate(&self) -> Result<(), String> {
        let values = [
            self.blocks,
            self.channels,
            self.policy_channels,
            self.value_channels,
            self.value_hidden,
            self.pool_every,
            self.pool_channels,
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
        let g = self.pool_channels;
        if self.pooling_blocks() > 0 && !(1..self.channels).contains(&g) {
            return Err(format!(
                "`pool_channels` is {g}: pooling blocks (`pool_every: {}`) pool 1 to {} of their \
                 {} channels",
                self.pool_every,
                self.channels - 1,
                self.channels
            ));
        }
        if self.policy_pool && g == 0 {
            return Err("`pool_channels` is 0: `policy_pool: 1` pools that many channels".into());
        }
        Ok(())
    }

    /// Whether residual block `i` (from 0) is a global-pooling block.
    pub fn pools_in_block(&self, i: usize) -> bool {
        self.pool_every > 0 && (i + 1).is_multiple_of(self.pool_every)
    }

    /// How many of the blocks are global-pooling blocks.
    pub fn pooling_blocks(&self) -> usize {
        (0..self.blocks).filter(|&i| self.pools_in_block(i)).count()
    }

    /// Whether any part beyond the plain ResNet of earlier versions is on.
    pub fn has_new_parts(&self) -> bool {
        *self != self.plain()
    }

    /// This network with every pooling part and auxiliary head off: the plain ResNet of the same
    /// blocks and channels.
    pub fn plain(&self) -> NetConfig {
        NetConfig {
            blocks: self.blocks,
            channels: self.channels,
            policy_channels: self.policy_channels,
            value_channels: self.value_channels,
            value_hidden: self.value_hidden,
            ..NetConfig::default()
        }
    }

    /// `4 blocks of 48 channels, heads of 2 and 1 channels, 64 hidden value units`, and the
    /// pooling parts and auxiliary heads that are on.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} blocks of {} channels, heads of {} and {} channels, {} hidden value units",
            self.blocks,
            self.channels,
            self.policy_channels,
            self.value_channels,
            self.value_hidden
        );
        if self.pooling_blocks() > 0 {
            s += &format!(
                ", {} pooling blocks of {} pooled channels",
                self.pooling_blocks(),
                self.pool_channels
            );
        }
        let parts: Vec<&str> = [
            (self.policy_pool, "pooling policy head"),
            (self.value_pool, "pooling value head"),
            (self.ownership, "ownership"),
            (self.score, "score"),
            (self.wdl, "wdl"),
            (self.reply, "reply policy"),
            (self.soft_policy, "soft policy (training only)"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if !parts.is_empty() {
            s += ", ";
            s += &parts.join(", ");
        }
        s
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

    #[test]
    fn new_keys_default_off_and_stay_out_of_the_json() {
        // A network section of earlier versions reads as it did, and writes the same JSON.
        let old = r#"{"blocks":4,"channels":48,"policy_channels":2,"value_channels":1,"value_hidden":64}"#;
        let cfg: NetConfig = serde_json::from_str(old).unwrap();
        assert_eq!(cfg, NetConfig::default());
        assert!(!cfg.has_new_parts());
        assert_eq!(serde_json::to_string(&cfg).unwrap(), old);
        // The new keys, as whole numbers (switches 0 or 1), written back the same way.
        let cfg = NetConfig::from_yaml_str(
            "network:\n  blocks: 6\n  channels: 32\n  pool_every: 3\n  pool_channels: 8\n  \
             policy_pool: 1\n  value_pool: 1\n  ownership: 1\n  score: 1\n  wdl: 0\n  \
             reply: 1\n",
        )
        .unwrap();
        assert!(cfg.policy_pool && cfg.value_pool && cfg.ownership && cfg.score && cfg.reply);
        assert!(!cfg.wdl && cfg.has_new_parts());
        assert_eq!(cfg.pooling_blocks(), 2);
        assert!(cfg.pools_in_block(2) && cfg.pools_in_block(5) && !cfg.pools_in_block(0));
        let json = serde_json::to_value(&cfg).unwrap();
        assert_eq!(json["ownership"], 1);
        assert_eq!(json["pool_every"], 3);
        assert!(json.get("wdl").is_none());
        assert_eq!(serde_json::from_value::<NetConfig>(json).unwrap(), cfg);
        assert_eq!(
            cfg.plain(),
            NetConfig {
                blocks: 6,
                channels: 32,
                ..NetConfig::default()
            }
        );
        assert!(
            cfg.summary()
                .contains("2 pooling blocks of 8 pooled channels"),
            "{}",
            cfg.summary()
        );
    }

    #[test]
    fn pooling_keys_are_checked() {
        for (text, expect) in [
            ("ownership: 2", "give 0 (off) or 1 (on)"),
            (
                "ownership: true",
                "network: `ownership` is true: give 0 (off) or 1",
            ),
            (
                "soft_policy: 2",
                "network: `soft_policy` is 2: give 0 (off) or 1 (on)",
            ),
            ("soft_policy: 0.5", "`soft_policy` is 0.5: give 0"),
            ("soft_policy: -1", "`soft_policy` is -1: give 0"),
            ("soft_policy: on", "`soft_policy` is on: give 0"),
            ("pool_every: 2", "`pool_channels` is 0: pooling blocks"),
            ("pool_every: 2\n  pool_channels: 8", "`pool_channels` is 8"),
            ("policy_pool: 1", "`policy_pool: 1` pools"),
            (
                "pool_channels: 600",
                "`pool_channels` is 600, outside 0..=512",
            ),
        ] {
            let e = NetConfig::from_yaml_str(&format!(
                "network:\n  blocks: 2\n  channels: 8\n  {text}\n"
            ))
            .unwrap_err();
            assert!(e.contains(expect), "{text}: {e}");
        }
        // The soft policy switch, on and written back; off (0 or absent), the metadata of the
        // network without it.
        let on =
            NetConfig::from_yaml_str("network:\n  blocks: 2\n  channels: 8\n  soft_policy: 1\n")
                .unwrap();
        assert!(on.soft_policy && on.has_new_parts());
        assert_eq!(serde_json::to_value(&on).unwrap()["soft_policy"], 1);
        let off =
            NetConfig::from_yaml_str("network:\n  blocks: 2\n  channels: 8\n  soft_policy: 0\n")
                .unwrap();
        assert_eq!(
            serde_json::to_string(&off).unwrap(),
            serde_json::to_string(&on.plain()).unwrap()
        );
        assert!(!serde_json::to_string(&off).unwrap().contains("soft_policy"));
        // Pooling blocks of 7 of 8 channels, and a pooling head over a plain tower.
        for text in [
            "pool_every: 1\n  pool_channels: 7",
            "policy_pool: 1\n  pool_channels: 4",
        ] {
            NetConfig::from_yaml_str(&format!("network:\n  blocks: 2\n  channels: 8\n  {text}\n"))
                .unwrap();
        }
    }
}
