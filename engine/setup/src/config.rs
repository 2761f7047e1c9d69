//! Reads the YAML configs. The files in `configs/` are compiled into the engine ([`BUILT_IN`]):
//! with no `--config`, a tool reads the built-in file of its game; a file given with
//! `--config` is merged over it ([`effective`]), so a file naming one key changes that key
//! alone. Each tool reads only the sections it owns, so one file per game serves the engine
//! and trainer-bridge alike. A file must be a mapping of known sections; unknown sections and
//! unknown keys inside a section are errors, and so are values out of range. Every error names
//! the file, the section and the key.

use std::path::{Path, PathBuf};

use eval::InvalidSetting;
use infer::OrtOptions;
use selfplay::SelfplayConfig;
use serde::de::DeserializeOwned;

/// Every top-level section any tool reads. One list for all files: a section's owner may be
/// trainer-bridge (`network`, `fit`) or `engine serve` (`serve`, `games`, `models`), and a
/// misspelt section would otherwise silently leave its owner with defaults.
pub const SECTIONS: [&str; 11] = [
    "game",
    "bootstrap",
    "gtp",
    "inference",
    "selfplay",
    "network",
    "fit",
    "train",
    "serve",
    "games",
    "models",
];

/// The files of `configs/`, compiled in: each game's, and `serve`'s. Every key is commented
/// there.
pub const BUILT_IN: [(&str, &str); 4] = [
    ("liuzhou", include_str!("../../../configs/liuzhou.yaml")),
    ("xiangqi", include_str!("../../../configs/xiangqi.yaml")),
    ("go", include_str!("../../../configs/go.yaml")),
    ("serve", include_str!("../../../configs/serve.yaml")),
];

/// The built-in config `name` (a game's name, or `serve`) as shipped, comments and all.
pub fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// What stands for the built-in config `name` where a message names a file.
pub fn built_in_path(name: &str) -> PathBuf {
    PathBuf::from(format!("built-in configs/{name}.yaml"))
}

/// `over` merged into `base`: where both hold a mapping under a key, the two mappings are
/// merged key by key, at any depth; any other value of `over` (a number, a list, `~`)
/// replaces `base`'s.
pub fn merge(base: &mut serde_yaml::Value, over: serde_yaml::Value) {
    use serde_yaml::Value;
    match (base, over) {
        (Value::Mapping(base), Value::Mapping(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

/// The config a tool reads for `name` (a game's name, or `serve`): the built-in file, with
/// `file` (a document read with [`load`], and its path) merged over it. The path returned is
/// the one errors name: the file's when one is given (values it leaves out are the built-in
/// ones), else [`built_in_path`].
pub fn effective(
    name: &str,
    file: Option<(serde_yaml::Value, &Path)>,
) -> Result<(serde_yaml::Value, PathBuf), ConfigError> {
    let text = built_in(name).ok_or_else(|| ConfigError::NoBuiltIn {
        name: name.to_owned(),
    })?;
    let mut doc = parse(text, &built_in_path(name))?;
    match file {
        Some((over, path)) => {
            merge(&mut doc, over);
            Ok((doc, path.to_owned()))
        }
        None => Ok((doc, built_in_path(name))),
    }
}

/// [`effective`] for the file at `file`, if any: what a command given `--config FILE` (or none)
/// reads for `name`.
pub fn read(name: &str, file: Option<&Path>) -> Result<(serde_yaml::Value, PathBuf), ConfigError> {
    match file {
        Some(path) => effective(name, Some((load(path)?, path))),
        None => effective(name, None),
    }
}

/// The game a config document names in `game.name`, if any.
pub fn named_game(doc: &serde_yaml::Value) -> Option<&str> {
    doc.get("game")?.get("name")?.as_str()
}

/// Why a config file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config {path}: cannot read it: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("config {path}: not valid YAML: {error}")]
    Parse {
        path: PathBuf,
        error: serde_yaml::Error,
    },
    #[error("config {path}: {found}; a config is a mapping of sections such as `selfplay:`")]
    NotMapping { path: PathBuf, found: &'static str },
    #[error("config {path}: unknown section `{key}` (known: {})", SECTIONS.join(", "))]
    UnknownSection { path: PathBuf, key: String },
    #[error("config {path}: section `{section}`: {error}")]
    Section {
        path: PathBuf,
        section: &'static str,
        error: serde_yaml::Error,
    },
    #[error("config {path}: section `{section}`: {error}")]
    Invalid {
        path: PathBuf,
        section: &'static str,
        error: InvalidSetting,
    },
    #[error("no built-in config is called `{name}` (built in: liuzhou, xiangqi, go, serve)")]
    NoBuiltIn { name: String },
    #[error("config {path}: section `{section}`: {reason}")]
    Other {
        path: PathBuf,
        section: &'static str,
        reason: String,
    },
}

/// The YAML document at `path`: a mapping whose keys are all in [`SECTIONS`].
pub fn load(path: &Path) -> Result<serde_yaml::Value, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
        path: path.to_owned(),
        error,
    })?;
    parse(&text, path)
}

/// [`load`] for text already read.
pub fn parse(text: &str, path: &Path) -> Result<serde_yaml::Value, ConfigError> {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|error| ConfigError::Parse {
            path: path.to_owned(),
            error,
        })?;
    let not_mapping = |found| ConfigError::NotMapping {
        path: path.to_owned(),
        found,
    };
    use serde_yaml::Value;
    let map = match &doc {
        Value::Mapping(m) => m,
        // An empty file (or one of comments only) is a mistake, not "all defaults".
        Value::Null => return Err(not_mapping("the file is empty")),
        Value::Sequence(_) => return Err(not_mapping("the document is a list")),
        Value::Tagged(_) => return Err(not_mapping("the document is a tagged value")),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            return Err(not_mapping("the document is a single value"))
        }
    };
    for key in map.keys() {
        let known = key.as_str().is_some_and(|k| SECTIONS.contains(&k));
        if !known {
            let key = match key.as_str() {
                Some(k) => k.to_owned(),
                None => serde_yaml::to_string(key)
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
            };
            return Err(ConfigError::UnknownSection {
                path: path.to_owned(),
                key,
            });
        }
    }
    Ok(doc)
}

