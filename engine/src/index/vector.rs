//! Exact top-k cosine search over one tenant's embeddings.
//!
//! Rows are scanned as int8 codes (one scale per row, 1 byte per dimension),
//! then the best candidates are re-scored against the stored rows. The
//! scan also bounds its own error per row (Cauchy–Schwarz on the query's
//! quantisation residual: a stored row is its int8 codes), so every row
//! that could still reach the k-th exact score is re-scored: the result
//! equals a brute-force scan over the stored vectors, not an approximation
//! of it. An ANN structure can replace the scan behind
//! [`VectorIndex::search`] later.
//!
//! Language-neutral scoring ([`VectorIndex::search_neutral`]): multilingual
//! encoders keep a per-language offset (Libovický et al. 2020), so a
//! Chinese query sits closer to any Chinese memory than to the English one
//! that answers it. Each row belongs to a script bucket (CJK: two or more
//! CJK characters; other); once both buckets of a tenant hold
//! [`MIN_BUCKET`] rows, query and rows are centred on their own bucket's
//! mean before the cosine: `cos(q − m_q, d − m_d)`. The means are frozen
//! and re-taken when a bucket doubles or halves (every row's `d·m` is then
//! recomputed), so the cost per write stays constant on average; the scan
//! is the same int8 scan with the same per-row error bound, scaled.
//!
//! Approximate search above [`APPROXIMATE_ABOVE`] rows: every row also
//! keeps a sign sketch (one bit per dimension: the signs of the row minus
//! its bucket's mean), and the search first ranks all rows by the Hamming
//! distance of their sketch to the query's — 48 bytes per row instead of
//! 384 — then runs the exact scan above over the nearest rows only
//! (binary quantisation with oversampling and exact re-scoring). The
//! caller's filter applies to those candidates; if fewer than `k` of them
//! pass it, the depth grows (up to every row, the exact search), so scope
//! filtering never silently shortens a result. Its agreement with the
//! exact search is measured (`--bin scale`) and property-tested.
//!
//! Building an index costs several passes over every row; a process that
//! searches once (every `hmg recall`) is better served by
//! [`search_rows`]: the same exact scores straight from the stored rows,
//! in two passes.

use std::collections::HashMap;

use crate::atom::AtomId;
use crate::state::{Row, Vectors};

/// Slack for float rounding in the error bound.
const ROUNDING: f32 = 1e-4;

/// Rows each script bucket needs before scoring is language-neutral.
pub const MIN_BUCKET: usize = 20;

/// Above this many rows a search is approximate (sketch scan first).
pub const APPROXIMATE_ABOVE: usize = 50_000;

/// The fewest candidates the sketch scan hands on ([`VectorIndex::depth`]).
pub const DEPTH_FLOOR: usize = 4_000;

/// The sign sketch of `v − mean` (of `v` if `mean` is empty) into `out`.
fn sketch(v: &[f32], mean: &[f32], out: &mut [u64]) {
    // 64 comparisons per word, without a branch or a bounds check each
    // (building the index computes this for every row).
    for (w, (chunk, word)) in v.chunks(64).zip(out.iter_mut()).enumerate() {
        let m = mean.get(w * 64..w * 64 + chunk.len()).unwrap_or(&[]);
        *word = if m.is_empty() {
            chunk
                .iter()
                .enumerate()
                .fold(0, |acc, (i, x)| acc | (u64::from(*x > 0.0) << i))
        } else {
            chunk
                .iter()
                .zip(m)
                .enumerate()
                .fold(0, |acc, (i, (x, m))| acc | (u64::from(x > m) << i))
        };
    }
}

#[derive(Debug, Default, Clone)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<AtomId>,
    slot: HashMap<AtomId, usize>,
    /// Per row, its values as stored (an int8 row, [`Row`]; the state's own
    /// bytes, shared, not a copy): the scan reads its codes in place, and a
    /// row is decoded when it is re-scored.
    exact: Vec<Row>,
    /// Per row: its script bucket (1: CJK, 0: other), ‖d‖², and d·m of its
    /// bucket's frozen mean.
    buckets: Vec<u8>,
    squares: Vec<f32>,
    dm: Vec<f32>,
    /// Per bucket: the sum of its rows, their number, the frozen mean (empty
    /// below [`MIN_BUCKET`]) and the row count it was taken at.
    sums: [Vec<f64>; 2],
    counts: [usize; 2],
    means: [Vec<f32>; 2],
    frozen: [usize; 2],
    /// `ids.len() × words` sign sketches (see the module comment).
    sketches: Vec<u64>,
    /// Rows above which searches are approximate ([`APPROXIMATE_ABOVE`]),
    /// and how many candidates then, if not by [`VectorIndex::depth`]'s rule.
    approximate_above: usize,
    fixed_depth: Option<usize>,
}

