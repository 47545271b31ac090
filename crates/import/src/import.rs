//! Importing one test: decode, execute like a client with the BAL builder, check against
//! the fixture, assemble the dump.

use crate::{
    error::{BlockDefect, Difference, FixtureDefect, ImportError, Location, Mismatch},
    fixture::{BlockchainTest, FixtureAccount},
    network::{NetworkError, chain_config},
    world::{World, account_from_fixture},
};
use alloy_consensus::{
    Block, Header, TxEnvelope,
    transaction::{Recovered, SignerRecoverable},
};
use alloy_eip7928::BlockAccessList;
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_rlp::Decodable;
use gigagas_chain::{
    BlockInput, BlockStage, ChainSpec, Expected, check_against_parent, check_body,
};
use gigagas_dump::{ChainConfig, Dump, DumpBlock, DumpMeta};
use gigagas_record::{
    RecordedBlock, first_difference, record_block, structure_error, touched_pre_state,
    without_eip8282_touches, without_extra_reads,
};
use revm::database::{State, WrapDatabaseRef, states::bundle_state::BundleRetention};
use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

/// Provenance `source` of imported dumps.
pub const SOURCE: &str = "gigagas import blockchain-test";

/// What an import produced besides the dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportStats {
    /// Blocks.
    pub blocks: usize,
    /// Transactions.
    pub transactions: usize,
    /// Gas used by all blocks.
    pub gas_used: u64,
    /// Whether the post-state was checked account by account (`postState`) or only by its
    /// root (`postStateHash`).
    pub checked_accounts: bool,
    /// Blocks the fixture expects a client to reject, each rejected by the import's checks
    /// (they are not in the dump: blocks, transactions and gas count the valid chain only).
    pub rejected: Vec<RejectedBlock>,
}

/// A block the fixture expects to be rejected (`expectException`) and that the import's
/// checks reject too, on the current tip of the chain, leaving the state as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedBlock {
    /// Index of the block in the fixture's `blocks` (0-based).
    pub index: usize,
    /// The exception the fixture expects, e.g. `BlockException.INVALID_BLOCK_ACCESS_LIST`
    /// (alternatives separated by `|`).
    pub exception: String,
    /// The first check that rejected it.
    pub by: RejectedBy,
    /// What that check found: expected and got, or the error.
    pub reason: String,
    /// Whether `by` is a check the exception names (always, for exceptions the importer
    /// does not map). When not, the block is still refused, but an earlier check found
    /// something else first; [`Self::first`] says why that can be.
    pub as_named: bool,
    /// When not [`Self::as_named`]: what the exception names instead, and on Amsterdam that
    /// revm's rules differ from the fixture's (an execution field differs before the access
    /// list is looked at). Empty otherwise.
    pub first: String,
}

/// The checks a block the fixture expects rejected goes through, in a client's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectedBy {
    /// Decoding: the block's RLP or a sender's signature.
    Decoding,
    /// The access list the block carries is not well formed (order, duplicates, indices,
    /// size for the gas limit).
    AccessListFormat,
    /// A transaction is invalid, or does not fit the block's remaining gas or blob gas.
    Transaction,
    /// A system call before or after the transactions, or the withdrawals, failed.
    SystemCall,
    /// The header: against its parent (number, timestamp, extra data, gas limit, base fee,
    /// excess blob gas) or its body (transactions, withdrawals, ommers roots) before
    /// execution; a field execution does not reproduce after it (gas used, blob gas used,
    /// logs bloom, receipts root, requests hash, state root).
    Header,
    /// The access list differs from the one execution builds, or does not hash to the
    /// header's `blockAccessListHash`.
    AccessList,
}

impl RejectedBy {
    /// The checks an `expectException` value names (any of its `|` alternatives); empty
    /// for exceptions the importer does not map, which any rejection satisfies.
    pub fn named_by(exception: &str) -> Vec<RejectedBy> {
        let mut out = Vec::new();
        for e in exception.split('|').map(str::trim) {
            let named: &[RejectedBy] = if e.starts_with("TransactionException.") {
                &[RejectedBy::Transaction]
            } else if e.contains("BLOCK_ACCESS_LIST") {
                &[RejectedBy::AccessListFormat, RejectedBy::AccessList]
            } else if e.contains("INCORRECT_BLOCK_FORMAT") || e.contains("RLP") {
                &[RejectedBy::Decoding, RejectedBy::AccessListFormat]
            } else if [
                "GAS_USED",
                "STATE_ROOT",
                "RECEIPTS_ROOT",
                "LOG_BLOOM",
                "BLOB_GAS",
                "REQUESTS",
                "GASLIMIT",
                "GAS_LIMIT",
                "BASEFEE",
                "TIMESTAMP",
                "EXTRA_DATA",
                "BLOCK_NUMBER",
                "TRANSACTIONS_ROOT",
                "WITHDRAWALS_ROOT",
                "UNCLE",
                "OMMER",
            ]
            .iter()
            .any(|f| e.contains(f))
            {
                &[RejectedBy::Header]
            } else {
                &[]
            };
            out.extend_from_slice(named);
        }
        out
    }
}

