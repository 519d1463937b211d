//! A BERT-family ONNX encoder run by tract: token ids and attention mask in
//! (`token_type_ids` zeros when the graph asks for them), token states out,
//! pooled and L2-normalised. Loaded once per store handle.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tract_onnx::prelude::*;

use super::unigram::Unigram;
use super::{Embedder, Manifest, Pooling, Role, normalize};
use crate::error::{Error, Result};

type Plan = Arc<TypedSimplePlan>;

/// HMG's compact Unigram file, or a Hugging Face `tokenizer.json`
/// (WordPiece, BPE or Unigram, with its normaliser and special tokens).
enum Tokenizer {
    Unigram(Unigram),
    Json(Box<tokenizers::Tokenizer>),
}

pub struct OnnxEmbedder {
    manifest: Manifest,
    tokenizer: Tokenizer,
    pad: u32,
    plan: Plan,
    /// For each graph input, what to feed it.
    inputs: Vec<Feed>,
    dim: usize,
    fingerprint: String,
}

#[derive(Clone, Copy, Debug)]
enum Feed {
    Ids,
    Mask,
    TypeIds,
}

impl std::fmt::Debug for OnnxEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxEmbedder")
            .field("fingerprint", &self.fingerprint)
            .field("dim", &self.dim)
            .finish()
    }
}

fn model_error(what: &str) -> impl Fn(TractError) -> Error + '_ {
    move |e| Error::Model(format!("{what}: {e:#}"))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Model(format!("cannot read {}: {e}", path.display())))
}

/// The first of `names` that exists in `dir`.
fn pick(dir: &Path, chosen: Option<&str>, names: &[&str]) -> Result<PathBuf> {
    if let Some(name) = chosen {
        return Ok(dir.join(name));
    }
    names
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .ok_or_else(|| {
            Error::Model(format!(
                "no {} in model directory {}",
                names.join(" or "),
                dir.display()
            ))
        })
}

impl OnnxEmbedder {
    pub fn load(dir: &Path) -> Result<OnnxEmbedder> {
        let manifest_path = dir.join("hmg-model.json");
        let manifest = if manifest_path.exists() {
            Manifest::parse(&String::from_utf8_lossy(&read(&manifest_path)?))?
        } else {
            Manifest::default()
        };
        let tokenizer_path = pick(
            dir,
            manifest.tokenizer.as_deref(),
            &["tokenizer.bin", "tokenizer.json"],
        )?;
        let tokenizer_bytes = read(&tokenizer_path)?;
        let (tokenizer, pad) = if tokenizer_path.extension().is_some_and(|e| e == "json") {
            let json = tokenizers::Tokenizer::from_bytes(&tokenizer_bytes)
                .map_err(|e| Error::Model(format!("{}: {e}", tokenizer_path.display())))?;
            let pad = ["<pad>", "[PAD]"]
                .iter()
                .find_map(|t| json.token_to_id(t))
                .unwrap_or(0);
            (Tokenizer::Json(Box::new(json)), pad)
        } else {
            let unigram = Unigram::from_bytes(&tokenizer_bytes)?;
            let pad = unigram.pad;
            (Tokenizer::Unigram(unigram), pad)
        };
        let onnx_path = pick(
            dir,
            manifest.onnx.as_deref(),
            &["model.onnx", "e5-small.onnx"],
        )?;
        let onnx_len = std::fs::metadata(&onnx_path).map(|m| m.len()).unwrap_or(0);

        let model = tract_onnx::onnx()
            .model_for_path(&onnx_path)
            .map_err(model_error("cannot parse the ONNX model"))?;
        let mut inputs = Vec::new();
        for outlet in model.input_outlets().map_err(model_error("model inputs"))? {
            let name = model.node(outlet.node).name.as_str();
            inputs.push(match name {
                "input_ids" => Feed::Ids,
                "attention_mask" => Feed::Mask,
                "token_type_ids" => Feed::TypeIds,
                other => {
                    return Err(Error::Model(format!(
                        "model input `{other}` is not one of input_ids, attention_mask, token_type_ids"
                    )));
                }
            });
        }
        let mut model = model;
        let batch = model.symbols.sym("batch");
        let seq = model.symbols.sym("seq");
        for slot in 0..inputs.len() {
            let fact = i64::fact([batch.to_dim(), seq.to_dim()]);
            model
                .set_input_fact(slot, fact.into())
                .map_err(model_error("model input shape"))?;
        }
        let plan = model
            .into_optimized()
            .and_then(|m| m.into_runnable())
            .map_err(model_error("cannot prepare the ONNX model"))?;
        let fingerprint = format!(
            "{}:{:08x}:{onnx_len}",
            manifest.name,
            crc32fast::hash(&tokenizer_bytes)
        );
        let mut embedder = OnnxEmbedder {
            manifest,
            tokenizer,
            pad,
            plan,
            inputs,
            dim: 0,
            fingerprint,
        };
        let probe = embedder.token_ids("", Role::Query);
        embedder.dim = embedder.run(&[probe])?[0].len();
        Ok(embedder)
    }

