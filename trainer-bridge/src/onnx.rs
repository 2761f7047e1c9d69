//! Writes a [`Net`](crate::Net)'s weights as an ONNX model for the engine's ONNX Runtime
//! evaluator.
//!
//! The model (opset 17, IR version 8):
//! - input `input`: f32 `[batch, planes, height, width]`, `batch` a dynamic dimension; where the
//!   network has no weight tied to the board's size ([`crate::net::any_size`]: Go with a per-point
//!   policy and a pooling value head) `height` and `width` are dynamic too, and the policy's
//!   size is `height × width + 1`;
//! - outputs `policy`: f32 `[batch, policy_size]` logits, and `value`: f32 `[batch, 1]` in
//!   [−1, 1], from the point of view of the player to act;
//! - further outputs where the network has the head (its `network` keys), after those two:
//!   `ownership` f32 `[batch, height × width]` in [−1, 1] (each point's final owner, row-major,
//!   the mover's view), `score` f32 `[batch, 1]` (final score margin, the mover's view), `wdl`
//!   f32 `[batch, 3]` (win, draw, loss logits for the mover) and `reply_policy` f32 `[batch,
//!   policy_size]` (logits of the opponent's reply). A reader that asks for `policy` and
//!   `value` by name is unaffected by them;
//! - metadata (ONNX `metadata_props`), read back by the engine before it runs a model:
//!   `format_version` (`1`), `game` (the game's `NAME`, e.g. `liuzhou`), `planes`, `height`,
//!   `width`, `policy_size` (decimal integers), `network` (the [`NetConfig`] as JSON) and
//!   `generation` (decimal integer; 0 for a fresh network); `any_size` (`1`) on a model whose
//!   board dims are dynamic, `height` and `width` then the board it was trained on.
//!
//! Batch norm stays as `BatchNormalization` nodes with the running statistics; ONNX Runtime
//! folds them into the convolutions when it optimises the graph. Global pooling is
//! `GlobalAveragePool`, a `Mul` by the width scale and `GlobalMaxPool`, concatenated; the width
//! scale is computed from the input's dims ([`width_scale_graph`]), so the graph is the same
//! for every board.
//!
//! The protobuf messages are declared by hand for the subset of `onnx.proto` written here, so
//! the build needs no `protoc`.

use std::path::{Path, PathBuf};

use candle_nn::VarMap;
use games::TensorShape;
use prost::Message;

use crate::net::{any_size, tmp_path, PolicyForm, BN_EPS};
use crate::NetConfig;

/// Version of the model interface described above; bumped when inputs, outputs or metadata
/// change meaning.
pub const FORMAT_VERSION: u32 = 1;
/// The names of the outputs beyond `policy` and `value`, in the order they are written.
pub const OWNERSHIP: &str = "ownership";
pub const SCORE: &str = "score";
pub const WDL: &str = "wdl";
pub const REPLY_POLICY: &str = "reply_policy";
/// The ONNX operator set the graph uses.
pub const OPSET: i64 = 17;
const IR_VERSION: i64 = 8;

/// The tensor the global pools scale by, computed in the graph from the input's dims.
pub(crate) const WIDTH_SCALE: &str = "width_scale";

