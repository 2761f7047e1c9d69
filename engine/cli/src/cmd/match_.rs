//! `engine match`: two agents play a series of games with alternating colours (or, in a Go
//! handicap match, the first agent Black in every game); prints wins, draws and losses with a
//! 95 % confidence interval of the score, and the first agent's results by colour.

use anyhow::Context;
use clap::Args as ClapArgs;
use std::path::{Path, PathBuf};

use games::Player;
use players::matchplay::{
    agent_label, play_match_parallel, Colours, GameRecord, MatchLog, MatchResult, Openings,
};
use players::spec::{self as agents, AgentSpec};
use progress::Progress;

use super::{config_reads, net_loader, with_default_network, ForGame, GameArgs, GameType, Loaded};

/// Play a match between two agents, swapping colours every game (Go with `--handicap N`: the
/// first agent is Black with N stones in every game).
///
/// Agents: `random[:seed=N]`; `mcts[:visits=N,time=S,threads=N,temp=T,cpuct=C,fpu=F,seed=N,
/// resign=V]` (MCTS with random playouts, no network); `net:model=PATH[,visits=N,time=S,
/// threads=N,batch=N,temp=T,cpuct=C,fpu=F,seed=N,resign=V]` (MCTS with a network; `model=uniform` is
/// a network-free stand-in with uniform priors and value 0).
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads(
        "its `game` section (the variant rules) and, for `net` agents, its `inference` section"
    )
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// The agent that plays first (Black; Red in Xiangqi) in the first game; results are given
    /// from its side. Agent specs: `random[:seed=N]`;
    /// `mcts[:visits=N,time=S,threads=N,temp=T,cpuct=C,fpu=F,seed=N,resign=V]` (random playouts, no
    /// network; 800 visits by default);
    /// `net:model=PATH|uniform[,visits=N,time=S,threads=N,batch=N,temp=T,cpuct=C,fpu=F,seed=N,resign=V]`
    /// (with a network; 200 visits by default; `batch`
    /// leaves per network call, by default about visits/12, at most the model's batch; `resign`
    /// gives up when the chosen move's value is below V, never by default); both also take the
    /// search keys `search=puct|gumbel`, `gumbel_m=N`, `decisive=1|0`, `captures=E` and
    /// `minimax=W` (weight of each move's minimax value beside its mean, 0 by default),
    /// `contempt=C` (a draw in the search costs the agent C, 0 by default), `score_utility=W`
    /// (weight of the score lead beside the value, with a network that has a score head; 0
    /// by default), `dynamic_score_utility=W` (weight of the lead over the one the root
    /// expects; 0 by default), `fpu=F` (an
    /// unvisited move is valued at its parent's mean less F, from -2 to 2; 0.25, Xiangqi 0),
    /// and in Xiangqi with `time` `guard=S` (alpha-beta checks each move in S of its time and
    /// plays its own move when the tree's scores more than `guard_margin=CP` below its best,
    /// 50 centipawns by default), in Liuzhou with `time` `handoff=K` (alpha-beta decides from K
    /// empty points of the placement on); `net` also takes `views=N` (each position evaluated
    /// as N of its symmetric images, the answers averaged; 1 by default); and a game's own kinds (Liuzhou and Xiangqi: `alphabeta:…`; Xiangqi: `fairy-stockfish:…` and
    /// `uci:cmd=COMMAND[,option.NAME=VALUE…][,go=LIMIT][,rankbase=0|1][,timeout=S]`, each
    /// option sent with setoption and checked, LIMIT `depth N`, `movetime MS` or `nodes N`,
    /// e.g. `uci:cmd=fairy-stockfish,option.UCI_Variant=xiangqi,go=depth 6`; Go and Liuzhou:
    /// `gtp:cmd=COMMAND[,setup=COMMAND;COMMAND…][,timeout=S]`, the setup commands sent once
    /// it starts, e.g. `gtp:cmd=gnugo --mode gtp,setup=level 1` or `gtp:cmd=engine gtp --game
    /// liuzhou --agent alphabeta`, and its `resign` answers counted as resignations; a
    /// Liuzhou program that answers `genmove` with an error, with text that is no action or
    /// with an illegal action loses that game, said as a forfeit). A program named without a
    /// path is looked for on the PATH, then in /usr/games.
    #[arg(long)]
    black: AgentSpec,
    /// The agent that plays second (White; Black in Xiangqi) in the first game (a spec as for
    /// `--black`).
    #[arg(long)]
    white: AgentSpec,
    /// Number of games; colours alternate, so an even number gives each side each colour
    /// equally often.
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Seed for agents whose spec gives none (the two agents get different seeds from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A game still running after this many actions is scored a draw (a safety net: every
    /// game's rules end it sooner).
    #[arg(long, default_value_t = 100_000)]
    max_actions: usize,
    /// Start each pair of games (the two with swapped colours) from a position N uniformly
    /// random actions in, drawn from --seed and the pair's number: agents that choose
    /// deterministically would otherwise repeat the same two games. 0 plays from the start.
    #[arg(long, default_value_t = 0, value_name = "N")]
    openings: usize,
    /// Games played at once, each pair of agents on a thread of its own (networks loaded once
    /// per pair, each with its share of the cores). Game k still gives Black to the first
    /// agent when k is odd, so the colours stay balanced; agents whose spec has no `seed=` get
    /// a different seed per pair.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    parallel: u32,
    /// Save the games to FILE in the game's record format, in the order of their numbers:
    /// PGN with ICCS moves for Xiangqi, an SGF collection for Go, tag pairs with LFEN and the
    /// actions for Liuzhou. The file is rewritten (through a temporary file) after every game,
    /// so a stopped match keeps the games it finished.
    #[arg(long, visible_aliases = ["pgn", "sgf"], value_name = "FILE")]
    record: Option<PathBuf>,
    /// Go: the first agent (`--black`) takes Black with N handicap stones (the fixed placement
    /// of GTP's fixed_handicap, 2 to 9 on odd boards from 9 × 9, up to 4 on others from 7 × 7)
    /// in every game, and White moves first; colours do not alternate. Komi is the config's
    /// `game.komi`. `gtp:` agents are sent the stones with set_free_handicap.
    #[arg(long, value_name = "N")]
    handicap: Option<usize>,
    /// The arithmetic of `net` agents' networks, in place of the config's
    /// `inference.precision`: fp32 (the file named), int8 (the quantised file beside it) or
    /// auto (int8 where that file is there, the built-in configs' choice). A `model=` that
    /// names an int8 file (`….int8.onnx`) plays it whatever this says.
    #[arg(long)]
    precision: Option<infer::Precision>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games > 0, "--games must be at least 1");
    args.game.dispatch(&args)
}

