//! The whole logical content of a store — atoms, edges, audit events and the
//! snapshot version — and the one way it changes: applying a [`Txn`]. Live
//! operations and log replay both go through [`State::apply`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::atom::{Atom, AtomId, Edge, Event};
use crate::error::{Error, Result};
use crate::graph::index::SuppliedTriple;
use crate::log::frame::Checksum;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Ordered by id, i.e. by creation time.
    pub atoms: BTreeMap<AtomId, Atom>,
    pub edges: Vec<Edge>,
    pub events: Vec<Event>,
    /// +1 with every applied write.
    pub version: u64,
    /// One embedding per atom whose content exists. Stored beside the state
    /// (a second snapshot frame, `Embed` log records), not inside it, so the
    /// version-1 layout of `State` is unchanged.
    #[serde(skip)]
    pub vectors: Vectors,
    /// Triples callers supplied, by the atom that states them. Stored beside
    /// the state (a third snapshot frame, `Relate` log records).
    #[serde(skip)]
    pub supplied: Supplied,
}

/// The triples callers supplied (`relate`, import), by their atom.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Supplied {
    pub triples: BTreeMap<AtomId, Vec<SuppliedTriple>>,
}

/// Embeddings made by one model, as little-endian f16 (2 bytes per dimension).
///
/// A large snapshot's rows are read when a call first needs them, not when
/// the store opens ([`Vectors::unread`]): most calls (keyword recall,
/// memorize of new content, history) never touch them, and at 100k atoms
/// they are three quarters of the snapshot. Until then the rows map holds
/// only what the log added since, and removals are remembered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vectors {
    /// The embedder's fingerprint; vectors of any other model are dropped.
    pub model: String,
    pub dim: u32,
    /// Shared with the vector index, which re-scores from the same bytes;
    /// rows read from a snapshot are slices of one buffer (no copy each).
    rows: BTreeMap<AtomId, Row>,
    unread: Option<Unread>,
}

/// One stored embedding (format 6): its scale (f32 little-endian), then
/// `dim` int8 codes; value `i` is `code_i · scale` ([`Vectors::encode`]).
/// Formats 2–5 stored f16 values; those rows are converted when read.
pub type Row = bytes::Bytes;

/// Bytes before a row's codes: its scale.
pub const ROW_HEAD: usize = 4;

/// Where a snapshot's rows are, while they are not read yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Unread {
    /// The snapshot file, the payload's offset and length, its checksum.
    pub file: String,
    pub offset: u64,
    pub len: u32,
    /// The file's checksum kind and the frame's checksum.
    pub checksum: (Checksum, u32),
    /// The rows are f16 (formats 2–5), converted when read.
    pub half: bool,
    /// Rows the log removed since: the snapshot's copies do not count.
    removed: std::collections::BTreeSet<AtomId>,
}

impl Unread {
    pub fn new(
        file: String,
        offset: u64,
        len: u32,
        checksum: (Checksum, u32),
        half: bool,
    ) -> Unread {
        Unread {
            file,
            offset,
            len,
            checksum,
            half,
            removed: Default::default(),
        }
    }
}

/// The stored form (postcard): `model, dim, rows` with each row a length
/// and its bytes — the same bytes a `Vec<u8>` row gave (format 2 on).
#[derive(Serialize)]
struct StoredRef<'a> {
    model: &'a str,
    dim: u32,
    rows: &'a BTreeMap<AtomId, Row>,
}

#[derive(Deserialize)]
struct StoredFrame<'a> {
    model: String,
    dim: u32,
    #[serde(borrow)]
    rows: Vec<(AtomId, &'a [u8])>,
}

/// The head of the stored form: model, dimension, number of rows.
#[derive(Deserialize)]
struct StoredHead {
    model: String,
    dim: u32,
    rows: u64,
}

