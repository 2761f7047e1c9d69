//! Reads the YAML configs in `configs/`. Each tool reads only the sections it owns, so one file
//! per game serves the engine and trainer-bridge alike; unknown keys inside a section are errors.

use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;

/// The YAML document at `path`.
pub fn load(path: &Path) -> anyhow::Result<serde_yaml::Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config {}", path.display()))?;
    serde_yaml::from_str(&text).with_context(|| format!("parsing config {}", path.display()))
}

/// Section `name` of `doc`, or its default when the file has no such section.
pub fn section<T: DeserializeOwned + Default>(
    doc: &serde_yaml::Value,
    name: &str,
    path: &Path,
) -> anyhow::Result<T> {
    match doc.get(name) {
        None | Some(serde_yaml::Value::Null) => Ok(T::default()),
        Some(v) => serde_yaml::from_value(v.clone())
            .with_context(|| format!("config {}: section `{name}`", path.display())),
    }
}

/// The Liuzhou start position under the config's `game` section.
pub fn liuzhou_start(
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<games::liuzhou::Liuzhou> {
    let rules: games::liuzhou::Rules = section(doc, "game", path)?;
    rules
        .validate()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("config {}: section `game`", path.display()))?;
    Ok(games::liuzhou::Liuzhou::new(rules))
}

/// The Go start position (empty board) under the config's `game` section.
pub fn go_start(doc: &serde_yaml::Value, path: &Path) -> anyhow::Result<games::go::GoState> {
    let rules: games::go::GoRules = section(doc, "game", path)?;
    games::go::GoState::new(rules)
        .with_context(|| format!("config {}: section `game`", path.display()))
}
