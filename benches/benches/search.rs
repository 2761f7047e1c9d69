//! Search overhead with the fake evaluator: single-thread playouts from fixed Liuzhou positions
//! (the start and positions from seeded random play). Run with
//! `cargo bench -p benches --bench search`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use eval::fake::FakeEvaluator;
use games::liuzhou::Liuzhou;
use search::{Limit, RunOptions, Search, SearchConfig};

fn liuzhou_search(c: &mut Criterion) {
    let positions = search::bench::positions(&Liuzhou::default(), 8, 1);
    let fake = FakeEvaluator::new(8);
    let config = SearchConfig {
        cache_entries: 0,
        ..SearchConfig::default()
    };
    let visits = 5_000;
    let mut s = Search::new(positions[0].clone(), config, 0);
    let mut group = c.benchmark_group("search_liuzhou");
    group.throughput(Throughput::Elements(visits * positions.len() as u64));
    group.sample_size(20);
    group.bench_function("fake_evaluator_1_thread", |b| {
        b.iter(|| {
            for p in &positions {
                s.reset(p.clone());
                s.run(&fake, Limit::visits(visits), RunOptions::single(8))
                    .expect("search");
            }
        })
    });
    group.finish();
}

criterion_group!(benches, liuzhou_search);
criterion_main!(benches);
