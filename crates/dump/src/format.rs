//! The binary file format.
//!
//! ```text
//! header (32 bytes, little endian)
//!   magic        8  b"GIGAGAS\0"
//!   version      4  FORMAT_VERSION
//!   sections     4  number of sections that follow
//!   content_len  8  bytes after the header
//!   checksum     8  xxh3-64 of those bytes
//! section (repeated)
//!   tag          4  ASCII, e.g. b"BLKS"
//!   raw_len      8  decompressed length
//!   comp_len     8  compressed length
//!   data         comp_len bytes of zstd
//! ```
//!
//! Sections: `META` (JSON [`DumpMeta`]), `SEGS` (the number of segments, then each
//! segment's block count), `HASH` (block hashes), `ACCT` (accounts, fixed 93-byte records),
//! `STOR` (slots, fixed 84-byte records), `CODE` (bytecode), `BLKS` (one RLP item per
//! block: header, transactions, senders, withdrawals, receipt summaries, ommer headers,
//! headerless ommer count), `BALS` (one RLP block access list per block), and the optional
//! `WITN` (state witnesses, below). `HASH`, `ACCT`, `STOR` and `CODE` hold one table per
//! segment, in segment order, each led by its record count. Fixed-size records and RLP keep parsing cheaper than decompression; sections
//! decompress in parallel.
//!
//! The blocks of all segments share `BLKS`, their access lists `BALS`, in the same order;
//! `SEGS` says how many blocks go to each segment. Decoding refuses a file whose `BALS`
//! count differs from the `BLKS` count or whose `SEGS` sizes (each at least one) do not add
//! up to it, then gives each block its access list and each segment its blocks.
//!
//! `WITN` holds each segment's [`Witness`], the trie nodes that prove what the
//! segment touches at its parent state root (what a state-root phase needs):
//!
//! ```text
//! count          8  number of segments (must equal SEGS's)
//! per segment
//!   flag         1  0: no witness (nothing else follows), 1: a witness
//!   parent_root 32  the state root of the parent of the segment's first block
//!   nodes        8  number of trie nodes
//!   per node
//!     len        4  bytes of the node (at least 1)
//!     rlp      len  the node's RLP encoding
//! ```
//!
//! A dump without witnesses is written as version 2 (no `WITN`): the oldest version that holds
//! it, so that such a dump is byte for byte what earlier builds wrote (the committed dumps,
//! and the checksums that results record, stay reproducible); a dump with a witness is
//! version 3. Version 2 files (no `WITN`) and version 1 files
//! (one segment, no `SEGS`, blocks without ommer fields) still decode, their segments
//! without witnesses.
//!
//! Reading is bounded by what the header declares, checked before the body: the content
//! length must equal the file's length after the header (and be at most
//! [`MAX_DECOMPRESSED`]); only sections the file's version has, each once, every one but
//! `WITN` present; and the
//! decompressed lengths of all sections together within one budget for the file
//! ([`MAX_EXPANSION`]:1 of its content plus 1 MiB, at most [`MAX_DECOMPRESSED`]), checked
//! before anything is decompressed. A decoded dump is then validated whole
//! ([`Dump::validate`]).
//!
//! [`stream_dump_blocks`] and [`inspect_dump_with`] make the same checks without holding
//! the file or the decoded dump: the checksum over the file read in chunks, then the small
//! sections read and decoded whole, `BLKS` and `BALS` decompressed from the file and
//! decoded one block at a time (each block's invariants checked as it passes).

use crate::{
    AccountState, Dump, DumpBlock, DumpError, DumpMeta, PreAccount, PreSlot, PreState,
    ReceiptSummary, SectionProblem, Segment, Witness,
};
use alloy_consensus::{Header, TxEnvelope, transaction::Recovered};
use alloy_eip7928::BlockAccessList;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_rlp::{Decodable, Encodable};
use rayon::prelude::*;
use std::{
    io::{Seek, SeekFrom, Write},
    path::Path,
};
use xxhash_rust::xxh3::Xxh3;

/// First eight bytes of every dump.
pub const MAGIC: [u8; 8] = *b"GIGAGAS\0";
/// The newest format version this build writes and reads: 3 added the optional `WITN`
/// section (state witnesses), 2 the segments (`SEGS`) and ommers. A dump is written in the
/// oldest version that holds it ([`version_for`]).
pub const FORMAT_VERSION: u32 = 3;

/// The version a dump is written in: [`FORMAT_VERSION`] (3) when a segment has a witness,
/// else 2, whose files are byte for byte those of builds before witnesses.
pub fn version_for(dump: &Dump) -> u32 {
    if dump.segments.iter().any(|s| s.witness.is_some()) {
        FORMAT_VERSION
    } else {
        2
    }
}
/// The oldest format version this build still reads.
pub const OLDEST_READABLE_VERSION: u32 = 1;
/// Size of the fixed file header.
pub const HEADER_LEN: usize = 32;
/// zstd level used for writing: small files, still fast to decode.
const ZSTD_LEVEL: i32 = 15;

/// Every section tag, in file order. `WITN` is optional (and only in version 3 on).
const SECTION_TAGS: [&[u8; 4]; 9] = [
    b"META", b"SEGS", b"HASH", b"ACCT", b"STOR", b"CODE", b"BLKS", b"BALS", b"WITN",
];

/// Facts about a dump file, for reproducibility records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DumpFileInfo {
    /// xxh3-64 of the content (everything after the header).
    pub checksum: u64,
    /// File size in bytes.
    pub size: u64,
}

impl DumpFileInfo {
    /// The checksum as 16 hex digits.
    pub fn checksum_hex(&self) -> String {
        format!("{:016x}", self.checksum)
    }
}

// ---------------------------------------------------------------- encoding

fn encode_meta(meta: &DumpMeta) -> Vec<u8> {
    serde_json::to_vec(meta).expect("DumpMeta serializes")
}

fn encode_segment_sizes(dump: &Dump) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + dump.segments.len() * 8);
    out.extend_from_slice(&(dump.segments.len() as u64).to_le_bytes());
    for s in &dump.segments {
        out.extend_from_slice(&(s.blocks.len() as u64).to_le_bytes());
    }
    out
}

/// One table per segment, concatenated.
fn per_segment(dump: &Dump, table: impl Fn(&Segment, &mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    for s in &dump.segments {
        table(s, &mut out);
    }
    out
}

fn encode_hashes(hashes: &[(u64, B256)], out: &mut Vec<u8>) {
    out.extend_from_slice(&(hashes.len() as u64).to_le_bytes());
    for (n, h) in hashes {
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(h.as_slice());
    }
}

const ACCOUNT_RECORD: usize = 20 + 1 + 8 + 32 + 32;
const SLOT_RECORD: usize = 20 + 32 + 32;

fn encode_accounts(accounts: &[PreAccount], out: &mut Vec<u8>) {
    out.reserve(8 + accounts.len() * ACCOUNT_RECORD);
    out.extend_from_slice(&(accounts.len() as u64).to_le_bytes());
    for a in accounts {
        out.extend_from_slice(a.address.as_slice());
        match &a.state {
            None => out.extend_from_slice(&[0u8; 1 + 8 + 32 + 32]),
            Some(s) => {
                out.push(1);
                out.extend_from_slice(&s.nonce.to_le_bytes());
                out.extend_from_slice(&s.balance.to_be_bytes::<32>());
                out.extend_from_slice(s.code_hash.as_slice());
            }
        }
    }
}

fn encode_storage(slots: &[PreSlot], out: &mut Vec<u8>) {
    out.reserve(8 + slots.len() * SLOT_RECORD);
    out.extend_from_slice(&(slots.len() as u64).to_le_bytes());
    for s in slots {
        out.extend_from_slice(s.address.as_slice());
        out.extend_from_slice(&s.slot.to_be_bytes::<32>());
        out.extend_from_slice(&s.value.to_be_bytes::<32>());
    }
}

fn encode_codes(codes: &[(B256, Bytes)], out: &mut Vec<u8>) {
    out.reserve(8 + codes.iter().map(|c| 36 + c.1.len()).sum::<usize>());
    out.extend_from_slice(&(codes.len() as u64).to_le_bytes());
    for (h, c) in codes {
        out.extend_from_slice(h.as_slice());
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
        out.extend_from_slice(c);
    }
}

/// A block's `BLKS` item (its RLP list: header, transactions, senders, withdrawals,
/// receipt summaries, ommer headers, headerless ommer count; not its access list), appended
/// to `out`.
pub(crate) fn encode_block(b: &DumpBlock, out: &mut Vec<u8>) {
    let mut payload = Vec::with_capacity(256 + b.transactions.len() * 200);
    b.header.encode(&mut payload);
    let txs: Vec<&TxEnvelope> = b.transactions.iter().map(|t| t.inner()).collect();
    alloy_rlp::encode_list::<_, TxEnvelope>(&txs, &mut payload);
    let senders: Vec<Address> = b.transactions.iter().map(|t| t.signer()).collect();
    senders.encode(&mut payload);
    b.withdrawals.encode(&mut payload);
    b.receipts.encode(&mut payload);
    b.ommers.encode(&mut payload);
    b.headerless_ommers.encode(&mut payload);
    alloy_rlp::Header {
        list: true,
        payload_length: payload.len(),
    }
    .encode(out);
    out.extend_from_slice(&payload);
}

/// `BLKS` (the blocks without their access lists, [`encode_block`]) or `BALS` (each
/// block's access list, its RLP): the block count, then `item` of every block of every
/// segment, segment after segment.
fn encode_items(dump: &Dump, item: impl Fn(&DumpBlock, &mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(dump.block_count() as u64).to_le_bytes());
    for b in dump.blocks() {
        item(b, &mut out);
    }
    out
}

/// `WITN`: per segment a presence flag, then the parent root and the nodes of its witness.
fn encode_witnesses(dump: &Dump) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(dump.segments.len() as u64).to_le_bytes());
    for s in &dump.segments {
        match &s.witness {
            None => out.push(0),
            Some(w) => {
                out.reserve(41 + w.nodes.iter().map(|n| 4 + n.len()).sum::<usize>());
                out.push(1);
                out.extend_from_slice(w.parent_state_root.as_slice());
                out.extend_from_slice(&(w.nodes.len() as u64).to_le_bytes());
                for n in &w.nodes {
                    out.extend_from_slice(&(n.len() as u32).to_le_bytes());
                    out.extend_from_slice(n);
                }
            }
        }
    }
    out
}

