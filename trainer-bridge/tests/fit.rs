//! `fit` learns from shards: losses fall on self-play data, the outputs load, bad inputs are
//! typed errors.

use std::path::PathBuf;

use std::path::Path;

use candle_core::{Device, Tensor};
use games::liuzhou::Liuzhou;
use games::xiangqi::Xiangqi;
use games::{Encoding, Game};
use shards::{Sample, Shard, ShardMeta};
use trainer_bridge::fit::{fit, Anchor, FitConfig, FitJob, FitReport};
use trainer_bridge::{write_model, Checkpoint, ModelMeta, Net, NetConfig, NetError};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fit-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tiny_net() -> NetConfig {
    NetConfig {
        blocks: 1,
        channels: 16,
        ..NetConfig::default()
    }
}

/// A generation-0 Liuzhou checkpoint of `net` at `path`, the same weights on every run (the
/// fits that compare two networks then compare the same ones); `legacy` writes it as
/// checkpoints were written before they recorded their game (candle's plain `VarMap::save`).
fn save_checkpoint(path: &Path, net: &NetConfig, legacy: bool) {
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::seeded(net, shape, &Device::Cpu, 11).unwrap();
    if legacy {
        varmap.save(path).unwrap();
    } else {
        let meta = ModelMeta {
            game: Liuzhou::NAME.into(),
            shape,
            network: net.clone(),
            generation: 0,
        };
        Net::save(&varmap, &meta, path).unwrap();
    }
}

fn checkpoint(path: &Path) -> Checkpoint {
    Checkpoint::read(path, &Device::Cpu).unwrap()
}

/// One short fit of `model` (a checkpoint of `net`) on `shards` into `out`.
fn short_fit(
    shards: &Path,
    model: &Path,
    net: &NetConfig,
    out: &Path,
) -> anyhow::Result<FitReport> {
    let config = FitConfig {
        steps: 2,
        batch_size: 8,
        ..FitConfig::default()
    };
    fit_with(shards, model, net, &config, out)
}

/// A fit of `model` (a checkpoint of `net`) on `shards` into `out` as `config` says.
fn fit_with(
    shards: &Path,
    model: &Path,
    net: &NetConfig,
    config: &FitConfig,
    out: &Path,
) -> anyhow::Result<FitReport> {
    fit_taught(shards, model, net, config, out, None)
}

/// [`fit_with`], the anchor's share of the targets taken from `teacher` when one is given.
fn fit_taught(
    shards: &Path,
    model: &Path,
    net: &NetConfig,
    config: &FitConfig,
    out: &Path,
    teacher: Option<&Path>,
) -> anyhow::Result<FitReport> {
    let teacher = match teacher {
        Some(t) => Some(Checkpoint::read(t, &Device::Cpu)?),
        None => None,
    };
    fit(FitJob {
        shards_dir: shards,
        checkpoint: &Checkpoint::read(model, &Device::Cpu)?,
        teacher: teacher.as_ref(),
        network: net,
        config,
        out,
        generation: 1,
        log: None,
        on_step: &mut |_, _| {},
    })
}

/// Shards from a few self-play games with the fake evaluator.
fn make_shards(dir: &std::path::Path) {
    let config = selfplay::SelfplayConfig {
        parallel_games: 8,
        full_visits: 16,
        cheap_visits: 4,
        full_fraction: 1.0,
        positions_per_shard: 300,
        ..Default::default()
    };
    let sink = selfplay::ShardSink {
        dir,
        tag: "t",
        model: "fake",
        config: "",
    };
    let ev = eval::fake::FakeEvaluator::new(16);
    selfplay::run(&Liuzhou::default(), &ev, &config, 8, &sink, 3, |_| {}).unwrap();
}

