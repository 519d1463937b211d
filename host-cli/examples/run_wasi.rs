//! Runs a `wasm32-wasip2` command (an engine example such as
//! `open_profile`) with the hosts' wasmtime configuration, one directory
//! granted as `/s`: the component's own figures without the `wasmtime` CLI
//! (which is not installed here).
//!
//!     cargo run --release -p hmg-cli --example run_wasi -- PROGRAM.wasm DIR [ARGS…]
use anyhow::{Result, anyhow};
use hmg_cli::{Ctx, engine_and_linker};
use wasmtime::Store;
use wasmtime::component::Component;
use wasmtime_wasi::p2::bindings::sync::Command;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [program, dir, rest @ ..] = args.as_slice() else {
        return Err(anyhow!("usage: run_wasi PROGRAM.wasm DIR [ARGS…]"));
    };
    let e = |e: wasmtime::Error| anyhow!("{e}");
    let (engine, linker) = engine_and_linker()?;
    let component = Component::from_file(&engine, program).map_err(e)?;
    let mut wasi = WasiCtxBuilder::new();
    wasi.allow_blocking_current_thread(true)
        .inherit_stdio()
        .preopened_dir(dir, "/s", FsPerms::ReadWrite)
        .map_err(e)?;
    let mut guest_args = vec![program.clone()];
    guest_args.extend(
        rest.iter()
            .map(|a| if a == dir { "/s".to_owned() } else { a.clone() }),
    );
    wasi.args(&guest_args);
    let mut store = Store::new(&engine, Ctx::with_wasi(wasi.build()));
    let command = Command::instantiate(&mut store, &component, &linker).map_err(e)?;
    command
        .wasi_cli_run()
        .call_run(&mut store)
        .map_err(e)?
        .map_err(|()| anyhow!("the program failed"))
}