/// Raw (uncompressed) sections of a dump, in file order; `WITN` only when a segment has a
/// witness (a version 3 file: [`version_for`]).
fn raw_sections(dump: &Dump) -> Vec<(&'static [u8; 4], Vec<u8>)> {
    let count = SECTION_TAGS.len() - usize::from(version_for(dump) < 3);
    let parts: Vec<Vec<u8>> = (0..count)
        .into_par_iter()
        .map(|i| match i {
            0 => encode_meta(&dump.meta),
            1 => encode_segment_sizes(dump),
            2 => per_segment(dump, |s, out| encode_hashes(&s.block_hashes, out)),
            3 => per_segment(dump, |s, out| encode_accounts(&s.pre_state.accounts, out)),
            4 => per_segment(dump, |s, out| encode_storage(&s.pre_state.storage, out)),
            5 => per_segment(dump, |s, out| encode_codes(&s.pre_state.codes, out)),
            6 => encode_items(dump, encode_block),
            7 => encode_items(dump, |b, out| b.access_list.encode(out)),
            _ => encode_witnesses(dump),
        })
        .collect();
    SECTION_TAGS.iter().copied().zip(parts).collect()
}

fn compress(raw: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(raw, ZSTD_LEVEL).expect("zstd compression of an in-memory buffer")
}

fn header_bytes(version: u32, sections: u32, content_len: u64, checksum: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12..16].copy_from_slice(&sections.to_le_bytes());
    h[16..24].copy_from_slice(&content_len.to_le_bytes());
    h[24..32].copy_from_slice(&checksum.to_le_bytes());
    h
}

/// Compressed sections with their framing, as they appear after the header.
fn framed_sections(dump: &Dump) -> Vec<Vec<u8>> {
    raw_sections(dump)
        .into_par_iter()
        .map(|(tag, raw)| {
            let comp = compress(&raw);
            let mut framed = Vec::with_capacity(20 + comp.len());
            framed.extend_from_slice(tag);
            framed.extend_from_slice(&(raw.len() as u64).to_le_bytes());
            framed.extend_from_slice(&(comp.len() as u64).to_le_bytes());
            framed.extend_from_slice(&comp);
            framed
        })
        .collect()
}

/// Encode a dump into the bytes of a file. Deterministic: equal dumps give equal bytes.
pub fn encode_dump(dump: &Dump) -> Vec<u8> {
    let framed = framed_sections(dump);
    let mut hasher = Xxh3::new();
    let mut len = 0u64;
    for f in &framed {
        hasher.update(f);
        len += f.len() as u64;
    }
    let mut out = Vec::with_capacity(HEADER_LEN + len as usize);
    out.extend_from_slice(&header_bytes(
        version_for(dump),
        framed.len() as u32,
        len,
        hasher.digest(),
    ));
    for f in framed {
        out.extend_from_slice(&f);
    }
    out
}

/// Write a dump atomically ([`gigagas_fs_util::write_atomic_with`]): sections stream into a
/// temporary file in the same folder, the header is written last, the file is synced, then
/// renamed over `path`; missing folders are created. An interrupted write leaves at most a
/// temporary file, never a file at `path` that looks whole; a failed one leaves nothing.
pub fn write_dump(dump: &Dump, path: &Path) -> Result<DumpFileInfo, DumpError> {
    let io = DumpError::io(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    gigagas_fs_util::write_atomic_with(path, |file| {
        file.write_all(&[0u8; HEADER_LEN])?;
        let mut hasher = Xxh3::new();
        let mut len = 0u64;
        let mut count = 0u32;
        for framed in framed_sections(dump) {
            hasher.update(&framed);
            len += framed.len() as u64;
            count += 1;
            file.write_all(&framed)?;
        }
        let checksum = hasher.digest();
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header_bytes(version_for(dump), count, len, checksum))?;
        Ok(DumpFileInfo {
            checksum,
            size: HEADER_LEN as u64 + len,
        })
    })
    .map_err(io)
}

// ---------------------------------------------------------------- decoding

/// Sections never expand more than this from their compressed size (real dumps: under
/// 20:1 for the whole file); a file whose sections announce more, all together, is
/// refused before anything is decompressed.
pub const MAX_EXPANSION: u64 = 1024;

/// The most decompressed bytes one file may announce over all its sections (and the most
/// content a file may have), whatever its size: 16 GiB. A 2000-block dump of 30 Mgas
/// blocks (1.75 M transactions, a 398 MB file) decompresses to about 1 GB.
pub const MAX_DECOMPRESSED: u64 = 16 << 30;

/// Read and decode a dump file, bounded by what its header declares: the 32-byte header
/// is read and checked first (magic, version, a content length no larger than
/// [`MAX_DECOMPRESSED`] and equal to the file's actual length after the header), then
/// exactly the content it declares is read, checksummed and decoded ([`decode_dump`]). A
/// file that is not a dump (a huge sparse file, a truncated copy) fails after reading at
/// most its header; what is not a regular file at all (a FIFO, `/dev/zero`, a socket, a
/// folder) is refused before it is opened ([`gigagas_fs_util::open_regular`]: a
/// [`DumpError::Io`] whose source is [`gigagas_fs_util::NotARegularFile`]).
pub fn read_dump(path: &Path) -> Result<(Dump, DumpFileInfo), DumpError> {
    let (header, content) = read_content(path)?;
    decode_content(&header, &content, path)
}

/// Open a dump file and check its header against the file ([`read_dump`]'s checks before
/// the body: a regular file, its header, a declared content length equal to the file's
/// length after the header). The file is left positioned just after the header.
fn open_checked(path: &Path) -> Result<(std::fs::File, FileHeader), DumpError> {
    use std::io::Read;
    let io = DumpError::io(path);
    let (mut file, metadata) = gigagas_fs_util::open_regular(path).map_err(io)?;
    let mut head = Vec::with_capacity(HEADER_LEN);
    (&mut file)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    let header = parse_header(&head, path)?;
    // The declared size against the file's, before reading (or allocating) the body.
    let actual = metadata.len().saturating_sub(HEADER_LEN as u64);
    if actual != header.content_len {
        return Err(DumpError::Truncated {
            path: path.to_path_buf(),
            expected: header.content_len,
            actual,
        });
    }
    Ok((file, header))
}