#[test]
fn losses_fall_and_outputs_are_written() {
    let dir = tmpdir("learn");
    let shards = dir.join("shards");
    make_shards(&shards);
    let shape = Liuzhou::default().shape();
    let start = dir.join("0000.safetensors");
    save_checkpoint(&start, &tiny_net(), false);
    let config = FitConfig {
        steps: 60,
        batch_size: 64,
        learning_rate: 3e-3,
        final_learning_rate: 1e-3,
        ..FitConfig::default()
    };
    let log = dir.join("losses.jsonl");
    let mut steps = 0;
    let report = fit(FitJob {
        shards_dir: &shards,
        checkpoint: &checkpoint(&start),
        teacher: None,
        network: &tiny_net(),
        config: &config,
        out: &dir.join("0001"),
        generation: 1,
        log: Some(&log),
        on_step: &mut |_, _| steps += 1,
    })
    .unwrap();
    assert_eq!(steps, 60);
    assert!(
        report.last_loss.0 < report.first_loss.0,
        "policy loss {:?}",
        (report.first_loss, report.last_loss)
    );
    assert!(
        report.last_loss.1 < report.first_loss.1,
        "value loss {:?}",
        (report.first_loss, report.last_loss)
    );
    assert!(dir.join("0001.safetensors").is_file() && dir.join("0001.onnx").is_file());
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 60);
    // The new checkpoint loads for the same network and shape: fitting resumes from it. It
    // says what it is.
    Net::load(
        &dir.join("0001.safetensors"),
        &tiny_net(),
        shape,
        &Device::Cpu,
    )
    .unwrap();
    let meta = checkpoint(&dir.join("0001.safetensors")).meta.unwrap();
    assert_eq!(
        (meta.game.as_str(), meta.shape, meta.generation),
        ("liuzhou", shape, 1)
    );
    assert_eq!(meta.network, tiny_net());
}

#[test]
fn no_usable_shard_is_an_error() {
    let dir = tmpdir("bad");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("junk.safetensors"), b"not a shard").unwrap();
    let start = dir.join("0000.safetensors");
    save_checkpoint(&start, &tiny_net(), false);
    let out = dir.join("x");
    let err = short_fit(&empty, &start, &tiny_net(), &out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no readable shard"), "{err}");
    assert!(err.contains("1 skipped"), "{err}");
    assert!(!dir.join("x.onnx").exists());
}

/// A config whose `network` section differs from the checkpoint's is named as such: the tensor,
/// its shape in the file and in the config, and (when the checkpoint records it) the key.
#[test]
fn a_changed_network_section_is_named() {
    let dir = tmpdir("network");
    let shards = dir.join("shards");
    make_shards(&shards);
    let out = dir.join("x");
    let bigger = NetConfig {
        channels: 32,
        ..tiny_net()
    };
    for legacy in [false, true] {
        let start = dir.join(format!("0000-{legacy}.safetensors"));
        save_checkpoint(&start, &tiny_net(), legacy);
        let err = short_fit(&shards, &start, &bigger, &out).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            matches!(
                err.downcast_ref::<NetError>(),
                Some(NetError::NetworkMismatch { .. })
            ),
            "{msg}"
        );
        assert!(msg.contains(&format!("0000-{legacy}.safetensors")), "{msg}");
        assert!(
            msg.contains("tensor `blocks.0.bn1.bias` is [16] in the checkpoint"),
            "{msg}"
        );
        assert!(msg.contains("asks for [32]"), "{msg}");
        assert!(
            msg.contains("the `network` section differs from the checkpoint's"),
            "{msg}"
        );
        assert!(
            !msg.contains("shape mismatch") && !msg.contains("TensorShape"),
            "{msg}"
        );
        assert_eq!(
            msg.contains("network.channels: 16 in the checkpoint, 32 in the config"),
            !legacy,
            "{msg}"
        );
        // A block more, or one fewer: a tensor missing from the file, or one too many.
        let deeper = NetConfig {
            blocks: 2,
            ..tiny_net()
        };
        let msg = format!(
            "{:#}",
            short_fit(&shards, &start, &deeper, &out).unwrap_err()
        );
        assert!(
            msg.contains("tensor `blocks.1.bn1.bias` is missing in the checkpoint"),
            "{msg}"
        );
        let shallower = NetConfig {
            blocks: 0,
            ..tiny_net()
        };
        let msg = format!(
            "{:#}",
            short_fit(&shards, &start, &shallower, &out).unwrap_err()
        );
        assert!(
            msg.contains("tensor `blocks.0.bn1.bias` is [16] in the checkpoint"),
            "{msg}"
        );
        assert!(msg.contains("asks for no such tensor"), "{msg}");
    }
    assert!(!dir.join("x.onnx").exists() && !dir.join("x.safetensors").exists());
}

/// A small valid Xiangqi shard (its real shape, one sample).
fn xiangqi_shard(path: &Path) {
    let state = Xiangqi::default();
    let shape = state.shape();
    Shard {
        meta: ShardMeta {
            game: Xiangqi::NAME.into(),
            planes: shape.planes,
            height: shape.height,
            width: shape.width,
            policy_size: shape.policy_size,
            model: "test".into(),
            config: String::new(),
            created_unix: 0,
            games: 1,
            policy_target: shards::PolicyTarget::Visits,
        },
        samples: vec![Sample {
            planes: vec![0.0; shape.input_len()],
            policy: vec![(0, 1.0)],
            value: 0.0,
            aux: Default::default(),
        }],
        symmetries: shards::symmetry_maps(&state),
    }
    .write(path)
    .unwrap();
}

