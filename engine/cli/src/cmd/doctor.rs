//! `engine doctor`: what this engine would use, from this directory, in this environment.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use infer::{OrtModel, OrtOptions, Provider};
use setup::{config, models};

use super::GameKind;

/// Report the engine's version, where each game's config and network come from, the ONNX
/// Runtime library and execution providers, and the oracle programs found.
#[derive(ClapArgs)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    outln!("engine {}", env!("CARGO_PKG_VERSION"))?;
    outln!("configs and networks, per game (`engine config path`, `engine models list`):")?;
    for game in GameKind::ALL {
        let name = game.name();
        let doc = config::effective(name, None).map(|(doc, _)| doc);
        let provider = doc
            .as_ref()
            .ok()
            .and_then(|d| {
                d.get("inference")?
                    .get("provider")?
                    .as_str()
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "cpu".into());
        let network = match models::places(name).into_iter().find(|p| p.found) {
            Some(p) => format!("{} ({})", p.location(), p.source.name()),
            None => "none (uniform priors or random playouts instead)".into(),
        };
        outln!("  {name:<8} config: built-in configs/{name}.yaml (inference.provider {provider}); --config FILE merges over it")?;
        outln!("  {:<8} network: {network}", "")?;
    }
    outln!("ONNX Runtime:")?;
    match infer::runtime::find_library() {
        Err(e) => outln!("  library: {e}")?,
        Ok(None) => outln!(
            "  library: none yet; the first model load fetches onnxruntime=={} from PyPI into {}",
            infer::runtime::ORT_VERSION,
            infer::runtime::cache_dir().display()
        )?,
        Ok(Some(path)) => runtime_report(&path)?,
    }
    outln!("oracles (tests and teachers):")?;
    for program in ["fairy-stockfish", "gnugo"] {
        match find_program(program) {
            Some(p) => outln!("  {program:<16} {}", p.display())?,
            None => outln!("  {program:<16} not found (PATH, /usr/games)")?,
        }
    }
    Ok(())
}

/// The library at `path`, its version and what each execution provider does with the built-in
/// Liuzhou network.
fn runtime_report(path: &Path) -> anyhow::Result<()> {
    let from = infer::runtime::places()
        .into_iter()
        .find(|(_, p)| p == path)
        .map_or("", |(what, _)| what);
    outln!("  library: {} ({from})", path.display())?;
    match infer::runtime::version() {
        Ok(v) => outln!("  version: {v}")?,
        Err(e) => return outln!("  cannot load it: {e}"),
    }
    let Some(net) = models::built_in("liuzhou") else {
        return Ok(());
    };
    for provider in Provider::ALL {
        let opts = OrtOptions {
            batch_size: 1,
            provider,
            allow_fallback: false,
            ..OrtOptions::default()
        };
        let name = PathBuf::from("built-in models/liuzhou/best.onnx");
        let verdict = match OrtModel::from_bytes(&name, net, &opts) {
            Ok(_) => "runs".to_owned(),
            Err(e) => format!("cannot run: {e}"),
        };
        outln!("  provider {:<8} {verdict}", provider.as_str())?;
    }
    Ok(())
}

/// `program` on the `PATH`, else in `/usr/games` (Debian's games directory, often not on the
/// `PATH`).
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
