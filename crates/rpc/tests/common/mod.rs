//! Shared test helpers: local nodes (anvil, geth --dev) on 127.0.0.1 with a free port,
//! killed on drop, and a workload driver that sends a realistic mix of transactions.
//!
//! Binaries: `GIGAGAS_ANVIL` / `GIGAGAS_GETH`, else the places `.ci/install-nodes.sh`
//! installs them, else `PATH`. Missing with `CI` set: the test fails; missing locally: the
//! test is skipped with a printed reason.

#![allow(dead_code)]

use alloy_consensus::{SignableTransaction, TxEip1559, TxEip2930, TxEip7702, TxEnvelope};
use alloy_eips::{
    eip2718::Encodable2718,
    eip2930::{AccessList, AccessListItem},
    eip7702::Authorization,
};
use alloy_primitives::{Address, B256, Bytes, TxKind, U256, hex, keccak256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{SolCall, SolValue};
use gigagas_dump::Dump;
use gigagas_executor::{
    SchedulerKind,
    test_utils::{self, Point},
};
use gigagas_rpc::{ClientConfig, RpcClient};
use gigagas_workload::contracts::{self, ICompute, INft, IPair, IPrecompiles, IToken};
use serde_json::{Value, json};
use std::{
    net::TcpListener,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// Which node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Anvil,
    Geth,
}

fn exists(p: &std::path::Path) -> bool {
    p.is_file()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| exists(p))
    })
}

/// Where the node binary is, or `None` (after failing in CI or printing why it is skipped).
pub(crate) fn binary(kind: Kind) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let (var, candidates) = match kind {
        Kind::Anvil => {
            let cache = std::env::var_os("GIGAGAS_NODES_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".cache/gigagas-nodes"));
            (
                "GIGAGAS_ANVIL",
                vec![cache.join("node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil")],
            )
        }
        Kind::Geth => {
            let mut c = Vec::new();
            if let Ok(out) = Command::new("go").args(["env", "GOPATH"]).output() {
                let gopath = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if !gopath.is_empty() {
                    c.push(PathBuf::from(gopath).join("bin/geth"));
                }
            }
            c.push(home.join("go/bin/geth"));
            ("GIGAGAS_GETH", c)
        }
    };
    let name = match kind {
        Kind::Anvil => "anvil",
        Kind::Geth => "geth",
    };
    let found = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| exists(p))
        .or_else(|| candidates.into_iter().find(|p| exists(p)))
        .or_else(|| on_path(name));
    if found.is_none() {
        let msg = format!("{name} not found (set {var} or run .ci/install-nodes.sh)");
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
    }
    found
}

/// A free TCP port on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .unwrap()
        .port()
}

/// A running node, killed on drop.
pub(crate) struct Node {
    pub kind: Kind,
    pub url: String,
    child: Child,
    _dir: tempfile::TempDir,
    pub log: PathBuf,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    /// Start a node (anvil with on-demand mining and Prague rules; geth --dev with 1 s
    /// blocks and the `dev` API for withdrawals) on 127.0.0.1; `None` if the binary is
    /// missing outside CI.
    pub(crate) fn start(kind: Kind) -> Option<Node> {
        Self::start_with(kind, "prague")
    }

