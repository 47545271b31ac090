//! State at the parent of the first block, read from the node on demand and recorded.
//!
//! [`StateFetcher`] asks the node for accounts (`eth_getBalance`, `eth_getTransactionCount`,
//! `eth_getCode`) and slots (`eth_getStorageAt`), all at the fixed block A−1, in JSON-RPC
//! batches spread over a few parallel requests, and keeps every answer. [`RpcDb`] is the
//! revm `Database` over it that the re-execution runs on: whatever revm loads for the first
//! time is state at A−1 (later reads come from revm's own cache, which holds the changes of
//! the blocks executed so far).

use crate::{RpcClient, RpcDumpError};
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use gigagas_dump::AccountState;
use gigagas_fs_util::try_ordered_map;
use revm::{
    Database, bytecode::Bytecode, database_interface::DBErrorMarker, primitives::KECCAK_EMPTY,
    state::AccountInfo,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::{
    collections::HashMap,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

/// One fetched state value, as the resume log stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k")]
pub enum StateRecord {
    /// An account that exists.
    #[serde(rename = "a")]
    Account {
        /// Address.
        address: Address,
        /// Balance.
        balance: U256,
        /// Nonce.
        nonce: u64,
        /// Code hash (`KECCAK_EMPTY` for none); the code is a [`StateRecord::Code`] before it.
        code_hash: B256,
    },
    /// An account that does not exist (no balance, nonce or code).
    #[serde(rename = "x")]
    Absent {
        /// Address.
        address: Address,
    },
    /// Bytecode.
    #[serde(rename = "c")]
    Code {
        /// Keccak of the code.
        hash: B256,
        /// The code.
        code: Bytes,
    },
    /// A storage slot.
    #[serde(rename = "s")]
    Slot {
        /// Account.
        address: Address,
        /// Slot key.
        slot: U256,
        /// Value.
        value: U256,
    },
}

/// What has been fetched.
#[derive(Debug, Default)]
struct Store {
    accounts: HashMap<Address, Option<AccountState>>,
    codes: HashMap<B256, Bytes>,
    slots: HashMap<(Address, U256), U256>,
    /// Records not yet handed to the resume log.
    unlogged: Vec<StateRecord>,
}

impl Store {
    /// Keep `r` unless its key is known already; a new record is logged where `log`.
    fn insert(&mut self, r: StateRecord, log: bool) {
        let new = match &r {
            StateRecord::Account {
                address,
                balance,
                nonce,
                code_hash,
            } => put(
                &mut self.accounts,
                *address,
                Some(AccountState {
                    balance: *balance,
                    nonce: *nonce,
                    code_hash: *code_hash,
                }),
            ),
            StateRecord::Absent { address } => put(&mut self.accounts, *address, None),
            StateRecord::Code { hash, code } => put(&mut self.codes, *hash, code.clone()),
            StateRecord::Slot {
                address,
                slot,
                value,
            } => put(&mut self.slots, (*address, *slot), *value),
        };
        if new && log {
            self.unlogged.push(r);
        }
    }
}

/// Insert `value` under `key` unless the key is there; whether it was not.
fn put<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, key: K, value: V) -> bool {
    match map.entry(key) {
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(value);
            true
        }
        std::collections::hash_map::Entry::Occupied(_) => false,
    }
}

/// A key of state to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateKey {
    /// Balance, nonce and code of an account.
    Account(Address),
    /// One storage slot.
    Slot(Address, U256),
}

impl StateKey {
    fn calls(self) -> usize {
        match self {
            StateKey::Account(_) => 3,
            StateKey::Slot(..) => 1,
        }
    }
}

/// Fetches and keeps state at one block.
#[derive(Debug)]
pub struct StateFetcher<'c> {
    client: &'c RpcClient,
    at: u64,
    tag: String,
    batch_size: usize,
    concurrency: std::num::NonZeroUsize,
    store: Mutex<Store>,
    calls: AtomicU64,
    on_demand: AtomicU64,
}

