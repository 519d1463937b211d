//! The whole logical content of a store — atoms, edges, audit events and the
//! snapshot version — and the one way it changes: applying a [`Txn`]. Live
//! operations and log replay both go through [`State::apply`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::atom::{Atom, AtomId, Edge, Event};
use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Ordered by id, i.e. by creation time.
    pub atoms: BTreeMap<AtomId, Atom>,
    pub edges: Vec<Edge>,
    pub events: Vec<Event>,
    /// +1 with every applied write.
    pub version: u64,
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
}

impl Txn {
    /// Atoms this transaction puts.
    pub fn touched(&self) -> impl Iterator<Item = AtomId> + '_ {
        self.mutations.iter().filter_map(|m| {
            if let Mutation::PutAtom(a) = m {
                Some(a.id)
            } else {
                None
            }
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
                    self.atoms.insert(atom.id, atom);
                }
                Mutation::AddEdge(edge) => self.edges.push(edge),
                Mutation::Record(event) => self.events.push(event),
                Mutation::ScrubEvents { atom, placeholder } => {
                    for event in self.events.iter_mut().filter(|e| e.atom == atom) {
                        event.reason.clone_from(&placeholder);
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
