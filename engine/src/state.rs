//! The whole logical content of a store — atoms, edges, audit events and the
//! snapshot version — and the one way it changes: applying a [`Txn`]. Live
//! operations and log replay both go through [`State::apply`].

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::atom::{Atom, AtomId, Edge, Event};
use crate::error::{Error, Result};
use crate::graph::index::SuppliedTriple;

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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Vectors {
    /// The embedder's fingerprint; vectors of any other model are dropped.
    pub model: String,
    pub dim: u32,
    /// Shared with the vector index, which re-scores from the same bytes
    /// (one copy of every row in memory; stored as a byte sequence, as a
    /// `Vec<u8>` was).
    pub rows: BTreeMap<AtomId, Arc<[u8]>>,
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
    /// The embedding of an atom's current content (format version 2).
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
}

impl Txn {
    /// Atoms this transaction puts.
    pub fn touched(&self) -> impl Iterator<Item = AtomId> + '_ {
        self.mutations.iter().filter_map(|m| match m {
            Mutation::PutAtom(a) => Some(a.id),
            Mutation::Embed { atom, .. } | Mutation::Relate { atom, .. } => Some(*atom),
            _ => None,
        })
    }
}

impl Vectors {
    fn put(
        &mut self,
        model: String,
        atom: AtomId,
        vector: Vec<u8>,
        atoms: &BTreeMap<AtomId, Atom>,
    ) {
        if model != self.model {
            // Another model's vectors are not comparable with these.
            self.rows.clear();
            self.model = model;
            self.dim = (vector.len() / 2) as u32;
        }
        let alive = atoms.get(&atom).is_some_and(|a| !a.exposure.destroyed());
        if alive && vector.len() == self.dim as usize * 2 {
            self.rows.insert(atom, Arc::from(vector));
        }
    }

    /// Encodes a unit vector for storage.
    pub fn encode(v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
            .collect()
    }

    pub fn decode(bytes: &[u8]) -> Vec<f32> {
        let mut out = vec![0.0; bytes.len() / 2];
        Vectors::decode_into(bytes, &mut out);
        out
    }

    /// Decodes stored bytes into `out` (as many values as both hold), by a
    /// table of all 65,536 halves: opening a store decodes every vector,
    /// and per-value conversion without hardware support costs several
    /// times more (inside wasm there is none).
    pub fn decode_into(bytes: &[u8], out: &mut [f32]) {
        let table = Vectors::halves();
        for (x, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *x = table[usize::from(u16::from_le_bytes([b[0], b[1]]))];
        }
    }

    /// The dot product of stored bytes with `query`, decoding on the way.
    pub fn dot(bytes: &[u8], query: &[f32]) -> f32 {
        let table = Vectors::halves();
        bytes
            .chunks_exact(2)
            .zip(query)
            .map(|(b, q)| table[usize::from(u16::from_le_bytes([b[0], b[1]]))] * q)
            .sum()
    }

    /// Every half's value, by its bits.
    fn halves() -> &'static [f32] {
        static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
        TABLE.get_or_init(|| {
            (0..=u16::MAX)
                .map(|bits| half::f16::from_bits(bits).to_f32())
                .collect()
        })
    }
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
                        self.vectors.rows.remove(&atom.id);
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
                } => self.vectors.put(model, atom, vector, &self.atoms),
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
