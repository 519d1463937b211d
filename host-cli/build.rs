//! Embeds the engine component in the host: copies the built
//! `wasm32-wasip2/release/engine.wasm` (or `$HMG_ENGINE_WASM`) into OUT_DIR and
//! records its hash, which keys the compiled-code cache. Without a built
//! component the host still compiles (for `cargo check`/clippy) and reports
//! at run time how to build it.
//!
//! Also generates the hosts' API types and their conversions from
//! `wit/hmg.wit` (see `build/api_gen.rs`).

#[path = "build/api_gen.rs"]
mod api_gen;

use std::hash::{DefaultHasher, Hasher};
use std::path::PathBuf;
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-env-changed=HMG_ENGINE_WASM");
    println!("cargo:rerun-if-changed=../wit");
    println!("cargo:rerun-if-changed=build");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let (api, convert) = api_gen::generate(std::path::Path::new("../wit"));
    fs::write(out.join("api.rs"), api).expect("write generated api.rs");
    fs::write(out.join("convert.rs"), convert).expect("write generated convert.rs");
    // OUT_DIR = <target>/<profile>/build/<pkg>/out
    let target = out
        .ancestors()
        .nth(4)
        .map(PathBuf::from)
        .unwrap_or_default();
    let wasm = env::var_os("HMG_ENGINE_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            target
                .join("wasm32-wasip2")
                .join("release")
                .join("engine.wasm")
        });
    println!("cargo:rerun-if-changed={}", wasm.display());
    let bytes = fs::read(&wasm).unwrap_or_default();
    if bytes.is_empty() {
        println!(
            "cargo:warning=engine component not found at {}; build it first (./setup.sh does)",
            wasm.display()
        );
    }
    let mut hasher = DefaultHasher::new();
    hasher.write(&bytes);
    println!(
        "cargo:rustc-env=HMG_COMPONENT_HASH={:016x}",
        hasher.finish()
    );
    fs::write(out.join("engine.wasm"), &bytes).expect("write embedded component");
}
