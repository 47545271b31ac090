//! Nodes that misbehave: a small fake JSON-RPC server on 127.0.0.1 that answers errors,
//! hangs, fails in HTTP, lacks blocks or state. Each time the documented error arrives,
//! naming the call, within the retry budget. And a flaky proxy in front of anvil (no
//! batches, no `eth_getBlockReceipts`, no traces, no `eth_config`, every third request an
//! HTTP 503): the dump still succeeds and equals the one made directly. And a recorded
//! Amsterdam node (a fake serving an execution-spec-tests fixture, not a live node): the
//! access list the dumper builds is checked against the header's `blockAccessListHash`.

mod common;

use alloy_consensus::Header;
use alloy_primitives::{B256, U256};
use gigagas_rpc::{
    ClientConfig, Difference, DumpOptions, MAX_RESPONSE_BYTES, MAX_RESPONSE_VALUES, RpcDumpError,
    TransportError, dump_from_rpc,
};
use serde_json::{Value, json};
use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

/// What the fake node does with one call: a result, a JSON-RPC error, or something worse.
enum Reply {
    Result(Value),
    Error(i64, &'static str),
}

/// How the fake node answers one HTTP request body: `Some((status, body))`, or `None` to
/// never answer.
type Responder = Arc<dyn Fn(&[u8]) -> Option<(u16, String)> + Send + Sync>;

struct FakeNode {
    url: String,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn answer(call: &Value, handler: &impl Fn(&str, &Value) -> Reply) -> Value {
    let id = call["id"].clone();
    match handler(call["method"].as_str().unwrap_or(""), &call["params"]) {
        Reply::Result(r) => json!({ "jsonrpc": "2.0", "id": id, "result": r }),
        Reply::Error(code, message) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        }
    }
}

/// A JSON-RPC responder: every call (single or batched) answered by `handler`.
fn rpc(handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static) -> Responder {
    Arc::new(move |body| {
        let req: Value = serde_json::from_slice(body).unwrap();
        let resp = match &req {
            Value::Array(calls) => {
                Value::Array(calls.iter().map(|c| answer(c, &handler)).collect())
            }
            call => answer(call, &handler),
        };
        Some((200, resp.to_string()))
    })
}

impl FakeNode {
    fn start(responder: Responder) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (s, r) = (stop.clone(), requests.clone());
        let thread = std::thread::spawn(move || {
            let mut conns = Vec::new();
            while !s.load(Ordering::SeqCst) {
                let mut stream = match listener.accept() {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                };
                let (s, r, responder) = (s.clone(), r.clone(), responder.clone());
                conns.push(std::thread::spawn(move || {
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                    while let Some(body) = read_request(&mut stream) {
                        r.fetch_add(1, Ordering::SeqCst);
                        let Some((status, text)) = responder(&body) else {
                            while !s.load(Ordering::SeqCst) {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            return;
                        };
                        let head = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            text.len()
                        );
                        if stream.write_all(head.as_bytes()).is_err()
                            || stream.write_all(text.as_bytes()).is_err()
                        {
                            return;
                        }
                    }
                }));
            }
            for c in conns {
                let _ = c.join();
            }
        });
        Self {
            url,
            stop,
            requests,
            thread: Some(thread),
        }
    }
}

fn fast() -> ClientConfig {
    ClientConfig {
        timeout: Duration::from_millis(800),
        retries: 2,
        backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
    }
}

fn dump(url: &str, from: u64, to: u64) -> (Result<gigagas_dump::Dump, RpcDumpError>, Duration) {
    dump_with(fast(), url, from, to)
}

/// [`dump`] with a timeout long enough for an answer of a hundred megabytes to arrive on a
/// loaded machine, so that the answer's size, not the clock, ends the call.
fn dump_patient(url: &str, from: u64, to: u64) -> Result<gigagas_dump::Dump, RpcDumpError> {
    let client = ClientConfig {
        timeout: Duration::from_secs(60),
        ..fast()
    };
    dump_with(client, url, from, to).0
}