    /// Like [`Node::start`], with anvil's `--hardfork` (geth --dev runs its own latest fork).
    pub(crate) fn start_with(kind: Kind, anvil_fork: &str) -> Option<Node> {
        let bin = binary(kind)?;
        for _attempt in 0..3 {
            let dir = tempfile::tempdir().expect("temp dir");
            let log = dir.path().join("node.log");
            let port = free_port();
            let mut cmd = Command::new(&bin);
            match kind {
                Kind::Anvil => {
                    cmd.args([
                        "--host",
                        "127.0.0.1",
                        "--port",
                        &port.to_string(),
                        "--no-mining",
                        "--order",
                        "fifo",
                    ]);
                    cmd.args(["--hardfork", anvil_fork]);
                }
                Kind::Geth => {
                    cmd.args([
                        "--dev",
                        "--dev.period",
                        "1",
                        "--http",
                        "--http.addr",
                        "127.0.0.1",
                    ]);
                    cmd.args([
                        "--http.port",
                        &port.to_string(),
                        "--http.api",
                        "eth,debug,net,web3,dev",
                    ]);
                    cmd.args([
                        "--ipcdisable",
                        "--nodiscover",
                        "--maxpeers",
                        "0",
                        "--port",
                        "0",
                        "--authrpc.port",
                        "0",
                    ]);
                    cmd.args(["--datadir", dir.path().join("data").to_str().unwrap()]);
                }
            }
            let out = std::fs::File::create(&log).expect("log file");
            cmd.stdout(Stdio::from(out.try_clone().unwrap()))
                .stderr(Stdio::from(out))
                .stdin(Stdio::null());
            let child = cmd.spawn().expect("start node");
            let mut node = Node {
                kind,
                url: format!("http://127.0.0.1:{port}"),
                child,
                _dir: dir,
                log,
            };
            let client = RpcClient::new(&node.url, quick()).unwrap();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(60) {
                if let Ok(Some(_)) = node.child.try_wait() {
                    break;
                }
                if client.call_value("eth_chainId", json!([])).is_ok() {
                    return Some(node);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            let text = std::fs::read_to_string(&node.log).unwrap_or_default();
            eprintln!(
                "{kind:?} did not come up on port {port}; log tail:\n{}",
                tail(&text, 2000)
            );
        }
        panic!("{kind:?} did not start in three attempts");
    }

    pub(crate) fn client(&self) -> RpcClient {
        RpcClient::new(
            &self.url,
            ClientConfig {
                timeout: Duration::from_secs(60),
                ..ClientConfig::default()
            },
        )
        .unwrap()
    }
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Client settings for polling.
pub(crate) fn quick() -> ClientConfig {
    ClientConfig {
        timeout: Duration::from_secs(5),
        retries: 0,
        ..ClientConfig::default()
    }
}

fn hexq(v: u64) -> String {
    format!("{v:#x}")
}

fn parse_u64(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().expect("hex string").trim_start_matches("0x"), 16)
        .expect("hex quantity")
}

/// A local key that signs raw transactions.
pub(crate) struct User {
    pub signer: PrivateKeySigner,
    pub address: Address,
    pub nonce: u64,
}

impl User {
    fn new(tag: &str) -> Self {
        let signer = PrivateKeySigner::from_bytes(&keccak256(tag.as_bytes())).expect("valid key");
        Self {
            address: signer.address(),
            signer,
            nonce: 0,
        }
    }
}

/// Drives a node: sends transactions, mines, waits for receipts.
pub(crate) struct Driver<'a> {
    pub node: &'a Node,
    pub rpc: RpcClient,
    pub dev: Address,
    pub chain_id: u64,
    pending: Vec<B256>,
    pub receipts: Vec<Value>,
}

const GWEI: u128 = 1_000_000_000;

impl<'a> Driver<'a> {
    pub(crate) fn new(node: &'a Node) -> Self {
        let rpc = node.client();
        let accounts: Vec<Address> = rpc.call("eth_accounts", json!([])).unwrap();
        let chain_id = parse_u64(&rpc.call_value("eth_chainId", json!([])).unwrap());
        Self {
            node,
            rpc,
            dev: accounts[0],
            chain_id,
            pending: Vec::new(),
            receipts: Vec::new(),
        }
    }

    /// Whether the chain runs Prague or later (EIP-7702 available).
    pub(crate) fn prague(&self) -> bool {
        let b = self
            .rpc
            .call_value("eth_getBlockByNumber", json!(["latest", false]))
            .unwrap();
        b.get("requestsHash").is_some_and(|h| !h.is_null())
    }

    pub(crate) fn block_number(&self) -> u64 {
        parse_u64(&self.rpc.call_value("eth_blockNumber", json!([])).unwrap())
    }