impl std::fmt::Display for RejectedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RejectedBy::Decoding => "decoding",
            RejectedBy::AccessListFormat => "the access list's format",
            RejectedBy::Transaction => "a transaction",
            RejectedBy::SystemCall => "a system call",
            RejectedBy::Header => "the header",
            RejectedBy::AccessList => "the access list",
        })
    }
}

impl std::fmt::Display for RejectedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.as_named {
            write!(
                f,
                "block {} rejected as expected ({}) by {}: {}",
                self.index, self.exception, self.by, self.reason
            )
        } else {
            write!(
                f,
                "block {} rejected ({} expected) by {} first, {}: {}",
                self.index, self.exception, self.by, self.first, self.reason
            )
        }
    }
}

/// One fixture block, in order: one the chain grows by, or one the fixture expects a
/// client to reject (checked on the tip at that point, then dropped).
enum Step {
    Valid(Decoded),
    Invalid {
        /// `expectException`.
        exception: String,
        /// The block, or why it cannot be considered at all: it does not decode, a sender
        /// does not recover (decoding), its parent or number is not the tip's (header).
        block: Result<Decoded, (RejectedBy, String)>,
    },
}

/// A decoded block: header, transactions with senders, withdrawals.
struct Decoded {
    header: Header,
    hash: B256,
    transactions: Vec<Recovered<TxEnvelope>>,
    ommers: Vec<Header>,
    withdrawals: Option<Vec<alloy_eips::eip4895::Withdrawal>>,
}

impl Decoded {
    /// What executing the block needs (fixtures know every ommer's header).
    fn input(&self) -> BlockInput<'_> {
        BlockInput {
            header: &self.header,
            transactions: &self.transactions,
            withdrawals: self.withdrawals.as_deref(),
            ommers: &self.ommers,
            headerless_ommers: 0,
        }
    }
}

fn decode_block(test: &str, index: usize, rlp: &Bytes) -> Result<Decoded, ImportError> {
    let malformed = |defect: BlockDefect| ImportError::Malformed {
        test: test.into(),
        defect: Box::new(FixtureDefect::Block { index, defect }),
    };
    let mut buf = rlp.as_ref();
    let block =
        Block::<TxEnvelope>::decode(&mut buf).map_err(|e| malformed(BlockDefect::Rlp(e)))?;
    if !buf.is_empty() {
        return Err(malformed(BlockDefect::TrailingBytes(buf.len())));
    }
    let Block { header, body } = block;
    let number = header.number;
    let mut transactions = Vec::with_capacity(body.transactions.len());
    for (i, tx) in body.transactions.into_iter().enumerate() {
        let sender = tx.recover_signer().map_err(|source| {
            malformed(BlockDefect::Sender {
                number,
                tx: i,
                source,
            })
        })?;
        transactions.push(Recovered::new_unchecked(tx, sender));
    }
    Ok(Decoded {
        hash: header.hash_slow(),
        header,
        transactions,
        ommers: body.ommers,
        withdrawals: body.withdrawals.map(|w| w.into_inner()),
    })
}

fn mismatch(
    test: &str,
    location: Location,
    account: Option<Address>,
    difference: Difference,
) -> ImportError {
    Mismatch {
        test: test.into(),
        location,
        account,
        difference,
    }
    .into()
}

