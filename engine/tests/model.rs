//! The real embedding model, natively: tokenizer ids equal the reference
//! engine's, batching changes nothing, and Traditional, Simplified and
//! English queries find a Traditional-Chinese memory. Needs the model that
//! `scripts/model/fetch.sh` prepares (`./setup.sh` runs it); fails without it.

use std::path::PathBuf;

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role, dot};

fn model_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HMG_MODEL_DIR") {
        return dir.into();
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    PathBuf::from(home).join(".cache/hmg/model/e5-small-v2")
}

fn load() -> OnnxEmbedder {
    let dir = model_dir();
    OnnxEmbedder::load(&dir).unwrap_or_else(|e| {
        panic!(
            "cannot load the model from {} ({e}); run scripts/model/fetch.sh",
            dir.display()
        )
    })
}

#[test]
fn tokenizer_and_embeddings() {
    let mut model = load();

    // Token ids equal the reference C engine's on the validation sentences.
    let fixture = std::fs::read_to_string(model_dir().join("token-ids.json")).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&fixture).unwrap();
    assert!(rows.len() >= 16);
    for row in &rows {
        let text = row["text"].as_str().unwrap();
        let role = if row["query"].as_bool().unwrap() {
            Role::Query
        } else {
            Role::Passage
        };
        let want: Vec<u32> = row["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(model.token_ids(text, role), want, "{text}");
    }

    // A batch (padded to its longest text) gives the same vectors as one by one.
    let memories = [
        "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
        "前端用 React 18 和 TypeScript",
        "部署用 ECS，不用 K8s",
        "不要在記憶中儲存資料庫密碼和連線串，使用環境變數",
        "每週五下午三點開迭代回顧會",
    ];
    let batch = model.embed(&memories, Role::Passage).unwrap();
    assert_eq!(model.dim(), 384);
    for (text, v) in memories.iter().zip(&batch) {
        let single = model.embed(&[text], Role::Passage).unwrap().remove(0);
        assert!(dot(v, &single) > 0.9999, "{text}: batch and single differ");
        assert!((dot(v, v) - 1.0).abs() < 1e-4);
    }

    // Cross-lingual and script-folding queries find the database decision.
    for query in [
        "資料庫選型",
        "数据库选型",
        "database choice",
        "我們資料庫用的什麼來著？",
        "which database do we use?",
    ] {
        let q = model.embed(&[query], Role::Query).unwrap().remove(0);
        let scores: Vec<f32> = batch.iter().map(|m| dot(&q, m)).collect();
        eprintln!("{query}: {scores:?}");
        let best = scores
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
        assert_eq!(best, 0, "{query}: {scores:?}");
    }
}

/// Another model directory, as a user would point at one: an ONNX encoder
/// and a Hugging Face `tokenizer.json`, named by `hmg-model.json`. (Here the
/// same e5 graph with the same vocabulary exported as tokenizer.json by
/// `scripts/model/e5.py`, so the result can be checked against the default.)
#[test]
fn a_tokenizer_json_model_directory() {
    let dir = model_dir();
    let custom = tempfile::tempdir().unwrap();
    let manifest = serde_json::json!({
        "name": "e5-via-tokenizer-json",
        "onnx": dir.join("e5-small.onnx"),
        "tokenizer": dir.join("tokenizer.json"),
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
        "pooling": "mean",
        "max_tokens": 512,
    });
    std::fs::write(custom.path().join("hmg-model.json"), manifest.to_string()).unwrap();
    let mut json = OnnxEmbedder::load(custom.path()).unwrap();
    let mut reference = load();
    assert!(json.fingerprint().starts_with("e5-via-tokenizer-json:"));

    let fixture = std::fs::read_to_string(dir.join("token-ids.json")).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&fixture).unwrap();
    let mut same = 0;
    for row in &rows {
        let text = row["text"].as_str().unwrap();
        let role = if row["query"].as_bool().unwrap() {
            Role::Query
        } else {
            Role::Passage
        };
        let ids = json.token_ids(text, role);
        if ids == reference.token_ids(text, role) {
            same += 1;
        } else {
            eprintln!("tokenizer.json differs on {text:?}");
        }
        let a = json.embed(&[text], role).unwrap().remove(0);
        let b = reference.embed(&[text], role).unwrap().remove(0);
        assert!(dot(&a, &b) > 0.98, "{text}: {}", dot(&a, &b));
    }
    // NFKC approximates the reference's normalisation map: only rare
    // characters may tokenize differently.
    assert!(same * 10 >= rows.len() * 8, "{same}/{} equal", rows.len());

    // Long texts are cut to the window, keeping the closing token.
    let long = "資料庫 database ".repeat(400);
    let ids = json.token_ids(&long, Role::Passage);
    assert_eq!(ids.len(), 512);
    assert_eq!(ids.last(), reference.token_ids("", Role::Passage).last());
    assert_eq!(reference.token_ids(&long, Role::Passage).len(), 512);
}