    /// `eth_sendTransaction` from the dev account with an explicit gas limit.
    pub(crate) fn send(
        &mut self,
        to: Option<Address>,
        value: U256,
        data: Bytes,
        gas: u64,
        extra: Value,
    ) -> B256 {
        let mut tx = json!({ "from": self.dev, "value": value, "data": data, "gas": hexq(gas) });
        if let Some(to) = to {
            tx["to"] = json!(to);
        }
        if let Value::Object(m) = extra {
            for (k, v) in m {
                tx[k] = v;
            }
        }
        let h: B256 = self
            .rpc
            .call("eth_sendTransaction", json!([tx]))
            .unwrap_or_else(|e| panic!("send {tx}: {e}"));
        self.pending.push(h);
        h
    }

    pub(crate) fn call(&mut self, to: Address, data: Vec<u8>, gas: u64) -> B256 {
        self.send(Some(to), U256::ZERO, data.into(), gas, json!({}))
    }

    /// Send a signed transaction.
    pub(crate) fn send_raw(&mut self, tx: TxEnvelope) -> B256 {
        let raw = Bytes::from(tx.encoded_2718());
        let h: B256 = self
            .rpc
            .call("eth_sendRawTransaction", json!([raw]))
            .unwrap_or_else(|e| panic!("send raw: {e}"));
        self.pending.push(h);
        h
    }

    /// A signed EIP-1559 transaction from a local key.
    pub(crate) fn send_1559(
        &mut self,
        user: &mut User,
        to: TxKind,
        value: U256,
        input: Bytes,
        gas: u64,
    ) -> B256 {
        let tx = TxEip1559 {
            chain_id: self.chain_id,
            nonce: user.nonce,
            gas_limit: gas,
            max_fee_per_gas: 200 * GWEI,
            max_priority_fee_per_gas: 2 * GWEI,
            to,
            value,
            access_list: Default::default(),
            input,
        };
        user.nonce += 1;
        let sig = user.signer.sign_hash_sync(&tx.signature_hash()).unwrap();
        self.send_raw(tx.into_signed(sig).into())
    }

    /// Mine until every pending transaction has a receipt.
    pub(crate) fn flush(&mut self) -> Vec<Value> {
        let start = Instant::now();
        let mut got = Vec::new();
        let mut waiting = std::mem::take(&mut self.pending);
        while !waiting.is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "transactions not mined: {waiting:?}"
            );
            if self.node.kind == Kind::Anvil {
                self.rpc.call_value("evm_mine", json!([])).unwrap();
            } else {
                std::thread::sleep(Duration::from_millis(300));
            }
            let mut still = Vec::new();
            for h in waiting {
                let r = self
                    .rpc
                    .call_value("eth_getTransactionReceipt", json!([h]))
                    .unwrap();
                if r.is_null() {
                    still.push(h);
                } else {
                    got.push(r);
                }
            }
            waiting = still;
        }
        self.receipts.extend(got.iter().cloned());
        got
    }

    fn created(receipts: &[Value], tx: B256) -> Address {
        let r = receipts
            .iter()
            .find(|r| r["transactionHash"] == json!(tx))
            .expect("receipt of the creation");
        assert_eq!(r["status"], json!("0x1"), "creation failed: {r}");
        serde_json::from_value(r["contractAddress"].clone()).expect("contract address")
    }
}

/// Addresses of the deployed contracts.
pub(crate) struct Deployed {
    pub token_a: Address,
    pub token_b: Address,
    pub pair: Address,
    pub nft: Address,
    pub compute: Address,
    pub precompiles: Address,
    pub users: Vec<User>,
}

/// `PUSH2 0x33ff PUSH1 0 MSTORE PUSH1 2 PUSH1 30 RETURN`: deploys runtime `CALLER SELFDESTRUCT`.
pub(crate) const SELFDESTRUCT_INIT: &str = "6133ff6000526002601ef3";
/// `CALLER SELFDESTRUCT` as init code: created and destroyed in one transaction.
pub(crate) const DESTROY_IN_CONSTRUCTOR: &str = "33ff";