/// Import one test: decode its blocks, execute them on `pre` with revm's BAL builder,
/// check gas, receipts, blob gas, state roots, `postState`/`postStateHash` and
/// `lastblockhash`, and return the dump. A block the fixture expects to be rejected must
/// be rejected by these checks on the tip it is offered to (it is listed in
/// [`ImportStats::rejected`], not dumped); the dump holds the valid chain, `None` when no
/// block of the fixture is valid. `file` only goes into the provenance.
pub fn import_test(
    file: &Path,
    name: &str,
    test: &BlockchainTest,
) -> Result<(Option<Dump>, ImportStats), ImportError> {
    let (chain, spec) = chain_rules(name, test)?;
    let (genesis, genesis_header) = checked_genesis(name, test)?;
    let steps = decode_chain(name, test, genesis)?;
    let mut pre = World::from_fixture(&test.pre).map_err(|e| malformed(name, e.into()))?;
    pre.block_hashes.insert(genesis.0, genesis.1);
    let executed = execute_chain(name, test, &spec, &pre, genesis_header, &steps)?;
    let valid: Vec<&Decoded> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Valid(d) => Some(d),
            Step::Invalid { .. } => None,
        })
        .collect();
    let checked_accounts = check_end_state(
        name,
        test,
        &spec,
        &valid,
        genesis.1,
        executed.root_mismatch,
        &executed.world,
    )?;
    let stats = ImportStats {
        blocks: executed.blocks.len(),
        transactions: executed.blocks.iter().map(|b| b.transactions.len()).sum(),
        gas_used: executed.blocks.iter().map(|b| b.header.gas_used).sum(),
        checked_accounts,
        rejected: executed.rejected,
    };
    if executed.blocks.is_empty() {
        return Ok((None, stats));
    }
    let dump = assemble(Assembly {
        file,
        name,
        test,
        chain,
        spec: &spec,
        genesis,
        pre: &pre,
        blocks: executed.blocks,
    })?;
    Ok((Some(dump), stats))
}

fn malformed(test: &str, defect: FixtureDefect) -> ImportError {
    ImportError::Malformed {
        test: test.into(),
        defect: Box::new(defect),
    }
}

/// The chain config and rules of the fixture's network; fixtures the importer cannot
/// represent (no blocks) are refused here.
fn chain_rules(name: &str, test: &BlockchainTest) -> Result<(ChainConfig, ChainSpec), ImportError> {
    let blob_schedule = test
        .blob_schedule()
        .map_err(|e| malformed(name, e.into()))?;
    let unsupported = |source: NetworkError| ImportError::UnsupportedNetwork {
        test: name.into(),
        network: test.network.clone(),
        source,
    };
    let chain =
        chain_config(&test.network, test.chain_id(), &blob_schedule).map_err(unsupported)?;
    if test.blocks.is_empty() {
        return Err(ImportError::Unsupported {
            test: name.into(),
            reason: "the fixture has no blocks".into(),
        });
    }
    let spec = ChainSpec::from_config(&chain).map_err(|e| unsupported(e.into()))?;
    Ok((chain, spec))
}

/// The genesis `(number, hash)` and its header when the fixture has `genesisRLP` (the
/// parent the first block's header is checked against): the fixture's hash, checked
/// against the RLP when present.
fn checked_genesis(
    name: &str,
    test: &BlockchainTest,
) -> Result<((u64, B256), Option<Header>), ImportError> {
    let genesis_hash = test.genesis_block_header.hash;
    let genesis_number: u64 = test
        .genesis_block_header
        .number
        .try_into()
        .map_err(|_| malformed(name, FixtureDefect::GenesisNumber))?;
    let mut header = None;
    if let Some(rlp) = &test.genesis_rlp {
        let genesis = Block::<TxEnvelope>::decode(&mut rlp.as_ref())
            .map_err(|e| malformed(name, FixtureDefect::GenesisRlp(e)))?;
        let hash = genesis.header.hash_slow();
        if hash != genesis_hash {
            let difference = Difference::GenesisHash(Expected::new(genesis_hash, hash));
            return Err(mismatch(name, Location::Chain, None, difference));
        }
        header = Some(genesis.header);
    }
    Ok(((genesis_number, genesis_hash), header))
}

