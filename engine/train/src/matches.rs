//! The loop's matches (gate and evaluation): several games at once, agents built from
//! `engine match`'s specs, and the pairings of the run's rating ladder.

use std::path::Path;

use anyhow::Context;
use games::Agent;
use infer::Precision;
use players::matchplay::{play_match_parallel, AgentPair, Colours, Openings};
use players::spec::{self as agents, AgentSpec, OwnPlayers};
use setup::models;

use crate::{ladder, progress, Setup, TrainConfig};

/// The loop plays its own models in fp32 whatever the config's precision: its models have no
/// int8 files unless `fit.int8` writes them, and a gate compares two models in one arithmetic.
pub(crate) const FP32: models::Overrides = models::Overrides {
    provider: None,
    precision: Some(Precision::Fp32),
    intra_threads: None,
};

/// The loop's matches (gate and evaluation): several games at once, agents built from
/// `engine match`'s specs.
pub(crate) struct Matches<'a> {
    setup: &'a Setup<'a>,
    /// Games played at once.
    parallel: u32,
    /// Each network's share of the cores (one side of a game thinks at a time).
    overrides: models::Overrides,
}

impl<'a> Matches<'a> {
    pub fn new(setup: &'a Setup<'a>, train: &TrainConfig) -> Self {
        let parallel = match train.match_parallel {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
            n => n,
        };
        Matches {
            setup,
            parallel,
            overrides: models::Overrides {
                precision: FP32.precision,
                ..models::Overrides::sharing_cores(parallel)
            },
        }
    }

    /// A's score against B over `games` games with colours alternating, each side given as
    /// (agent spec, seed). Pair k of agents gets seeds offset by 2k, so the result depends on
    /// the seeds and the number of games at once, not on the threads' timing.
    pub fn play<G: OwnPlayers>(
        &self,
        start: &G,
        (a, seed_a): (&str, u64),
        (b, seed_b): (&str, u64),
        games: u32,
        what: &str,
    ) -> anyhow::Result<f64> {
        let load_net = |model: Option<&Path>| {
            let model = model.context("the training loop names every model it plays")?;
            models::evaluator_with(
                start,
                &model.to_string_lossy(),
                self.setup.doc,
                self.setup.config_path,
                self.overrides,
            )
        };
        let agent = |spec: &str, seed: u64| -> anyhow::Result<Box<dyn Agent<G>>> {
            Ok(agents::build(
                &AgentSpec::parse(spec)?,
                spec,
                seed,
                &load_net,
            )?)
        };
        let mut pairs: Vec<AgentPair<G>> = Vec::new();
        for k in 0..u64::from(self.parallel.min(games)) {
            pairs.push((
                agent(a, seed_a.wrapping_add(2 * k))?,
                agent(b, seed_b.wrapping_add(2 * k))?,
            ));
        }
        let bar = progress(u64::from(games), what);
        let result = play_match_parallel(
            start,
            &mut pairs,
            games,
            10_000,
            Colours::Alternate,
            Openings::default(),
            |_, _, _, _| bar.inc(1),
        )?;
        bar.finish();
        tracing::info!(
            what,
            wins = result.wins,
            draws = result.draws,
            losses = result.losses,
            endings = %result.endings_text(),
            "match played"
        );
        Ok(result.score())
    }
}

/// The run's ladder results and how to add to them.
pub(crate) struct Rung<'a, 'm, G> {
    pub matches: &'a Matches<'m>,
    pub start: &'a G,
    pub games: u32,
    pub results: &'a mut Vec<ladder::LadderGames>,
}

impl<G: OwnPlayers> Rung<'_, '_, G> {
    /// Plays `a` against `b` (each a ladder name and an agent spec) unless they have met.
    pub fn play(
        &mut self,
        (a, a_spec): (&str, &str),
        (b, b_spec): (&str, &str),
        seed: u64,
        what: &str,
    ) -> anyhow::Result<()> {
        if ladder::played(self.results, a, b) {
            return Ok(());
        }
        let score = self.matches.play(
            self.start,
            (a_spec, seed),
            (b_spec, seed.wrapping_add(1)),
            self.games,
            what,
        )?;
        self.results.push(ladder::LadderGames {
            a: a.to_string(),
            b: b.to_string(),
            games: self.games,
            score: score * f64::from(self.games),
        });
        Ok(())
    }
}