fn dump_with(
    client: ClientConfig,
    url: &str,
    from: u64,
    to: u64,
) -> (Result<gigagas_dump::Dump, RpcDumpError>, Duration) {
    let opts = DumpOptions {
        client,
        ..DumpOptions::new(url, from, to)
    };
    let start = Instant::now();
    let r = dump_from_rpc(&opts, &mut |_| {});
    (r, start.elapsed())
}

/// A chain with blocks 0..=5 (headers only, no transactions) whose hashes are consistent.
fn headers() -> Vec<(Header, B256)> {
    let mut out: Vec<(Header, B256)> = Vec::new();
    for n in 0..=5u64 {
        let h = Header {
            number: n,
            parent_hash: out.last().map(|(_, h)| *h).unwrap_or_default(),
            gas_limit: 30_000_000,
            timestamp: 1_000 + n,
            base_fee_per_gas: Some(1_000_000_000),
            ..Default::default()
        };
        let hash = h.hash_slow();
        out.push((h, hash));
    }
    out
}

fn block_json(headers: &[(Header, B256)], params: &Value) -> Value {
    let n = u64::from_str_radix(params[0].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    match headers.get(n as usize) {
        Some((h, hash)) => {
            let rpc = alloy_rpc_types_eth::Header {
                hash: *hash,
                inner: h.clone(),
                total_difficulty: None,
                size: None,
            };
            let mut v = serde_json::to_value(rpc).unwrap();
            v["transactions"] = json!([]);
            v["uncles"] = json!([]);
            v
        }
        None => Value::Null,
    }
}

/// Answers a small chain; `state` says what `eth_getBalance` & co. return.
fn chain_handler(state_error: bool) -> impl Fn(&str, &Value) -> Reply + Send + Sync + 'static {
    let headers = headers();
    move |method, params| match method {
        "eth_chainId" => Reply::Result(json!("0x539")),
        "eth_blockNumber" => Reply::Result(json!("0x5")),
        "eth_getBlockByNumber" => Reply::Result(block_json(&headers, params)),
        "eth_getBlockReceipts" => Reply::Result(json!([])),
        "eth_getBalance" | "eth_getTransactionCount" | "eth_getCode" | "eth_getStorageAt"
            if state_error =>
        {
            Reply::Error(
                -32000,
                "missing trie node 0xabc (path ) state 0xdef is not available",
            )
        }
        "eth_getBalance" | "eth_getTransactionCount" => Reply::Result(json!("0x0")),
        "eth_getCode" => Reply::Result(json!("0x")),
        "eth_getStorageAt" => Reply::Result(json!(B256::from(U256::ZERO))),
        _ => Reply::Error(-32601, "the method does not exist/is not available"),
    }
}