/// Deploy and initialise the contracts, fund three local keys. Runs before the dumped range.
pub(crate) fn setup(d: &mut Driver<'_>) -> Deployed {
    let ta = d.send(
        None,
        U256::ZERO,
        contracts::token_creation(),
        3_000_000,
        json!({}),
    );
    let tb = d.send(
        None,
        U256::ZERO,
        contracts::token_creation(),
        3_000_000,
        json!({}),
    );
    let nft = d.send(
        None,
        U256::ZERO,
        contracts::nft_creation(),
        3_000_000,
        json!({}),
    );
    let compute = d.send(
        None,
        U256::ZERO,
        contracts::compute_creation(),
        3_000_000,
        json!({}),
    );
    let pre = d.send(
        None,
        U256::ZERO,
        contracts::precompiles_creation(),
        3_000_000,
        json!({}),
    );
    let r = d.flush();
    let token_a = Driver::created(&r, ta);
    let token_b = Driver::created(&r, tb);
    let pair_code: Bytes = [
        contracts::pair_creation().as_ref(),
        &(token_a, token_b).abi_encode_params(),
    ]
    .concat()
    .into();
    let p = d.send(None, U256::ZERO, pair_code, 3_000_000, json!({}));
    let users: Vec<User> = (0..3)
        .map(|i| User::new(&format!("gigagas-rpc-test-user-{i}")))
        .collect();
    let liquidity = U256::from(10u128.pow(24));
    for token in [token_a, token_b] {
        d.call(
            token,
            IToken::mintCall {
                to: d.dev,
                amount: liquidity * U256::from(2),
            }
            .abi_encode(),
            200_000,
        );
        for u in &users {
            d.call(
                token,
                IToken::mintCall {
                    to: u.address,
                    amount: liquidity,
                }
                .abi_encode(),
                200_000,
            );
        }
    }
    for u in &users {
        d.send(
            Some(u.address),
            U256::from(100u128 * 10u128.pow(18)),
            Bytes::new(),
            21_000,
            json!({}),
        );
    }
    let r2 = d.flush();
    let pair = Driver::created(&r2, p);
    for token in [token_a, token_b] {
        d.call(
            token,
            IToken::approveCall {
                spender: pair,
                amount: U256::MAX,
            }
            .abi_encode(),
            100_000,
        );
    }
    d.flush();
    d.call(
        pair,
        IPair::addLiquidityCall {
            a0: liquidity,
            a1: liquidity,
        }
        .abi_encode(),
        500_000,
    );
    d.flush();
    let mut users = users;
    // Users approve the pair (signed locally).
    for u in users.iter_mut() {
        for token in [token_a, token_b] {
            let data = IToken::approveCall {
                spender: pair,
                amount: U256::MAX,
            }
            .abi_encode();
            d.send_1559(u, TxKind::Call(token), U256::ZERO, data.into(), 100_000);
        }
    }
    let r3 = d.flush();
    for r in &r3 {
        assert_eq!(r["status"], json!("0x1"), "setup transaction failed: {r}");
    }
    Deployed {
        token_a,
        token_b,
        pair,
        nft: Driver::created(&r, nft),
        compute: Driver::created(&r, compute),
        precompiles: Driver::created(&r, pre),
        users,
    }
}

