//! Recording a block: the one path every dump producer takes.
//!
//! The workload generator, the fixture importers, the snapshot importer and the JSON-RPC
//! dumper all turn blocks into dumps the same way: execute the block like a client (revm
//! through alloy-evm's Ethereum block executor, under the block's own fork rules) with
//! revm's EIP-7928 access-list builder on ([`BlockRecorder`], [`record_block`]), check the
//! result against what the header commits to ([`RecordedBlock::check_header`]), compare
//! access lists ([`first_difference`]) and read the pre-state the access lists touch
//! ([`touched_pre_state`]). The rules these run under (fork schedule, execution context,
//! header checks) are gigagas-chain's, which the executor shares.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod bal;
pub mod block;
pub mod prestate;

pub use bal::{
    BalDifference, BalEntry, EIP8282_PREDEPLOYS, first_difference, structure_error,
    without_eip8282_touches, without_extra_reads,
};
pub use block::{BlockRecorder, RecordError, RecordedBlock, record_block};
pub use prestate::{Touched, touched_pre_state};