/// The nodes and constants that compute [`crate::net::board_width_scale`] of `input`'s board
/// (N, C, H, W) into [`WIDTH_SCALE`] (shape [1]): (√(H·W) − 14)/10.
pub(crate) fn width_scale_graph(input: &str) -> (Vec<proto::NodeProto>, Vec<proto::TensorProto>) {
    let int64s = |name: &str, v: i64| proto::TensorProto {
        dims: vec![1],
        data_type: proto::DATA_TYPE_INT64,
        name: name.into(),
        raw_data: v.to_le_bytes().to_vec(),
    };
    let float = |name: &str, v: f32| proto::TensorProto {
        dims: vec![],
        data_type: proto::DATA_TYPE_FLOAT,
        name: name.into(),
        raw_data: v.to_le_bytes().to_vec(),
    };
    let constants = vec![
        int64s("width_scale.from", 2),
        int64s("width_scale.to", 4),
        float("width_scale.offset", 14.0),
        float("width_scale.divisor", 10.0),
    ];
    let node = |op: &str, inputs: &[&str], out: &str, attrs| {
        proto::NodeProto::new(op, inputs, &[out], out.to_string(), attrs)
    };
    let nodes = vec![
        node("Shape", &[input], "width_scale.dims", vec![]),
        node(
            "Slice",
            &["width_scale.dims", "width_scale.from", "width_scale.to"],
            "width_scale.board",
            vec![],
        ),
        node(
            "ReduceProd",
            &["width_scale.board"],
            "width_scale.points",
            vec![proto::AttributeProto::int("keepdims", 1)],
        ),
        node(
            "Cast",
            &["width_scale.points"],
            "width_scale.pointsf",
            vec![proto::AttributeProto::int(
                "to",
                i64::from(proto::DATA_TYPE_FLOAT),
            )],
        ),
        node("Sqrt", &["width_scale.pointsf"], "width_scale.side", vec![]),
        node(
            "Sub",
            &["width_scale.side", "width_scale.offset"],
            "width_scale.centred",
            vec![],
        ),
        node(
            "Div",
            &["width_scale.centred", "width_scale.divisor"],
            WIDTH_SCALE,
            vec![],
        ),
    ];
    (nodes, constants)
}

/// The input's dims: the board's open where the network plays any size.
pub(crate) fn input_dims(meta: &ModelMeta) -> Vec<proto::Dim> {
    let s = meta.shape;
    let (height, width) = if any_size(&meta.network, s) {
        (proto::Dim::param("height"), proto::Dim::param("width"))
    } else {
        (proto::Dim::value(s.height), proto::Dim::value(s.width))
    };
    vec![
        proto::Dim::param("batch"),
        proto::Dim::value(s.planes),
        height,
        width,
    ]
}

/// An output's dims: `[batch, size]`, `size` open (`name`) where it follows the board of a
/// network that plays any size.
pub(crate) fn output_dims(meta: &ModelMeta, output: &str, size: usize) -> Vec<proto::Dim> {
    let per_point = matches!(output, "policy" | OWNERSHIP | REPLY_POLICY);
    let size = if per_point && any_size(&meta.network, meta.shape) {
        proto::Dim::param(&format!("{output}_size"))
    } else {
        proto::Dim::value(size)
    };
    vec![proto::Dim::param("batch"), size]
}

/// What the engine needs to know about a model besides its weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelMeta {
    /// The game's `NAME` (`liuzhou`, `xiangqi`, `go`).
    pub game: String,
    pub shape: TensorShape,
    pub network: NetConfig,
    /// Training generation: 0 for a fresh network, then one more per accepted model.
    pub generation: u64,
}

/// Why a model could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    #[error("variable {name}: {reason}")]
    Variable { name: String, reason: String },
    // The io error is shown, not chained as a `source`: chains would print it twice.
    #[error("{path}: cannot write: {error}")]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("network config: {0}")]
    Config(String),
}

/// Writes the network held in `varmap` (built by [`Net::new`](crate::Net::new) with
/// `meta.network` and `meta.shape`) as an ONNX model at `path`, through a temporary file
/// renamed into place.
pub fn export_onnx(varmap: &VarMap, meta: &ModelMeta, path: &Path) -> Result<(), OnnxError> {
    let bytes = model_bytes(varmap, meta)?;
    let tmp = tmp_path(path);
    let write = |error| OnnxError::Write {
        path: path.to_owned(),
        error,
    };
    std::fs::write(&tmp, &bytes).map_err(write)?;
    std::fs::rename(&tmp, path).map_err(write)
}

