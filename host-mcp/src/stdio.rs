//! The stdio transport: newline-delimited JSON-RPC, with every request
//! answered.
//!
//! rmcp's own stdio transport stays silent on some input (an unparsable
//! line, a line over its 16 MiB limit) and answers others without their id
//! (a wrong `jsonrpc`, `params` that is not an object, no `method`), so the
//! client waiting on that id never hears back. Lines are therefore read and
//! checked here, and only well-formed messages reach rmcp:
//!
//! - a line over [`MAX_LINE`] bytes is skipped without being held in memory
//!   and answered -32600 "request too large", with the id read from it as it
//!   streams past — before any work;
//! - a line that is not JSON: -32700, id null;
//! - a batch, or JSON that is not an object: -32600, id null;
//! - an object with a wrong `jsonrpc`, no string `method` (unless it is a
//!   response), or `params` that is not an object: -32600 with its id;
//! - a request rmcp's types cannot read (e.g. a tools/call without `name`):
//!   -32602 with its id.
//!
//! One task writes stdout, so replies never interleave. When stdin closes,
//! the requests already read are answered (waiting at most `drain`), then
//! the service stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::{RoleServer, Service, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// Longest request line accepted (1 MiB: the engine's own limits — 8 KiB of
/// content, 4 KiB of query, 32 KiB of turn — are far below it).
pub const MAX_LINE: usize = 1 << 20;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// Requests handed to rmcp and not yet answered.
#[derive(Default)]
struct Pending {
    count: AtomicUsize,
    changed: Notify,
}

enum Out {
    Service(Box<ServerJsonRpcMessage>),
    Refusal(Value),
}

/// Serves `service` over `input`/`output` until `input` closes and what it
/// asked is answered (or `drain` has passed).
pub async fn serve<S, R, W>(service: S, input: R, output: W, drain: Duration) -> Result<()>
where
    S: Service<RoleServer> + Send + 'static,
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let pending = Arc::new(Pending::default());
    let (to_service, from_reader) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let (to_writer, from_service) = mpsc::channel::<ServerJsonRpcMessage>(64);
    let (refuse, refusals) = mpsc::unbounded::<Value>();
    let writer = tokio::spawn(write_all(
        output,
        from_service.map(|m| Out::Service(Box::new(m))),
        refusals.map(Out::Refusal),
        pending.clone(),
    ));
    let reader = tokio::spawn(read_all(input, to_service, refuse, pending, drain));
    let running = service
        .serve((to_writer, from_reader))
        .await
        .context("MCP initialisation failed")?;
    running.waiting().await.context("MCP service failed")?;
    reader.await.context("the stdin reader failed")??;
    writer.await.context("the stdout writer failed")??;
    Ok(())
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut output: W,
    service: impl futures::Stream<Item = Out> + Unpin,
    refusals: impl futures::Stream<Item = Out> + Unpin,
    pending: Arc<Pending>,
) -> Result<()> {
    let mut both = futures::stream::select(service, refusals);
    while let Some(out) = both.next().await {
        let mut bytes = match &out {
            Out::Service(message) => serde_json::to_vec(message)?,
            Out::Refusal(value) => serde_json::to_vec(value)?,
        };
        bytes.push(b'\n');
        output.write_all(&bytes).await?;
        output.flush().await?;
        if let Out::Service(message) = &out
            && let JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) = **message
        {
            let _ = pending
                .count
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
            pending.changed.notify_waiters();
        }
    }
    Ok(())
}

async fn read_all<R: AsyncBufRead + Unpin>(
    mut input: R,
    mut to_service: mpsc::Sender<ClientJsonRpcMessage>,
    refuse: mpsc::UnboundedSender<Value>,
    pending: Arc<Pending>,
    drain: Duration,
) -> Result<()> {
    let mut line = Vec::new();
    // Set while skipping an oversized line: its id as far as read, and its size.
    let mut oversized: Option<(IdScan, usize)> = None;
    loop {
        let chunk = input.fill_buf().await.context("cannot read stdin")?;
        if chunk.is_empty() {
            break;
        }
        let (part, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (&chunk[..at], Some(at + 1)),
            None => (chunk, None),
        };
        match &mut oversized {
            Some((scan, size)) => {
                scan.feed(part);
                *size += part.len();
            }
            None if line.len() + part.len() > MAX_LINE => {
                let mut scan = IdScan::default();
                scan.feed(&line);
                scan.feed(part);
                oversized = Some((scan, line.len() + part.len()));
                line = Vec::new();
            }
            None => line.extend_from_slice(part),
        }
        let used = ends.unwrap_or(chunk.len());
        input.consume(used);
        if ends.is_some() {
            if let Some((scan, size)) = oversized.take() {
                let _ = refuse.unbounded_send(refusal(
                    INVALID_REQUEST,
                    &format!("request too large: {size} bytes, over the limit of {MAX_LINE}"),
                    scan.id(),
                ));
            } else {
                let taken = std::mem::take(&mut line);
                forward(&taken, &mut to_service, &refuse, &pending).await;
            }
        }
    }
    // The last line may lack its newline.
    if let Some((scan, size)) = oversized.take() {
        let _ = refuse.unbounded_send(refusal(
            INVALID_REQUEST,
            &format!("request too large: {size} bytes, over the limit of {MAX_LINE}"),
            scan.id(),
        ));
    } else if !line.is_empty() {
        forward(&line, &mut to_service, &refuse, &pending).await;
    }
    // stdin is closed: answer what was asked, then let the service stop.
    let _ = tokio::time::timeout(drain, async {
        loop {
            let changed = pending.changed.notified();
            if pending.count.load(Ordering::SeqCst) == 0 {
                break;
            }
            changed.await;
        }
    })
    .await;
    Ok(())
}

