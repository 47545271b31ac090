//! An A/B of two builds run as child processes: each round, each binary runs
//! `run ARGS --repeats N --json FILE` in the round's ABBA order
//! ([`gigagas_report::ab::round_order`]), and the rounds' results are paired point by point
//! ([`gigagas_report::ab::AbResults::pair`]).

use crate::progress::Progress;
use gigagas_report::{
    ReportError, SweepResults,
    ab::{AbResults, AbSetup, PairError, Round, Side, round_order},
};
use std::{
    ffi::OsString,
    fs::File,
    num::NonZeroUsize,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// `gigagas run` flags the A/B sets itself: the samples a round ([`AbPlan::samples`]),
/// results to its own files.
pub const SET_BY_THE_AB: [&str; 3] = ["--repeats", "--json", "--out"];

/// Why an A/B could not run.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// A binary that is missing, not a file, or not executable.
    #[error("{side} build {}: {problem}", path.display())]
    Binary {
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The binary as given.
        path: PathBuf,
        /// What is wrong, in words.
        problem: String,
    },
    /// A `gigagas run` flag that the A/B sets itself ([`SET_BY_THE_AB`]).
    #[error(
        "{0} is set by the A/B itself (--repeats through --samples, results to its own files): leave it out"
    )]
    SetByTheAb(String),
    /// A child process could not be started.
    #[error("{side} build {}: cannot start it: {source}", path.display())]
    Spawn {
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The binary.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A child process failed.
    #[error("{side} build {} failed in round {round} ({status}): {last_line}", path.display())]
    Child {
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The binary.
        path: PathBuf,
        /// The round, from 1.
        round: usize,
        /// Its exit status, in words.
        status: String,
        /// The last non-empty line it wrote to stderr.
        last_line: String,
    },
    /// A child's results could not be read.
    #[error("{side} build {}, round {round}: {source}", path.display())]
    Results {
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The binary.
        path: PathBuf,
        /// The round, from 1.
        round: usize,
        /// The error.
        source: Box<ReportError>,
    },
    /// A file of the A/B's working folder could not be made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The rounds could not be paired.
    #[error(transparent)]
    Pair(#[from] PairError),
}

/// An A/B to run.
#[derive(Debug, Clone)]
pub struct AbPlan {
    /// The binaries, OLD then NEW.
    pub binaries: [PathBuf; 2],
    /// `gigagas run` arguments both builds get.
    pub run_args: Vec<OsString>,
    /// Arguments one build alone gets after them, OLD's then NEW's.
    pub side_args: [Vec<OsString>; 2],
    /// Rounds to run.
    pub rounds: NonZeroUsize,
    /// Samples each build takes of every point in a round (its `--repeats`, interleaved
    /// over the points as `gigagas run` does); the round's figure is their median, so a
    /// burst of noise that hits one sample moves no ratio.
    pub samples: NonZeroUsize,
    /// The noise floor of the verdicts, a fraction.
    pub noise_floor: f64,
    /// Where the children's results and stderr go (an existing folder).
    pub work_dir: PathBuf,
}

impl AbPlan {
    /// Refuse, before anything runs, a binary that is missing, not a file or not
    /// executable, and a run argument the A/B sets itself.
    pub fn check(&self) -> Result<(), AbError> {
        for (side, path) in [Side::Old, Side::New].into_iter().zip(&self.binaries) {
            check_binary(side, path)?;
        }
        let args = self.run_args.iter().chain(self.side_args.iter().flatten());
        for arg in args {
            let arg = arg.to_string_lossy();
            let flag = arg.split_once('=').map_or(&*arg, |(f, _)| f);
            if let Some(set) = SET_BY_THE_AB.iter().find(|s| **s == flag) {
                return Err(AbError::SetByTheAb((*set).into()));
            }
        }
        Ok(())
    }

    fn index(side: Side) -> usize {
        match side {
            Side::Old => 0,
            Side::New => 1,
        }
    }

    /// One run of `side`'s binary: its results.
    fn run_one(&self, side: Side, round: usize) -> Result<SweepResults, AbError> {
        let path = &self.binaries[Self::index(side)];
        let stem = format!("round-{}-{}", round + 1, side.name().to_lowercase());
        let json = self.work_dir.join(format!("{stem}.json"));
        let stderr_path = self.work_dir.join(format!("{stem}.stderr"));
        let stderr = File::create(&stderr_path).map_err(|source| AbError::Io {
            path: stderr_path.clone(),
            source,
        })?;
        let status = Command::new(path)
            .arg("run")
            .args(&self.run_args)
            .args(&self.side_args[Self::index(side)])
            .arg("--repeats")
            .arg(self.samples.to_string())
            .arg("--json")
            .arg(&json)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .status()
            .map_err(|source| AbError::Spawn {
                side: side.name(),
                path: path.clone(),
                source,
            })?;
        if !status.success() {
            return Err(AbError::Child {
                side: side.name(),
                path: path.clone(),
                round: round + 1,
                status: status.to_string(),
                last_line: last_line(&stderr_path),
            });
        }
        SweepResults::load(&json).map_err(|source| AbError::Results {
            side: side.name(),
            path: path.clone(),
            round: round + 1,
            source: Box::new(source),
        })
    }

    /// Run every round, each build in the round's order, and pair the rounds. `setup`
    /// says how to record the builds ([`AbSetup`]); progress is one unit per child run.
    pub fn run(&self, setup: AbSetup, progress: &mut dyn Progress) -> Result<AbResults, AbError> {
        self.check()?;
        let n = self.rounds.get();
        progress.total(2 * n as u64);
        let mut rounds = Vec::with_capacity(n);
        for round in 0..n {
            let (mut old, mut new) = (None, None);
            for side in round_order(round) {
                progress.stage(&format!("round {}/{n}: {}", round + 1, side.name()));
                let results = self.run_one(side, round)?;
                match side {
                    Side::Old => old = Some(results),
                    Side::New => new = Some(results),
                }
                progress.advance(1);
            }
            rounds.push(Round {
                old: old.expect("OLD ran this round"),
                new: new.expect("NEW ran this round"),
            });
        }
        Ok(AbResults::pair(&rounds, setup)?)
    }
}

/// A binary that can be run: an existing file with an execute bit.
fn check_binary(side: Side, path: &Path) -> Result<(), AbError> {
    let problem = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such file".to_string(),
        Err(e) => e.to_string(),
        Ok(m) if !m.is_file() => "not a file".to_string(),
        Ok(m) if !is_executable(&m) => "not executable".to_string(),
        Ok(_) => return Ok(()),
    };
    Err(AbError::Binary {
        side: side.name(),
        path: path.to_path_buf(),
        problem,
    })
}

