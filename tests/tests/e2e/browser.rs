//! The browser host in real Chromium (Debian's `chromium`, driven by
//! `playwright-core`): `host-web/test/*.test.mjs` — the seed walk-through
//! through the TypeScript client on OPFS, reload / restart / SIGKILL
//! durability, two tabs on one store, and the memory page with its graph.
//! ./setup.sh builds `host-web/dist` from the same engine.wasm the native
//! hosts run; ./test.sh installs Chromium.

use std::path::Path;
use std::process::Command;

#[test]
fn browser_host_in_chromium() {
    let web = hmg_e2e::crate_dir().join("../host-web");
    assert!(
        web.join("dist/hmg-worker.js").exists()
            && web.join("node_modules/playwright-core").exists(),
        "host-web is not built: run ./setup.sh --build (./test.sh does)"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: ./test.sh installs Debian's chromium"
    );
    // The *.test.mjs files (a directory argument would also run test/browser.mjs, the helpers).
    let mut files: Vec<String> = std::fs::read_dir(web.join("test"))
        .expect("host-web/test")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".test.mjs"))
        .map(|name| format!("test/{name}"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "{files:?}");
    let out = Command::new("node")
        .arg("--test")
        .arg("--test-concurrency=1")
        .args(&files)
        .current_dir(&web)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser tests failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# pass 17\n"), "{stdout}");
}