#[test]
fn json_rpc_errors_are_reported_at_once_naming_the_call() {
    let node = FakeNode::start(rpc(|_, _| Reply::Error(-32000, "boom")));
    let (r, took) = dump(&node.url, 1, 2);
    let err = r.unwrap_err();
    assert!(
        matches!(err, RpcDumpError::Rpc { code: -32000, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("eth_chainId") && msg.contains("boom"), "{msg}");
    assert!(
        took < Duration::from_secs(2),
        "no retries for an error answer ({took:?})"
    );
    assert_eq!(node.requests.load(Ordering::SeqCst), 1);
}

#[test]
fn a_hanging_node_times_out_within_the_retry_budget() {
    let node = FakeNode::start(Arc::new(|_| None));
    let (r, took) = dump(&node.url, 1, 2);
    let err = r.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RpcDumpError::Transport { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(
        msg.contains("eth_chainId") && msg.contains("timed out"),
        "{msg}"
    );
    // The transport failure is kept as the source, typed.
    assert!(
        matches!(
            &err,
            RpcDumpError::Transport {
                source: TransportError::TimedOut(_) | TransportError::Io(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(std::error::Error::source(&err).is_some());
    assert!(
        matches!(
            err,
            RpcDumpError::Transport {
                kind: gigagas_rpc::TransportKind::TimedOut,
                ..
            }
        ),
        "{err:?}"
    );
    let budget = fast().worst_case();
    assert!(
        took >= Duration::from_millis(3 * 800),
        "three attempts of 800 ms ({took:?})"
    );
    assert!(
        took < budget + Duration::from_secs(2),
        "within the budget {budget:?} ({took:?})"
    );
}

#[test]
fn http_errors_are_retried_then_reported() {
    let node = FakeNode::start(Arc::new(|_| Some((503, "overloaded".to_string()))));
    let (r, took) = dump(&node.url, 1, 2);
    let err = r.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RpcDumpError::Transport { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(msg.contains("eth_chainId") && msg.contains("503"), "{msg}");
    assert!(
        matches!(
            &err,
            RpcDumpError::Transport {
                source: TransportError::Status { status: 503, .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        matches!(
            err,
            RpcDumpError::Transport {
                kind: gigagas_rpc::TransportKind::Other,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(node.requests.load(Ordering::SeqCst), 3);
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn connection_refused_and_bad_urls_are_one_clear_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (r, took) = dump(&format!("http://127.0.0.1:{port}"), 1, 2);
    let err = r.unwrap_err();
    assert!(
        matches!(
            err,
            RpcDumpError::Connect {
                source: TransportError::ConnectionRefused,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("connection refused"), "{err}");
    assert!(
        took < Duration::from_secs(2),
        "refused connections fail fast ({took:?})"
    );

    let (r, _) = dump("127.0.0.1:8545", 1, 2);
    let err = r.unwrap_err();
    assert!(err.to_string().contains("http://"), "{err}");
    assert!(
        matches!(
            err,
            RpcDumpError::Connect {
                source: TransportError::NotHttp,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_node_without_the_blocks_says_so() {
    let node = FakeNode::start(rpc(chain_handler(false)));
    let (r, _) = dump(&node.url, 3, 9);
    let err = r.unwrap_err();
    assert!(
        matches!(
            err,
            RpcDumpError::BlockNotFound {
                number: 6,
                latest: 5
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the node does not have block 6 (its latest block is 5)"
    );
}

#[test]
fn a_node_without_the_state_says_so() {
    let node = FakeNode::start(rpc(chain_handler(true)));
    let (r, _) = dump(&node.url, 3, 5);
    let err = r.unwrap_err();
    assert!(
        matches!(err, RpcDumpError::StateUnavailable { block: 2, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("state at block 2") && msg.contains("missing trie node"),
        "{msg}"
    );
}

#[test]
fn a_range_of_empty_blocks_from_a_fake_node_dumps() {
    // The fake chain has no transactions; its blocks still make a (trivial) dump.
    let node = FakeNode::start(rpc(chain_handler(false)));
    let (r, _) = dump(&node.url, 3, 5);
    let dump = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dump.block_count(), 3);
    assert_eq!(dump.segments[0].block_hashes.len(), 3);
    assert_eq!(dump.meta.provenance["fork"], "London");
    gigagas_executor::test_utils::prepare(dump).unwrap();
}

#[test]
fn a_flaky_limited_node_still_gives_the_same_dump() {
    let Some(node) = common::Node::start(common::Kind::Anvil) else {
        return;
    };
    let (from, to) = {
        let mut d = common::Driver::new(&node);
        let mut c = common::setup(&mut d);
        let from = d.block_number() + 1;
        common::workload(&mut d, &mut c);
        (from, d.block_number())
    };
    let upstream = node.url.clone();
    let count = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let (n, refusals) = (count.clone(), refused.clone());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let proxy = FakeNode::start(Arc::new(move |body| {
        if n.fetch_add(1, Ordering::SeqCst) % 3 == 2 {
            return Some((503, "try again".into()));
        }
        let req: Value = serde_json::from_slice(body).unwrap();
        if req.is_array() {
            refusals.fetch_add(1, Ordering::SeqCst);
            return Some((200, json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": "batches are not supported" } }).to_string()));
        }
        let method = req["method"].as_str().unwrap_or("");
        if method == "eth_getBlockReceipts"
            || method == "eth_config"
            || method.starts_with("debug_")
        {
            refusals.fetch_add(1, Ordering::SeqCst);
            let resp = json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": -32601, "message": format!("the method {method} does not exist/is not available") } });
            return Some((200, resp.to_string()));
        }
        let mut resp = agent
            .post(&upstream)
            .header("content-type", "application/json")
            .send(body)
            .unwrap();
        Some((
            resp.status().as_u16(),
            resp.body_mut().read_to_string().unwrap(),
        ))
    }));

    let retrying = ClientConfig {
        retries: 4,
        backoff: Duration::from_millis(5),
        ..fast()
    };
    let opts = DumpOptions {
        concurrency: std::num::NonZeroUsize::new(2).unwrap(),
        batch_size: 8,
        client: retrying,
        ..DumpOptions::new(proxy.url.clone(), from, to)
    };
    fn last(on_demand: &mut u64) -> impl FnMut(gigagas_rpc::DumpEvent) + '_ {
        move |p| {
            if let gigagas_rpc::DumpEvent::Block { on_demand: n, .. } = p {
                *on_demand = n;
            }
        }
    }
    let (mut flaky_misses, mut direct_misses) = (0, 0);
    let flaky = dump_from_rpc(&opts, &mut last(&mut flaky_misses))
        .unwrap_or_else(|e| panic!("dump through the flaky proxy: {e}"));
    let direct = dump_from_rpc(
        &DumpOptions {
            url: node.url.clone(),
            ..opts
        },
        &mut last(&mut direct_misses),
    )
    .unwrap();
    eprintln!(
        "reads not prefetched: {flaky_misses} through the proxy (access lists), {direct_misses} direct (traces)"
    );
    assert!(refused.load(Ordering::SeqCst) > 0 && count.load(Ordering::SeqCst) > 10);
    assert_eq!(flaky.meta.provenance["fork"], "Prague");
    assert_eq!(flaky.meta.provenance["fork-source"], "header fields");
    assert_eq!(flaky.meta.chain.forks, direct.meta.chain.forks);
    assert_eq!(
        // The blocks with their access lists, and the pre-state.
        (&flaky.segments[0].blocks, &flaky.segments[0].pre_state),
        (&direct.segments[0].blocks, &direct.segments[0].pre_state)
    );
    assert_eq!(
        flaky.segments[0].block_hashes,
        direct.segments[0].block_hashes
    );
}

#[path = "../../../dumps/test-data/corpora.rs"]
mod corpora;

/// An Amsterdam fixture of execution-spec-tests (`eest/amsterdam-bal`), one test whose block
/// revm re-executes to the fixture's gas, receipts and access list.
const AMSTERDAM_FIXTURE: &str =
    "eest/amsterdam-bal/block_access_lists/bal_aborted_account_access.json";
const AMSTERDAM_TEST: &str = "tests/amsterdam/eip7928_block_level_access_lists/test_block_access_lists.py::test_bal_aborted_account_access[fork_Amsterdam-blockchain_test-invalid-balance]";

/// A recorded Amsterdam node: the answers a node of that chain would give, built from the
/// fixture (its genesis and block 1 with the header's `blockAccessListHash`, the block's
/// receipts, the pre-state at block 0). No node on this machine supports Amsterdam (anvil
/// and geth --dev stop at Osaka), so this is a fake node serving recorded data, not a live
/// Amsterdam node. `header` edits block 1's header before it is served (rehashed).
fn amsterdam_node(
    header: impl Fn(&mut Header),
) -> (FakeNode, Header, alloy_eip7928::BlockAccessList) {
    use alloy_consensus::{Block, TxEnvelope, transaction::SignerRecoverable};
    use alloy_rlp::Decodable;
    let text = std::fs::read_to_string(corpora::path(AMSTERDAM_FIXTURE))
        .unwrap_or_else(|e| panic!("{AMSTERDAM_FIXTURE}: {e}"));
    let file: Value = serde_json::from_str(&text).unwrap();
    let test = file[AMSTERDAM_TEST].clone();
    let rlp = |v: &Value| alloy_primitives::hex::decode(v.as_str().unwrap()).unwrap();
    let genesis = Block::<TxEnvelope>::decode(&mut rlp(&test["genesisRLP"]).as_slice())
        .unwrap()
        .header;
    let block =
        Block::<TxEnvelope>::decode(&mut rlp(&test["blocks"][0]["rlp"]).as_slice()).unwrap();
    let mut h = block.header.clone();
    header(&mut h);
    let hash = h.hash_slow();
    let served = h.clone();
    let txs: Vec<alloy_rpc_types_eth::Transaction> = block
        .body
        .transactions
        .iter()
        .enumerate()
        .map(|(i, tx)| alloy_rpc_types_eth::Transaction {
            inner: alloy_consensus::transaction::Recovered::new_unchecked(
                tx.clone(),
                tx.recover_signer().unwrap(),
            ),
            block_hash: Some(hash),
            block_number: Some(1),
            transaction_index: Some(i as u64),
            effective_gas_price: None,
            block_timestamp: Some(h.timestamp),
        })
        .collect();
    let as_json = |header: &Header, txs: Vec<alloy_rpc_types_eth::Transaction>| {
        serde_json::to_value(alloy_rpc_types_eth::Block {
            header: alloy_rpc_types_eth::Header {
                hash: header.hash_slow(),
                inner: header.clone(),
                total_difficulty: None,
                size: None,
            },
            uncles: vec![],
            transactions: alloy_rpc_types_eth::BlockTransactions::Full(txs),
            withdrawals: Some(Default::default()),
        })
        .unwrap()
    };
    let blocks = [as_json(&genesis, vec![]), as_json(&h, txs)];
    // The fixture's receipts, as eth_getBlockReceipts answers them.
    let mut previous = 0u64;
    let receipts: Vec<Value> = test["blocks"][0]["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let cumulative = u64::from_str_radix(
                r["cumulativeGasUsed"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("0x"),
                16,
            )
            .unwrap();
            let gas = cumulative - previous;
            previous = cumulative;
            json!({
                "transactionHash": r["transactionHash"],
                "status": if r["status"].as_bool().unwrap() { "0x1" } else { "0x0" },
                "gasUsed": format!("{gas:#x}"),
                "cumulativeGasUsed": format!("{cumulative:#x}"),
                "logs": r["logs"],
            })
        })
        .collect();
    let pre = test["pre"].as_object().unwrap().clone();
    let account = move |params: &Value, field: &str, default: &str| -> Value {
        assert_eq!(
            params[1],
            json!("0x0"),
            "state is read at the parent of block 1"
        );
        let a = params[0].as_str().unwrap().to_lowercase();
        let found = pre
            .iter()
            .find(|(k, _)| k.to_lowercase() == a)
            .map(|(_, v)| v);
        found.map(|v| v[field].clone()).unwrap_or(json!(default))
    };
    let pre_slots = test["pre"].as_object().unwrap().clone();
    let storage = move |params: &Value| -> Value {
        assert_eq!(
            params[2],
            json!("0x0"),
            "state is read at the parent of block 1"
        );
        let a = params[0].as_str().unwrap().to_lowercase();
        let slot: U256 = params[1].as_str().unwrap().parse().unwrap();
        let value = pre_slots
            .iter()
            .find(|(k, _)| k.to_lowercase() == a)
            .and_then(|(_, v)| {
                v["storage"].as_object().unwrap().iter().find_map(|(k, v)| {
                    (k.parse::<U256>().unwrap() == slot)
                        .then(|| v.as_str().unwrap().parse::<U256>().unwrap())
                })
            })
            .unwrap_or_default();
        json!(B256::from(value))
    };
    let node = FakeNode::start(rpc(move |method, params| {
        let number = || {
            u64::from_str_radix(params[0].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
        };
        match method {
            "eth_chainId" => Reply::Result(json!("0x1")),
            "eth_blockNumber" => Reply::Result(json!("0x1")),
            "web3_clientVersion" => Reply::Result(json!("recorded Amsterdam fixture (fake node)")),
            "eth_getBlockByNumber" => Reply::Result(
                blocks
                    .get(number() as usize)
                    .cloned()
                    .unwrap_or(Value::Null),
            ),
            "eth_getBlockReceipts" if number() == 1 => Reply::Result(json!(receipts)),
            "eth_getBalance" => Reply::Result(account(params, "balance", "0x0")),
            "eth_getTransactionCount" => Reply::Result(account(params, "nonce", "0x0")),
            "eth_getCode" => Reply::Result(account(params, "code", "0x")),
            "eth_getStorageAt" => Reply::Result(storage(params)),
            _ => Reply::Error(-32601, "the method does not exist/is not available"),
        }
    }));
    let bal = serde_json::from_value(test["blocks"][0]["blockAccessList"].clone()).unwrap();
    (node, served, bal)
}

fn dump_amsterdam(url: &str) -> Result<gigagas_dump::Dump, RpcDumpError> {
    let opts = DumpOptions {
        client: fast(),
        // Chain id 1 is mainnet's, whose schedule has no Amsterdam yet: the fork is named.
        fork: Some(alloy_hardforks::EthereumHardfork::Amsterdam),
        ..DumpOptions::new(url, 1, 1)
    };
    dump_from_rpc(&opts, &mut |_| {})
}

/// The dumper compares the access list it builds with the header's `blockAccessListHash`:
/// on a recorded Amsterdam node (see [`amsterdam_node`]) the dump's list hashes to the
/// header's (without alloy-evm's two untouched EIP-8282 entries, which that devnet does
/// not make), equals the fixture's, and replays verified.
#[test]
fn an_amsterdam_block_access_list_matches_the_header_hash() {
    let (node, header, fixture_bal) = amsterdam_node(|_| {});
    let dump = dump_amsterdam(&node.url).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dump.block_count(), 1);
    let bal = &dump.block(0).unwrap().access_list;
    let without = gigagas_record::without_eip8282_touches(bal, None);
    assert_eq!(
        Some(alloy_eip7928::compute_block_access_list_hash(&without)),
        header.block_access_list_hash
    );
    assert_eq!(without, fixture_bal, "the fixture's list, entry by entry");
    assert_eq!(bal.len(), without.len() + 2, "the two EIP-8282 touches");
    common::replay_and_verify(&dump);
}

/// The same node with another `blockAccessListHash` in the header: one line naming the
/// block and both hashes.
#[test]
fn an_amsterdam_header_with_another_access_list_hash_fails() {
    let other = B256::repeat_byte(0x42);
    let (node, _, _) = amsterdam_node(|h| h.block_access_list_hash = Some(other));
    let err = dump_amsterdam(&node.url).unwrap_err();
    assert!(
        matches!(
            &err,
            RpcDumpError::Divergence { block: 1, tx: None, what }
                if matches!(**what, Difference::AccessListHash(hashes)
                    if hashes.expected == other && hashes.got != other)
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        msg.starts_with("block 1: block access list hash differs: node ")
            && msg.contains(&other.to_string()),
        "{msg}"
    );
}

/// An answer past [`MAX_RESPONSE_BYTES`] (here to `eth_chainId`, the first call) is one
/// error naming the method and the cap, not an allocation that aborts the process; it is
/// not retried (the node would only send it again).
#[test]
fn a_huge_answer_is_refused_naming_the_method_and_the_cap() {
    let huge = Arc::new(format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":"0x{}"}}"#,
        "0".repeat(MAX_RESPONSE_BYTES as usize + 1024)
    ));
    let node = FakeNode::start(Arc::new(move |_| Some((200, huge.to_string()))));
    let err = dump_patient(&node.url, 1, 2).unwrap_err();
    assert!(
        matches!(err, RpcDumpError::Transport { attempts: 1, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("eth_chainId")
            && msg.contains(&MAX_RESPONSE_BYTES.to_string())
            && msg.contains("MAX_RESPONSE_BYTES"),
        "{msg}"
    );
    assert_eq!(node.requests.load(Ordering::SeqCst), 1);
}

/// An answer within the byte cap that would parse into more than [`MAX_RESPONSE_VALUES`]
/// values (`[0,0,0,…]`: 2 bytes each in JSON, tens as parsed values) is refused before
/// parsing, naming the method and the cap.
#[test]
fn an_answer_of_too_many_values_is_refused_before_parsing() {
    let many = Arc::new(format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":[{}0]}}"#,
        "0,".repeat(MAX_RESPONSE_VALUES)
    ));
    let node = FakeNode::start(Arc::new(move |_| Some((200, many.to_string()))));
    let err = dump_patient(&node.url, 1, 2).unwrap_err();
    assert!(
        matches!(err, RpcDumpError::Transport { attempts: 1, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("eth_chainId") && msg.contains("MAX_RESPONSE_VALUES"),
        "{msg}"
    );
}