/// Section `name` of `doc`, or its default when the file has no such section (or leaves it
/// empty).
pub fn section<T: DeserializeOwned + Default>(
    doc: &serde_yaml::Value,
    name: &'static str,
    path: &Path,
) -> Result<T, ConfigError> {
    match doc.get(name) {
        None | Some(serde_yaml::Value::Null) => Ok(T::default()),
        Some(v) => serde_yaml::from_value(v.clone()).map_err(|error| ConfigError::Section {
            path: path.to_owned(),
            section: name,
            error,
        }),
    }
}

/// [`section`], then `validate`'s range checks.
pub fn checked<T: DeserializeOwned + Default>(
    doc: &serde_yaml::Value,
    name: &'static str,
    path: &Path,
    validate: impl FnOnce(&T) -> Result<(), InvalidSetting>,
) -> Result<T, ConfigError> {
    let value: T = section(doc, name, path)?;
    validate(&value).map_err(|error| invalid(path, name, error))?;
    Ok(value)
}

/// The error for `error` in section `section` of the file at `path`.
pub fn invalid(path: &Path, section: &'static str, error: InvalidSetting) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_owned(),
        section,
        error,
    }
}

/// The `selfplay` section, range-checked.
pub fn selfplay(doc: &serde_yaml::Value, path: &Path) -> Result<SelfplayConfig, ConfigError> {
    checked(doc, "selfplay", path, SelfplayConfig::validate)
}

/// The `inference` section, range-checked.
pub fn inference(doc: &serde_yaml::Value, path: &Path) -> Result<OrtOptions, ConfigError> {
    checked(doc, "inference", path, OrtOptions::validate)
}

/// The `network` section as written: trainer-bridge owns its meaning and checks it in full;
/// the engine only needs it present (trainer-bridge has no default network) and a mapping of
/// sizes, to compare with the network a run's models were made with.
pub fn network(doc: &serde_yaml::Value, path: &Path) -> Result<serde_yaml::Mapping, ConfigError> {
    let other = |reason: &str| ConfigError::Other {
        path: path.to_owned(),
        section: "network",
        reason: reason.to_owned(),
    };
    match doc.get("network") {
        None => Err(other(
            "missing; training needs the network's shape (blocks, channels, …)",
        )),
        Some(serde_yaml::Value::Mapping(m)) if !m.is_empty() => {
            for (k, v) in m {
                if !(k.is_string() && v.is_u64()) {
                    return Err(other(&format!(
                        "`{}` is {}; allowed: a whole number ≥ 0",
                        k.as_str().unwrap_or("?"),
                        serde_yaml::to_string(v).unwrap_or_default().trim()
                    )));
                }
            }
            Ok(m.clone())
        }
        Some(_) => Err(other("must be a mapping of sizes such as `channels: 48`")),
    }
}

