//! Where the time of opening a large store goes, step by step: reading the
//! snapshot, checking its frames, decoding the state, the vectors (as the
//! lazy path reads them) and the stored indexes, a search without an index
//! and the vector index's build; then `Log::open` whole.
//!
//!     cargo run --release -p engine --example open_profile -- STORE_DIR [compact]
//!
//! `compact` rewrites the store's snapshot with this build's indexes first
//! (a store of another derivation would rebuild them at every open). Built
//! with `--target wasm32-wasip2` it runs under the `wasmtime` CLI
//! (`wasmtime run --dir STORE_DIR::/s open_profile.wasm /s`): the component's
//! figures without a host.
use std::time::Instant;

use engine::FsBackend;
use engine::index::Indexes;
use engine::log::frame::{self, Checksum, Next};
use engine::log::{Derived, Log};
use engine::state::{State, Supplied, Vectors};

fn ms(t: Instant) -> String {
    format!("{:.1} ms", t.elapsed().as_secs_f64() * 1e3)
}

fn main() {
    let dir = std::env::args().nth(1).expect("store dir");
    let snap = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("snap-")
        })
        .unwrap();
    if std::env::args().nth(2).as_deref() == Some("compact") {
        let t = Instant::now();
        engine::Memory::open(
            FsBackend::new(std::path::Path::new(&dir)).unwrap(),
            engine::Config::default(),
            Box::new(engine::SystemEnv),
        )
        .unwrap()
        .compact()
        .unwrap();
        println!("compacted: {}", ms(t));
        return;
    }
    for _ in 0..2 {
        let t = Instant::now();
        let bytes = std::fs::read(&snap).unwrap();
        println!("read {} MB: {}", bytes.len() >> 20, ms(t));
        let (_, checksum) = frame::parse_header(frame::SNAP_MAGIC, &bytes).unwrap();
        let t = Instant::now();
        let mut at = 24;
        let mut frames = Vec::new();
        while let Next::Frame(p, next) = frame::next(&bytes, at, checksum) {
            frames.push(p);
            at = next;
        }
        println!("{checksum:?} of {} frames: {}", frames.len(), ms(t));
        // Both kinds over the same bytes: what the format's checksum costs.
        for kind in [Checksum::Crc32, Checksum::Xxh3] {
            let t = Instant::now();
            let sums: u32 = frames.iter().fold(0, |s, f| s ^ kind.of(f));
            println!("  {kind:?} alone: {} ({sums:08x})", ms(t));
        }
        for f in &frames {
            print!("{} MB ", f.len() >> 20);
        }
        println!();
        let t = Instant::now();
        let mut state: State = postcard::from_bytes(frames[0]).unwrap();
        println!("state {} atoms: {}", state.atoms.len(), ms(t));
        let t = Instant::now();
        let half = frame::version(&bytes) < frame::INT8_ROWS_FROM;
        state.vectors =
            Vectors::from_bytes(bytes::Bytes::copy_from_slice(frames[1]), half).unwrap();
        println!("vectors: {}", ms(t));
        let t = Instant::now();
        state.supplied = postcard::from_bytes::<Supplied>(frames[2]).unwrap();
        println!("supplied: {}", ms(t));
        let t = Instant::now();
        let derived = Derived {
            snapshot_version: state.version,
            bytes: frames[3].to_vec(),
            touched: vec![],
        };
        let (mut ix, used) = Indexes::restore(&state, Some(derived));
        println!("indexes (stored {used}): {}", ms(t));
        // One search without an index (what a process's first semantic
        // recall does), with a row of the store as the query.
        let t = Instant::now();
        let tenants = engine::index::vector_rows(&state, None);
        println!("rows per tenant: {}", ms(t));
        let t = Instant::now();
        for rows in tenants.values() {
            if let Some((_, row, cjk)) = rows.first() {
                let query = Vectors::decode(row);
                let dim = state.vectors.dim as usize;
                engine::index::vector::search_rows(dim, rows, &query, 60, |_| true, *cjk);
            }
        }
        println!("search without an index: {}", ms(t));
        let t = Instant::now();
        let dim = state.vectors.dim as usize;
        let means: Vec<_> = tenants
            .values()
            .map(|rows| engine::index::vector::row_means(dim, rows))
            .collect();
        println!("  of which the script means: {}", ms(t));
        std::hint::black_box(means);
        let t = Instant::now();
        ix.ensure_vectors(&state);
        println!("vector index built: {}", ms(t));
        // Ten searches of the built index (the largest tenant's), each with
        // a row of the store as the query, as a recall asks (60 results).
        if let Some((tenant, rows)) = tenants.iter().max_by_key(|(_, rows)| rows.len()) {
            let index = ix.vector(tenant).expect("built");
            let step = (rows.len() / 10).max(1);
            let t = Instant::now();
            for (_, row, cjk) in rows.iter().step_by(step).take(10) {
                let query = Vectors::decode(row);
                std::hint::black_box(index.search_neutral(&query, 60, |_| true, *cjk));
            }
            println!("ten searches of the index: {}", ms(t));
        }
        drop(tenants);
        let t = Instant::now();
        drop(state);
        println!("drop state: {}", ms(t));
        let t = Instant::now();
        let _ = Log::open(FsBackend::new(std::path::Path::new(&dir)).unwrap(), 4 << 20).unwrap();
        println!("Log::open: {}", ms(t));
    }
}