/// One applied write: everything an operation changes, atomically.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Txn {
    pub version: u64,
    pub mutations: Vec<Mutation>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Mutation {
    /// Inserts an atom or replaces it whole.
    PutAtom(Atom),
    AddEdge(Edge),
    Record(Event),
    /// Replaces the `reason` of every earlier event of an atom (tombstone).
    ScrubEvents {
        atom: AtomId,
        placeholder: String,
    },
    /// The embedding of an atom's current content (format versions 2–5;
    /// converted to a [`Row`] when applied).
    Embed {
        model: String,
        atom: AtomId,
        /// f16 little-endian, `dim` values.
        vector: Vec<u8>,
    },
    /// A caller's triple, stated by an atom (format version 3).
    Relate {
        atom: AtomId,
        triple: SuppliedTriple,
    },
    /// The embedding of an atom's current content as a [`Row`] (format
    /// version 6 on).
    EmbedRow {
        model: String,
        atom: AtomId,
        row: Vec<u8>,
    },
}

impl Txn {
    /// Atoms this transaction puts.
    pub fn touched(&self) -> impl Iterator<Item = AtomId> + '_ {
        self.mutations.iter().filter_map(|m| match m {
            Mutation::PutAtom(a) => Some(a.id),
            Mutation::Embed { atom, .. }
            | Mutation::EmbedRow { atom, .. }
            | Mutation::Relate { atom, .. } => Some(*atom),
            _ => None,
        })
    }
}

impl Vectors {
    fn put(&mut self, model: String, atom: AtomId, row: Vec<u8>, atoms: &BTreeMap<AtomId, Atom>) {
        if model != self.model {
            // Another model's vectors are not comparable with these.
            self.rows.clear();
            self.unread = None;
            self.model = model;
            self.dim = Vectors::values(&row) as u32;
        }
        let alive = atoms.get(&atom).is_some_and(|a| !a.exposure.destroyed());
        if alive && row.len() == Vectors::row_len(self.dim as usize) && Vectors::sound(&row) {
            self.rows.insert(atom, Row::from(row));
        }
    }

    fn remove(&mut self, atom: AtomId) {
        self.rows.remove(&atom);
        if let Some(unread) = &mut self.unread {
            unread.removed.insert(atom);
        }
    }

    /// The rows, once read (`None` while a snapshot's rows are unread).
    pub fn rows(&self) -> Option<&BTreeMap<AtomId, Row>> {
        self.unread.is_none().then_some(&self.rows)
    }

    /// The snapshot rows not read yet, if any.
    pub fn unread(&self) -> Option<&Unread> {
        self.unread.as_ref()
    }

    /// Whether there are no rows at all (known without reading them).
    pub fn is_empty(&self) -> bool {
        self.unread.is_none() && self.rows.is_empty()
    }