/// Read a dump file's header and exactly the content it declares (the checks of
/// [`read_dump`]; the checksum is checked by the decoder).
fn read_content(path: &Path) -> Result<(FileHeader, Vec<u8>), DumpError> {
    use std::io::Read;
    let (file, header) = open_checked(path)?;
    let mut content = Vec::with_capacity(header.content_len as usize);
    // One byte more than declared: a file that grew since is caught.
    file.take(header.content_len + 1)
        .read_to_end(&mut content)
        .map_err(DumpError::io(path))?;
    Ok((header, content))
}

/// The bytes [`check_file_checksum`] reads at a time.
const CHECKSUM_CHUNK: usize = 1 << 20;

/// [`check_length_and_checksum`] on the content of an open file positioned after its
/// header, read in chunks of [`CHECKSUM_CHUNK`] bytes instead of held: the content must be
/// exactly the declared length (one byte more is read, so a file that grew since its
/// length was checked is caught) and hash to the header's checksum.
fn check_file_checksum(
    file: &std::fs::File,
    header: &FileHeader,
    path: &Path,
) -> Result<(), DumpError> {
    use std::io::Read;
    let mut reader = file.take(header.content_len + 1);
    let mut chunk = vec![0u8; CHECKSUM_CHUNK];
    let mut hasher = Xxh3::new();
    let mut read = 0u64;
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(DumpError::io(path)(source));
            }
        };
        hasher.update(&chunk[..n]);
        read += n as u64;
    }
    check_content(header, read, || hasher.digest(), path)
}

/// Fill `buf` from `file` at byte `offset`, without moving (or depending on) the file's
/// cursor where the platform allows; a file shorter than that is an
/// [`std::io::ErrorKind::UnexpectedEof`] error.
fn read_exact_at(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file ends before the bytes its section table announces",
                ));
            }
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One positional read: up to `buf.len()` bytes of `file` at `offset`.
#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// One positional read: up to `buf.len()` bytes of `file` at `offset`.
#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// One positional read: up to `buf.len()` bytes of `file` at `offset` (a seek, then a read:
/// the streaming reader is one thread, and nothing relies on the cursor between reads).
#[cfg(not(any(unix, windows)))]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read(buf)
}

/// What stops the walk of a file's section table ([`walk_sections`]): the file cannot be
/// read, or the table is wrong.
enum TableError {
    Io(std::io::Error),
    Section(SectionError),
}

impl From<SectionError> for TableError {
    fn from(e: SectionError) -> Self {
        TableError::Section(e)
    }
}

/// A range of a file, read front to back by positional reads (so several ranges of one
/// file can be read in turn, each where it left off). Errors of the file itself come out
/// wrapped in [`FileReadFailed`], so that a zstd decoder reading the range passes them on
/// distinguishable from its own.
struct FileRange {
    file: std::sync::Arc<std::fs::File>,
    /// The next byte to read.
    pos: u64,
    /// One past the range's last byte.
    end: u64,
}

impl std::io::Read for FileRange {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf
            .len()
            .min((self.end - self.pos).try_into().unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..want], self.pos)
            .map_err(|e| std::io::Error::new(e.kind(), FileReadFailed(e)))?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// An error reading the dump file itself, as opposed to one of decompressing what was
/// read: carried through the zstd decoder by [`FileRange`] and taken out again by
/// [`stream_problem`] (a [`DumpError::Io`], not a corrupt section).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct FileReadFailed(std::io::Error);

/// A failure streaming section `section` of the file at `path`: [`DumpError::Io`] when the
/// file could not be read ([`FileReadFailed`]), else [`DumpError::CorruptSection`].
fn stream_problem(path: &Path, section: &str, problem: SectionProblem) -> DumpError {
    let problem = match problem {
        SectionProblem::Zstd(e)
            if e.get_ref()
                .is_some_and(|inner| inner.is::<FileReadFailed>()) =>
        {
            let inner = e.into_inner().expect("checked: it wraps an error");
            let FileReadFailed(source) = *inner
                .downcast::<FileReadFailed>()
                .expect("checked: it is a FileReadFailed");
            return DumpError::io(path)(source);
        }
        other => other,
    };
    DumpError::CorruptSection {
        path: path.to_path_buf(),
        section: section.to_string(),
        problem,
    }
}

/// Summarise a dump file for `gigagas inspect` without holding it decoded
/// ([`inspect_dump_with`], no one else looking at the blocks).
pub fn inspect_dump(path: &Path) -> Result<(crate::DumpSummary, DumpFileInfo), DumpError> {
    let (streamed, _) = stream_dump(path, false, |_| {})?;
    Ok((streamed.summary, streamed.info))
}

/// One block as [`inspect_dump_with`] and [`stream_dump_blocks`] stream it past, with what
/// surrounds it: decoded.
#[derive(Debug, Clone, Copy)]
pub struct StreamedBlock<'a> {
    /// The dump's metadata (its chain config says each block's fork).
    pub meta: &'a DumpMeta,
    /// The index of the block's segment.
    pub segment_index: usize,
    /// The block's segment: its pre-state, hashes and witness, without its blocks.
    pub segment: &'a Segment,
    /// The block, its access list in place.
    pub block: &'a DumpBlock,
    /// The decompressed bytes of `BLKS` and `BALS` together, as the file announces them
    /// (known before the first block: what every block's items add up to, about, so a
    /// caller can decide at the first block whether to keep them all decoded).
    pub items_len: u64,
}

/// What [`inspect_dump_with`] computes as the blocks stream past.
#[derive(Debug)]
pub struct Inspection {
    /// The dump's summary.
    pub summary: crate::DumpSummary,
    /// The file's size and checksum.
    pub info: DumpFileInfo,
    /// Every block's access list in each design ([`crate::DesignSizes`]), or why the
    /// `full` design cannot be built for one (an account the state does not hold).
    pub designs: Result<crate::DesignSizes, crate::DesignError>,
}

