//! Real inference with the installed all-MiniLM-L6-v2 on each runtime: candle, onnxruntime fp32
//! and onnxruntime int8. The model and onnxruntime must be installed (scripts/install-model.sh;
//! README's install step runs it): without them these tests fail, they never skip.

use std::sync::OnceLock;

use quarry_embed::{
    EmbedOptions, Embedder, LocalEmbedder, ModelDir, Precision, Runtime, DIMS, MODEL_FILES,
};

/// Keep in sync with SENTENCES in tests/reference/reference.py.
const SENTENCES: [&str; 6] = [
    "where do we retry failed uploads",
    "requeue upload with exponential backoff",
    "parse the config file",
    "read settings from a TOML configuration",
    "render the login page template",
    "fn retry_upload(client: &Client, attempts: u32) -> Result<()>",
];

/// Cosine similarities from tests/reference/reference.py (numpy BERT in float64, one sentence
/// at a time; the int8 ONNX build of the model agrees with them within 6e-3).
const REFERENCE_COSINES: [(usize, usize, f32); 15] = [
    (0, 1, 0.543594),
    (0, 2, 0.064867),
    (0, 3, -0.016620),
    (0, 4, -0.055067),
    (0, 5, 0.676533),
    (1, 2, -0.106534),
    (1, 3, -0.085315),
    (1, 4, -0.029661),
    (1, 5, 0.477439),
    (2, 3, 0.556004),
    (2, 4, 0.178416),
    (2, 5, 0.017973),
    (3, 4, 0.104566),
    (3, 5, -0.065895),
    (4, 5, -0.047911),
];

/// First components of each vector, from the same script.
const REFERENCE_HEADS: [[f32; 4]; 6] = [
    [-0.030028, -0.055779, 0.019364, -0.023355],
    [-0.057689, 0.007905, -0.027989, -0.002699],
    [0.058432, 0.045942, -0.087879, -0.017644],
    [-0.037052, 0.012263, -0.057878, -0.030420],
    [-0.040233, 0.092071, -0.002877, -0.091430],
    [-0.028497, 0.037083, -0.016970, -0.023827],
];

const TOLERANCE: f32 = 1e-3;
/// int8 weights and activations move these short sentences' pairwise cosines by up to 0.025
/// (measured; each vector stays within cosine 0.99 of fp32, see below); the ranking
/// assertions hold all the same.
const INT8_TOLERANCE: f32 = 0.04;

fn load(options: EmbedOptions) -> LocalEmbedder {
    LocalEmbedder::new(options)
        .unwrap_or_else(|e| panic!("cannot load the embedding model for the tests: {e:#}"))
}

/// candle, max 256 tokens, batches of 16, global thread pool.
fn default_embedder() -> &'static LocalEmbedder {
    static E: OnceLock<LocalEmbedder> = OnceLock::new();
    E.get_or_init(|| {
        load(EmbedOptions {
            runtime: Runtime::Candle,
            ..Default::default()
        })
    })
}

fn onnx(precision: Precision) -> EmbedOptions {
    EmbedOptions {
        runtime: Runtime::Onnx,
        precision,
        ..Default::default()
    }
}

fn onnx_fp32() -> &'static LocalEmbedder {
    static E: OnceLock<LocalEmbedder> = OnceLock::new();
    E.get_or_init(|| load(onnx(Precision::Fp32)))
}

fn onnx_int8() -> &'static LocalEmbedder {
    static E: OnceLock<LocalEmbedder> = OnceLock::new();
    E.get_or_init(|| load(onnx(Precision::Int8)))
}