    /// The stored form, for a snapshot (the rows must have been read).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        if self.unread.is_some() {
            return Err(Error::Internal(
                "vectors encoded before their rows were read".into(),
            ));
        }
        postcard::to_stdvec(&StoredRef {
            model: &self.model,
            dim: self.dim,
            rows: &self.rows,
        })
        .map_err(|e| Error::Internal(format!("cannot encode vectors: {e}")))
    }

    /// Every row of a stored frame, the rows slices of `payload` — or, for
    /// a frame of f16 rows (`half`: formats 2–5), converted into one new
    /// buffer.
    pub fn from_bytes(payload: Row, half: bool) -> std::result::Result<Vectors, postcard::Error> {
        let frame: StoredFrame = postcard::from_bytes(&payload)?;
        let rows = if half {
            let width = Vectors::row_len(frame.dim as usize);
            let mut buffer = Vec::with_capacity(frame.rows.len() * width);
            let mut spans = Vec::with_capacity(frame.rows.len());
            let mut v = Vec::new();
            for (id, row) in &frame.rows {
                let start = buffer.len();
                v.resize(row.len() / 2, 0.0);
                Vectors::decode_half_into(row, &mut v);
                Vectors::encode_into(&v, &mut buffer);
                spans.push((*id, start..buffer.len()));
            }
            let buffer = Row::from(buffer);
            spans
                .into_iter()
                .map(|(id, span)| (id, buffer.slice(span)))
                .collect()
        } else {
            frame
                .rows
                .into_iter()
                .map(|(id, row)| (id, payload.slice_ref(row)))
                .collect()
        };
        Ok(Vectors {
            model: frame.model,
            dim: frame.dim,
            rows,
            unread: None,
        })
    }

    /// Model, dimension and number of rows from the first bytes of a stored
    /// frame (`None` if they do not hold all three).
    pub fn head(prefix: &[u8]) -> Option<(String, u32, u64)> {
        let (head, _) = postcard::take_from_bytes::<StoredHead>(prefix).ok()?;
        Some((head.model, head.dim, head.rows))
    }

    /// Vectors of `model` whose snapshot rows are read later.
    pub fn unread_from(model: String, dim: u32, unread: Unread) -> Vectors {
        Vectors {
            model,
            dim,
            rows: BTreeMap::new(),
            unread: Some(unread),
        }
    }

    /// Drops the rows and reads them again from `unread` when needed (they
    /// were just written there).
    pub fn set_aside(&mut self, unread: Unread) {
        self.rows.clear();
        self.unread = Some(unread);
    }

    /// Puts the snapshot's rows (read now) under what the log changed
    /// since they were set aside.
    pub fn read_in(&mut self, snapshot: Vectors) {
        let Some(unread) = self.unread.take() else {
            return;
        };
        // One merge of two sorted maps (the log's rows win), not an insert
        // per snapshot row: 100k inserts were tens of milliseconds of every
        // cold semantic recall inside the component.
        let mut rows = snapshot.rows;
        if !unread.removed.is_empty() {
            rows.retain(|id, _| !unread.removed.contains(id));
        }
        rows.append(&mut self.rows);
        self.rows = rows;
    }

    /// Bytes of a row of `dim` values.
    pub const fn row_len(dim: usize) -> usize {
        dim + ROW_HEAD
    }

    /// Values a row holds.
    pub fn values(row: &[u8]) -> usize {
        row.len().saturating_sub(ROW_HEAD)
    }

    /// A row's scale (0 for a row too short to have one).
    pub fn scale(row: &[u8]) -> f32 {
        match row.get(..ROW_HEAD) {
            Some(b) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0.0,
        }
    }

    /// A row's codes.
    pub fn codes(row: &[u8]) -> &[u8] {
        row.get(ROW_HEAD..).unwrap_or(&[])
    }

    /// Whether a row can be stored: a positive, finite scale.
    fn sound(row: &[u8]) -> bool {
        let scale = Vectors::scale(row);
        scale.is_finite() && scale > 0.0
    }

    /// Encodes a vector for storage: symmetric int8 with one scale per row
    /// (`max |v_i| / 127`; 1 for a zero vector), each value rounded half
    /// away from zero. A unit vector of e5's 384 dimensions keeps its
    /// cosines to about 1e-3 (docs/format.md).
    pub fn encode(v: &[f32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(Vectors::row_len(v.len()));
        Vectors::encode_into(v, &mut out);
        out
    }

    /// [`Vectors::encode`] appended to `out`.
    pub fn encode_into(v: &[f32], out: &mut Vec<u8>) {
        let max = v
            .iter()
            .filter(|x| x.is_finite())
            .fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        let inverse = 1.0 / scale;
        out.extend_from_slice(&scale.to_le_bytes());
        out.extend(v.iter().map(|x| {
            // Half away from zero by ±0.5 and truncation (`f32::round` is
            // a library call on baseline x86-64; a scale's inverse makes it
            // a product, not a division, per value).
            let y = if x.is_finite() { x * inverse } else { 0.0 };
            (y + 0.5f32.copysign(y)).clamp(-127.0, 127.0) as i8 as u8
        }));
    }

    pub fn decode(row: &[u8]) -> Vec<f32> {
        let mut out = vec![0.0; Vectors::values(row)];
        Vectors::decode_into(row, &mut out);
        out
    }

    /// Decodes a row into `out` (as many values as both hold).
    pub fn decode_into(row: &[u8], out: &mut [f32]) {
        let scale = Vectors::scale(row);
        for (x, c) in out.iter_mut().zip(Vectors::codes(row)) {
            *x = f32::from(*c as i8) * scale;
        }
    }

    /// A row as formats 2–5 stored it (f16 little-endian) as a row of this
    /// format.
    pub fn from_half(bytes: &[u8]) -> Vec<u8> {
        let mut v = vec![0.0; bytes.len() / 2];
        Vectors::decode_half_into(bytes, &mut v);
        Vectors::encode(&v)
    }

    /// Decodes f16 little-endian values into `out`.
    fn decode_half_into(bytes: &[u8], out: &mut [f32]) {
        for (x, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *x = half_to_f32(u16::from_le_bytes([b[0], b[1]]));
        }
    }
}

