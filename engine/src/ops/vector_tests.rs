//! The vector path across operations, with the deterministic test embedder:
//! one vector per atom, written with the atom, kept across reopen, batched
//! for import, gone with destroyed content, and absent without a model.

use std::sync::atomic::Ordering;

use super::testing::Harness;
use super::*;
use crate::atom::{AtomId, CorrectAction, GovernAction};
use crate::embed::hashed::HashedEmbedder;
use crate::log::backend::MemBackend;
use crate::memory::{Config, Memory};
use crate::scope::Filter;
use crate::state::{Unread, Vectors};

fn with_vectors() -> (Harness, HashedEmbedder) {
    let mut h = Harness::new();
    let embedder = HashedEmbedder::new(64);
    h.memory.set_embedder(Box::new(embedder.clone()));
    (h, embedder)
}

fn stats(h: &mut Harness) -> Stats {
    h.memory.stats(&Filter::WholeStore).unwrap()
}

#[test]
fn vectors_are_written_with_atoms_and_survive_reopen() {
    let (mut h, embedder) = with_vectors();
    let a = h.id("deploy with blue green on ECS");
    h.id("cache keys carry the tenant prefix");
    assert_eq!(embedder.texts.load(Ordering::Relaxed), 2);
    let s = stats(&mut h);
    assert_eq!((s.indexes.semantic, s.indexes.keyword), (2, 2));
    assert_eq!(s.model, "hashed-64");

    // A new process: nothing is embedded at open, only the query at recall.
    let fresh = HashedEmbedder::new(64);
    h.reopen(Some(fresh.clone()));
    assert_eq!(stats(&mut h).indexes.semantic, 2);
    let hits = h.recall_with(RecallRequest {
        query: "blue green deploy on ECS".into(),
        scope: h.scope.clone(),
        explain: true,
        ..Default::default()
    });
    assert_eq!(hits[0].atom_id, a);
    let semantic = hits[0]
        .explain
        .iter()
        .find(|s| s.name == "semantic")
        .unwrap();
    assert!(semantic.value > 0.0 && semantic.contribution > 0.0);
    assert_eq!(fresh.texts.load(Ordering::Relaxed), 1);

    // Also after compaction (the vectors move into the snapshot).
    h.memory.compact().unwrap();
    h.reopen(Some(HashedEmbedder::new(64)));
    assert_eq!(stats(&mut h).indexes.semantic, 2);
}

#[test]
fn replace_embeds_the_new_version_and_quarantine_keeps_the_vector() {
    let (mut h, _) = with_vectors();
    let old = h.id("main database is PostgreSQL 16");
    let new = h
        .correct(
            old,
            CorrectAction::Replace,
            Some("main database is PostgreSQL 17"),
        )
        .new_atom_id
        .unwrap();
    let rows = &h.memory.state.vectors.rows().unwrap();
    assert!(rows.contains_key(&old) && rows.contains_key(&new));
    h.govern(new, GovernAction::Quarantine, None);
    assert!(h.memory.state.vectors.rows().unwrap().contains_key(&new));
    assert!(!h.recall_ids("PostgreSQL 17").contains(&new));
    h.govern(new, GovernAction::Restore, None);
    assert_eq!(h.recall_ids("PostgreSQL 17").first(), Some(&new));
}

#[test]
fn destroyed_content_takes_its_vector_with_it() {
    for action in [GovernAction::Seal, GovernAction::Tombstone] {
        let (mut h, embedder) = with_vectors();
        let keep = h.id("the staging database resets every Sunday");
        let gone = h.id("customer Wang's phone is 0912-345-678");
        let vector = Vectors::encode(&embedder.vector("customer Wang's phone is 0912-345-678"));
        assert_eq!(&*h.memory.state.vectors.rows().unwrap()[&gone], &vector[..]);
        h.govern(gone, action, None);
        assert!(!h.memory.state.vectors.rows().unwrap().contains_key(&gone));
        assert!(h.memory.state.vectors.rows().unwrap().contains_key(&keep));
        // Not in memory, not in any file.
        for (name, bytes) in h.backend.all_bytes() {
            assert!(
                !bytes.windows(vector.len()).any(|w| w == vector.as_slice()),
                "{action:?}: {name}"
            );
        }
        h.reopen(Some(HashedEmbedder::new(64)));
        assert_eq!(stats(&mut h).indexes.semantic, 1);
        assert!(!h.recall_ids("customer phone").contains(&gone));
    }
}

