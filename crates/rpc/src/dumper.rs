//! The dump: fetch, re-execute, verify, assemble.

use crate::witness::{WitnessSource, fetch_witness};
use crate::{
    ClientConfig, Difference, RpcClient, RpcDumpError, Status, TransportKind, TxRef, chain,
    client::decode,
    convert::{self, NodeReceipt},
    partial::{Partial, PartialMeta, StoredBlock},
    state::{RpcDb, StateFetcher, StateKey},
};
use alloy_consensus::{Header, Transaction};
use alloy_eip7928::BlockAccessList;
use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
use alloy_hardforks::{EthereumHardfork, EthereumHardforks};
use alloy_primitives::{Address, B256, TxKind, U64, U256};
use gigagas_chain::{BlockInput, ChainSpec, Expected};
use gigagas_dump::{Dump, DumpBlock, DumpFileInfo, DumpMeta, PreState};
use gigagas_fs_util::try_ordered_map;
use gigagas_record::{Touched, record_block, touched_pre_state, without_eip8282_touches};
use revm::database::State;
use serde_json::{Value, json};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering},
};

/// What to dump and how.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// JSON-RPC endpoint, `http://` or `https://`.
    pub url: String,
    /// First block (at least 1: the state of its parent is the dump's pre-state).
    pub from: u64,
    /// Last block (inclusive).
    pub to: u64,
    /// Fork rules to use instead of detecting them: this fork and all before it from genesis.
    pub fork: Option<EthereumHardfork>,
    /// JSON-RPC requests in flight at once.
    pub concurrency: std::num::NonZeroUsize,
    /// Calls per JSON-RPC batch.
    pub batch_size: usize,
    /// Time-outs and retries.
    pub client: ClientConfig,
    /// Directory that keeps fetched data so an interrupted dump can resume (none: keep nothing).
    pub partial_dir: Option<PathBuf>,
    /// Continue from what [`DumpOptions::partial_dir`] holds instead of starting over.
    pub resume: bool,
    /// Stop with [`RpcDumpError::Stopped`] after this many blocks (to test resuming).
    pub stop_after: Option<u64>,
    /// Learn which state each block touches from `debug_traceBlockByNumber` (prestateTracer)
    /// and fetch it in parallel batches before executing, when the node offers the tracer.
    pub trace_prefetch: bool,
    /// Name stored in the dump (default `rpc-<chain id>-<from>-<to>`).
    pub name: Option<String>,
    /// Add the segment's witness (default on): the trie nodes proving the pre-state at the
    /// parent's state root, from `debug_executionWitness` (one-block ranges) or `eth_getProof`
    /// ([`crate::witness`]). A node that serves neither gives a dump without one, said in
    /// [`DumpEvent::Witness`] and the provenance's `witness`.
    pub witness: bool,
}

impl DumpOptions {
    /// Options with the defaults for a range.
    pub fn new(url: impl Into<String>, from: u64, to: u64) -> Self {
        Self {
            url: url.into(),
            from,
            to,
            fork: None,
            concurrency: std::num::NonZeroUsize::new(4).expect("4 is not 0"),
            batch_size: 100,
            client: ClientConfig::default(),
            partial_dir: None,
            resume: false,
            stop_after: None,
            trace_prefetch: true,
            name: None,
            witness: true,
        }
    }
}

/// What a running dump reports (a progress bar draws it): start, each block, finishing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpEvent {
    /// Dumping starts; `resumed_blocks` blocks were already fetched by an earlier run.
    Start {
        /// Blocks in the range.
        total: u64,
        /// Blocks found in the resume directory.
        resumed_blocks: u64,
        /// State values found in the resume directory.
        resumed_state: u64,
        /// Chain id.
        chain_id: u64,
        /// Fork schedule summary, e.g. `Prague (eth_config)`.
        fork: String,
    },
    /// A block was executed and verified.
    Block {
        /// Blocks done.
        done: u64,
        /// Blocks in the range.
        total: u64,
        /// Block number.
        number: u64,
        /// Transactions in it.
        txs: usize,
        /// Gas used.
        gas: u64,
        /// State calls made so far.
        state_calls: u64,
        /// Of the state reads so far, those revm had to wait for one by one (the others were
        /// prefetched in batches).
        on_demand: u64,
    },
    /// All blocks are done; the pre-state is being completed (then the witness fetched).
    Finishing,
    /// The witness is fetched (or not): where it came from, and its nodes.
    Witness {
        /// The method, or why there is none.
        source: WitnessSource,
        /// Trie nodes in it (0 without one).
        nodes: usize,
    },
}