/// The dumped range: a realistic mix over several blocks. Returns the hashes of the
/// transactions that must revert.
pub(crate) fn workload(d: &mut Driver<'_>, c: &mut Deployed) -> Vec<B256> {
    let mut reverts = Vec::new();
    let fresh = |i: u64| Address::from_word(keccak256(format!("fresh-{i}").as_bytes()));
    let geth = d.node.kind == Kind::Geth;

    // Block 1: transfers of every transaction type, ERC-20, swaps, NFT, a deployment, a revert.
    d.send(
        Some(fresh(1)),
        U256::from(10u64.pow(15)),
        Bytes::new(),
        21_000,
        json!({}),
    ); // 1559 by default
    d.send(
        Some(fresh(2)),
        U256::from(10u64.pow(15)),
        Bytes::new(),
        21_000,
        json!({ "gasPrice": hexq(5 * GWEI as u64) }),
    ); // legacy
    d.send(
        Some(c.users[0].address),
        U256::from(7u64),
        Bytes::new(),
        21_000,
        json!({ "maxFeePerGas": hexq(50 * GWEI as u64), "maxPriorityFeePerGas": hexq(GWEI as u64) }),
    );
    let (u0, rest) = c.users.split_at_mut(1);
    let (u1, u2) = rest.split_at_mut(1);
    let (u0, u1, u2) = (&mut u0[0], &mut u1[0], &mut u2[0]);
    let (a0, a1, a2) = (u0.address, u1.address, u2.address);
    for (u, to) in [(&mut *u0, a1), (&mut *u1, a2), (&mut *u2, a0)] {
        let data = IToken::transferCall {
            to,
            amount: U256::from(10u64.pow(18)),
        }
        .abi_encode();
        d.send_1559(u, TxKind::Call(c.token_a), U256::ZERO, data.into(), 100_000);
    }
    // EIP-2930, signed locally (nodes pick their own type for eth_sendTransaction).
    let tx = TxEip2930 {
        chain_id: d.chain_id,
        nonce: u0.nonce,
        gas_price: 5 * GWEI,
        gas_limit: 120_000,
        to: TxKind::Call(c.token_a),
        value: U256::ZERO,
        access_list: AccessList(vec![AccessListItem {
            address: c.token_a,
            storage_keys: vec![B256::ZERO],
        }]),
        input: IToken::transferCall {
            to: fresh(3),
            amount: U256::from(5u64),
        }
        .abi_encode()
        .into(),
    };
    u0.nonce += 1;
    let sig = u0.signer.sign_hash_sync(&tx.signature_hash()).unwrap();
    d.send_raw(tx.into_signed(sig).into());
    let swap = |amount: u64, dir: bool| {
        IPair::swapCall {
            amountIn: U256::from(amount),
            zeroForOne: dir,
            minOut: U256::ZERO,
        }
        .abi_encode()
    };
    d.send_1559(
        u0,
        TxKind::Call(c.pair),
        U256::ZERO,
        swap(10u64.pow(18), true).into(),
        300_000,
    );
    d.send_1559(
        u1,
        TxKind::Call(c.pair),
        U256::ZERO,
        swap(3 * 10u64.pow(18), false).into(),
        300_000,
    );
    d.send_1559(
        u2,
        TxKind::Call(c.nft),
        U256::ZERO,
        INft::mintCall {
            count: U256::from(3),
        }
        .abi_encode()
        .into(),
        700_000,
    );
    d.send(
        None,
        U256::ZERO,
        contracts::token_creation(),
        3_000_000,
        json!({}),
    );
    // Reverts: transfer more tokens than the sender has.
    let too_much = IToken::transferCall {
        to: fresh(4),
        amount: U256::MAX,
    }
    .abi_encode();
    reverts.push(d.send_1559(
        u2,
        TxKind::Call(c.token_b),
        U256::ZERO,
        too_much.into(),
        100_000,
    ));
    d.flush();
    if geth {
        // A withdrawal (geth's dev API), to exercise post-block balance changes.
        let _ = d.rpc.call_value(
            "dev_addWithdrawal",
            json!([{ "index": "0x0", "validatorIndex": "0x5", "address": fresh(9), "amount": "0x3b9aca00" }]),
        );
        let _ = d.rpc.call_value("dev_setFeeRecipient", json!([fresh(10)]));
    }

    // Block 2: compute and precompiles, self-destructs.
    d.call(
        c.compute,
        ICompute::keccakLoopCall {
            rounds: U256::from(300),
        }
        .abi_encode(),
        500_000,
    );
    d.call(
        c.compute,
        ICompute::memoryHeavyCall {
            words: U256::from(500),
        }
        .abi_encode(),
        500_000,
    );
    d.call(
        c.compute,
        ICompute::arithLoopCall {
            rounds: U256::from(200),
        }
        .abi_encode(),
        500_000,
    );
    d.call(
        c.compute,
        ICompute::storeLoopCall {
            slots: U256::from(4),
        }
        .abi_encode(),
        500_000,
    );
    d.call(
        c.precompiles,
        IPrecompiles::ecrecoverLoopCall { n: U256::from(3) }.abi_encode(),
        300_000,
    );
    d.call(
        c.precompiles,
        IPrecompiles::sha256LoopCall { n: U256::from(20) }.abi_encode(),
        300_000,
    );
    d.call(
        c.precompiles,
        IPrecompiles::modexpCallCall { n: U256::from(3) }.abi_encode(),
        300_000,
    );
    d.call(
        c.precompiles,
        IPrecompiles::pairingCall { n: U256::from(1) }.abi_encode(),
        400_000,
    );
    d.call(
        c.precompiles,
        IPrecompiles::pointEvaluationCall {
            input: contracts::point_evaluation_input(),
        }
        .abi_encode(),
        300_000,
    );
    // Precompiles called directly: BLS12-381 G1ADD of two points at infinity (Prague),
    // P256VERIFY of a bad signature (Osaka); before those forks, calls of empty accounts.
    d.call(Address::with_last_byte(0x0b), vec![0u8; 256], 100_000);
    d.call(
        Address::left_padding_from(&[0x01, 0x00]),
        vec![0u8; 160],
        100_000,
    );
    // Calldata-heavy with no execution: EIP-7623's floor price decides the gas (Prague).
    d.send(
        Some(fresh(5)),
        U256::ZERO,
        vec![0xab; 4000].into(),
        300_000,
        json!({}),
    );
    // Out of gas: fails, all gas used.
    reverts.push(
        d.call(
            c.compute,
            ICompute::keccakLoopCall {
                rounds: U256::from(10_000),
            }
            .abi_encode(),
            60_000,
        ),
    );
    let sd = d.send(
        None,
        U256::from(10u64.pow(16)),
        hex::decode(SELFDESTRUCT_INIT).unwrap().into(),
        200_000,
        json!({}),
    );
    d.send(
        None,
        U256::from(10u64.pow(16)),
        hex::decode(DESTROY_IN_CONSTRUCTOR).unwrap().into(),
        200_000,
        json!({}),
    );
    let r = d.flush();
    let destructible = Driver::created(&r, sd);

    // Block 3: self-destruct of a contract from an earlier block, EIP-7702 delegation,
    // more token traffic on the same slots.
    d.call(destructible, Vec::new(), 100_000);
    let prague = d.prague();
    if prague {
        let auth = Authorization {
            chain_id: U256::from(d.chain_id),
            address: c.compute,
            nonce: u1.nonce + 1,
        };
        let sig = u1.signer.sign_hash_sync(&auth.signature_hash()).unwrap();
        let tx = TxEip7702 {
            chain_id: d.chain_id,
            nonce: u1.nonce,
            gas_limit: 200_000,
            max_fee_per_gas: 200 * GWEI,
            max_priority_fee_per_gas: 2 * GWEI,
            to: a0,
            value: U256::from(1u64),
            access_list: Default::default(),
            authorization_list: vec![auth.into_signed(sig)],
            input: Bytes::new(),
        };
        u1.nonce += 2; // the transaction and the authorization
        let sig = u1.signer.sign_hash_sync(&tx.signature_hash()).unwrap();
        d.send_raw(tx.into_signed(sig).into());
    }
    for (u, to) in [(&mut *u0, a2), (&mut *u2, a1)] {
        let data = IToken::transferCall {
            to,
            amount: U256::from(10u64.pow(17)),
        }
        .abi_encode();
        d.send_1559(u, TxKind::Call(c.token_a), U256::ZERO, data.into(), 100_000);
    }
    d.send_1559(
        u0,
        TxKind::Call(c.pair),
        U256::ZERO,
        swap(2 * 10u64.pow(18), true).into(),
        300_000,
    );
    d.flush();

    if prague {
        // Block 4: call the delegated account (Compute's code in u1's storage), pay it.
        d.call(
            a1,
            ICompute::storeLoopCall {
                slots: U256::from(2),
            }
            .abi_encode(),
            300_000,
        );
        d.call(
            a1,
            ICompute::keccakLoopCall {
                rounds: U256::from(10),
            }
            .abi_encode(),
            300_000,
        );
        // Compute has no payable fallback: paying the delegated account reverts.
        reverts.push(d.send_1559(
            u2,
            TxKind::Call(a1),
            U256::from(5u64),
            Bytes::new(),
            100_000,
        ));
    } else {
        d.call(
            c.compute,
            ICompute::storeLoopCall {
                slots: U256::from(2),
            }
            .abi_encode(),
            300_000,
        );
    }
    d.flush();
    reverts
}