/// The serialised ONNX model (what [`export_onnx`] writes).
pub fn model_bytes(varmap: &VarMap, meta: &ModelMeta) -> Result<Vec<u8>, OnnxError> {
    meta.network.validate().map_err(OnnxError::Config)?;
    let mut g = GraphWriter {
        varmap,
        graph: proto::GraphProto {
            name: format!("{}_pv_resnet", meta.game),
            ..Default::default()
        },
    };
    let s = meta.shape;
    let cfg = &meta.network;
    g.graph
        .input
        .push(proto::ValueInfoProto::tensor("input", input_dims(meta)));
    if cfg.pooling_blocks() > 0 || cfg.policy_pool || cfg.value_pool {
        let (nodes, constants) = width_scale_graph("input");
        g.graph.node.extend(nodes);
        g.graph.initializer.extend(constants);
    }

    let mut h = g.conv_bn("stem.conv", "stem.bn", "input", 3)?;
    h = g.relu(&h);
    for i in 0..cfg.blocks {
        let p = format!("blocks.{i}");
        let y = g.conv_bn(&format!("{p}.conv1"), &format!("{p}.bn1"), &h, 3)?;
        let mut y = g.relu(&y);
        if cfg.pools_in_block(i) {
            let (c, pc) = (cfg.channels, cfg.pool_channels);
            let kept = g.slice(&y, 0, c - pc, &format!("{p}.kept"));
            let pooled = g.slice(&y, c - pc, c, &format!("{p}.pooled"));
            let pooled = g.global_pool(&pooled, &format!("{p}.pool"));
            let bias = g.gemm(
                &format!("{p}.pool.fc"),
                &pooled,
                &format!("{p}.pool.fc.out"),
            )?;
            y = g.add_channel_bias(&kept, &bias, &format!("{p}.biased"));
        }
        let y = g.conv_bn(&format!("{p}.conv2"), &format!("{p}.bn2"), &y, 3)?;
        let sum = g.node("Add", &[&y, &h], format!("{p}.add"), vec![]);
        h = g.relu(&sum);
    }

    let p = g.conv_bn("policy.conv", "policy.bn", &h, 1)?;
    let mut p = g.relu(&p);
    let pooled = if cfg.policy_pool {
        let q = g.conv_bn("policy.gconv", "policy.gbn", &h, 1)?;
        let q = g.relu(&q);
        let pooled = g.global_pool(&q, "policy.pool");
        let bias = g.gemm("policy.gfc", &pooled, "policy.gfc.out")?;
        p = g.add_channel_bias(&p, &bias, "policy.biased");
        Some(pooled)
    } else {
        None
    };
    let form = PolicyForm::of(cfg, s);
    let flat = match form {
        PolicyForm::Dense => Some(g.flatten(&p)),
        PolicyForm::Points { .. } => None,
    };
    let policy_out = |g: &mut GraphWriter, head: &str, out: &str| match (&flat, &pooled) {
        (Some(flat), _) => g.gemm(&format!("{head}.fc"), flat, out).map(|_| ()),
        (None, Some(pooled)) => g.points_policy(head, &p, pooled, out),
        (None, None) => unreachable!("a per-point policy head pools"),
    };
    policy_out(&mut g, "policy", "policy")?;

    let v = g.conv_bn("value.conv", "value.bn", &h, 1)?;
    let v = g.relu(&v);
    let features = if cfg.value_pool {
        g.global_pool(&v, "value.pool")
    } else {
        g.flatten(&v)
    };
    let hidden = g.gemm("value.fc1", &features, "value.fc1.out")?;
    let hidden = g.relu(&hidden);
    let out = g.gemm("value.fc2", &hidden, "value.fc2.out")?;
    g.graph.node.push(proto::NodeProto::new(
        "Tanh",
        &[&out],
        &["value"],
        "value.tanh".into(),
        vec![],
    ));

    let cells = s.height * s.width;
    let mut outputs = vec![("policy", s.policy_size), ("value", 1)];
    if cfg.ownership {
        let o = g.conv_bias("ownership.conv", &v)?;
        let o = g.flatten(&o);
        g.graph.node.push(proto::NodeProto::new(
            "Tanh",
            &[&o],
            &[OWNERSHIP],
            "ownership.tanh".into(),
            vec![],
        ));
        outputs.push((OWNERSHIP, cells));
    }
    if cfg.score {
        g.gemm("value.score", &hidden, SCORE)?;
        outputs.push((SCORE, 1));
    }
    if cfg.wdl {
        g.gemm("value.wdl", &hidden, WDL)?;
        outputs.push((WDL, 3));
    }
    if cfg.reply {
        policy_out(&mut g, "reply", REPLY_POLICY)?;
        outputs.push((REPLY_POLICY, s.policy_size));
    }
    for (name, size) in outputs {
        g.graph.output.push(proto::ValueInfoProto::tensor(
            name,
            output_dims(meta, name, size),
        ));
    }

    Ok(model_proto(g.graph, meta, []).encode_to_vec())
}