/// Fetch blocks `from..=to` from the node, re-execute them on revm over state read from the
/// node at `from − 1`, verify every transaction against the node's receipts, and return the
/// dump (not written). See the crate docs.
pub fn dump_from_rpc(
    opts: &DumpOptions,
    progress: &mut dyn FnMut(DumpEvent),
) -> Result<Dump, RpcDumpError> {
    check_range(opts)?;
    let node = Node::connect(opts)?;
    let client = &node.client;
    let first = header_of(client, opts.from, node.latest)?;
    let last = header_of(client, opts.to, node.latest)?;
    let (mut partial, records) = open_partial(opts, node.chain_id, &first)?;
    let hashes = block_hashes_before(opts, &node, partial.as_ref(), &first)?;

    let (chain, source) = chain::detect(client, node.chain_id, &first, &last, opts.fork)?;
    let spec = ChainSpec::from_config(&chain).map_err(RpcDumpError::ChainConfig)?;
    let fork_name = chain.fork_at(first.number, first.timestamp);

    let fetcher = StateFetcher::new(client, opts.from - 1, node.batch_size, node.concurrency);
    let resumed_state = records.len() as u64;
    fetcher.load(records);
    // Fail early and clearly if the node cannot serve the state the range starts from.
    fetcher.account(first.beneficiary)?;
    progress(DumpEvent::Start {
        total: opts.to - opts.from + 1,
        resumed_blocks: match &partial {
            Some(p) => (opts.from..=opts.to).filter(|n| p.has_block(*n)).count() as u64,
            None => 0,
        },
        resumed_state,
        chain_id: node.chain_id,
        fork: format!("{fork_name} ({})", source.name()),
    });

    let range = RangeRun {
        opts,
        node: &node,
        spec: &spec,
        fetcher: &fetcher,
        first_parent: first.parent_hash,
    };
    let blocks = range.execute(partial.as_mut(), &hashes, progress)?;

    progress(DumpEvent::Finishing);
    let pre_state = pre_state(&fetcher, &blocks)?;
    if let Some(p) = partial.as_mut() {
        p.append_state(&fetcher.take_unlogged())?;
        p.flush()?;
    }
    let (witness, witness_source) = if opts.witness {
        let parent = header_of(client, opts.from - 1, node.latest)?;
        fetch_witness(
            client,
            opts.from - 1,
            parent.state_root,
            (opts.from == opts.to).then_some(opts.from),
            &Touched::of(blocks.iter().map(|b| &b.access_list)),
            node.batch_size,
        )?
    } else {
        (None, WitnessSource::Off)
    };
    progress(DumpEvent::Witness {
        source: witness_source.clone(),
        nodes: witness.as_ref().map_or(0, |w| w.nodes.len()),
    });
    let mut provenance = BTreeMap::new();
    provenance.insert("source".to_string(), "gigagas dump (JSON-RPC)".to_string());
    provenance.insert("blocks".to_string(), format!("{}..={}", opts.from, opts.to));
    provenance.insert("chain-id".to_string(), node.chain_id.to_string());
    provenance.insert("fork".to_string(), fork_name);
    provenance.insert("fork-source".to_string(), source.name().to_string());
    if let Some(v) = &node.version {
        provenance.insert("client".to_string(), v.clone());
    }
    provenance.insert("witness".to_string(), witness_source.to_string());
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| format!("rpc-{}-{}-{}", node.chain_id, opts.from, opts.to));
    let mut dump = Dump::single_segment(
        DumpMeta {
            name,
            provenance,
            chain,
        },
        blocks,
        hashes,
        pre_state,
    );
    dump.segments[0].witness = witness;
    dump.validate()
        .map_err(|e| RpcDumpError::inconsistent(opts.from, format!("the assembled dump: {e}")))?;
    Ok(dump)
}