/// The `depth` rows nearest by sketch distance (ties at the cut: lower
/// rows first), by a histogram of the distances: no sort.
fn nearest(distances: &[u16], depth: usize, dim: usize) -> Vec<usize> {
    let mut histogram = vec![0usize; dim + 1];
    for d in distances {
        histogram[usize::from(*d).min(dim)] += 1;
    }
    let (mut cut, mut below) = (0, 0);
    while cut < dim && below + histogram[cut] < depth {
        below += histogram[cut];
        cut += 1;
    }
    let mut at_cut = depth.saturating_sub(below);
    let mut rows = Vec::with_capacity(depth);
    for (row, d) in distances.iter().enumerate() {
        let d = usize::from(*d);
        if d < cut {
            rows.push(row);
        } else if d == cut && at_cut > 0 {
            rows.push(row);
            at_cut -= 1;
        }
    }
    rows
}

/// u64 words of a sketch of `dim` dimensions.
fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// A query's symmetric int8 quantisation, by the rule rows are stored with
/// ([`Vectors::encode`]): codes, scale and ‖x − x̂‖.
fn quantize(v: &[f32]) -> (Vec<i8>, f32, f32) {
    let row = Vectors::encode(v);
    let scale = Vectors::scale(&row);
    let codes: Vec<i8> = Vectors::codes(&row).iter().map(|c| *c as i8).collect();
    let residual = v
        .iter()
        .zip(&codes)
        .map(|(x, &c)| {
            let d = x - f32::from(c) * scale;
            d * d
        })
        .sum::<f32>()
        .sqrt();
    (codes, scale, residual)
}

/// Partial sums a dot product keeps: eight interleaved sums vectorise (one
/// running sum is a chain of dependent adds), then they are added in order.
const LANES: usize = 8;

/// A dot product (0 against an empty vector: no mean yet), summed in
/// [`LANES`] partial sums. Every score of this module is summed this way,
/// so a search over the rows and a search of the index agree to the bit.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    for (x, y) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += x[l] * y[l];
        }
    }
    let rest = a.chunks_exact(LANES).remainder();
    let rest = rest.iter().zip(b.chunks_exact(LANES).remainder());
    added(acc) + rest.fold(0.0, |s, (x, y)| s + x * y)
}

/// The partial sums of [`dot`], added in order.
fn added(acc: [f32; LANES]) -> f32 {
    acc.iter().fold(0.0, |s, x| s + x)
}

/// The dot product of a row's codes and a query's, in 16 running sums of
/// i16 products (an i8 product fits an i16): the form that vectorises to
/// widening multiplies (2× the plain sum natively; in the component at a
/// million rows the scan waits on memory either way).
fn int_dot(a: &[u8], b: &[i8]) -> i32 {
    let product = |x: &u8, y: &i8| i32::from(i16::from(*x as i8) * i16::from(*y));
    let (a, b) = (a.chunks_exact(16), b.chunks_exact(16));
    let rest: i32 = a
        .remainder()
        .iter()
        .zip(b.remainder())
        .map(|(x, y)| product(x, y))
        .sum();
    let mut acc = [0i32; 16];
    for (x, y) in a.zip(b) {
        for l in 0..16 {
            acc[l] += product(&x[l], &y[l]);
        }
    }
    acc.iter().sum::<i32>() + rest
}

/// A query centred on its script bucket's mean, and what a row's centred
/// cosine needs of it: `cos(q', d − m_b) = (q'·d − q'·m_b) / (‖q'‖ ·
/// ‖d − m_b‖)`, with `‖d − m_b‖² = ‖d‖² − 2 d·m_b + ‖m_b‖²`.
struct Centred {
    query: Vec<f32>,
    length: f32,
    /// Per bucket: `q'·m_b` and `‖m_b‖²`.
    offsets: [f32; 2],
    squares: [f32; 2],
}

impl Centred {
    /// `None` unless both buckets have a mean and the centred query is not
    /// (nearly) zero: then scoring is the plain dot product.
    fn new(query: &[f32], means: &[Vec<f32>; 2], cjk: bool) -> Option<Centred> {
        if means.iter().any(Vec::is_empty) {
            return None;
        }
        let centred: Vec<f32> = query
            .iter()
            .zip(&means[usize::from(cjk)])
            .map(|(q, m)| q - m)
            .collect();
        let length = dot(&centred, &centred).sqrt();
        (length >= 1e-6).then(|| Centred {
            offsets: [dot(&centred, &means[0]), dot(&centred, &means[1])],
            squares: [dot(&means[0], &means[0]), dot(&means[1], &means[1])],
            query: centred,
            length,
        })
    }