/// The fixture's blocks, decoded: the valid ones must form one chain on top of the
/// genesis; one expected to be rejected is offered to the tip at its place (a decoding
/// failure, or a block that does not extend the tip, is its rejection).
fn decode_chain(
    name: &str,
    test: &BlockchainTest,
    (genesis_number, genesis_hash): (u64, B256),
) -> Result<Vec<Step>, ImportError> {
    let mut steps = Vec::with_capacity(test.blocks.len());
    let (mut parent_hash, mut parent_number) = (genesis_hash, genesis_number);
    for (i, b) in test.blocks.iter().enumerate() {
        let extends = |d: &Decoded| {
            d.header.parent_hash == parent_hash
                && Some(d.header.number) == parent_number.checked_add(1)
        };
        if let Some(exception) = &b.expect_exception {
            let block = decode_block(name, i, &b.rlp)
                .map_err(|e| match e {
                    ImportError::Malformed { defect, .. } => {
                        (RejectedBy::Decoding, defect.to_string())
                    }
                    e => (RejectedBy::Decoding, e.to_string()),
                })
                .and_then(|d| {
                    if extends(&d) {
                        Ok(d)
                    } else {
                        Err((RejectedBy::Header, format!(
                            "block {i} (number {}, parent {}) does not extend the tip, block {parent_number} ({parent_hash})",
                            d.header.number, d.header.parent_hash
                        )))
                    }
                });
            steps.push(Step::Invalid {
                exception: exception.clone(),
                block,
            });
            continue;
        }
        let d = decode_block(name, i, &b.rlp)?;
        if !extends(&d) {
            return Err(ImportError::Unsupported {
                test: name.into(),
                reason: format!(
                    "block {i} (number {}) does not extend block {parent_number} ({parent_hash}): side chains and reorgs cannot be dumped",
                    d.header.number
                ),
            });
        }
        parent_hash = d.hash;
        parent_number = d.header.number;
        steps.push(Step::Valid(d));
    }
    Ok(steps)
}

/// What executing the fixture's chain produced.
struct Executed {
    /// The blocks as the dump stores them, each with the access list to store.
    blocks: Vec<DumpBlock>,
    /// The state after the last block.
    world: World,
    /// The first block whose state root differs (reported after the post-state checks,
    /// which name the account).
    root_mismatch: Option<ImportError>,
    /// The blocks the fixture expects rejected, and why the checks rejected them.
    rejected: Vec<RejectedBlock>,
}

/// Execute the chain like a client, recording each block's access list, and check each
/// block against its header and the fixture's access list; offer each block the fixture
/// expects rejected to the tip, which must reject it.
fn execute_chain(
    name: &str,
    test: &BlockchainTest,
    spec: &ChainSpec,
    pre: &World,
    genesis_header: Option<Header>,
    steps: &[Step],
) -> Result<Executed, ImportError> {
    let mut state = State::builder()
        .with_database_ref(pre)
        .with_bundle_update()
        .with_bal_builder()
        .build();
    let mut out = Executed {
        blocks: Vec::with_capacity(steps.len()),
        world: pre.clone(),
        root_mismatch: None,
        rejected: Vec::new(),
    };
    let last_valid = steps.iter().rposition(|s| matches!(s, Step::Valid(_)));
    let mut parent = genesis_header;
    for (i, step) in steps.iter().enumerate() {
        let tip = Tip {
            world: &out.world,
            parent: parent.as_ref(),
        };
        let d = match step {
            Step::Valid(d) => d,
            Step::Invalid { exception, block } => {
                out.rejected
                    .push(check_rejected(name, test, spec, tip, i, exception, block)?);
                continue;
            }
        };
        let number = d.header.number;
        let at = Location::Block(number);
        if let Err(m) = consensus_checks(spec, d, tip.parent) {
            return Err(mismatch(name, at, None, Difference::Header(m)));
        }
        parent = Some(d.header.clone());
        let amsterdam = spec.is_amsterdam_active_at_timestamp(d.header.timestamp);
        let recorded = record_valid_block(name, spec, &mut state, d)?;
        state.merge_transitions(BundleRetention::PlainState);
        state.block_hashes.insert(number, d.hash);
        let hashes = std::mem::take(&mut out.world.block_hashes);
        out.world = pre.overlay(&state.bundle_state);
        out.world.block_hashes = hashes;
        out.world.block_hashes.insert(number, d.hash);
        let root = out.world.state_root();
        if root != d.header.state_root && amsterdam {
            let last = Some(i) == last_valid;
            return Err(amsterdam_root_difference(
                name, test, d, root, last, &out.world,
            ));
        }
        if root != d.header.state_root && out.root_mismatch.is_none() {
            let difference = Difference::StateRoot(Expected::new(d.header.state_root, root));
            out.root_mismatch = Some(mismatch(name, at, None, difference));
        }
        let access_list = access_list_to_store(name, test, i, d, amsterdam, &recorded.access_list)?;
        out.blocks.push(DumpBlock {
            header: d.header.clone(),
            transactions: d.transactions.clone(),
            withdrawals: d.withdrawals.clone().unwrap_or_default(),
            receipts: recorded.receipt_summaries(),
            ommers: d.ommers.clone(),
            headerless_ommers: 0,
            access_list,
        });
    }
    Ok(out)
}