/// The `game` section as `game`'s rules (`T`), its `name` key checked and left out. A config
/// says which game it is for (`name: liuzhou`) so that one game's file is never read as
/// another's with default rules; a file without a `game` section means the default rules.
pub fn rules<T: DeserializeOwned + Default>(
    doc: &serde_yaml::Value,
    path: &Path,
    game: &'static str,
) -> Result<T, ConfigError> {
    let other = |reason: String| ConfigError::Other {
        path: path.to_owned(),
        section: "game",
        reason,
    };
    let mut section = match doc.get("game") {
        None | Some(serde_yaml::Value::Null) => return Ok(T::default()),
        Some(serde_yaml::Value::Mapping(m)) => m.clone(),
        Some(_) => return Err(other("must be a mapping such as `name: go`".into())),
    };
    if let Some(name) = section.remove("name") {
        match name.as_str() {
            Some(n) if n == game => {}
            Some(n) => {
                return Err(other(format!(
                    "this file is for {n}, not {game} (give --game {n}, or a {game} config)"
                )))
            }
            None => return Err(other("`name` must be a game's name such as `go`".into())),
        }
    }
    if section.is_empty() {
        return Ok(T::default());
    }
    serde_yaml::from_value(serde_yaml::Value::Mapping(section)).map_err(|error| {
        ConfigError::Section {
            path: path.to_owned(),
            section: "game",
            error,
        }
    })
}

/// Xiangqi has no variant settings: its `game` section holds only its name.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct XiangqiRules {}

/// The Liuzhou start position under the config's `game` section.
pub fn liuzhou_start(
    doc: &serde_yaml::Value,
    path: &Path,
) -> Result<games::liuzhou::Liuzhou, ConfigError> {
    let rules: games::liuzhou::Rules = rules(doc, path, "liuzhou")?;
    rules.validate().map_err(|reason| ConfigError::Other {
        path: path.to_owned(),
        section: "game",
        reason,
    })?;
    Ok(games::liuzhou::Liuzhou::new(rules))
}

/// The Xiangqi start position, once the config's `game` section (if any) says Xiangqi.
pub fn xiangqi_start(
    doc: &serde_yaml::Value,
    path: &Path,
) -> Result<games::xiangqi::Xiangqi, ConfigError> {
    rules::<XiangqiRules>(doc, path, "xiangqi")?;
    Ok(games::xiangqi::Xiangqi::default())
}