#[test]
fn import_embeds_in_one_batch() {
    let (mut source, _) = with_vectors();
    for i in 0..25 {
        source.id(&format!("imported memory number {i} about topic {}", i % 4));
    }
    let jsonl = source.memory.export(&Filter::WholeStore).unwrap();
    let (mut h, embedder) = with_vectors();
    let r = h.memory.import(&jsonl).unwrap();
    assert_eq!(r.atoms_added, 25);
    assert_eq!(embedder.calls.load(Ordering::Relaxed), 1);
    assert_eq!(embedder.texts.load(Ordering::Relaxed), 25);
    assert_eq!(stats(&mut h).indexes.semantic, 25);
}

#[test]
fn without_a_model_recall_is_keyword_only() {
    let mut h = Harness::new();
    h.id("deploy with blue green on ECS");
    let s = stats(&mut h);
    assert_eq!(s.indexes.semantic, 0);
    assert!(s.model.starts_with("none"), "{}", s.model);
    assert_eq!(h.recall("ECS").len(), 1);

    // A model directory that does not hold a model: still keyword-only, and
    // stats says why.
    let config = Config {
        model_dir: Some("/nonexistent/model".into()),
        ..Config::default()
    };
    let mut h = Harness::with(MemBackend::new(), config);
    h.id("deploy with blue green on ECS");
    assert_eq!(h.recall("ECS").len(), 1);
    let s = stats(&mut h);
    assert_eq!(s.indexes.semantic, 0);
    assert!(s.model.contains("keyword-only"), "{}", s.model);
}

#[test]
fn a_keyword_only_recall_builds_no_vector_index() {
    let (mut h, _) = with_vectors();
    h.id("deploy with blue green on ECS");
    let tenant = h
        .memory
        .state
        .atoms
        .values()
        .next()
        .unwrap()
        .scope
        .tenant_id
        .clone();
    // Reopened without a model, or with another model: the stored vectors
    // cannot be searched, so recall does not build their index.
    for embedder in [None, Some(HashedEmbedder::new(64).renamed("other-model"))] {
        h.reopen(embedder);
        assert_eq!(h.recall("ECS").len(), 1);
        assert!(h.memory.indexes.vector(&tenant).is_none());
    }
    // With the model they were made with, the first few recalls search
    // the rows without an index, the next one builds it.
    h.reopen(Some(HashedEmbedder::new(64)));
    for _ in 0..crate::index::UNINDEXED_SEARCHES {
        assert_eq!(h.recall("ECS").len(), 1);
        assert!(h.memory.indexes.vector(&tenant).is_none());
    }
    assert_eq!(h.recall("ECS").len(), 1);
    assert_eq!(h.memory.indexes.vector(&tenant).map(|v| v.len()), Some(1));
}

/// The rows and means a search without an index took are kept for the
/// next one, and dropped when a write changes an atom: a memory written
/// between two such searches is found by the second.
#[test]
fn rows_kept_between_searches_without_an_index_follow_writes() {
    let (mut h, _) = with_vectors();
    h.id("the ECS cluster runs the API");
    h.memory.compact().unwrap();
    h.reopen(Some(HashedEmbedder::new(64)));
    let req = RecallRequest {
        query: "the ECS cluster also runs the workers".into(),
        scope: h.scope.clone(),
        explain: true,
        ..Default::default()
    };
    assert_eq!(h.recall_with(req.clone()).len(), 1);
    let added = h.id("the ECS cluster also runs the workers");
    let second = h.recall_with(req);
    let semantic = |r: &Recalled| {
        r.explain
            .iter()
            .any(|s| s.name == "semantic" && s.value > 0.0)
    };
    assert!(
        second.iter().any(|r| r.atom_id == added && semantic(r)),
        "{second:?}"
    );
    assert!(h.memory.indexes.vector(&h.scope.tenant_id).is_none());
}

