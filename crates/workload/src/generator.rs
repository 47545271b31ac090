//! The block generator.

use crate::{
    contracts::{self, ICompute, INft, IPair, IPrecompiles, IToken},
    profile::{Profile, TxKindChoice, mix},
    trie_sizes::{TrieSizes, WorkloadContract},
};
use alloy_consensus::{
    EMPTY_OMMER_ROOT_HASH, Header, SignableTransaction, TxEip1559, TxEnvelope, proofs,
    transaction::Recovered,
};
use alloy_eips::{eip1559::BaseFeeParams, eip2935, eip4788, eip4895::Withdrawal, eip7002, eip7251};
use alloy_evm::{Evm, EvmFactory, block::BlockExecutionError, eth::EthEvmFactory};
use alloy_hardforks::EthereumHardfork;
use alloy_primitives::{Address, B256, Bytes, TxKind, U256, keccak256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{SolCall, SolValue};
use gigagas_chain::{BlockInput, ChainSpec};
use gigagas_dump::AccountState;
use gigagas_dump::{ChainConfig, ChainConfigError, Dump, DumpBlock, DumpMeta, ReceiptSummary};
use gigagas_record::{BlockRecorder, RecordError, RecordedBlock, touched_pre_state};
use gigagas_trie::{
    FullAccount, FullState, FullTries, Padding, PaddingError, RootRules, StatePadding,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use revm::{
    DatabaseCommit,
    context::{
        TxEnv,
        result::{EVMError, ExecutionResult, HaltReason},
    },
    database::{CacheDB, EmptyDB, State},
    state::{AccountInfo, Bytecode},
};
use std::{collections::BTreeMap, convert::Infallible};

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratorConfig {
    /// Workload profile.
    pub profile: Profile,
    /// Number of blocks in the dump.
    pub blocks: u64,
    /// Gas target per block: blocks stop once their gas used reaches it. In the
    /// adversarial profile the final large transaction is sized to reach it, within the
    /// accuracy of the generator's gas estimate (a few percent).
    pub gas_per_block: u64,
    /// Seed of the random choices; the same config gives the same dump.
    pub seed: u64,
    /// Fork whose rules apply (Cancun, Prague or Osaka).
    pub fork: EthereumHardfork,
    /// Number of funded user accounts that send transactions.
    pub users: usize,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The configuration cannot be generated.
    #[error("invalid generator configuration: {0}")]
    Config(#[from] ConfigError),
    /// A setup transaction (contract deployment, minting) failed.
    #[error("setup step `{step}` failed: {source}")]
    Setup {
        /// Which step.
        step: String,
        /// Why.
        #[source]
        source: SetupError,
    },
    /// Executing a generated block failed.
    #[error("block {block}: {source}")]
    Execution {
        /// Block number.
        block: u64,
        /// The executor's error.
        source: BlockExecutionError,
    },
    /// The witness of the generated blocks cannot be built from the genesis state (a bug:
    /// the generator holds the whole state).
    #[error("the witness of the generated blocks: {0}")]
    Witness(#[from] gigagas_trie::RootError),
}

/// A [`GeneratorConfig`] the generator cannot honour, naming the setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `blocks` is zero.
    #[error("at least one block is needed")]
    NoBlocks,
    /// `gas_per_block` is below 1,000,000 (too little for the setup's largest transactions).
    #[error("gas per block must be at least 1,000,000")]
    GasPerBlock,
    /// `users` is below two: a transfer needs a sender and another recipient.
    #[error("at least two users are needed")]
    TooFewUsers,
    /// A fork before Cancun or after Osaka.
    #[error("fork {0} is not supported by the generator (use Cancun, Prague or Osaka)")]
    UnsupportedFork(EthereumHardfork),
    /// The fork has no schedule with every fork up to it active from genesis.
    #[error("fork {0} cannot be scheduled")]
    Unschedulable(EthereumHardfork),
    /// The chain configuration built for the fork is not usable.
    #[error(transparent)]
    Chain(#[from] ChainConfigError),
    /// The state size to pad the account trie to is too small.
    #[error("state size: {0}")]
    StateSize(#[source] PaddingError),
    /// The slot count to pad a contract's storage trie to is too small.
    #[error("storage size of {contract}: {source}")]
    StorageSize {
        /// The contract.
        contract: WorkloadContract,
        /// Why.
        #[source]
        source: PaddingError,
    },
}

/// Why a setup transaction failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// revm refused the transaction (invalid nonce, gas, ...).
    #[error(transparent)]
    Evm(#[from] EVMError<Infallible>),
    /// The transaction ran but reverted or halted (the whole result, for its output).
    #[error("{0:?}")]
    Failed(Box<ExecutionResult<HaltReason>>),
    /// A deployment succeeded but created no contract.
    #[error("no contract created")]
    NoContract,
}

/// Chain id of generated chains.
pub(crate) const CHAIN_ID: u64 = 7928;
/// Number of the first generated block (high enough to have 256 predecessors).
pub(crate) const FIRST_BLOCK: u64 = 1_000_000;
/// Timestamp of the first generated block.
const FIRST_TIMESTAMP: u64 = 1_760_000_000;
const COINBASE: Address = Address::new([0xc0; 20]);
const DEPLOYER_KEY_TAG: &[u8] = b"gigagas-deployer";
const GWEI: u128 = 1_000_000_000;

/// The synthetic hash of a block before the generated range.
fn synthetic_hash(number: u64) -> B256 {
    keccak256([b"gigagas-block".as_slice(), &number.to_be_bytes()].concat())
}

fn key(tag: &[u8], seed: u64, index: u64) -> PrivateKeySigner {
    let mut n = 0u64;
    loop {
        let bytes = keccak256(
            [
                tag,
                &seed.to_be_bytes(),
                &index.to_be_bytes(),
                &n.to_be_bytes(),
            ]
            .concat(),
        );
        if let Ok(s) = PrivateKeySigner::from_bytes(&bytes) {
            return s;
        }
        n += 1;
    }
}

struct User {
    signer: PrivateKeySigner,
    address: Address,
    nonce: u64,
}

/// Addresses of the deployed workload contracts.
struct Deployed {
    token_a: Address,
    token_b: Address,
    pair: Address,
    nft: Address,
    compute: Address,
    precompiles: Address,
}

impl Deployed {
    /// The address of `contract`.
    fn address(&self, contract: WorkloadContract) -> Address {
        match contract {
            WorkloadContract::TokenA => self.token_a,
            WorkloadContract::TokenB => self.token_b,
            WorkloadContract::Pair => self.pair,
            WorkloadContract::Nft => self.nft,
            WorkloadContract::Compute => self.compute,
            WorkloadContract::Precompiles => self.precompiles,
        }
    }
}

fn setup_err(step: &str, source: impl Into<SetupError>) -> GenerateError {
    GenerateError::Setup {
        step: step.into(),
        source: source.into(),
    }
}

impl From<ExecutionResult<HaltReason>> for SetupError {
    fn from(result: ExecutionResult<HaltReason>) -> Self {
        SetupError::Failed(Box::new(result))
    }
}

/// Runs the deployer's setup transactions directly on revm (no block, no fees).
struct Setup<'a> {
    evm: alloy_evm::EthEvm<
        &'a mut CacheDB<EmptyDB>,
        revm::inspector::NoOpInspector,
        alloy_evm::precompiles::PrecompilesMap,
    >,
    deployer: Address,
    nonce: u64,
}

impl Setup<'_> {
    fn transact(
        &mut self,
        step: &str,
        kind: TxKind,
        data: Bytes,
        gas_limit: u64,
    ) -> Result<Option<Address>, GenerateError> {
        let tx = TxEnv {
            caller: self.deployer,
            kind,
            data,
            nonce: self.nonce,
            gas_limit,
            gas_price: 0,
            chain_id: Some(CHAIN_ID),
            ..Default::default()
        };
        self.nonce += 1;
        let res = self
            .evm
            .transact_commit(tx)
            .map_err(|e| setup_err(step, e))?;
        if !res.is_success() {
            return Err(setup_err(step, res));
        }
        Ok(res.created_address())
    }

    fn create(&mut self, step: &str, code: Bytes) -> Result<Address, GenerateError> {
        self.transact(step, TxKind::Create, code, 30_000_000)?
            .ok_or_else(|| setup_err(step, SetupError::NoContract))
    }

    fn call(&mut self, step: &str, to: Address, data: Vec<u8>) -> Result<(), GenerateError> {
        self.transact(step, TxKind::Call(to), data.into(), 30_000_000)
            .map(|_| ())
    }
}

/// Builds the genesis and runs the setup transactions directly on revm (they are not part
/// of the dump: their result is the dump's pre-state).
fn genesis(
    config: &GeneratorConfig,
    spec: &ChainSpec,
    users: &[User],
    deployer: Address,
) -> Result<(CacheDB<EmptyDB>, Deployed), GenerateError> {
    let mut db = CacheDB::new(EmptyDB::new());
    let rich = U256::from(10u128.pow(24)); // 1M ether
    for u in users {
        db.insert_account_info(
            u.address,
            AccountInfo {
                balance: rich,
                ..Default::default()
            },
        );
    }
    db.insert_account_info(
        deployer,
        AccountInfo {
            balance: rich,
            ..Default::default()
        },
    );
    let mut predeploys: Vec<(Address, &Bytes)> = Vec::new();
    if config.fork >= EthereumHardfork::Cancun {
        predeploys.push((eip4788::BEACON_ROOTS_ADDRESS, &eip4788::BEACON_ROOTS_CODE));
    }
    if config.fork >= EthereumHardfork::Prague {
        predeploys.push((
            eip2935::HISTORY_STORAGE_ADDRESS,
            &eip2935::HISTORY_STORAGE_CODE,
        ));
        predeploys.push((
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
            &eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_CODE,
        ));
        predeploys.push((
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
            &eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_CODE,
        ));
    }
    for (addr, code) in predeploys {
        let code = Bytecode::new_raw(code.clone());
        db.insert_account_info(
            addr,
            AccountInfo {
                nonce: 1,
                code_hash: code.hash_slow(),
                code: Some(code),
                ..Default::default()
            },
        );
    }
    for n in FIRST_BLOCK.saturating_sub(256)..FIRST_BLOCK {
        db.cache
            .block_hashes
            .insert(U256::from(n), synthetic_hash(n));
    }

    // Setup transactions, executed with the rules of the first block.
    let header = Header {
        number: FIRST_BLOCK - 1,
        timestamp: FIRST_TIMESTAMP - 12,
        gas_limit: 1 << 40,
        base_fee_per_gas: Some(0),
        excess_blob_gas: Some(0),
        ..Default::default()
    };
    let mut env = spec.evm_env(&header);
    env.cfg_env.tx_gas_limit_cap = Some(u64::MAX);
    let mut setup = Setup {
        evm: EthEvmFactory::default().create_evm(&mut db, env),
        deployer,
        nonce: 0,
    };
    let deployed = deploy_contracts(&mut setup)?;
    fund_users(&mut setup, users, &deployed, rich)?;
    drop(setup);
    Ok((db, deployed))
}

/// Deploy the workload's contracts from the deployer and seed the pair with liquidity.
fn deploy_contracts(setup: &mut Setup<'_>) -> Result<Deployed, GenerateError> {
    let deployer = setup.deployer;
    let token_a = setup.create("deploy token A", contracts::token_creation())?;
    let token_b = setup.create("deploy token B", contracts::token_creation())?;
    let pair_code = [
        contracts::pair_creation().as_ref(),
        &(token_a, token_b).abi_encode_params(),
    ]
    .concat();
    let pair = setup.create("deploy pair", pair_code.into())?;
    let nft = setup.create("deploy nft", contracts::nft_creation())?;
    let compute = setup.create("deploy compute", contracts::compute_creation())?;
    let precompiles = setup.create("deploy precompiles", contracts::precompiles_creation())?;
    let liquidity = U256::from(10u128.pow(30));
    for token in [token_a, token_b] {
        setup.call(
            "mint liquidity",
            token,
            IToken::mintCall {
                to: deployer,
                amount: liquidity,
            }
            .abi_encode(),
        )?;
        setup.call(
            "approve pair",
            token,
            IToken::approveCall {
                spender: pair,
                amount: U256::MAX,
            }
            .abi_encode(),
        )?;
    }
    setup.call(
        "add liquidity",
        pair,
        IPair::addLiquidityCall {
            a0: liquidity,
            a1: liquidity,
        }
        .abi_encode(),
    )?;

    Ok(Deployed {
        token_a,
        token_b,
        pair,
        nft,
        compute,
        precompiles,
    })
}

/// Give every user token balances and an allowance for the pair.
fn fund_users(
    setup: &mut Setup<'_>,
    users: &[User],
    deployed: &Deployed,
    rich: U256,
) -> Result<(), GenerateError> {
    let (token_a, token_b, pair) = (deployed.token_a, deployed.token_b, deployed.pair);
    // Users: token balances, and allowances for the pair. The approval's only effect that
    // matters is the allowance slot: users keep their genesis nonce and balance so every
    // user starts identical.
    for u in users {
        for token in [token_a, token_b] {
            let mint = IToken::mintCall {
                to: u.address,
                amount: U256::from(10u128.pow(27)),
            };
            setup.call("mint users", token, mint.abi_encode())?;
            let approve = TxEnv {
                caller: u.address,
                kind: TxKind::Call(token),
                data: IToken::approveCall {
                    spender: pair,
                    amount: U256::MAX,
                }
                .abi_encode()
                .into(),
                nonce: u.nonce,
                gas_limit: 1_000_000,
                chain_id: Some(CHAIN_ID),
                ..Default::default()
            };
            let r = setup
                .evm
                .transact(approve)
                .map_err(|e| setup_err("approve users", e))?;
            if !r.result.is_success() {
                return Err(setup_err("approve users", r.result));
            }
            let mut state = r.state;
            if let Some(acc) = state.get_mut(&u.address) {
                acc.info.nonce = 0;
                acc.info.balance = rich;
            }
            setup.evm.db_mut().commit(state);
        }
    }
    Ok(())
}

/// Generate a dump, without a witness (every header's state root left the empty trie's). `on_block(done,
/// total)` is called after every block.
pub fn generate(
    config: &GeneratorConfig,
    on_block: impl FnMut(u64, u64),
) -> Result<Dump, GenerateError> {
    generate_dump(config, Roots::Empty, on_block)
}

/// [`generate`], with the witness a state-root phase starts from and real state roots:
/// every block's header carries the root of the generator's whole state after the block
/// (the full tries of the genesis, kept by a [`FullTries`] and updated with what each block
/// wrote, so a block's root costs the paths it changes; the header hash, and so the next
/// block's parent hash and the EIP-2935 history, follow from it), and the segment's
/// [`gigagas_dump::Witness`] is [`FullTries::witness`] of the genesis for the blocks'
/// access lists (proofs of every touched account and slot, plus the siblings deletions
/// need). Deterministic like [`generate`]; the provenance records `witness = on`.
pub fn generate_with_witness(
    config: &GeneratorConfig,
    on_block: impl FnMut(u64, u64),
) -> Result<Dump, GenerateError> {
    generate_dump(config, Roots::Real(TrieSizes::default()), on_block)
}

/// [`generate_with_witness`] with the state's tries padded to the depth of larger ones
/// ([`Padding`]: ⌊log16 N⌋ levels of full branches): the account trie to that of a state
/// of `sizes.accounts` accounts (7 levels at mainnet's
/// [`gigagas_trie::MAINNET_ACCOUNTS`]), each contract of `sizes.storage` its storage trie
/// to that of its slot count (6 levels at [`gigagas_trie::MAINNET_LARGE_STORAGE`]). The
/// virtual leaves' key remainder is drawn from the config's seed. The headers carry the
/// padded tries' roots and the witness holds the padded paths: every touched account's or
/// padded contract's slot's path runs through full branches whose untouched children are
/// hashes. The transactions and access lists are those of the unpadded dump; the
/// provenance also records `state-size` and `storage-size` (`token-a=N,...`).
pub fn generate_with_padded_witness(
    config: &GeneratorConfig,
    sizes: &TrieSizes,
    on_block: impl FnMut(u64, u64),
) -> Result<Dump, GenerateError> {
    // Refused before the genesis is built (the contracts' addresses do not matter yet).
    state_padding(sizes, config.seed, |_| Address::ZERO)?;
    generate_dump(config, Roots::Real(sizes.clone()), on_block)
}

/// The padding of `sizes`: the account trie's, and each contract's storage trie's, the
/// contract at `address(contract)`.
fn state_padding(
    sizes: &TrieSizes,
    seed: u64,
    address: impl Fn(WorkloadContract) -> Address,
) -> Result<StatePadding, ConfigError> {
    let mut padding = StatePadding::default();
    if let Some(accounts) = sizes.accounts {
        padding = padding
            .with_accounts(Padding::accounts(accounts, seed).map_err(ConfigError::StateSize)?);
    }
    for (contract, slots) in &sizes.storage {
        let p = Padding::storage(*slots, seed).map_err(|source| ConfigError::StorageSize {
            contract: *contract,
            source,
        })?;
        padding = padding.with_storage(address(*contract), p);
    }
    Ok(padding)
}

/// Which state roots the headers carry.
#[derive(Debug, Clone)]
enum Roots {
    /// The empty trie's, and no witness.
    Empty,
    /// The state's, its tries padded to these sizes, and the witness.
    Real(TrieSizes),
}

/// The genesis in `pre_db` as a whole state.
fn genesis_state(pre_db: &CacheDB<EmptyDB>) -> FullState {
    pre_db
        .cache
        .accounts
        .iter()
        .filter(|(_, a)| a.account_state != revm::database::AccountState::NotExisting)
        .map(|(address, a)| {
            let account = FullAccount {
                nonce: a.info.nonce,
                balance: a.info.balance,
                code_hash: a.info.code_hash,
                storage: a
                    .storage
                    .iter()
                    .filter(|(_, v)| !v.is_zero())
                    .map(|(k, v)| (*k, *v))
                    .collect(),
            };
            (*address, account)
        })
        .collect()
}

/// Updates `tries` with the accounts and slots of the block whose access list is `bal`,
/// their values read from revm's `state` after the block: an account revm holds no longer
/// is deleted; one whose storage revm knows whole (created or destroyed) gets that storage;
/// otherwise the slots the list names take revm's values.
fn update_tries(
    tries: &mut FullTries,
    state: &State<CacheDB<EmptyDB>>,
    bal: &alloy_eip7928::BlockAccessList,
) -> Result<(), gigagas_trie::RootError> {
    for changes in bal {
        let address = changes.address;
        let Some(cached) = state.cache.accounts.get(&address) else {
            continue;
        };
        let Some(plain) = &cached.account else {
            tries.set_account(address, None);
            continue;
        };
        tries.set_account(
            address,
            Some(AccountState {
                balance: plain.info.balance,
                nonce: plain.info.nonce,
                code_hash: plain.info.code_hash,
            }),
        );
        if cached.status.is_storage_known() {
            tries.clear_storage(address);
            for (slot, value) in &plain.storage {
                tries.set_slot(address, *slot, *value)?;
            }
        } else {
            let slots = changes
                .storage_changes
                .iter()
                .map(|s| s.slot)
                .chain(changes.storage_reads.iter().copied());
            for slot in slots {
                if let Some(value) = plain.storage.get(&slot) {
                    tries.set_slot(address, slot, *value)?;
                }
            }
        }
    }
    Ok(())
}

/// The whole state `state` holds: the genesis in `pre_db` overlaid with every account revm's
/// cache holds after the blocks so far (an account whose storage revm knows whole, created
/// or destroyed, replaces the genesis's storage; otherwise its cached slots override). The
/// reference the incremental roots are checked against in tests.
#[cfg(test)]
fn full_state(pre_db: &CacheDB<EmptyDB>, state: &State<CacheDB<EmptyDB>>) -> FullState {
    let mut full = genesis_state(pre_db);
    for (address, cached) in &state.cache.accounts {
        let Some(plain) = &cached.account else {
            full.remove(address);
            continue;
        };
        let entry = full.entry(*address).or_default();
        if cached.status.is_storage_known() {
            entry.storage.clear();
        }
        entry.nonce = plain.info.nonce;
        entry.balance = plain.info.balance;
        entry.code_hash = plain.info.code_hash;
        for (slot, value) in &plain.storage {
            if value.is_zero() {
                entry.storage.remove(slot);
            } else {
                entry.storage.insert(*slot, *value);
            }
        }
    }
    full
}

fn generate_dump(
    config: &GeneratorConfig,
    roots: Roots,
    on_block: impl FnMut(u64, u64),
) -> Result<Dump, GenerateError> {
    generate_checked(config, roots, on_block, |_, _, _| {})
}

/// [`generate_dump`], calling `check(pre_db, state, root)` after every block whose header
/// got a real root (tests compare it with a whole-state root).
fn generate_checked(
    config: &GeneratorConfig,
    roots: Roots,
    mut on_block: impl FnMut(u64, u64),
    mut check: impl FnMut(&CacheDB<EmptyDB>, &State<CacheDB<EmptyDB>>, B256),
) -> Result<Dump, GenerateError> {
    check_config(config)?;
    let chain = ChainConfig::all_active_from_genesis(CHAIN_ID, config.fork)
        .ok_or(ConfigError::Unschedulable(config.fork))?;
    let spec = ChainSpec::from_config(&chain).map_err(ConfigError::from)?;

    let mut users: Vec<User> = (0..config.users as u64)
        .map(|i| {
            let signer = key(b"gigagas-user", config.seed, i);
            User {
                address: signer.address(),
                signer,
                nonce: 0,
            }
        })
        .collect();
    let deployer = key(DEPLOYER_KEY_TAG, config.seed, 0).address();
    let (pre_db, deployed) = genesis(config, &spec, &users, deployer)?;
    // With real roots, the tries' padding.
    let real: Option<(TrieSizes, StatePadding)> = match roots {
        Roots::Empty => None,
        Roots::Real(sizes) => {
            let padding = state_padding(&sizes, config.seed, |c| deployed.address(c))?;
            Some((sizes, padding))
        }
    };
    // The genesis's tries, updated block by block for the headers' roots.
    let mut tries = real
        .as_ref()
        .map(|(_, padding)| FullTries::new(&genesis_state(&pre_db), padding))
        .transpose()?;

    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut state = State::builder()
        .with_database(pre_db.clone())
        .with_bal_builder()
        .build();
    let gas_limit = (config.gas_per_block * 2).max(60_000_000);
    let mut txgen = TxGen {
        rng: &mut rng,
        deployed: &deployed,
        profile: config.profile,
        // Per-unit gas of loop functions, refined from observed receipts.
        per_unit: BTreeMap::new(),
        fresh: 0,
        tx_cap: if config.fork >= EthereumHardfork::Osaka {
            1 << 24
        } else {
            gas_limit
        },
    };

    let mut blocks = Vec::with_capacity(config.blocks as usize);
    let mut parent_hash = synthetic_hash(FIRST_BLOCK - 1);
    let mut base_fee: u64 = GWEI as u64;
    for i in 0..config.blocks {
        let withdrawals = synthetic_withdrawals(i);
        let mut header = unsealed_header(i, parent_hash, gas_limit, base_fee, &withdrawals);
        let input = BlockInput {
            header: &header,
            transactions: &[],
            withdrawals: Some(&withdrawals),
            ommers: &[],
            headerless_ommers: 0,
        };
        let mut recorder =
            BlockRecorder::start(&mut state, &spec, input).map_err(execution_error)?;
        let txs = fill_block(&mut recorder, &mut txgen, &mut users, config, gas_limit)?;
        let recorded = recorder.finish().map_err(execution_error)?;
        let (receipts, bal) = seal_header(&mut header, recorded, &txs, config.fork);
        if let Some(tries) = &mut tries {
            update_tries(tries, &state, &bal)?;
            header.state_root = tries.root()?;
            check(&pre_db, &state, header.state_root);
        }
        parent_hash = header.hash_slow();
        state.block_hashes.insert(header.number, parent_hash);
        base_fee = header
            .next_block_base_fee(BaseFeeParams::ethereum())
            .expect("base fee is set");
        blocks.push(DumpBlock {
            header,
            transactions: txs,
            withdrawals,
            receipts,
            ommers: Vec::new(),
            headerless_ommers: 0,
            access_list: bal,
        });
        on_block(i + 1, config.blocks);
    }

    let pre_state = touched_pre_state(blocks.iter().map(|b| &b.access_list), &pre_db)
        .expect("the in-memory genesis answers every read");
    let block_hashes = (FIRST_BLOCK - 256..FIRST_BLOCK)
        .map(|n| (n, synthetic_hash(n)))
        .collect();
    let mut provenance = provenance(config);
    drop(tries);
    let witness = match real {
        None => None,
        Some((sizes, padding)) => {
            provenance.insert("witness".to_string(), "on".to_string());
            if let Some(accounts) = sizes.accounts {
                provenance.insert("state-size".to_string(), accounts.to_string());
            }
            if !sizes.storage.is_empty() {
                provenance.insert("storage-size".to_string(), sizes.storage_provenance());
            }
            let lists: Vec<&alloy_eip7928::BlockAccessList> =
                blocks.iter().map(|b| &b.access_list).collect();
            let genesis = FullTries::new(&genesis_state(&pre_db), &padding)?;
            Some(genesis.witness(&lists, RootRules::SPURIOUS_DRAGON)?)
        }
    };
    let mut dump = Dump::single_segment(
        DumpMeta {
            name: config.profile.name().to_string(),
            provenance,
            chain,
        },
        blocks,
        block_hashes,
        pre_state,
    );
    dump.segments[0].witness = witness;
    Ok(dump)
}

/// Refuse a configuration the generator cannot honour, naming the setting.
fn check_config(config: &GeneratorConfig) -> Result<(), GenerateError> {
    if config.blocks == 0 {
        return Err(ConfigError::NoBlocks.into());
    }
    if config.gas_per_block < 1_000_000 {
        return Err(ConfigError::GasPerBlock.into());
    }
    if config.users < 2 {
        return Err(ConfigError::TooFewUsers.into());
    }
    if !matches!(
        config.fork,
        EthereumHardfork::Cancun | EthereumHardfork::Prague | EthereumHardfork::Osaka
    ) {
        return Err(ConfigError::UnsupportedFork(config.fork).into());
    }
    Ok(())
}

/// A recording failure as the generator reports it.
fn execution_error(e: RecordError) -> GenerateError {
    GenerateError::Execution {
        block: e.block,
        source: e.source,
    }
}

/// The four withdrawals of the `i`-th generated block (64 rotating validators).
fn synthetic_withdrawals(i: u64) -> Vec<Withdrawal> {
    (0..4u64)
        .map(|w| Withdrawal {
            index: i * 4 + w,
            validator_index: (i * 4 + w) % 64,
            address: Address::left_padding_from(&(0xbeef_0000u64 + (i * 4 + w) % 64).to_be_bytes()),
            amount: 10_000_000 + (i * 4 + w) * 1_000,
        })
        .collect()
}

/// The header of the `i`-th generated block before execution: everything but what the
/// execution decides (gas used, roots, bloom, requests and access-list hashes).
fn unsealed_header(
    i: u64,
    parent_hash: B256,
    gas_limit: u64,
    base_fee: u64,
    withdrawals: &[Withdrawal],
) -> Header {
    let number = FIRST_BLOCK + i;
    Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: COINBASE,
        number,
        gas_limit,
        timestamp: FIRST_TIMESTAMP + 12 * i,
        extra_data: Bytes::from_static(b"gigagas"),
        mix_hash: keccak256([b"randao".as_slice(), &number.to_be_bytes()].concat()),
        base_fee_per_gas: Some(base_fee),
        withdrawals_root: Some(proofs::calculate_withdrawals_root(withdrawals)),
        blob_gas_used: Some(0),
        excess_blob_gas: Some(0),
        parent_beacon_block_root: Some(keccak256(
            [b"beacon".as_slice(), &number.to_be_bytes()].concat(),
        )),
        ..Default::default()
    }
}

/// Sign and execute transactions of the profile's mix until the block reaches its gas
/// target: each transaction is chosen, sized from the previous receipts, signed by a
/// random user and executed before the next is chosen.
fn fill_block<DB: alloy_evm::Database>(
    recorder: &mut BlockRecorder<'_, DB>,
    txgen: &mut TxGen<'_>,
    users: &mut [User],
    config: &GeneratorConfig,
    gas_limit: u64,
) -> Result<Vec<Recovered<TxEnvelope>>, GenerateError> {
    let mut txs: Vec<Recovered<TxEnvelope>> = Vec::new();
    let mut used = 0u64;
    let target = config.gas_per_block;
    // Adversarial: half the block in small transactions, then one that takes the rest.
    let big_last = config.profile == Profile::Adversarial;
    let small_target = if big_last { target / 2 } else { target };
    let mut heavy_budget = if config.profile == Profile::HeavyTail {
        target / 2
    } else {
        0
    };
    loop {
        let remaining = gas_limit - used;
        let choice = if used >= small_target {
            if big_last && txs.last().map(|_| true).unwrap_or(true) && used < target {
                TxKindChoice::Heavy((target - used).min(txgen.tx_cap - 100_000))
            } else {
                break;
            }
        } else if heavy_budget > 0 && txgen.rng.random_ratio(1, 20) {
            let g = (heavy_budget)
                .min(txgen.rng.random_range(2_000_000..=6_000_000))
                .max(500_000);
            heavy_budget = heavy_budget.saturating_sub(g);
            TxKindChoice::Heavy(g.min(txgen.tx_cap - 100_000))
        } else {
            txgen.pick()
        };
        let user_index = txgen.rng.random_range(0..users.len());
        let (call, gas_limit_tx, unit) = txgen.build(choice, users, user_index, remaining);
        let user = &mut users[user_index];
        let tx = TxEip1559 {
            chain_id: CHAIN_ID,
            nonce: user.nonce,
            gas_limit: gas_limit_tx,
            max_fee_per_gas: 100 * GWEI,
            max_priority_fee_per_gas: txgen.rng.random_range(GWEI / 10..=2 * GWEI),
            to: call.0,
            value: call.1,
            access_list: Default::default(),
            input: call.2,
        };
        let sig = user
            .signer
            .sign_hash_sync(&tx.signature_hash())
            .expect("signing with a local key cannot fail");
        let envelope: TxEnvelope = tx.into_signed(sig).into();
        let recovered = Recovered::new_unchecked(envelope, user.address);
        let gas = recorder.execute(&recovered).map_err(execution_error)?;
        user.nonce += 1;
        used += gas;
        if let Some((kind, units)) = unit {
            txgen.observe(kind, units, gas);
        }
        txs.push(recovered);
        if big_last && matches!(choice, TxKindChoice::Heavy(_)) {
            break;
        }
    }
    Ok(txs)
}

/// Fill in what the execution decided: gas used, transactions and receipts roots, bloom,
/// and from Prague the requests hash and the access list's hash. Returns the receipt
/// summaries and the access list.
fn seal_header(
    header: &mut Header,
    recorded: RecordedBlock,
    txs: &[Recovered<TxEnvelope>],
    fork: EthereumHardfork,
) -> (Vec<ReceiptSummary>, alloy_eip7928::BlockAccessList) {
    header.gas_used = recorded.result.gas_used;
    header.transactions_root = proofs::calculate_transaction_root(
        &txs.iter().map(|t| t.inner().clone()).collect::<Vec<_>>(),
    );
    header.receipts_root = recorded.receipts_root();
    header.logs_bloom = recorded.logs_bloom();
    if fork >= EthereumHardfork::Prague {
        header.requests_hash = Some(recorded.result.requests.requests_hash());
    }
    let receipts = recorded.receipt_summaries();
    let bal = recorded.access_list;
    if fork >= EthereumHardfork::Prague {
        // Header fields are positional: the BAL hash can only follow a requests hash.
        header.block_access_list_hash = Some(alloy_eip7928::compute_block_access_list_hash(&bal));
    }
    (receipts, bal)
}

/// How the dump was made, stored in its meta: enough to regenerate it byte for byte.
fn provenance(config: &GeneratorConfig) -> BTreeMap<String, String> {
    [
        ("source", "gigagas generate".to_string()),
        ("profile", config.profile.name().to_string()),
        ("seed", config.seed.to_string()),
        ("blocks", config.blocks.to_string()),
        ("gas-per-block", config.gas_per_block.to_string()),
        ("fork", config.fork.name().to_string()),
        ("users", config.users.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Draws transactions for a profile.
struct TxGen<'a> {
    rng: &'a mut ChaCha8Rng,
    deployed: &'a Deployed,
    profile: Profile,
    /// Measured gas of the compute loops (`Keccak`, `Arith`, `Store`): (base, per unit).
    per_unit: BTreeMap<TxKindChoice, (u64, u64)>,
    fresh: u64,
    tx_cap: u64,
}

/// (to, value, input)
type Call = (TxKind, U256, Bytes);

impl TxGen<'_> {
    fn pick(&mut self) -> TxKindChoice {
        let table = mix(self.profile);
        let total: u32 = table.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.random_range(0..total);
        for (k, w) in table {
            if x < *w {
                return match k {
                    TxKindChoice::Heavy(_) => {
                        TxKindChoice::Heavy(self.rng.random_range(1_500_000..=6_000_000))
                    }
                    other => *other,
                };
            }
            x -= w;
        }
        unreachable!("weights cover the range")
    }

    /// Estimated gas of one unit of a loop function: (base, per unit).
    fn estimate(&self, kind: TxKindChoice, default: (u64, u64)) -> (u64, u64) {
        self.per_unit.get(&kind).copied().unwrap_or(default)
    }

    /// Learn a loop's gas per unit from a large call (where the fixed part is negligible).
    fn observe(&mut self, kind: TxKindChoice, units: u64, gas: u64) {
        if units >= 1_000 {
            let base = self.per_unit.get(&kind).map(|e| e.0).unwrap_or(30_000);
            let per = gas.saturating_sub(base) / units;
            if per > 0 {
                self.per_unit.insert(kind, (base, per));
            }
        }
    }

    fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
        (self.rng.random_range(l..h)).exp() as u64
    }

    /// A loop call sized to about `gas`; returns the call, its gas limit and the units.
    fn sized(
        &mut self,
        kind: TxKindChoice,
        default: (u64, u64),
        gas: u64,
        remaining: u64,
    ) -> (u64, u64) {
        let (base, per) = self.estimate(kind, default);
        let gas = gas
            .min(remaining.saturating_sub(100_000))
            .min(self.tx_cap - 100_000);
        let units = (gas.saturating_sub(base) / per.max(1)).max(1);
        let limit = (base + units * per) * 3 / 2 + 50_000;
        (units, limit.min(remaining).min(self.tx_cap))
    }

    /// A compute-contract loop call sized to about `gas`.
    fn sized_call(
        &mut self,
        kind: TxKindChoice,
        gas: u64,
        remaining: u64,
    ) -> (Call, u64, Option<(TxKindChoice, u64)>) {
        // Each loop's gas per unit until one is measured, and its call.
        let (kind, default, encode): (_, _, fn(U256) -> Vec<u8>) = match kind {
            TxKindChoice::Keccak => (kind, (30_000, 120), |rounds| {
                ICompute::keccakLoopCall { rounds }.abi_encode()
            }),
            TxKindChoice::Arith => (kind, (30_000, 110), |rounds| {
                ICompute::arithLoopCall { rounds }.abi_encode()
            }),
            _ => (TxKindChoice::Store, (50_000, 22_500), |slots| {
                ICompute::storeLoopCall { slots }.abi_encode()
            }),
        };
        let (units, limit) = self.sized(kind, default, gas, remaining);
        let data = Bytes::from(encode(U256::from(units)));
        (
            (TxKind::Call(self.deployed.compute), U256::ZERO, data),
            limit,
            Some((kind, units)),
        )
    }

    fn build(
        &mut self,
        choice: TxKindChoice,
        users: &[User],
        from: usize,
        remaining: u64,
    ) -> (Call, u64, Option<(TxKindChoice, u64)>) {
        let d = self.deployed;
        let other = {
            let mut j = self.rng.random_range(0..users.len());
            if j == from {
                j = (j + 1) % users.len();
            }
            users[j].address
        };
        let call = |to: Address, data: Vec<u8>| (TxKind::Call(to), U256::ZERO, Bytes::from(data));
        match choice {
            TxKindChoice::EthTransfer => {
                let v = U256::from(self.rng.random_range(1u64..1_000_000_000_000_000));
                ((TxKind::Call(other), v, Bytes::new()), 21_000, None)
            }
            TxKindChoice::EthToFresh => {
                self.fresh += 1;
                let to = Address::from_word(keccak256(
                    [b"fresh".as_slice(), &self.fresh.to_be_bytes()].concat(),
                ));
                (
                    (TxKind::Call(to), U256::from(10u64.pow(15)), Bytes::new()),
                    21_000,
                    None,
                )
            }
            TxKindChoice::Erc20Transfer => {
                let token = if self.rng.random_bool(0.5) {
                    d.token_a
                } else {
                    d.token_b
                };
                let amount = U256::from(self.rng.random_range(1u64..10u64.pow(18)));
                (
                    call(
                        token,
                        IToken::transferCall { to: other, amount }.abi_encode(),
                    ),
                    80_000,
                    None,
                )
            }
            TxKindChoice::Swap => {
                let amount = U256::from(self.rng.random_range(10u64.pow(15)..10u64.pow(19)));
                let zero_for_one = self.rng.random_bool(0.5);
                let data = IPair::swapCall {
                    amountIn: amount,
                    zeroForOne: zero_for_one,
                    minOut: U256::ZERO,
                }
                .abi_encode();
                (call(d.pair, data), 200_000, None)
            }
            TxKindChoice::NftMint => {
                let count = self.rng.random_range(1u64..=5);
                (
                    call(
                        d.nft,
                        INft::mintCall {
                            count: U256::from(count),
                        }
                        .abi_encode(),
                    ),
                    150_000 * count + 60_000,
                    None,
                )
            }
            TxKindChoice::Deploy => (
                (TxKind::Create, U256::ZERO, contracts::token_creation()),
                2_000_000,
                None,
            ),
            TxKindChoice::Heavy(g) => {
                // The heavy tail mixes the three kinds of big transactions.
                let kind = match self.rng.random_range(0..3) {
                    0 => TxKindChoice::Keccak,
                    1 => TxKindChoice::Arith,
                    _ => TxKindChoice::Store,
                };
                self.sized_call(kind, g, remaining)
            }
            TxKindChoice::Keccak | TxKindChoice::Arith => {
                let g = self.log_uniform(40_000, 1_000_000);
                self.sized_call(choice, g, remaining)
            }
            TxKindChoice::Store => {
                let g = self.log_uniform(60_000, 1_000_000);
                self.sized_call(choice, g, remaining)
            }
            TxKindChoice::Memory => {
                // Memory cost is quadratic: size the limit from the EVM's formula.
                let words = self.rng.random_range(64u64..=4_096);
                let limit = 60_000 + words * 120 + words * words / 512 * 2;
                let data = ICompute::memoryHeavyCall {
                    words: U256::from(words),
                }
                .abi_encode();
                (call(d.compute, data), limit.min(remaining), None)
            }
            TxKindChoice::Ecrecover
            | TxKindChoice::Sha256
            | TxKindChoice::Pairing
            | TxKindChoice::Modexp
            | TxKindChoice::PointEvaluation => self.precompile_call(choice),
        }
    }

    /// A call of the precompile-user contract: `n` calls of one precompile in a loop, with
    /// a gas limit sized from the precompile's price.
    fn precompile_call(
        &mut self,
        choice: TxKindChoice,
    ) -> (Call, u64, Option<(TxKindChoice, u64)>) {
        let (data, gas) = match choice {
            TxKindChoice::Ecrecover => {
                let n = self.rng.random_range(1u64..=30);
                (
                    IPrecompiles::ecrecoverLoopCall { n: U256::from(n) }.abi_encode(),
                    60_000 + n * 6_000,
                )
            }
            TxKindChoice::Sha256 => {
                let n = self.rng.random_range(1u64..=200);
                (
                    IPrecompiles::sha256LoopCall { n: U256::from(n) }.abi_encode(),
                    60_000 + n * 1_000,
                )
            }
            TxKindChoice::Pairing => {
                let n = self.rng.random_range(1u64..=3);
                (
                    IPrecompiles::pairingCall { n: U256::from(n) }.abi_encode(),
                    80_000 + n * 130_000,
                )
            }
            TxKindChoice::Modexp => {
                let n = self.rng.random_range(1u64..=50);
                (
                    IPrecompiles::modexpCallCall { n: U256::from(n) }.abi_encode(),
                    80_000 + n * 3_000,
                )
            }
            TxKindChoice::PointEvaluation => {
                let data = IPrecompiles::pointEvaluationCall {
                    input: contracts::point_evaluation_input(),
                }
                .abi_encode();
                (data, 150_000)
            }
            _ => unreachable!("only precompile kinds are passed here"),
        };
        let to = TxKind::Call(self.deployed.precompiles);
        ((to, U256::ZERO, Bytes::from(data)), gas, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gigagas_trie::full_state_root;

    /// The roots the kept tries give equal the whole state's rebuilt from revm's cache with
    /// alloy-trie's hash builder, block after block, for every profile and fork.
    #[test]
    fn kept_tries_give_the_whole_states_root() {
        for profile in Profile::ALL {
            for fork in [
                EthereumHardfork::Cancun,
                EthereumHardfork::Prague,
                EthereumHardfork::Osaka,
            ] {
                let config = GeneratorConfig {
                    profile,
                    blocks: 4,
                    gas_per_block: 3_000_000,
                    seed: 11,
                    fork,
                    users: 40,
                };
                let mut checked = 0;
                generate_checked(
                    &config,
                    Roots::Real(TrieSizes::default()),
                    |_, _| {},
                    |pre, state, root| {
                        assert_eq!(
                            root,
                            full_state_root(&full_state(pre, state)),
                            "{profile:?} {fork}, block {checked}"
                        );
                        checked += 1;
                    },
                )
                .unwrap_or_else(|e| panic!("{profile:?} {fork}: {e}"));
                assert_eq!(checked, 4);
            }
        }
    }
}