/// Shards of another game than the checkpoint's (or of no game this build knows, or whose shape
/// is not their game's) are skipped with a warning, like unreadable ones; with none left, fit
/// fails and writes nothing.
#[test]
fn shards_of_another_game_are_skipped() {
    let dir = tmpdir("game");
    let shards = dir.join("shards");
    make_shards(&shards);
    let liuzhou = shards::newest_first(&shards).unwrap()[0].clone();
    let good = Shard::read(&liuzhou).unwrap();
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    // Named to sort after the Liuzhou shards: these are the newest.
    for (name, game) in [("zz-chess", "chess"), ("zz-xiangqi-named", "xiangqi")] {
        let mut s = good.clone();
        s.meta.game = game.into();
        s.write(&foreign.join(format!("{name}.safetensors")))
            .unwrap();
        s.write(&shards.join(format!("{name}.safetensors")))
            .unwrap();
    }
    xiangqi_shard(&foreign.join("zz-xiangqi.safetensors"));
    xiangqi_shard(&shards.join("zz-xiangqi.safetensors"));

    for legacy in [false, true] {
        let start = dir.join(format!("0000-{legacy}.safetensors"));
        save_checkpoint(&start, &tiny_net(), legacy);
        let out = dir.join(format!("only-foreign-{legacy}"));
        let msg = format!(
            "{:#}",
            short_fit(&foreign, &start, &tiny_net(), &out).unwrap_err()
        );
        assert!(msg.contains("no readable shard with samples"), "{msg}");
        assert!(msg.contains("3 skipped"), "{msg}");
        assert!(!with_ext(&out, "onnx").exists() && !with_ext(&out, "safetensors").exists());

        // Mixed: the Liuzhou shards train, the others are left out.
        let out = dir.join(format!("mixed-{legacy}"));
        let report = short_fit(&shards, &start, &tiny_net(), &out).unwrap();
        assert_eq!(report.game, "liuzhou");
        assert_eq!(
            report.shards,
            shards::newest_first(&shards).unwrap().len() - 3
        );
        let meta = checkpoint(&with_ext(&out, "safetensors")).meta.unwrap();
        assert_eq!(meta.game, "liuzhou");
    }
}

fn with_ext(stem: &Path, ext: &str) -> std::path::PathBuf {
    trainer_bridge::fit::with_ext(stem, ext)
}

/// A network with a NaN weight is never written, neither as checkpoint nor as ONNX.
#[test]
fn non_finite_weights_are_never_written() {
    let dir = tmpdir("nan");
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::fresh(&tiny_net(), shape, &Device::Cpu).unwrap();
    {
        let vars = varmap.data().lock().unwrap();
        let w = &vars["value.fc2.bias"];
        w.set(&Tensor::full(f32::NAN, w.dims(), &Device::Cpu).unwrap())
            .unwrap();
    }
    let meta = ModelMeta {
        game: Liuzhou::NAME.into(),
        shape,
        network: tiny_net(),
        generation: 1,
    };
    let err = write_model(&varmap, &meta, &dir.join("0001")).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        matches!(
            err.downcast_ref::<NetError>(),
            Some(NetError::NonFinite { tensor, .. }) if tensor == "value.fc2.bias"
        ),
        "{msg}"
    );
    assert!(msg.contains("non-finite"), "{msg}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
    // A checkpoint holding one (written by some other tool) is refused when read.
    let bad = dir.join("bad.safetensors");
    varmap.save(&bad).unwrap();
    match Checkpoint::read(&bad, &Device::Cpu) {
        Err(e @ NetError::NonFinite { .. }) => {
            assert!(e.to_string().contains("bad.safetensors"), "{e}");
            assert!(e.to_string().contains("value.fc2.bias"), "{e}");
        }
        other => panic!("expected NonFinite, got {:?}", other.err()),
    }
}