/// Execute a block the fixture says is valid on `state` and check what its header commits
/// to. Amsterdam devnet rules revm 43 may not implement as the filler did: a block whose
/// execution disagrees with the fixture is skipped as such, never passed (its access list
/// is checked later, by [`access_list_to_store`]).
fn record_valid_block(
    name: &str,
    spec: &ChainSpec,
    state: &mut State<WrapDatabaseRef<&World>>,
    d: &Decoded,
) -> Result<RecordedBlock, ImportError> {
    let number = d.header.number;
    let amsterdam = spec.is_amsterdam_active_at_timestamp(d.header.timestamp);
    let rules_differ = |detail: String| rules_differ(name, number, detail);
    let recorded = match record_block(state, spec, d.input()) {
        Ok(r) => r,
        Err(e) if amsterdam => {
            return Err(rules_differ(format!(
                "{}: execution failed on a block the fixture says is valid: {}",
                e.stage, e.source
            )));
        }
        Err(e) => {
            return Err(ImportError::Execution {
                test: name.into(),
                block: number,
                stage: e.stage,
                source: e.source,
            });
        }
    };
    if amsterdam {
        recorded
            .check_execution(spec, &d.header)
            .map_err(|m| rules_differ(format!("{}: {}", m.field(), m.values())))?;
    } else {
        recorded
            .check_header(spec, &d.header)
            .map_err(|m| mismatch(name, Location::Block(number), None, Difference::Header(m)))?;
    }
    Ok(recorded)
}

/// An Amsterdam test skipped because revm's execution disagrees with the fixture.
fn rules_differ(name: &str, number: u64, detail: String) -> ImportError {
    ImportError::RulesDiffer {
        test: name.into(),
        fork: "Amsterdam".into(),
        detail: format!("block {number}: {detail}"),
    }
}

/// Offer block `i`, which the fixture expects rejected, to the tip (`world`, the state after
/// the valid blocks before it): the first check that rejects it, in a client's order (see
/// [`RejectedBy`]). A block every check accepts fails the import (the importer would have
/// dumped a block a client refuses); one refused by a check its exception does not name
/// passes with that said (see [`RejectedBlock::as_named`]).
fn check_rejected(
    name: &str,
    test: &BlockchainTest,
    spec: &ChainSpec,
    tip: Tip<'_>,
    i: usize,
    exception: &str,
    block: &Result<Decoded, (RejectedBy, String)>,
) -> Result<RejectedBlock, ImportError> {
    let (by, reason) = match block {
        Ok(d) => match first_rejection(test, spec, tip, i, d) {
            Some(found) => found,
            None => {
                return Err(mismatch(
                    name,
                    Location::Block(d.header.number),
                    None,
                    Difference::Accepted {
                        index: i,
                        exception: exception.into(),
                    },
                ));
            }
        },
        Err((by, why)) => (*by, why.clone()),
    };
    let named = RejectedBy::named_by(exception);
    let as_named = named.is_empty() || named.contains(&by);
    let amsterdam = block
        .as_ref()
        .is_ok_and(|d| spec.is_amsterdam_active_at_timestamp(d.header.timestamp));
    let first = match (as_named, amsterdam && by == RejectedBy::Header) {
        (true, _) => String::new(),
        (false, true) => "as revm's Amsterdam rules differ".to_string(),
        (false, false) => format!("not by {} as the exception names", join(&named)),
    };
    Ok(RejectedBlock {
        index: i,
        exception: exception.to_string(),
        by,
        reason,
        as_named,
        first,
    })
}

fn join(checks: &[RejectedBy]) -> String {
    checks
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The chain's tip a block is offered to: the state after it, and its header (unknown
/// for the genesis of a fixture without `genesisRLP`).
#[derive(Clone, Copy)]
struct Tip<'a> {
    world: &'a World,
    parent: Option<&'a Header>,
}

/// What a client checks before executing a block: its body against the header's roots,
/// and the header against its parent (when known).
fn consensus_checks(
    spec: &ChainSpec,
    d: &Decoded,
    parent: Option<&Header>,
) -> Result<(), gigagas_chain::HeaderMismatch> {
    check_body(
        &d.header,
        &d.transactions,
        d.withdrawals.as_deref(),
        &d.ommers,
    )?;
    match parent {
        Some(parent) => check_against_parent(spec, &d.header, parent),
        None => Ok(()),
    }
}