/// The model around `graph`: opset, producer and the metadata every model of `meta` carries
/// (format version, game, shape, network, generation), then `extra` keys.
pub(crate) fn model_proto(
    graph: proto::GraphProto,
    meta: &ModelMeta,
    extra: impl IntoIterator<Item = (&'static str, String)>,
) -> proto::ModelProto {
    let s = meta.shape;
    let network = serde_json::to_string(&meta.network).expect("NetConfig serialises");
    let props = [
        ("format_version", FORMAT_VERSION.to_string()),
        ("game", meta.game.clone()),
        ("planes", s.planes.to_string()),
        ("height", s.height.to_string()),
        ("width", s.width.to_string()),
        ("policy_size", s.policy_size.to_string()),
        ("network", network),
        ("generation", meta.generation.to_string()),
    ];
    let any = any_size(&meta.network, s).then(|| ("any_size", "1".to_string()));
    proto::ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: String::new(),
            version: OPSET,
        }],
        producer_name: "trainer-bridge".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(graph),
        metadata_props: props
            .into_iter()
            .chain(any)
            .chain(extra)
            .map(|(k, v)| proto::StringStringEntryProto {
                key: k.into(),
                value: v,
            })
            .collect(),
        ..Default::default()
    }
}

struct GraphWriter<'a> {
    varmap: &'a VarMap,
    graph: proto::GraphProto,
}

