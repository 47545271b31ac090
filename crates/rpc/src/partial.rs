//! The resume directory (`<out>.partial/`): what a dump has fetched so far, so an
//! interrupted dump continues where it stopped and yields the same file.
//!
//! ```text
//! meta.json          range, chain id, hash of the first block (checked on resume)
//! hashes.json        the block hashes before the range
//! blocks/<n>.json    the node's block n (full transactions) and its receipt fields
//! state.jsonl        every state value fetched at the parent of the first block, one per line
//! ```
//!
//! Block files are written atomically (a temporary file in the same folder, synced, renamed,
//! removed on failure: [`gigagas_fs_util::write_atomic`]); the state log is appended and
//! flushed after every block, and a torn last line (from a kill mid-write) is dropped on load.
//! Everything in it is immutable data of the node at fixed block numbers, so a resumed
//! dump re-executes the blocks already done from it without asking the node again.

use crate::{RpcDumpError, convert::NodeReceipt, state::StateRecord};
use alloy_primitives::B256;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::{
    fs::{self, File, OpenOptions},
    io::{BufRead, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
};

/// Version of the directory layout.
pub const LAYOUT: u32 = 1;

/// What identifies a dump in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialMeta {
    /// Layout version.
    pub layout: u32,
    /// Chain id.
    pub chain_id: u64,
    /// First block.
    pub from: u64,
    /// Last block.
    pub to: u64,
    /// Hash of the first block.
    pub first_hash: B256,
}

/// A stored block: the node's JSON and the receipt fields.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredBlock {
    /// `eth_getBlockByNumber(n, true)` as the node returned it.
    pub block: Value,
    /// Receipt fields, in transaction order.
    pub receipts: Vec<NodeReceipt>,
}

/// An open resume directory.
#[derive(Debug)]
pub struct Partial {
    dir: PathBuf,
    log: BufWriter<File>,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> RpcDumpError {
    RpcDumpError::partial(path, e)
}

/// [`gigagas_fs_util::write_atomic`]: a temporary file in the same folder, synced,
/// renamed over `path`, removed on failure.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RpcDumpError> {
    gigagas_fs_util::write_atomic(path, bytes).map_err(|e| io_err(path, e))
}

impl Partial {
    /// Open the directory: with `resume`, keep and check what is there (it must be for the
    /// same chain, range and first block); without, start empty. Returns the directory and
    /// the state records already fetched.
    pub fn open(
        dir: &Path,
        meta: &PartialMeta,
        resume: bool,
    ) -> Result<(Self, Vec<StateRecord>), RpcDumpError> {
        let meta_path = dir.join("meta.json");
        if resume && meta_path.exists() {
            let text = fs::read_to_string(&meta_path).map_err(|e| io_err(&meta_path, e))?;
            let old: PartialMeta = serde_json::from_str(&text)
                .map_err(|e| io_err(&meta_path, format!("unreadable ({e})")))?;
            if &old != meta {
                return Err(io_err(
                    dir,
                    format!(
                        "holds a dump of blocks {}..={} of chain {} (first block {}), not of blocks {}..={} of chain {} \
                         (first block {}); remove it or run without --resume",
                        old.from,
                        old.to,
                        old.chain_id,
                        old.first_hash,
                        meta.from,
                        meta.to,
                        meta.chain_id,
                        meta.first_hash
                    ),
                ));
            }
        } else {
            if dir.exists() {
                fs::remove_dir_all(dir).map_err(|e| io_err(dir, e))?;
            }
            fs::create_dir_all(dir.join("blocks")).map_err(|e| io_err(dir, e))?;
            write_atomic(
                &meta_path,
                &serde_json::to_vec_pretty(meta).expect("meta serializes"),
            )?;
        }
        fs::create_dir_all(dir.join("blocks")).map_err(|e| io_err(dir, e))?;
        let log_path = dir.join("state.jsonl");
        let records = read_log(&log_path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| io_err(&log_path, e))?;
        Ok((
            Self {
                dir: dir.to_path_buf(),
                log: BufWriter::new(file),
            },
            records,
        ))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn block_path(&self, number: u64) -> PathBuf {
        self.dir.join("blocks").join(format!("{number}.json"))
    }

    /// Whether block `number` was fetched before.
    pub fn has_block(&self, number: u64) -> bool {
        self.block_path(number).exists()
    }

    /// A stored block, if it was fetched before.
    pub fn block(&self, number: u64) -> Result<Option<StoredBlock>, RpcDumpError> {
        read_json(&self.block_path(number))
    }

    /// Store a fetched block.
    pub fn put_block(&self, number: u64, block: &StoredBlock) -> Result<(), RpcDumpError> {
        write_atomic(
            &self.block_path(number),
            &serde_json::to_vec(block).expect("block serializes"),
        )
    }

    /// The stored block hashes before the range.
    pub fn hashes(&self) -> Result<Option<Vec<(u64, B256)>>, RpcDumpError> {
        read_json(&self.dir.join("hashes.json"))
    }

    /// Store the block hashes before the range.
    pub fn put_hashes(&self, hashes: &[(u64, B256)]) -> Result<(), RpcDumpError> {
        write_atomic(
            &self.dir.join("hashes.json"),
            &serde_json::to_vec(hashes).expect("hashes serialize"),
        )
    }

    /// Append fetched state values to the log.
    pub fn append_state(&mut self, records: &[StateRecord]) -> Result<(), RpcDumpError> {
        let path = self.dir.join("state.jsonl");
        for r in records {
            serde_json::to_writer(&mut self.log, r).map_err(|e| io_err(&path, e))?;
            self.log.write_all(b"\n").map_err(|e| io_err(&path, e))?;
        }
        Ok(())
    }

    /// Flush the state log (after each block).
    pub fn flush(&mut self) -> Result<(), RpcDumpError> {
        let path = self.dir.join("state.jsonl");
        self.log.flush().map_err(|e| io_err(&path, e))
    }

    /// Remove the directory (after the dump file is written).
    pub fn remove(self) -> Result<(), RpcDumpError> {
        let Self { dir, log } = self;
        drop(log);
        fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, e))
    }
}

/// A stored JSON file, `None` if it is not there.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, RpcDumpError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| io_err(path, format!("unreadable ({e})"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path, e)),
    }
}

/// Read the state log; a line that does not parse ends it (a torn write) and is cut off.
fn read_log(path: &Path) -> Result<Vec<StateRecord>, RpcDumpError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(path, e)),
    };
    let mut out = Vec::new();
    let mut good = 0u64;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        if !line.ends_with('\n') {
            break;
        }
        match serde_json::from_str::<StateRecord>(line.trim_end()) {
            Ok(r) => {
                out.push(r);
                good += n as u64;
            }
            Err(_) => break,
        }
    }
    let len = fs::metadata(path).map_err(|e| io_err(path, e))?.len();
    if len != good {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        f.set_len(good).map_err(|e| io_err(path, e))?;
    }
    Ok(out)
}
