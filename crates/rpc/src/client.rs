//! A small blocking JSON-RPC 2.0 client over HTTP: single calls and batches, per-request
//! time-outs, bounded retries with exponential back-off.

use crate::{RpcDumpError, TransportError};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

/// Time-outs and retries of a [`RpcClient`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// Time-out of one HTTP request (connect, send, wait, read).
    pub timeout: Duration,
    /// Retries after a failed attempt (transport errors and rate limiting only; a JSON-RPC
    /// error answer is final).
    pub retries: u32,
    /// Wait before the first retry; doubles on each further retry.
    pub backoff: Duration,
    /// Upper bound of the wait between retries.
    pub max_backoff: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            retries: 5,
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
        }
    }
}

impl ClientConfig {
    /// The longest a call can take before its error is returned: every attempt times out
    /// and every back-off is waited.
    pub fn worst_case(&self) -> Duration {
        let mut total = self.timeout;
        let mut wait = self.backoff;
        for _ in 0..self.retries {
            total += wait.min(self.max_backoff) + self.timeout;
            wait *= 2;
        }
        total
    }
}

/// A blocking JSON-RPC client. Cheap to share between threads (`&RpcClient` is `Sync`).
#[derive(Debug)]
pub struct RpcClient {
    agent: ureq::Agent,
    url: String,
    shown: String,
    config: ClientConfig,
    next_id: AtomicU64,
}

/// One failed attempt, before retry policy is applied.
enum Attempt {
    /// Worth retrying (time-out, connection trouble, HTTP 5xx/429, garbled answer);
    /// `connect`: the node could not be reached at all.
    Transient {
        error: TransportError,
        connect: bool,
    },
    /// Final (HTTP 4xx other than 429, request could not be built).
    Fatal(TransportError),
}

impl Attempt {
    fn transient(error: TransportError) -> Self {
        Self::Transient {
            error,
            connect: false,
        }
    }

    fn connect(error: TransportError) -> Self {
        Self::Transient {
            error,
            connect: true,
        }
    }
}

/// Largest JSON-RPC answer (HTTP body) accepted: 128 MiB. Real answers are far smaller: a
/// block with full transactions is a few MB (30 Mgas of calldata is under 4 MB of hex), a
/// batch of 100 `eth_getCode` answers under 5 MB, a `prestateTracer` trace of a block tens
/// of MB at most. A larger answer is refused with [`RpcDumpError::Transport`] naming the
/// method and this cap, without being read further (a hostile or broken node cannot make
/// the dumper allocate without bound).
pub const MAX_RESPONSE_BYTES: u64 = 128 << 20;

/// Most JSON values (array items, object members, scalars) an answer may hold: 8 Mi. Parsed,
/// each takes tens of bytes however short its text (`[0,0,0,…]` is 2 bytes per value in
/// JSON, 32 as a parsed value), so a body within [`MAX_RESPONSE_BYTES`] could still expand
/// to gigabytes; this bounds the parsed answer to a few hundred MB. Real answers hold far
/// fewer (a block with full transactions: tens of thousands; their bulk is hex strings).
pub const MAX_RESPONSE_VALUES: usize = 8 << 20;

/// JSON-RPC error codes that mean "slow down", retried like transport errors.
const RATE_LIMIT_CODES: [i64; 2] = [-32005, 429];