impl GraphWriter<'_> {
    /// Adds the variable `name` as an initializer of the same name; returns its dims.
    fn initializer(&mut self, name: &str) -> Result<Vec<usize>, OnnxError> {
        let err = |reason: String| OnnxError::Variable {
            name: name.into(),
            reason,
        };
        let data = self.varmap.data().lock().expect("varmap lock poisoned");
        let var = data
            .get(name)
            .ok_or_else(|| err("missing from the VarMap".into()))?;
        let dims = var.dims().to_vec();
        let values = var
            .as_tensor()
            .flatten_all()
            .and_then(|t| t.to_dtype(candle_core::DType::F32))
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| err(e.to_string()))?;
        // A NaN weight would make every output NaN: refuse to write such a model.
        if !values.iter().all(|v| v.is_finite()) {
            return Err(err("holds non-finite values (NaN or infinity)".into()));
        }
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.graph.initializer.push(proto::TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: proto::DATA_TYPE_FLOAT,
            name: name.into(),
            raw_data: raw,
        });
        Ok(dims)
    }

    fn node(
        &mut self,
        op: &str,
        inputs: &[&str],
        name: String,
        attrs: Vec<proto::AttributeProto>,
    ) -> String {
        let out = format!("{name}.out");
        self.graph
            .node
            .push(proto::NodeProto::new(op, inputs, &[&out], name, attrs));
        out
    }

    fn relu(&mut self, x: &str) -> String {
        let name = format!("{x}.relu");
        self.node("Relu", &[x], name, vec![])
    }

    fn flatten(&mut self, x: &str) -> String {
        let name = format!("{x}.flatten");
        self.node(
            "Flatten",
            &[x],
            name,
            vec![proto::AttributeProto::int("axis", 1)],
        )
    }

    fn conv_bn(&mut self, conv: &str, bn: &str, x: &str, k: i64) -> Result<String, OnnxError> {
        let w = format!("{conv}.weight");
        self.initializer(&w)?;
        let pad = k / 2;
        let c = self.node(
            "Conv",
            &[x, &w],
            conv.into(),
            vec![
                proto::AttributeProto::ints("kernel_shape", &[k, k]),
                proto::AttributeProto::ints("pads", &[pad, pad, pad, pad]),
                proto::AttributeProto::ints("strides", &[1, 1]),
            ],
        );
        let names = ["weight", "bias", "running_mean", "running_var"].map(|p| format!("{bn}.{p}"));
        for n in &names {
            self.initializer(n)?;
        }
        Ok(self.node(
            "BatchNormalization",
            &[&c, &names[0], &names[1], &names[2], &names[3]],
            bn.into(),
            vec![proto::AttributeProto::float("epsilon", BN_EPS as f32)],
        ))
    }

    /// An int64 constant, written once however often it is asked for.
    fn int64s(&mut self, name: &str, values: &[i64]) -> String {
        if !self.graph.initializer.iter().any(|t| t.name == name) {
            self.graph.initializer.push(proto::TensorProto {
                dims: vec![values.len() as i64],
                data_type: proto::DATA_TYPE_INT64,
                name: name.into(),
                raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            });
        }
        name.into()
    }

    /// Channels `from..to` of `x` (N, C, H, W).
    fn slice(&mut self, x: &str, from: usize, to: usize, name: &str) -> String {
        let starts = self.int64s(&format!("{name}.starts"), &[from as i64]);
        let ends = self.int64s(&format!("{name}.ends"), &[to as i64]);
        let axes = self.int64s("axes.channels", &[1]);
        self.node("Slice", &[x, &starts, &ends, &axes], name.into(), vec![])
    }

    /// [`crate::net::global_pool`] of `x` (N, C, H, W): (N, 3·C), means, scaled means, maxima.
    fn global_pool(&mut self, x: &str, name: &str) -> String {
        let mean = self.node("GlobalAveragePool", &[x], format!("{name}.mean"), vec![]);
        let scaled = self.node(
            "Mul",
            &[&mean, WIDTH_SCALE],
            format!("{name}.scaled"),
            vec![],
        );
        let max = self.node("GlobalMaxPool", &[x], format!("{name}.max"), vec![]);
        let all = self.node(
            "Concat",
            &[&mean, &scaled, &max],
            format!("{name}.concat"),
            vec![proto::AttributeProto::int("axis", 1)],
        );
        self.flatten(&all)
    }

    /// `x` (N, C, H, W) plus `bias` (N, C) on each sample's channels.
    fn add_channel_bias(&mut self, x: &str, bias: &str, name: &str) -> String {
        let axes = self.int64s("axes.board", &[2, 3]);
        let b = self.node("Unsqueeze", &[bias, &axes], format!("{name}.bias"), vec![]);
        self.node("Add", &[x, &b], name.into(), vec![])
    }

    /// A 1×1 convolution with bias (`{layer}.weight`, `{layer}.bias`) of `x`.
    fn conv_bias(&mut self, layer: &str, x: &str) -> Result<String, OnnxError> {
        let (w, b) = (format!("{layer}.weight"), format!("{layer}.bias"));
        self.initializer(&w)?;
        self.initializer(&b)?;
        Ok(self.node("Conv", &[x, &w, &b], layer.into(), vec![]))
    }

    /// A per-point policy head's logits into `out`: `{head}.out` (a 1×1 convolution of the
    /// policy channels `p`) for the points, flattened row-major, then `{head}.pass` of the
    /// pooled features for pass.
    fn points_policy(
        &mut self,
        head: &str,
        p: &str,
        pooled: &str,
        out: &str,
    ) -> Result<(), OnnxError> {
        let w = format!("{head}.out.weight");
        self.initializer(&w)?;
        let points = self.node("Conv", &[p, &w], format!("{head}.out"), vec![]);
        let points = self.flatten(&points);
        let pass = self.gemm(&format!("{head}.pass"), pooled, &format!("{head}.pass.out"))?;
        self.graph.node.push(proto::NodeProto::new(
            "Concat",
            &[&points, &pass],
            &[out],
            format!("{head}.concat"),
            vec![proto::AttributeProto::int("axis", 1)],
        ));
        Ok(())
    }

    /// `x · Wᵀ + b` for a candle `Linear` (weight stored as out × in).
    fn gemm(&mut self, layer: &str, x: &str, out: &str) -> Result<String, OnnxError> {
        let w = format!("{layer}.weight");
        let b = format!("{layer}.bias");
        self.initializer(&w)?;
        self.initializer(&b)?;
        self.graph.node.push(proto::NodeProto::new(
            "Gemm",
            &[x, &w, &b],
            &[out],
            layer.into(),
            vec![proto::AttributeProto::int("transB", 1)],
        ));
        Ok(out.into())
    }
}

