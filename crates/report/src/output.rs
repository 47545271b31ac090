//! Where results go, and how they get there: the rules every command that writes follows.
//! The rules themselves live in [`gigagas_fs_util`], shared with every crate that
//! writes; this module names the option and the file in a [`ReportError`].
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
use gigagas_fs_util::{self as files, Overlap};
use std::path::{Path, PathBuf};

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Refuse a path that names no file (`/`, `..`).
fn require_file_name(path: &Path) -> Result<(), ReportError> {
    match path.file_name() {
        Some(_) => Ok(()),
        None => Err(ReportError::Output {
            what: None,
            path: path.to_path_buf(),
            problem: OutputProblem::NotAFileName,
        }),
    }
}

/// Write `contents` to `path` atomically ([`gigagas_fs_util::write_atomic`]): a
/// temporary file in the same folder, written, flushed to disk (fsync) and renamed over
/// `path`. On any failure the temporary file is removed and `path` keeps its previous
/// contents (or stays absent).
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ReportError> {
    require_file_name(path)?;
    files::write_atomic(path, contents).map_err(|e| ReportError::io(path, e))
}

/// Refuse, before any work, an output that is one of the inputs or part of one: an output
/// equal to an input (the same canonical path, or the same device and inode where both
/// exist — hard links, symbolic links), an existing file inside an input folder (every
/// file under an input folder may be read as an input; a new file there is fine), or a
/// path under an input file (`x.gigagas/results.json`); the rule of
/// [`gigagas_fs_util::InputSet`].
/// `what` names each output's option in the error (e.g. `--json`). Inputs that do not
/// exist are skipped (they fail on their own).
pub fn check_not_inputs(
    inputs: &[PathBuf],
    outputs: &[(&str, PathBuf)],
) -> Result<(), ReportError> {
    let inputs = files::InputSet::new(inputs);
    for (what, out) in outputs {
        inputs.check(out).map_err(|e| ReportError::Output {
            what: Some(what.to_string()),
            path: out.to_path_buf(),
            problem: match e.overlap {
                Overlap::Same => OutputProblem::IsAnInput { input: e.input },
                Overlap::Inside => OutputProblem::InsideAnInput { input: e.input },
            },
        })?;
    }
    Ok(())
}

/// The nearest ancestor of `path` (itself included) that exists.
fn nearest_existing(path: &Path) -> Result<PathBuf, ReportError> {
    let resolved = files::resolve(path).map_err(|e| ReportError::io(path, e))?;
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
        files::create_temp(dir, "gigagas.write-test").map_err(|source| ReportError::Output {
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
    require_file_name(path)?;
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
/// device (`/dev/zero`) or a folder is refused by name, before it is opened, instead of
/// blocking or growing without bound ([`gigagas_fs_util::read_bounded`]).
pub fn read_bounded(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    files::read_bounded(path, max_bytes)
}

/// Read a JSON file of at most `max_bytes` ([`read_bounded`]'s rule) as a `T`; either
/// failure names the file.
pub fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    max_bytes: u64,
) -> Result<T, ReportError> {
    let bytes = read_bounded(path, max_bytes).map_err(|e| ReportError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_without_a_file_name_is_refused_by_name() {
        let e = write_atomic(Path::new("/"), b"x").unwrap_err();
        assert!(e.to_string().contains("not a file name"), "{e}");
    }

    #[test]
    fn aliases_are_refused_naming_the_option_and_the_input() {
        let temp = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        let (dir, input) = (temp.parent().unwrap(), temp.to_path_buf());
        let inputs = [input.clone()];
        let problem = |out: PathBuf| match check_not_inputs(&inputs, &[("--json", out)]) {
            Err(ReportError::Output { what, problem, .. }) => {
                assert_eq!(what.as_deref(), Some("--json"));
                Some(problem)
            }
            Err(other) => panic!("{other}"),
            Ok(()) => None,
        };
        let same = problem(dir.join("sub/..").join(input.file_name().unwrap()));
        assert!(
            matches!(&same, Some(OutputProblem::IsAnInput { input: i }) if i == &input),
            "{same:?}"
        );
        let inside = problem(input.join("results.json"));
        assert!(
            matches!(&inside, Some(OutputProblem::InsideAnInput { input: i }) if i == &input),
            "{inside:?}"
        );
        assert!(problem(input.with_extension("json")).is_none());
        let e = check_not_inputs(&inputs, &[("--json", input.clone())]).unwrap_err();
        assert!(e.to_string().starts_with("--json "), "{e}");
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
        let left = std::fs::read_dir(&new).unwrap().count();
        assert_eq!(left, 0, "the probe file was removed");
    }

    #[test]
    fn bounded_reads_refuse_devices() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}
