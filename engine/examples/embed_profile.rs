//! Where one forward pass of the embedding graph spends its time, per
//! operator kind, natively or inside wasm (run under wasmtime).
//!
//!     cargo run --release -p engine --example embed_profile -- MODEL.onnx [TOKENS] [RUNS]
//!     cargo build --release --target wasm32-wasip2 -p engine --example embed_profile
//!     wasmtime run --dir MODEL_DIR embed_profile.wasm MODEL_DIR/model.onnx 16 20

use std::collections::HashMap;
use std::time::Instant;

use tract_onnx::prelude::*;

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: embed_profile MODEL.onnx [TOKENS] [RUNS]");
    let tokens: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(16);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(20);
    let started = Instant::now();
    let mut model = tract_onnx::onnx().model_for_path(path)?;
    let batch = model.symbols.sym("batch");
    let seq = model.symbols.sym("seq");
    let inputs = model.input_outlets()?.len();
    for slot in 0..inputs {
        model.set_input_fact(slot, i64::fact([batch.to_dim(), seq.to_dim()]).into())?;
    }
    let plan = model.into_optimized()?.into_runnable()?;
    println!(
        "load + optimise: {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let feed = || -> TVec<TValue> {
        (0..inputs)
            .map(|i| {
                let a = tract_ndarray::Array2::from_shape_fn((1, tokens), |(_, c)| {
                    if i == 0 { 1000 + c as i64 } else { 1 }
                });
                Tensor::from(a).into()
            })
            .collect()
    };
    // The p50 of `runs` calls of `pass`, in milliseconds.
    let p50 = |pass: &mut dyn FnMut() -> TractResult<()>| -> TractResult<f64> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            pass()?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[runs / 2])
    };
    let fresh = p50(&mut || plan.run(feed()).map(drop))?;
    println!("{tokens} tokens: plan.run (new state each call) p50 {fresh:.2} ms");
    let mut state = plan.spawn()?;
    state.run(feed())?;
    let kept = p50(&mut || state.run(feed()).map(drop))?;
    println!("{tokens} tokens: one kept state p50 {kept:.2} ms (of {runs})");

    let mut by_op: HashMap<String, (f64, usize)> = HashMap::new();
    for _ in 0..runs {
        state.run_plan_with_eval(feed(), |session, op_state, node, inputs| {
            let started = Instant::now();
            let out = tract_onnx::tract_core::plan::eval(session, op_state, node, inputs);
            let entry = by_op.entry(node.op().name().to_string()).or_default();
            entry.0 += started.elapsed().as_secs_f64() * 1e3;
            entry.1 += 1;
            out
        })?;
    }
    let mut rows: Vec<_> = by_op.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    let total: f64 = rows.iter().map(|r| r.1.0).sum();
    println!(
        "per op kind (per forward): total {:.2} ms",
        total / runs as f64
    );
    for (name, (ms, n)) in rows {
        println!(
            "  {name:<28} {:>8.3} ms  {:>5.1} %  {:>4} nodes",
            ms / runs as f64,
            100.0 * ms / total,
            n / runs
        );
    }
    Ok(())
}
