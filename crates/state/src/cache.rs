//! Making a store cold and checking that it is: [`evict`] and [`residency`] (Linux).
//!
//! A cold pass needs the store's pages out of the OS page cache, and a figure called cold
//! needs proof. [`evict`] syncs each file and tells the kernel to drop its cached pages
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`), optionally dropping the whole page cache as
//! well (`/proc/sys/vm/drop_caches`, root only). [`residency`] counts the pages still
//! resident with `mincore` on a fresh read-only mapping of each file, which does not
//! fault anything in.
//!
//! The store must be closed first ([`crate::Store`] and every reader dropped): the kernel
//! keeps pages that a process maps, so eviction under an open environment only
//! half-works, and [`residency`] shows it.

use crate::{StoreError, store::LOCK_FILE};
use std::{
    fs::{self, File},
    os::fd::AsRawFd,
    path::{Path, PathBuf},
};

/// Most bytes of a store's data pages that may be resident for a pass to count as cold:
/// 1 MiB (256 pages).
///
/// An absolute amount, not a share: a pass touches a small part of a padded store (the
/// dump's keys and the B-trees' paths to them), so a store with that part resident is warm
/// for the blocks that matter however small a share of the file it is. [`evict`] leaves nothing resident; opening the store again touches a few pages
/// (MDBX's meta pages, the meta table, the tables' roots).
pub const COLD_MAX_RESIDENT_BYTES: u64 = 1 << 20;

/// Pages of a store's files in the page cache, from `mincore`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Residency {
    /// Bytes of the files' pages that are resident.
    pub resident_bytes: u64,
    /// Bytes of the files (rounded up to whole pages).
    pub total_bytes: u64,
}

impl Residency {
    /// Resident share, 0..=1 (0 for empty files).
    pub fn fraction(&self) -> f64 {
        if self.total_bytes == 0 {
            0.0
        } else {
            self.resident_bytes as f64 / self.total_bytes as f64
        }
    }

    /// Whether at most [`COLD_MAX_RESIDENT_BYTES`] are resident.
    pub fn is_cold(&self) -> bool {
        self.resident_bytes <= COLD_MAX_RESIDENT_BYTES
    }
}

/// The data files of a store folder (every regular file but MDBX's lock file, which is
/// the reader table, shared memory while open, not data), or `dir` itself where it is not
/// a folder.
fn data_files(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    if !dir.is_dir() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| StoreError::io("list", dir, e))? {
        let entry = entry.map_err(|e| StoreError::io("list", dir, e))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| StoreError::io("stat", &path, e))?;
        if kind.is_file() && entry.file_name() != LOCK_FILE {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 { page as u64 } else { 4096 }
}

/// Resident pages of one file (or of a whole store folder, summed over its data files).
pub fn residency(path: &Path) -> Result<Residency, StoreError> {
    let files = data_files(path)?;
    let mut total = Residency::default();
    for file in files {
        let r = file_residency(&file)?;
        total.resident_bytes += r.resident_bytes;
        total.total_bytes += r.total_bytes;
    }
    Ok(total)
}

fn file_residency(path: &Path) -> Result<Residency, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| StoreError::io("stat", path, e))?
        .len();
    if len == 0 {
        return Ok(Residency::default());
    }
    let page = page_size();
    let pages = len.div_ceil(page) as usize;
    // SAFETY: a fresh shared read-only mapping of `len` bytes of an open file; nothing
    // reads through it (mincore only asks the kernel), and it is unmapped below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(StoreError::io("map", path, std::io::Error::last_os_error()));
    }
    let mut vec = vec![0u8; pages];
    // SAFETY: `addr` is page-aligned and maps `len` bytes; `vec` has one byte per page.
    let rc = unsafe { libc::mincore(addr, len as usize, vec.as_mut_ptr()) };
    let error = std::io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(addr, len as usize) };
    if rc != 0 {
        return Err(StoreError::io("mincore", path, error));
    }
    let resident = vec.iter().filter(|b| *b & 1 != 0).count() as u64;
    Ok(Residency {
        resident_bytes: (resident * page).min(len.div_ceil(page) * page),
        total_bytes: pages as u64 * page,
    })
}

/// How [`evict`] should make a store cold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvictOptions {
    /// Also drop the whole OS page cache (`echo 1 > /proc/sys/vm/drop_caches` after a
    /// `sync`) where this process may (root, and a writable `/proc/sys`). It evicts every
    /// other program's cached files too: off by default.
    pub drop_caches: bool,
}

/// Whether [`evict`] dropped the whole page cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropCaches {
    /// Not asked for.
    NotAsked,
    /// Done.
    Dropped,
    /// Asked for but not possible here (not root, or `/proc/sys` read-only); the reason.
    Failed(String),
}

/// What [`evict`] did, and the residency after it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvictReport {
    /// Files synced and advised.
    pub files: usize,
    /// Whether the whole page cache was dropped.
    pub drop_caches: DropCaches,
    /// Resident pages after eviction: check [`Residency::is_cold`] before calling a pass
    /// cold.
    pub after: Residency,
}

/// Evict a store's data files (or one file) from the page cache: `fdatasync` then
/// `posix_fadvise(POSIX_FADV_DONTNEED)` on each, then [`EvictOptions::drop_caches`] if
/// asked. Close the store first (see the module doc). The report says how much is still
/// resident: on file systems whose pages cannot be dropped (tmpfs) it stays high.
pub fn evict(path: &Path, options: &EvictOptions) -> Result<EvictReport, StoreError> {
    let files = data_files(path)?;
    for file in &files {
        let f = File::open(file).map_err(|e| StoreError::io("open", file, e))?;
        f.sync_data().map_err(|e| StoreError::io("sync", file, e))?;
        fadvise_dontneed(&f).map_err(|e| StoreError::io("fadvise", file, e))?;
    }
    let drop_caches = if options.drop_caches {
        match drop_page_cache() {
            Ok(()) => DropCaches::Dropped,
            Err(reason) => DropCaches::Failed(reason),
        }
    } else {
        DropCaches::NotAsked
    };
    Ok(EvictReport {
        files: files.len(),
        drop_caches,
        after: residency(path)?,
    })
}

/// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`: drop the file's clean cached pages.
pub(crate) fn fadvise_dontneed(file: &File) -> std::io::Result<()> {
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

fn drop_page_cache() -> Result<(), String> {
    // SAFETY: geteuid and sync have no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root".into());
    }
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", b"1\n")
        .map_err(|e| format!("/proc/sys/vm/drop_caches: {e}"))
}