/// Inspect a dump file without holding it decoded: the same checks as [`read_dump`]
/// (header, checksum, section table, [`Dump::validate`]'s invariants), but the blocks and
/// their access lists are decompressed and decoded one block at a time as they stream
/// past: the summary and each design's size per block are computed on the way, and each
/// block is shown to `on_block` (what else a caller measures per block: the witness
/// sizes, `gigagas_trie::WitnessSizer`). Memory is its segments without their blocks
/// (pre-state, hashes, witnesses) and its other small sections, the state that earlier
/// blocks of the segment wrote, and one block; not the file's bytes ([`stream_dump_blocks`]
/// says how it is read) nor the decoded dump (about ten times the file for 2000 blocks of
/// ERC-20 transfers).
pub fn inspect_dump_with(
    path: &Path,
    on_block: impl FnMut(StreamedBlock<'_>),
) -> Result<Inspection, DumpError> {
    let (streamed, designs) = stream_dump(path, true, on_block)?;
    Ok(Inspection {
        summary: streamed.summary,
        info: streamed.info,
        designs,
    })
}

/// A dump read by [`stream_dump_blocks`]: everything but its blocks, which were shown to
/// the caller one at a time.
#[derive(Debug, Clone)]
pub struct StreamedDump {
    /// The dump's metadata.
    pub meta: DumpMeta,
    /// The segments' block hashes, pre-states and witnesses, in order; their `blocks` are
    /// left empty (they streamed past: `segment_blocks` says how many each had).
    pub segments: Vec<Segment>,
    /// The blocks, to read again from the file (checked): [`BlockReader`].
    pub reader: BlockReader,
    /// How many blocks each segment has, in order (each at least one).
    pub segment_blocks: Vec<usize>,
    /// The dump's summary (that of [`inspect_dump`]).
    pub summary: crate::DumpSummary,
    /// The file's size and checksum.
    pub info: DumpFileInfo,
}

/// Read a dump file block by block, for a replay that does not hold every block decoded
/// (it reads them again later through [`BlockReader`]): exactly the checks of
/// [`read_dump`] (header, length, checksum before anything is decoded, the section table,
/// every section's layout, [`Dump::validate`]'s invariants, block by block), each block
/// decoded and shown to `on_block` in file order (segment after segment) once it has
/// passed them, and the rest of the dump returned. An error may come after some blocks
/// were shown: the caller drops what it kept of them.
///
/// Memory is that of [`inspect_dump_with`] without the design sizes: the small sections
/// decoded, one block, and what `on_block` keeps, never the file's bytes. The file is read
/// twice: once in 1 MiB chunks for its checksum, then each section by positional reads,
/// `BLKS` and `BALS` decompressed as their items are read. Both reads go through the one
/// open file, so a dump replaced meanwhile (dumps are written to a temporary file and
/// renamed over the old one) is not seen; only a file rewritten in place between the two
/// reads would be decoded unchecked by the checksum (and still by everything else).
pub fn stream_dump_blocks(
    path: &Path,
    on_block: impl FnMut(StreamedBlock<'_>),
) -> Result<StreamedDump, DumpError> {
    stream_dump(path, false, on_block).map(|(streamed, _)| streamed)
}

/// [`stream_dump_blocks`], with the design sizes computed only with `designs` (building
/// each block's `full` list is most of the walk's work; a summary alone does not need it:
/// an empty [`crate::DesignSizes`] then).
fn stream_dump(
    path: &Path,
    designs: bool,
    on_block: impl FnMut(StreamedBlock<'_>),
) -> Result<(StreamedDump, Result<crate::DesignSizes, crate::DesignError>), DumpError> {
    let io = DumpError::io(path);
    let (file, header) = open_checked(path)?;
    check_file_checksum(&file, &header, path)?;
    let file = std::sync::Arc::new(file);
    let entries = section_table(&file, &header, path)?;
    let (streamed, small): (Vec<_>, Vec<_>) = entries
        .into_iter()
        .partition(|e| &e.tag == b"BLKS" || &e.tag == b"BALS");
    let items_len = streamed.iter().map(|e| e.raw_len).sum();
    let sections = read_sections(&file, &small, path)?;
    let entry = |tag: &[u8; 4]| {
        *streamed
            .iter()
            .find(|e| &e.tag == tag)
            .expect("walk_sections checked that every required section is present")
    };
    let items = [entry(b"BLKS"), entry(b"BALS")];
    let mut streams = [
        ItemStream::open(&file, &items[0], path, "blocks")?,
        ItemStream::open(&file, &items[1], path, "access lists")?,
    ];
    let reader = BlockReader {
        path: path.to_path_buf(),
        stamp: FileStamp::of(&file).map_err(io)?,
        file: file.clone(),
        sections: items,
        count: streams[0].count,
        streams: None,
        next: 0,
    };
    let tables = SegmentTables::decode(&sections, header.version, &streams, path)?;
    drop(sections);
    let (figures, designs) = tables.stream(&mut streams, items_len, designs, path, on_block)?;
    let [blocks, lists] = streams;
    blocks
        .finish()
        .map_err(|e| stream_problem(path, "BLKS", e))?;
    lists
        .finish()
        .map_err(|e| stream_problem(path, "BALS", e))?;
    let SegmentTables {
        meta,
        sizes,
        segments,
    } = tables;
    let summary = crate::DumpSummary::from_figures(&meta, &segments, &sizes, &figures);
    Ok((
        StreamedDump {
            meta,
            segments,
            reader,
            segment_blocks: sizes,
            summary,
            info: DumpFileInfo {
                checksum: header.checksum,
                size: HEADER_LEN as u64 + header.content_len,
            },
        },
        designs,
    ))
}

/// A [`DumpError::CorruptSection`] of `section` in the file at `path`.
fn corrupt(path: &Path, section: &str, problem: SectionProblem) -> DumpError {
    DumpError::CorruptSection {
        path: path.to_path_buf(),
        section: section.to_string(),
        problem,
    }
}

/// The section table of the open dump file at `path` ([`walk_sections`]), each section's
/// header read from the file.
fn section_table(
    file: &std::fs::File,
    header: &FileHeader,
    path: &Path,
) -> Result<Vec<SectionEntry>, DumpError> {
    walk_sections(
        header.content_len,
        header.section_count,
        header.version,
        |off| {
            let mut head = [0u8; SECTION_HEADER_LEN as usize];
            read_exact_at(file, &mut head, HEADER_LEN as u64 + off).map_err(TableError::Io)?;
            Ok(head)
        },
    )
    .map_err(|e| match e {
        TableError::Io(source) => DumpError::io(path)(source),
        TableError::Section((s, problem)) => corrupt(path, &s, problem),
    })
}

/// The sections of `entries`, their compressed bytes read whole (in file order), then
/// decompressed as `decode_content` does.
fn read_sections(
    file: &std::fs::File,
    entries: &[SectionEntry],
    path: &Path,
) -> Result<Vec<Section>, DumpError> {
    let mut compressed = Vec::with_capacity(entries.len());
    for e in entries {
        let mut comp = vec![0u8; e.comp_len as usize];
        read_exact_at(file, &mut comp, HEADER_LEN as u64 + e.offset)
            .map_err(DumpError::io(path))?;
        compressed.push(comp);
    }
    let frames: Vec<Frame<'_>> = entries
        .iter()
        .zip(&compressed)
        .map(|(e, comp)| (e.tag, e.raw_len, comp.as_slice()))
        .collect();
    decompress_sections(&frames).map_err(|(s, e)| corrupt(path, &s, e))
}

/// A streamed dump's metadata and its segments' tables, without their blocks: those stream
/// past one at a time ([`SegmentTables::stream`]).
struct SegmentTables {
    meta: DumpMeta,
    /// Blocks per segment.
    sizes: Vec<usize>,
    segments: Vec<Segment>,
}

impl SegmentTables {
    /// The tables of the decompressed `sections` of a file of format `version`, whose item
    /// streams are `streams` (`BLKS`, `BALS`): their counts checked against the segments.
    fn decode(
        sections: &[Section],
        version: u32,
        streams: &[ItemStream<FileRange>; 2],
        path: &Path,
    ) -> Result<Self, DumpError> {
        let take = |tag: &[u8; 4]| section(sections, tag);
        let meta = decode_meta(take(b"META")).map_err(|e| corrupt(path, "META", e))?;
        let sizes = match version {
            1 => vec![streams[0].count],
            _ => decode_segment_sizes(take(b"SEGS")).map_err(|e| corrupt(path, "SEGS", e))?,
        };
        check_layout(&sizes, streams[0].count, streams[1].count)
            .map_err(|(s, e)| corrupt(path, s, e))?;
        let segments = decode_segments(
            &sizes,
            take(b"HASH"),
            take(b"ACCT"),
            take(b"STOR"),
            take(b"CODE"),
            optional_section(sections, b"WITN"),
        )
        .map_err(|(s, e)| corrupt(path, s, e))?;
        Ok(Self {
            meta,
            sizes,
            segments,
        })
    }

    /// Every block of `streams` (`BLKS`, `BALS`, `items_len` decompressed bytes together)
    /// decoded, checked against its segment and shown to `on_block`, in file order; each
    /// segment's tables checked before its first block. Returns every block's figures and,
    /// with `designs`, each design's size per block.
    fn stream(
        &self,
        streams: &mut [ItemStream<FileRange>; 2],
        items_len: u64,
        designs: bool,
        path: &Path,
        mut on_block: impl FnMut(StreamedBlock<'_>),
    ) -> Result<
        (
            Vec<crate::summary::BlockFigures>,
            Result<crate::DesignSizes, crate::DesignError>,
        ),
        DumpError,
    > {
        let inconsistent = |source| DumpError::Inconsistent {
            path: path.to_path_buf(),
            source: Box::new(source),
        };
        let [blocks, lists] = streams;
        let mut figures = Vec::with_capacity(blocks.count);
        let sizing = designs;
        let mut designs = Ok(crate::DesignSizes::default());
        for ((i, segment), &size) in self.segments.iter().enumerate().zip(&self.sizes) {
            segment.validate_block_hashes(i).map_err(inconsistent)?;
            segment.pre_state.validate(i).map_err(inconsistent)?;
            segment.validate_witness(i).map_err(inconsistent)?;
            let mut previous = None;
            let mut state = crate::BlockStartState::new(&segment.pre_state);
            for _ in 0..size {
                let n = figures.len();
                let block_item = blocks.next().map_err(|e| stream_problem(path, "BLKS", e))?;
                let mut block =
                    decode_block(&mut &*block_item, n).map_err(|e| corrupt(path, "BLKS", e))?;
                let list_item = lists.next().map_err(|e| stream_problem(path, "BALS", e))?;
                block.access_list =
                    decode_bal(&mut &*list_item, n).map_err(|e| corrupt(path, "BALS", e))?;
                segment
                    .validate_block(i, previous, &block)
                    .map_err(inconsistent)?;
                previous = Some(block.number());
                figures.push(crate::summary::BlockFigures::of(&block));
                if sizing && let Ok(sizes) = &mut designs {
                    match crate::BlockDesignSizes::of(&state, block.number(), &block.access_list) {
                        Ok(block_sizes) => sizes.blocks.push(block_sizes),
                        Err(e) => designs = Err(e),
                    }
                    state.apply(&block.access_list);
                }
                on_block(StreamedBlock {
                    meta: &self.meta,
                    segment_index: i,
                    segment,
                    block: &block,
                    items_len,
                });
            }
        }
        Ok((figures, designs))
    }
}

/// What a file was when it was checked: its length and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(file: &std::fs::File) -> std::io::Result<Self> {
        let metadata = file.metadata()?;
        Ok(Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }
}

/// A dump file's blocks read again, in order, from the file [`stream_dump_blocks`] checked
/// (through the handle it opened, so a dump replaced since by a rename is not seen): what a
/// replay that holds no block decodes each batch's blocks from. Reading block `b` goes on
/// from where the last read stopped, or starts the two sections' streams over when `b` is
/// behind it; nothing but the decoders' buffers and one block is held. A file changed in
/// place since it was checked (another length or modification time) is refused
/// ([`DumpError::Changed`]).
pub struct BlockReader {
    path: std::path::PathBuf,
    file: std::sync::Arc<std::fs::File>,
    stamp: FileStamp,
    /// `BLKS` and `BALS`.
    sections: [SectionEntry; 2],
    count: usize,
    /// The two sections' item streams, positioned at block `next`.
    streams: Option<Box<[ItemStream<FileRange>; 2]>>,
    next: usize,
}

impl std::fmt::Debug for BlockReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockReader")
            .field("path", &self.path)
            .field("blocks", &self.count)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Clone for BlockReader {
    /// Another reader of the same open file, starting over.
    fn clone(&self) -> Self {
        Self {
            path: self.path.clone(),
            file: self.file.clone(),
            stamp: self.stamp,
            sections: self.sections,
            count: self.count,
            streams: None,
            next: 0,
        }
    }
}

impl BlockReader {
    /// The number of blocks in the file.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the file holds no block.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Block `b` (in file order, segment after segment), its access list in place, decoded
    /// as [`read_dump`] decodes it.
    pub fn block(&mut self, b: usize) -> Result<DumpBlock, DumpError> {
        let path = self.path.as_path();
        let io = DumpError::io(path);
        if b >= self.count {
            return Err(DumpError::CorruptSection {
                path: path.to_path_buf(),
                section: "BLKS".into(),
                problem: format!("block #{b} asked of {} blocks", self.count).into(),
            });
        }
        if FileStamp::of(&self.file).map_err(io)? != self.stamp {
            return Err(DumpError::Changed {
                path: path.to_path_buf(),
            });
        }
        if self.next > b {
            self.streams = None;
        }
        let streams = match &mut self.streams {
            Some(streams) => streams,
            None => {
                let blocks = ItemStream::open(&self.file, &self.sections[0], path, "blocks")?;
                let lists = ItemStream::open(&self.file, &self.sections[1], path, "access lists")?;
                self.next = 0;
                self.streams.insert(Box::new([blocks, lists]))
            }
        };
        let [blocks, lists] = &mut **streams;
        while self.next < b {
            blocks.next().map_err(|e| stream_problem(path, "BLKS", e))?;
            lists.next().map_err(|e| stream_problem(path, "BALS", e))?;
            self.next += 1;
        }
        let mut block = decode_block(
            &mut blocks.next().map_err(|e| stream_problem(path, "BLKS", e))?,
            b,
        )
        .map_err(|e| stream_problem(path, "BLKS", e))?;
        block.access_list = decode_bal(
            &mut lists.next().map_err(|e| stream_problem(path, "BALS", e))?,
            b,
        )
        .map_err(|e| stream_problem(path, "BALS", e))?;
        self.next += 1;
        Ok(block)
    }
}

/// The RLP items of a `BLKS` or `BALS` section (a count, then one item per block), read one
/// at a time from its zstd stream, itself read from `R` (a [`FileRange`]): never more than
/// one item's bytes decompressed, nor more than the decoder's buffers of compressed ones.
struct ItemStream<R: std::io::Read> {
    decoder: std::io::Take<zstd::stream::read::Decoder<'static, std::io::BufReader<R>>>,
    /// Items announced by the section.
    count: usize,
    /// Decompressed bytes left of what the section announced.
    left: u64,
    what: &'static str,
    item: Vec<u8>,
}

impl ItemStream<FileRange> {
    /// The stream of section `entry` of the open dump file at `path`.
    fn open(
        file: &std::sync::Arc<std::fs::File>,
        entry: &SectionEntry,
        path: &Path,
        what: &'static str,
    ) -> Result<Self, DumpError> {
        let start = HEADER_LEN as u64 + entry.offset;
        let range = FileRange {
            file: file.clone(),
            pos: start,
            end: start + entry.comp_len,
        };
        Self::new(range, entry.raw_len, what)
            .map_err(|p| stream_problem(path, &tag_name(&entry.tag), p))
    }
}

impl<R: std::io::Read> ItemStream<R> {
    /// The stream of a section whose compressed bytes `comp` gives and which announces
    /// `raw_len` decompressed bytes; its item count read and checked against them.
    fn new(comp: R, raw_len: u64, what: &'static str) -> Result<Self, SectionProblem> {
        use std::io::Read;
        let decoder = zstd::stream::read::Decoder::new(comp).map_err(SectionProblem::Zstd)?;
        let mut stream = Self {
            decoder: decoder.take(raw_len + 1),
            count: 0,
            left: raw_len,
            what,
            item: Vec::new(),
        };
        let mut count = [0u8; 8];
        stream.read_exact(&mut count)?;
        let count = u64::from_le_bytes(count);
        // Every item takes at least one byte.
        if count > stream.left {
            return Err(format!(
                "{count} {what} announced but only {} bytes follow",
                stream.left
            )
            .into());
        }
        stream.count = count as usize;
        Ok(stream)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), SectionProblem> {
        use std::io::Read;
        if (buf.len() as u64) > self.left {
            return Err(format!("truncated reading {}", self.what).into());
        }
        self.decoder.read_exact(buf).map_err(SectionProblem::Zstd)?;
        self.left -= buf.len() as u64;
        Ok(())
    }

    /// The next item's bytes (its RLP header included).
    fn next(&mut self) -> Result<&[u8], SectionProblem> {
        let mut first = [0u8; 1];
        self.read_exact(&mut first)?;
        self.item.clear();
        self.item.push(first[0]);
        // An RLP list or string header: its payload length, directly or in the bytes after.
        let payload = match first[0] {
            0x00..=0x7f => 0,
            b @ 0x80..=0xb7 => u64::from(b - 0x80),
            b @ 0xc0..=0xf7 => u64::from(b - 0xc0),
            b => {
                let n = usize::from(if b >= 0xf8 { b - 0xf7 } else { b - 0xb7 });
                let mut len = [0u8; 8];
                self.read_exact(&mut len[8 - n..])?;
                self.item.extend_from_slice(&len[8 - n..]);
                u64::from_be_bytes(len)
            }
        };
        if payload > self.left {
            return Err(format!(
                "an item of {payload} bytes announced in the {} but only {} bytes follow",
                self.what, self.left
            )
            .into());
        }
        let start = self.item.len();
        self.item.resize(start + payload as usize, 0);
        let mut body = std::mem::take(&mut self.item);
        let read = self.read_exact(&mut body[start..]);
        self.item = body;
        read?;
        Ok(&self.item)
    }

    /// The section holds nothing after its items, and decompresses to its announced length.
    fn finish(mut self) -> Result<(), SectionProblem> {
        use std::io::Read;
        if self.left != 0 {
            return Err(format!(
                "{} unexpected bytes after {} {}",
                self.left, self.count, self.what
            )
            .into());
        }
        let mut extra = [0u8; 1];
        match self
            .decoder
            .read(&mut extra)
            .map_err(SectionProblem::Zstd)?
        {
            0 => Ok(()),
            _ => Err(format!("{} decompress past their announced length", self.what).into()),
        }
    }
}

/// Decode the bytes of a dump file; `path` only names the file in errors. The same
/// checks as [`read_dump`], on bytes already in memory.
pub fn decode_dump(bytes: &[u8], path: &Path) -> Result<(Dump, DumpFileInfo), DumpError> {
    let header = parse_header(&bytes[..bytes.len().min(HEADER_LEN)], path)?;
    decode_content(&header, &bytes[HEADER_LEN..], path)
}

/// Decode the content after a checked header: length and checksum, then the section table
/// (known sections only, each once, every required one present, and one decompression
/// budget for the whole file), then the sections, then [`Dump::validate`].
fn decode_content(
    header: &FileHeader,
    content: &[u8],
    path: &Path,
) -> Result<(Dump, DumpFileInfo), DumpError> {
    check_length_and_checksum(header, content, path)?;
    let corrupt = |section: &str, problem: SectionProblem| DumpError::CorruptSection {
        path: path.to_path_buf(),
        section: section.to_string(),
        problem,
    };
    let frames = section_frames(content, header.section_count, header.version)
        .map_err(|(s, e)| corrupt(&s, e))?;
    let sections = decompress_sections(&frames).map_err(|(s, e)| corrupt(&s, e))?;
    let take = |tag: &[u8; 4]| section(&sections, tag);
    // Version 1 has no SEGS section: one segment holding every block.
    let segs = (header.version != 1).then(|| take(b"SEGS"));
    let witnesses = optional_section(&sections, b"WITN");
    let (meta, hashes, accounts, storage, codes, blocks, bals) = (
        take(b"META"),
        take(b"HASH"),
        take(b"ACCT"),
        take(b"STOR"),
        take(b"CODE"),
        take(b"BLKS"),
        take(b"BALS"),
    );

    // Parse the sections in parallel too: blocks and BALs dominate.
    let ((meta, blocks), access_lists) = rayon::join(
        || rayon::join(|| decode_meta(meta), || decode_blocks(blocks)),
        || decode_bals(bals),
    );
    let blocks = blocks.map_err(|e| corrupt("BLKS", e))?;
    let access_lists = access_lists.map_err(|e| corrupt("BALS", e))?;
    let sizes = match segs {
        Some(raw) => decode_segment_sizes(raw).map_err(|e| corrupt("SEGS", e))?,
        None => vec![blocks.len()],
    };
    check_layout(&sizes, blocks.len(), access_lists.len()).map_err(|(s, e)| corrupt(s, e))?;
    let mut segments = decode_segments(&sizes, hashes, accounts, storage, codes, witnesses)
        .map_err(|(s, e)| corrupt(s, e))?;
    // Each block takes its access list, each segment its blocks (`check_layout`: one
    // list per block, the sizes add up to the blocks).
    let mut blocks = blocks
        .into_iter()
        .zip(access_lists)
        .map(|(mut block, list)| {
            block.access_list = list;
            block
        });
    for (segment, &size) in segments.iter_mut().zip(&sizes) {
        segment.blocks = blocks.by_ref().take(size).collect();
    }
    let dump = Dump {
        meta: meta.map_err(|e| corrupt("META", e))?,
        segments,
    };
    dump.validate().map_err(|source| DumpError::Inconsistent {
        path: path.to_path_buf(),
        source: Box::new(source),
    })?;
    Ok((
        dump,
        DumpFileInfo {
            checksum: header.checksum,
            size: HEADER_LEN as u64 + content.len() as u64,
        },
    ))
}

/// The content's length against the header's, then its checksum.
fn check_length_and_checksum(
    header: &FileHeader,
    content: &[u8],
    path: &Path,
) -> Result<(), DumpError> {
    check_content(
        header,
        content.len() as u64,
        || xxhash_rust::xxh3::xxh3_64(content),
        path,
    )
}

/// Content of `len` bytes against the header's length, then (only when the length is
/// right) its checksum, `checksum()`: one check for the decoder over bytes in memory and
/// the streaming reader over chunks.
fn check_content(
    header: &FileHeader,
    len: u64,
    checksum: impl FnOnce() -> u64,
    path: &Path,
) -> Result<(), DumpError> {
    if len != header.content_len {
        return Err(DumpError::Truncated {
            path: path.to_path_buf(),
            expected: header.content_len,
            actual: len,
        });
    }
    let actual = checksum();
    if actual != header.checksum {
        return Err(DumpError::ChecksumMismatch {
            path: path.to_path_buf(),
            expected: header.checksum,
            actual,
        });
    }
    Ok(())
}

/// The fields of a dump's 32-byte file header.
struct FileHeader {
    version: u32,
    section_count: u32,
    content_len: u64,
    checksum: u64,
}

/// Check the file header (the first [`HEADER_LEN`] bytes of the file, fewer if the file is
/// shorter): magic, version, and a content length within [`MAX_DECOMPRESSED`].
fn parse_header(head: &[u8], path: &Path) -> Result<FileHeader, DumpError> {
    let p = || path.to_path_buf();
    if head.len() < MAGIC.len() || head[..8] != MAGIC {
        let found = &head[..head.len().min(8)];
        return Err(DumpError::NotADump {
            path: p(),
            expected: String::from_utf8_lossy(&MAGIC).into_owned(),
            found: String::from_utf8_lossy(found).into_owned(),
        });
    }
    if head.len() < HEADER_LEN {
        return Err(DumpError::Truncated {
            path: p(),
            expected: HEADER_LEN as u64,
            actual: head.len() as u64,
        });
    }
    let u32_at = |o: usize| u32::from_le_bytes(head[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(head[o..o + 8].try_into().unwrap());
    let version = u32_at(8);
    if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(DumpError::UnsupportedVersion {
            path: p(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let content_len = u64_at(16);
    if content_len > MAX_DECOMPRESSED {
        return Err(DumpError::TooLarge {
            path: p(),
            announced: content_len,
            limit: MAX_DECOMPRESSED,
        });
    }
    Ok(FileHeader {
        version,
        section_count: u32_at(12),
        content_len,
        checksum: u64_at(24),
    })
}

/// One section as stored: tag, decompressed length, compressed bytes.
type Frame<'a> = ([u8; 4], u64, &'a [u8]);

/// The sections a file of format `version` may have, each at most once (version 1 has no
/// `SEGS`, versions 1 and 2 no `WITN`).
fn known_tags(version: u32) -> impl Iterator<Item = &'static [u8; 4]> {
    SECTION_TAGS
        .into_iter()
        .filter(move |t| (version != 1 || *t != b"SEGS") && (version >= 3 || *t != b"WITN"))
}

/// The sections a file of format `version` must have: all it may have but `WITN`.
fn required_tags(version: u32) -> impl Iterator<Item = &'static [u8; 4]> {
    known_tags(version).filter(|t| *t != b"WITN")
}

/// One entry of the section table: tag, decompressed length, and where its compressed
/// bytes lie (`offset` counted from the start of the content, after the file header).
#[derive(Debug, Clone, Copy)]
struct SectionEntry {
    tag: [u8; 4],
    raw_len: u64,
    offset: u64,
    comp_len: u64,
}

/// Bytes of a section's header in the table: tag, raw length, compressed length.
const SECTION_HEADER_LEN: u64 = 20;

/// Walk the section table of a content of `content_len` bytes: each section's 20-byte
/// header (tag, raw length, compressed length), read by `header_at` (given the header's
/// offset in the content, always with 20 bytes there), and its compressed bytes, which
/// must exactly fill the content. Before anything is decompressed: every tag is one this
/// version has and appears once, every section it needs is there, and the decompressed
/// lengths all sections announce, added up, stay within one budget for the whole file
/// ([`MAX_EXPANSION`] times its content plus 1 MiB, at most [`MAX_DECOMPRESSED`]). Errors
/// name the section (`?` when its tag cannot be read); `header_at`'s own errors (a file
/// that cannot be read) pass through.
fn walk_sections<E: From<SectionError>>(
    content_len: u64,
    section_count: u32,
    version: u32,
    mut header_at: impl FnMut(u64) -> Result<[u8; SECTION_HEADER_LEN as usize], E>,
) -> Result<Vec<SectionEntry>, E> {
    let budget = content_len
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(1 << 20)
        .min(MAX_DECOMPRESSED);
    let mut announced = 0u64;
    let mut entries: Vec<SectionEntry> = Vec::new();
    // Never past `content_len`: each step is checked against what is left.
    let mut off = 0u64;
    for i in 0..section_count {
        if content_len - off < SECTION_HEADER_LEN {
            return Err(E::from((
                "?".into(),
                format!("section {i} header runs past the end of the file").into(),
            )));
        }
        let head = header_at(off)?;
        let tag: [u8; 4] = head[..4].try_into().unwrap();
        let raw_len = u64::from_le_bytes(head[4..12].try_into().unwrap());
        let comp_len = u64::from_le_bytes(head[12..20].try_into().unwrap());
        off += SECTION_HEADER_LEN;
        if !known_tags(version).any(|t| *t == tag) {
            return Err(E::from((
                tag_name(&tag),
                format!("unknown section (section {i}) in a format version {version} file").into(),
            )));
        }
        if entries.iter().any(|e| e.tag == tag) {
            return Err(E::from((
                tag_name(&tag),
                format!("repeated (section {i})").into(),
            )));
        }
        if comp_len > content_len - off {
            return Err(E::from((
                tag_name(&tag),
                format!(
                    "{comp_len} compressed bytes announced, {} left",
                    content_len - off
                )
                .into(),
            )));
        }
        announced = announced.saturating_add(raw_len);
        if announced > budget {
            return Err(E::from((
                tag_name(&tag),
                format!(
                    "announces {raw_len} decompressed bytes, {announced} with the sections before it: \
                     more than this file's budget of {budget} ({MAX_EXPANSION}:1 of its {content_len} bytes \
                     plus 1 MiB, at most {MAX_DECOMPRESSED})"
                ).into(),
            )));
        }
        entries.push(SectionEntry {
            tag,
            raw_len,
            offset: off,
            comp_len,
        });
        off += comp_len;
    }
    if off != content_len {
        return Err(E::from((
            "?".into(),
            format!("{} bytes after the last section", content_len - off).into(),
        )));
    }
    if let Some(missing) = required_tags(version).find(|t| !entries.iter().any(|e| e.tag == **t)) {
        return Err(E::from((
            tag_name(missing),
            SectionProblem::Layout("section missing".into()),
        )));
    }
    Ok(entries)
}

/// The section table of a content held in memory ([`walk_sections`]), each section with
/// its compressed bytes.
fn section_frames(
    content: &[u8],
    section_count: u32,
    version: u32,
) -> Result<Vec<Frame<'_>>, SectionError> {
    let entries = walk_sections(content.len() as u64, section_count, version, |off| {
        let off = off as usize;
        Ok::<_, SectionError>(
            content[off..off + SECTION_HEADER_LEN as usize]
                .try_into()
                .unwrap(),
        )
    })?;
    Ok(entries
        .into_iter()
        .map(|e| {
            let start = e.offset as usize;
            (
                e.tag,
                e.raw_len,
                &content[start..start + e.comp_len as usize],
            )
        })
        .collect())
}

/// The decompressed bytes of the optional section `tag`, if the file has it.
fn optional_section<'a>(sections: &'a [Section], tag: &[u8; 4]) -> Option<&'a [u8]> {
    sections
        .iter()
        .find(|(t, _)| t == tag)
        .map(|(_, raw)| raw.as_slice())
}

/// The decompressed bytes of the section `tag` (which [`section_frames`] checked is present).
fn section<'a>(sections: &'a [Section], tag: &[u8; 4]) -> &'a [u8] {
    sections
        .iter()
        .find(|(t, _)| t == tag)
        .map(|(_, raw)| raw.as_slice())
        .expect("section_frames checked that every required section is present")
}

