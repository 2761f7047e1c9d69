//! Go rules throughput: random playouts (legality checks on random points, then the move) on
//! 9×9 and 19×19, and the full legal-move list. Run: `cargo bench -p benches --bench go`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use games::go::playout::{play_throughput, playout_move};
use games::go::GoState;
use games::Game;
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// Positions reached by a fixed random playout, for the per-position benches.
fn midgame(size: usize, moves: usize) -> GoState {
    let mut rng = SmallRng::seed_from_u64(1);
    let mut s = GoState::with_size(size);
    for _ in 0..moves {
        let mv = playout_move(&s, &mut rng);
        s.play_unchecked(mv);
    }
    s
}

fn playouts(c: &mut Criterion) {
    for size in [9, 19] {
        // Moves per playout with this seed, so throughput reads per move.
        // Ten different games per iteration, so no single game is learnt by the branch
        // predictor; throughput reads per move.
        let moves: u64 = (0..10)
            .map(|seed| play_throughput(size, 1, seed).moves)
            .sum();
        let mut group = c.benchmark_group(format!("go_playout_{size}x{size}"));
        group.throughput(Throughput::Elements(moves));
        group.bench_function("play+legality, 10 playouts", |b| {
            b.iter(|| {
                (0..10)
                    .map(|seed| play_throughput(size, 1, seed).moves)
                    .sum::<u64>()
            })
        });
        group.finish();
    }
}

fn legal_moves(c: &mut Criterion) {
    for (size, moves) in [(9, 40), (19, 150)] {
        let s = midgame(size, moves);
        let mut out = Vec::with_capacity(size * size + 1);
        c.bench_function(&format!("go_legal_actions_{size}x{size}"), |b| {
            b.iter(|| {
                out.clear();
                s.legal_actions(&mut out);
                out.len()
            })
        });
        c.bench_function(&format!("go_clone_and_play_{size}x{size}"), |b| {
            let mut legal = Vec::new();
            s.legal_actions(&mut legal);
            let mv = legal[legal.len() / 2];
            b.iter_batched(
                || s.clone(),
                |mut t| {
                    t.play_unchecked(mv);
                    t
                },
                BatchSize::SmallInput,
            )
        });
    }
}

criterion_group!(benches, playouts, legal_moves);
criterion_main!(benches);
