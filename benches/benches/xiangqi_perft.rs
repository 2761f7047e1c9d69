//! Xiangqi move generation: perft from fixed positions (`cargo bench -p benches --bench
//! xiangqi_perft`). Throughput is in leaves; the figure to quote is leaves/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use games::xiangqi::fen::parse_fen;
use games::xiangqi::perft::{perft, BENCH_POSITIONS};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("xiangqi_perft");
    group.sample_size(10);
    for &(name, fen, depth) in BENCH_POSITIONS.iter() {
        // One ply shallower than `engine bench`, so a criterion run stays short.
        let depth = depth - 1;
        let (mut pos, _, _) = parse_fen(fen).expect("bench FENs are valid");
        let leaves = perft(&mut pos, depth);
        group.throughput(Throughput::Elements(leaves));
        group.bench_function(format!("{name} d{depth}"), |b| {
            b.iter(|| perft(&mut pos, depth))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