    /// The `(offset, scale)` of a row of bucket `b` with `‖d‖²` `square`
    /// and `d·m_b` `dm`: its score is `(q'·d − offset) · scale`.
    fn transform(&self, b: usize, square: f32, dm: f32) -> (f32, f32) {
        let norm = (square - 2.0 * dm + self.squares[b]).max(1e-6).sqrt();
        (self.offsets[b], 1.0 / (self.length * norm))
    }
}

/// Rows a block of [`Sums`] adds in f32 before adding the block in f64.
const BLOCK: usize = 32;

/// Per bucket, the sum of many rows at once (building an index, or a search
/// without one): in f32 over blocks of [`BLOCK`] rows, each block then
/// added to an f64 sum — an f64 add per value was most of a pass over
/// every row. Both sum in row order, so they take the same means.
struct Sums {
    total: [Vec<f64>; 2],
    block: [Vec<f32>; 2],
    in_block: [usize; 2],
}

impl Sums {
    fn new(dim: usize) -> Sums {
        Sums {
            total: [vec![0.0; dim], vec![0.0; dim]],
            block: [vec![0.0; dim], vec![0.0; dim]],
            in_block: [0; 2],
        }
    }

    fn add(&mut self, v: &[f32], b: usize) {
        for (s, x) in self.block[b].iter_mut().zip(v) {
            *s += x;
        }
        self.in_block[b] += 1;
        if self.in_block[b] == BLOCK {
            self.flush(b);
        }
    }

    fn flush(&mut self, b: usize) {
        for (t, s) in self.total[b].iter_mut().zip(&mut self.block[b]) {
            *t += f64::from(*s);
            *s = 0.0;
        }
        self.in_block[b] = 0;
    }

    fn finish(mut self) -> [Vec<f64>; 2] {
        self.flush(0);
        self.flush(1);
        self.total
    }
}

/// Visits `items` (score, row) by falling score, ties in `order`, sorting
/// a chunk of at least `first` at a time (the first chunk usually
/// suffices: no full sort), until `visit` returns false.
fn by_falling_score(
    items: &mut [(f32, usize)],
    first: usize,
    order: impl Fn(&(f32, usize), &(f32, usize)) -> std::cmp::Ordering,
    mut visit: impl FnMut(f32, usize) -> bool,
) {
    let (mut sorted, mut next) = (0, 0);
    while next < items.len() {
        if next == sorted {
            let rest = &mut items[sorted..];
            let chunk = first.max(sorted).min(rest.len());
            if chunk < rest.len() {
                rest.select_nth_unstable_by(chunk - 1, &order);
            }
            rest[..chunk].sort_unstable_by(&order);
            sorted += chunk;
        }
        let (score, at) = items[next];
        next += 1;
        if !visit(score, at) {
            return;
        }
    }
}

/// One search straight over stored rows (id, row bytes, CJK bucket; ids
/// distinct and ascending), without building an index: exactly what
/// [`VectorIndex::from_rows`] over the same rows followed by
/// [`VectorIndex::search_neutral`] returns while that search is exact (up
/// to [`APPROXIMATE_ABOVE`] rows; above it, the exact answer the
/// approximate search approaches). Two passes over the rows (the bucket
/// means, then the scores) cost a fraction of building the index, so a
/// process that searches once should not build one.
pub fn search_rows(
    dim: usize,
    rows: &[(AtomId, Row, bool)],
    query: &[f32],
    k: usize,
    accept: impl Fn(AtomId) -> bool,
    cjk: bool,
) -> (Vec<(AtomId, f32)>, bool) {
    search_rows_with(dim, rows, &row_means(dim, rows), query, k, accept, cjk)
}

/// The script buckets' means of `rows` as [`search_rows`] takes them (both
/// empty unless each bucket has [`MIN_BUCKET`] rows), summed in row order
/// as the index sums them: the first of its two passes, which a process
/// searching the same rows again can keep.
pub fn row_means(dim: usize, rows: &[(AtomId, Row, bool)]) -> [Vec<f32>; 2] {
    let fits = |row: &Row| row.len() == Vectors::row_len(dim);
    let mut counts = [0usize; 2];
    for (_, row, c) in rows {
        counts[usize::from(*c)] += usize::from(fits(row));
    }
    let mut means: [Vec<f32>; 2] = Default::default();
    if counts.iter().all(|n| *n >= MIN_BUCKET) {
        let mut v = vec![0f32; dim];
        let mut sums = Sums::new(dim);
        for (_, row, c) in rows.iter().filter(|r| fits(&r.1)) {
            Vectors::decode_into(row, &mut v);
            sums.add(&v, usize::from(*c));
        }
        let sums = sums.finish();
        for b in 0..2 {
            let n = counts[b] as f64;
            means[b] = sums[b].iter().map(|s| (s / n) as f32).collect();
        }
    }
    means
}

