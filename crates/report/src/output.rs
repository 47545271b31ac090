//! Where results go, and how they get there: the rules every command that writes follows.
//!
//! - [`check_not_inputs`]: an output is never an input, nor inside an input folder
//!   (canonical paths, and device + inode where the output exists), checked before any
//!   work.
//! - [`prepare_output_dir`] and [`prepare_output_file`]: the folder an output goes to is
//!   created (or, for a dry run, found to be creatable) and proven writable before the
//!   first measurement, so a bad location never costs a benchmark.
//! - [`write_atomic`]: every file is written to a temporary file in the same folder,
//!   flushed to disk and renamed over the target; on failure the temporary is removed and
//!   the previous file, if any, is untouched.
//! - [`read_bounded`]: an input file read whole must be a regular file (not a FIFO or a
//!   device) of at most a stated size.

use crate::error::{OutputProblem, ReportError};
use std::{
    fs::File,
    io::{Read, Write},
    os::unix::fs::MetadataExt,
    path::{Component, Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Create a new, empty file named `.<name>.<what>-<pid>-<n>` in `dir`.
fn create_temp(dir: &Path, name: &str, what: &str) -> std::io::Result<(PathBuf, File)> {
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{what}-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Write `contents` to `path` atomically: a temporary file in the same folder, written,
/// flushed to disk (fsync) and renamed over `path`. On any failure the temporary file is
/// removed and `path` keeps its previous contents (or stays absent).
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ReportError> {
    let dir = parent_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| ReportError::Output {
            what: None,
            path: path.to_path_buf(),
            problem: OutputProblem::NotAFileName,
        })?;
    let (tmp, mut file) = create_temp(dir, &name, "tmp").map_err(|e| ReportError::io(path, e))?;
    let written = file
        .write_all(contents)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&tmp, path)
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(ReportError::io(path, e));
    }
    // Make the rename itself durable (best effort: not every file system allows it).
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// `path` with `.` and `..` resolved against its nearest existing ancestor, which is
/// canonicalized (symbolic links resolved): the path the output will have. Errors only if
/// not even the current folder can be resolved.
pub fn resolve(path: &Path) -> std::io::Result<PathBuf> {
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

/// Refuse, before any work, an output that is one of the inputs or part of one: an output
/// equal to an input (the same canonical path, or the same device and inode where both
/// exist — hard links, symbolic links), an existing file inside an input folder (every
/// file under an input folder may be read as an input; a new file there is fine), or a
/// path under an input file (`x.gigagas/results.json`).
/// `what` names each output's option in the error (e.g. `--json`). Inputs that do not
/// exist are skipped (they fail on their own).
pub fn check_not_inputs(
    inputs: &[PathBuf],
    outputs: &[(&str, PathBuf)],
) -> Result<(), ReportError> {
    let inputs: Vec<(PathBuf, Option<(u64, u64)>)> = inputs
        .iter()
        .filter_map(|p| {
            let canonical = p.canonicalize().ok()?;
            let id = std::fs::metadata(&canonical)
                .ok()
                .map(|m| (m.dev(), m.ino()));
            Some((canonical, id))
        })
        .collect();
    for (what, out) in outputs {
        let resolved = resolve(out).map_err(|e| ReportError::io(out, e))?;
        let id = std::fs::metadata(out).ok().map(|m| (m.dev(), m.ino()));
        for (input, input_id) in &inputs {
            let same = resolved == *input || (id.is_some() && id == *input_id);
            if same {
                return Err(ReportError::Output {
                    what: Some(what.to_string()),
                    path: out.to_path_buf(),
                    problem: OutputProblem::IsAnInput {
                        input: input.clone(),
                    },
                });
            }
            // Under an input file (`x.gigagas/results.json`), or over a file that exists
            // inside an input folder (any of them may be read as input: `D/block.json`).
            // A new file inside an input folder is no input.
            let inside = resolved.starts_with(input)
                && (!input.is_dir() || std::fs::metadata(&resolved).is_ok_and(|m| !m.is_dir()));
            if inside {
                return Err(ReportError::Output {
                    what: Some(what.to_string()),
                    path: out.to_path_buf(),
                    problem: OutputProblem::InsideAnInput {
                        input: input.clone(),
                    },
                });
            }
        }
    }
    Ok(())
}

/// The nearest ancestor of `path` (itself included) that exists.
fn nearest_existing(path: &Path) -> Result<PathBuf, ReportError> {
    let resolved = resolve(path).map_err(|e| ReportError::io(path, e))?;
    let mut p = resolved.as_path();
    loop {
        if std::fs::symlink_metadata(p).is_ok() {
            return Ok(p.to_path_buf());
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return Ok(PathBuf::from("/")),
        }
    }
}

/// Prove `dir` (an existing folder) writable: create and remove a file in it.
fn probe_writable(dir: &Path, shown: &Path) -> Result<(), ReportError> {
    let (tmp, file) =
        create_temp(dir, "gigagas", "write-test").map_err(|source| ReportError::Output {
            what: None,
            path: shown.to_path_buf(),
            problem: OutputProblem::NotWritable {
                dir: dir.to_path_buf(),
                source,
            },
        })?;
    drop(file);
    std::fs::remove_file(&tmp).map_err(|e| ReportError::io(&tmp, e))
}

/// Make sure the folder `dir` can receive output files, before any work: create it (and
/// its parents) and prove it writable. With `dry_run`, nothing is created: the nearest
/// existing ancestor must be a folder and writable.
pub fn prepare_output_dir(dir: &Path, dry_run: bool) -> Result<(), ReportError> {
    let not_folder = |p: &Path| ReportError::Output {
        what: None,
        path: dir.to_path_buf(),
        problem: OutputProblem::NotAFolder {
            blocker: p.to_path_buf(),
        },
    };
    if dry_run {
        let existing = nearest_existing(dir)?;
        if !existing.is_dir() {
            return Err(not_folder(&existing));
        }
        return probe_writable(&existing, dir);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        let existing = nearest_existing(dir)?;
        if !existing.is_dir() {
            return Err(not_folder(&existing));
        }
        return Err(ReportError::io(dir, e));
    }
    if !dir.is_dir() {
        return Err(not_folder(dir));
    }
    probe_writable(dir, dir)
}

/// Make sure the file `path` can be written, before any work: not a folder or another
/// non-regular file, its folder created and writable (with `dry_run`, creatable).
pub fn prepare_output_file(path: &Path, dry_run: bool) -> Result<(), ReportError> {
    if path.file_name().is_none() {
        return Err(ReportError::Output {
            what: None,
            path: path.to_path_buf(),
            problem: OutputProblem::NotAFileName,
        });
    }
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
    {
        return Err(ReportError::Output {
            what: None,
            path: path.to_path_buf(),
            problem: OutputProblem::NotARegularFile,
        });
    }
    prepare_output_dir(parent_of(path), dry_run)
}

/// Read a whole input file of at most `max_bytes` that must be a regular file: a FIFO, a
/// device (`/dev/zero`) or a folder is refused by name instead of blocking or growing
/// without bound.
pub fn read_bounded(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a folder, FIFO or device)",
        ));
    }
    if meta.len() > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("{} bytes, over the limit of {max_bytes}", meta.len()),
        ));
    }
    let file = File::open(path)?;
    // The file may have been swapped since the check: read at most one byte past the cap.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("over the limit of {max_bytes} bytes"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(names(dir.path()), ["a.json"]);
    }

    #[test]
    fn failed_atomic_write_removes_its_temporary() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty folder: the final rename fails.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), b"x").unwrap();
        assert!(write_atomic(&target, b"data").is_err());
        assert_eq!(names(dir.path()), ["taken"], "a temporary file was left");
    }

    #[test]
    fn outputs_never_alias_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("x.gigagas");
        std::fs::write(&input, b"dump").unwrap();
        let inputs = [input.clone()];
        let refused = |out: PathBuf| check_not_inputs(&inputs, &[("--json", out)]).is_err();
        assert!(refused(input.clone()));
        // Through `..`, a symbolic link and a hard link.
        assert!(refused(dir.path().join("sub/../x.gigagas")));
        std::os::unix::fs::symlink(&input, dir.path().join("link")).unwrap();
        assert!(refused(dir.path().join("link")));
        std::fs::hard_link(&input, dir.path().join("hard")).unwrap();
        assert!(refused(dir.path().join("hard")));
        // Under the input file, and inside an input folder.
        assert!(refused(input.join("results.json")));
        let folder = dir.path().join("in");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("block.json"), b"{}").unwrap();
        let folder_out = |p: PathBuf| check_not_inputs(std::slice::from_ref(&folder), &[("-o", p)]);
        assert!(folder_out(folder.join("block.json")).is_err());
        assert!(folder_out(folder.clone()).is_err());
        folder_out(folder.join("new.gigagas")).unwrap();
        // Beside the input is fine.
        assert!(!refused(dir.path().join("x.json")));
        assert!(!refused(dir.path().join("new/x.json")));
    }

    #[test]
    fn output_locations_are_checked_before_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        for dry in [true, false] {
            let e = prepare_output_dir(&file.join("out"), dry).unwrap_err();
            assert!(e.to_string().contains("not a folder"), "{e}");
            assert!(prepare_output_file(&file.join("r.json"), dry).is_err());
            assert!(prepare_output_file(dir.path(), dry).is_err(), "a folder");
        }
        let new = dir.path().join("a/b");
        prepare_output_dir(&new, true).unwrap();
        assert!(!new.exists(), "a dry run creates nothing");
        prepare_output_dir(&new, false).unwrap();
        assert!(new.is_dir());
        assert!(names(&new).is_empty(), "the probe file was removed");
    }

    #[test]
    fn bounded_reads_refuse_devices_fifos_and_big_files() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if made {
            let e = read_bounded(&fifo, 1 << 20).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 100]).unwrap();
        assert!(read_bounded(&big, 99).is_err());
        assert_eq!(read_bounded(&big, 100).unwrap().len(), 100);
    }
}