/// Every receipt of the range succeeded except the expected reverts.
pub(crate) fn check_statuses(d: &Driver<'_>, first_range_receipt: usize, reverts: &[B256]) {
    for r in &d.receipts[first_range_receipt..] {
        let h: B256 = serde_json::from_value(r["transactionHash"].clone()).unwrap();
        let expect = if reverts.contains(&h) { "0x0" } else { "0x1" };
        assert_eq!(r["status"], json!(expect), "unexpected status: {r}");
    }
}

/// Replay a dump with gigagas-executor ([`test_utils::replay_and_verify`]): sequential
/// recovering senders, then 2 threads with every scheduler (batch 1 and all blocks in one
/// batch), all verified.
pub(crate) fn replay_and_verify(dump: &Dump) {
    let points = test_utils::grid(&[2], &[1, dump.block_count()], &SchedulerKind::ALL)
        .into_iter()
        .map(Point::Bal);
    test_utils::replay_and_verify(
        dump.clone(),
        std::iter::once(Point::Sequential(test_utils::RECOVER_SENDERS)).chain(points),
    )
    .unwrap_or_else(|e| panic!("the dump does not replay: {e}"));
}

/// The dump's end state (pre-state advanced by every block access list's last writes)
/// equals the node's state at the last block, for every account and slot the lists name:
/// a check of every write revm made, not only of gas and status.
pub(crate) fn check_final_state(dump: &Dump, rpc: &RpcClient) {
    use std::collections::BTreeMap;
    let codes: BTreeMap<B256, Bytes> = dump.segments[0].pre_state.codes.iter().cloned().collect();
    let mut accounts: BTreeMap<Address, (U256, u64, Bytes)> = dump.segments[0]
        .pre_state
        .accounts
        .iter()
        .map(|a| {
            let v = a.state.map(|s| {
                (
                    s.balance,
                    s.nonce,
                    codes.get(&s.code_hash).cloned().unwrap_or_default(),
                )
            });
            (a.address, v.unwrap_or_default())
        })
        .collect();
    let mut slots: BTreeMap<(Address, U256), U256> = dump.segments[0]
        .pre_state
        .storage
        .iter()
        .map(|s| ((s.address, s.slot), s.value))
        .collect();
    for bal in dump.blocks().map(|b| &b.access_list) {
        for a in bal.iter() {
            let acc = accounts.entry(a.address).or_default();
            if let Some(c) = a.balance_changes.last() {
                acc.0 = c.post_balance;
            }
            if let Some(c) = a.nonce_changes.last() {
                acc.1 = c.new_nonce;
            }
            if let Some(c) = a.code_changes.last() {
                acc.2 = c.new_code.clone();
            }
            for s in &a.storage_changes {
                if let Some(c) = s.changes.last() {
                    slots.insert((a.address, s.slot), c.new_value);
                }
            }
        }
    }
    let tag = format!("{:#x}", dump.blocks().last().unwrap().number());
    let u =
        |v: Value| U256::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    for (address, (balance, nonce, code)) in &accounts {
        let node_balance = u(rpc
            .call_value("eth_getBalance", json!([address, tag]))
            .unwrap());
        let node_nonce = u(rpc
            .call_value("eth_getTransactionCount", json!([address, tag]))
            .unwrap());
        let node_code: Bytes = rpc.call("eth_getCode", json!([address, tag])).unwrap();
        assert_eq!(
            (node_balance, node_nonce.to::<u64>(), &node_code),
            (*balance, *nonce, code),
            "account {address} at block {tag}: node (balance, nonce, code) vs the dump's end state"
        );
    }
    for ((address, slot), value) in &slots {
        let node = u(rpc
            .call_value("eth_getStorageAt", json!([address, B256::from(*slot), tag]))
            .unwrap());
        assert_eq!(node, *value, "slot {slot:#x} of {address} at block {tag}");
    }
    eprintln!(
        "end state matches the node: {} accounts, {} slots",
        accounts.len(),
        slots.len()
    );
}

