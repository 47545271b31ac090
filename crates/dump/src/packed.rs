//! One block kept compressed on its own: [`PackedBlock`].
//!
//! A replay that loads a dump by streaming it ([`crate::stream_dump_blocks`]) keeps each
//! block as the file holds it — the block's `BLKS` RLP item followed by its access list's
//! `BALS` item — compressed by itself with zstd at [`PACK_LEVEL`], and decodes a block only
//! when it runs; its memory then follows the blocks it runs, not the dump.

use crate::{
    DumpBlock, SectionProblem,
    format::{decode_bal_item, decode_block_item, encode_bal, encode_block},
};

/// The zstd level a [`PackedBlock`] is compressed at: fast to decompress, reasonably small.
///
/// Measured on the 2,000-block ERC-20 dump (1.75 M transactions; a 350.2 MB file whose
/// `BLKS` and `BALS`, 663.2 MB of items, take 346.0 MB at the file's level 15 in one stream
/// each), every block packed from its streamed items ([`PackedBlock::from_items`]), then
/// all decompressed, then all unpacked, one thread of a 2-core VM, release build:
///
/// | level | held     | of the file | pack all   | decompress all | unpack all  |
/// |-------|----------|-------------|------------|----------------|-------------|
/// | -1    | 487.8 MB | 1.39        | 1.1-1.4 s  | 0.16-0.25 s    | 0.9-1.2 s   |
/// | 1     | 495.9 MB | 1.42        | 1.54 s     | 0.28 s         | 1.0 s       |
/// | 3     | 448.6 MB | 1.28        | 2.5 s      | 0.23 s         | 0.94 s      |
/// | 5-9   | 445 MB   | 1.27        | 5.5-7.7 s  | 0.21-0.23 s    | 0.95 s      |
///
/// Unpacking is mostly RLP decoding (0.5 ms a block), the same at every level; level 3
/// holds 10% less than level 1 for 1 ms more per block packed (once, at load), and
/// higher levels gain nothing more: what the file saves beyond is matches across blocks,
/// which blocks compressed on their own cannot use.
pub const PACK_LEVEL: i32 = 3;

/// One block and its access list as a dump file holds them — the block's `BLKS` RLP item
/// followed by its `BALS` item — compressed together with zstd ([`PACK_LEVEL`]) on their
/// own, for a replay that decodes a block only when it runs ([`PackedBlock::unpack`]).
#[derive(Clone, PartialEq, Eq)]
pub struct PackedBlock {
    /// The zstd frame of the two items.
    bytes: Box<[u8]>,
    /// Bytes of the two items, uncompressed.
    raw_len: usize,
}

impl std::fmt::Debug for PackedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedBlock")
            .field("packed_len", &self.packed_len())
            .field("raw_len", &self.raw_len)
            .finish()
    }
}

