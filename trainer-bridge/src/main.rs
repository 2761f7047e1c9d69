//! `trainer-bridge`: the learner half of the loop.

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "trainer-bridge",
    version,
    about = "Trains the policy/value network from shards and writes ONNX"
)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