/// A decompressed section: tag and bytes.
type Section = ([u8; 4], Vec<u8>);

/// A failure inside one section: (section tag, what is wrong).
type SectionError = (String, SectionProblem);

/// Decompress every section in parallel, each to exactly its announced length. The
/// first failing section in file order is the one reported.
fn decompress_sections(frames: &[Frame<'_>]) -> Result<Vec<Section>, SectionError> {
    let raws: Vec<Result<Section, SectionError>> = frames
        .par_iter()
        .map(|(tag, raw_len, comp)| {
            let raw = decompress(comp, *raw_len).map_err(|e| (tag_name(tag), e))?;
            if raw.len() as u64 != *raw_len {
                return Err((
                    tag_name(tag),
                    format!("decompressed to {} bytes, expected {raw_len}", raw.len()).into(),
                ));
            }
            Ok((*tag, raw))
        })
        .collect();
    raws.into_iter().collect()
}

/// Decompress a section, never producing more than its announced length plus one byte
/// (which [`section_frames`] has checked against the file's budget).
fn decompress(comp: &[u8], raw_len: u64) -> Result<Vec<u8>, SectionProblem> {
    use std::io::Read;
    let decoder = zstd::stream::read::Decoder::new(comp).map_err(SectionProblem::Zstd)?;
    let mut raw = Vec::with_capacity(raw_len as usize);
    decoder
        .take(raw_len + 1)
        .read_to_end(&mut raw)
        .map_err(SectionProblem::Zstd)?;
    Ok(raw)
}

/// A section tag as text, non-printable bytes escaped (`\x1b`), so a crafted tag cannot
/// reach a terminal raw.
fn tag_name(tag: &[u8; 4]) -> String {
    tag.escape_ascii().to_string()
}

/// A bounds-checked little reader over a section.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], SectionProblem> {
        if self.buf.len() - self.pos < n {
            return Err(format!("truncated at byte {} reading {what}", self.pos).into());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u64(&mut self, what: &str) -> Result<u64, SectionProblem> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    fn u32(&mut self, what: &str) -> Result<u32, SectionProblem> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }
    /// A record count, checked against the bytes left so a corrupt count cannot
    /// trigger a huge allocation.
    fn count(&mut self, min_record: usize, what: &str) -> Result<usize, SectionProblem> {
        let n = self.u64(what)?;
        let left = (self.buf.len() - self.pos) as u64;
        if n.saturating_mul(min_record.max(1) as u64) > left {
            return Err(format!("{n} {what} announced but only {left} bytes follow").into());
        }
        Ok(n as usize)
    }
    fn finish(&self, what: &str) -> Result<(), SectionProblem> {
        if self.pos != self.buf.len() {
            return Err(format!(
                "{} unexpected bytes after the {what}",
                self.buf.len() - self.pos
            )
            .into());
        }
        Ok(())
    }
}