impl RpcClient {
    /// A client for `url` (`http://` or `https://`).
    pub fn new(url: &str, config: ClientConfig) -> Result<Self, RpcDumpError> {
        let shown = display_url(url);
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(RpcDumpError::Connect {
                url: shown,
                method: None,
                attempts: 0,
                source: TransportError::NotHttp,
            });
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self {
            agent,
            url: url.to_string(),
            shown,
            config,
            next_id: AtomicU64::new(1),
        })
    }

    /// The time-out and retry configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// One HTTP round trip: POST `body`, return the parsed JSON answer.
    fn post(&self, body: &str) -> Result<Value, Attempt> {
        let mut resp = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .send(body)
            .map_err(classify)?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(classify)?;
        let values = json_values(text.as_bytes());
        if values > MAX_RESPONSE_VALUES {
            return Err(Attempt::Fatal(TransportError::TooManyValues { values }));
        }
        let http = || TransportError::Status {
            status,
            body: shorten(&text, 200),
        };
        if status == 429 || status >= 500 {
            return Err(Attempt::transient(http()));
        }
        if !(200..300).contains(&status) {
            return Err(Attempt::Fatal(http()));
        }
        serde_json::from_str(&text).map_err(|source| {
            Attempt::transient(TransportError::NotJson {
                body: shorten(&text, 200),
                source,
            })
        })
    }

    /// POST with the retry policy. `what` names the call(s) in errors.
    fn post_retrying(
        &self,
        body: &str,
        method: &str,
        params: &str,
        fail_fast_connect: bool,
    ) -> Result<Value, RpcDumpError> {
        let start = Instant::now();
        let mut wait = self.config.backoff;
        let mut attempt = 0u32;
        let transport = |attempts, source: TransportError| RpcDumpError::Transport {
            method: method.into(),
            params: params.into(),
            attempts,
            elapsed_s: start.elapsed().as_secs_f64(),
            kind: source.kind(),
            source,
        };
        loop {
            attempt += 1;
            match self.post(body) {
                Ok(v) => return Ok(v),
                Err(Attempt::Fatal(source)) => return Err(transport(attempt, source)),
                Err(Attempt::Transient { error, connect }) => {
                    if connect && fail_fast_connect {
                        return Err(RpcDumpError::Connect {
                            url: self.shown.clone(),
                            method: None,
                            attempts: attempt,
                            source: error,
                        });
                    }
                    if attempt > self.config.retries {
                        if connect {
                            return Err(RpcDumpError::Connect {
                                url: self.shown.clone(),
                                method: Some(method.into()),
                                attempts: attempt,
                                source: error,
                            });
                        }
                        return Err(transport(attempt, error));
                    }
                    std::thread::sleep(wait.min(self.config.max_backoff));
                    wait *= 2;
                }
            }
        }
    }

    fn request(&self, method: &str, params: &Value) -> (u64, Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        (
            id,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        )
    }

    /// Call `method` and return its raw result (`null` included).
    pub fn call_value(&self, method: &str, params: Value) -> Result<Value, RpcDumpError> {
        self.call_value_inner(method, params, false)
    }

    /// Like [`RpcClient::call_value`], but a refused connection or unknown host is reported
    /// at once as [`RpcDumpError::Connect`] instead of being retried (for the first call).
    pub fn probe(&self, method: &str, params: Value) -> Result<Value, RpcDumpError> {
        self.call_value_inner(method, params, true)
    }

    fn call_value_inner(
        &self,
        method: &str,
        params: Value,
        fail_fast: bool,
    ) -> Result<Value, RpcDumpError> {
        let shown = shorten(&params.to_string(), 200);
        let start = Instant::now();
        let mut wait = self.config.backoff;
        let mut rate_limited = 0u32;
        loop {
            let (_, req) = self.request(method, &params);
            let answer = self.post_retrying(&req.to_string(), method, &shown, fail_fast)?;
            match single_result(answer, method, &shown) {
                Err(RpcDumpError::Rpc { code, message, .. })
                    if RATE_LIMIT_CODES.contains(&code) && rate_limited < self.config.retries =>
                {
                    let _ = message;
                    rate_limited += 1;
                    std::thread::sleep(wait.min(self.config.max_backoff));
                    wait *= 2;
                }
                Err(RpcDumpError::Rpc {
                    code,
                    message,
                    method,
                    params,
                }) if RATE_LIMIT_CODES.contains(&code) => {
                    let source = TransportError::RateLimited { code, message };
                    return Err(RpcDumpError::Transport {
                        method,
                        params,
                        attempts: rate_limited + 1,
                        elapsed_s: start.elapsed().as_secs_f64(),
                        kind: source.kind(),
                        source,
                    });
                }
                other => return other,
            }
        }
    }

    /// Call `method` and decode a non-null result.
    pub fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, RpcDumpError> {
        let shown = shorten(&params.to_string(), 200);
        let v = self.call_value(method, params)?;
        decode(v, method, &shown)
    }

    /// Send several calls as one JSON-RPC batch. The outer error is a transport failure of
    /// the whole batch; each call has its own result (JSON-RPC errors per call). A node that
    /// does not accept batches gets the calls one by one.
    pub fn batch(
        &self,
        calls: &[(&str, Value)],
    ) -> Result<Vec<Result<Value, RpcDumpError>>, RpcDumpError> {
        match calls {
            [] => return Ok(Vec::new()),
            [(m, p)] => return Ok(vec![self.call_alone(m, p)?]),
            _ => {}
        }
        let mut ids = Vec::with_capacity(calls.len());
        let mut reqs = Vec::with_capacity(calls.len());
        for (m, p) in calls {
            let (id, r) = self.request(m, p);
            ids.push(id);
            reqs.push(r);
        }
        let body = Value::Array(reqs).to_string();
        let first = format!("{}(…) and {} more", calls[0].0, calls.len() - 1);
        let answer = self.post_retrying(&body, "batch", &first, false)?;
        let Value::Array(items) = answer else {
            // No batch support: one by one.
            return calls.iter().map(|(m, p)| self.call_alone(m, p)).collect();
        };
        let mut by_id: std::collections::HashMap<u64, Value> =
            std::collections::HashMap::with_capacity(items.len());
        for item in items {
            if let Some(id) = item.get("id").and_then(Value::as_u64) {
                by_id.insert(id, item);
            }
        }
        let mut out = Vec::with_capacity(calls.len());
        for ((m, p), id) in calls.iter().zip(ids) {
            let shown = shorten(&p.to_string(), 200);
            match by_id.remove(&id) {
                Some(item) => match single_result(item, m, &shown) {
                    Err(RpcDumpError::Rpc { code, .. }) if RATE_LIMIT_CODES.contains(&code) => {
                        // Retry this call alone, with back-off.
                        out.push(self.call_alone(m, p)?);
                    }
                    r => out.push(r),
                },
                None => out.push(self.call_alone(m, p)?),
            }
        }
        Ok(out)
    }

    /// One call of a batch on its own: its JSON-RPC error is its result (`Ok(Err)`), any
    /// other failure the whole batch's (`Err`).
    fn call_alone(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Result<Value, RpcDumpError>, RpcDumpError> {
        match self.call_value(method, params.clone()) {
            Err(e @ RpcDumpError::Rpc { .. }) => Ok(Err(e)),
            Err(e) => Err(e),
            Ok(v) => Ok(Ok(v)),
        }
    }
}