/// [`search_rows`] with the means [`row_means`] took of these rows.
pub fn search_rows_with(
    dim: usize,
    rows: &[(AtomId, Row, bool)],
    means: &[Vec<f32>; 2],
    query: &[f32],
    k: usize,
    accept: impl Fn(AtomId) -> bool,
    cjk: bool,
) -> (Vec<(AtomId, f32)>, bool) {
    if k == 0 || query.len() != dim {
        return (Vec::new(), false);
    }
    let fits = |row: &Row| row.len() == Vectors::row_len(dim);
    let mut v = vec![0f32; dim];
    let centred = Centred::new(query, means, cjk);
    let mut scored: Vec<(f32, usize)> = Vec::with_capacity(rows.len());
    for (at, (_, row, c)) in rows.iter().enumerate() {
        if !fits(row) {
            continue;
        }
        Vectors::decode_into(row, &mut v);
        let score = match &centred {
            None => dot(&v, query),
            Some(q) => {
                let b = usize::from(*c);
                // Three passes over the decoded row (in cache): they
                // vectorise, where one loop keeping the 24 partial sums
                // compiled to shuffles, several times slower.
                let (exact, square, dm) = (dot(&v, &q.query), dot(&v, &v), dot(&v, &means[b]));
                let (offset, scale) = q.transform(b, square, dm);
                (exact - offset) * scale
            }
        };
        scored.push((score, at));
    }
    let order = |a: &(f32, usize), b: &(f32, usize)| {
        b.0.total_cmp(&a.0).then(rows[a.1].0.cmp(&rows[b.1].0))
    };
    let mut hits = Vec::with_capacity(k);
    by_falling_score(&mut scored, 4 * k + 64, order, |score, at| {
        if accept(rows[at].0) {
            hits.push((rows[at].0, score));
        }
        hits.len() < k
    });
    (hits, centred.is_some())
}

impl VectorIndex {
    pub fn new(dim: usize) -> VectorIndex {
        VectorIndex {
            dim,
            approximate_above: APPROXIMATE_ABOVE,
            ..VectorIndex::default()
        }
    }

    /// Searches are exact up to `above` rows, approximate beyond, with
    /// `depth` candidates (`None`: the rule of [`VectorIndex::depth`]);
    /// benchmarks and tests move both.
    pub fn set_approximate(&mut self, above: usize, depth: Option<usize>) {
        self.approximate_above = above;
        self.fixed_depth = depth;
    }