#[test]
fn the_first_recall_without_an_index_answers_as_the_index_does() {
    let (mut h, _) = with_vectors();
    // Both scripts past the bucket minimum (language-neutral scoring), a
    // negated memory and one of another branch the filter must leave out.
    let en = [
        "cache", "invoice", "deploy", "backup", "tokens", "billing", "cluster",
    ];
    let zh = ["快取", "發票", "部署", "備份", "權杖", "帳單", "叢集"];
    for i in 0..30 {
        let (a, b) = (en[i % 7], en[(i / 7) % 7]);
        h.id(&format!("{a} and {b} checklist number {i}"));
        h.id(&format!(
            "{}與{}的第 {i} 份清單",
            zh[i % 7],
            zh[(i / 3) % 7]
        ));
    }
    let negated = h.id("deploy rollback plan for the blue green cluster");
    h.correct(negated, CorrectAction::Negate, None);
    let mut other = h.scope.clone();
    other.branch = Some("feature".into());
    let hidden = h
        .memorize_in(
            "deploy the blue green cluster from the feature branch",
            &other,
        )
        .atom_id
        .unwrap();
    h.memory.compact().unwrap();
    for query in ["deploy the cluster", "部署叢集", "billing 備份"] {
        h.reopen(Some(HashedEmbedder::new(64)));
        let req = RecallRequest {
            query: query.into(),
            scope: h.scope.clone(),
            explain: true,
            max_results: Some(12),
            ..Default::default()
        };
        let first = h.recall_with(req.clone());
        for _ in 1..crate::index::UNINDEXED_SEARCHES {
            assert_eq!(h.recall_with(req.clone()), first, "{query}, rows kept");
        }
        assert!(h.memory.indexes.vector(&h.scope.tenant_id).is_none());
        let indexed = h.recall_with(req);
        assert!(h.memory.indexes.vector(&h.scope.tenant_id).is_some());
        assert_eq!(first, indexed, "{query}");
        assert!(
            first
                .iter()
                .all(|r| r.atom_id != negated && r.atom_id != hidden)
        );
        assert!(
            first.iter().any(|r| r
                .explain
                .iter()
                .any(|s| s.name == "semantic" && s.value > 0.0)),
            "{query}: {first:?}"
        );
    }
}

#[test]
fn another_model_replaces_the_vectors_it_cannot_compare() {
    let (mut h, _) = with_vectors();
    h.id("first memory about caching");
    h.reopen(Some(HashedEmbedder::new(64).renamed("other-model")));
    // The old vectors are not comparable: not used, and not counted once the
    // new model writes.
    h.id("second memory about caching");
    let vectors = &h.memory.state.vectors;
    assert_eq!(
        (vectors.model.as_str(), vectors.rows().unwrap().len()),
        ("other-model", 1)
    );
    assert_eq!(h.recall("caching").len(), 2);
}

