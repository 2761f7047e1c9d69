//! How well a Go network's ownership head foresees who owns each point at the end: on finished
//! games (an SGF collection, such as `engine match --sgf` writes), GNU Go's verdict on the final
//! position (`final_status_list` of alive, dead and seki stones and of each side's territory)
//! against the network's ownership of the final position and of positions earlier in the game.
//!
//! ```sh
//! cargo run --release -p engine --example go_ownership -- \
//!     --model runs/go-any/any2.onnx --sgf games.sgf --at 0.5,0.75,0.9,1
//! ```
//! A point GNU Go gives to a side counts as agreed where the network's ownership has that
//! side's sign; dame and seki points are left out. `--at F` reads the network after the first
//! F of the game's moves (1: the final position).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use eval::Evaluator;
use games::go::sgf::read_records;
use games::go::{color_letter, GoRules, GoState, Point};
use games::{Encoding, Game, Player};
use infer::{OrtEvaluator, OrtOptions, Precision};
use players::gtp_client::GtpClient;

struct Args {
    model: PathBuf,
    sgf: PathBuf,
    gnugo: String,
    at: Vec<f64>,
    precision: Precision,
}

fn parse_args() -> anyhow::Result<Args> {
    let (mut model, mut sgf) = (None, None);
    let mut gnugo = "gnugo --mode gtp --chinese-rules".to_owned();
    let mut at = vec![0.5, 0.75, 0.9, 1.0];
    let mut precision = Precision::Fp32;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--model" => model = Some(value.into()),
            "--sgf" => sgf = Some(value.into()),
            "--gnugo" => gnugo = value,
            "--precision" => {
                precision = match value.as_str() {
                    "fp32" => Precision::Fp32,
                    "int8" => Precision::Int8,
                    _ => bail!("--precision: fp32 or int8, not {value}"),
                }
            }
            "--at" => {
                at = value
                    .split(',')
                    .map(|t| match t.parse::<f64>() {
                        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                        _ => bail!("--at: fractions from 0 to 1, not {t}"),
                    })
                    .collect::<Result<_, _>>()?
            }
            _ => bail!("unknown flag {flag}"),
        }
    }
    Ok(Args {
        model: model.context("--model PATH (an ONNX Go network with an ownership head)")?,
        sgf: sgf.context("--sgf FILE (finished games)")?,
        gnugo,
        at,
        precision,
    })
}

/// GNU Go's owner of every point of `state` (`row · N + col`): +1 Black, −1 White, 0 dame or
/// seki. Stones alive are their colour's, dead ones the other's, territory its side's.
fn gnugo_owners(
    gnugo: &mut GtpClient,
    state: &GoState,
    moves: &[String],
) -> anyhow::Result<Vec<i8>> {
    let n = state.size();
    gnugo.send(&format!("boardsize {n}"))?;
    gnugo.send("clear_board")?;
    gnugo.send(&format!("komi {}", state.komi()))?;
    for m in moves {
        gnugo.send(m)?;
    }
    let mut owners = vec![0i8; n * n];
    let colour = |p: Point| match state.stone_at(p) {
        Some(Player::First) => 1,
        Some(Player::Second) => -1,
        None => 0,
    };
    for (list, owner) in [
        ("black_territory", Some(1)),
        ("white_territory", Some(-1)),
        ("alive", None),
        ("dead", None),
    ] {
        let answer = gnugo.send(&format!("final_status_list {list}"))?;
        for vertex in answer.split_whitespace() {
            let p = Point::parse_gtp(vertex, n)
                .with_context(|| format!("final_status_list {list}: {vertex}"))?;
            let stone = colour(p);
            owners[p.row as usize * n + p.col as usize] = match (list, owner) {
                (_, Some(o)) => o,
                ("alive", _) => stone,
                _ => -stone,
            };
        }
    }
    Ok(owners)
}

/// Agreement counts at one point of the games.
#[derive(Default, Clone)]
struct Tally {
    owned: usize,
    agreed: usize,
    /// Owned points where the network is sure (|ownership| ≥ 0.5), and how many of those agree.
    sure: usize,
    sure_agreed: usize,
}

fn main() -> anyhow::Result<()> {
    // Fetches ONNX Runtime's library on first use, as the engine does.
    provision::install();
    let args = parse_args()?;
    let text = std::fs::read_to_string(&args.sgf)
        .with_context(|| format!("reading {}", args.sgf.display()))?;
    let mut gnugo = GtpClient::spawn(&args.gnugo).context("starting GNU Go")?;
    let mut nets: HashMap<usize, OrtEvaluator<GoState>> = HashMap::new();
    let mut tallies = vec![Tally::default(); args.at.len()];
    let mut games = 0;
    // Records carry their own size and komi; the rules only fill in what a record leaves out.
    for (i, record) in read_records(&text, &GoRules::with_size(9))
        .into_iter()
        .enumerate()
    {
        let record = record.with_context(|| format!("game {}", i + 1))?;
        let last = record.final_state();
        let n = last.size();
        if let Entry::Vacant(slot) = nets.entry(n) {
            let opts = OrtOptions {
                batch_size: 1,
                precision: args.precision,
                ..Default::default()
            };
            let net = OrtEvaluator::load(&args.model, &record.start, &opts)
                .with_context(|| format!("{} at {n}x{n}", args.model.display()))?;
            if !net.heads().ownership {
                bail!("{} has no ownership head", args.model.display());
            }
            slot.insert(net);
        }
        let net = &nets[&n];
        let moves: Vec<String> = {
            let mut s = record.start.clone();
            record
                .actions
                .iter()
                .map(|&a| {
                    let line = format!("play {} {}", color_letter(s.to_act()), a.to_gtp());
                    s.play_unchecked(a);
                    line
                })
                .collect()
        };
        let owners = gnugo_owners(&mut gnugo, &last, &moves)?;
        games += 1;
        for (k, &f) in args.at.iter().enumerate() {
            let upto = (f * record.actions.len() as f64).round() as usize;
            let mut state = record.start.clone();
            for &a in &record.actions[..upto] {
                state.play_unchecked(a);
            }
            let (mut policy, mut value) = (vec![0.0; state.shape().policy_size], [0.0]);
            let aux = net.evaluate_aux(&[&state], &mut policy, &mut value)?;
            let own = aux.ownership_of(0, n * n).context("no ownership")?;
            // The ownership is the player to move's; +1 here: Black's.
            let black = if state.to_act() == Player::First {
                1.0
            } else {
                -1.0
            };
            let t = &mut tallies[k];
            for (cell, &o) in owners.iter().enumerate() {
                if o == 0 {
                    continue;
                }
                let mine = black * own[cell];
                let agree = mine * f32::from(o) > 0.0;
                t.owned += 1;
                t.agreed += usize::from(agree);
                if mine.abs() >= 0.5 {
                    t.sure += 1;
                    t.sure_agreed += usize::from(agree);
                }
            }
        }
    }
    gnugo.send("quit").ok();
    println!("games {games}, model {}", args.model.display());
    println!("at    owned points  agreement  sure share  agreement where sure");
    for (f, t) in args.at.iter().zip(&tallies) {
        let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        println!(
            "{f:<5} {:>12}  {:>9.3}  {:>10.3}  {:>20.3}",
            t.owned,
            share(t.agreed, t.owned),
            share(t.sure, t.owned),
            share(t.sure_agreed, t.sure)
        );
    }
    Ok(())
}