/// Checks one line; hands it to rmcp or answers it here.
async fn forward(
    line: &[u8],
    to_service: &mut mpsc::Sender<ClientJsonRpcMessage>,
    refuse: &mpsc::UnboundedSender<Value>,
    pending: &Pending,
) {
    let text = line.trim_ascii();
    if text.is_empty() {
        return;
    }
    match check(text) {
        Ok(message) => {
            if let JsonRpcMessage::Request(_) = message {
                pending.count.fetch_add(1, Ordering::SeqCst);
            }
            if to_service.send(message).await.is_err() {
                // The service stopped; nothing will answer.
            }
        }
        Err(Value::Null) => {}
        Err(reply) => {
            let _ = refuse.unbounded_send(reply);
        }
    }
}

/// A message rmcp can take, or the error reply for the line (null: no reply).
fn check(line: &[u8]) -> std::result::Result<ClientJsonRpcMessage, Value> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| refusal(PARSE_ERROR, &format!("parse error: {e}"), Value::Null))?;
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(refusal(
                INVALID_REQUEST,
                "invalid request: batches are not supported",
                Value::Null,
            ));
        }
        _ => {
            return Err(refusal(
                INVALID_REQUEST,
                "invalid request: not a JSON-RPC object",
                Value::Null,
            ));
        }
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let invalid = |why: &str| {
        refusal(
            INVALID_REQUEST,
            &format!("invalid request: {why}"),
            id.clone(),
        )
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(invalid("`method` must be a string")),
        None if object.contains_key("result") || object.contains_key("error") => {}
        None => return Err(invalid("no `method`")),
    }
    if object.get("params").is_some_and(|p| !p.is_object()) {
        return Err(invalid("`params` must be an object"));
    }
    let is_request = object.contains_key("method");
    serde_json::from_value(value.clone()).map_err(|e| {
        if is_request {
            refusal(INVALID_PARAMS, &format!("invalid params: {e}"), id.clone())
        } else {
            // A response this server cannot read: replying to a response
            // would confuse the client; it is dropped (and said on stderr).
            eprintln!("hmg-mcp: dropped an unreadable response: {e}");
            Value::Null
        }
    })
}

fn refusal(code: i64, message: &str, id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Finds the top-level `"id"` of a JSON object as its bytes stream past,
/// keeping only what it needs (a line too large to hold is still answered
/// with its id). Depth is counted outside strings; a value is read only
/// right after the top-level key `id`.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The current top-level string (a key, or the id's value), capped.
    string: Vec<u8>,
    last_key: Vec<u8>,
    /// Reading the id's value: its bytes so far.
    value: Option<Vec<u8>>,
    found: Option<Value>,
}

impl IdScan {
    const CAP: usize = 256;

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() {
                return;
            }
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        let top = self.depth == 1;
        if self.in_string {
            if top && self.string.len() < Self::CAP {
                self.string.push(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if top {
                    let string = std::mem::take(&mut self.string);
                    match &mut self.value {
                        Some(_) => {
                            self.found = serde_json::from_slice(&string).ok();
                            self.value = None;
                        }
                        None => self.last_key = string,
                    }
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if top {
                    self.string = vec![b'"'];
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                // An object or array as id: not a valid id.
                if top {
                    self.value = None;
                }
            }
            b'}' | b']' => {
                if top {
                    self.finish_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if top && self.last_key == b"\"id\"" => {
                self.value = Some(Vec::new());
            }
            b',' if top => {
                self.finish_value();
                self.last_key.clear();
            }
            _ if top => {
                if let Some(value) = &mut self.value
                    && value.len() < Self::CAP
                    && !b.is_ascii_whitespace()
                {
                    value.push(b);
                }
            }
            _ => {}
        }
    }

    fn finish_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.found = serde_json::from_slice::<Value>(&value)
                .ok()
                .filter(Value::is_number);
        }
    }

    fn id(&self) -> Value {
        self.found.clone().unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str, chunk: usize) -> Value {
        let mut s = IdScan::default();
        for piece in text.as_bytes().chunks(chunk) {
            s.feed(piece);
        }
        s.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        for chunk in [1, 3, 1000] {
            assert_eq!(
                scan(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, chunk),
                json!(7)
            );
            assert_eq!(
                scan(
                    r#"{"method":"tools/call","params":{"arguments":{"id":1,"content":"a\"id\":9"}},"id":"abc"}"#,
                    chunk
                ),
                json!("abc")
            );
            assert_eq!(scan(r#"{"id" : 42 }"#, chunk), json!(42));
            assert_eq!(scan(r#"{"params":{"id":5}}"#, chunk), Value::Null);
            assert_eq!(scan(r#"{"id":{"x":1}}"#, chunk), Value::Null);
        }
    }

    #[test]
    fn malformed_lines_are_answered_with_their_ids() {
        let code = |line: &str| {
            let reply = check(line.as_bytes()).unwrap_err();
            (
                reply["error"]["code"].as_i64().unwrap(),
                reply["id"].clone(),
            )
        };
        assert_eq!(code("{not json"), (PARSE_ERROR, Value::Null));
        assert_eq!(code("[]"), (INVALID_REQUEST, Value::Null));
        assert_eq!(code("3"), (INVALID_REQUEST, Value::Null));
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            (INVALID_REQUEST, json!(1))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}"#),
            (INVALID_REQUEST, json!("a"))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3}"#),
            (INVALID_REQUEST, json!(3))
        );
        // Well-formed but unknown to rmcp's types: rmcp answers it, with its id.
        assert!(check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).is_ok());
    }
}
