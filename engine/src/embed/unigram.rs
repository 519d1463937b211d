//! The SentencePiece Unigram tokenizer of multilingual-e5 (XLM-R vocabulary),
//! read from the compact `tokenizer.bin` that `scripts/model/e5.py` writes.
//! It reproduces the reference C engine's ids exactly: per-code-point
//! normalisation map, collapsed spaces, `▁` word marks, then the Viterbi
//! segmentation with the highest total piece score (unknown characters cost
//! `unk_score`).
//!
//! File layout (little-endian): magic `HMGTOK1\0`, `u32 n_pieces`, `u32 bos,
//! eos, pad, unk`, `f32 unk_score`; `n_pieces × (f32 score, u16 len, bytes)`;
//! `u32 n_norm`, `n_norm × (u32 cp, u8 n, n × u32 cp)`.

use std::collections::HashMap;

use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"HMGTOK1\0";
const WORD_MARK: char = '\u{2581}';

#[derive(Debug)]
pub struct Unigram {
    /// Piece bytes → id (a later duplicate wins, as in the reference).
    index: HashMap<Box<[u8]>, u32>,
    scores: Vec<f32>,
    norm: HashMap<u32, Box<[u32]>>,
    max_piece: usize,
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    unk: u32,
    unk_score: f32,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| Error::Model("tokenizer file is truncated".into()))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
}

impl Unigram {
    pub fn from_bytes(bytes: &[u8]) -> Result<Unigram> {
        if bytes.get(..8) != Some(MAGIC) {
            return Err(Error::Model("not an HMG tokenizer file".into()));
        }
        let mut r = Reader { bytes, at: 8 };
        let n = r.u32()? as usize;
        let (bos, eos, pad, unk) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?);
        let unk_score = r.f32()?;
        let mut index = HashMap::with_capacity(n);
        let mut scores = Vec::with_capacity(n);
        let mut max_piece = 0;
        for id in 0..n as u32 {
            scores.push(r.f32()?);
            let len = u16::from_le_bytes(r.take(2)?.try_into().expect("2 bytes")) as usize;
            let piece = r.take(len)?;
            if !piece.is_empty() {
                index.insert(Box::from(piece), id);
                max_piece = max_piece.max(len);
            }
        }
        let n_norm = r.u32()? as usize;
        let mut norm = HashMap::with_capacity(n_norm);
        for _ in 0..n_norm {
            let cp = r.u32()?;
            let count = r.take(1)?[0] as usize;
            let outs = (0..count)
                .map(|_| r.u32())
                .collect::<Result<Box<[u32]>>>()?;
            norm.insert(cp, outs);
        }
        if unk as usize >= n || bos as usize >= n || eos as usize >= n {
            return Err(Error::Model("tokenizer special ids out of range".into()));
        }
        Ok(Unigram {
            index,
            scores,
            norm,
            max_piece,
            bos,
            eos,
            pad,
            unk,
            unk_score,
        })
    }

    /// `<s> ids(text) </s>`, the content cut to `max_len - 2` pieces.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = self.pieces(text);
        ids.truncate(max_len.saturating_sub(2));
        ids.insert(0, self.bos);
        ids.push(self.eos);
        ids
    }

    /// Content ids, without `<s>` / `</s>`.
    pub fn pieces(&self, text: &str) -> Vec<u32> {
        let mut folded: Vec<char> = Vec::with_capacity(text.len() + 1);
        for ch in text.chars() {
            let mapped = self.norm.get(&(ch as u32));
            let cps = mapped.map_or_else(|| vec![ch as u32], |m| m.to_vec());
            for cp in cps {
                let Some(c) = char::from_u32(cp) else {
                    continue;
                };
                if c == ' ' && folded.last() == Some(&' ') {
                    continue;
                }
                folded.push(c);
            }
        }
        if folded.first() != Some(&' ') {
            folded.insert(0, ' ');
        }
        let chars: Vec<String> = folded
            .iter()
            .map(|&c| if c == ' ' { WORD_MARK } else { c }.to_string())
            .collect();
        self.viterbi(&chars)
    }

    fn viterbi(&self, chars: &[String]) -> Vec<u32> {
        let n = chars.len();
        let mut best = vec![f64::NEG_INFINITY; n + 1];
        let mut back = vec![(0u32, 0usize); n + 1];
        best[0] = 0.0;
        let mut piece = Vec::with_capacity(self.max_piece);
        for i in 0..n {
            if best[i] == f64::NEG_INFINITY {
                continue;
            }
            piece.clear();
            for (e, ch) in chars.iter().enumerate().skip(i) {
                piece.extend_from_slice(ch.as_bytes());
                if piece.len() > self.max_piece {
                    break;
                }
                if let Some(&id) = self.index.get(piece.as_slice())
                    && id != self.unk
                {
                    let score = best[i] + f64::from(self.scores[id as usize]);
                    if score > best[e + 1] {
                        best[e + 1] = score;
                        back[e + 1] = (id, i);
                    }
                }
            }
            let score = best[i] + f64::from(self.unk_score);
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (self.unk, i);
            }
        }
        let mut ids = Vec::new();
        let mut at = n;
        while at > 0 {
            let (id, from) = back[at];
            ids.push(id);
            at = from;
        }
        ids.reverse();
        ids
    }
}
