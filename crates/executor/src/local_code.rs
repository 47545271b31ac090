//! Bytecode each worker thread owns: no reference count that every worker writes.
//!
//! revm's [`Bytecode`] is an `Arc`, and every account a transaction loads carries one: the
//! EVM clones it into the account and into every call frame, and drops it when the
//! transaction's state changes are dropped. Every empty account (every externally owned
//! account: the sender, the recipient and the coinbase of a plain transfer) shares *one*
//! process-wide `Arc`, `Bytecode::default()`, and every call of a popular contract shares
//! that contract's. With several workers each clone and drop is an atomic write to the
//! same cache line from every core: the line moves between cores at every transaction, and
//! a transfer that takes 2 µs alone took 8–10 µs beside fifteen others (CHANGELOG.md,
//! *Sixteen threads without the harness's own cost*).
//!
//! [`local`] gives the views of the replay ([`crate::BalView`]) a copy of each bytecode
//! owned by the calling thread: its own empty bytecode, and for other code a copy made the
//! first time the thread meets it (the bytes and the jump table copied, nothing analysed
//! again) and kept, by code hash, for the life of the thread — the worker threads live
//! across passes ([`crate::pool`]), so copies are made in the warm-up pass and reused by
//! every measured one. A thread keeps at most [`MAX_BYTES`] of copies; past that it starts
//! again from none. The copies are equal to the shared code byte for byte and in hash,
//! so nothing a transaction computes depends on which one it ran.

use alloy_primitives::{B256, Bytes};
use revm::{bytecode::Bytecode, primitives::KECCAK_EMPTY};
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// Bytes of bytecode copies one thread keeps before it drops them all and starts again.
pub const MAX_BYTES: usize = 64 << 20;

/// One thread's copies.
struct ThreadCode {
    /// This thread's empty bytecode (hash `KECCAK_EMPTY`).
    empty: Bytecode,
    /// Copies by code hash.
    by_hash: FxHashMap<B256, Bytecode>,
    /// Bytes held by `by_hash`.
    bytes: usize,
}

thread_local! {
    static CODE: RefCell<ThreadCode> = RefCell::new(ThreadCode {
        empty: empty_bytecode(),
        by_hash: FxHashMap::default(),
        bytes: 0,
    });
}

/// An empty legacy bytecode with an `Arc` of its own (`Bytecode::default()` hands out
/// clones of one process-wide value).
fn empty_bytecode() -> Bytecode {
    // SAFETY: the padded bytes of an empty legacy bytecode are one STOP, its original
    // length is 0 and its jump table covers those 0 bytes: exactly what
    // `Bytecode::new_legacy` builds for empty input (which returns the shared default).
    unsafe {
        Bytecode::new_analyzed(
            Bytes::from_static(&[0x00]),
            0,
            revm::bytecode::JumpTable::default(),
        )
    }
}

/// A copy of `shared` owned by nobody else: the same bytes, length, jump table and kind.
fn copy(shared: &Bytecode) -> Bytecode {
    if let Some(address) = shared.eip7702_address() {
        return Bytecode::new_eip7702(address);
    }
    let Some(jump_table) = shared.legacy_jump_table() else {
        return shared.clone();
    };
    // SAFETY: the padded bytes, original length and jump table are taken from an analysed
    // legacy bytecode, so they satisfy `new_analyzed`'s contract as the original does.
    unsafe {
        Bytecode::new_analyzed(
            Bytes::copy_from_slice(shared.bytecode()),
            shared.len(),
            jump_table.clone(),
        )
    }
}

/// The calling thread's copy of the code with hash `code_hash`, whose shared value is
/// `shared` (`None` when the caller holds none: then `None`, and revm asks
/// `code_by_hash` when it needs the code). The empty code is the thread's own empty
/// bytecode, whatever `shared` is.
#[inline]
pub fn local(code_hash: B256, shared: Option<&Bytecode>) -> Option<Bytecode> {
    if code_hash == KECCAK_EMPTY {
        return Some(CODE.with(|c| c.borrow().empty.clone()));
    }
    let shared = shared?;
    Some(CODE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(code) = c.by_hash.get(&code_hash) {
            return code.clone();
        }
        let code = copy(shared);
        let size = code.bytecode().len();
        if c.bytes + size > MAX_BYTES {
            c.by_hash.clear();
            c.bytes = 0;
        }
        c.bytes += size;
        c.by_hash.insert(code_hash, code.clone());
        code
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, hex};

    #[test]
    fn a_copy_is_the_same_code_with_its_own_count() {
        // PUSH1 4 JUMP INVALID JUMPDEST STOP: one valid jump destination.
        let shared = Bytecode::new_raw(Bytes::from(hex!("600456fe5b00").to_vec()));
        let hash = shared.hash_slow();
        let mine = local(hash, Some(&shared)).expect("code is copied");
        assert_eq!(mine, shared, "same bytes and kind");
        assert_eq!(mine.hash_slow(), hash);
        assert_eq!(mine.original_byte_slice(), shared.original_byte_slice());
        assert!(mine.legacy_jump_table().expect("legacy").is_valid(4));
        assert!(!mine.legacy_jump_table().expect("legacy").is_valid(2));
        assert_ne!(
            mine.bytecode_ptr(),
            shared.bytecode_ptr(),
            "the copy owns its bytes"
        );
        let again = local(hash, Some(&shared)).expect("cached");
        assert_eq!(
            again.bytecode_ptr(),
            mine.bytecode_ptr(),
            "a thread copies a code once"
        );
        let other_thread = std::thread::spawn(move || {
            local(hash, Some(&shared))
                .expect("copied")
                .bytecode_ptr()
                .addr()
        })
        .join()
        .expect("no panic");
        assert_ne!(
            other_thread,
            mine.bytecode_ptr().addr(),
            "one copy per thread"
        );
    }

    #[test]
    fn the_empty_code_is_the_threads_own_and_equals_the_default() {
        let empty = local(KECCAK_EMPTY, None).expect("empty code needs no source");
        let default = Bytecode::default();
        assert_eq!(empty, default);
        assert!(empty.is_empty());
        assert_eq!(empty.hash_slow(), KECCAK_EMPTY);
        assert_ne!(
            empty.bytecode().as_ptr(),
            std::ptr::null(),
            "padded with a STOP"
        );
        assert_eq!(empty.bytecode().as_ref(), default.bytecode().as_ref());
    }

    #[test]
    fn delegations_stay_delegations_and_unknown_code_stays_unknown() {
        let target = address!("0x00000000000000000000000000000000000000aa");
        let shared = Bytecode::new_eip7702(target);
        let mine = local(shared.hash_slow(), Some(&shared)).expect("copied");
        assert_eq!(mine.eip7702_address(), Some(target));
        assert_eq!(mine, shared);
        assert_eq!(local(B256::repeat_byte(7), None), None);
    }
}
