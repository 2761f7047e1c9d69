//! `engine serve`: the web page and its JSON API (see `crate::web`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use games::liuzhou::{Liuzhou, Rules};
use serde::Deserialize;

use crate::config;
use crate::web::{self, Starts};

/// Serve a page to play every game against the engine in a browser.
#[derive(ClapArgs)]
pub struct Args {
    /// Address to listen on (overrides the config's `serve.addr`). Loopback by default: the
    /// server has no authentication, so expose it only behind something that has.
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// Serve config (`configs/serve.yaml`): limits, strengths, and each game's config file.
    /// Without it the built-in defaults apply.
    #[arg(long)]
    config: Option<PathBuf>,
}

/// The `games` section: which config file gives each game's variant settings.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct GameConfigs {
    liuzhou: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (mut cfg, starts) = match &args.config {
        Some(path) => {
            let doc = config::load(path)?;
            let cfg: web::Config = config::section(&doc, "serve", path)?;
            let games: GameConfigs = config::section(&doc, "games", path)?;
            (cfg, starts(&games)?)
        }
        None => (web::Config::default(), Starts::default()),
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
    runtime.block_on(serve(cfg, starts))
}

fn starts(games: &GameConfigs) -> anyhow::Result<Starts> {
    let mut starts = Starts::default();
    if let Some(path) = &games.liuzhou {
        starts.liuzhou = Liuzhou::new(liuzhou_rules(path)?);
    }
    Ok(starts)
}

fn liuzhou_rules(path: &Path) -> anyhow::Result<Rules> {
    let doc = config::load(path)?;
    let rules: Rules = config::section(&doc, "game", path)?;
    rules
        .validate()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("config {}: game.lose_below", path.display()))?;
    Ok(rules)
}

async fn serve(cfg: web::Config, starts: Starts) -> anyhow::Result<()> {
    let addr = cfg.addr;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    // One line on stdout that scripts (the browser test) wait for and read the port from.
    println!("listening on http://{local}/");
    tracing::info!(%local, "serving");
    axum::serve(listener, web::router(cfg, starts))
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