fn hex_u256(v: &Value) -> Option<U256> {
    let s = v.as_str()?.strip_prefix("0x")?;
    if s.is_empty() {
        return Some(U256::ZERO);
    }
    U256::from_str_radix(s, 16).ok()
}

impl<'c> StateFetcher<'c> {
    /// A fetcher of state at block `at`, with calls batched `batch_size` at a time and up to
    /// `concurrency` requests in flight.
    pub fn new(
        client: &'c RpcClient,
        at: u64,
        batch_size: usize,
        concurrency: std::num::NonZeroUsize,
    ) -> Self {
        Self {
            client,
            at,
            tag: format!("{at:#x}"),
            batch_size: batch_size.max(3),
            concurrency,
            store: Mutex::new(Store::default()),
            calls: AtomicU64::new(0),
            on_demand: AtomicU64::new(0),
        }
    }

    /// Load values fetched earlier (from the resume log); they are not logged again.
    pub fn load(&self, records: Vec<StateRecord>) {
        let mut store = self.store.lock().expect("state store lock");
        for r in records {
            store.insert(r, false);
        }
    }

    /// Records fetched since the last call, in fetch order, for the resume log.
    pub fn take_unlogged(&self) -> Vec<StateRecord> {
        std::mem::take(&mut self.store.lock().expect("state store lock").unlogged)
    }

    /// Number of JSON-RPC calls made for state.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Number of reads that were not prefetched and went to the node on their own.
    pub fn on_demand(&self) -> u64 {
        self.on_demand.load(Ordering::Relaxed)
    }

    /// Number of accounts and slots known.
    pub fn known(&self) -> (usize, usize) {
        let s = self.store.lock().expect("state store lock");
        (s.accounts.len(), s.slots.len())
    }

    fn is_known(store: &Store, key: &StateKey) -> bool {
        match key {
            StateKey::Account(a) => store.accounts.contains_key(a),
            StateKey::Slot(a, s) => store.slots.contains_key(&(*a, *s)),
        }
    }

