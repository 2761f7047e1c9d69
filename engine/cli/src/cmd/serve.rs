//! `engine serve`: the web page and its JSON API (see `crate::web`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args as ClapArgs;
use eval::Evaluator;
use games::Game;
use serde::Deserialize;

use faces::web::{self, Setups};
use setup::config;
use setup::models;

/// The config read when `--config` is not given, if it exists (relative to the directory the
/// server runs in, as the paths inside it are).
const DEFAULT_CONFIG: &str = "configs/serve.yaml";

/// Serve a page to play every game against the engine in a browser.
#[derive(ClapArgs)]
pub struct Args {
    /// Address to listen on (overrides the config's `serve.addr`). Loopback by default: the
    /// server has no authentication, so expose it only behind something that has.
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// Serve config: limits, strengths, each game's config file and model [default:
    /// configs/serve.yaml if it is there, else the built-in defaults, which load no model].
    #[arg(long)]
    config: Option<PathBuf>,
}

/// The `games` section: which config file gives each game's variant settings (and, for a
/// network, its `inference` settings).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct GameConfigs {
    liuzhou: Option<PathBuf>,
    xiangqi: Option<PathBuf>,
    go: Option<PathBuf>,
}

/// The `models` section: the ONNX model each game's `net` agent plays with.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ModelPaths {
    liuzhou: Option<PathBuf>,
    xiangqi: Option<PathBuf>,
    go: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let default = PathBuf::from(DEFAULT_CONFIG);
    let path = args
        .config
        .clone()
        .or_else(|| default.exists().then_some(default));
    let (mut cfg, setups) = match &path {
        Some(path) => {
            let doc = config::load(path)?;
            let cfg: web::Config = config::section(&doc, "serve", path)?;
            let games: GameConfigs = config::section(&doc, "games", path)?;
            let models: ModelPaths = config::section(&doc, "models", path)?;
            (cfg, setups(&games, &models)?)
        }
        None => {
            tracing::info!("no {DEFAULT_CONFIG}: built-in defaults, no models");
            (web::Config::default(), Setups::default())
        }
    };
    if let Some(addr) = args.addr {
        cfg.addr = addr;
    }
    cfg.validate()
        .map_err(anyhow::Error::msg)
        .context("config section `serve`")?;
    if !cfg.addr.ip().is_loopback() {
        tracing::warn!(addr = %cfg.addr, "listening beyond loopback: anyone who reaches this address can use the server");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(cfg, setups))
}

fn setups(games: &GameConfigs, models: &ModelPaths) -> anyhow::Result<Setups> {
    let mut setups = Setups::default();
    let (doc, path) = game_config(&games.liuzhou)?;
    if games.liuzhou.is_some() {
        setups.liuzhou.start = config::liuzhou_start(&doc, &path)?;
    }
    setups.liuzhou.net = network(&setups.liuzhou.start, &models.liuzhou, &doc, &path)?;
    // Xiangqi has no variant settings; its config names the game and sets inference.
    let (doc, path) = game_config(&games.xiangqi)?;
    if games.xiangqi.is_some() {
        config::xiangqi_start(&doc, &path)?;
    }
    setups.xiangqi.net = network(&setups.xiangqi.start, &models.xiangqi, &doc, &path)?;
    let (doc, path) = game_config(&games.go)?;
    if games.go.is_some() {
        setups.go.start = config::go_start(&doc, &path)?;
    }
    setups.go.net = network(&setups.go.start, &models.go, &doc, &path)?;
    Ok(setups)
}

/// The game's config document and path; an empty document when none is named.
fn game_config(path: &Option<PathBuf>) -> anyhow::Result<(serde_yaml::Value, PathBuf)> {
    match path {
        Some(p) => Ok((config::load(p)?, p.clone())),
        None => Ok((serde_yaml::Value::Null, PathBuf::from("(defaults)"))),
    }
}

/// The game's network, loaded once at startup and shared by its sessions.
fn network<G: Game>(
    start: &G,
    model: &Option<PathBuf>,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Option<Arc<dyn Evaluator<G>>>> {
    let Some(model) = model else {
        return Ok(None);
    };
    let net = models::evaluator(start, &model.to_string_lossy(), doc, config_path)
        .with_context(|| format!("config section `models`: {}", G::NAME))?;
    tracing::info!(game = G::NAME, model = %model.display(), "network loaded");
    Ok(Some(net))
}

async fn serve(cfg: web::Config, setups: Setups) -> anyhow::Result<()> {
    let addr = cfg.addr;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    // One line on stdout that scripts (the browser test) wait for and read the port from.
    outln!("listening on http://{local}/")?;
    tracing::info!(%local, "serving");
    axum::serve(listener, web::router(cfg, setups))
        .with_graceful_shutdown(async {
            // If the signal cannot be installed, run until killed.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            tracing::info!("shutting down");
        })
        .await
        .context("serving")
}
