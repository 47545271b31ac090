//! A generated state and blocks with every kind of write (new accounts, balance and nonce
//! changes, new code, slot writes and deletions, accounts emptied and deleted): each
//! block's root from the witness alone equals the full trie's root of the state the block
//! leaves, sequentially and in parallel, and the split job gives the same. The root-only
//! witness gives the same roots and needs each of its nodes; a block's accounts
//! and slots that end as they began (a zero-value call to an absent address, reads, values
//! written back) need no node.

use alloy_eip7928::{
    AccountChanges, BalanceChange, BlockAccessIndex, BlockAccessList, CodeChange, NonceChange,
    SlotChanges, StorageChange,
};
use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_trie::KECCAK_EMPTY;
use gigagas_dump::{AccountState, PreAccount, PreSlot, PreState, Witness};
use gigagas_trie::{
    AccountTask, FullAccount, FullState, FullTries, Padding, PreValues, RootError, RootRules,
    SplitRule, StatePadding, StateTrie, StorageTask, full_state_root, root_only_witness,
    witness_for_blocks,
};

/// splitmix64: a deterministic generator without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn address(i: u64) -> Address {
    Address::from_word(keccak256(i.to_be_bytes()))
}

fn state(rng: &mut Rng, accounts: u64) -> FullState {
    let mut state = FullState::new();
    for i in 0..accounts {
        let mut account = FullAccount {
            nonce: rng.below(5),
            balance: U256::from(rng.below(1_000_000)),
            ..FullAccount::default()
        };
        if i % 4 == 0 {
            account.code_hash = keccak256(i.to_be_bytes());
            for _ in 0..rng.below(60) {
                account
                    .storage
                    .insert(U256::from(rng.below(100)), U256::from(rng.below(1000) + 1));
            }
        }
        if i % 29 == 0 {
            // An empty account, deleted when touched.
            account = FullAccount::default();
        }
        state.insert(address(i), account);
    }
    state
}

/// A block's access list over `state`, and `state` updated by it (EIP-161 applied).
fn block(rng: &mut Rng, state: &mut FullState, accounts: u64, touched: usize) -> BlockAccessList {
    let index = BlockAccessIndex::new(1);
    let mut bal = BlockAccessList::new();
    for _ in 0..touched {
        // Mostly existing accounts, some new ones.
        let a = address(rng.below(accounts + accounts / 10));
        if bal.iter().any(|c| c.address == a) {
            continue;
        }
        let mut changes = AccountChanges::new(a);
        let mut account = state.get(&a).cloned().unwrap_or_default();
        match rng.below(6) {
            0 => {
                account.balance = U256::from(rng.below(1_000_000));
                changes
                    .balance_changes
                    .push(BalanceChange::new(index, account.balance));
            }
            1 => {
                account.nonce += 1;
                changes
                    .nonce_changes
                    .push(NonceChange::new(index, account.nonce));
            }
            2 => {
                // Emptied: balance and nonce to zero (deleted if it has no code).
                account.balance = U256::ZERO;
                changes
                    .balance_changes
                    .push(BalanceChange::new(index, U256::ZERO));
                if account.nonce != 0 {
                    account.nonce = 0;
                    changes.nonce_changes.push(NonceChange::new(index, 0));
                }
            }
            3 => {
                let code = Bytes::from(rng.next().to_be_bytes().to_vec());
                account.code_hash = keccak256(&code);
                account.nonce = account.nonce.max(1);
                changes.code_changes.push(CodeChange::new(index, code));
                changes
                    .nonce_changes
                    .push(NonceChange::new(index, account.nonce));
            }
            _ => {
                // Storage: writes, deletions (mostly of existing slots) and reads.
                if account.code_hash == KECCAK_EMPTY {
                    account.nonce = account.nonce.max(1);
                    changes
                        .nonce_changes
                        .push(NonceChange::new(index, account.nonce));
                }
                let mut slots: Vec<U256> = Vec::new();
                for _ in 0..rng.below(30) + 1 {
                    let existing: Vec<U256> = account.storage.keys().copied().collect();
                    let slot = if !existing.is_empty() && rng.below(2) == 0 {
                        existing[rng.below(existing.len() as u64) as usize]
                    } else {
                        U256::from(rng.below(100))
                    };
                    if slots.contains(&slot) {
                        continue;
                    }
                    slots.push(slot);
                    let value = if rng.below(2) == 0 {
                        U256::ZERO
                    } else {
                        U256::from(rng.below(1000) + 1)
                    };
                    if account.storage.get(&slot).copied().unwrap_or_default() == value {
                        changes.storage_reads.push(slot);
                        continue;
                    }
                    if value.is_zero() {
                        account.storage.remove(&slot);
                    } else {
                        account.storage.insert(slot, value);
                    }
                    // An intermediate value first: the last change is the post-value.
                    changes.storage_changes.push(SlotChanges::new(
                        slot,
                        vec![
                            StorageChange::new(BlockAccessIndex::new(0), U256::from(5)),
                            StorageChange::new(index, value),
                        ],
                    ));
                }
            }
        }
        let empty =
            account.nonce == 0 && account.balance.is_zero() && account.code_hash == KECCAK_EMPTY;
        if empty {
            state.remove(&a);
        } else {
            state.insert(a, account);
        }
        bal.push(changes);
    }
    bal.sort_by_key(|c| c.address);
    bal
}