/// The Go start position (empty board) under the config's `game` section.
pub fn go_start(doc: &serde_yaml::Value, path: &Path) -> Result<games::go::GoState, ConfigError> {
    let rules: games::go::GoRules = rules(doc, path, "go")?;
    games::go::GoState::new(rules).map_err(|e| ConfigError::Other {
        path: path.to_owned(),
        section: "game",
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str) -> String {
        parse(text, Path::new("x.yaml")).unwrap_err().to_string()
    }

    #[test]
    fn every_shipped_config_loads_and_its_sections_read() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
                continue;
            }
            let doc = load(&path).unwrap_or_else(|e| panic!("{e}"));
            // A game's config is read for its game (the file's name) and no other.
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap();
            match stem {
                "liuzhou" => liuzhou_start(&doc, &path).map(|_| ()).unwrap(),
                "xiangqi" => xiangqi_start(&doc, &path).map(|_| ()).unwrap(),
                "go" => go_start(&doc, &path).map(|_| ()).unwrap(),
                _ => assert!(doc.get("game").is_none(), "{stem}"),
            }
            if stem != "go" {
                assert!(go_start(&doc, &path).is_err() || doc.get("game").is_none());
            }
            selfplay(&doc, &path).unwrap_or_else(|e| panic!("{e}"));
            inference(&doc, &path).unwrap_or_else(|e| panic!("{e}"));
            if doc.get("train").is_some() {
                network(&doc, &path).unwrap_or_else(|e| panic!("{e}"));
            }
            seen += 1;
        }
        assert!(seen >= 4, "{seen} configs in {}", dir.display());
    }

    #[test]
    fn every_file_of_configs_is_built_in_and_reads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let yaml = path.extension().is_some_and(|x| x == "yaml");
                yaml.then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        names.sort();
        let mut built: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        built.sort();
        assert_eq!(names, built);
        for (name, text) in BUILT_IN {
            let (doc, path) = effective(name, None).unwrap();
            assert_eq!(path, built_in_path(name));
            assert_eq!(
                doc,
                serde_yaml::from_str::<serde_yaml::Value>(text).unwrap()
            );
            if name != "serve" {
                assert_eq!(named_game(&doc), Some(name));
            }
        }
        assert!(effective("chess", None)
            .unwrap_err()
            .to_string()
            .contains("no built-in config is called `chess`"));
    }

    #[test]
    fn a_partial_file_changes_only_the_keys_it_names() {
        let path = Path::new("mine.yaml");
        let (built, _) = effective("go", None).unwrap();
        let over = parse("selfplay: {c_puct: 2.5}\n", path).unwrap();
        let (doc, named) = effective("go", Some((over, path))).unwrap();
        assert_eq!(named, path);
        let mut expected = built.clone();
        expected["selfplay"]["c_puct"] = serde_yaml::Value::from(2.5);
        assert_eq!(doc, expected);
        assert_eq!(selfplay(&doc, path).unwrap().c_puct, 2.5);
        // Whole sections and lists are replaced only where the file says so; `~` resets.
        let over = parse(
            "bootstrap: {levels: [3]}\ntrain: {init_from: x.safetensors}\n",
            path,
        )
        .unwrap();
        let (doc, _) = effective("go", Some((over, path))).unwrap();
        assert_eq!(
            doc["bootstrap"]["levels"],
            serde_yaml::from_str::<serde_yaml::Value>("[3]").unwrap()
        );
        assert_eq!(doc["bootstrap"]["depth"], built["bootstrap"]["depth"]);
        assert_eq!(doc["train"]["init_from"], "x.safetensors");
        assert_eq!(doc["game"], built["game"]);
    }

    #[test]
    fn a_merged_config_is_checked_as_a_whole_and_errors_name_the_file() {
        let path = Path::new("mine.yaml");
        let merged = |text: &str| effective("liuzhou", Some((parse(text, path).unwrap(), path)));
        let (doc, p) = merged("selfplay: {c_putc: 2}").unwrap();
        let e = selfplay(&doc, &p).unwrap_err().to_string();
        assert!(
            e.starts_with("config mine.yaml: section `selfplay`: unknown field `c_putc`"),
            "{e}"
        );
        let (doc, p) = merged("inference: {batch_size: 0}").unwrap();
        let e = inference(&doc, &p).unwrap_err().to_string();
        assert!(
            e.contains("mine.yaml: section `inference`: `batch_size` is 0"),
            "{e}"
        );
        // Another game's name in the file is refused by that game's rules.
        let (doc, p) = merged("game: {name: go}").unwrap();
        let e = liuzhou_start(&doc, &p).unwrap_err().to_string();
        assert!(e.contains("this file is for go, not liuzhou"), "{e}");
        // Unknown sections are caught when the file is read, before any merge.
        assert!(parse("selfpaly: {}", path).is_err());
    }

    #[test]
    fn a_config_is_only_read_for_the_game_it_names() {
        let p = Path::new("x.yaml");
        let doc = |text: &str| parse(text, p).unwrap();
        // Named, unnamed, absent: all read for their own game.
        let named = doc("game: {name: liuzhou, lose_below: 4}");
        assert_eq!(
            liuzhou_start(&named, p).unwrap(),
            games::liuzhou::Liuzhou::new(games::liuzhou::Rules { lose_below: 4 })
        );
        assert!(liuzhou_start(&doc("game: {lose_below: 4}"), p).is_ok());
        assert!(xiangqi_start(&doc("game: {name: xiangqi}"), p).is_ok());
        assert!(xiangqi_start(&doc("selfplay: ~"), p).is_ok());
        assert_eq!(
            go_start(&doc("game: {name: go, size: 5}"), p)
                .unwrap()
                .rules()
                .size,
            5
        );
        // Another game's file, a name that is not text, rules Xiangqi does not have.
        for (result, needle) in [
            (
                xiangqi_start(&named, p).map(|_| ()),
                "x.yaml: section `game`: this file is for liuzhou, not xiangqi",
            ),
            (
                go_start(&doc("game: {name: xiangqi}"), p).map(|_| ()),
                "this file is for xiangqi, not go",
            ),
            (
                liuzhou_start(&doc("game: {name: 3}"), p).map(|_| ()),
                "`name` must be a game's name",
            ),
            (
                xiangqi_start(&doc("game: {name: xiangqi, size: 9}"), p).map(|_| ()),
                "unknown field `size`",
            ),
            (
                liuzhou_start(&doc("game: [1]"), p).map(|_| ()),
                "section `game`: must be a mapping",
            ),
        ] {
            let e = result.unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn a_file_that_is_not_a_mapping_of_known_sections_is_refused() {
        for (text, needle) in [
            ("", "x.yaml: the file is empty"),
            ("# only a comment\n", "the file is empty"),
            ("hello\n", "the document is a single value"),
            ("- 1\n- 2\n", "the document is a list"),
            (
                "selfpaly:\n  full_visits: 8\n",
                "x.yaml: unknown section `selfpaly` (known: game, bootstrap, gtp,",
            ),
            ("selfplay: ~\nxx:\n", "unknown section `xx`"),
            ("1: 2\n", "unknown section `1`"),
        ] {
            let e = parse_err(text);
            assert!(e.contains(needle), "{text:?}: {e}");
        }
        assert!(parse("selfplay: ~\ngame: {}\n", Path::new("x")).is_ok());
    }

    #[test]
    fn out_of_range_values_name_file_section_key_and_range() {
        let cases = [
            (
                "selfplay: {c_puct: .inf}",
                "section `selfplay`: `c_puct` is inf",
            ),
            (
                "selfplay: {c_puct: -3}",
                "`c_puct` is -3; allowed: a finite",
            ),
            ("selfplay: {dirichlet_alpha: 0}", "`dirichlet_alpha` is 0"),
            ("selfplay: {dirichlet_alpha: -1}", "`dirichlet_alpha` is -1"),
            (
                "selfplay: {dirichlet_epsilon: 2}",
                "`dirichlet_epsilon` is 2; allowed: 0 to 1",
            ),
            ("selfplay: {resign_threshold: 5}", "`resign_threshold` is 5"),
            (
                "selfplay: {draw_tiebreak_weight: .nan}",
                "`draw_tiebreak_weight` is NaN",
            ),
            (
                "inference: {batch_size: 0}",
                "section `inference`: `batch_size` is 0; allowed: 1 to 65536",
            ),
            (
                "inference: {intra_threads: 99999999999}",
                "`intra_threads` is 99999999999",
            ),
            ("inference: {device_id: -1}", "`device_id` is -1"),
            (
                "selfplay: {gumbel_m: 0}",
                "`gumbel_m` is 0; allowed: 1 to 65535",
            ),
            (
                "selfplay: {gumbel_c_visit: -5}",
                "`gumbel_c_visit` is -5; allowed: a finite number ≥ 0",
            ),
            (
                "selfplay: {gumbel_c_scale: 0}",
                "`gumbel_c_scale` is 0; allowed: a finite number > 0",
            ),
            (
                "selfplay: {search: alphazero}",
                "section `selfplay`: `search` is \"alphazero\"; allowed: puct or gumbel",
            ),
            ("selfplay: {backend: slurm}", "unknown variant `slurm`"),
            ("selfplay: {ray: {adress: x}}", "unknown field `adress`"),
            (
                "selfplay: {ray: {games_per_task: 0}}",
                "`ray.games_per_task` is 0; allowed: 1 or more",
            ),
        ];
        for (text, needle) in cases {
            let path = Path::new("cfg/x.yaml");
            let doc = parse(text, path).unwrap();
            let e = selfplay(&doc, path)
                .map(|_| ())
                .and_then(|_| inference(&doc, path).map(|_| ()))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("config cfg/x.yaml: section `"), "{e}");
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn the_selfplay_search_is_puct_unless_gumbel_is_asked_for() {
        let path = Path::new("s.yaml");
        let read = |text: &str| selfplay(&parse(text, path).unwrap(), path).unwrap();
        assert_eq!(read("selfplay: ~").search, selfplay::SearchKind::Puct);
        let g = read("selfplay: {search: gumbel, gumbel_m: 8, gumbel_c_scale: 0.1}");
        assert_eq!(g.search, selfplay::SearchKind::Gumbel);
        let s = g.search_config();
        assert_eq!((s.gumbel_m, s.gumbel_c_scale), (8, 0.1));
    }

    #[test]
    fn network_must_be_present_and_a_mapping_of_sizes() {
        let path = Path::new("n.yaml");
        let net = |text: &str| network(&parse(text, path).unwrap(), path);
        let e = net("train: {}").unwrap_err().to_string();
        assert!(e.contains("n.yaml: section `network`: missing"), "{e}");
        let e = net("network: 3").unwrap_err().to_string();
        assert!(e.contains("must be a mapping"), "{e}");
        let e = net("network: {channels: -2}").unwrap_err().to_string();
        assert!(e.contains("`channels` is -2"), "{e}");
        assert_eq!(net("network: {blocks: 1, channels: 8}").unwrap().len(), 2);
    }
}
