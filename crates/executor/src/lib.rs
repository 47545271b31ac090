//! Verified parallel replay of gigagas dumps.
//!
//! Every transaction runs on its own [`BalView`]: the dump's pre-state overlaid with the
//! block access list's writes from earlier transactions. Nothing waits on another
//! transaction, so a [`Scheduler`] only decides which worker runs what, and in which order.

#![warn(missing_docs)]

pub mod chain;

pub use chain::ChainSpec;