    /// Token ids of a text as the model sees it (prefix and special tokens
    /// included), cut to the model's window (the last token is kept: it is
    /// the closing special token).
    pub fn token_ids(&self, text: &str, role: Role) -> Vec<u32> {
        let prefixed = format!("{}{text}", self.manifest.prefix(role));
        let max = self.manifest.max_tokens.max(2);
        match &self.tokenizer {
            Tokenizer::Unigram(unigram) => unigram.encode(&prefixed, max),
            Tokenizer::Json(json) => {
                let mut ids = json
                    .encode(prefixed.as_str(), true)
                    .map(|e| e.get_ids().to_vec())
                    .unwrap_or_default();
                if ids.len() > max {
                    let last = ids[ids.len() - 1];
                    ids.truncate(max - 1);
                    ids.push(last);
                }
                ids
            }
        }
    }

    /// One forward pass over a padded batch; pooled, normalised vectors.
    fn run(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let rows = batch.len();
        let cols = batch.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let pad = i64::from(self.pad);
        let ids = tract_ndarray::Array2::from_shape_fn((rows, cols), |(r, c)| {
            batch[r].get(c).map_or(pad, |&id| i64::from(id))
        });
        let mask = tract_ndarray::Array2::from_shape_fn((rows, cols), |(r, c)| {
            i64::from(c < batch[r].len())
        });
        let feeds: TVec<TValue> = self
            .inputs
            .iter()
            .map(|feed| match feed {
                Feed::Ids => Tensor::from(ids.clone()).into(),
                Feed::Mask => Tensor::from(mask.clone()).into(),
                Feed::TypeIds => {
                    Tensor::from(tract_ndarray::Array2::<i64>::zeros((rows, cols))).into()
                }
            })
            .collect();
        let outputs = self.plan.run(feeds).map_err(model_error("model run"))?;
        let states = outputs[0]
            .to_plain_array_view::<f32>()
            .map_err(model_error("model output"))?;
        let shape = states.shape();
        if shape.len() != 3 || shape[0] != rows || shape[1] != cols {
            return Err(Error::Model(format!(
                "model output has shape {shape:?}, expected [{rows}, {cols}, hidden]"
            )));
        }
        let hidden = shape[2];
        let mut out = Vec::with_capacity(rows);
        for (r, ids) in batch.iter().enumerate() {
            let mut v = vec![0f32; hidden];
            match self.manifest.pooling {
                Pooling::Cls => {
                    for (h, x) in v.iter_mut().enumerate() {
                        *x = states[[r, 0, h]];
                    }
                }
                Pooling::Mean => {
                    for c in 0..ids.len() {
                        for (h, x) in v.iter_mut().enumerate() {
                            *x += states[[r, c, h]];
                        }
                    }
                    let n = ids.len().max(1) as f32;
                    v.iter_mut().for_each(|x| *x /= n);
                }
            }
            normalize(&mut v);
            out.push(v);
        }
        Ok(out)
    }
}

impl Embedder for OnnxEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>> {
        let encoded: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t, role)).collect();
        // Similar lengths share a pass, so little compute goes to padding.
        let mut order: Vec<usize> = (0..encoded.len()).collect();
        order.sort_by_key(|&i| encoded[i].len());
        let mut out = vec![Vec::new(); encoded.len()];
        for chunk in order.chunks(self.manifest.batch.max(1)) {
            let batch: Vec<Vec<u32>> = chunk.iter().map(|&i| encoded[i].clone()).collect();
            for (&i, v) in chunk.iter().zip(self.run(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