/// The first check block `i` (decoded) fails on `tip`, or `None`.
fn first_rejection(
    test: &BlockchainTest,
    spec: &ChainSpec,
    tip: Tip<'_>,
    i: usize,
    d: &Decoded,
) -> Option<(RejectedBy, String)> {
    if let Err(m) = consensus_checks(spec, d, tip.parent) {
        return Some((RejectedBy::Header, m.to_string()));
    }
    let world = tip.world;
    let carried = match test.blocks[i].access_list() {
        Ok(list) => list,
        Err(why) => return Some((RejectedBy::AccessListFormat, why.to_string())),
    };
    if let Some(list) = &carried
        && let Some(why) = structure_error(list, d.transactions.len(), d.header.gas_limit)
    {
        return Some((RejectedBy::AccessListFormat, why));
    }
    let mut scratch = State::builder()
        .with_database_ref(world)
        .with_bundle_update()
        .with_bal_builder()
        .build();
    let recorded = match record_block(&mut scratch, spec, d.input()) {
        Ok(r) => r,
        Err(e) => {
            let by = match e.stage {
                BlockStage::Tx(_) => RejectedBy::Transaction,
                BlockStage::PreBlock | BlockStage::PostBlock => RejectedBy::SystemCall,
            };
            return Some((by, format!("{}: {}", e.stage, e.source)));
        }
    };
    if let Err(m) = recorded.check_execution(spec, &d.header) {
        return Some((RejectedBy::Header, m.to_string()));
    }
    scratch.merge_transitions(BundleRetention::PlainState);
    let root = world.overlay(&scratch.bundle_state).state_root();
    if root != d.header.state_root {
        return Some((
            RejectedBy::Header,
            format!(
                "state root: header says {}, execution gives {root}",
                d.header.state_root
            ),
        ));
    }
    let header_hash = d.header.block_access_list_hash?;
    // The list the header commits to: the one the block carries, checked against
    // execution's entry by entry; without one, execution's own.
    let list = match carried {
        Some(list) => {
            let ours = without_eip8282_touches(&recorded.access_list, Some(&list));
            if let Some(diff) = first_difference(&list, &ours) {
                let Expected { expected, got } = diff.entry.values();
                return Some((
                    RejectedBy::AccessList,
                    format!(
                        "account {}: {}: the block's list says {expected}, execution gives {got}",
                        diff.address,
                        diff.entry.name()
                    ),
                ));
            }
            list
        }
        None => without_eip8282_touches(&recorded.access_list, None),
    };
    let hash = alloy_eip7928::compute_block_access_list_hash(&list);
    (hash != header_hash).then(|| {
        (
            RejectedBy::AccessList,
            format!("hash: header says {header_hash}, the block's list hashes to {hash}"),
        )
    })
}

/// An Amsterdam block whose state root differs: the account that differs when the fixture
/// lists the final state (after the last block), else the roots.
fn amsterdam_root_difference(
    name: &str,
    test: &BlockchainTest,
    d: &Decoded,
    root: B256,
    last: bool,
    world: &World,
) -> ImportError {
    let detail = match (&test.post_state, last) {
        (Some(post), true) => compare_post_state(name, post, world)
            .err()
            .and_then(|e| e.mismatch().cloned()),
        _ => None,
    };
    rules_differ(
        name,
        d.header.number,
        match detail {
            Some(m) => format!(
                "{}{}: {}",
                m.account
                    .map(|a| format!("post-state account {a}: "))
                    .unwrap_or_default(),
                m.field(),
                m.values()
            ),
            None => format!("state root: expected {}, got {root}", d.header.state_root),
        },
    )
}

