//! Recording a block: the one path every dump producer takes.
//!
//! The workload generator, the fixture importers, the snapshot importer and the JSON-RPC
//! dumper all turn blocks into dumps the same way: execute the block like a client (revm
//! through alloy-evm's Ethereum block executor, under the block's own fork rules) with
//! revm's EIP-7928 access-list builder on ([`BlockRecorder`], [`record_block`]), check the
//! result against what the header commits to ([`RecordedBlock::check_header`]), and read
//! the pre-state the access lists touch ([`touched_pre_state`]). [`ChainSpec`] holds the
//! fork rules; the executor uses it too.

pub mod bal;
pub mod block;
pub mod consensus;
pub mod kzg;
pub mod prestate;
pub mod spec;

pub use bal::{
    BalDifference, EIP8282_PREDEPLOYS, first_difference, structure_error, without_eip8282_touches,
    without_extra_reads,
};
pub use block::{
    BlockInput, BlockRecorder, HeaderMismatch, RecordError, RecordStage, RecordedBlock,
    execution_ctx, pay_headerless_ommer_share, record_block,
};
pub use consensus::{
    check_against_parent, check_body, check_transactions_root, check_withdrawals_root,
};
pub use kzg::install_kzg_verifier;
pub use prestate::{Touched, touched_pre_state};
pub use spec::ChainSpec;