/// An IEEE half's value, by arithmetic the compiler can vectorise (opening
/// a store decodes every vector, twice; there is no hardware conversion
/// inside wasm, and a table lookup per value cannot be vectorised): the
/// half's exponent and mantissa put where a single's go read as a single
/// 2^112 times too small — exactly, subnormals and zero included — and
/// infinities and NaNs keep an all-ones exponent. Checked against the
/// `half` crate for all 65,536 halves.
#[inline]
fn half_to_f32(h: u16) -> f32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let magnitude = (h & 0x7fff) << 13;
    let special = (h & 0x7c00) == 0x7c00;
    let finite = f32::from_bits(magnitude) * f32::from_bits(0x7780_0000);
    let bits = if special {
        magnitude | 0x7f80_0000
    } else {
        finite.to_bits()
    };
    f32::from_bits(bits | sign)
}

impl State {
    pub fn atom(&self, id: AtomId) -> Option<&Atom> {
        self.atoms.get(&id)
    }

    /// A transaction for the next version.
    pub fn txn(&self, mutations: Vec<Mutation>) -> Txn {
        Txn {
            version: self.version + 1,
            mutations,
        }
    }

    pub fn apply(&mut self, txn: Txn) -> Result<()> {
        if txn.version != self.version + 1 {
            return Err(Error::Corrupt(format!(
                "transaction for version {} does not follow version {}",
                txn.version, self.version
            )));
        }
        for mutation in txn.mutations {
            match mutation {
                Mutation::PutAtom(atom) => {
                    // An embedding of destroyed or rewritten content goes with it.
                    let stale = atom.exposure.destroyed()
                        || self
                            .atoms
                            .get(&atom.id)
                            .is_some_and(|a| a.content != atom.content);
                    if stale {
                        self.vectors.remove(atom.id);
                    }
                    if atom.exposure.destroyed() {
                        // Entity names can be secrets: they go with the content.
                        self.supplied.triples.remove(&atom.id);
                    }
                    self.atoms.insert(atom.id, atom);
                }
                Mutation::AddEdge(edge) => self.edges.push(edge),
                Mutation::Record(event) => self.events.push(event),
                Mutation::ScrubEvents { atom, placeholder } => {
                    for event in self.events.iter_mut().filter(|e| e.atom == atom) {
                        event.reason.clone_from(&placeholder);
                    }
                }
                Mutation::Embed {
                    model,
                    atom,
                    vector,
                } => self
                    .vectors
                    .put(model, atom, Vectors::from_half(&vector), &self.atoms),
                Mutation::EmbedRow { model, atom, row } => {
                    self.vectors.put(model, atom, row, &self.atoms)
                }
                Mutation::Relate { atom, triple } => {
                    let alive = self
                        .atoms
                        .get(&atom)
                        .is_some_and(|a| !a.exposure.destroyed());
                    let list = self.supplied.triples.entry(atom).or_default();
                    if alive && !list.contains(&triple) {
                        list.push(triple);
                    }
                    if list.is_empty() {
                        self.supplied.triples.remove(&atom);
                    }
                }
            }
        }
        self.version = txn.version;
        Ok(())
    }

    pub fn events_of(&self, id: AtomId) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(move |e| e.atom == id)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_half_decodes_as_the_half_crate_does() {
        for bits in 0..=u16::MAX {
            let want = half::f16::from_bits(bits).to_f32();
            let got = super::half_to_f32(bits);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{bits:#06x}: {got} vs {want}"
            );
        }
    }

