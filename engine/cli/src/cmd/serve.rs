//! `engine serve`: the web page and its JSON API (see `crate::web`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args as ClapArgs;
use eval::Evaluator;
use games::Encoding;
use serde::Deserialize;

use faces::web::{self, Setups};
use setup::config;
use setup::models;

/// Serve a page to play every game against the engine in a browser.
#[derive(ClapArgs)]
pub struct Args {
    /// Address to listen on (overrides the config's `serve.addr`). Loopback by default: the
    /// server has no authentication, so expose it only behind something that has.
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// Serve config: limits, strengths, each game's config file and model; the keys it names
    /// replace those of the built-in configs/serve.yaml.
    #[arg(long)]
    config: Option<PathBuf>,
}

/// The `games` section: which config file gives each game's variant settings (and, for a
/// network, its `inference` settings), merged over the game's built-in config.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct GameConfigs {
    liuzhou: Option<PathBuf>,
    xiangqi: Option<PathBuf>,
    go: Option<PathBuf>,
}

/// The `models` section: the ONNX model each game's `net` agent plays with; a game left out
/// plays its default network, if it has one.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ModelPaths {
    liuzhou: Option<PathBuf>,
    xiangqi: Option<PathBuf>,
    go: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (doc, path) = config::read("serve", args.config.as_deref())?;
    let mut cfg: web::Config = config::section(&doc, "serve", &path)?;
    let games: GameConfigs = config::section(&doc, "games", &path)?;
    let models: ModelPaths = config::section(&doc, "models", &path)?;
    let setups = setups(&games, &models)?;
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

/// Reads the sections `engine serve` reads from `doc` (for `engine config show --serve`).
pub fn check(doc: &serde_yaml::Value, path: &Path) -> anyhow::Result<()> {
    let cfg: web::Config = config::section(doc, "serve", path)?;
    cfg.validate()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("config {}: section `serve`", path.display()))?;
    config::section::<GameConfigs>(doc, "games", path)?;
    config::section::<ModelPaths>(doc, "models", path)?;
    Ok(())
}

fn setups(games: &GameConfigs, models: &ModelPaths) -> anyhow::Result<Setups> {
    let mut setups = Setups::default();
    let (doc, path) = game_config("liuzhou", &games.liuzhou)?;
    setups.liuzhou.start = config::liuzhou_start(&doc, &path)?;
    setups.liuzhou.net = network(&setups.liuzhou.start, &models.liuzhou, &doc, &path)?;
    // Xiangqi has no variant settings; its config names the game and sets inference.
    let (doc, path) = game_config("xiangqi", &games.xiangqi)?;
    config::xiangqi_start(&doc, &path)?;
    setups.xiangqi.net = network(&setups.xiangqi.start, &models.xiangqi, &doc, &path)?;
    let (doc, path) = game_config("go", &games.go)?;
    setups.go.start = config::go_start(&doc, &path)?;
    setups.go.net = network(&setups.go.start, &models.go, &doc, &path)?;
    Ok(setups)
}

/// The game's config: its built-in one, with the file of the `games` section merged over it.
fn game_config(game: &str, file: &Option<PathBuf>) -> anyhow::Result<(serde_yaml::Value, PathBuf)> {
    let read = config::read(game, file.as_deref());
    read.with_context(|| format!("config section `games`: {game}"))
}

/// The game's network, loaded once at startup and shared by its sessions: the `models`
/// section's, else the game's default one where it plays `start`'s board, as `engine gtp` and
/// `engine play` choose it ([`models::default_network_for`]: a network of any size plays
/// every Go board; one made for another board is passed over with one warning).
fn network<G: Encoding>(
    start: &G,
    model: &Option<PathBuf>,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Option<Arc<dyn Evaluator<G>>>> {
    let fallback = "no `net` agent (alpha-beta for Xiangqi, else mcts)";
    let model = match model {
        Some(m) => m.to_string_lossy().into_owned(),
        None => match models::default_network_for(start, fallback) {
            Some(place) => place.model(),
            None => return Ok(None),
        },
    };
    let net = models::evaluator(start, &model, doc, config_path)
        .with_context(|| format!("config section `models`: {}", G::NAME))?;
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
