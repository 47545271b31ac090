//! How every gigagas crate writes and reads whole files: one place for the rules.
//!
//! - [`write_atomic`] and [`write_atomic_with`]: a file is written to a temporary file in
//!   the same folder (a unique, hidden name), flushed to disk (`fsync`) and renamed over
//!   the target; the folder is then synced (best effort). On any failure the temporary is
//!   removed and the target keeps its previous contents, or stays absent.
//! - [`InputSet`] and [`check_output`]: an output is never one of the inputs nor part of
//!   one (the same device and inode, the same canonical path, a path under an input file,
//!   or an existing file inside an input folder), checked before any work.
//! - [`require_regular_file`], [`open_regular`] and [`read_bounded`]: an input is a
//!   regular file. A FIFO, a device, a socket or a folder is refused by its metadata,
//!   before it is opened (opening a FIFO with no writer blocks forever), with one error
//!   ([`NotARegularFile`]) naming what it is.

use std::{
    collections::HashMap,
    fmt,
    fs::{File, Metadata, OpenOptions},
    io::{self, BufWriter, Read, Write},
    path::{Component, Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

// ---------------------------------------------------------------- atomic writes

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Create a new, empty file `.<name>.tmp-<pid>-<n>` in `dir`, exclusively (never an
/// existing file, never through a symbolic link). Returns its path and the open file.
/// [`write_atomic`] writes through such a file; a caller that only wants to prove a
/// folder writable creates one and removes it.
pub fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Write `bytes` to `path` atomically ([`write_atomic_with`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// Write `path` atomically, streaming: `write` fills a buffered temporary file in the same
/// folder (it may seek, e.g. to write a header last), which is then flushed, synced
/// (`fsync`) and renamed over `path`; the folder is synced after the rename (best effort:
/// not every file system allows it). On any failure, `write`'s included, the temporary is
/// removed and `path` keeps its previous contents (or stays absent). The folder must
/// exist. Returns what `write` returned.
pub fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> io::Result<T> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the output path ends in no file name",
        )
    })?;
    let dir = parent_of(path);
    let (tmp, file) = create_temp(dir, &name.to_string_lossy())?;
    let written = (|| {
        let mut out = BufWriter::new(file);
        let value = write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        Ok(value)
    })();
    match written {
        Ok(value) => {
            // Make the rename itself durable.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(value)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

// ---------------------------------------------------------------- outputs are no inputs

/// `path` made absolute, with `.` and `..` resolved against its nearest existing ancestor,
/// which is canonicalized (symbolic links resolved): the path an output will have, even
/// when it does not exist yet. Errors only if not even the current folder can be read.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut existing = absolute.as_path();
    let mut rest: Vec<Component<'_>> = Vec::new();
    let base = loop {
        match existing.canonicalize() {
            Ok(c) => break c,
            Err(_) => {
                let Some(parent) = existing.parent() else {
                    break PathBuf::from("/");
                };
                if let Some(last) = existing.components().next_back() {
                    rest.push(last);
                }
                existing = parent;
            }
        }
    };
    let mut out = base;
    for c in rest.into_iter().rev() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Ok(out)
}

/// How an output overlaps an input ([`OutputIsInput`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// The output is the input: the same canonical path, or the same device and inode
    /// (a hard link, a symbolic link).
    Same,
    /// The output lies inside the input: a path under an input file
    /// (`x.gigagas/results.json`), or an existing file inside an input folder (every file
    /// there may be read as input; a new file there is fine).
    Inside,
}

/// An output path that would overwrite an input, refused before any work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "output {} {} {}: refusing to overwrite an input (choose another output path)",
    output.display(),
    match overlap { Overlap::Same => "is the input", Overlap::Inside => "would overwrite part of the input" },
    input.display()
)]
pub struct OutputIsInput {
    /// The output path as given.
    pub output: PathBuf,
    /// The input it overlaps, as given.
    pub input: PathBuf,
    /// How.
    pub overlap: Overlap,
}

/// A file's identity: device and inode where the platform has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId(u64, u64);

