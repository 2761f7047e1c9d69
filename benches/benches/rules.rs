//! Rules throughput over fixed position lists: legal-action generation, apply, and perft.
//! Run with `cargo bench -p benches --bench rules`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use games::liuzhou::{self, Liuzhou};
use games::{perft, Game};
use std::hint::black_box;

fn liuzhou_rules(c: &mut Criterion) {
    let positions = liuzhou::bench_positions();
    let mut group = c.benchmark_group("liuzhou");
    group.throughput(Throughput::Elements(positions.len() as u64));
    let mut buf = Vec::with_capacity(256);
    group.bench_function("legal_actions", |b| {
        b.iter(|| {
            for s in &positions {
                buf.clear();
                s.legal_actions(&mut buf);
                black_box(&buf);
            }
        })
    });
    let all: Vec<(Liuzhou, _)> = positions
        .iter()
        .flat_map(|s| {
            let mut v = Vec::new();
            s.legal_actions(&mut v);
            v.into_iter().map(move |a| (s.clone(), a))
        })
        .collect();
    group.throughput(Throughput::Elements(all.len() as u64));
    group.bench_function("apply", |b| {
        b.iter(|| {
            for (s, a) in &all {
                let mut next = s.clone();
                next.play_unchecked(*a);
                black_box(&next);
            }
        })
    });
    group.throughput(Throughput::Elements(1_413_720));
    group.bench_function("perft_start_d4", |b| {
        b.iter(|| perft(&Liuzhou::default(), 4))
    });
    group.finish();
}

criterion_group!(benches, liuzhou_rules);
criterion_main!(benches);