#[test]
fn embeddings_made_ahead_are_used_by_the_write_and_touch_no_file() {
    let (mut h, embedder) = with_vectors();
    let before = h.backend.all_bytes();
    let texts = vec![
        "  deploy with blue green on ECS ".to_owned(),
        "the db password=Hunter2x9Qz is rotated weekly".to_owned(),
        String::new(),
    ];
    assert_eq!(h.memory.embed_ahead(&texts), 2);
    assert_eq!(h.backend.all_bytes(), before, "no file is read for writing");
    assert_eq!(embedder.texts.load(Ordering::Relaxed), 2);
    // The write embeds nothing: both contents (trimmed, redacted) are ready.
    let a = h.id("deploy with blue green on ECS");
    h.id("the db password=Hunter2x9Qz is rotated weekly");
    assert_eq!(embedder.texts.load(Ordering::Relaxed), 2);
    assert_eq!(stats(&mut h).indexes.semantic, 2);
    // Made ahead or not, the stored vector is the same.
    let stored = h.memory.state.vectors.rows().unwrap()[&a].clone();
    assert_eq!(
        &*stored,
        &Vectors::encode(&embedder.clone().vector("deploy with blue green on ECS"))[..]
    );
    // Import finds its contents ahead too.
    let export = h.memory.export(&Filter::WholeStore).unwrap();
    let mut other = Harness::new();
    let fresh = HashedEmbedder::new(64);
    other.memory.set_embedder(Box::new(fresh.clone()));
    let contents: Vec<String> = export
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(other.memory.embed_ahead(&contents), 2);
    other.memory.import(&export).unwrap();
    assert_eq!(fresh.texts.load(Ordering::Relaxed), 2);
    assert_eq!(stats(&mut other).indexes.semantic, 2);
}

#[test]
fn embeddings_handed_from_another_instance_are_used_by_the_write() {
    let helper_model = HashedEmbedder::new(64);
    let mut helper = Harness::new();
    helper.memory.set_embedder(Box::new(helper_model.clone()));
    let texts = vec!["rotate the staging keys on Mondays".to_owned()];
    assert_eq!(helper.memory.embed_ahead(&texts), 1);
    let (model, items) = helper.memory.take_ahead();
    assert_eq!((model.as_str(), items.len()), ("hashed-64", 1));
    assert!(helper.memory.take_ahead().1.is_empty(), "handed out once");

    let writer_model = HashedEmbedder::new(64);
    let mut writer = Harness::new();
    writer.memory.set_embedder(Box::new(writer_model.clone()));
    // Another model's, another dimension's or non-finite vectors are refused.
    assert_eq!(writer.memory.accept_ahead("other-model", items.clone()), 0);
    let short = vec![(items[0].0.clone(), vec![0.5; 8])];
    assert_eq!(writer.memory.accept_ahead(&model, short), 0);
    let nan = vec![(items[0].0.clone(), vec![f32::NAN; 64])];
    assert_eq!(writer.memory.accept_ahead(&model, nan), 0);
    assert_eq!(writer.memory.accept_ahead(&model, items), 1);
    // The write embeds nothing itself and stores the handed vector.
    let id = writer.id("rotate the staging keys on Mondays");
    assert_eq!(writer_model.texts.load(Ordering::Relaxed), 0);
    assert_eq!(
        &*writer.memory.state.vectors.rows().unwrap()[&id],
        &Vectors::encode(
            &helper_model
                .clone()
                .vector("rotate the staging keys on Mondays")
        )[..]
    );
}

#[test]
fn embeddings_made_with_no_store_open_are_what_the_write_would_make() {
    let texts = vec![
        "rotate the staging keys on Mondays".to_owned(),
        "the deploy token is ghp_R8x2kLm9Qw4Zt7Vb1Nc5Hy3Jp6Ds0Fg2Ae4K".to_owned(),
        "rotate the staging keys on Mondays".to_owned(),
        String::new(), // refused by admission: not embedded
    ];
    let config = crate::memory::Config::default();
    let mut detached_model = HashedEmbedder::new(64);
    let (model, mut detached) =
        crate::memory::embed_detached(&config, &texts, Some(&mut detached_model));
    let mut store = Harness::new();
    store.memory.set_embedder(Box::new(HashedEmbedder::new(64)));
    assert_eq!(store.memory.embed_ahead(&texts), 2);
    let (store_model, mut ahead) = store.memory.take_ahead();
    detached.sort_by(|a, b| a.0.cmp(&b.0));
    ahead.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(model, store_model);
    // Keyed by the content as stored: the token is redacted in both.
    assert_eq!(detached, ahead);
    assert!(
        detached
            .iter()
            .all(|(c, _)| !c.contains("R8x2kLm9Qw4Zt7Vb1Nc5"))
    );
    // No model: nothing.
    let none = crate::memory::embed_detached(&config, &texts, None);
    assert_eq!(none, (String::new(), Vec::new()));
}