impl ForGame for &Args {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let load = net_loader(&start, &c.doc, &c.path, self.parallel, self.precision);
        run_match(&start, self, &load)
    }
}

fn run_match<G: GameType>(
    start: &G,
    args: &Args,
    load_net: agents::NetLoader<'_, G>,
) -> anyhow::Result<()> {
    let name_a = agent_label(&args.black, "black");
    let name_b = agent_label(&args.white, "white");
    let handicapped;
    let (start, colours) = match args.handicap {
        Some(n) => {
            handicapped = start.handicap_start(n).context("--handicap")?;
            (&handicapped, Colours::AFirst)
        }
        None => (start, Colours::Alternate),
    };
    let workers = args.parallel.min(args.games);
    let black = with_default_network(&args.black, start);
    let white = with_default_network(&args.white, start);
    let mut pairs = Vec::new();
    for k in 0..u64::from(workers) {
        let seed = args.seed.wrapping_add(2 * k);
        let a = agents::build(&black, &name_a, seed, load_net).context("--black")?;
        let b =
            agents::build(&white, &name_b, seed.wrapping_add(1), load_net).context("--white")?;
        pairs.push((a, b));
    }
    let colour_text = match args.handicap {
        Some(n) => format!("handicap {n}: {name_a} is Black with {n} stones in every game"),
        None => format!("colours alternate ({name_a} is Black in odd-numbered games)"),
    };
    outln!(
        "{}: {name_a} vs {name_b}, {} games, {colour_text}{}",
        G::NAME,
        args.games,
        if workers > 1 {
            format!(", {workers} at a time")
        } else {
            String::new()
        }
    )?;
    let bar = Progress::new(u64::from(args.games), "match", "games");
    // A path that cannot be written fails now, not after the first game.
    let log = MatchLog::new(
        [&name_a, &name_b],
        G::SIDES,
        args.max_actions,
        args.record.as_deref(),
    )
    .with_context(|| {
        let path = args.record.as_deref().unwrap_or(Path::new(""));
        format!("--record: cannot write {}", path.display())
    })?;
    let show = |g: u32, game: &GameRecord<G>, a_plays: Player, r: &MatchResult| {
        if let Err(e) = log.add(g, game, a_plays) {
            let path = args.record.as_deref().map(|p| p.display().to_string());
            tracing::error!(
                "cannot write the record file {}: {e}",
                path.unwrap_or_default()
            );
        }
        bar.set_message(format!(
            "+{} ={} -{}  score {:.3}",
            r.wins,
            r.draws,
            r.losses,
            r.score()
        ));
        bar.inc(1);
    };
    // One pair plays the games in turn on a thread of its own; several share them out.
    let result = play_match_parallel(
        start,
        &mut pairs,
        args.games,
        args.max_actions,
        colours,
        Openings {
            moves: args.openings,
            seed: args.seed,
        },
        show,
    )?;
    bar.finish();
    let title = match args.handicap {
        Some(n) => format!("{name_a} vs {name_b} (handicap {n}, {name_a} Black in every game)"),
        None => format!("{name_a} vs {name_b}"),
    };
    print_result(&title, &result, G::SIDES)?;
    for line in log.forfeits() {
        outln!("{line}")?;
    }
    for (a, b) in &pairs {
        for summary in [a.summary(), b.summary()].into_iter().flatten() {
            outln!("{summary}")?;
        }
    }
    Ok(())
}

/// The result lines; `title` names the two agents (and a handicap), `sides` the game's colours.
fn print_result(title: &str, r: &MatchResult, sides: [&str; 2]) -> anyhow::Result<()> {
    let (lo, hi) = r.confidence95();
    outln!(
        "{title}: {} wins, {} draws, {} losses ({} games)",
        r.wins,
        r.draws,
        r.losses,
        r.games()
    )?;
    outln!(
        "score {:.3} (win 1, draw 1/2), 95% confidence interval [{lo:.3}, {hi:.3}], Elo difference {:+.0}",
        r.score(),
        r.elo()
    )?;
    outln!("by colour: {}", r.by_side_text(sides))?;
    if !r.endings.is_empty() {
        outln!("endings: {}", r.endings_text())?;
    }
    if r.capped > 0 {
        outln!(
            "warning: {} games hit --max-actions and were scored draws",
            r.capped
        )?;
    }
    if r.repeats() > 0 {
        outln!(
            "warning: {} of {} games repeat an earlier one move for move (same start, same \
             colours): the interval counts them as new evidence; vary the starts with --openings",
            r.repeats(),
            r.games()
        )?;
    }
    Ok(())
}