#[test]
fn held_out_shards_are_measured_and_not_trained_on() {
    let dir = tmpdir("holdout");
    let shards = dir.join("shards");
    make_shards(&shards);
    let start = dir.join("0000.safetensors");
    save_checkpoint(&start, &tiny_net(), false);
    let run = |holdout_shards: usize, name: &str| {
        let config = FitConfig {
            steps: 20,
            batch_size: 32,
            holdout_shards,
            ..FitConfig::default()
        };
        fit_with(&shards, &start, &tiny_net(), &config, &dir.join(name)).unwrap()
    };
    let all = run(0, "all");
    assert!(all.holdout.is_none());
    assert!(all.shards >= 2, "{} shards", all.shards);
    let one = run(1, "one");
    let h = one.holdout.expect("one shard held out");
    assert_eq!(h.shards, 1);
    assert!(h.samples > 0);
    // The held-out shard's samples are not in the training window.
    assert_eq!(one.window + h.samples, all.window);
    for loss in [h.before.0, h.before.1, h.after.0, h.after.1] {
        assert!(loss.is_finite() && loss >= 0.0, "{h:?}");
    }
    // Holding out every shard would leave nothing to train on: none is held out.
    assert!(run(all.shards, "none").holdout.is_none());

    // A shard linked under other names to weigh it more: a held-out copy keeps every copy
    // out of training.
    for entry in std::fs::read_dir(&shards).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for k in 1..=2 {
            std::fs::hard_link(&path, shards.join(format!("x{k}-{name}"))).unwrap();
        }
    }
    let linked = run(0, "linked");
    assert_eq!(linked.window, 3 * all.window);
    let one = run(1, "linked-one");
    let h = one.holdout.expect("one shard held out");
    assert_eq!(one.window + 3 * h.samples, linked.window);
}

#[test]
fn an_anchor_mixes_its_outputs_into_the_targets() {
    let shape = Liuzhou::default().shape();
    let (_vars, net) = Net::fresh(&tiny_net(), shape, &Device::Cpu).unwrap();
    let x = Tensor::randn(
        0f32,
        1.0,
        (3, shape.planes, shape.height, shape.width),
        &Device::Cpu,
    )
    .unwrap();
    let trainer_bridge::net::Outputs {
        policy: logits,
        value: v,
        ..
    } = net.forward_t(&x, false).unwrap();
    let anchor = Anchor { net, weight: 0.25 };
    let target_p = Tensor::zeros(
        (3, shape.policy_size),
        candle_core::DType::F32,
        &Device::Cpu,
    )
    .unwrap();
    let target_v = Tensor::new(&[1f32, -1.0, 0.0], &Device::Cpu).unwrap();
    let (p, mixed_v) = anchor.mix(&x, target_p, target_v).unwrap();
    let own = candle_nn::ops::softmax(&logits, 1).unwrap();
    let want_p = (own * 0.25).unwrap().to_vec2::<f32>().unwrap();
    for (a, b) in p
        .to_vec2::<f32>()
        .unwrap()
        .iter()
        .flatten()
        .zip(want_p.iter().flatten())
    {
        assert!((a - b).abs() < 1e-6, "{a} {b}");
    }
    let v = v.to_vec1::<f32>().unwrap();
    let mixed_v = mixed_v.to_vec1::<f32>().unwrap();
    for (k, t) in [1f32, -1.0, 0.0].iter().enumerate() {
        assert!((mixed_v[k] - (0.75 * t + 0.25 * v[k])).abs() < 1e-6);
    }
    // Each mixed policy target still sums to one where the shard's did.
    let (one_p, _) = anchor
        .mix(
            &x,
            (Tensor::ones(
                (3, shape.policy_size),
                candle_core::DType::F32,
                &Device::Cpu,
            )
            .unwrap()
                / shape.policy_size as f64)
                .unwrap(),
            Tensor::zeros(3, candle_core::DType::F32, &Device::Cpu).unwrap(),
        )
        .unwrap();
    for row in one_p.to_vec2::<f32>().unwrap() {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
}

#[test]
fn an_anchored_fit_stays_closer_to_its_start() {
    let dir = tmpdir("anchor");
    let shards = dir.join("shards");
    make_shards(&shards);
    let fresh = dir.join("0000.safetensors");
    save_checkpoint(&fresh, &tiny_net(), false);
    let run = |from: &Path, anchor_weight: f64, name: &str| {
        let config = FitConfig {
            steps: 80,
            batch_size: 32,
            learning_rate: 1e-3,
            final_learning_rate: 1e-3,
            anchor_weight,
            seed: 7,
            ..FitConfig::default()
        };
        fit_with(&shards, from, &tiny_net(), &config, &dir.join(name))
            .unwrap()
            .checkpoint
    };
    // A start that has learned something (its batch norm statistics are the data's), then a
    // free and a wholly anchored fit from it on the same batches.
    let start = run(&fresh, 0.0, "start");
    let free = run(&start, 0.0, "free");
    let anchored = run(&start, 1.0, "anchored");
    let x = data_positions(&shards);
    let p0 = outputs(&start, &tiny_net(), &x).0;
    let moved = |path: &Path| total_abs_diff(&outputs(path, &tiny_net(), &x).0, &p0);
    let (free, anchored) = (moved(&free), moved(&anchored));
    assert!(free > 0.0, "the free fit learned nothing");
    assert!(
        anchored < free / 2.0,
        "anchored moved {anchored}, free {free}"
    );
    // Out of range is a config error naming the key.
    let bad = FitConfig {
        anchor_weight: 1.5,
        ..FitConfig::default()
    };
    assert!(bad.validate().unwrap_err().contains("anchor_weight"));
}

/// The first 64 positions of the first shard in `shards`, as the network's input.
fn data_positions(shards: &Path) -> Tensor {
    let shape = Liuzhou::default().shape();
    let first = std::fs::read_dir(shards)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let planes: Vec<f32> = Shard::read(&first).unwrap().samples[..64]
        .iter()
        .flat_map(|s| s.planes.iter().copied())
        .collect();
    Tensor::from_vec(
        planes,
        (64, shape.planes, shape.height, shape.width),
        &Device::Cpu,
    )
    .unwrap()
}

/// The policy (softmax) and value of the checkpoint at `path`, a network of `net`, on `x`.
fn outputs(path: &Path, net: &NetConfig, x: &Tensor) -> (Tensor, Tensor) {
    let shape = Liuzhou::default().shape();
    let (_vars, net) = Net::load(path, net, shape, &Device::Cpu).unwrap();
    let trainer_bridge::net::Outputs {
        policy: logits,
        value,
        ..
    } = net.forward_t(x, false).unwrap();
    (candle_nn::ops::softmax(&logits, 1).unwrap(), value)
}

fn total_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .sum_all()
        .unwrap()
        .to_scalar()
        .unwrap()
}

