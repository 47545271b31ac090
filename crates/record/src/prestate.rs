//! The pre-state a set of access lists touches.

use alloy_eip7928::BlockAccessList;
use alloy_primitives::{Address, U256};
use gigagas_dump::{AccountState, PreAccount, PreSlot, PreState};
use revm::{DatabaseRef, primitives::KECCAK_EMPTY};
use std::collections::{BTreeMap, BTreeSet};

/// Every account and storage slot a set of access lists names (read or written), in
/// address and slot order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    /// Accounts.
    pub accounts: BTreeSet<Address>,
    /// Storage slots.
    pub slots: BTreeSet<(Address, U256)>,
}

impl Touched {
    /// Collect from access lists (a slice of them, or each block's of a segment).
    pub fn of<'a>(access_lists: impl IntoIterator<Item = &'a BlockAccessList>) -> Self {
        let mut out = Self::default();
        for list in access_lists {
            for a in list {
                out.accounts.insert(a.address);
                out.slots
                    .extend(a.storage_changes.iter().map(|s| (a.address, s.slot)));
                out.slots
                    .extend(a.storage_reads.iter().map(|s| (a.address, *s)));
            }
        }
        out
    }
}

/// The state before the first of `access_lists` for everything they touch, read from `db`
/// (the state at the parent of the first block): accounts `db` does not have are recorded
/// as absent, slots as whatever `db` answers (zero for a slot never written). Bytecode is
/// stored once per hash.
pub fn touched_pre_state<'a, DB: DatabaseRef>(
    access_lists: impl IntoIterator<Item = &'a BlockAccessList>,
    db: &DB,
) -> Result<PreState, DB::Error> {
    let touched = Touched::of(access_lists);
    let mut pre = PreState::default();
    let mut codes = BTreeMap::new();
    for address in touched.accounts {
        let info = db.basic_ref(address)?;
        let state = match info {
            None => None,
            Some(info) => {
                if info.code_hash != KECCAK_EMPTY && !codes.contains_key(&info.code_hash) {
                    let code = match info.code {
                        Some(code) if !code.is_empty() => code,
                        _ => db.code_by_hash_ref(info.code_hash)?,
                    };
                    codes.insert(info.code_hash, code.original_bytes());
                }
                Some(AccountState {
                    balance: info.balance,
                    nonce: info.nonce,
                    code_hash: info.code_hash,
                })
            }
        };
        pre.accounts.push(PreAccount { address, state });
    }
    for (address, slot) in touched.slots {
        pre.storage.push(PreSlot {
            address,
            slot,
            value: db.storage_ref(address, slot)?,
        });
    }
    pre.codes = codes.into_iter().collect();
    pre.canonicalize();
    Ok(pre)
}