/// The access list the dump stores for block `i`: with a fixture `blockAccessList` (and
/// a header `blockAccessListHash`), the fixture's own list, checked against revm's entry
/// by entry and against the header's hash; without, revm's.
fn access_list_to_store(
    name: &str,
    test: &BlockchainTest,
    i: usize,
    d: &Decoded,
    amsterdam: bool,
    recorded: &BlockAccessList,
) -> Result<BlockAccessList, ImportError> {
    let number = d.header.number;
    let at = Location::Block(number);
    let (fixture_bal, header_hash) = match (
        &test.blocks[i].block_access_list,
        d.header.block_access_list_hash,
    ) {
        (Some(fixture_bal), Some(header_hash)) => (fixture_bal, header_hash),
        (None, Some(_)) => {
            return Err(malformed(name, FixtureDefect::MissingAccessList(number)));
        }
        _ => return Ok(recorded.clone()),
    };
    if let Some(why) = structure_error(fixture_bal, d.transactions.len(), d.header.gas_limit) {
        return Err(mismatch(name, at, None, Difference::AccessListFormat(why)));
    }
    let ours = without_eip8282_touches(recorded, Some(fixture_bal));
    // revm's builder records some read-only accesses EIP-7928 does not count (after an
    // exceptional halt): a rule difference when they are the only difference, and the
    // fixture's list is the one its header commits to; any other difference fails.
    let difference = first_difference(fixture_bal, &ours);
    if let Some(diff) = &difference
        && !(amsterdam
            && first_difference(fixture_bal, &without_extra_reads(fixture_bal, &ours)).is_none())
    {
        let entry = Difference::AccessListEntry(diff.entry.clone());
        return Err(mismatch(name, at, Some(diff.address), entry));
    }
    let hash = alloy_eip7928::compute_block_access_list_hash(fixture_bal);
    if hash != header_hash {
        let values = Expected::new(header_hash, hash);
        return Err(mismatch(name, at, None, Difference::AccessListHash(values)));
    }
    if let Some(diff) = difference {
        return Err(rules_differ(
            name,
            number,
            format!("{diff} (revm lists a read-only access the fixture's list does not)"),
        ));
    }
    // The fixture's own list, plus the EIP-8282 touches alloy-evm's post-block calls need
    // to read during replay (empty entries, left out above).
    let mut stored = fixture_bal.clone();
    stored.extend(
        recorded
            .iter()
            .filter(|a| !ours.iter().any(|o| o.address == a.address))
            .cloned(),
    );
    stored.sort_by_key(|a| a.address);
    Ok(stored)
}

/// The fixture's expectations about the end state: `postState` account by account (an
/// Amsterdam difference is revm's rules, not a failure) or `postStateHash`, a state root
/// that differed on the way, and `lastblockhash`. Whether accounts were compared.
fn check_end_state(
    name: &str,
    test: &BlockchainTest,
    spec: &ChainSpec,
    decoded: &[&Decoded],
    genesis_hash: B256,
    root_mismatch: Option<ImportError>,
    world: &World,
) -> Result<bool, ImportError> {
    let checked_accounts = if let Some(post) = &test.post_state {
        let amsterdam = decoded
            .iter()
            .any(|d| spec.is_amsterdam_active_at_timestamp(d.header.timestamp));
        compare_post_state(name, post, world).map_err(|e| match e.mismatch().cloned() {
            // Execution disagrees with an Amsterdam fixture: its rules, not a failure.
            Some(m) if amsterdam => ImportError::RulesDiffer {
                test: name.into(),
                fork: "Amsterdam".into(),
                detail: format!(
                    "post-state: {}{}: {}",
                    m.account
                        .map(|a| format!("account {a}: "))
                        .unwrap_or_default(),
                    m.field(),
                    m.values()
                ),
            },
            _ => e,
        })?;
        true
    } else {
        false
    };
    if let Some(expected) = test.post_state_hash {
        let got = world.state_root();
        if got != expected {
            let difference = Difference::PostStateHash(Expected::new(expected, got));
            return Err(mismatch(name, Location::PostState, None, difference));
        }
    }
    if test.post_state.is_none() && test.post_state_hash.is_none() {
        return Err(malformed(name, FixtureDefect::NoPostState));
    }
    if let Some(e) = root_mismatch {
        return Err(e);
    }
    let last = decoded.last().map_or(genesis_hash, |d| d.hash);
    if last != test.lastblockhash {
        let difference = Difference::LastBlockHash(Expected::new(test.lastblockhash, last));
        return Err(mismatch(name, Location::Chain, None, difference));
    }
    Ok(checked_accounts)
}

/// What a dump of one imported test is made of.
struct Assembly<'a> {
    /// The fixture file (only its name goes into the provenance).
    file: &'a Path,
    /// The test's name.
    name: &'a str,
    /// The test (network and filler go into the provenance).
    test: &'a BlockchainTest,
    /// The chain config of the test's network.
    chain: ChainConfig,
    /// Its rules.
    spec: &'a ChainSpec,
    /// The genesis `(number, hash)`: the segment's one block hash.
    genesis: (u64, B256),
    /// The fixture's `pre`, which the access lists' pre-state is read from.
    pre: &'a World,
    /// The valid blocks, as the dump stores them (each with its access list).
    blocks: Vec<DumpBlock>,
}