/// Every block's state root computed by the replay's root phase from the dump's witness
/// and access lists equals the node's header (the replay checks each against the header the
/// dump holds, which the dumper took from the node). With `complete` the witness must hold
/// every node an update needs (a node's own execution witness); otherwise (proofs from
/// `eth_getProof`, which lack the siblings a deletion needs) a block may be "root not
/// computable", but never another root.
pub(crate) fn check_roots(dump: &Dump, complete: bool) {
    use gigagas_executor::{DivergenceField, Mismatch, Parallel, Runner, StateRootPhase};
    let replay = test_utils::prepare(dump.clone()).unwrap();
    for phase in [StateRootPhase::After, StateRootPhase::Overlapped] {
        let config = gigagas_executor::RunConfig::new(
            std::num::NonZeroUsize::new(2).unwrap(),
            1,
            SchedulerKind::ALL[0],
        )
        .with_work(gigagas_executor::TimedWork {
            state_root: phase,
            ..Default::default()
        });
        match Parallel::new(&config).run(&replay, true) {
            Ok(timings) => {
                assert_eq!(timings.root.blocks, dump.block_count(), "{config}");
                eprintln!(
                    "{config}: {} roots equal the node's headers",
                    timings.root.blocks
                );
            }
            Err(e) if !complete => {
                let d = e.divergence().unwrap_or_else(|| panic!("{config}: {e}"));
                assert_eq!(d.field(), DivergenceField::StateRoot, "{config}: {d}");
                assert!(
                    !matches!(&*d.mismatch, Mismatch::StateRoot(_)),
                    "{config}: a wrong root: {d}"
                );
                eprintln!("{config}: {d}");
            }
            Err(d) => panic!("{config}: {d}"),
        }
    }
}

