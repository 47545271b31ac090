//! Executing one block with the access-list builder, and checking it against its header.

use alloy_consensus::{
    Header, ReceiptEnvelope, Transaction, TxEnvelope, TxReceipt, proofs, transaction::Recovered,
};
use alloy_eip7928::BlockAccessList;
use alloy_eips::eip4844::DATA_GAS_PER_BLOB;
use alloy_evm::{
    Evm, EvmFactory,
    block::{BlockExecutionError, BlockExecutionResult, BlockExecutor},
    eth::{EthBlockExecutor, EthEvm, EthEvmFactory, receipt_builder::AlloyReceiptBuilder},
    precompiles::PrecompilesMap,
};
use alloy_hardforks::EthereumHardforks;
use alloy_primitives::{B256, Bloom};
use gigagas_chain::{
    BlockInput, BlockStage, ChainSpec, Expected, HeaderMismatch, execution_ctx,
    install_kzg_verifier, pay_headerless_ommer_share,
};
use gigagas_dump::ReceiptSummary;
use revm::{
    database::State,
    inspector::NoOpInspector,
    state::bal::{Bal, BlockAccessIndex},
};

/// A block that did not execute.
#[derive(Debug, thiserror::Error)]
#[error("block {block}, {stage}: {source}")]
pub struct RecordError {
    /// Block number.
    pub block: u64,
    /// Where it failed.
    pub stage: BlockStage,
    /// alloy-evm's error (invalid transaction, database error, system call failure).
    pub source: BlockExecutionError,
}

/// An executed block: alloy-evm's result (receipts, requests, gas) and the access list
/// revm's builder recorded, one entry per block access index (0 = pre-block, i + 1 = tx i,
/// n + 1 = post-block).
#[derive(Debug)]
pub struct RecordedBlock {
    /// Receipts, requests and gas used.
    pub result: BlockExecutionResult<ReceiptEnvelope>,
    /// The block's EIP-7928 access list, as revm built it.
    pub access_list: BlockAccessList,
}

impl RecordedBlock {
    /// Per-transaction gas and status, as a dump stores them.
    pub fn receipt_summaries(&self) -> Vec<ReceiptSummary> {
        let mut prev = 0u64;
        self.result
            .receipts
            .iter()
            .map(|r| {
                let cumulative = r.cumulative_gas_used();
                let s = ReceiptSummary {
                    success: r.status(),
                    gas_used: cumulative - prev,
                    cumulative_gas_used: cumulative,
                    logs: r.logs().len() as u64,
                };
                prev = cumulative;
                s
            })
            .collect()
    }

    /// Root of the receipts trie (status receipts: meaningful from Byzantium on).
    pub fn receipts_root(&self) -> B256 {
        proofs::calculate_receipt_root(&self.result.receipts)
    }

    /// The block's logs bloom.
    pub fn logs_bloom(&self) -> Bloom {
        self.result
            .receipts
            .iter()
            .fold(Bloom::ZERO, |b, r| b | r.bloom())
    }

    /// Compare with what the header commits to, in this order: `gasUsed`, `blobGasUsed`,
    /// `logsBloom`, `receiptsRoot` (from Byzantium on: before it receipts carry an
    /// intermediate state root), `requestsHash`, `blockAccessListHash`. The first
    /// difference is returned.
    pub fn check_header(&self, spec: &ChainSpec, header: &Header) -> Result<(), HeaderMismatch> {
        self.check_execution(spec, header)?;
        if let Some(expected) = header.block_access_list_hash {
            let got = alloy_eip7928::compute_block_access_list_hash(&self.access_list);
            HeaderMismatch::check(HeaderMismatch::BlockAccessListHash, expected, got)?;
        }
        Ok(())
    }

    /// [`Self::check_header`] without the access list: the fields that only depend on how
    /// the transactions executed (gas, blob gas, bloom, receipts, requests).
    pub fn check_execution(&self, spec: &ChainSpec, header: &Header) -> Result<(), HeaderMismatch> {
        HeaderMismatch::check(
            HeaderMismatch::GasUsed,
            header.gas_used,
            self.result.gas_used,
        )?;
        if let Some(expected) = header.blob_gas_used {
            let got = self.result.blob_gas_used;
            HeaderMismatch::check(HeaderMismatch::BlobGasUsed, expected, got)?;
        }
        let bloom = self.logs_bloom();
        if bloom != header.logs_bloom {
            return Err(HeaderMismatch::LogsBloom(Box::new(Expected::new(
                header.logs_bloom,
                bloom,
            ))));
        }
        if spec.is_byzantium_active_at_block(header.number) {
            let root = self.receipts_root();
            HeaderMismatch::check(HeaderMismatch::ReceiptsRoot, header.receipts_root, root)?;
        }
        if let Some(expected) = header.requests_hash {
            let got = self.result.requests.requests_hash();
            HeaderMismatch::check(HeaderMismatch::RequestsHash, expected, got)?;
        }
        Ok(())
    }
}

type RecordingEvm<'s, DB> = EthEvm<&'s mut State<DB>, NoOpInspector, PrecompilesMap>;

