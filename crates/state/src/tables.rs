//! The handles of a store's state tables ([`Tables`]) and a cursor's entry ([`Entry`]):
//! what the store that reads them and the writer that writes them share.

use crate::{
    StoreError,
    layout::{ACCOUNTS, BLOCK_HASHES, BYTECODES, STORAGE, TRIE_NODES},
};
use signet_libmdbx::{Database, DatabaseFlags};
use std::borrow::Cow;

/// A cursor's entry (key and value), borrowed from its transaction's pages.
pub(crate) type Entry<'a> = Option<(Cow<'a, [u8]>, Cow<'a, [u8]>)>;

/// The handles of the state tables, every table but [`META`](crate::layout::META): the one
/// list of them, with their flags, for the build that creates them and the store that opens
/// them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tables {
    pub(crate) accounts: Database,
    pub(crate) storage: Database,
    pub(crate) codes: Database,
    pub(crate) hashes: Database,
    pub(crate) trie_nodes: Database,
}

impl Tables {
    /// Each table through `open`, by its name and its flags ([`STORAGE`] is dup-sorted,
    /// the others are plain): the build creates them with it, the store opens them.
    pub(crate) fn each(
        mut open: impl FnMut(&'static str, DatabaseFlags) -> Result<Database, StoreError>,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            accounts: open(ACCOUNTS, DatabaseFlags::empty())?,
            storage: open(STORAGE, DatabaseFlags::DUP_SORT)?,
            codes: open(BYTECODES, DatabaseFlags::empty())?,
            hashes: open(BLOCK_HASHES, DatabaseFlags::empty())?,
            trie_nodes: open(TRIE_NODES, DatabaseFlags::empty())?,
        })
    }

    /// Each table by its name, in the order of [`Tables::each`] (what table stats list).
    pub(crate) fn named(&self) -> [(&'static str, Database); 5] {
        [
            (ACCOUNTS, self.accounts),
            (STORAGE, self.storage),
            (BYTECODES, self.codes),
            (BLOCK_HASHES, self.hashes),
            (TRIE_NODES, self.trie_nodes),
        ]
    }
}