fn decode_meta(raw: &[u8]) -> Result<DumpMeta, SectionProblem> {
    serde_json::from_slice(raw).map_err(SectionProblem::MetaJson)
}

fn decode_segment_sizes(raw: &[u8]) -> Result<Vec<usize>, SectionProblem> {
    let mut r = Reader::new(raw);
    let n = r.count(8, "segments")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let blocks = r.u64("segment size")?;
        out.push(
            usize::try_from(blocks)
                .map_err(|_| SectionProblem::Layout(format!("segment {i}: {blocks} blocks")))?,
        );
    }
    r.finish("segment sizes")?;
    Ok(out)
}

/// How the file spreads blocks over segments, checked once the counts are known and
/// before any block is given to a segment: `BALS` holds one access list per block of
/// `BLKS`, and the `SEGS` sizes are each at least one and add up to the blocks.
fn check_layout(
    sizes: &[usize],
    blocks: usize,
    access_lists: usize,
) -> Result<(), (&'static str, SectionProblem)> {
    if access_lists != blocks {
        return Err((
            "BALS",
            format!("{access_lists} block access lists for {blocks} blocks").into(),
        ));
    }
    if let Some(i) = sizes.iter().position(|&n| n == 0) {
        return Err(("SEGS", format!("segment {i} has no blocks").into()));
    }
    let covered = sizes.iter().fold(0usize, |sum, &n| sum.saturating_add(n));
    if covered != blocks {
        return Err((
            "SEGS",
            format!("the segments hold {covered} blocks but the dump has {blocks}").into(),
        ));
    }
    Ok(())
}