#[test]
fn a_teacher_of_another_size_is_learned_from() {
    let dir = tmpdir("teacher");
    let shards = dir.join("shards");
    make_shards(&shards);
    let big = NetConfig {
        blocks: 2,
        channels: 24,
        ..NetConfig::default()
    };
    let config = |steps, anchor_weight| FitConfig {
        steps,
        batch_size: 32,
        learning_rate: 2e-3,
        final_learning_rate: 2e-3,
        anchor_weight,
        seed: 3,
        ..FitConfig::default()
    };
    // The teacher: a larger network that has learned from the data.
    let fresh_big = dir.join("big0.safetensors");
    save_checkpoint(&fresh_big, &big, false);
    let teacher = fit_with(
        &shards,
        &fresh_big,
        &big,
        &config(60, 0.0),
        &dir.join("big"),
    )
    .unwrap()
    .checkpoint;
    // A small network from the same start, fitted once on the shards' targets and once on the
    // teacher's outputs alone.
    let fresh = dir.join("0000.safetensors");
    save_checkpoint(&fresh, &tiny_net(), false);
    let small = |anchor_weight, teacher: Option<&Path>, name: &str| {
        fit_taught(
            &shards,
            &fresh,
            &tiny_net(),
            &config(120, anchor_weight),
            &dir.join(name),
            teacher,
        )
        .unwrap()
        .checkpoint
    };
    let free = small(0.0, None, "free");
    let taught = small(1.0, Some(&teacher), "taught");
    let x = data_positions(&shards);
    let (tp, tv) = outputs(&teacher, &big, &x);
    let off = |path: &Path| {
        let (p, v) = outputs(path, &tiny_net(), &x);
        (total_abs_diff(&p, &tp), total_abs_diff(&v, &tv))
    };
    let ((free_p, free_v), (taught_p, taught_v)) = (off(&free), off(&taught));
    assert!(
        taught_p < free_p && taught_v < free_v,
        "taught is off the teacher by {taught_p} (policy) and {taught_v} (value), \
         free by {free_p} and {free_v}"
    );

    // A teacher with no share of the targets, or of another game, is an error.
    let unused = fit_taught(
        &shards,
        &fresh,
        &tiny_net(),
        &config(1, 0.0),
        &dir.join("unused"),
        Some(&teacher),
    )
    .unwrap_err();
    assert!(unused.to_string().contains("anchor_weight"), "{unused}");
    let xiangqi = dir.join("xiangqi.safetensors");
    let meta = ModelMeta {
        game: Xiangqi::NAME.into(),
        shape: Xiangqi::default().shape(),
        network: tiny_net(),
        generation: 0,
    };
    let (varmap, _) = Net::fresh(&tiny_net(), meta.shape, &Device::Cpu).unwrap();
    Net::save(&varmap, &meta, &xiangqi).unwrap();
    let other = fit_taught(
        &shards,
        &fresh,
        &tiny_net(),
        &config(1, 1.0),
        &dir.join("other"),
        Some(&xiangqi),
    )
    .unwrap_err();
    assert!(
        other
            .to_string()
            .contains("the teacher is a xiangqi network"),
        "{other}"
    );
}