/// Every runtime with the tolerance its vectors are held to.
fn runtimes() -> [(&'static LocalEmbedder, f32); 3] {
    [
        (default_embedder(), TOLERANCE),
        (onnx_fp32(), TOLERANCE),
        (onnx_int8(), INT8_TOLERANCE),
    ]
}

/// Short truncation, batches of 2, a private pool: exercises truncation, batching and sorting.
fn small_embedder() -> &'static LocalEmbedder {
    static E: OnceLock<LocalEmbedder> = OnceLock::new();
    E.get_or_init(|| {
        load(EmbedOptions {
            max_tokens: 32,
            batch_size: 2,
            threads: Some(2),
            runtime: Runtime::Candle,
            ..Default::default()
        })
    })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn every_runtime_matches_reference_similarities() {
    for (e, tolerance) in runtimes() {
        let name = e.runtime_name();
        assert!(
            e.fallback_note().is_none(),
            "{name}: {:?}",
            e.fallback_note()
        );
        matches_reference(e, tolerance);
    }
    assert_eq!(default_embedder().runtime_name(), "candle fp32");
    assert_eq!(onnx_fp32().runtime_name(), "onnxruntime fp32");
    assert_eq!(onnx_int8().runtime_name(), "onnxruntime int8");
}

fn matches_reference(e: &LocalEmbedder, tolerance: f32) {
    let name = e.runtime_name();
    assert_eq!(e.dims(), DIMS);
    let v = e.embed(&SENTENCES).unwrap();
    assert_eq!(v.len(), SENTENCES.len());
    for (i, x) in v.iter().enumerate() {
        assert_eq!(x.len(), 384, "{name}: vector {i}");
        let norm = dot(x, x).sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-4,
            "{name}: vector {i} has norm {norm}"
        );
        assert!(x.iter().all(|c| c.is_finite()));
        let head = &x[..4];
        assert!(
            max_abs_diff(head, &REFERENCE_HEADS[i]) < tolerance,
            "{name}: vector {i} starts {head:?}, reference {:?}",
            REFERENCE_HEADS[i]
        );
    }
    let mut worst = 0.0f32;
    for &(i, j, want) in &REFERENCE_COSINES {
        let got = dot(&v[i], &v[j]);
        worst = worst.max((got - want).abs());
        assert!(
            (got - want).abs() < tolerance,
            "{name}: cos({i}, {j}) = {got:.6}, reference {want:.6}: {:?} / {:?}",
            SENTENCES[i],
            SENTENCES[j]
        );
    }
    eprintln!("{name}: largest difference from the reference cosines: {worst:.2e}");

    let cos = |i: usize, j: usize| dot(&v[i], &v[j]);
    // Related pairs beat unrelated ones.
    assert!(cos(0, 1) > cos(0, 2) && cos(0, 1) > cos(0, 4) && cos(0, 1) > cos(1, 3));
    assert!(cos(2, 3) > cos(2, 0) && cos(2, 3) > cos(2, 4) && cos(2, 3) > cos(3, 1));
    assert!(cos(0, 5) > cos(0, 3) && cos(1, 5) > cos(1, 4) && cos(5, 0) > cos(5, 2));
}

#[test]
fn fingerprint_names_model_weights_truncation_and_pooling() {
    let e = default_embedder();
    let fp = e.fingerprint();
    assert_eq!(
        fp,
        "all-MiniLM-L6-v2/sha256:53aa51172d142c89/max-tokens=256/mean-l2/dims=384"
    );
    assert!(e
        .weights_sha256()
        .starts_with("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"));
    assert_ne!(
        small_embedder().fingerprint(),
        fp,
        "truncation is part of the fingerprint"
    );
    // fp32 on onnxruntime gives candle's vectors, so it shares their fingerprint; int8 does not.
    assert_eq!(onnx_fp32().fingerprint(), fp);
    assert_eq!(
        onnx_int8().fingerprint(),
        "all-MiniLM-L6-v2/sha256:53aa51172d142c89/onnx-int8:9bb3da5203f1a6af/max-tokens=256/mean-l2/dims=384"
    );
}

#[test]
fn onnx_fp32_gives_candles_vectors_and_int8_stays_close() {
    let texts: Vec<String> = (0..40)
        .map(|i| format!("fn handler_{i}(request: Request) -> Response {{ retry {i} times }}"))
        .chain(SENTENCES.iter().map(|s| s.to_string()))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let candle = default_embedder().embed(&texts).unwrap();
    let fp32 = onnx_fp32().embed(&texts).unwrap();
    let int8 = onnx_int8().embed(&texts).unwrap();
    for i in 0..texts.len() {
        let d = max_abs_diff(&candle[i], &fp32[i]);
        assert!(
            d < 1e-4,
            "text {i}: onnxruntime fp32 differs from candle by {d}"
        );
        let c = dot(&candle[i], &int8[i]);
        assert!(c > 0.99, "text {i}: int8 cosine to fp32 is {c}");
    }
}

#[test]
fn without_onnxruntime_auto_falls_back_to_candle_and_onnx_is_an_error() {
    let installed = ModelDir::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let tmp = tempfile::tempdir().unwrap();
    for f in MODEL_FILES {
        std::fs::copy(installed.path().join(f), tmp.path().join(f)).unwrap();
    }
    let bare = ModelDir::open(tmp.path()).unwrap();
    assert!(bare
        .onnx_missing(Precision::Int8, quarry_embed::Device::Cpu)
        .is_some());
    let auto = LocalEmbedder::from_dir(&bare, EmbedOptions::default()).unwrap();
    assert_eq!(auto.runtime_name(), "candle fp32");
    let note = auto.fallback_note().expect("the fallback is said");
    assert!(
        note.contains("candle") && note.contains("quarry model install"),
        "{note}"
    );
    assert_eq!(auto.fingerprint(), default_embedder().fingerprint());

    let err = format!(
        "{:#}",
        LocalEmbedder::from_dir(&bare, onnx(Precision::Int8)).unwrap_err()
    );
    assert!(
        err.contains("model_int8.onnx") && err.contains("quarry model install"),
        "{err}"
    );
}

