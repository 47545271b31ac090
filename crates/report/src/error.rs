//! The errors of this crate.

use std::path::PathBuf;

/// Why reading, writing or rendering results failed. Every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A `results.json` could not be parsed or written.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A plot could not be drawn.
    #[error("{}: plotting failed: {source}", path.display())]
    Plot {
        /// The folder the plots were for.
        path: PathBuf,
        /// What went wrong.
        source: PlotError,
    },
    /// An output location that cannot be used, found before any work.
    #[error("{}{}: {problem}", what.as_ref().map(|w| format!("{w} ")).unwrap_or_default(), path.display())]
    Output {
        /// The option that names the output (`--json`, `--out`, ...), when known.
        what: Option<String>,
        /// The output as given.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: OutputProblem,
    },
    /// A README's figures markers that do not pair up ([`crate::readme`]).
    #[error("{}:{line}: {problem}", path.display())]
    Readme {
        /// The README.
        path: PathBuf,
        /// The marker's line, from 1.
        line: usize,
        /// What is wrong.
        #[source]
        problem: crate::readme::markers::MarkerProblem,
    },
    /// A README whose generated figures come from more than one commit
    /// ([`crate::readme::check_one_commit`]).
    #[error("{}: the generated figures name several commits, not one: {}", path.display(), commit_list(commits))]
    SeveralCommits {
        /// The README.
        path: PathBuf,
        /// Each commit, with the blocks whose figures come from it.
        commits: Vec<(String, Vec<String>)>,
    },
    /// A `results.json` written by a newer gigagas.
    #[error("{}: results format {found} is newer than this build's {supported}", path.display())]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its format number.
        found: u32,
        /// The newest format this build reads.
        supported: u32,
    },
}

/// Why an output location cannot be used ([`ReportError::Output`]).
#[derive(Debug, thiserror::Error)]
pub enum OutputProblem {
    /// The path ends in no file name (`/`, `..`).
    #[error("not a file name")]
    NotAFileName,
    /// The output is one of the inputs.
    #[error("this is the input {}; refusing to overwrite an input (choose another output)", input.display())]
    IsAnInput {
        /// The input it would overwrite.
        input: PathBuf,
    },
    /// The output lies inside an input (a file of an input folder, a path under a file).
    #[error("would overwrite part of the input {}; choose another output", input.display())]
    InsideAnInput {
        /// The input.
        input: PathBuf,
    },
    /// The folder the output goes into cannot be written.
    #[error("cannot write there ({}): {source}", dir.display())]
    NotWritable {
        /// The existing folder that was probed.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Something on the way to the output folder is not a folder.
    #[error("cannot create the output folder: {} is not a folder", blocker.display())]
    NotAFolder {
        /// The path that is not a folder.
        blocker: PathBuf,
    },
    /// The output exists and is a folder or another non-regular file.
    #[error("exists and is not a regular file")]
    NotARegularFile,
}

/// Why a plot could not be drawn (plotters' message; [`ReportError::Plot`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(pub String);

/// `commit (block, block); commit (block)`: the commits of [`ReportError::SeveralCommits`].
fn commit_list(commits: &[(String, Vec<String>)]) -> String {
    let each: Vec<String> = commits
        .iter()
        .map(|(commit, blocks)| format!("{commit} ({})", blocks.join(", ")))
        .collect();
    each.join("; ")
}

impl ReportError {
    /// An [`ReportError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