#[cfg(unix)]
fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    true
}

/// The last non-empty line of a child's stderr (`(no output)` when there is none).
fn last_line(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(|| "(no output)".into(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn plan(old: PathBuf, work_dir: PathBuf) -> AbPlan {
        AbPlan {
            binaries: [old, std::env::current_exe().unwrap()],
            run_args: Vec::new(),
            side_args: [Vec::new(), Vec::new()],
            rounds: NonZeroUsize::MIN,
            samples: NonZeroUsize::MIN,
            noise_floor: 0.02,
            work_dir,
        }
    }

    fn setup() -> AbSetup {
        AbSetup {
            binaries: ["old".into(), "new".into()],
            side_args: [Vec::new(), Vec::new()],
            run_args: Vec::new(),
            samples: 1,
            noise_floor: 0.02,
            started_utc: String::new(),
            provenance: None,
        }
    }

    #[test]
    fn a_binary_that_cannot_run_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("gigagas-old");
        let e = plan(missing.clone(), tmp.path().into())
            .check()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("OLD build {}: no such file", missing.display())
        );
        let e = plan(tmp.path().into(), tmp.path().into())
            .check()
            .unwrap_err();
        assert!(e.to_string().ends_with(": not a file"), "{e}");
        std::fs::write(&missing, "").unwrap();
        let e = plan(missing.clone(), tmp.path().into())
            .check()
            .unwrap_err();
        assert!(e.to_string().ends_with(": not executable"), "{e}");
        let mut p = plan(std::env::current_exe().unwrap(), tmp.path().into());
        p.side_args[1] = vec!["--json=x.json".into()];
        assert_eq!(
            p.check().unwrap_err().to_string(),
            "--json is set by the A/B itself (--repeats through --samples, results to its own files): leave it out"
        );
    }

    /// A child that fails is named with the last line of its stderr.
    #[test]
    fn a_failing_child_is_named_with_its_last_line() {
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join("gigagas-old");
        std::fs::write(
            &script,
            "#!/bin/sh\necho 'loading' >&2\necho 'error: the dump is gone' >&2\necho >&2\nexit 3\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = plan(script.clone(), tmp.path().into())
            .run(setup(), &mut ())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "OLD build {} failed in round 1 (exit status: 3): error: the dump is gone",
                script.display()
            )
        );
    }
}
