//! Self-play positions/s by number of pipeline groups, against a stand-in for a GPU: a network
//! whose calls take a fixed time, one at a time (one device), without using a core. Shows how
//! much of the tree work the groups hide behind the network's calls on the machine it runs on:
//!
//! `cargo run --release -p selfplay --example pipeline -- [call-ms] [games] [groups...]`
//!
//! (defaults: 4 ms a call, 64 games, groups 1 2 4; Liuzhou, 64 games in flight, batch 64,
//! 200 visits a move).

use std::sync::Mutex;
use std::time::Duration;

use eval::fake::FakeEvaluator;
use eval::{EvalError, Evaluator};
use games::liuzhou::Liuzhou;
use games::Encoding;
use selfplay::{run, SelfplayConfig, ShardSink};

/// Uniform outputs after `cost` of waiting; calls wait for each other as they would for one
/// device.
struct Device {
    outputs: FakeEvaluator,
    cost: Duration,
    device: Mutex<()>,
}

impl<G: Encoding> Evaluator<G> for Device {
    fn batch_size(&self) -> usize {
        Evaluator::<G>::batch_size(&self.outputs)
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        let _device = self.device.lock().unwrap_or_else(|p| p.into_inner());
        std::thread::sleep(self.cost);
        self.outputs.evaluate(states, policy, value)
    }

    fn describe(&self) -> String {
        format!("a device taking {:?} a call", self.cost)
    }

    fn calls_cost_whole_batch(&self) -> bool {
        true
    }
}

fn number<T: std::str::FromStr>(arg: Option<&String>, default: T, what: &str) -> T {
    match arg.map(|s| s.parse()) {
        None => default,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("error: {what} must be a number, not {:?}", arg.unwrap());
            std::process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let call_ms: f64 = number(args.first(), 4.0, "call-ms");
    let games: usize = number(args.get(1), 64, "games");
    let mut groups: Vec<usize> = args[2.min(args.len())..]
        .iter()
        .map(|g| number(Some(g), 1, "groups"))
        .collect();
    if groups.is_empty() {
        groups = vec![1, 2, 4];
    }
    let evaluator = Device {
        outputs: FakeEvaluator::new(64),
        cost: Duration::from_secs_f64(call_ms.max(0.0) / 1000.0),
        device: Mutex::new(()),
    };
    let dir = std::env::temp_dir().join(format!("selfplay-pipeline-{}", std::process::id()));
    let mut first = None;
    for g in groups {
        let config = SelfplayConfig {
            parallel_games: 64,
            pipeline_groups: g,
            full_visits: 200,
            full_fraction: 1.0,
            ..SelfplayConfig::default()
        };
        let sink = ShardSink {
            dir: &dir,
            tag: "pipeline",
            model: "device",
            config: "",
        };
        match run(
            &Liuzhou::default(),
            &evaluator,
            &config,
            games,
            &sink,
            1,
            |_| {},
        ) {
            Ok(s) => {
                let rate = s.positions_per_second();
                let base = *first.get_or_insert(rate);
                println!(
                    "groups {g}: {rate:.1} positions/s ({:.2}x groups 1), batch fill {:.0}%, \
                     evaluator busy {:.0}%",
                    rate / base,
                    100.0 * s.batches.fill(),
                    100.0 * s.evaluator_busy()
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