/// A generated state of 300 accounts and six blocks of 40 touched accounts over it, from
/// `seed`: the pre-state, the blocks' access lists and each block's full-trie root.
fn six_blocks(seed: u64) -> (FullState, Vec<BlockAccessList>, Vec<B256>) {
    let mut rng = Rng(seed);
    let pre = state(&mut rng, 300);
    let mut post = pre.clone();
    let mut bals = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..6 {
        bals.push(block(&mut rng, &mut post, 300, 40));
        expected.push(full_state_root(&post));
    }
    (pre, bals, expected)
}

#[test]
fn generated_blocks_roots_from_the_witness_equal_the_full_tries() {
    let (pre, bals, expected) = six_blocks(38);
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let rules = RootRules::SPURIOUS_DRAGON;
    let witness = witness_for_blocks(&pre, &refs, rules).unwrap();
    assert_eq!(witness.parent_state_root, full_state_root(&pre));

    let mut seq = StateTrie::from_witness(&witness).unwrap();
    let mut par = StateTrie::from_witness(&witness).unwrap();
    let mut split = StateTrie::from_witness(&witness).unwrap();
    for (i, bal) in bals.iter().enumerate() {
        assert_eq!(
            seq.apply_block(bal, rules).unwrap(),
            expected[i],
            "block {i}"
        );
        assert_eq!(par.apply_block_parallel(bal, rules).unwrap(), expected[i]);
        let mut job = split.prepare_block(bal, rules).unwrap();
        let mut tasks = job.storage_tasks();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.writes()));
        let results = std::thread::scope(|s| {
            let handles: Vec<_> = tasks
                .into_iter()
                .map(|t| s.spawn(move || t.run()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(job.finish(&mut split, results).unwrap(), expected[i]);
    }

    // Each node removed in turn (the first 40): a root is never wrong, and the error names
    // the missing node when the root cannot be computed.
    let mut missing = 0;
    for n in 0..witness.nodes.len().min(40) {
        let mut cut = witness.clone();
        cut.nodes.remove(n);
        let roots: Result<Vec<B256>, RootError> = StateTrie::from_witness(&cut)
            .and_then(|mut t| bals.iter().map(|b| t.apply_block(b, rules)).collect());
        match roots {
            Ok(roots) => assert_eq!(roots, expected),
            Err(e) => {
                missing += 1;
                let text = e.to_string();
                assert!(text.starts_with("root not computable: "), "{text}");
                assert!(!text.contains('\n'));
            }
        }
    }
    assert!(missing > 0);
}

/// The witness builder and the roots at a larger scale, timed (`cargo test --release -p
/// gigagas-trie --test synthetic -- --ignored --nocapture`): 20,000 accounts, 50 blocks
/// of 400 touched accounts each.
#[test]
#[ignore = "a timing, not a check the other tests lack"]
fn larger_scale_timed() {
    use std::time::Instant;
    let mut rng = Rng(7);
    let pre = state(&mut rng, 20_000);
    let mut post = pre.clone();
    let mut bals = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..50 {
        bals.push(block(&mut rng, &mut post, 20_000, 400));
    }
    let mut replay = pre.clone();
    let mut rng2 = Rng(7);
    let _ = state(&mut rng2, 20_000);
    for _ in 0..50 {
        let _ = block(&mut rng2, &mut replay, 20_000, 400);
        expected.push(full_state_root(&replay));
    }
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let rules = RootRules::SPURIOUS_DRAGON;
    let t = Instant::now();
    let witness = witness_for_blocks(&pre, &refs, rules).unwrap();
    let built = t.elapsed();
    let t = Instant::now();
    let mut trie = StateTrie::from_witness(&witness).unwrap();
    let opened = t.elapsed();
    let t = Instant::now();
    for (i, bal) in bals.iter().enumerate() {
        assert_eq!(trie.apply_block(bal, rules).unwrap(), expected[i]);
    }
    let seq = t.elapsed();
    let mut trie = StateTrie::from_witness(&witness).unwrap();
    let t = Instant::now();
    for (i, bal) in bals.iter().enumerate() {
        assert_eq!(trie.apply_block_parallel(bal, rules).unwrap(), expected[i]);
    }
    let par = t.elapsed();
    eprintln!(
        "20,000 accounts, 50 blocks: witness built in {built:?} ({} nodes, {} bytes); opened in {opened:?}; 50 roots sequential {seq:?}, parallel {par:?}",
        witness.nodes.len(),
        witness.node_bytes()
    );
}

/// The pre-state a dump of `bals` over `state` records: every account the lists name
/// (absent ones as such) and every slot they name, at `state`.
fn pre_state(state: &FullState, bals: &[BlockAccessList]) -> PreState {
    let mut pre = PreState::default();
    for changes in bals.iter().flat_map(|b| b.iter()) {
        let account = state.get(&changes.address);
        pre.accounts.push(PreAccount {
            address: changes.address,
            state: account.map(|a| AccountState {
                balance: a.balance,
                nonce: a.nonce,
                code_hash: a.code_hash,
            }),
        });
        let slots = changes.storage_changes.iter().map(|s| s.slot);
        for slot in slots.chain(changes.storage_reads.iter().copied()) {
            let value = account.and_then(|a| a.storage.get(&slot).copied());
            pre.storage.push(PreSlot {
                address: changes.address,
                slot,
                value: value.unwrap_or_default(),
            });
        }
    }
    pre.canonicalize();
    pre
}

/// Every block's root from `witness` on a trie that knows `pre` (or nothing, without it).
fn roots(
    witness: &Witness,
    pre: Option<&PreState>,
    bals: &[BlockAccessList],
) -> Result<Vec<B256>, RootError> {
    let mut trie = StateTrie::from_witness(witness)?;
    if let Some(pre) = pre {
        trie = trie.with_pre_values(PreValues::of_pre_state(pre));
    }
    bals.iter()
        .map(|b| trie.apply_block(b, RootRules::SPURIOUS_DRAGON))
        .collect()
}

/// The root-only witness of generated blocks gives every root the full witness gives,
/// with fewer nodes; each of its nodes is needed (removing any one makes a root "not
/// computable"); a trie that knows the pre-state gives the same roots from either.
#[test]
fn root_only_witness_gives_the_same_roots_and_needs_every_node() {
    let (pre, bals, expected) = six_blocks(45);
    let rules = RootRules::SPURIOUS_DRAGON;
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let witness = witness_for_blocks(&pre, &refs, rules).unwrap();
    let pre_state = pre_state(&pre, &bals);
    let root_only =
        root_only_witness(&witness, &pre_state, bals.iter().map(|b| (b, rules))).unwrap();
    assert!(
        root_only.nodes.len() < witness.nodes.len(),
        "{} of {}",
        root_only.nodes.len(),
        witness.nodes.len()
    );
    assert!(root_only.nodes.iter().all(|n| witness.nodes.contains(n)));
    assert_eq!(roots(&witness, None, &bals).unwrap(), expected);
    assert_eq!(roots(&witness, Some(&pre_state), &bals).unwrap(), expected);
    assert_eq!(
        roots(&root_only, Some(&pre_state), &bals).unwrap(),
        expected
    );
    // In parallel too.
    let mut par = StateTrie::from_witness(&root_only)
        .unwrap()
        .with_pre_values(PreValues::of_pre_state(&pre_state));
    for (bal, root) in bals.iter().zip(&expected) {
        assert_eq!(par.apply_block_parallel(bal, rules).unwrap(), *root);
    }
    for n in 0..root_only.nodes.len() {
        let mut cut = root_only.clone();
        cut.nodes.remove(n);
        let e = roots(&cut, Some(&pre_state), &bals).expect_err("every node is needed");
        let text = e.to_string();
        assert!(
            text.starts_with("root not computable: "),
            "node {n}: {text}"
        );
        assert!(!text.contains('\n'));
    }
}

/// An address whose path in the account trie leaves the root on another nibble than every
/// one of `others`: a witness of their paths holds no node of its path below the root.
fn apart(from: u64, others: &[Address]) -> Address {
    let first = |a: &Address| keccak256(a)[0] >> 4;
    (from..)
        .map(address)
        .find(|a| others.iter().all(|o| first(o) != first(a)))
        .expect("some address leaves the root elsewhere")
}

/// A block with a zero-value call to an address that does not exist (listed, no change),
/// an account only read, an account whose balance changes and changes back, and a
/// contract with one slot written back to its value and one slot changed: its root comes
/// from a witness of the changed paths alone (the changed account's, the contract's and
/// its changed slot's), which a trie that knows nothing of the pre-state cannot use.
#[test]
fn unchanged_reads_and_absent_touches_need_no_node() {
    let mut rng = Rng(7);
    let pre = state(&mut rng, 300);
    let index = |i: u64| BlockAccessIndex::new(i);
    // A funded account with no code, and a contract with two slots.
    let payer = address(1);
    let contract = (0..300)
        .step_by(4)
        .map(address)
        .find(|a| pre.get(a).is_some_and(|c| c.storage.len() >= 2))
        .expect("a contract with two slots");
    let slots: Vec<U256> = pre[&contract].storage.keys().copied().take(2).collect();
    let (back, changed) = (slots[0], slots[1]);
    let changed_value = pre[&contract].storage[&changed] + U256::from(1);
    // The untouched accounts, each on its own branch of the root.
    let missing = apart(10_000, &[payer, contract]);
    assert!(!pre.contains_key(&missing));
    let reader = (2..300)
        .map(address)
        .find(|a| {
            let other = [payer, contract, missing];
            pre.get(a).is_some_and(|x| x.code_hash == KECCAK_EMPTY)
                && other
                    .iter()
                    .all(|o| keccak256(o)[0] >> 4 != keccak256(a)[0] >> 4)
        })
        .expect("an account apart");
    let bouncer = (2..300)
        .map(address)
        .find(|a| {
            let other = [payer, contract, missing, reader];
            pre.get(a).is_some_and(|x| x.balance > U256::ZERO)
                && other
                    .iter()
                    .all(|o| keccak256(o)[0] >> 4 != keccak256(a)[0] >> 4)
        })
        .expect("an account apart");

    let mut bal = BlockAccessList::new();
    bal.push(AccountChanges::new(missing));
    let mut changes = AccountChanges::new(reader);
    changes.storage_reads.push(U256::from(3));
    bal.push(changes);
    let mut changes = AccountChanges::new(bouncer);
    let balance = pre[&bouncer].balance;
    changes
        .balance_changes
        .push(BalanceChange::new(index(1), U256::ZERO));
    changes
        .balance_changes
        .push(BalanceChange::new(index(2), balance));
    bal.push(changes);
    let mut changes = AccountChanges::new(payer);
    let paid = pre[&payer].balance + U256::from(1);
    changes
        .balance_changes
        .push(BalanceChange::new(index(1), paid));
    bal.push(changes);
    let mut changes = AccountChanges::new(contract);
    let was = pre[&contract].storage[&back];
    changes.storage_changes.push(SlotChanges::new(
        back,
        vec![
            StorageChange::new(index(1), was + U256::from(9)),
            StorageChange::new(index(2), was),
        ],
    ));
    changes.storage_changes.push(SlotChanges::new(
        changed,
        vec![StorageChange::new(index(1), changed_value)],
    ));
    changes.storage_reads.push(U256::from(99));
    bal.push(changes);
    bal.sort_by_key(|c| c.address);

    let mut after = pre.clone();
    after.get_mut(&payer).unwrap().balance = paid;
    after
        .get_mut(&contract)
        .unwrap()
        .storage
        .insert(changed, changed_value);
    let expected = full_state_root(&after);
    let bals = vec![bal];
    let pre_state = pre_state(&pre, &bals);
    let rules = RootRules::SPURIOUS_DRAGON;

    // The witness of the changed paths alone: the payer's, the contract's, its changed slot's.
    let mut only = AccountChanges::new(contract);
    only.storage_changes.push(SlotChanges::new(
        changed,
        vec![StorageChange::new(index(1), changed_value)],
    ));
    let mut changed_only: BlockAccessList = vec![AccountChanges::new(payer), only];
    changed_only.sort_by_key(|c| c.address);
    let narrow = witness_for_blocks(&pre, &[&changed_only], rules).unwrap();
    assert_eq!(
        roots(&narrow, Some(&pre_state), &bals).unwrap(),
        vec![expected]
    );
    // Without the pre-state every listed account is walked: the missing one's path is not
    // in the witness.
    let e = roots(&narrow, None, &bals).unwrap_err();
    assert!(matches!(e, RootError::MissingNode { .. }), "{e}");

    // The root-only witness of the producers' witness (every accessed path) is within the
    // narrow one and gives the same root.
    let full = witness_for_blocks(&pre, &[&bals[0]], rules).unwrap();
    let root_only = root_only_witness(&full, &pre_state, bals.iter().map(|b| (b, rules))).unwrap();
    assert!(root_only.nodes.iter().all(|n| narrow.nodes.contains(n)));
    assert!(root_only.nodes.len() < full.nodes.len());
    assert_eq!(
        roots(&root_only, Some(&pre_state), &bals).unwrap(),
        vec![expected]
    );
}

/// Nodes by trie and path, as a store keyed by path holds them.
struct ByPath(std::collections::BTreeMap<(Option<B256>, alloy_trie::Nibbles), Bytes>);

impl ByPath {
    fn of(witness: &Witness, bals: &[BlockAccessList]) -> Self {
        Self(
            gigagas_trie::nodes_by_path(witness, bals)
                .into_iter()
                .map(|n| ((n.owner, n.path), n.rlp))
                .collect(),
        )
    }
}

impl gigagas_trie::NodeReader for ByPath {
    type Error = std::convert::Infallible;

    fn read_nodes(
        &mut self,
        trie: gigagas_trie::TrieId,
        paths: &[alloy_trie::Nibbles],
        out: &mut Vec<Option<Bytes>>,
    ) -> Result<(), Self::Error> {
        let owner = trie.owner();
        out.extend(paths.iter().map(|p| self.0.get(&(owner, *p)).cloned()));
        Ok(())
    }
}

/// Nodes read by path as each block needs them, on a trie that starts with none, give
/// every root the witness in memory gives, from the full witness and from the root-only
/// one (which holds only what the roots need, deletions' siblings included): sequentially
/// and split into tasks. Every node read is one of the witness's, later blocks find nodes
/// earlier ones read, and no node is read twice.
#[test]
fn nodes_read_by_path_per_block_give_the_same_roots() {
    let (pre, bals, expected) = six_blocks(52);
    let rules = RootRules::SPURIOUS_DRAGON;
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let witness = witness_for_blocks(&pre, &refs, rules).unwrap();
    let pre_state = pre_state(&pre, &bals);
    let root_only =
        root_only_witness(&witness, &pre_state, bals.iter().map(|b| (b, rules))).unwrap();
    let lists = &bals;
    for (name, w) in [("full", &witness), ("root-only", &root_only)] {
        let by_path = ByPath::of(w, lists);
        assert!(by_path.0.len() >= w.nodes.len() / 2, "{name}");
        let values = PreValues::of_pre_state(&pre_state);
        let mut seq = StateTrie::unread(w.parent_state_root).with_pre_values(values.clone());
        let mut split = StateTrie::unread(w.parent_state_root).with_pre_values(values);
        let mut reader = ByPath::of(w, lists);
        let mut total = gigagas_trie::NodeReads::default();
        for (i, bal) in bals.iter().enumerate() {
            let (root, reads) = seq.apply_block_reading(bal, rules, &mut reader).unwrap();
            assert_eq!(root, expected[i], "{name}: block {i}");
            if i > 0 {
                assert!(reads.held > 0, "{name}: block {i} holds nodes: {reads:?}");
            }
            assert!(reads.read > 0 && reads.rounds > 0, "{name}: block {i}");
            total += reads;

            let mut reads = split.read_account_nodes(bal, rules, &mut reader).unwrap();
            let mut job = split.prepare_block(bal, rules).unwrap();
            let results = std::thread::scope(|s| {
                let handles: Vec<_> = job
                    .storage_tasks()
                    .into_iter()
                    .map(|mut t| {
                        s.spawn(move || {
                            let mut reader = ByPath::of(w, lists);
                            let reads = t.read_nodes(&mut reader).unwrap();
                            (reads, t.run())
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .map(|(r, result)| {
                        reads += r;
                        result
                    })
                    .collect()
            });
            assert_eq!(job.finish(&mut split, results).unwrap(), expected[i]);
        }
        // Each node is read once over the blocks (nodes stay open), so no more than the
        // witness holds by path.
        assert!(
            total.read <= by_path.0.len() as u64,
            "{name}: {total:?} of {}",
            by_path.0.len()
        );
        if name == "root-only" {
            // The root-only witness holds only what the roots need: each of its nodes is
            // read (the nodes under 32 bytes lie inside their parents).
            assert_eq!(total.read, by_path.0.len() as u64, "{total:?}");
        }
    }
}

/// Each block's root with the tries split into units under `rule` (every unit run on a
/// thread of its own, the account stage's too), on a trie over `witness`.
fn split_roots(witness: &Witness, bals: &[BlockAccessList], rule: SplitRule) -> Vec<B256> {
    let rules = RootRules::SPURIOUS_DRAGON;
    let mut trie = StateTrie::from_witness(witness).unwrap().with_split(rule);
    let mut roots = Vec::new();
    for bal in bals {
        let mut job = trie.prepare_block(bal, rules).unwrap();
        let results = std::thread::scope(|s| {
            let handles: Vec<_> = (job.storage_tasks().into_iter())
                .map(|t| s.spawn(move || t.run()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let tasks = job.account_tasks(&mut trie, results).unwrap();
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = tasks
                .into_iter()
                .map(|t| s.spawn(move || t.run()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        roots.push(job.finish_accounts(&mut trie, parts).unwrap());
    }
    roots
}

/// How many storage units and account units each block's tries are split into under
/// `rule`, and whether a storage trie was cut.
fn units(
    witness: &Witness,
    bals: &[BlockAccessList],
    rule: SplitRule,
) -> Vec<(usize, usize, bool)> {
    let rules = RootRules::SPURIOUS_DRAGON;
    let mut trie = StateTrie::from_witness(witness).unwrap().with_split(rule);
    let mut out = Vec::new();
    for bal in bals {
        let mut job = trie.prepare_block(bal, rules).unwrap();
        let tasks = job.storage_tasks();
        let cut = tasks.iter().any(|t| t.is_unit());
        let storage = tasks.len();
        let results = tasks.into_iter().map(StorageTask::run).collect();
        let account_tasks = job.account_tasks(&mut trie, results).unwrap();
        let accounts = account_tasks.len();
        let parts = account_tasks.into_iter().map(AccountTask::run).collect();
        job.finish_accounts(&mut trie, parts).unwrap();
        out.push((storage, accounts, cut));
    }
    out
}

/// Generated blocks on tries padded to depth (accounts at 1,000,000, so three levels of
/// full branches, and two contracts' storage at 100,000 slots), split into units at one,
/// two and three nibbles: every block's root equals the one the whole tries give, and the
/// cuts happen (the account trie in every block, a storage trie in some).
#[test]
fn padded_blocks_split_into_units_give_the_whole_roots() {
    let mut rng = Rng(62);
    let pre = state(&mut rng, 2_000);
    let mut post = pre.clone();
    let bals: Vec<BlockAccessList> = (0..4)
        .map(|_| block(&mut rng, &mut post, 2_000, 400))
        .collect();
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let padding = StatePadding::default()
        .with_accounts(Padding::accounts(1_000_000, 5).unwrap())
        .with_storage(address(0), Padding::storage(100_000, 6).unwrap())
        .with_storage(address(4), Padding::storage(100_000, 6).unwrap());
    let witness = FullTries::new(&pre, &padding)
        .unwrap()
        .witness(&refs, RootRules::SPURIOUS_DRAGON)
        .unwrap();
    let whole = split_roots(&witness, &bals, SplitRule::WHOLE);
    for rule in [
        SplitRule::DEFAULT,
        SplitRule {
            depth: 1,
            min_leaves: 1,
        },
        SplitRule {
            depth: 2,
            min_leaves: 3,
        },
        SplitRule {
            depth: 3,
            min_leaves: 1,
        },
    ] {
        assert_eq!(split_roots(&witness, &bals, rule), whole, "{rule:?}");
    }
    let fine = units(
        &witness,
        &bals,
        SplitRule {
            depth: 1,
            min_leaves: 1,
        },
    );
    assert!(
        fine.iter().all(|(_, accounts, _)| *accounts > 1),
        "{fine:?}"
    );
    assert!(fine.iter().any(|(_, _, cut)| *cut), "{fine:?}");
}

/// A rule that splits nothing gives today's units: one storage task per account whose
/// storage changes, none of them a unit, and the account trie whole (no account task), on
/// the generated blocks; the default rule, on blocks this small, splits nothing either.
#[test]
fn a_rule_that_splits_nothing_gives_one_task_per_storage_trie() {
    let (pre, bals, expected) = six_blocks(62);
    let refs: Vec<&BlockAccessList> = bals.iter().collect();
    let witness = witness_for_blocks(&pre, &refs, RootRules::SPURIOUS_DRAGON).unwrap();
    for rule in [SplitRule::WHOLE, SplitRule::DEFAULT] {
        let counts = units(&witness, &bals, rule);
        for (bal, (storage, accounts, cut)) in bals.iter().zip(counts) {
            assert_eq!((accounts, cut), (0, false), "{rule:?}");
            // At most one task per account listing slot changes (none where every slot
            // ends as it began).
            let listed = bal.iter().filter(|c| !c.storage_changes.is_empty()).count();
            assert!(storage <= listed && storage > 0, "{storage} of {listed}");
        }
        assert_eq!(split_roots(&witness, &bals, rule), expected);
    }
}