/// The dump's witness is there (`source` names where it came from, as the provenance
/// records it) and one of its nodes hashes to the state root of the parent of the first
/// block, as the node's header of that block has it: the witness proves state at that root.
pub(crate) fn check_witness(dump: &Dump, rpc: &RpcClient, source: &str) {
    let first = dump.blocks().next().expect("a block").number();
    let parent = rpc
        .call_value(
            "eth_getBlockByNumber",
            json!([format!("{:#x}", first - 1), false]),
        )
        .unwrap();
    let root: B256 = parent["stateRoot"].as_str().unwrap().parse().unwrap();
    let witness = dump.segments[0]
        .witness
        .as_ref()
        .unwrap_or_else(|| panic!("no witness: {:?}", dump.meta.provenance.get("witness")));
    assert_eq!(witness.parent_state_root, root);
    assert!(
        witness.nodes.iter().any(|n| keccak256(n) == root),
        "no node of the {} hashes to the parent's state root {root}",
        witness.nodes.len()
    );
    assert!(
        dump.meta.provenance["witness"].starts_with(source),
        "{}",
        dump.meta.provenance["witness"]
    );
    eprintln!(
        "witness: {} nodes, {} bytes ({})",
        witness.nodes.len(),
        witness.node_bytes(),
        dump.meta.provenance["witness"]
    );
}
