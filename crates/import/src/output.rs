//! Outputs never overwrite inputs: every path an import writes is compared with every file
//! it reads (same device and inode where the output exists, canonical paths otherwise)
//! before any work is done.

use std::path::{Path, PathBuf};

/// An output path that names one of the import's inputs (the same file, a hard link or a
/// symlink to it, or the input folder itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "output {} is the input {}: refusing to overwrite an input (choose another output path)",
    output.display(),
    input.display()
)]
pub struct OutputIsInput {
    /// The output path as given.
    pub output: PathBuf,
    /// The input it aliases, as given.
    pub input: PathBuf,
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

/// `path` made absolute with every existing ancestor resolved: the canonical path when it
/// exists, else the canonical nearest existing ancestor joined with the rest (an output
/// usually does not exist yet).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut base = absolute.as_path();
    loop {
        if let Ok(b) = base.canonicalize() {
            let mut out = b;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return absolute,
        }
    }
}

/// Refuse `output` when it is one of `inputs`: the same device and inode (hard links and
/// symlinks included) or the same canonical path. Call it before any work. To check many
/// outputs against the same inputs, build an [`InputSet`] once.
pub fn check_output(output: &Path, inputs: &[PathBuf]) -> Result<(), OutputIsInput> {
    InputSet::new(inputs).check(output)
}

/// The identities of a set of inputs (device and inode, canonical path), taken once, so
/// that each output checked against them costs one `stat`, not one per input.
#[derive(Debug, Default)]
pub struct InputSet {
    ids: std::collections::HashMap<FileId, PathBuf>,
    paths: std::collections::HashMap<PathBuf, PathBuf>,
}

impl InputSet {
    /// The identities of `inputs`.
    pub fn new(inputs: &[PathBuf]) -> Self {
        let mut set = Self::default();
        for input in inputs {
            if let Some(id) = file_id(input) {
                set.ids.entry(id).or_insert_with(|| input.clone());
            }
            set.paths
                .entry(resolved(input))
                .or_insert_with(|| input.clone());
        }
        set
    }

    /// Refuse `output` when it is one of the inputs ([`check_output`]).
    pub fn check(&self, output: &Path) -> Result<(), OutputIsInput> {
        let input = file_id(output)
            .and_then(|id| self.ids.get(&id))
            .or_else(|| self.paths.get(&resolved(output)));
        match input {
            Some(input) => Err(OutputIsInput {
                output: output.to_path_buf(),
                input: input.clone(),
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_found_through_links_dots_and_missing_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("f.json");
        std::fs::write(&input, "{}").unwrap();
        let inputs = [input.clone()];
        // The same file, spelled differently.
        let dotted = dir.path().join(".").join("sub").join("..").join("f.json");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for output in [input.clone(), dotted] {
            let e = check_output(&output, &inputs).unwrap_err();
            assert_eq!(e.input, input);
            assert!(e.to_string().contains("f.json"), "{e}");
        }
        #[cfg(unix)]
        {
            let link = dir.path().join("link.gigagas");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(check_output(&link, &inputs).is_err());
            let hard = dir.path().join("hard.gigagas");
            std::fs::hard_link(&input, &hard).unwrap();
            assert!(check_output(&hard, &inputs).is_err());
        }
        // A new file, even in a folder that does not exist yet, is no input.
        assert!(check_output(&dir.path().join("out.gigagas"), &inputs).is_ok());
        assert!(check_output(&dir.path().join("new/out.gigagas"), &inputs).is_ok());
        // The input folder itself.
        let folder = [dir.path().to_path_buf()];
        assert!(check_output(&dir.path().join("sub/.."), &folder).is_err());
    }
}