/// Read one table per segment from each of the four per-segment sections, and each
/// segment's witness from `WITN` where the file has it; the segments' blocks are left empty
/// for the caller to fill.
fn decode_segments(
    sizes: &[usize],
    hashes: &[u8],
    accounts: &[u8],
    storage: &[u8],
    codes: &[u8],
    witnesses: Option<&[u8]>,
) -> Result<Vec<Segment>, (&'static str, SectionProblem)> {
    let mut witnesses = match witnesses {
        Some(raw) => decode_witnesses(raw, sizes.len()).map_err(|e| ("WITN", e))?,
        None => vec![None; sizes.len()],
    }
    .into_iter();
    let (mut h, mut a, mut s, mut c) = (
        Reader::new(hashes),
        Reader::new(accounts),
        Reader::new(storage),
        Reader::new(codes),
    );
    let mut out = Vec::with_capacity(sizes.len());
    for _ in sizes {
        out.push(Segment {
            blocks: Vec::new(),
            block_hashes: decode_hashes(&mut h).map_err(|e| ("HASH", e))?,
            pre_state: PreState {
                accounts: decode_accounts(&mut a).map_err(|e| ("ACCT", e))?,
                storage: decode_storage(&mut s).map_err(|e| ("STOR", e))?,
                codes: decode_codes(&mut c).map_err(|e| ("CODE", e))?,
            },
            witness: witnesses.next().flatten(),
        });
    }
    h.finish("block hashes").map_err(|e| ("HASH", e))?;
    a.finish("account records").map_err(|e| ("ACCT", e))?;
    s.finish("slot records").map_err(|e| ("STOR", e))?;
    c.finish("codes").map_err(|e| ("CODE", e))?;
    Ok(out)
}