#[test]
fn a_block_whose_branch_adds_nothing_can_be_dropped() {
    let dir = tmpdir("shrink");
    let three = NetConfig {
        blocks: 3,
        channels: 16,
        ..NetConfig::default()
    };
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::fresh(&three, shape, &Device::Cpu).unwrap();
    // Block 1 ends in a batch norm of zero scale and shift: its branch adds nothing to the
    // skip connection, so the tower computes the same without it.
    {
        let vars = varmap.data().lock().unwrap();
        for name in ["blocks.1.bn2.weight", "blocks.1.bn2.bias"] {
            let var = &vars[name];
            var.set(&var.zeros_like().unwrap()).unwrap();
        }
    }
    let meta = ModelMeta {
        game: Liuzhou::NAME.into(),
        shape,
        network: three.clone(),
        generation: 5,
    };
    let path = dir.join("three.safetensors");
    Net::save(&varmap, &meta, &path).unwrap();
    let shrunk = checkpoint(&path).without_blocks(&[1]).unwrap();
    let two = NetConfig {
        blocks: 2,
        ..three.clone()
    };
    let kept = shrunk.meta.clone().unwrap();
    assert_eq!((kept.network.clone(), kept.generation), (two.clone(), 5));
    let (varmap2, _) = Net::from_checkpoint(&shrunk, &two, shape, &Device::Cpu).unwrap();
    let out = dir.join("two.safetensors");
    Net::save(&varmap2, &kept, &out).unwrap();

    let x = Tensor::rand(
        0f32,
        1f32,
        (8, shape.planes, shape.height, shape.width),
        &Device::Cpu,
    )
    .unwrap();
    let (p3, v3) = outputs(&path, &three, &x);
    let (p2, v2) = outputs(&out, &two, &x);
    assert!(total_abs_diff(&p3, &p2) < 1e-4 && total_abs_diff(&v3, &v2) < 1e-4);

    // A block it does not have is named.
    let Err(err) = checkpoint(&path).without_blocks(&[3]) else {
        panic!("block 3 of three was dropped");
    };
    assert!(err.to_string().contains("block 3"), "{err}");
}

/// A Go 5×5 shard of `n` positions from random play with learnable auxiliary targets (each
/// point's owner is the stone on it, the score their sum, the policy and the reply uniform over
/// the empty points); every other position has none.
fn go_aux_shard(path: &Path, n: usize, seed: u64) {
    go_aux_shard_of_size(path, 5, n, seed);
}

/// [`go_aux_shard`] on a board of `size`.
fn go_aux_shard_of_size(path: &Path, size: usize, n: usize, seed: u64) {
    let state = games::go::GoState::new(games::go::GoRules::with_size(size)).unwrap();
    let shape = state.shape();
    let cells = size * size;
    let samples = infer::bench::sample_states(&state, n, seed)
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut planes = vec![0.0; shape.input_len()];
            s.encode(&mut planes);
            let owner: Vec<f32> = (0..cells).map(|p| planes[p] - planes[cells + p]).collect();
            let empty: Vec<u16> = (0..cells as u16)
                .filter(|&p| owner[p as usize] == 0.0)
                .collect();
            let policy: Vec<(u16, f32)> = if empty.is_empty() {
                vec![(cells as u16, 1.0)]
            } else {
                empty
                    .iter()
                    .map(|&p| (p, 1.0 / empty.len() as f32))
                    .collect()
            };
            let score: f32 = owner.iter().sum();
            Sample {
                planes,
                policy: policy.clone(),
                value: (score / size as f32).tanh(),
                aux: if i % 2 == 0 {
                    shards::Aux {
                        ownership: Some(owner),
                        score: Some(score),
                        reply: Some(policy),
                        surprise: None,
                    }
                } else {
                    shards::Aux::default()
                },
            }
        })
        .collect();
    Shard {
        meta: ShardMeta {
            game: "go".into(),
            planes: shape.planes,
            height: size,
            width: size,
            policy_size: shape.policy_size,
            model: "test".into(),
            config: String::new(),
            created_unix: 0,
            games: 1,
            policy_target: shards::PolicyTarget::Visits,
        },
        samples,
        symmetries: shards::symmetry_maps(&state),
    }
    .write(path)
    .unwrap();
}