/// A block being executed transaction by transaction with the access-list builder on.
///
/// For producers that decide the next transaction from the previous one's outcome (the
/// generator); [`record_block`] runs a whole known block. The `State` must have been built
/// with `with_bal_builder()`; the recorder sets the block access index of every step.
pub struct BlockRecorder<'s, DB: alloy_evm::Database> {
    executor: EthBlockExecutor<'s, RecordingEvm<'s, DB>, &'s ChainSpec, AlloyReceiptBuilder>,
    spec: &'s ChainSpec,
    header: &'s Header,
    headerless_ommers: u32,
    transactions: u64,
    /// Blob gas of the transactions executed so far (checked against the block's maximum).
    blob_gas_used: u64,
}

/// A transaction whose blobs do not fit in what is left of the block's blob gas (EIP-4844's
/// per-block maximum, from the fork's blob schedule); alloy-evm leaves this check to
/// consensus, a dump must not hold such a block.
#[derive(Debug, thiserror::Error)]
#[error("blob gas {tx} of the transaction exceeds the {left} left of the block's maximum {max}")]
struct BlobGasExceeded {
    tx: u64,
    left: u64,
    max: u64,
}

impl<DB: alloy_evm::Database> std::fmt::Debug for BlockRecorder<'_, DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockRecorder")
            .field("block", &self.header.number)
            .field("transactions", &self.transactions)
            .finish_non_exhaustive()
    }
}

impl<'s, DB: alloy_evm::Database> BlockRecorder<'s, DB> {
    /// Start a block: set up its EVM and run the pre-block system calls (index 0).
    pub fn start(
        state: &'s mut State<DB>,
        spec: &'s ChainSpec,
        input: BlockInput<'s>,
    ) -> Result<Self, RecordError> {
        install_kzg_verifier();
        let evm = EthEvmFactory::default().create_evm(state, spec.evm_env(input.header));
        let mut executor = EthBlockExecutor::new(
            evm,
            execution_ctx(&input),
            spec,
            AlloyReceiptBuilder::default(),
        );
        executor
            .evm_mut()
            .db_mut()
            .set_bal_index(BlockAccessIndex::new(0));
        let block = input.header.number;
        executor
            .apply_pre_execution_changes()
            .map_err(|source| RecordError {
                block,
                stage: BlockStage::PreBlock,
                source,
            })?;
        Ok(Self {
            executor,
            spec,
            header: input.header,
            headerless_ommers: input.headerless_ommers,
            transactions: 0,
            blob_gas_used: 0,
        })
    }

    /// Execute the next transaction; returns the gas it used.
    pub fn execute(&mut self, tx: &Recovered<TxEnvelope>) -> Result<u64, RecordError> {
        let index = self.transactions;
        let blob_gas = tx
            .blob_versioned_hashes()
            .map_or(0, |h| h.len() as u64 * DATA_GAS_PER_BLOB);
        if blob_gas > 0
            && let Some(params) = self.spec.blob_params_at(self.header.timestamp)
        {
            let max = params.max_blob_gas_per_block();
            let left = max.saturating_sub(self.blob_gas_used);
            if blob_gas > left {
                return Err(RecordError {
                    block: self.header.number,
                    stage: BlockStage::Tx(index as usize),
                    source: BlockExecutionError::other(BlobGasExceeded {
                        tx: blob_gas,
                        left,
                        max,
                    }),
                });
            }
        }
        self.executor
            .evm_mut()
            .db_mut()
            .set_bal_index(BlockAccessIndex::new(index + 1));
        let gas = self
            .executor
            .execute_transaction(tx)
            .map_err(|source| RecordError {
                block: self.header.number,
                stage: BlockStage::Tx(index as usize),
                source,
            })?;
        self.transactions += 1;
        self.blob_gas_used += blob_gas;
        Ok(gas.tx_gas_used())
    }

    /// Apply the post-block changes (index n + 1) and take the recorded access list.
    pub fn finish(mut self) -> Result<RecordedBlock, RecordError> {
        let block = self.header.number;
        let post = |source| RecordError {
            block,
            stage: BlockStage::PostBlock,
            source,
        };
        self.executor
            .evm_mut()
            .db_mut()
            .set_bal_index(BlockAccessIndex::new(self.transactions + 1));
        let (mut evm, result) = self.executor.finish().map_err(post)?;
        pay_headerless_ommer_share(evm.db_mut(), self.spec, self.header, self.headerless_ommers)
            .map_err(|e| post(BlockExecutionError::other(DbFailure(e.to_string()))))?;
        let state = evm.into_db();
        let access_list = state.take_built_alloy_bal().unwrap_or_default();
        state.bal_state.bal_builder = Some(Bal::new());
        Ok(RecordedBlock {
            result,
            access_list,
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("database: {0}")]
struct DbFailure(String);

/// Execute a whole block on `state` (built with `with_bal_builder()`) and record it.
pub fn record_block<DB: alloy_evm::Database>(
    state: &mut State<DB>,
    spec: &ChainSpec,
    input: BlockInput<'_>,
) -> Result<RecordedBlock, RecordError> {
    let mut recorder = BlockRecorder::start(state, spec, input)?;
    for tx in input.transactions {
        recorder.execute(tx)?;
    }
    recorder.finish()
}