fn file_id(path: &Path) -> Option<FileId> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(FileId(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// An input as the alias check knows it.
#[derive(Debug)]
struct Input {
    /// As given (for messages).
    given: PathBuf,
    /// Whether it is a folder.
    is_dir: bool,
}

/// The identities of a set of inputs (device and inode, canonical path), taken once, so
/// that each output checked against them ([`InputSet::check`]) costs a few `stat`s,
/// however many inputs there are. Inputs that do not exist are left out (reading them
/// fails on its own).
#[derive(Debug, Default)]
pub struct InputSet {
    ids: HashMap<FileId, PathBuf>,
    paths: HashMap<PathBuf, Input>,
}

impl InputSet {
    /// The identities of `inputs`.
    pub fn new<P: AsRef<Path>>(inputs: &[P]) -> Self {
        let mut set = Self::default();
        for input in inputs {
            let input = input.as_ref();
            let Ok(canonical) = input.canonicalize() else {
                continue;
            };
            if let Some(id) = file_id(&canonical) {
                set.ids.entry(id).or_insert_with(|| input.to_path_buf());
            }
            set.paths.entry(canonical.clone()).or_insert_with(|| Input {
                given: input.to_path_buf(),
                is_dir: canonical.is_dir(),
            });
        }
        set
    }

    /// Refuse `output` when it is one of the inputs or inside one ([`Overlap`]).
    pub fn check(&self, output: &Path) -> Result<(), OutputIsInput> {
        let refuse = |input: &Path, overlap| OutputIsInput {
            output: output.to_path_buf(),
            input: input.to_path_buf(),
            overlap,
        };
        if let Some(input) = file_id(output).and_then(|id| self.ids.get(&id)) {
            return Err(refuse(input, Overlap::Same));
        }
        // Not even the current folder resolves: compare the path as given.
        let resolved = resolve(output).unwrap_or_else(|_| output.to_path_buf());
        if let Some(input) = self.paths.get(&resolved) {
            return Err(refuse(&input.given, Overlap::Same));
        }
        let existing_file = || std::fs::metadata(&resolved).is_ok_and(|m| !m.is_dir());
        for ancestor in resolved.ancestors().skip(1) {
            if let Some(input) = self.paths.get(ancestor)
                && (!input.is_dir || existing_file())
            {
                return Err(refuse(&input.given, Overlap::Inside));
            }
        }
        Ok(())
    }
}

/// Refuse `output` when it is one of `inputs` or inside one ([`InputSet::check`]). Call it
/// before any work. To check many outputs against the same inputs, build an [`InputSet`]
/// once.
pub fn check_output<P: AsRef<Path>>(output: &Path, inputs: &[P]) -> Result<(), OutputIsInput> {
    InputSet::new(inputs).check(output)
}

// ---------------------------------------------------------------- regular inputs

/// What a path that is not a regular file is ([`NotARegularFile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A folder.
    Folder,
    /// A named pipe.
    Fifo,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A Unix socket.
    Socket,
    /// Anything else.
    Other,
}

impl FileKind {
    /// What `meta` describes (a regular file is [`FileKind::Other`]: this names what is
    /// not one).
    pub fn of(meta: &Metadata) -> Self {
        let t = meta.file_type();
        if t.is_dir() {
            return Self::Folder;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                return Self::Fifo;
            }
            if t.is_char_device() {
                return Self::CharDevice;
            }
            if t.is_block_device() {
                return Self::BlockDevice;
            }
            if t.is_socket() {
                return Self::Socket;
            }
        }
        Self::Other
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Folder => "a folder",
            Self::Fifo => "a FIFO",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Socket => "a socket",
            Self::Other => "not a file",
        })
    }
}

/// An input that is not a regular file: the inner error of the [`io::Error`] (kind
/// [`io::ErrorKind::InvalidInput`]) that [`require_regular_file`] returns, so a caller can
/// find it with [`io::Error::get_ref`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a regular file ({kind}): refusing to read it")]
pub struct NotARegularFile {
    /// What it is instead.
    pub kind: FileKind,
}