    /// How many candidates the sketch scan hands on for `k` results: 200
    /// per result, 2 % of the rows, at least [`DEPTH_FLOOR`]. (At 1M
    /// replayed e5 rows, `--bin scale`: recall@10 against the exact search
    /// 0.994 at 0.4 %, 1.000 at 2 %; docs/BENCHMARKS.md.)
    fn depth(&self, k: usize) -> usize {
        let rule = (k * 200).max(self.ids.len() / 50).max(DEPTH_FLOOR);
        self.fixed_depth.unwrap_or(rule).max(1)
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

    /// Adds or replaces a row from its stored bytes (script: other).
    pub fn insert(&mut self, id: AtomId, stored: Row) {
        self.insert_scripted(id, stored, false);
    }

    /// Adds or replaces a row, in the CJK bucket or the other.
    pub fn insert_scripted(&mut self, id: AtomId, stored: Row, cjk: bool) {
        let v = Vectors::decode(&stored);
        if v.len() != self.dim {
            return;
        }
        // A replaced row leaves first (its bucket's sum with it), so the
        // row is always appended.
        self.remove(id);
        let b = usize::from(cjk);
        self.push(id, stored, &v, b);
        self.sums[b].resize(self.dim, 0.0);
        for (s, x) in self.sums[b].iter_mut().zip(&v) {
            *s += f64::from(*x);
        }
        self.dm.push(dot(&v, &self.means[b]));
        let at = self.sketches.len();
        self.sketches.resize(at + words(self.dim), 0);
        sketch(&v, &self.means[b], &mut self.sketches[at..]);
        self.refreeze(b);
    }

    /// Appends a row (decoded `v` of its `stored` bytes) to bucket `b`:
    /// its codes and bounds, and the bucket's count — everything but the
    /// bucket's sum, its `d·m` and sketch, which follow the bucket's mean.
    fn push(&mut self, id: AtomId, stored: Row, v: &[f32], b: usize) {
        // A stored row is already int8 at one scale: the scan reads its
        // codes and scale where they are (`v` is `code · scale` exactly).
        let square = dot(v, v);
        self.slot.insert(id, self.ids.len());
        self.ids.push(id);
        self.exact.push(stored);
        self.buckets.push(b as u8);
        self.squares.push(square);
        self.counts[b] += 1;
    }

    /// An index of these rows (stored bytes, CJK bucket or not) at
    /// once: one pass to fill the columns, then the bucket means and every
    /// row's `d·m` and sketch once — what `insert_scripted` row by row would
    /// end with, without re-taking the means as the buckets grow. Rows of
    /// another dimension and repeated ids are skipped.
    pub fn from_rows(
        dim: usize,
        rows: impl IntoIterator<Item = (AtomId, Row, bool)>,
    ) -> VectorIndex {
        let mut index = VectorIndex::new(dim);
        let rows = rows.into_iter();
        // Sized once, with room for the writes that follow (an eighth
        // more): grown by doubling, the columns would be copied into twice
        // their size, and an exact fit would be at the first insert.
        let n = rows.size_hint().0;
        let n = n + n / 8 + 1024;
        index.ids.reserve(n);
        index.slot.reserve(n);
        index.squares.reserve_exact(n);
        index.exact.reserve_exact(n);
        index.buckets.reserve_exact(n);
        let mut v = vec![0f32; dim];
        let mut sums = Sums::new(dim);
        for (id, stored, cjk) in rows {
            if stored.len() != Vectors::row_len(dim) || index.slot.contains_key(&id) {
                continue;
            }
            Vectors::decode_into(&stored, &mut v);
            index.push(id, stored, &v, usize::from(cjk));
            sums.add(&v, usize::from(cjk));
        }
        index.sums = sums.finish();
        index.dm = vec![0.0; index.ids.len()];
        index.sketches = vec![0; index.ids.len() * words(dim)];
        for b in 0..2 {
            index.refreeze(b);
            if index.frozen[b] == 0 {
                // No mean: refreeze derived nothing for this bucket.
                index.rederive(b);
            }
        }
        index
    }

    /// Re-takes a bucket's mean when it first reaches [`MIN_BUCKET`] rows,
    /// doubles or halves since the last time; drops it below the minimum.
    fn refreeze(&mut self, b: usize) {
        let (n, at) = (self.counts[b], self.frozen[b]);
        if n < MIN_BUCKET {
            if at != 0 {
                self.means[b].clear();
                self.frozen[b] = 0;
                self.rederive(b);
            }
            return;
        }
        if at != 0 && n < 2 * at && 2 * n > at {
            return;
        }
        self.means[b] = self.sums[b].iter().map(|s| (s / n as f64) as f32).collect();
        self.frozen[b] = n;
        self.rederive(b);
    }

    /// Every row of bucket `b`: its `d·m` and its sketch, after the
    /// bucket's mean changed.
    fn rederive(&mut self, b: usize) {
        let w = words(self.dim);
        let mut v = vec![0f32; self.dim];
        for row in 0..self.ids.len() {
            if usize::from(self.buckets[row]) == b {
                Vectors::decode_into(&self.exact[row], &mut v);
                self.dm[row] = dot(&v, &self.means[b]);
                sketch(
                    &v,
                    &self.means[b],
                    &mut self.sketches[row * w..(row + 1) * w],
                );
            }
        }
    }

    /// Whether scoring is language-neutral (both buckets have a mean).
    pub fn neutral(&self) -> bool {
        !self.means[0].is_empty() && !self.means[1].is_empty()
    }

    /// Removes a row (the last row moves into its place).
    pub fn remove(&mut self, id: AtomId) {
        let Some(at) = self.slot.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        let d = self.dim;
        let b = usize::from(self.buckets[at]);
        let removed = Vectors::decode(self.row(at));
        for (s, x) in self.sums[b].iter_mut().zip(removed) {
            *s -= f64::from(x);
        }
        self.counts[b] -= 1;
        if at != last {
            self.buckets.swap(at, last);
            self.squares.swap(at, last);
            self.dm.swap(at, last);
            let w = words(d);
            self.sketches.copy_within(last * w..(last + 1) * w, at * w);
            self.ids.swap(at, last);
            self.slot.insert(self.ids[at], at);
            self.exact.swap(at, last);
        }
        self.ids.pop();
        self.exact.pop();
        self.buckets.pop();
        self.squares.pop();
        self.dm.pop();
        self.sketches.truncate(last * words(d));
        self.refreeze(b);
    }

    /// A row's stored bytes.
    fn row(&self, at: usize) -> &[u8] {
        &self.exact[at]
    }

    fn exact_score(&self, at: usize, query: &[f32]) -> f32 {
        dot(&Vectors::decode(self.row(at)), query)
    }

    fn transformed(
        &self,
        at: usize,
        query: &[f32],
        transform: impl Fn(usize) -> (f32, f32),
    ) -> f32 {
        let (offset, scale) = transform(at);
        (self.exact_score(at, query) - offset) * scale
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
        self.top_k(query, k, accept, |_| (0.0, 1.0))
    }

    /// Like [`search`](Self::search), but language-neutral when both script
    /// buckets have a mean: the scores are then centred cosines, and the
    /// flag says so. `cjk`: the query holds two or more CJK characters.
    pub fn search_neutral(
        &self,
        query: &[f32],
        k: usize,
        accept: impl Fn(AtomId) -> bool,
        cjk: bool,
    ) -> (Vec<(AtomId, f32)>, bool) {
        if k == 0 || query.len() != self.dim {
            return (Vec::new(), false);
        }
        let Some(centred) = Centred::new(query, &self.means, cjk) else {
            return (self.search(query, k, accept), false);
        };
        let transform = |at: usize| {
            centred.transform(usize::from(self.buckets[at]), self.squares[at], self.dm[at])
        };
        (self.top_k(&centred.query, k, accept, transform), true)
    }

    /// The search: approximate above the threshold (the sketch scan picks
    /// candidates, growing until `k` of them pass `accept` or every row is
    /// a candidate), exact otherwise.
    fn top_k(
        &self,
        query: &[f32],
        k: usize,
        accept: impl Fn(AtomId) -> bool,
        transform: impl Fn(usize) -> (f32, f32),
    ) -> Vec<(AtomId, f32)> {
        let n = self.ids.len();
        if n > self.approximate_above {
            let distances = self.hamming(query);
            let mut depth = self.depth(k);
            while depth < n {
                let rows = nearest(&distances, depth, self.dim);
                let hits = self.scan(query, k, rows.into_iter(), &accept, &transform);
                if hits.len() >= k {
                    return hits;
                }
                depth *= 4;
            }
        }
        self.scan(query, k, 0..n, &accept, &transform)
    }

    /// Each row's Hamming distance from the query's sketch.
    fn hamming(&self, query: &[f32]) -> Vec<u16> {
        let w = words(self.dim);
        let mut q = vec![0u64; w];
        sketch(query, &[], &mut q);
        self.sketches
            .chunks_exact(w)
            .map(|row| {
                row.iter()
                    .zip(&q)
                    .map(|(a, b)| (a ^ b).count_ones() as u16)
                    .sum()
            })
            .collect()
    }

    /// The scan over `rows`: per row, `(x·q − offset) · scale` with the
    /// `(offset, scale)` `transform` gives, bounded, then the candidates
    /// re-scored exactly: the exact top `k` of the rows `accept` admits.
    fn scan(
        &self,
        query: &[f32],
        k: usize,
        rows: impl Iterator<Item = usize>,
        accept: impl Fn(AtomId) -> bool,
        transform: impl Fn(usize) -> (f32, f32),
    ) -> Vec<(AtomId, f32)> {
        let (q_codes, q_scale, q_residual) = quantize(query);
        // (upper bound, row): the approximate score plus its error bound.
        // The caller's filter is asked only for rows whose bound can still
        // reach the top k (asking it is a lookup per row; at a million rows
        // the candidates number 20,000 and only a few dozen are needed).
        let mut bounds: Vec<(f32, usize)> = rows
            .map(|at| {
                let row = &self.exact[at];
                let (offset, scale) = transform(at);
                let score =
                    int_dot(Vectors::codes(row), &q_codes) as f32 * Vectors::scale(row) * q_scale;
                // x·q = x·q̂ + x·(q − q̂): a stored row is its codes exactly.
                let bound = self.squares[at].sqrt() * q_residual + ROUNDING;
                ((score - offset) * scale + bound * scale, at)
            })
            .collect();
        let by_bound = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        let mut exact: Vec<(AtomId, f32)> = Vec::with_capacity(k + 1);
        by_falling_score(&mut bounds, 4 * k + 64, by_bound, |upper, at| {
            if exact.len() == k && exact.last().is_some_and(|h| upper < h.1) {
                return false;
            }
            if accept(self.ids[at]) {
                exact.push((self.ids[at], self.transformed(at, query, &transform)));
                exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                exact.truncate(k);
            }
            true
        });
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

    fn stored(v: &[f32]) -> Row {
        Row::from(Vectors::encode(v))
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
        /// The vectorised integer dot product is the plain sum, for any
        /// codes (−128 included) and any length.
        #[test]
        fn int_dot_is_the_plain_sum(pairs in prop::collection::vec(any::<(u8, i8)>(), 0..100)) {
            let (a, b): (Vec<u8>, Vec<i8>) = pairs.into_iter().unzip();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x as i8) * i32::from(*y)).sum();
            prop_assert_eq!(int_dot(&a, &b), plain);
        }
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
                index.insert(*id, stored(v));
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

    /// The naive oracle for language-neutral scoring: centred cosines from
    /// the decoded rows and the index's own frozen means.
    fn brute_neutral(
        index: &VectorIndex,
        rows: &[(AtomId, Vec<f32>, bool)],
        query: &[f32],
        cjk: bool,
        k: usize,
    ) -> Vec<(AtomId, f32)> {
        let centre = |v: &[f32], b: bool| -> Vec<f32> {
            v.iter()
                .zip(&index.means[usize::from(b)])
                .map(|(x, m)| x - m)
                .collect()
        };
        let q = centre(query, cjk);
        let mut all: Vec<(AtomId, f32)> = rows
            .iter()
            .map(|(id, v, b)| {
                let d = centre(&Vectors::decode(&stored(v)), *b);
                let cos = dot(&q, &d) / (dot(&q, &q).sqrt() * dot(&d, &d).sqrt().max(1e-3));
                (*id, cos)
            })
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn neutral_top_k_equals_brute_force(
            raw in prop::collection::vec((prop::collection::vec(-1f32..1.0, 8), any::<bool>()), 40..140),
            removed in prop::collection::vec(0usize..140, 0..30),
            query in prop::collection::vec(-1f32..1.0, 8),
            cjk in any::<bool>(),
            k in 1usize..15,
        ) {
            let mut rows: Vec<(AtomId, Vec<f32>, bool)> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (v, b))| (AtomId(i as u128), unit(v), b))
                .collect();
            let mut index = VectorIndex::new(8);
            for (id, v, b) in &rows {
                index.insert_scripted(*id, stored(v), *b);
            }
            for r in &removed {
                index.remove(AtomId(*r as u128));
            }
            rows.retain(|(id, _, _)| !removed.contains(&(id.0 as usize)));
            let both = [false, true].iter().all(|b| rows.iter().filter(|r| r.2 == *b).count() >= MIN_BUCKET);
            let query = unit(query);
            let (got, neutral) = index.search_neutral(&query, k, |_| true, cjk);
            // Neutral exactly when both buckets hold enough rows.
            prop_assert_eq!(neutral, both);
            if neutral {
                let want = brute_neutral(&index, &rows, &query, cjk, k);
                for (g, w) in got.iter().zip(&want) {
                    prop_assert!((g.1 - w.1).abs() < 1e-3, "{:?} vs {:?}", got, want);
                }
                prop_assert_eq!(got.len(), want.len());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A search straight over the rows returns what building the index
        /// over them and searching it returns, to the last bit: neutral or
        /// not, with a filter, with ties, with rows of another dimension.
        #[test]
        fn searching_rows_equals_searching_their_index(
            raw in prop::collection::vec((prop::collection::vec(-1f32..1.0, 8), any::<bool>()), 0..140),
            query in prop::collection::vec(-1f32..1.0, 8),
            cjk in any::<bool>(),
            k in 0usize..15,
            skip in 0u128..4,
            odd in prop::collection::vec(0usize..140, 0..3),
        ) {
            let mut rows: Vec<(AtomId, Row, bool)> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (v, b))| (AtomId(i as u128 * 3), stored(&unit(v)), b))
                .collect();
            if rows.len() > 3 {
                // An exact tie, to be ordered by id.
                rows[3].1 = rows[1].1.clone();
            }
            for at in odd {
                if let Some(row) = rows.get_mut(at) {
                    row.1 = stored(&[0.5; 4]);
                }
            }
            let query = unit(query);
            let accept = |id: AtomId| skip == 0 || id.0 % 4 != skip;
            let index = VectorIndex::from_rows(8, rows.clone());
            let want = index.search_neutral(&query, k, accept, cjk);
            let got = search_rows(8, &rows, &query, k, accept, cjk);
            prop_assert_eq!(got.1, want.1);
            prop_assert_eq!(got.0.len(), want.0.len());
            for (g, w) in got.0.iter().zip(&want.0) {
                prop_assert_eq!(g.0, w.0);
                prop_assert_eq!(g.1.to_bits(), w.1.to_bits());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Approximate search with few candidates: whatever it returns is
        /// admitted, scored exactly, in order, and never fewer than `k`
        /// (or than the rows admitted); with every row a candidate it is
        /// the exact search.
        #[test]
        fn approximate_search_keeps_its_promises(
            raw in prop::collection::vec((prop::collection::vec(-1f32..1.0, 16), any::<bool>()), 1..200),
            removed in prop::collection::vec(0usize..200, 0..20),
            query in prop::collection::vec(-1f32..1.0, 16),
            k in 1usize..15,
            skip in 0u128..5,
            floor in 1usize..40,
            neutral in any::<bool>(),
        ) {
            let mut index = VectorIndex::new(16);
            let mut rows = Vec::new();
            for (i, (v, cjk)) in raw.into_iter().enumerate() {
                let v = unit(v);
                index.insert_scripted(AtomId(i as u128), stored(&v), cjk);
                rows.push((AtomId(i as u128), v, cjk));
            }
            for r in &removed {
                index.remove(AtomId(*r as u128));
            }
            rows.retain(|(id, _, _)| !removed.contains(&(id.0 as usize)));
            let query = unit(query);
            let accept = |id: AtomId| skip == 0 || id.0 % skip.max(2) != 1;
            let search = |index: &VectorIndex| {
                if neutral {
                    index.search_neutral(&query, k, accept, false).0
                } else {
                    index.search(&query, k, accept)
                }
            };
            let exact = search(&index);
            index.set_approximate(0, Some(floor));
            let got = search(&index);
            let admitted = rows.iter().filter(|r| accept(r.0)).count();
            prop_assert_eq!(got.len(), k.min(admitted));
            let scores: HashMap<AtomId, f32> = {
                let mut all = index.clone();
                all.set_approximate(usize::MAX, None);
                let every = if neutral {
                    all.search_neutral(&query, rows.len(), |_| true, false).0
                } else {
                    all.search(&query, rows.len(), |_| true)
                };
                every.into_iter().collect()
            };
            for pair in got.windows(2) {
                prop_assert!(pair[0].1 >= pair[1].1);
            }
            for (id, score) in &got {
                prop_assert!(accept(*id));
                prop_assert!((scores[id] - score).abs() < 1e-5);
            }
            index.set_approximate(0, Some(rows.len()));
            prop_assert_eq!(search(&index), exact);
        }
    }

    /// Clustered data, as embeddings are: the approximate top 10 with 1 %
    /// of the rows as candidates against the exact top 10.
    #[test]
    fn approximate_top_10_agrees_with_exact() {
        let (dim, centres, n) = (384, 100, 10_000);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 20_000) as f32 / 10_000.0 - 1.0
        };
        // A shared offset (like a language's), centres, and noise.
        let offset: Vec<f32> = (0..dim).map(|_| next() * 0.5).collect();
        let centre: Vec<Vec<f32>> = (0..centres)
            .map(|_| (0..dim).map(|_| next()).collect())
            .collect();
        let mut index = VectorIndex::new(dim);
        let mut vectors = Vec::new();
        for i in 0..n {
            let v: Vec<f32> = (0..dim)
                .map(|d| offset[d] + centre[i % centres][d] * 0.3 + next() * 0.2)
                .collect();
            let v = unit(v);
            index.insert(AtomId(i as u128), stored(&v));
            vectors.push(v);
        }
        let (mut found, mut wanted) = (0, 0);
        for q in 0..50 {
            let query: Vec<f32> = vectors[q * 97].iter().map(|x| x + next() * 0.05).collect();
            let query = unit(query);
            index.set_approximate(usize::MAX, None);
            let exact = index.search(&query, 10, |_| true);
            index.set_approximate(0, Some(n / 100));
            let approximate = index.search(&query, 10, |_| true);
            wanted += exact.len();
            found += exact.iter().filter(|h| approximate.contains(h)).count();
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.9, "recall@10 {recall}");
    }

    #[test]
    fn replacing_a_row_keeps_one_row() {
        let mut index = VectorIndex::new(4);
        index.insert(AtomId(1), stored(&unit(vec![1.0, 0.0, 0.0, 0.0])));
        index.insert(AtomId(1), stored(&unit(vec![0.0, 1.0, 0.0, 0.0])));
        assert_eq!(index.len(), 1);
        let hits = index.search(&[0.0, 1.0, 0.0, 0.0], 5, |_| true);
        assert_eq!(hits.len(), 1);
        assert!((hits[0].1 - 1.0).abs() < 1e-3);
        index.remove(AtomId(1));
        assert!(index.is_empty());
        assert!(index.search(&[0.0, 1.0, 0.0, 0.0], 5, |_| true).is_empty());
    }
}