/// A network with every auxiliary head learns the shards' auxiliary targets: each term is in
/// the loss log, and the ownership and score losses fall; a plain network fits the same shards
/// with none of those terms.
#[test]
fn auxiliary_losses_fall_and_are_logged() {
    testkit::onnx_runtime();
    let dir = tmpdir("aux");
    let shards = dir.join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    go_aux_shard(&shards.join("a.safetensors"), 600, 1);
    let shape = games::shape_of("go", Some(5)).unwrap();
    let pooling = NetConfig {
        blocks: 2,
        channels: 16,
        policy_channels: 4,
        value_channels: 8,
        value_hidden: 16,
        pool_every: 2,
        pool_channels: 4,
        policy_pool: true,
        value_pool: true,
        ownership: true,
        score: true,
        wdl: true,
        reply: true,
        soft_policy: true,
    };
    let config = FitConfig {
        steps: 400,
        batch_size: 32,
        learning_rate: 3e-3,
        final_learning_rate: 1e-3,
        // The margins of these positions are a few stones.
        score_scale: 2.0,
        ..FitConfig::default()
    };
    for network in [pooling.clone(), pooling.plain()] {
        let start = dir.join("start.safetensors");
        let (varmap, _) = Net::seeded(&network, shape, &Device::Cpu, 2).unwrap();
        let meta = ModelMeta {
            game: "go".into(),
            shape,
            network: network.clone(),
            generation: 0,
        };
        Net::save(&varmap, &meta, &start).unwrap();
        let log = dir.join("losses.jsonl");
        let _ = std::fs::remove_file(&log);
        fit(FitJob {
            shards_dir: &shards,
            checkpoint: &checkpoint(&start),
            teacher: None,
            network: &network,
            config: &config,
            out: &dir.join("0001"),
            generation: 1,
            log: Some(&log),
            on_step: &mut |_, _| {},
        })
        .unwrap();
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let keys = [
            "ownership_loss",
            "score_loss",
            "wdl_loss",
            "reply_loss",
            "soft_policy_loss",
        ];
        if !network.has_new_parts() {
            assert!(lines
                .iter()
                .all(|l| keys.iter().all(|k| l.get(k).is_none())));
            continue;
        }
        // Means over the first and the last ten steps.
        let mean = |key: &str, range: std::ops::Range<usize>| {
            let n = range.len() as f64;
            range.map(|i| lines[i][key].as_f64().unwrap()).sum::<f64>() / n
        };
        for key in keys {
            let (first, last) = (mean(key, 0..10), mean(key, 390..400));
            eprintln!("{key}: {first:.4} → {last:.4}");
            // Measured (with the soft policy head): ownership 0.96 → 0.046, score 1.12 → 0.40,
            // wdl 1.00 → 0.46, reply 3.40 → 2.42, soft policy 3.42 → 2.30 (the entropy of a
            // uniform target over the empty points stays).
            let bound = match key {
                "ownership_loss" => 0.2,
                "score_loss" => 0.7,
                _ => 0.9,
            };
            assert!(last < bound * first, "{key}: {first} → {last}");
        }
        // The new model's ONNX outputs every head.
        let onnx = dir.join("0001.onnx");
        let model = infer::OrtModel::load(&onnx, &infer::OrtOptions::default()).unwrap();
        assert_eq!(model.info().shape, shape);
    }
}

/// The soft policy head alone on a plain network: its loss (cross-entropy against the policy
/// target to the power 1/4, renormalised) is logged every step as `soft_policy_loss` and falls;
/// the new model's ONNX outputs are the plain ones.
#[test]
fn soft_policy_loss_falls_and_is_logged() {
    testkit::onnx_runtime();
    let dir = tmpdir("soft");
    let shards = dir.join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    go_aux_shard(&shards.join("a.safetensors"), 300, 4);
    let shape = games::shape_of("go", Some(5)).unwrap();
    let network = NetConfig {
        blocks: 1,
        channels: 16,
        value_hidden: 16,
        soft_policy: true,
        ..NetConfig::default()
    };
    let config = FitConfig {
        steps: 300,
        batch_size: 32,
        learning_rate: 3e-3,
        final_learning_rate: 1e-3,
        ..FitConfig::default()
    };
    let start = dir.join("start.safetensors");
    let (varmap, _) = Net::seeded(&network, shape, &Device::Cpu, 2).unwrap();
    let meta = ModelMeta {
        game: "go".into(),
        shape,
        network: network.clone(),
        generation: 0,
    };
    Net::save(&varmap, &meta, &start).unwrap();
    let log = dir.join("losses.jsonl");
    fit(FitJob {
        shards_dir: &shards,
        checkpoint: &checkpoint(&start),
        teacher: None,
        network: &network,
        config: &config,
        out: &dir.join("0001"),
        generation: 1,
        log: Some(&log),
        on_step: &mut |_, _| {},
    })
    .unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 300);
    for l in &lines {
        assert!(l["soft_policy_loss"].as_f64().unwrap().is_finite(), "{l}");
        assert!(
            l.get("reply_loss").is_none() && l.get("wdl_loss").is_none(),
            "{l}"
        );
    }
    let mean = |key: &str, range: std::ops::Range<usize>| {
        let n = range.len() as f64;
        range.map(|i| lines[i][key].as_f64().unwrap()).sum::<f64>() / n
    };
    let (first, last) = (
        mean("soft_policy_loss", 0..10),
        mean("soft_policy_loss", 290..300),
    );
    eprintln!("soft_policy_loss: {first:.4} → {last:.4}");
    // Measured: 3.52 → 2.73. The targets are uniform over the empty points, whose entropy
    // stays.
    assert!(last < 0.9 * first, "soft_policy_loss: {first} → {last}");
    let model =
        infer::OrtModel::load(&dir.join("0001.onnx"), &infer::OrtOptions::default()).unwrap();
    assert_eq!(model.info().shape, shape);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Go network of any size (per-point policy, pooling value head) fits on shards of several