#[test]
fn queries_embedded_with_no_store_open_serve_the_recalls_that_ask_them() {
    let (mut h, _) = with_vectors();
    h.id("deploy with blue green on ECS");
    h.id("cache keys carry the tenant prefix");
    h.id("the staging database resets every Sunday");
    let query = "blue green deploy on ECS".to_owned();
    let ask = |h: &mut Harness| {
        h.recall_with(RecallRequest {
            query: query.clone(),
            scope: h.scope.clone(),
            explain: true,
            ..Default::default()
        })
    };
    let alone = ask(&mut h);
    assert!(!alone.is_empty());

    let queries = vec![query.clone(), query.clone(), "  ".to_owned()];
    let config = Config::default();
    let now = h.memory.now();
    let mut model = HashedEmbedder::new(64);
    let (fingerprint, made) =
        crate::memory::embed_queries_detached(&config, &queries, now, Some(&mut model));
    assert_eq!(fingerprint, "hashed-64");
    // Once per text that a recall embeds (a blank query embeds nothing).
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].0, query);

    // A new process: the recall uses the vector handed over, embeds nothing,
    // and answers as it did alone.
    let fresh = HashedEmbedder::new(64);
    h.reopen(Some(fresh.clone()));
    assert_eq!(h.memory.accept_queries("other-64", made.clone()), 0);
    let short = vec![(query.clone(), vec![0.5; 8])];
    assert_eq!(h.memory.accept_queries("hashed-64", short), 0);
    assert_eq!(h.memory.accept_queries("hashed-64", made), 1);
    assert_eq!(ask(&mut h), alone);
    assert_eq!(fresh.texts.load(Ordering::Relaxed), 0);
    // Used once: asking again embeds the query here.
    assert_eq!(ask(&mut h), alone);
    assert_eq!(fresh.texts.load(Ordering::Relaxed), 1);

    // A time window's words are not embedded, by either side.
    let dated = vec!["what did we deploy yesterday".to_owned()];
    let (_, made) = crate::memory::embed_queries_detached(&config, &dated, now, Some(&mut model));
    assert_eq!(made.len(), 1);
    assert!(!made[0].0.contains("yesterday"), "{:?}", made[0].0);
    // No model: nothing.
    let none = crate::memory::embed_queries_detached(&config, &queries, now, None);
    assert_eq!(none, (String::new(), Vec::new()));
}

/// Whether any file of the store holds the stored form of `text`'s vector.
fn vector_on_disk(h: &Harness, embedder: &HashedEmbedder, text: &str) -> bool {
    let vector = Vectors::encode(&embedder.vector(text));
    h.backend
        .all_bytes()
        .iter()
        .any(|(_, bytes)| bytes.windows(vector.len()).any(|w| w == vector.as_slice()))
}

