//! Exact top-k cosine search over one tenant's embeddings.
//!
//! Rows are scanned as int8 codes (one scale per row, 1 byte per dimension),
//! then the best candidates are re-scored against the stored f16 vectors. The
//! scan also bounds its own error per row (Cauchy–Schwarz on the
//! quantisation residuals), so every row that could still reach the k-th
//! exact score is re-scored: the result equals a brute-force scan over the
//! stored vectors, not an approximation of it. An ANN structure can replace
//! the scan behind [`VectorIndex::search`] later.

use std::collections::HashMap;

use crate::atom::AtomId;
use crate::state::Vectors;

/// Slack for float rounding in the error bound.
const ROUNDING: f32 = 1e-4;

#[derive(Debug, Default, Clone)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<AtomId>,
    slot: HashMap<AtomId, usize>,
    /// `ids.len() × dim` int8 codes; value ≈ code · scale.
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// ‖code · scale‖ and ‖exact − code · scale‖ per row, for the bound.
    norms: Vec<f32>,
    residuals: Vec<f32>,
    /// `ids.len() × dim` exact values (decoded from the stored f16).
    exact: Vec<f32>,
}

/// Symmetric per-vector int8 quantisation: codes, scale, ‖x̂‖, ‖x − x̂‖.
fn quantize(v: &[f32]) -> (Vec<i8>, f32, f32, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let codes: Vec<i8> = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    let (mut norm, mut residual) = (0f32, 0f32);
    for (x, &c) in v.iter().zip(&codes) {
        let q = f32::from(c) * scale;
        norm += q * q;
        residual += (x - q) * (x - q);
    }
    (codes, scale, norm.sqrt(), residual.sqrt())
}

fn int_dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