#[test]
fn empty_input_gives_empty_output() {
    assert!(default_embedder().embed(&[]).unwrap().is_empty());
    // An empty text is still a text: [CLS] [SEP] gives a unit vector.
    let v = default_embedder().embed(&[""]).unwrap();
    assert_eq!(v.len(), 1);
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn order_is_preserved_across_sorted_batches() {
    let e = small_embedder();
    let long = "the upload worker retries with backoff ".repeat(3);
    let texts: Vec<&str> = vec![
        "x",
        long.as_str(),
        "parse the config file",
        "",
        "fn retry_upload(client: &Client, attempts: u32) -> Result<()>",
        "render the login page template for the admin area",
        "ok",
    ];
    let lens: Vec<usize> = e.tokenize(&texts).unwrap().iter().map(Vec::len).collect();
    assert!(
        lens.windows(2).any(|w| w[0] < w[1]) && lens.windows(2).any(|w| w[0] > w[1]),
        "{lens:?}"
    );
    let together = e.embed(&texts).unwrap();
    assert_eq!(together.len(), texts.len());
    for (i, t) in texts.iter().enumerate() {
        let alone = e.embed(&[t]).unwrap();
        let d = max_abs_diff(&together[i], &alone[0]);
        assert!(
            d < 1e-4,
            "text {i} ({t:?}) differs by {d} when batched with others"
        );
    }
    // Distinct texts give distinct vectors, so a mix-up could not go unseen.
    assert!(max_abs_diff(&together[0], &together[6]) > 1e-2);

    // int8 quantises activations with one scale per batch, so a text's vector moves a little
    // with its batch-mates (measured worst: 0.977 for the one-letter text); it must stay that
    // text's vector, nearer to itself than to any other.
    let e = onnx_int8();
    let together = e.embed(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let alone = e.embed(&[t]).unwrap();
        let c = dot(&together[i], &alone[0]);
        assert!(
            c > 0.97,
            "int8: text {i} ({t:?}) has cosine {c} to itself alone"
        );
        for (j, other) in together.iter().enumerate().filter(|&(j, _)| j != i) {
            assert!(
                dot(other, &alone[0]) < c,
                "int8: text {i} is nearer text {j}"
            );
        }
    }
}

#[test]
fn text_longer_than_max_tokens_is_truncated() {
    let e = small_embedder();
    let head = "retry the failed upload after a short delay ".repeat(20);
    let a = format!("{head} and then give up");
    let b = format!("{head} completely different ending about parsing TOML configuration");
    let ids = e.tokenize(&[&a]).unwrap();
    assert_eq!(
        ids[0].len(),
        32,
        "truncated to max_tokens, [CLS] and [SEP] included"
    );
    let v = e.embed(&[&a, &b]).unwrap();
    assert!(
        max_abs_diff(&v[0], &v[1]) < 1e-5,
        "only the first 32 tokens count"
    );

    // The default limit, on a text far longer than BERT's 512 positions.
    let huge = "fn handler(request: Request) -> Response { todo!() }\n".repeat(400);
    let ids = default_embedder().tokenize(&[&huge]).unwrap();
    assert_eq!(ids[0].len(), 256);
    let v = default_embedder().embed(&[&huge]).unwrap();
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn missing_model_dir_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-model");
    let err = format!("{:#}", ModelDir::open(&missing).unwrap_err());
    assert!(
        err.contains("not installed") && err.contains("quarry model install"),
        "{err}"
    );
    assert!(err.contains(missing.to_str().unwrap()), "{err}");

    std::fs::write(tmp.path().join("config.json"), "{}").unwrap();
    let err = format!("{:#}", ModelDir::open(tmp.path()).unwrap_err());
    assert!(err.contains("tokenizer.json, model.safetensors"), "{err}");
    assert!(err.contains("quarry model install"), "{err}");
}

#[test]
fn bad_options_are_rejected() {
    let dir = ModelDir::locate().unwrap_or_else(|e| panic!("{e:#}"));
    for options in [
        EmbedOptions {
            max_tokens: 513,
            ..Default::default()
        },
        EmbedOptions {
            max_tokens: 1,
            ..Default::default()
        },
        EmbedOptions {
            batch_size: 0,
            ..Default::default()
        },
        EmbedOptions {
            threads: Some(0),
            ..Default::default()
        },
    ] {
        assert!(
            LocalEmbedder::from_dir(&dir, options.clone()).is_err(),
            "{options:?}"
        );
    }
}

/// `embed.device = cuda`, on onnxruntime as asked or on `auto`: the GPU, or an error naming the
/// install (here, without a GPU build or a GPU) — never candle on the CPU in its place.
#[test]
fn asked_for_the_gpu_it_runs_there_or_says_what_is_missing_never_candle() {
    let installed = ModelDir::locate().unwrap_or_else(|e| panic!("{e:#}"));
    for runtime in [Runtime::Onnx, Runtime::Auto] {
        let options = EmbedOptions {
            device: quarry_embed::Device::Cuda,
            runtime,
            ..EmbedOptions::default()
        };
        match LocalEmbedder::from_dir(&installed, options) {
            // A machine with a GPU and onnxruntime's CUDA build.
            Ok(e) => assert_eq!(e.runtime_name(), "onnxruntime int8 cuda"),
            Err(e) => {
                let message = format!("{e:#}");
                assert!(
                    message.contains("quarry model install gpu"),
                    "{runtime:?}: the error names the install: {message}"
                );
            }
        }
    }
}
