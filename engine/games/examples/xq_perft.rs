use games::xiangqi::{fen, perft};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let d: u32 = args[1].parse().unwrap();
    let f = args.get(2).map(|s| s.as_str()).unwrap_or(games::xiangqi::START_FEN);
    let (mut p, _, _) = fen::parse_fen(f).unwrap();
    let t = std::time::Instant::now();
    let n = perft(&mut p, d);
    let s = t.elapsed().as_secs_f64();
    println!("{n} {s:.3}s {:.2} M/s", n as f64 / s / 1e6);
}