/// The metadata of `path` (symbolic links followed) when it is a regular file; a FIFO, a
/// device, a socket or a folder is refused with one [`io::ErrorKind::InvalidInput`] error
/// ([`NotARegularFile`]). Nothing is opened, so a FIFO with no writer cannot block.
pub fn require_regular_file(path: &Path) -> io::Result<Metadata> {
    regular(std::fs::metadata(path)?)
}

/// `meta` where it is a regular file's, else an [`io::ErrorKind::InvalidInput`] error
/// holding [`NotARegularFile`].
fn regular(meta: Metadata) -> io::Result<Metadata> {
    if meta.is_file() {
        return Ok(meta);
    }
    let kind = FileKind::of(&meta);
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotARegularFile { kind },
    ))
}

/// Open `path` for reading when it is a regular file ([`require_regular_file`]), checked
/// again on the open file (it may have been swapped between the check and the open, which
/// is non-blocking, so a FIFO put there meanwhile does not hang it either). Returns the
/// file and its metadata.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    require_regular_file(path)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Reads of a regular file never block anyway; for a FIFO it makes the open return.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = regular(file.metadata()?)?;
    Ok((file, meta))
}

/// Read a whole input file of at most `max_bytes` that must be a regular file
/// ([`open_regular`]): a FIFO, a device (`/dev/zero`) or a folder is refused instead of
/// blocking or growing without bound, and so is a larger file
/// ([`io::ErrorKind::InvalidData`]).
pub fn read_bounded(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    let over = |size: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{size}, over the limit of {max_bytes} bytes"),
        )
    };
    if meta.len() > max_bytes {
        return Err(over(format!("{} bytes", meta.len())));
    }
    // The file may grow while it is read: read at most one byte past the cap.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(over("more bytes".into()));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.json");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        let n = write_atomic_with(&f, |w| {
            use std::io::{Seek, SeekFrom};
            w.write_all(b"xxxxx")?;
            w.seek(SeekFrom::Start(0))?;
            w.write_all(b"three")?;
            Ok(5)
        })
        .unwrap();
        assert_eq!((n, std::fs::read(&f).unwrap()), (5, b"three".to_vec()));
        assert_eq!(names(dir.path()), ["a.json"]);
    }

    #[test]
    fn failed_atomic_write_removes_its_temporary_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty folder: the final rename fails.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), b"x").unwrap();
        assert!(write_atomic(&target, b"data").is_err());
        assert_eq!(names(dir.path()), ["taken"], "a temporary file was left");
        // The writer fails half-way: the old contents stay.
        let f = dir.path().join("f");
        write_atomic(&f, b"old").unwrap();
        let e = write_atomic_with(&f, |w| {
            w.write_all(b"new, half")?;
            Err::<(), _>(io::Error::other("stopped"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "stopped");
        assert_eq!(std::fs::read(&f).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["f", "taken"]);
        // No file name, and a missing folder.
        assert!(write_atomic(Path::new("/"), b"x").is_err());
        assert!(write_atomic(&dir.path().join("no/such/f"), b"x").is_err());
        assert_eq!(names(dir.path()), ["f", "taken"]);
    }

    #[test]
    fn outputs_never_alias_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("x.gigagas");
        std::fs::write(&input, b"dump").unwrap();
        let inputs = [input.clone()];
        let overlap = |out: PathBuf| check_output(&out, &inputs).err().map(|e| e.overlap);
        assert_eq!(overlap(input.clone()), Some(Overlap::Same));
        // Through `..` (also past a folder that does not exist), a symbolic and a hard link.
        assert_eq!(
            overlap(dir.path().join("sub/../x.gigagas")),
            Some(Overlap::Same)
        );
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(
            overlap(dir.path().join("./sub/../x.gigagas")),
            Some(Overlap::Same)
        );
        std::os::unix::fs::symlink(&input, dir.path().join("link")).unwrap();
        assert_eq!(overlap(dir.path().join("link")), Some(Overlap::Same));
        std::fs::hard_link(&input, dir.path().join("hard")).unwrap();
        assert_eq!(overlap(dir.path().join("hard")), Some(Overlap::Same));
        // A symbolic link to the input's folder, then the input's name.
        std::os::unix::fs::symlink(dir.path(), dir.path().join("again")).unwrap();
        assert_eq!(
            overlap(dir.path().join("again/x.gigagas")),
            Some(Overlap::Same)
        );
        // Under the input file.
        assert_eq!(overlap(input.join("results.json")), Some(Overlap::Inside));
        // Beside the input is fine, also in a folder that does not exist yet.
        assert_eq!(overlap(dir.path().join("x.json")), None);
        assert_eq!(overlap(dir.path().join("new/x.json")), None);

        // An input folder: itself and its existing files are refused, a new file is not.
        let folder = dir.path().join("in");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("block.json"), b"{}").unwrap();
        let set = InputSet::new(std::slice::from_ref(&folder));
        let e = set.check(&folder.join("block.json")).unwrap_err();
        assert_eq!((e.overlap, &e.input), (Overlap::Inside, &folder));
        assert!(e.to_string().contains("refusing to overwrite"), "{e}");
        assert_eq!(set.check(&folder).unwrap_err().overlap, Overlap::Same);
        set.check(&folder.join("new.gigagas")).unwrap();
        // An input that does not exist is no input.
        check_output(&input, &[dir.path().join("missing")]).unwrap();
    }

    #[test]
    fn the_message_names_both_paths() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("f.json");
        std::fs::write(&input, "{}").unwrap();
        let out = dir.path().join("./f.json");
        let e = check_output(&out, std::slice::from_ref(&input)).unwrap_err();
        assert_eq!((&e.output, &e.input), (&out, &input));
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(
                "output {} is the input {}",
                out.display(),
                input.display()
            )),
            "{msg}"
        );
    }

    /// Make a FIFO at `path`; `false` where `mkfifo` is missing.
    fn mkfifo(path: &Path) -> bool {
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Run `f` on another thread and fail unless it returns within a second (a FIFO opened
    /// for reading with no writer would block forever).
    fn within_a_second<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        let start = Instant::now();
        let r = rx
            .recv_timeout(Duration::from_secs(1))
            .expect("did not return within a second: blocked on the input");
        assert!(start.elapsed() < Duration::from_secs(1));
        r
    }

    fn refused_kind(e: &io::Error) -> Option<FileKind> {
        e.get_ref()?
            .downcast_ref::<NotARegularFile>()
            .map(|n| n.kind)
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        if mkfifo(&fifo) {
            for read in [
                |p: PathBuf| require_regular_file(&p).map(drop),
                |p: PathBuf| open_regular(&p).map(drop),
                |p: PathBuf| read_bounded(&p, 1 << 20).map(drop),
            ] {
                let p = fifo.clone();
                let e = within_a_second(move || read(p)).unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
                assert_eq!(refused_kind(&e), Some(FileKind::Fifo));
                assert_eq!(
                    e.to_string(),
                    "not a regular file (a FIFO): refusing to read it"
                );
            }
        } else {
            eprintln!("skipped the FIFO case: mkfifo is not available");
        }
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(refused_kind(&e), Some(FileKind::CharDevice), "{e}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_bounded(dir.path(), 1 << 20).unwrap_err();
        assert_eq!(refused_kind(&e), Some(FileKind::Folder), "{e}");
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let e = require_regular_file(&socket).unwrap_err();
        assert_eq!(refused_kind(&e), Some(FileKind::Socket), "{e}");
        // A missing file keeps its own error.
        let e = require_regular_file(&dir.path().join("missing")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        // A symbolic link to a regular file is a regular file.
        let f = dir.path().join("f");
        std::fs::write(&f, b"abc").unwrap();
        std::os::unix::fs::symlink(&f, dir.path().join("link")).unwrap();
        assert_eq!(read_bounded(&dir.path().join("link"), 3).unwrap(), b"abc");
    }

    #[test]
    fn bounded_reads_refuse_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 100]).unwrap();
        let e = read_bounded(&big, 99).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(e.to_string(), "100 bytes, over the limit of 99 bytes");
        assert_eq!(read_bounded(&big, 100).unwrap().len(), 100);
    }
}