/// Why a [`PackedBlock`] does not unpack: its bytes do not decompress to its items, or
/// its items do not decode to a block and its access list (only for items that did not
/// come from a dump file that streamed without error, or [`PackedBlock::pack`]).
#[derive(Debug, thiserror::Error)]
#[error("a packed block does not unpack: {0}")]
pub struct PackedBlockError(#[from] pub SectionProblem);

impl PackedBlock {
    /// Pack `block` (its access list included): its items encoded exactly as a dump file
    /// holds them ([`crate::write_dump`]), then compressed.
    pub fn pack(block: &DumpBlock) -> PackedBlock {
        let mut raw = Vec::with_capacity(512 + block.transactions.len() * 256);
        encode_block(block, &mut raw);
        encode_bal(&block.access_list, &mut raw);
        Self::compress(&raw, PACK_LEVEL)
    }

    /// Pack a block's two items as a dump file holds them ([`crate::StreamedBlock`]'s
    /// `block_item` and `list_item`, their RLP headers included), passed through unchanged
    /// (a version 1 file's blocks, without the ommer fields, too): compressed only, not
    /// checked (the streamer decoded them; [`Self::unpack`] decodes them again).
    pub fn from_items(block_item: &[u8], list_item: &[u8]) -> PackedBlock {
        Self::from_items_at(block_item, list_item, PACK_LEVEL)
    }

    /// [`Self::from_items`] at zstd level `level`.
    pub(crate) fn from_items_at(block_item: &[u8], list_item: &[u8], level: i32) -> PackedBlock {
        let mut raw = Vec::with_capacity(block_item.len() + list_item.len());
        raw.extend_from_slice(block_item);
        raw.extend_from_slice(list_item);
        Self::compress(&raw, level)
    }

    fn compress(raw: &[u8], level: i32) -> PackedBlock {
        let compressed =
            zstd::bulk::compress(raw, level).expect("zstd compression of an in-memory buffer");
        PackedBlock {
            // Copied into an allocation of its own size: shrinking the compressor's buffer
            // (sized for the worst case) in place may keep all of it (mimalloc keeps a
            // block that shrinks by less than half), a third more per block.
            bytes: Box::from(compressed.as_slice()),
            raw_len: raw.len(),
        }
    }

    /// The items, decompressed (exactly [`Self::raw_len`] bytes).
    fn items(&self) -> Result<Vec<u8>, SectionProblem> {
        let raw =
            zstd::bulk::decompress(&self.bytes, self.raw_len).map_err(SectionProblem::Zstd)?;
        if raw.len() != self.raw_len {
            return Err(format!(
                "the packed block decompressed to {} bytes, expected {}",
                raw.len(),
                self.raw_len
            )
            .into());
        }
        Ok(raw)
    }

    /// The block, its access list in place: the items decompressed, then decoded as a dump
    /// file's reader decodes them ([`crate::read_dump`]); nothing may follow the access list.
    pub fn unpack(&self) -> Result<DumpBlock, PackedBlockError> {
        let raw = self.items()?;
        let mut rest = raw.as_slice();
        let mut block = decode_block_item(&mut rest, || "the packed block".into())?;
        block.access_list = decode_bal_item(&mut rest, || "the packed block's access list".into())?;
        if !rest.is_empty() {
            return Err(SectionProblem::Layout(format!(
                "{} unexpected bytes after the packed block's access list",
                rest.len()
            ))
            .into());
        }
        Ok(block)
    }

    /// The compressed bytes held: what the packed block costs in memory (with the few
    /// bytes of the struct itself).
    pub fn packed_len(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes of the two items uncompressed: what [`Self::unpack`] decompresses before
    /// decoding.
    pub fn raw_len(&self) -> usize {
        self.raw_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_dump, stream_dump_blocks};
    use std::path::{Path, PathBuf};

    fn committed(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../dumps")
            .join(name)
    }

    /// Every block of the dump at `path`, packed from its streamed items, unpacks to the
    /// block the streamer decoded and to the block `read_dump` decodes; `pack` of the
    /// decoded block unpacks to it too, and (for a file of the `current` format, whose
    /// items are those `pack` encodes) gives the same items.
    fn check(path: &Path, current: bool) {
        let (dump, _) = read_dump(path).unwrap();
        let mut decoded = dump.blocks();
        let mut shown = 0;
        let streamed = stream_dump_blocks(path, |b| {
            let packed = b.pack();
            assert_eq!(packed.raw_len(), b.block_item.len() + b.list_item.len());
            let unpacked = packed.unpack().unwrap();
            assert_eq!(&unpacked, b.block);
            assert_eq!(Some(&unpacked), decoded.next());
            let repacked = PackedBlock::pack(b.block);
            if current {
                assert_eq!(repacked, packed, "block {}", b.block.number());
            }
            assert_eq!(repacked.unpack().unwrap(), unpacked);
            shown += 1;
        })
        .unwrap();
        assert_eq!(decoded.next(), None);
        assert_eq!(shown, dump.block_count());
        assert_eq!(streamed.meta, dump.meta);
        assert_eq!(streamed.summary, dump.summary());
        let sizes: Vec<usize> = dump.segments.iter().map(|s| s.blocks.len()).collect();
        assert_eq!(streamed.segment_blocks, sizes);
        for (s, d) in streamed.segments.iter().zip(&dump.segments) {
            assert!(s.blocks.is_empty());
            assert_eq!(s.block_hashes, d.block_hashes);
            assert_eq!(s.pre_state, d.pre_state);
            assert_eq!(s.witness, d.witness);
        }
        assert_eq!(streamed.segments.len(), dump.segments.len());
    }

    #[test]
    fn the_committed_mainnet_dumps_blocks_unpack_to_themselves() {
        check(&committed("mainnet.gigagas"), true);
    }

    #[test]
    fn a_witness_dumps_blocks_unpack_to_themselves() {
        check(&committed("mainnet-like-witness.gigagas"), true);
    }

    /// A version 1 block item: `item` (a block without ommers, as [`encode_block`] writes
    /// it) without its ommer fields (two empty items, `0xc0` and `0x80`).
    fn version_1_item(item: &[u8]) -> Vec<u8> {
        let mut rest = item;
        let header = alloy_rlp::Header::decode(&mut rest).unwrap();
        assert_eq!(rest.len(), header.payload_length);
        assert_eq!(&rest[rest.len() - 2..], &[0xc0, 0x80]);
        let payload = &rest[..rest.len() - 2];
        let mut v1 = Vec::new();
        alloy_rlp::Header {
            list: true,
            payload_length: payload.len(),
        }
        .encode(&mut v1);
        v1.extend_from_slice(payload);
        v1
    }

    /// The file of a one-segment dump without ommers in format version 1: no `SEGS`, its
    /// blocks without the ommer fields (following the format's documentation).
    fn version_1_file(bytes: &[u8]) -> Vec<u8> {
        let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
        let mut content = Vec::new();
        let mut sections = 0u32;
        let mut off = 32;
        for _ in 0..count {
            let tag = &bytes[off..off + 4];
            let comp_len = u64::from_le_bytes(bytes[off + 12..off + 20].try_into().unwrap());
            let comp = &bytes[off + 20..off + 20 + comp_len as usize];
            off += 20 + comp_len as usize;
            let mut raw = zstd::stream::decode_all(comp).unwrap();
            match tag {
                b"SEGS" => continue,
                b"BLKS" => {
                    let mut items = &raw[8..];
                    let mut v1 = raw[..8].to_vec();
                    while !items.is_empty() {
                        let mut rest = items;
                        let header = alloy_rlp::Header::decode(&mut rest).unwrap();
                        let len = items.len() - rest.len() + header.payload_length;
                        v1.extend_from_slice(&version_1_item(&items[..len]));
                        items = &items[len..];
                    }
                    raw = v1;
                }
                _ => {}
            }
            let comp = zstd::bulk::compress(&raw, 1).unwrap();
            content.extend_from_slice(tag);
            content.extend_from_slice(&(raw.len() as u64).to_le_bytes());
            content.extend_from_slice(&(comp.len() as u64).to_le_bytes());
            content.extend_from_slice(&comp);
            sections += 1;
        }
        let mut file = crate::MAGIC.to_vec();
        file.extend_from_slice(&1u32.to_le_bytes());
        file.extend_from_slice(&sections.to_le_bytes());
        file.extend_from_slice(&(content.len() as u64).to_le_bytes());
        file.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&content).to_le_bytes());
        file.extend_from_slice(&content);
        file
    }

    #[test]
    fn a_version_1_files_blocks_unpack_to_themselves() {
        let bytes = std::fs::read(committed("mainnet-like.gigagas")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.gigagas");
        std::fs::write(&path, version_1_file(&bytes)).unwrap();
        // The same blocks as the version 2 file's.
        let (v1, _) = read_dump(&path).unwrap();
        let (v2, _) = read_dump(&committed("mainnet-like.gigagas")).unwrap();
        assert!(v1.blocks().eq(v2.blocks()));
        // Its items pass through unchanged: `pack` would write the ommer fields.
        check(&path, false);
    }

    #[test]
    fn a_version_1_block_item_passes_through() {
        // A version 1 item ends after the receipts.
        let (dump, _) = read_dump(&committed("mainnet-like.gigagas")).unwrap();
        let block = dump.blocks().next().unwrap();
        assert!(block.ommers.is_empty() && block.headerless_ommers == 0);
        let mut item = Vec::new();
        encode_block(block, &mut item);
        let v1 = version_1_item(&item);
        let mut list = Vec::new();
        encode_bal(&block.access_list, &mut list);
        let packed = PackedBlock::from_items(&v1, &list);
        assert_eq!(&packed.unpack().unwrap(), block);
        assert_eq!(packed.raw_len(), v1.len() + list.len());
    }

    #[test]
    fn bad_items_are_an_error_not_a_panic() {
        let (dump, _) = read_dump(&committed("mainnet-like.gigagas")).unwrap();
        let block = dump.blocks().next().unwrap();
        let mut item = Vec::new();
        encode_block(block, &mut item);
        let mut list = Vec::new();
        encode_bal(&block.access_list, &mut list);
        let cases: Vec<(Vec<u8>, Vec<u8>, &str)> = vec![
            (Vec::new(), Vec::new(), "the packed block"),
            (item.clone(), Vec::new(), "access list"),
            (
                item.clone(),
                [list.clone(), vec![0x80]].concat(),
                "1 unexpected bytes",
            ),
            (
                item[..item.len() - 1].to_vec(),
                list.clone(),
                "the packed block",
            ),
            (list.clone(), item.clone(), "the packed block"),
            (vec![0x80], list.clone(), "not an RLP list"),
        ];
        for (block_item, list_item, words) in cases {
            let err = PackedBlock::from_items(&block_item, &list_item)
                .unpack()
                .expect_err("bad items must not unpack");
            let msg = err.to_string();
            assert!(msg.contains(words), "`{msg}` does not mention `{words}`");
        }
        // Bytes that are not zstd at all.
        let broken = PackedBlock {
            bytes: vec![1, 2, 3].into_boxed_slice(),
            raw_len: 10,
        };
        assert!(matches!(
            broken.unpack(),
            Err(PackedBlockError(SectionProblem::Zstd(_)))
        ));
    }

    /// The figures behind [`PACK_LEVEL`], on a large dump (`GIGAGAS_PACK_DUMP`, by default
    /// /work/big/erc20-2000.gigagas): `cargo test --release -p gigagas-dump -- --ignored
    /// --nocapture packing_a_large_dump`.
    #[test]
    #[ignore = "measures a large dump that is not committed"]
    fn packing_a_large_dump() {
        use std::time::{Duration, Instant};
        let path = std::env::var_os("GIGAGAS_PACK_DUMP")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/work/big/erc20-2000.gigagas"));
        let size = std::fs::metadata(&path).unwrap().len();
        let levels: Vec<i32> = std::env::var("GIGAGAS_PACK_LEVELS")
            .map(|l| l.split(',').map(|l| l.trim().parse().unwrap()).collect())
            .unwrap_or_else(|_| vec![PACK_LEVEL]);
        for level in levels {
            let mut packed = Vec::new();
            let mut packing = Duration::ZERO;
            let start = Instant::now();
            stream_dump_blocks(&path, |b| {
                let t = Instant::now();
                packed.push(PackedBlock::from_items_at(b.block_item, b.list_item, level));
                packing += t.elapsed();
            })
            .unwrap();
            let load = start.elapsed();
            let held: usize = packed.iter().map(PackedBlock::packed_len).sum();
            let raw: usize = packed.iter().map(PackedBlock::raw_len).sum();
            let t = Instant::now();
            for p in &packed {
                std::hint::black_box(p.items().unwrap());
            }
            let decompressing = t.elapsed();
            let t = Instant::now();
            let mut transactions = 0;
            for p in &packed {
                transactions += p.unpack().unwrap().transactions.len();
            }
            let unpacking = t.elapsed();
            println!(
                "level {level}: {} blocks, {transactions} txs; file {size} B; items {raw} B; \
                 packed {held} B ({:.3} of the file); load {load:.2?}, packing {packing:.2?}; \
                 decompressing all {decompressing:.2?}; unpacking all {unpacking:.2?}",
                packed.len(),
                held as f64 / size as f64
            );
        }
    }
}