    /// Fetch every key not known yet, in parallel batches.
    pub fn prefetch(&self, keys: impl IntoIterator<Item = StateKey>) -> Result<(), RpcDumpError> {
        let mut missing: Vec<StateKey> = {
            let store = self.store.lock().expect("state store lock");
            keys.into_iter()
                .filter(|k| !Self::is_known(&store, k))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        let mut jobs: Vec<Vec<StateKey>> = Vec::new();
        let mut current = Vec::new();
        let mut size = 0;
        for k in missing {
            if size + k.calls() > self.batch_size && !current.is_empty() {
                jobs.push(std::mem::take(&mut current));
                size = 0;
            }
            size += k.calls();
            current.push(k);
        }
        if !current.is_empty() {
            jobs.push(current);
        }
        try_ordered_map(&jobs, self.concurrency, |job| self.fetch(job))?;
        Ok(())
    }

    /// Fetch `keys` in one batch and store the answers.
    fn fetch(&self, keys: &[StateKey]) -> Result<(), RpcDumpError> {
        let mut calls: Vec<(&str, Value)> = Vec::with_capacity(keys.len() * 3);
        for k in keys {
            match k {
                StateKey::Account(a) => {
                    calls.push(("eth_getBalance", json!([a, self.tag])));
                    calls.push(("eth_getTransactionCount", json!([a, self.tag])));
                    calls.push(("eth_getCode", json!([a, self.tag])));
                }
                StateKey::Slot(a, s) => {
                    calls.push(("eth_getStorageAt", json!([a, B256::from(*s), self.tag])));
                }
            }
        }
        self.calls.fetch_add(calls.len() as u64, Ordering::Relaxed);
        let results = self.client.batch(&calls)?;
        let unavailable = |e: RpcDumpError| match e {
            RpcDumpError::Rpc {
                method,
                params,
                code,
                message,
            } => RpcDumpError::StateUnavailable {
                block: self.at,
                detail: format!("{method}({params}) answered error {code}: {message}"),
            },
            other => other,
        };
        let mut values = Vec::with_capacity(results.len());
        for (r, (m, p)) in results.into_iter().zip(&calls) {
            let v = r.map_err(unavailable)?;
            if v.is_null() {
                return Err(RpcDumpError::StateUnavailable {
                    block: self.at,
                    detail: format!("{m}({p}) answered null"),
                });
            }
            values.push((v, *m, p));
        }
        let bad = |m: &str, p: &Value, v: &Value| RpcDumpError::BadResponse {
            method: m.into(),
            params: p.to_string(),
            detail: format!("not a hex value: {v}"),
        };
        let mut records = Vec::with_capacity(keys.len() + 1);
        let mut it = values.into_iter();
        for k in keys {
            match k {
                StateKey::Account(a) => {
                    let (b, bm, bp) = it.next().expect("three answers per account");
                    let (n, nm, np) = it.next().expect("three answers per account");
                    let (c, cm, cp) = it.next().expect("three answers per account");
                    let balance = hex_u256(&b).ok_or_else(|| bad(bm, bp, &b))?;
                    let nonce = hex_u256(&n)
                        .and_then(|n| u64::try_from(n).ok())
                        .ok_or_else(|| bad(nm, np, &n))?;
                    let code: Bytes =
                        serde_json::from_value(c.clone()).map_err(|_| bad(cm, cp, &c))?;
                    if balance.is_zero() && nonce == 0 && code.is_empty() {
                        records.push(StateRecord::Absent { address: *a });
                    } else {
                        let mut code_hash = KECCAK_EMPTY;
                        if !code.is_empty() {
                            code_hash = keccak256(&code);
                            records.push(StateRecord::Code {
                                hash: code_hash,
                                code,
                            });
                        }
                        records.push(StateRecord::Account {
                            address: *a,
                            balance,
                            nonce,
                            code_hash,
                        });
                    }
                }
                StateKey::Slot(a, s) => {
                    let (v, m, p) = it.next().expect("one answer per slot");
                    let value = hex_u256(&v).ok_or_else(|| bad(m, p, &v))?;
                    records.push(StateRecord::Slot {
                        address: *a,
                        slot: *s,
                        value,
                    });
                }
            }
        }
        let mut store = self.store.lock().expect("state store lock");
        for r in records {
            store.insert(r, true);
        }
        Ok(())
    }

    /// An account at the fetcher's block (`None`: it does not exist), fetched if unknown.
    pub fn account(&self, address: Address) -> Result<Option<AccountState>, RpcDumpError> {
        if let Some(a) = self
            .store
            .lock()
            .expect("state store lock")
            .accounts
            .get(&address)
        {
            return Ok(*a);
        }
        self.on_demand.fetch_add(1, Ordering::Relaxed);
        self.fetch(&[StateKey::Account(address)])?;
        Ok(self.store.lock().expect("state store lock").accounts[&address])
    }

    /// A storage slot at the fetcher's block, fetched if unknown.
    pub fn slot(&self, address: Address, slot: U256) -> Result<U256, RpcDumpError> {
        if let Some(v) = self
            .store
            .lock()
            .expect("state store lock")
            .slots
            .get(&(address, slot))
        {
            return Ok(*v);
        }
        self.on_demand.fetch_add(1, Ordering::Relaxed);
        self.fetch(&[StateKey::Slot(address, slot)])?;
        Ok(self.store.lock().expect("state store lock").slots[&(address, slot)])
    }

    /// Bytecode by hash, if an account fetched so far has it.
    pub fn code(&self, hash: B256) -> Option<Bytes> {
        self.store
            .lock()
            .expect("state store lock")
            .codes
            .get(&hash)
            .cloned()
    }

    /// The fetched state as a read-only revm database (what the recording path's
    /// pre-state walk reads).
    pub fn at_parent(&self) -> FetchedState<'_, 'c> {
        FetchedState(self)
    }
}

/// [`StateFetcher`] as a [`revm::DatabaseRef`]: the state at the fetcher's block.
#[derive(Debug, Clone, Copy)]
pub struct FetchedState<'f, 'c>(&'f StateFetcher<'c>);

impl DBErrorMarker for RpcDumpError {}

impl revm::DatabaseRef for FetchedState<'_, '_> {
    type Error = RpcDumpError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, RpcDumpError> {
        Ok(self.0.account(address)?.map(|a| AccountInfo {
            balance: a.balance,
            nonce: a.nonce,
            code_hash: a.code_hash,
            ..Default::default()
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, RpcDumpError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        self.0.code(code_hash).map(Bytecode::new_raw).ok_or_else(|| RpcDumpError::inconsistent(self.0.at, format!("bytecode {code_hash} of a fetched account is missing (a cut or edited resume log?)")))
    }

    fn storage_ref(&self, address: Address, slot: U256) -> Result<U256, RpcDumpError> {
        self.0.slot(address, slot)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, RpcDumpError> {
        Err(RpcDumpError::inconsistent(
            self.0.at,
            format!("no block hash {number} in the pre-state walk"),
        ))
    }
}

/// The error revm sees when a read fails; the real error is kept in [`RpcDb::failure`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct DbError(pub String);

impl DBErrorMarker for DbError {}

/// The revm database of the re-execution: state at A−1 from a [`StateFetcher`], and block
/// hashes from the dump's list.
#[derive(Debug)]
pub struct RpcDb<'f, 'c> {
    fetcher: &'f StateFetcher<'c>,
    hashes: HashMap<u64, B256>,
    /// The first error a read ran into (revm only sees a [`DbError`]).
    pub failure: Option<RpcDumpError>,
}

impl<'f, 'c> RpcDb<'f, 'c> {
    /// A database over `fetcher`, answering `BLOCKHASH` from `hashes`.
    pub fn new(fetcher: &'f StateFetcher<'c>, hashes: HashMap<u64, B256>) -> Self {
        Self {
            fetcher,
            hashes,
            failure: None,
        }
    }

    /// Make the hash of an executed block available to `BLOCKHASH`.
    pub fn add_hash(&mut self, number: u64, hash: B256) {
        self.hashes.insert(number, hash);
    }

    fn fail(&mut self, e: RpcDumpError) -> DbError {
        let msg = e.to_string();
        self.failure.get_or_insert(e);
        DbError(msg)
    }
}

impl Database for RpcDb<'_, '_> {
    type Error = DbError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, DbError> {
        let Some(acc) = self.fetcher.account(address).map_err(|e| self.fail(e))? else {
            return Ok(None);
        };
        let code = if acc.code_hash == KECCAK_EMPTY {
            Bytecode::default()
        } else {
            let raw = self
                .fetcher
                .code(acc.code_hash)
                .expect("code is stored with its account");
            Bytecode::new_raw_checked(raw)
                .map_err(|e| DbError(format!("code of {address} does not decode: {e:?}")))?
        };
        Ok(Some(AccountInfo {
            balance: acc.balance,
            nonce: acc.nonce,
            code_hash: acc.code_hash,
            code: Some(code),
            ..Default::default()
        }))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, DbError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        match self.fetcher.code(code_hash) {
            Some(raw) => Bytecode::new_raw_checked(raw)
                .map_err(|e| DbError(format!("code {code_hash} does not decode: {e:?}"))),
            None => Err(DbError(format!(
                "code {code_hash} was not fetched with any account"
            ))),
        }
    }

    fn storage(&mut self, address: Address, index: U256) -> Result<U256, DbError> {
        self.fetcher.slot(address, index).map_err(|e| self.fail(e))
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, DbError> {
        self.hashes
            .get(&number)
            .copied()
            .ok_or_else(|| DbError(format!("no hash of block {number}")))
    }
}