impl VectorIndex {
    pub fn new(dim: usize) -> VectorIndex {
        VectorIndex {
            dim,
            ..VectorIndex::default()
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn contains(&self, id: AtomId) -> bool {
        self.slot.contains_key(&id)
    }

    /// Adds or replaces a row from its stored (f16) bytes.
    pub fn insert(&mut self, id: AtomId, stored: &[u8]) {
        let v = Vectors::decode(stored);
        if v.len() != self.dim {
            return;
        }
        let (codes, scale, norm, residual) = quantize(&v);
        let at = match self.slot.get(&id) {
            Some(&at) => at,
            None => {
                self.ids.push(id);
                self.codes.resize(self.ids.len() * self.dim, 0);
                self.exact.resize(self.ids.len() * self.dim, 0.0);
                self.scales.push(0.0);
                self.norms.push(0.0);
                self.residuals.push(0.0);
                self.slot.insert(id, self.ids.len() - 1);
                self.ids.len() - 1
            }
        };
        let d = self.dim;
        self.codes[at * d..(at + 1) * d].copy_from_slice(&codes);
        self.exact[at * d..(at + 1) * d].copy_from_slice(&v);
        self.scales[at] = scale;
        self.norms[at] = norm;
        self.residuals[at] = residual;
    }

    /// Removes a row (the last row moves into its place).
    pub fn remove(&mut self, id: AtomId) {
        let Some(at) = self.slot.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        let d = self.dim;
        if at != last {
            self.ids.swap(at, last);
            self.slot.insert(self.ids[at], at);
            self.codes.copy_within(last * d..(last + 1) * d, at * d);
            self.exact.copy_within(last * d..(last + 1) * d, at * d);
            self.scales.swap(at, last);
            self.norms.swap(at, last);
            self.residuals.swap(at, last);
        }
        self.ids.pop();
        self.codes.truncate(last * d);
        self.exact.truncate(last * d);
        self.scales.pop();
        self.norms.pop();
        self.residuals.pop();
    }

    fn exact_score(&self, at: usize, query: &[f32]) -> f32 {
        let row = &self.exact[at * self.dim..(at + 1) * self.dim];
        row.iter().zip(query).map(|(x, y)| x * y).sum()
    }

    /// The `k` rows with the highest dot product with `query` among those
    /// `accept` admits, best first (ties: smaller id first).
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        accept: impl Fn(AtomId) -> bool,
    ) -> Vec<(AtomId, f32)> {
        if k == 0 || query.len() != self.dim || self.ids.is_empty() {
            return Vec::new();
        }
        let (q_codes, q_scale, _, q_residual) = quantize(query);
        let q_len = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        // (row, approximate score, error bound)
        let mut approx: Vec<(usize, f32, f32)> = Vec::new();
        for (at, &id) in self.ids.iter().enumerate() {
            if !accept(id) {
                continue;
            }
            let codes = &self.codes[at * self.dim..(at + 1) * self.dim];
            let score = int_dot(codes, &q_codes) as f32 * self.scales[at] * q_scale;
            // x·q = x̂·q̂ + x̂·(q − q̂) + (x − x̂)·q
            let bound = self.norms[at] * q_residual + self.residuals[at] * q_len + ROUNDING;
            approx.push((at, score, bound));
        }
        approx.sort_by(|a, b| b.1.total_cmp(&a.1));
        let first = k.min(approx.len());
        let mut exact: Vec<(AtomId, f32)> = approx[..first]
            .iter()
            .map(|&(at, _, _)| (self.ids[at], self.exact_score(at, query)))
            .collect();
        let rank = |hits: &mut Vec<(AtomId, f32)>| {
            hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        };
        rank(&mut exact);
        let threshold = exact.last().map_or(f32::NEG_INFINITY, |h| h.1);
        for &(at, score, bound) in &approx[first..] {
            if score + bound >= threshold {
                exact.push((self.ids[at], self.exact_score(at, query)));
            }
        }
        rank(&mut exact);
        exact.truncate(k);
        exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::normalize;
    use proptest::prelude::*;

    fn unit(raw: Vec<f32>) -> Vec<f32> {
        let mut v = raw;
        normalize(&mut v);
        v
    }

    fn stored(v: &[f32]) -> Vec<u8> {
        Vectors::encode(v)
    }

    fn brute(
        rows: &[(AtomId, Vec<f32>)],
        query: &[f32],
        k: usize,
        skip: u128,
    ) -> Vec<(AtomId, f32)> {
        let mut all: Vec<(AtomId, f32)> = rows
            .iter()
            .filter(|(id, _)| id.0 % skip.max(2) != 1 || skip == 0)
            .map(|(id, v)| {
                let exact = Vectors::decode(&stored(v));
                (*id, exact.iter().zip(query).map(|(x, y)| x * y).sum())
            })
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn top_k_equals_brute_force(
            raw in prop::collection::vec(prop::collection::vec(-1f32..1.0, 8), 0..120),
            removed in prop::collection::vec(0usize..120, 0..20),
            query in prop::collection::vec(-1f32..1.0, 8),
            k in 1usize..15,
            skip in 0u128..4,
            duplicate in any::<bool>(),
        ) {
            let mut rows: Vec<(AtomId, Vec<f32>)> =
                raw.into_iter().enumerate().map(|(i, v)| (AtomId(i as u128), unit(v))).collect();
            if duplicate && rows.len() > 3 {
                // Exact ties must order by id, as the oracle does.
                let copy = rows[0].1.clone();
                rows[2].1 = copy;
            }
            let mut index = VectorIndex::new(8);
            for (id, v) in &rows {
                index.insert(*id, &stored(v));
            }
            for r in &removed {
                index.remove(AtomId(*r as u128));
            }
            rows.retain(|(id, _)| !removed.contains(&(id.0 as usize)));
            prop_assert_eq!(index.len(), rows.len());
            let query = unit(query);
            let accept = |id: AtomId| id.0 % skip.max(2) != 1 || skip == 0;
            let got = index.search(&query, k, accept);
            let want = brute(&rows, &query, k, skip);
            prop_assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), want.iter().map(|h| h.0).collect::<Vec<_>>());
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g.1 - w.1).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn replacing_a_row_keeps_one_row() {
        let mut index = VectorIndex::new(4);
        index.insert(AtomId(1), &stored(&unit(vec![1.0, 0.0, 0.0, 0.0])));
        index.insert(AtomId(1), &stored(&unit(vec![0.0, 1.0, 0.0, 0.0])));
        assert_eq!(index.len(), 1);
        let hits = index.search(&[0.0, 1.0, 0.0, 0.0], 5, |_| true);
        assert_eq!(hits.len(), 1);
        assert!((hits[0].1 - 1.0).abs() < 1e-3);
        index.remove(AtomId(1));
        assert!(index.is_empty());
        assert!(index.search(&[0.0, 1.0, 0.0, 0.0], 5, |_| true).is_empty());
    }
}