    use super::*;

    /// Rows written as byte strings are the bytes `Vec<u8>` rows gave
    /// (formats 2–6: only what a row's bytes mean changed in 6), and read
    /// back as slices of the frame.
    #[test]
    fn stored_vectors_keep_their_byte_layout() {
        #[derive(Serialize)]
        struct Before {
            model: String,
            dim: u32,
            rows: BTreeMap<AtomId, Vec<u8>>,
        }
        let rows: BTreeMap<AtomId, Vec<u8>> = [
            (AtomId(7), vec![1, 2, 3, 4]),
            (AtomId(1 << 100), vec![9; 4]),
        ]
        .into_iter()
        .collect();
        let before = postcard::to_stdvec(&Before {
            model: "m".into(),
            dim: 2,
            rows: rows.clone(),
        })
        .unwrap();
        let read = Vectors::from_bytes(Row::from(before.clone()), false).unwrap();
        assert_eq!(read.to_bytes().unwrap(), before);
        assert_eq!(Vectors::head(&before[..8]), Some(("m".into(), 2, 2)));
        let got: BTreeMap<AtomId, Vec<u8>> = read
            .rows()
            .unwrap()
            .iter()
            .map(|(id, r)| (*id, r.to_vec()))
            .collect();
        assert_eq!(got, rows);
    }

    /// A row keeps every value to half its scale, and a cosine of unit
    /// vectors to well under the semantic signal's resolution.
    #[test]
    fn rows_keep_values_to_half_a_step() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let unit = |v: Vec<f32>| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let mut worst = 0f32;
        for _ in 0..200 {
            let a = unit((0..384).map(|_| next()).collect());
            let b = unit((0..384).map(|_| next() + 0.3).collect());
            let (ra, rb) = (Vectors::encode(&a), Vectors::encode(&b));
            assert_eq!(ra.len(), Vectors::row_len(384));
            let (da, db) = (Vectors::decode(&ra), Vectors::decode(&rb));
            let step = Vectors::scale(&ra);
            for (x, y) in a.iter().zip(&da) {
                assert!((x - y).abs() <= step / 2.0 + 1e-7, "{x} vs {y}");
            }
            let cos = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
            worst = worst.max((cos(&a, &b) - cos(&da, &db)).abs());
        }
        assert!(worst < 2e-3, "cosine moved by {worst}");
        // A zero vector, and values that are not numbers, stay finite.
        assert_eq!(Vectors::decode(&Vectors::encode(&[0.0; 3])), vec![0.0; 3]);
        let odd = Vectors::decode(&Vectors::encode(&[f32::NAN, 1.0, f32::INFINITY]));
        assert_eq!(odd, vec![0.0, 1.0, 0.0]);
        // Re-encoding a decoded row gives the row back.
        let a = unit((0..384).map(|_| next()).collect());
        let row = Vectors::encode(&a);
        assert_eq!(Vectors::encode(&Vectors::decode(&row)), row);
    }

    /// A vectors frame of formats 2–5 (f16 rows) reads as rows of this
    /// format, and an `Embed` record of those formats applies as one.
    #[test]
    fn half_rows_of_older_formats_are_converted() {
        #[derive(Serialize)]
        struct Before {
            model: String,
            dim: u32,
            rows: BTreeMap<AtomId, Vec<u8>>,
        }
        let values = [0.5f32, -0.25, 0.125, 0.0];
        let half: Vec<u8> = values
            .iter()
            .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
            .collect();
        let frame = postcard::to_stdvec(&Before {
            model: "m".into(),
            dim: 4,
            rows: [(AtomId(3), half.clone())].into_iter().collect(),
        })
        .unwrap();
        let read = Vectors::from_bytes(Row::from(frame), true).unwrap();
        let row = &read.rows().unwrap()[&AtomId(3)];
        assert_eq!(&row[..], &Vectors::encode(&values)[..]);
        assert_eq!(Vectors::from_half(&half), Vectors::encode(&values));
    }
}