/// Decode a JSON-RPC result, `null` being an error.
pub(crate) fn decode<T: DeserializeOwned>(
    v: Value,
    method: &str,
    params: &str,
) -> Result<T, RpcDumpError> {
    if v.is_null() {
        return Err(RpcDumpError::BadResponse {
            method: method.into(),
            params: params.into(),
            detail: "null result".into(),
        });
    }
    serde_json::from_value(v).map_err(|e| RpcDumpError::BadResponse {
        method: method.into(),
        params: params.into(),
        detail: e.to_string(),
    })
}

/// The `result` of one JSON-RPC response object, or its `error`.
fn single_result(mut answer: Value, method: &str, params: &str) -> Result<Value, RpcDumpError> {
    if let Some(err) = answer.get("error").filter(|e| !e.is_null()) {
        return Err(RpcDumpError::Rpc {
            method: method.into(),
            params: params.into(),
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| shorten(&err.to_string(), 200)),
        });
    }
    match answer.get_mut("result") {
        Some(r) => Ok(r.take()),
        None => Err(RpcDumpError::BadResponse {
            method: method.into(),
            params: params.into(),
            detail: format!(
                "neither result nor error in {}",
                shorten(&answer.to_string(), 200)
            ),
        }),
    }
}

fn classify(e: ureq::Error) -> Attempt {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Timeout(t) => Attempt::transient(TransportError::TimedOut(t)),
        ureq::Error::HostNotFound => Attempt::connect(TransportError::HostNotFound),
        ureq::Error::ConnectionFailed => Attempt::connect(TransportError::ConnectionFailed),
        ureq::Error::Io(io) => match io.kind() {
            ErrorKind::ConnectionRefused => Attempt::connect(TransportError::ConnectionRefused),
            ErrorKind::AddrNotAvailable => Attempt::connect(TransportError::Io(io)),
            _ => Attempt::transient(TransportError::Io(io)),
        },
        ureq::Error::BadUri(u) => Attempt::Fatal(TransportError::BadUrl(u)),
        ureq::Error::BodyExceedsLimit(limit) => Attempt::Fatal(TransportError::TooLarge { limit }),
        other => Attempt::transient(TransportError::Http(Box::new(other))),
    }
}

/// An upper bound of the number of JSON values in `text` (scalars, arrays, objects): one
/// more than the separators and openers outside strings. One pass, no allocation.
fn json_values(text: &[u8]) -> usize {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else {
            match b {
                b'"' => in_string = true,
                b',' | b'[' | b'{' | b':' => count += 1,
                _ => {}
            }
        }
    }
    count
}

/// Shorten a string for an error message.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `scheme://host:port` of a URL, without user info, path or query (which may hold keys).
pub fn display_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s, r),
        None => return shorten(url, 60),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let hidden =
        rest.len() > authority.len() && !rest[authority.len()..].trim_matches('/').is_empty();
    format!("{scheme}://{host}{}", if hidden { "/…" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_secrets() {
        assert_eq!(
            display_url("http://127.0.0.1:8545"),
            "http://127.0.0.1:8545"
        );
        assert_eq!(
            display_url("http://127.0.0.1:8545/"),
            "http://127.0.0.1:8545"
        );
        assert_eq!(
            display_url("https://user:pw@node.example/v3/KEY"),
            "https://node.example/…"
        );
    }

    #[test]
    fn json_values_are_counted_outside_strings() {
        assert_eq!(json_values(b"1"), 1);
        assert!(json_values(br#"{"a":[1,2,3]}"#) >= 5);
        // Separators inside strings (escaped quotes included) do not count.
        assert_eq!(json_values(br#""a,b:[{\",""#), 1);
        let many = format!("[{}0]", "0,".repeat(1000));
        assert!(json_values(many.as_bytes()) > 1000);
    }

    #[test]
    fn worst_case_adds_timeouts_and_backoff() {
        let c = ClientConfig {
            timeout: Duration::from_secs(1),
            retries: 2,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        assert_eq!(c.worst_case(), Duration::from_millis(3300));
    }
}
