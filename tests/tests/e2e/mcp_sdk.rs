//! The real `hmg-mcp` binary driven by the official MCP TypeScript SDK
//! (`tests/mcp-sdk`, installed by ./test.sh): the seed walk-through over
//! stdio, and two servers plus the CLI sharing one store.

use std::process::Command;

use hmg_e2e::hmg_binary;

#[test]
fn official_sdk_client_walks_through_the_seed() {
    let dir = hmg_e2e::crate_dir().join("mcp-sdk");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").exists(),
        "run `npm ci --prefix tests/mcp-sdk` (./test.sh does)"
    );
    let hmg = hmg_binary();
    let mcp = hmg.with_file_name(format!("hmg-mcp{}", std::env::consts::EXE_SUFFIX));
    assert!(
        mcp.exists(),
        "{} is missing: build the workspace first",
        mcp.display()
    );
    let out = Command::new("node")
        .arg("--test")
        .arg(&dir)
        .env("HMG_BIN", &hmg)
        .env("HMG_MCP_BIN", &mcp)
        .env("HMG_MODEL", hmg_e2e::model_dir())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Vec<&str> = stdout.lines().filter(|l| !l.contains("uint64")).collect();
    println!("{}", report.join("\n"));
    assert!(
        out.status.success(),
        "MCP SDK tests failed:\n{}\n{}",
        report.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# pass 2"), "{stdout}");
}