/// The subset of `onnx.proto` (field numbers as in the ONNX specification) that the writer
/// uses.
pub mod proto {
    pub const DATA_TYPE_FLOAT: i32 = 1;
    pub const DATA_TYPE_INT64: i32 = 7;
    const ATTR_FLOAT: i32 = 1;
    const ATTR_INT: i32 = 2;
    const ATTR_INTS: i32 = 7;

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ModelProto {
        #[prost(int64, tag = "1")]
        pub ir_version: i64,
        #[prost(string, tag = "2")]
        pub producer_name: String,
        #[prost(string, tag = "3")]
        pub producer_version: String,
        #[prost(string, tag = "4")]
        pub domain: String,
        #[prost(int64, tag = "5")]
        pub model_version: i64,
        #[prost(string, tag = "6")]
        pub doc_string: String,
        #[prost(message, optional, tag = "7")]
        pub graph: Option<GraphProto>,
        #[prost(message, repeated, tag = "8")]
        pub opset_import: Vec<OperatorSetIdProto>,
        #[prost(message, repeated, tag = "14")]
        pub metadata_props: Vec<StringStringEntryProto>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OperatorSetIdProto {
        #[prost(string, tag = "1")]
        pub domain: String,
        #[prost(int64, tag = "2")]
        pub version: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct StringStringEntryProto {
        #[prost(string, tag = "1")]
        pub key: String,
        #[prost(string, tag = "2")]
        pub value: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct GraphProto {
        #[prost(message, repeated, tag = "1")]
        pub node: Vec<NodeProto>,
        #[prost(string, tag = "2")]
        pub name: String,
        #[prost(message, repeated, tag = "5")]
        pub initializer: Vec<TensorProto>,
        #[prost(message, repeated, tag = "11")]
        pub input: Vec<ValueInfoProto>,
        #[prost(message, repeated, tag = "12")]
        pub output: Vec<ValueInfoProto>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NodeProto {
        #[prost(string, repeated, tag = "1")]
        pub input: Vec<String>,
        #[prost(string, repeated, tag = "2")]
        pub output: Vec<String>,
        #[prost(string, tag = "3")]
        pub name: String,
        #[prost(string, tag = "4")]
        pub op_type: String,
        #[prost(message, repeated, tag = "5")]
        pub attribute: Vec<AttributeProto>,
    }

    impl NodeProto {
        pub fn new(
            op: &str,
            inputs: &[&str],
            outputs: &[&str],
            name: String,
            attribute: Vec<AttributeProto>,
        ) -> Self {
            NodeProto {
                input: inputs.iter().map(|s| s.to_string()).collect(),
                output: outputs.iter().map(|s| s.to_string()).collect(),
                name,
                op_type: op.into(),
                attribute,
            }
        }
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AttributeProto {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(float, tag = "2")]
        pub f: f32,
        #[prost(int64, tag = "3")]
        pub i: i64,
        #[prost(int64, repeated, tag = "8")]
        pub ints: Vec<i64>,
        #[prost(int32, tag = "20")]
        pub r#type: i32,
    }

    impl AttributeProto {
        pub fn int(name: &str, i: i64) -> Self {
            AttributeProto {
                name: name.into(),
                i,
                r#type: ATTR_INT,
                ..Default::default()
            }
        }
        pub fn ints(name: &str, ints: &[i64]) -> Self {
            AttributeProto {
                name: name.into(),
                ints: ints.to_vec(),
                r#type: ATTR_INTS,
                ..Default::default()
            }
        }
        pub fn float(name: &str, f: f32) -> Self {
            AttributeProto {
                name: name.into(),
                f,
                r#type: ATTR_FLOAT,
                ..Default::default()
            }
        }
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TensorProto {
        #[prost(int64, repeated, tag = "1")]
        pub dims: Vec<i64>,
        #[prost(int32, tag = "2")]
        pub data_type: i32,
        #[prost(string, tag = "8")]
        pub name: String,
        /// Little-endian values, row-major.
        #[prost(bytes = "vec", tag = "9")]
        pub raw_data: Vec<u8>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueInfoProto {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub r#type: Option<TypeProto>,
    }

    impl ValueInfoProto {
        /// A float tensor value of the given dims.
        pub fn tensor(name: &str, dim: Vec<Dim>) -> Self {
            ValueInfoProto {
                name: name.into(),
                r#type: Some(TypeProto {
                    tensor_type: Some(TypeTensor {
                        elem_type: DATA_TYPE_FLOAT,
                        shape: Some(TensorShapeProto { dim }),
                    }),
                }),
            }
        }
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TypeProto {
        #[prost(message, optional, tag = "1")]
        pub tensor_type: Option<TypeTensor>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TypeTensor {
        #[prost(int32, tag = "1")]
        pub elem_type: i32,
        #[prost(message, optional, tag = "2")]
        pub shape: Option<TensorShapeProto>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TensorShapeProto {
        #[prost(message, repeated, tag = "1")]
        pub dim: Vec<Dim>,
    }

    /// One dimension: a fixed size (`dim_value`) or a named dynamic one (`dim_param`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dim {
        #[prost(oneof = "DimValue", tags = "1, 2")]
        pub value: Option<DimValue>,
    }

    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum DimValue {
        #[prost(int64, tag = "1")]
        DimValue(i64),
        #[prost(string, tag = "2")]
        DimParam(String),
    }

    impl Dim {
        pub fn value(n: usize) -> Self {
            Dim {
                value: Some(DimValue::DimValue(n as i64)),
            }
        }
        pub fn param(name: &str) -> Self {
            Dim {
                value: Some(DimValue::DimParam(name.into())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Net;
    use candle_core::Device;

    #[test]
    fn writes_metadata_io_and_every_variable() {
        let cfg = NetConfig {
            blocks: 1,
            channels: 4,
            ..NetConfig::default()
        };
        let shape = TensorShape {
            planes: 3,
            height: 4,
            width: 5,
            policy_size: 7,
        };
        let (varmap, _) = Net::fresh(&cfg, shape, &Device::Cpu).unwrap();
        let meta = ModelMeta {
            game: "testgame".into(),
            shape,
            network: cfg.clone(),
            generation: 3,
        };
        let bytes = model_bytes(&varmap, &meta).unwrap();
        let model = proto::ModelProto::decode(bytes.as_slice()).unwrap();
        let prop = |k: &str| {
            model
                .metadata_props
                .iter()
                .find(|p| p.key == k)
                .map(|p| p.value.clone())
                .unwrap()
        };
        assert_eq!(prop("game"), "testgame");
        assert_eq!(prop("planes"), "3");
        assert_eq!(prop("height"), "4");
        assert_eq!(prop("width"), "5");
        assert_eq!(prop("policy_size"), "7");
        assert_eq!(prop("generation"), "3");
        assert_eq!(
            serde_json::from_str::<NetConfig>(&prop("network")).unwrap(),
            cfg
        );
        let graph = model.graph.unwrap();
        assert_eq!(graph.input[0].name, "input");
        let outs: Vec<_> = graph.output.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(outs, ["policy", "value"]);
        // Every variable of the network is an initializer with its candle shape.
        let vars = varmap.data().lock().unwrap();
        assert_eq!(graph.initializer.len(), vars.len());
        for init in &graph.initializer {
            let dims: Vec<i64> = vars[&init.name].dims().iter().map(|&d| d as i64).collect();
            assert_eq!(init.dims, dims, "{}", init.name);
            assert_eq!(
                init.raw_data.len(),
                4 * dims.iter().product::<i64>() as usize
            );
        }
    }
}
