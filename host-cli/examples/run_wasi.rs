//! Runs a `wasm32-wasip2` command (an engine example such as
//! `open_profile`) with the hosts' wasmtime configuration, one directory
//! granted as `/s`: the component's own figures without the `wasmtime` CLI
//! (which is not installed here).
//!
//!     cargo run --release -p hmg-cli --example run_wasi -- PROGRAM.wasm DIR [ARGS…]
use anyhow::{Result, anyhow};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::p2::bindings::sync::Command;
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [program, dir, rest @ ..] = args.as_slice() else {
        return Err(anyhow!("usage: run_wasi PROGRAM.wasm DIR [ARGS…]"));
    };
    let e = |e: wasmtime::Error| anyhow!("{e}");
    // The hosts' configuration (host-cli/src/engine.rs).
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).map_err(e)?;
    let mut linker: Linker<Ctx> = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(e)?;
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
    let mut store = Store::new(
        &engine,
        Ctx {
            wasi: wasi.build(),
            table: ResourceTable::new(),
        },
    );
    let command = Command::instantiate(&mut store, &component, &linker).map_err(e)?;
    command
        .wasi_cli_run()
        .call_run(&mut store)
        .map_err(e)?
        .map_err(|()| anyhow!("the program failed"))
}