/// The witness of `blocks` at the fixture's pre-state `pre` (its whole state), under the
/// rules of the first block's fork (EIP-161 from Spurious Dragon on).
fn fixture_witness(
    pre: &World,
    blocks: &[DumpBlock],
    spec: &ChainSpec,
) -> Result<gigagas_dump::Witness, gigagas_trie::RootError> {
    let rules = gigagas_trie::RootRules {
        delete_empty_accounts: blocks.first().is_some_and(|b| {
            spec.evm_env(&b.header)
                .cfg_env
                .spec
                .is_enabled_in(revm::primitives::hardfork::SpecId::SPURIOUS_DRAGON)
        }),
    };
    let lists: Vec<&BlockAccessList> = blocks.iter().map(|b| &b.access_list).collect();
    gigagas_trie::witness_for_blocks(&pre.accounts, &lists, rules)
}

/// The dump: provenance, the blocks and their access lists, the pre-state they touch.
fn assemble(parts: Assembly<'_>) -> Result<Dump, ImportError> {
    let Assembly {
        file,
        name,
        test,
        chain,
        spec,
        genesis: (genesis_number, genesis_hash),
        pre,
        blocks,
    } = parts;
    let mut provenance = BTreeMap::new();
    provenance.insert("source".to_string(), SOURCE.to_string());
    provenance.insert(
        "source-file".to_string(),
        file.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.display().to_string()),
    );
    provenance.insert("test".to_string(), name.to_string());
    provenance.insert("network".to_string(), test.network.clone());
    if let Some(filler) = &test.info.source {
        provenance.insert("filler".to_string(), filler.clone());
    }
    let pre_state = touched_pre_state(blocks.iter().map(|b| &b.access_list), pre)
        .map_err(|e| malformed(name, FixtureDefect::AccessListPreState(e)))?;
    // The fixture holds the whole pre-state: the witness of every account and slot the
    // blocks touch (and the siblings deletions need), for the state-root phase.
    let witness = fixture_witness(pre, &blocks, spec);
    match &witness {
        Ok(_) => provenance.insert("witness".to_string(), "on".to_string()),
        Err(e) => provenance.insert("witness".to_string(), format!("none: {e}")),
    };
    let mut dump = Dump::single_segment(
        DumpMeta {
            name: name.to_string(),
            provenance,
            chain,
        },
        blocks,
        vec![(genesis_number, genesis_hash)],
        pre_state,
    );
    dump.segments[0].witness = witness.ok();
    dump.validate()
        .map_err(|e| malformed(name, FixtureDefect::InconsistentDump(e)))?;
    Ok(dump)
}

/// Compare the final state with `postState`, account by account in address order: the
/// first missing or extra account, or differing balance, nonce, code or storage slot.
fn compare_post_state(
    test: &str,
    post: &BTreeMap<Address, FixtureAccount>,
    world: &World,
) -> Result<(), ImportError> {
    let addresses: BTreeSet<Address> = post.keys().chain(world.accounts.keys()).copied().collect();
    for address in addresses {
        let differs = |d| Err(mismatch(test, Location::PostState, Some(address), d));
        let (expected, got) = match (post.get(&address), world.accounts.get(&address)) {
            (Some(e), Some(g)) => (e, g),
            (Some(_), None) => return differs(Difference::MissingAccount),
            (None, Some(g)) => {
                return differs(Difference::ExtraAccount {
                    balance: g.balance,
                    nonce: g.nonce,
                    slots: g.storage.len(),
                });
            }
            (None, None) => unreachable!("the address comes from one of the maps"),
        };
        let (expected, _) = account_from_fixture(expected)
            .map_err(|source| malformed(test, FixtureDefect::PostState { address, source }))?;
        if expected.balance != got.balance {
            let values = Expected::new(expected.balance, got.balance);
            return differs(Difference::Balance(values));
        }
        if expected.nonce != got.nonce {
            return differs(Difference::Nonce(Expected::new(expected.nonce, got.nonce)));
        }
        if expected.code_hash != got.code_hash {
            let want = post[&address].code.clone();
            let have = world.code_bytes(&got.code_hash).unwrap_or_default();
            return differs(Difference::Code(Expected::new(want, have)));
        }
        let slots: BTreeSet<U256> = expected
            .storage
            .keys()
            .chain(got.storage.keys())
            .copied()
            .collect();
        for slot in slots {
            let e = expected.storage.get(&slot).copied().unwrap_or_default();
            let g = got.storage.get(&slot).copied().unwrap_or_default();
            if e != g {
                let values = Expected::new(e, g);
                return differs(Difference::Storage { slot, values });
            }
        }
    }
    Ok(())
}
