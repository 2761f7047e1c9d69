//! The training report: an SVG with the loss curves (from trainer-bridge's `losses.jsonl`) and
//! the best model's strength per iteration (scores against the fixed opponents, rating on the
//! run's ladder), plus the same numbers as Markdown tables.

use std::path::Path;

use plotters::prelude::*;

use super::state::TrainState;
use super::{ladder, TrainConfig};

/// One line of `losses.jsonl` as trainer-bridge writes it.
#[derive(serde::Deserialize)]
struct LossLine {
    step: u64,
    policy_loss: f64,
    value_loss: f64,
}

/// A score as a whole percentage; "–" where no games were played (the ladder off).
fn percent(score: f64) -> String {
    if score.is_finite() {
        format!("{:.0}%", 100.0 * score)
    } else {
        "–".to_string()
    }
}

pub fn write(run_dir: &Path, state: &TrainState, train: &TrainConfig) -> anyhow::Result<()> {
    let losses: Vec<LossLine> = std::fs::read_to_string(run_dir.join("losses.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let svg =
        plot(state, &losses, train).map_err(|e| anyhow::anyhow!("drawing the report: {e}"))?;
    shards::write_atomically(&run_dir.join("report.svg"), svg.as_bytes())?;

    let mut md = String::from(
        "# Training report\n\n| iteration | candidate | gate score | promoted | best | vs random | vs pure MCTS | Elo (95 %) | self-play positions/s | minutes |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut best = 0;
    for r in &state.history {
        if r.promoted {
            best = r.candidate;
        }
        md.push_str(&format!(
            "| {} | {:04} | {} | {} | {:04} | {} | {} | {} | {:.1} | {:.1} |\n",
            r.iteration,
            r.candidate,
            percent(r.gate_score),
            if r.promoted { "yes" } else { "no" },
            best,
            percent(r.vs_random),
            percent(r.vs_mcts),
            match (r.rating, r.rating_half_width) {
                (Some(elo), Some(half)) => format!("{elo:+.0} ± {half:.0}"),
                _ => "–".to_string(),
            },
            r.selfplay_positions_per_second,
            r.elapsed_seconds / 60.0
        ));
    }
    md.push_str(&format!(
        "\nPure MCTS uses {} random playouts per move; the network agent {} visits. Plot: report.svg.\n",
        train.eval_mcts_playouts, train.eval_visits
    ));
    let rows = ladder::table(&state.ladder);
    if !rows.is_empty() {
        md.push_str(&format!(
            "\n## Rating ladder\n\nEvery pairing {} games (or as many as were played), colours alternating; ratings by maximum likelihood with {} virtual draw per pairing, random = 0.\n\n| agent | Elo | 95 % | games | score |\n|---|---|---|---|---|\n",
            train.eval_games,
            ladder::PRIOR_DRAWS
        ));
        for (name, elo, half, games, score) in rows {
            let interval = if name == ladder::ANCHOR {
                "anchor".to_string()
            } else {
                format!("± {half:.0}")
            };
            md.push_str(&format!(
                "| {name} | {elo:+.0} | {interval} | {games} | {:.0}% |\n",
                100.0 * score
            ));
        }
    }
    shards::write_atomically(&run_dir.join("report.md"), md.as_bytes())?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type PlotResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// The report's three panels side by side: losses, scores, rating.
fn plot(state: &TrainState, losses: &[LossLine], train: &TrainConfig) -> PlotResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1350, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, rest) = root.split_horizontally(450);
        let (right, far_right) = rest.split_horizontally(450);
        draw_losses(&left, losses)?;
        draw_scores(&right, state, train)?;
        draw_rating(&far_right, state)?;
        root.present()?;
    }
    Ok(svg)
}

/// The policy and value losses per training step.
fn draw_losses(area: &Area<'_>, losses: &[LossLine]) -> PlotResult {
    let max_step = losses.iter().map(|l| l.step).max().unwrap_or(1).max(1) as f64;
    let max_loss = losses
        .iter()
        .map(|l| l.policy_loss.max(l.value_loss))
        .fold(0.1f64, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption("training loss", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .build_cartesian_2d(0f64..max_step, 0f64..max_loss * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("loss")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            losses.iter().map(|l| (l.step as f64, l.policy_loss)),
            &BLUE,
        ))?
        .label("policy (cross-entropy)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE));
    chart
        .draw_series(LineSeries::new(
            losses.iter().map(|l| (l.step as f64, l.value_loss)),
            &RED,
        ))?
        .label("value (MSE)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    Ok(())
}

/// The best model's scores against the fixed opponents, and the gate's, per iteration.
fn draw_scores(area: &Area<'_>, state: &TrainState, train: &TrainConfig) -> PlotResult {
    let n = state.history.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption("strength of the best model", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .build_cartesian_2d(0f64..n, 0f64..100f64)?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("score %")
        .draw()?;
    let series = |f: fn(&super::state::IterationRecord) -> f64| {
        state
            .history
            .iter()
            .filter(move |r| f(r).is_finite())
            .map(move |r| (r.iteration as f64 + 1.0, 100.0 * f(r)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(series(|r| r.vs_random), &GREEN))?
        .label("vs random")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], GREEN));
    let mcts_label = format!("vs pure MCTS ({})", train.eval_mcts_playouts);
    chart
        .draw_series(LineSeries::new(series(|r| r.vs_mcts), &MAGENTA))?
        .label(mcts_label)
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], MAGENTA));
    chart
        .draw_series(LineSeries::new(series(|r| r.gate_score), &BLACK))?
        .label("gate: candidate vs best")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    Ok(())
}

/// The best model's rating per iteration, with its 95 % interval.
fn draw_rating(area: &Area<'_>, state: &TrainState) -> PlotResult {
    let n = state.history.len().max(1) as f64;
    let rated: Vec<(f64, f64, f64)> = state
        .history
        .iter()
        .filter_map(|r| Some((r.iteration as f64 + 1.0, r.rating?, r.rating_half_width?)))
        .collect();
    let top = rated.iter().map(|r| r.1 + r.2).fold(100.0f64, f64::max);
    let bottom = rated.iter().map(|r| r.1 - r.2).fold(0.0f64, f64::min);
    let mut chart = ChartBuilder::on(area)
        .caption("rating of the best model (random = 0)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..n + 1.0, bottom..top * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("Elo")
        .draw()?;
    chart.draw_series(LineSeries::new(rated.iter().map(|r| (r.0, r.1)), &BLUE))?;
    chart.draw_series(
        rated
            .iter()
            .map(|&(x, y, h)| ErrorBar::new_vertical(x, y - h, y, y + h, BLUE.filled(), 6)),
    )?;
    Ok(())
}

/// A ladder's ratings as an SVG: one point with its 95 % interval per agent, in the panel's
/// order (a lineage of models reads left to right), the anchor at 0.
pub fn ladder_svg(names: &[String], elo: &[f64], half_width: &[f64]) -> anyhow::Result<String> {
    anyhow::ensure!(
        !names.is_empty() && names.len() == elo.len() && names.len() == half_width.len(),
        "a ladder plot needs one rating and one interval per agent"
    );
    draw_ladder(names, elo, half_width).map_err(|e| anyhow::anyhow!("drawing the ladder: {e}"))
}

fn draw_ladder(
    names: &[String],
    elo: &[f64],
    half_width: &[f64],
) -> Result<String, Box<dyn std::error::Error>> {
    let n = names.len();
    // An agent whose interval is not finite (no games) is drawn without one.
    let half = |i: usize| {
        if half_width[i].is_finite() {
            half_width[i]
        } else {
            0.0
        }
    };
    let top = (0..n).map(|i| elo[i] + half(i)).fold(0.0f64, f64::max);
    let bottom = (0..n).map(|i| elo[i] - half(i)).fold(0.0f64, f64::min);
    let margin = ((top - bottom) * 0.08).max(20.0);
    let names: Vec<String> = names.iter().map(|name| without_directories(name)).collect();
    // Each agent's label gets a slot of its own along the axis, wide enough for the longest.
    let longest = names.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let slot = (7 * longest).max(170);
    let mut svg = String::new();
    {
        let width = (slot * n as u32 + 90).max(520);
        let root = SVGBackend::with_string(&mut svg, (width, 440)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("ratings on the ladder (95 % intervals)", ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, bottom - margin..top + margin)?;
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                names[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels(n)
            .x_label_formatter(&label)
            .x_label_style(("sans-serif", 11))
            .disable_x_mesh()
            .y_desc("Elo")
            .draw()?;
        chart.draw_series(LineSeries::new(
            (0..n).map(|i| (i as f64, elo[i])),
            BLUE.mix(0.4),
        ))?;
        chart.draw_series((0..n).map(|i| {
            let (x, y, h) = (i as f64, elo[i], half(i));
            ErrorBar::new_vertical(x, y - h, y, y + h, BLUE.filled(), 8)
        }))?;
        root.present()?;
    }
    Ok(svg)
}

/// `name` with every path in it cut to its file name: `net(models/g/0126.onnx, 0.1 s)` →
/// `net(0126.onnx, 0.1 s)`, so that labels fit beside each other.
fn without_directories(name: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(word.rsplit('/').next().unwrap_or(word));
        word.clear();
    };
    for c in name.chars() {
        if matches!(c, '(' | ')' | ',' | ' ' | '=' | '[' | ']') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::percent;

    #[test]
    fn plot_labels_keep_file_names_only() {
        assert_eq!(
            super::without_directories("net(models/liuzhou/candidates/0126.int8.onnx, 0.1 s)[4]"),
            "net(0126.int8.onnx, 0.1 s)[4]"
        );
        assert_eq!(
            super::without_directories("alphabeta:movetime=100[3]"),
            "alphabeta:movetime=100[3]"
        );
    }

    #[test]
    fn a_ladder_plot_names_every_agent_and_refuses_a_mismatch() {
        let names = [
            "random".to_string(),
            "alphabeta".into(),
            "model 0002".into(),
        ];
        let svg =
            super::ladder_svg(&names, &[0.0, 420.0, 610.0], &[0.0, 90.0, f64::INFINITY]).unwrap();
        assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{svg}");
        for name in &names {
            assert!(svg.contains(name.as_str()), "{name} missing");
        }
        assert!(super::ladder_svg(&names, &[0.0], &[0.0]).is_err());
    }

    #[test]
    fn scores_of_no_games_read_as_a_dash() {
        assert_eq!(percent(0.754), "75%");
        assert_eq!(percent(f64::NAN), "–");
    }
}
