//! The file and I/O rules every gigagas crate shares, in a crate of their own (as reth's
//! `fs-util` is) so that a crate that writes results or loads files depends on them and
//! not on the dump format.
//!
//! - Writing whole files: [`write_atomic`] and [`write_atomic_with`] (a temporary file in
//!   the same folder, synced and renamed over the target; on failure the target keeps its
//!   previous contents), [`create_temp`], [`resolve`].
//! - Outputs never alias inputs: [`InputSet`] and [`check_output`] refuse an output that is
//!   an input or lies inside one ([`OutputIsInput`], [`Overlap`]), before any work.
//! - Reading whole files: [`require_regular_file`], [`open_regular`] and [`read_bounded`]
//!   refuse a FIFO, a device, a socket or a folder by its metadata, before opening it
//!   ([`NotARegularFile`], [`FileKind`]), and a file larger than the caller allows.
//! - [`ordered_map`] and [`try_ordered_map`]: one ordered parallel map for I/O-bound work
//!   (node requests, loading dumps): a bounded number of scoped threads take the items in
//!   order, the results come back in the items' order, a failure stops the handing out.

#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod files;
mod parallel;

pub use files::{
    FileKind, InputSet, NotARegularFile, OutputIsInput, Overlap, check_output, create_temp,
    open_regular, read_bounded, require_regular_file, resolve, write_atomic, write_atomic_with,
};
pub use parallel::{ordered_map, try_ordered_map};