/// board sizes at once, each batch of one board, and its model, written for the checkpoint's
/// board, plays every size; a network with fully connected heads skips the shards of another
/// board with a warning and fits on its own.
#[test]
fn a_network_of_any_size_fits_on_boards_of_several_sizes() {
    testkit::onnx_runtime();
    let dir = tmpdir("sizes");
    let shards = dir.join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    // The 7×7 shard is the newest: the window does not take the first shard's board.
    go_aux_shard_of_size(&shards.join("a.safetensors"), 5, 300, 1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    go_aux_shard_of_size(&shards.join("b.safetensors"), 7, 200, 2);
    let shape = games::shape_of("go", Some(5)).unwrap();
    let any = NetConfig {
        blocks: 2,
        channels: 16,
        policy_channels: 4,
        value_channels: 8,
        value_hidden: 16,
        pool_every: 2,
        pool_channels: 4,
        policy_pool: true,
        value_pool: true,
        ownership: true,
        score: true,
        ..NetConfig::default()
    };
    let config = FitConfig {
        steps: 300,
        batch_size: 16,
        learning_rate: 3e-3,
        final_learning_rate: 1e-3,
        score_scale: 2.0,
        ..FitConfig::default()
    };
    for (network, window) in [(any.clone(), 500), (any.plain(), 300)] {
        let start = dir.join("start.safetensors");
        let (varmap, _) = Net::seeded(&network, shape, &Device::Cpu, 2).unwrap();
        let meta = ModelMeta {
            game: "go".into(),
            shape,
            network: network.clone(),
            generation: 0,
        };
        Net::save(&varmap, &meta, &start).unwrap();
        let log = dir.join("losses.jsonl");
        let _ = std::fs::remove_file(&log);
        let report = fit(FitJob {
            shards_dir: &shards,
            checkpoint: &checkpoint(&start),
            teacher: None,
            network: &network,
            config: &config,
            out: &dir.join("0001"),
            generation: 1,
            log: Some(&log),
            on_step: &mut |_, _| {},
        })
        .unwrap();
        assert_eq!(report.window, window, "{network:?}");
        let model =
            infer::OrtModel::load(&dir.join("0001.onnx"), &infer::OrtOptions::default()).unwrap();
        assert_eq!(
            model.info().shape,
            shape,
            "written for the checkpoint's board"
        );
        assert_eq!(model.info().any_size, network == any);
        if network != any {
            continue;
        }
        // Learnt on both boards: the ownership loss falls.
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mean = |range: std::ops::Range<usize>| {
            let n = range.len() as f64;
            range
                .map(|i| lines[i]["ownership_loss"].as_f64().unwrap())
                .sum::<f64>()
                / n
        };
        let (first, last) = (mean(0..20), mean(280..300));
        assert!(last < 0.3 * first, "ownership loss {first} → {last}");
        // And its model evaluates 7×7 positions through the engine.
        let go7 = games::go::GoState::new(games::go::GoRules::with_size(7)).unwrap();
        let evaluator = infer::OrtEvaluator::from_model(model, &go7).unwrap();
        let states = infer::bench::sample_states(&go7, 3, 4);
        let refs: Vec<&games::go::GoState> = states.iter().collect();
        let mut policy = vec![0.0; 3 * 50];
        let mut value = vec![0.0; 3];
        eval::Evaluator::evaluate(&evaluator, &refs, &mut policy, &mut value).unwrap();
        assert!(policy.iter().all(|p| p.is_finite()));
    }
}