/// `from` is at least 1 and `to` not before it.
fn check_range(opts: &DumpOptions) -> Result<(), RpcDumpError> {
    if opts.from == 0 {
        return Err(RpcDumpError::InvalidRange(
            "the first block must be at least 1 (the pre-state is its parent's state)".into(),
        ));
    }
    if opts.to < opts.from {
        return Err(RpcDumpError::InvalidRange(format!(
            "--to {} is before --from {}",
            opts.to, opts.from
        )));
    }
    Ok(())
}

/// The node as a dump sees it: a client, the chain id, the latest block (at least the
/// range's last) and the client version if it says.
struct Node {
    client: RpcClient,
    chain_id: u64,
    latest: u64,
    version: Option<String>,
    concurrency: std::num::NonZeroUsize,
    batch_size: usize,
}

impl Node {
    fn connect(opts: &DumpOptions) -> Result<Self, RpcDumpError> {
        let client = RpcClient::new(&opts.url, opts.client)?;
        let chain_id: U64 = decode(client.probe("eth_chainId", json!([]))?, "eth_chainId", "[]")?;
        let latest: U64 = client.call("eth_blockNumber", json!([]))?;
        let latest: u64 = latest.to();
        if opts.to > latest {
            return Err(RpcDumpError::BlockNotFound {
                number: opts.from.max(latest + 1),
                latest,
            });
        }
        let version = client
            .call_value("web3_clientVersion", json!([]))
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        Ok(Self {
            client,
            chain_id: chain_id.to(),
            latest,
            version,
            concurrency: opts.concurrency,
            batch_size: opts.batch_size.max(1),
        })
    }
}

/// The resume directory (when one is used) and the state records it already holds.
fn open_partial(
    opts: &DumpOptions,
    chain_id: u64,
    first: &Header,
) -> Result<(Option<Partial>, Vec<crate::state::StateRecord>), RpcDumpError> {
    let meta = PartialMeta {
        layout: crate::partial::LAYOUT,
        chain_id,
        from: opts.from,
        to: opts.to,
        first_hash: first.hash_slow(),
    };
    match &opts.partial_dir {
        Some(dir) => {
            let (p, r) = Partial::open(dir, &meta, opts.resume)?;
            Ok((Some(p), r))
        }
        None => Ok((None, Vec::new())),
    }
}

/// Hashes of the (up to) 256 blocks before the range, from the resume directory or the
/// node; the last must be the first block's parent.
fn block_hashes_before(
    opts: &DumpOptions,
    node: &Node,
    partial: Option<&Partial>,
    first: &Header,
) -> Result<Vec<(u64, B256)>, RpcDumpError> {
    let hashes = match partial.map(|p| p.hashes()).transpose()?.flatten() {
        Some(h) => h,
        None => {
            let h = fetch_hashes(
                &node.client,
                opts.from,
                node.concurrency,
                node.batch_size,
                node.latest,
            )?;
            if let Some(p) = partial {
                p.put_hashes(&h)?;
            }
            h
        }
    };
    if let Some((n, h)) = hashes.last()
        && *h != first.parent_hash
    {
        return Err(RpcDumpError::inconsistent(
            opts.from,
            format!(
                "parent hash {} but block {n} has hash {h} (did the chain reorganize?)",
                first.parent_hash
            ),
        ));
    }
    Ok(hashes)
}

/// Executing the range window by window: fetch a window of blocks (and prefetch the state
/// they touch), then execute and verify each in order.
struct RangeRun<'a, 'c> {
    opts: &'a DumpOptions,
    node: &'a Node,
    spec: &'a ChainSpec,
    fetcher: &'a StateFetcher<'c>,
    /// The hash the first block's parent must have.
    first_parent: B256,
}