#[test]
fn a_reopened_store_reads_its_vectors_only_when_a_call_needs_them() {
    let (mut h, embedder) = with_vectors();
    let texts = [
        "deploy with blue green on ECS",
        "customer Wang's phone is 0912-345-678",
        "cache keys carry the tenant prefix",
    ];
    let ids: Vec<AtomId> = texts.iter().map(|t| h.id(t)).collect();
    h.memory.compact().unwrap();
    let fresh = HashedEmbedder::new(64);
    h.reopen(Some(fresh.clone()));
    assert!(h.memory.state.vectors.unread().is_some());
    assert_eq!(h.memory.state.vectors.model, "hashed-64");

    // New content and history need no stored row: still unread.
    let added = h.id("the staging database resets every Sunday");
    h.history(ids[0]);
    assert!(h.memory.state.vectors.unread().is_some());

    // Erasing reads the rows to write the snapshot without the erased one,
    // then leaves the new snapshot's rows unread again.
    h.govern(ids[1], GovernAction::Tombstone, None);
    let unread = h.memory.state.vectors.unread().expect("set aside again");
    assert!(
        unread
            .file
            .ends_with(&format!("{:016x}.hmg", h.memory.log.generation()))
    );
    assert!(!vector_on_disk(&h, &embedder, texts[1]));
    assert!(vector_on_disk(&h, &embedder, texts[0]));

    // A semantic recall reads them: the snapshot's rows under the log's.
    assert_eq!(
        h.recall_ids("blue green deploy on ECS").first(),
        Some(&ids[0])
    );
    let rows = h.memory.state.vectors.rows().expect("read by recall");
    let mut have: Vec<AtomId> = rows.keys().copied().collect();
    let mut want = vec![ids[0], ids[2], added];
    have.sort();
    want.sort();
    assert_eq!(have, want);
    assert_eq!(
        fresh.texts.load(Ordering::Relaxed),
        2,
        "one passage, one query"
    );

    h.reopen(Some(HashedEmbedder::new(64)));
    assert_eq!(stats(&mut h).indexes.semantic, 3);
}

/// Two atoms compacted into a snapshot whose vectors (left unread at the
/// reopen) then have a byte flipped; what they were read from.
fn with_damaged_vectors() -> (Harness, AtomId, AtomId, Unread) {
    let (mut h, _) = with_vectors();
    let a = h.id("deploy with blue green on ECS");
    let b = h.id("cache keys carry the tenant prefix");
    h.memory.compact().unwrap();
    h.reopen(Some(HashedEmbedder::new(64)));
    let unread = h.memory.state.vectors.unread().unwrap().clone();
    let middle = unread.offset + u64::from(unread.len) / 2;
    h.backend.corrupt(&unread.file, middle as usize);
    (h, a, b, unread)
}

#[test]
fn a_damaged_vectors_frame_is_refused_when_read_naming_the_file() {
    let (mut h, a, _, unread) = with_damaged_vectors();
    h.reopen(Some(HashedEmbedder::new(64)));
    // What does not need the rows works.
    assert!(h.history(a).current.is_some());
    // What does is refused, naming the file, and nothing is changed.
    let before = h.backend.all_bytes();
    let err = h
        .memory
        .recall(&RecallRequest {
            query: "blue green deploy".into(),
            scope: h.scope.clone(),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&unread.file) && err.contains("checksum") && err.contains("repair"),
        "{err}"
    );
    assert!(h.memory.stats(&Filter::WholeStore).is_err());
    assert_eq!(h.backend.all_bytes(), before);
}

#[test]
fn salvage_keeps_the_atoms_of_a_snapshot_whose_vectors_are_damaged() {
    let (mut h, a, b, _) = with_damaged_vectors();
    let config = Config {
        salvage: true,
        ..h.memory.config.clone()
    };
    h.memory = Memory::open(
        h.backend.clone(),
        config,
        Box::new(crate::memory::SystemEnv),
    )
    .unwrap();
    let notices = h.memory.take_notices().join("\n");
    assert!(
        notices.contains("vectors") && notices.contains("kept"),
        "{notices}"
    );
    assert!(h.memory.state.atom(a).is_some() && h.memory.state.atom(b).is_some());
    assert!(h.memory.state.vectors.is_empty());
    // The damaged snapshot is kept aside whole; the store opens plainly.
    assert!(
        h.backend
            .all_bytes()
            .iter()
            .any(|(n, _)| n.starts_with("kept-snap-"))
    );
    h.reopen(Some(HashedEmbedder::new(64)));
    assert_eq!(h.recall_ids("blue green deploy").first(), Some(&a));
}