/// `WITN`: one entry per segment (`segments` of them), each a flag and, if set, a witness.
/// Errors name the segment (and the node) where the bytes stop making sense.
fn decode_witnesses(raw: &[u8], segments: usize) -> Result<Vec<Option<Witness>>, SectionProblem> {
    let mut r = Reader::new(raw);
    let n = r.count(1, "witnesses")?;
    if n != segments {
        return Err(format!("{n} witness entries for {segments} segments").into());
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let at = |e: SectionProblem| SectionProblem::Layout(format!("segment {i}: {e}"));
        match r.take(1, "witness flag").map_err(at)?[0] {
            0 => out.push(None),
            1 => {
                let parent_state_root =
                    B256::from_slice(r.take(32, "witness parent root").map_err(at)?);
                let count = r.count(5, "witness nodes").map_err(at)?;
                let mut nodes = Vec::with_capacity(count);
                for k in 0..count {
                    let len = r.u32("witness node length").map_err(at)? as usize;
                    if len == 0 {
                        return Err(at(format!("witness node {k} is empty").into()));
                    }
                    nodes.push(Bytes::copy_from_slice(
                        r.take(len, "witness node").map_err(at)?,
                    ));
                }
                out.push(Some(Witness {
                    parent_state_root,
                    nodes,
                }));
            }
            f => return Err(at(format!("witness flag {f}, expected 0 or 1").into())),
        }
    }
    r.finish("witnesses")?;
    Ok(out)
}

fn decode_hashes(r: &mut Reader<'_>) -> Result<Vec<(u64, B256)>, SectionProblem> {
    let n = r.count(40, "block hashes")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let num = r.u64("block number")?;
        out.push((num, B256::from_slice(r.take(32, "block hash")?)));
    }
    Ok(out)
}

fn decode_accounts(r: &mut Reader<'_>) -> Result<Vec<PreAccount>, SectionProblem> {
    let n = r.count(ACCOUNT_RECORD, "accounts")?;
    let mut out = Vec::with_capacity(n);
    for rec in r
        .take(n * ACCOUNT_RECORD, "accounts")?
        .chunks_exact(ACCOUNT_RECORD)
    {
        let address = Address::from_slice(&rec[..20]);
        let state = match rec[20] {
            0 => None,
            1 => Some(AccountState {
                nonce: u64::from_le_bytes(rec[21..29].try_into().unwrap()),
                balance: U256::from_be_slice(&rec[29..61]),
                code_hash: B256::from_slice(&rec[61..93]),
            }),
            f => {
                return Err(
                    format!("account {address}: existence flag {f}, expected 0 or 1").into(),
                );
            }
        };
        out.push(PreAccount { address, state });
    }
    Ok(out)
}

fn decode_storage(r: &mut Reader<'_>) -> Result<Vec<PreSlot>, SectionProblem> {
    let n = r.count(SLOT_RECORD, "slots")?;
    Ok(r.take(n * SLOT_RECORD, "slots")?
        .chunks_exact(SLOT_RECORD)
        .map(|rec| PreSlot {
            address: Address::from_slice(&rec[..20]),
            slot: U256::from_be_slice(&rec[20..52]),
            value: U256::from_be_slice(&rec[52..84]),
        })
        .collect())
}

fn decode_codes(r: &mut Reader<'_>) -> Result<Vec<(B256, Bytes)>, SectionProblem> {
    let n = r.count(36, "codes")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let h = B256::from_slice(r.take(32, "code hash")?);
        let len = r.u32("code length")? as usize;
        out.push((h, Bytes::copy_from_slice(r.take(len, "code")?)));
    }
    Ok(out)
}

/// The `index`th block item of a `BLKS` section ([`decode_block_item`]).
fn decode_block(buf: &mut &[u8], index: usize) -> Result<DumpBlock, SectionProblem> {
    decode_block_item(buf, || format!("block #{index} in the section"))
}

/// One block's RLP item as [`encode_block`] writes it (a version 1 block, without the
/// ommer fields, too), taken from the front of `buf`; its access list left empty. `name`
/// names the item in errors.
pub(crate) fn decode_block_item(
    buf: &mut &[u8],
    name: impl Fn() -> String,
) -> Result<DumpBlock, SectionProblem> {
    let at = |source| SectionProblem::Rlp {
        item: name(),
        source,
    };
    let list = alloy_rlp::Header::decode(buf).map_err(at)?;
    if !list.list || list.payload_length > buf.len() {
        return Err(format!("{}: not an RLP list of the announced length", name()).into());
    }
    let mut body = &buf[..list.payload_length];
    *buf = &buf[list.payload_length..];
    let header = Header::decode(&mut body).map_err(at)?;
    let txs = Vec::<TxEnvelope>::decode(&mut body).map_err(at)?;
    let senders = Vec::<Address>::decode(&mut body).map_err(at)?;
    let withdrawals = Vec::<Withdrawal>::decode(&mut body).map_err(at)?;
    let receipts = Vec::<ReceiptSummary>::decode(&mut body).map_err(at)?;
    // Version 1 blocks end here.
    let (ommers, headerless_ommers) = if body.is_empty() {
        (Vec::new(), 0)
    } else {
        (
            Vec::<Header>::decode(&mut body).map_err(at)?,
            u32::decode(&mut body).map_err(at)?,
        )
    };
    if !body.is_empty() {
        return Err(format!("block {}: {} trailing bytes", header.number, body.len()).into());
    }
    if senders.len() != txs.len() {
        return Err(format!(
            "block {}: {} senders for {} transactions",
            header.number,
            senders.len(),
            txs.len()
        )
        .into());
    }
    let transactions = txs
        .into_iter()
        .zip(senders)
        .map(|(tx, from)| Recovered::new_unchecked(tx, from))
        .collect();
    Ok(DumpBlock {
        header,
        transactions,
        withdrawals,
        receipts,
        ommers,
        headerless_ommers,
        // From `BALS`.
        access_list: BlockAccessList::default(),
    })
}

fn decode_blocks(raw: &[u8]) -> Result<Vec<DumpBlock>, SectionProblem> {
    decode_items(raw, "blocks", decode_block)
}

fn decode_bals(raw: &[u8]) -> Result<Vec<BlockAccessList>, SectionProblem> {
    decode_items(raw, "access lists", decode_bal)
}

/// The items of a `BLKS` or `BALS` section: a count, then that many RLP items (`what` names
/// them in errors), decoded by `decode` (which takes the item's index).
fn decode_items<T>(
    raw: &[u8],
    what: &str,
    decode: impl Fn(&mut &[u8], usize) -> Result<T, SectionProblem>,
) -> Result<Vec<T>, SectionProblem> {
    let mut r = Reader::new(raw);
    let n = r.count(1, what)?;
    let mut buf = &raw[8..];
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(decode(&mut buf, i)?);
    }
    if !buf.is_empty() {
        return Err(format!("{} unexpected bytes after {n} {what}", buf.len()).into());
    }
    Ok(out)
}

/// One access list of `BALS`, the `index`th in the section ([`decode_bal_item`]).
fn decode_bal(buf: &mut &[u8], index: usize) -> Result<BlockAccessList, SectionProblem> {
    decode_bal_item(buf, || format!("access list #{index}"))
}

/// One access list's RLP item, taken from the front of `buf`; `name` names it in errors.
pub(crate) fn decode_bal_item(
    buf: &mut &[u8],
    name: impl Fn() -> String,
) -> Result<BlockAccessList, SectionProblem> {
    BlockAccessList::decode(buf).map_err(|source| SectionProblem::Rlp {
        item: name(),
        source,
    })
}