impl RangeRun<'_, '_> {
    /// The blocks, each with its recorded access list, reporting progress per block; stops after
    /// [`DumpOptions::stop_after`] blocks.
    fn execute(
        &self,
        mut partial: Option<&mut Partial>,
        hashes: &[(u64, B256)],
        progress: &mut dyn FnMut(DumpEvent),
    ) -> Result<Vec<DumpBlock>, RpcDumpError> {
        let (opts, node) = (self.opts, self.node);
        let total = opts.to - opts.from + 1;
        let tracer = Tracer::new(&opts.url, opts.client, opts.trace_prefetch, node.batch_size)?;
        let db = RpcDb::new(self.fetcher, hashes.iter().copied().collect());
        let mut state = State::builder()
            .with_database(db)
            .with_bal_builder()
            .build();
        let mut blocks: Vec<DumpBlock> = Vec::with_capacity(total as usize);
        let mut prev_hash = self.first_parent;
        let window = node.concurrency.get() as u64 * 2;
        let mut n = opts.from;
        while n <= opts.to {
            let end = (n + window - 1).min(opts.to);
            let window_blocks = self.fetch_window(partial.as_deref(), n..=end, &tracer)?;
            for (mut block, hash) in window_blocks {
                if block.header.parent_hash != prev_hash {
                    return Err(RpcDumpError::inconsistent(
                        block.number(),
                        format!(
                            "parent hash {} but the block before has hash {prev_hash} (did the chain reorganize?)",
                            block.header.parent_hash
                        ),
                    ));
                }
                block.access_list = execute_block(&mut state, self.spec, &block)?;
                state.database.add_hash(block.number(), hash);
                prev_hash = hash;
                if let Some(p) = partial.as_deref_mut() {
                    p.append_state(&self.fetcher.take_unlogged())?;
                    p.flush()?;
                }
                let done = blocks.len() as u64 + 1;
                progress(DumpEvent::Block {
                    done,
                    total,
                    number: block.number(),
                    txs: block.transactions.len(),
                    gas: block.header.gas_used,
                    state_calls: self.fetcher.calls(),
                    on_demand: self.fetcher.on_demand(),
                });
                blocks.push(block);
                if opts.stop_after.is_some_and(|k| done >= k) && done < total {
                    return Err(RpcDumpError::Stopped { done, total });
                }
            }
            n = end + 1;
        }
        Ok(blocks)
    }

    /// Blocks `range` converted to the dump's types with their hashes, and the state they
    /// will touch prefetched.
    fn fetch_window(
        &self,
        partial: Option<&Partial>,
        range: std::ops::RangeInclusive<u64>,
        tracer: &Tracer,
    ) -> Result<Vec<(DumpBlock, B256)>, RpcDumpError> {
        let node = self.node;
        let fetched = fetch_blocks(
            &node.client,
            partial,
            range,
            node.concurrency,
            node.batch_size,
            node.latest,
            tracer,
        )?;
        let mut window_blocks = Vec::with_capacity(fetched.len());
        let mut keys = Vec::new();
        for f in fetched {
            let rpc = convert::parse_block(f.stored.block, f.number)?;
            let (block, hash) = convert::to_dump_block(rpc, &f.stored.receipts, f.number)?;
            keys.extend(static_keys(&block, self.spec));
            keys.extend(f.traced);
            window_blocks.push((block, hash));
        }
        self.fetcher.prefetch(keys)?;
        Ok(window_blocks)
    }
}

/// The resume directory of an output file: `<out>.partial`.
pub fn partial_dir_for(out: &Path) -> PathBuf {
    let mut name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    out.with_file_name(name)
}

/// [`dump_from_rpc`], then write the dump atomically to `out` and remove the resume
/// directory (by default `<out>.partial`, kept when the dump fails or stops).
pub fn dump_to_file(
    opts: &DumpOptions,
    out: &Path,
    progress: &mut dyn FnMut(DumpEvent),
) -> Result<(Dump, DumpFileInfo), RpcDumpError> {
    let mut opts = opts.clone();
    let dir = opts
        .partial_dir
        .get_or_insert_with(|| partial_dir_for(out))
        .clone();
    let dump = dump_from_rpc(&opts, progress)?;
    let info = gigagas_dump::write_dump(&dump, out)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| RpcDumpError::partial(&dir, e))?;
    }
    Ok((dump, info))
}

/// The consensus header of block `n` (`eth_getBlockByNumber(n, false)`), hash checked.
fn header_of(client: &RpcClient, n: u64, latest: u64) -> Result<Header, RpcDumpError> {
    let v = client.call_value("eth_getBlockByNumber", json!([format!("{n:#x}"), false]))?;
    if v.is_null() {
        return Err(RpcDumpError::BlockNotFound { number: n, latest });
    }
    let h: alloy_rpc_types_eth::Header = serde_json::from_value(v)
        .map_err(|e| RpcDumpError::inconsistent(n, format!("header does not parse: {e}")))?;
    if h.inner.hash_slow() != h.hash {
        return Err(RpcDumpError::inconsistent(
            n,
            format!(
                "the header fields hash to {}, the node says {}",
                h.inner.hash_slow(),
                h.hash
            ),
        ));
    }
    Ok(h.inner)
}

/// Hashes of the (up to) 256 blocks before `from`, ascending.
fn fetch_hashes(
    client: &RpcClient,
    from: u64,
    concurrency: std::num::NonZeroUsize,
    batch_size: usize,
    latest: u64,
) -> Result<Vec<(u64, B256)>, RpcDumpError> {
    let numbers: Vec<u64> = (from.saturating_sub(256)..from).collect();
    let chunks: Vec<&[u64]> = numbers.chunks(batch_size).collect();
    let parts = try_ordered_map(&chunks, concurrency, |chunk| {
        let calls: Vec<(&str, Value)> = chunk
            .iter()
            .map(|n| ("eth_getBlockByNumber", json!([format!("{n:#x}"), false])))
            .collect();
        let answers = client.batch(&calls)?;
        chunk
            .iter()
            .zip(answers)
            .map(|(n, a)| {
                let v = a?;
                if v.is_null() {
                    return Err(RpcDumpError::BlockNotFound { number: *n, latest });
                }
                let hash: B256 = v
                    .get("hash")
                    .cloned()
                    .and_then(|h| serde_json::from_value(h).ok())
                    .ok_or_else(|| RpcDumpError::inconsistent(*n, "block without a hash"))?;
                Ok((*n, hash))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// A block ready to convert, and the state keys its trace names.
struct Fetched {
    number: u64,
    stored: StoredBlock,
    traced: Vec<StateKey>,
}

/// Learns which state a block touches, only to prefetch it in parallel batches:
/// `debug_traceBlockByNumber` with the prestateTracer where the node offers it, else
/// `eth_createAccessList` of each transaction against the parent block (approximate: it
/// ignores the block's earlier transactions, which is fine for a prefetch). Each way is
/// switched off at its first failure; nothing here affects what the dump contains.
struct Tracer {
    client: Option<RpcClient>,
    trace: AtomicBool,
    access_lists: AtomicBool,
    batch_size: usize,
}

impl Tracer {
    fn new(
        url: &str,
        config: ClientConfig,
        enabled: bool,
        batch_size: usize,
    ) -> Result<Self, RpcDumpError> {
        // At most one retry: prefetching is an optimisation, not worth waiting on.
        let client = enabled
            .then(|| {
                RpcClient::new(
                    url,
                    ClientConfig {
                        retries: config.retries.min(1),
                        ..config
                    },
                )
            })
            .transpose()?;
        Ok(Self {
            client,
            trace: AtomicBool::new(enabled),
            access_lists: AtomicBool::new(enabled),
            batch_size,
        })
    }

    fn keys(&self, n: u64, block: &Value) -> Vec<StateKey> {
        let Some(client) = self.client.as_ref() else {
            return Vec::new();
        };
        if self.trace.load(Ordering::Relaxed) {
            match client.call_value(
                "debug_traceBlockByNumber",
                json!([format!("{n:#x}"), { "tracer": "prestateTracer" }]),
            ) {
                Ok(v) => return Self::trace_keys(&v),
                Err(e) if Self::passing(&e) => return Vec::new(),
                Err(_) => self.trace.store(false, Ordering::Relaxed),
            }
        }
        if self.access_lists.load(Ordering::Relaxed) {
            match self.access_list_keys(client, n, block) {
                Ok(keys) => return keys,
                Err(e) if Self::passing(&e) => return Vec::new(),
                Err(_) => self.access_lists.store(false, Ordering::Relaxed),
            }
        }
        Vec::new()
    }

    /// A failure worth skipping one block for, not switching the prefetch off: a transport
    /// error other than a time-out (an overloaded node, a dropped connection).
    fn passing(e: &RpcDumpError) -> bool {
        matches!(e, RpcDumpError::Transport { kind, .. } if *kind != TransportKind::TimedOut)
    }

    fn trace_keys(v: &Value) -> Vec<StateKey> {
        let mut keys = Vec::new();
        for item in v.as_array().into_iter().flatten() {
            let Some(accounts) = item.get("result").and_then(Value::as_object) else {
                continue;
            };
            for (addr, acc) in accounts {
                let Ok(address) = addr.parse::<Address>() else {
                    continue;
                };
                keys.push(StateKey::Account(address));
                for slot in acc
                    .get("storage")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|s| s.keys())
                {
                    if let Ok(slot) = slot.parse::<B256>() {
                        keys.push(StateKey::Slot(address, slot.into()));
                    }
                }
            }
        }
        keys
    }

    /// The keys, or why they could not be had (`Rpc` if the node lacks the method).
    fn access_list_keys(
        &self,
        client: &RpcClient,
        n: u64,
        block: &Value,
    ) -> Result<Vec<StateKey>, RpcDumpError> {
        let parent = format!("{:#x}", n.saturating_sub(1));
        let txs = block
            .get("transactions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut keys = Vec::new();
        for chunk in txs.chunks(self.batch_size.max(1)) {
            let calls: Vec<(&str, Value)> = chunk
                .iter()
                .map(|t| {
                    let mut call = json!({ "from": t["from"], "data": t["input"], "value": t["value"], "gas": t["gas"] });
                    if !t["to"].is_null() {
                        call["to"] = t["to"].clone();
                    }
                    ("eth_createAccessList", json!([call, parent]))
                })
                .collect();
            let answers = client.batch(&calls)?;
            let mut first_error = None;
            let mut any = false;
            for a in answers {
                match a {
                    Ok(v) => {
                        any = true;
                        for item in v
                            .get("accessList")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            let Some(address) = item
                                .get("address")
                                .and_then(|a| serde_json::from_value::<Address>(a.clone()).ok())
                            else {
                                continue;
                            };
                            keys.push(StateKey::Account(address));
                            for k in item
                                .get("storageKeys")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Ok(k) = serde_json::from_value::<B256>(k.clone()) {
                                    keys.push(StateKey::Slot(address, k.into()));
                                }
                            }
                        }
                    }
                    // E.g. a transaction that fails against the parent state.
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_error.filter(|_| !any) {
                return Err(e);
            }
        }
        Ok(keys)
    }
}

/// Blocks `range` with their receipts: from the resume directory, or from the node (and
/// then stored there).
fn fetch_blocks(
    client: &RpcClient,
    partial: Option<&Partial>,
    range: std::ops::RangeInclusive<u64>,
    concurrency: std::num::NonZeroUsize,
    batch_size: usize,
    latest: u64,
    tracer: &Tracer,
) -> Result<Vec<Fetched>, RpcDumpError> {
    let numbers: Vec<u64> = range.collect();
    let no_block_receipts = AtomicBool::new(false);
    try_ordered_map(&numbers, concurrency, |&n| {
        if let Some(stored) = partial.map(|p| p.block(n)).transpose()?.flatten() {
            return Ok(Fetched {
                number: n,
                stored,
                traced: Vec::new(),
            });
        }
        let tag = format!("{n:#x}");
        let mut calls = vec![("eth_getBlockByNumber", json!([tag, true]))];
        if !no_block_receipts.load(Ordering::Relaxed) {
            calls.push(("eth_getBlockReceipts", json!([tag])));
        }
        let mut answers = client.batch(&calls)?.into_iter();
        let block = answers.next().expect("one answer per call")?;
        if block.is_null() {
            return Err(RpcDumpError::BlockNotFound { number: n, latest });
        }
        let receipts = match answers.next() {
            Some(Ok(Value::Array(items))) => Some(items),
            Some(Err(RpcDumpError::Rpc { .. })) => {
                no_block_receipts.store(true, Ordering::Relaxed);
                None
            }
            Some(Err(e)) => return Err(e),
            _ => None,
        };
        let receipts = match receipts {
            Some(items) => items,
            None => receipts_one_by_one(client, &block, n, batch_size)?,
        };
        let receipts = receipts
            .into_iter()
            .map(|r| convert::parse_receipt(r, n))
            .collect::<Result<Vec<NodeReceipt>, _>>()?;
        let stored = StoredBlock { block, receipts };
        if let Some(p) = partial {
            p.put_block(n, &stored)?;
        }
        let traced = tracer.keys(n, &stored.block);
        Ok(Fetched {
            number: n,
            stored,
            traced,
        })
    })
}

/// Receipts by `eth_getTransactionReceipt`, for nodes without `eth_getBlockReceipts`.
fn receipts_one_by_one(
    client: &RpcClient,
    block: &Value,
    n: u64,
    batch_size: usize,
) -> Result<Vec<Value>, RpcDumpError> {
    let hashes: Vec<Value> = block
        .get("transactions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| t.get("hash").cloned().unwrap_or(Value::Null))
        .collect();
    let mut out = Vec::with_capacity(hashes.len());
    for chunk in hashes.chunks(batch_size) {
        let calls: Vec<(&str, Value)> = chunk
            .iter()
            .map(|h| ("eth_getTransactionReceipt", json!([h])))
            .collect();
        for (a, h) in client.batch(&calls)?.into_iter().zip(chunk) {
            let v = a?;
            if v.is_null() {
                return Err(RpcDumpError::inconsistent(
                    n,
                    format!("the node has no receipt for transaction {h}"),
                ));
            }
            out.push(v);
        }
    }
    Ok(out)
}

/// EIP-4788 ring buffer length.
const BEACON_ROOTS_BUFFER: u64 = 8191;

/// State a block will surely touch, known without tracing: coinbase, senders, recipients,
/// access lists, EIP-7702 authorities, withdrawal recipients and the system contracts.
fn static_keys(block: &DumpBlock, spec: &ChainSpec) -> Vec<StateKey> {
    let h = &block.header;
    let mut keys = vec![StateKey::Account(h.beneficiary)];
    for tx in &block.transactions {
        keys.push(StateKey::Account(tx.signer()));
        if let TxKind::Call(to) = tx.inner().kind() {
            keys.push(StateKey::Account(to));
        }
        for item in tx.inner().access_list().into_iter().flat_map(|l| l.iter()) {
            keys.push(StateKey::Account(item.address));
            keys.extend(
                item.storage_keys
                    .iter()
                    .map(|k| StateKey::Slot(item.address, (*k).into())),
            );
        }
        for auth in tx.inner().authorization_list().into_iter().flatten() {
            if let Ok(a) = auth.recover_authority() {
                keys.push(StateKey::Account(a));
            }
            keys.push(StateKey::Account(auth.address));
        }
    }
    keys.extend(
        block
            .withdrawals
            .iter()
            .map(|w| StateKey::Account(w.address)),
    );
    if spec.is_cancun_active_at_timestamp(h.timestamp) {
        let a = eip4788::BEACON_ROOTS_ADDRESS;
        let i = h.timestamp % BEACON_ROOTS_BUFFER;
        keys.push(StateKey::Account(a));
        keys.push(StateKey::Slot(a, U256::from(i)));
        keys.push(StateKey::Slot(a, U256::from(i + BEACON_ROOTS_BUFFER)));
    }
    if spec.is_prague_active_at_timestamp(h.timestamp) {
        let a = eip2935::HISTORY_STORAGE_ADDRESS;
        keys.push(StateKey::Account(a));
        keys.push(StateKey::Slot(
            a,
            U256::from(h.number.saturating_sub(1) % eip2935::HISTORY_SERVE_WINDOW as u64),
        ));
        for a in [
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
        ] {
            keys.push(StateKey::Account(a));
            keys.extend((0..4u64).map(|s| StateKey::Slot(a, U256::from(s))));
        }
    }
    keys
}

/// Execute one block exactly as the generator does (alloy-evm's Ethereum block executor,
/// revm's BAL builder), verify it against the node's receipts and header, return its BAL.
fn execute_block(
    state: &mut State<RpcDb<'_, '_>>,
    spec: &ChainSpec,
    block: &DumpBlock,
) -> Result<BlockAccessList, RpcDumpError> {
    let number = block.number();
    let header = &block.header;
    let recorded =
        match record_block(state, spec, BlockInput::of(block)) {
            Ok(r) => r,
            Err(e) => {
                return Err(state.database.failure.take().unwrap_or_else(|| {
                    RpcDumpError::Execution {
                        block: number,
                        source: Box::new(e),
                    }
                }));
            }
        };
    let result = &recorded.result;
    let diverge = |tx: Option<usize>, what: Difference| RpcDumpError::Divergence {
        block: number,
        tx: tx.map(|index| TxRef {
            index,
            hash: *block.transactions[index].inner().tx_hash(),
        }),
        what: Box::new(what),
    };
    if result.receipts.len() != block.receipts.len() {
        return Err(diverge(
            None,
            Difference::ReceiptCount(Expected::new(block.receipts.len(), result.receipts.len())),
        ));
    }
    let mut prev = 0u64;
    for (i, (ours, node)) in result.receipts.iter().zip(&block.receipts).enumerate() {
        let cumulative = ours.cumulative_gas_used();
        let gas = cumulative - prev;
        prev = cumulative;
        if gas != node.gas_used {
            return Err(diverge(
                Some(i),
                Difference::GasUsed(Expected::new(node.gas_used, gas)),
            ));
        }
        if ours.status() != node.success {
            return Err(diverge(
                Some(i),
                Difference::Status(Expected::new(Status(node.success), Status(ours.status()))),
            ));
        }
        if ours.logs().len() as u64 != node.logs {
            return Err(diverge(
                Some(i),
                Difference::LogCount(Expected::new(node.logs, ours.logs().len() as u64)),
            ));
        }
    }
    if let Err(m) = recorded.check_execution(spec, header) {
        return Err(diverge(None, Difference::Header(m)));
    }
    check_access_list_hash(&recorded.access_list, header)
        .map_err(|hashes| diverge(None, Difference::AccessListHash(hashes)))?;
    Ok(recorded.access_list)
}

/// Compare the access list revm built with the header's `blockAccessListHash` (Amsterdam):
/// equal as built, or equal without the untouched entries of the EIP-8282 predeploys that
/// alloy-evm 0.39 calls after every Amsterdam block (a chain without those calls, like the
/// bal@v5.7.0 devnet, does not list them). The header's hash and the built one when
/// neither matches.
fn check_access_list_hash(bal: &BlockAccessList, header: &Header) -> Result<(), Expected<B256>> {
    let Some(expected) = header.block_access_list_hash else {
        return Ok(());
    };
    let got = alloy_eip7928::compute_block_access_list_hash(bal);
    let without =
        alloy_eip7928::compute_block_access_list_hash(&without_eip8282_touches(bal, None));
    if got == expected || without == expected {
        Ok(())
    } else {
        Err(Expected::new(expected, got))
    }
}

/// The pre-state the access lists touch, at the parent of the first block.
fn pre_state(fetcher: &StateFetcher<'_>, blocks: &[DumpBlock]) -> Result<PreState, RpcDumpError> {
    let bals = || blocks.iter().map(|b| &b.access_list);
    // Normally everything is known already (revm read it); fetch what is not.
    let touched = Touched::of(bals());
    fetcher.prefetch(
        touched
            .accounts
            .iter()
            .map(|a| StateKey::Account(*a))
            .chain(touched.slots.iter().map(|(a, s)| StateKey::Slot(*a, *s))),
    )?;
    touched_pre_state(bals(), &fetcher.at_parent())
}
