//! Importing whole files and directories: one dump per test, a line per test, totals.

use crate::{
    error::ImportError,
    fixture::{BlockchainTest, FixtureFile},
    import::{ImportStats, import_test},
};
use gigagas_fs_util::{InputSet, check_output};
use std::path::{Path, PathBuf};

/// What happened to one test.
#[derive(Debug)]
pub enum Outcome {
    /// Imported and checked: every valid block reproduced, every block the fixture expects
    /// rejected rejected ([`ImportStats::rejected`]); the valid chain written.
    Passed {
        /// The dump written; `None` when the fixture has no valid block (nothing to dump).
        output: Option<PathBuf>,
        /// Sizes.
        stats: ImportStats,
    },
    /// Not importable by design (unsupported network, side chains, revm's Amsterdam rules).
    Skipped {
        /// Why (the error's message, starting with the test name).
        reason: String,
    },
    /// Malformed, diverging from the fixture, or not written.
    Failed {
        /// What went wrong.
        error: ImportError,
    },
}

/// One line of a batch import.
#[derive(Debug)]
pub struct TestReport {
    /// The fixture file.
    pub file: PathBuf,
    /// The test name (the file name for a file that is not a fixture at all).
    pub test: String,
    /// What happened.
    pub outcome: Outcome,
}

impl std::fmt::Display for TestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.outcome {
            Outcome::Passed { output, stats } => {
                write!(
                    f,
                    "pass  {}  ({} blocks, {} txs, {} gas{}",
                    self.test,
                    stats.blocks,
                    stats.transactions,
                    stats.gas_used,
                    if stats.checked_accounts {
                        ""
                    } else {
                        ", post-state checked by root"
                    },
                )?;
                for r in &stats.rejected {
                    write!(f, "; {r}")?;
                }
                match output {
                    Some(output) if stats.transactions == 0 => write!(
                        f,
                        ") -> {}: no transactions, nothing to measure (a suite run skips it)",
                        output.display()
                    ),
                    Some(output) => write!(f, ") -> {}", output.display()),
                    None => write!(f, ") -> no valid block, nothing written"),
                }
            }
            // Test-level errors start with the test name, file-level ones with the path.
            Outcome::Skipped { reason } => write!(f, "skip  {reason}"),
            Outcome::Failed { error } => write!(f, "FAIL  {error}"),
        }
    }
}

impl TestReport {
    /// The dump written for this test when it holds no transaction (blocks without
    /// transactions are valid blocks, but nothing to measure: `gigagas run` skips such a
    /// dump); `None` otherwise.
    pub fn dump_without_transactions(&self) -> Option<&Path> {
        match &self.outcome {
            Outcome::Passed {
                output: Some(output),
                stats,
            } if stats.transactions == 0 => Some(output),
            _ => None,
        }
    }
}

/// Totals of a batch import.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Tests imported and written.
    pub passed: usize,
    /// Tests (or files) that failed.
    pub failed: usize,
    /// Tests skipped as unsupported.
    pub skipped: usize,
}

impl ImportSummary {
    /// Tests seen.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} tests: {} passed, {} failed, {} skipped",
            self.total(),
            self.passed,
            self.failed,
            self.skipped
        )
    }
}

/// A test name as a file name: ASCII letters, digits, `.`, `-`, `_` kept, everything else
/// `_`; names over 200 characters are cut and suffixed with a hash of the full name so
/// they stay unique.
pub fn sanitize_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s_trim = s.trim_matches(|c| c == '.' || c == '_').to_string();
    s = if s_trim.is_empty() {
        "test".into()
    } else {
        s_trim
    };
    if s.len() > 200 {
        s.truncate(200);
        s.push('-');
        s.push_str(&name_hash(name));
    }
    s
}

fn name_hash(name: &str) -> String {
    alloy_primitives::hex::encode(&alloy_primitives::keccak256(name.as_bytes())[..4])
}

/// Output file names already given out in one batch, so that no two tests of a run write
/// the same file: two tests whose sanitised names coincide (`a/b` and `a_b`), or tests of
/// the same name in different fixture files. The first keeps its plain name; every later
/// one gets a hash of its fixture file (relative to the input) and test name, then a
/// counter if even that is taken. Names are compared ignoring ASCII case, so they stay
/// distinct on case-insensitive file systems.
#[derive(Default)]
struct Names(std::collections::HashSet<String>);

impl Names {
    /// The output file name for `test` of the fixture file `file` (its path relative to
    /// the input).
    fn file_name(&mut self, test: &str, file: &str) -> String {
        let base = sanitize_name(test);
        let mut s = base.clone();
        if self.0.contains(&s.to_ascii_lowercase()) {
            let hash = name_hash(&format!("{file}::{test}"));
            s = format!("{base}-{hash}");
            let mut i = 2u64;
            while self.0.contains(&s.to_ascii_lowercase()) {
                s = format!("{base}-{hash}-{i}");
                i += 1;
            }
        }
        self.0.insert(s.to_ascii_lowercase());
        format!("{s}.gigagas")
    }
}

/// Every `.json` file under `dir`, recursively, sorted by path, each file once.
///
/// Symlinks are followed, but every folder is entered once (by its canonical path, so a
/// symlink loop ends) and every file listed once (by its canonical path: a fixture reached
/// through a symlink as well is not imported twice). Real sub-folders are walked before
/// symlinked ones, so a file is listed under its real path where it has one.
pub fn fixture_files(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ImportError::Io { path, source }
    };
    let mut visited = std::collections::HashSet::new();
    // (canonical path, reached through a symlink, path as found)
    let mut found: Vec<(PathBuf, bool, PathBuf)> = Vec::new();
    // (folder, reached through a symlink)
    let mut stack = vec![(dir.to_path_buf(), false)];
    let mut linked = Vec::new();
    while let Some((d, via_link)) = stack.pop().or_else(|| linked.pop()) {
        if !visited.insert(d.canonicalize().map_err(io(&d))?) {
            continue;
        }
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&d).map_err(io(&d))? {
            entries.push(entry.map_err(io(&d))?);
        }
        entries.sort_by_key(|e| e.file_name());
        for entry in entries.into_iter().rev() {
            let path = entry.path();
            let link = via_link || entry.file_type().map_err(io(&path))?.is_symlink();
            if path.is_dir() {
                if link {
                    linked.push((path, true));
                } else {
                    stack.push((path, false));
                }
            } else if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            {
                // A dangling symlink is listed as it is: reading it reports the error.
                let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
                found.push((canonical, link, path));
            }
        }
    }
    // One path per file: the real one where there is one, else the first by name.
    found.sort();
    found.dedup_by(|later, first| later.0 == first.0);
    let mut out: Vec<PathBuf> = found.into_iter().map(|(_, _, path)| path).collect();
    out.sort();
    if out.is_empty() {
        return Err(ImportError::NoFixtures {
            path: dir.to_path_buf(),
        });
    }
    Ok(out)
}

/// Import one test of a parsed file and write its dump to `output` (only when every
/// check passes, and only when the fixture has a valid block: see the returned path).
/// `output` naming the fixture file itself is refused before any work
/// ([`ImportError::OutputIsInput`]); the dump is written atomically
/// ([`gigagas_dump::write_dump`]: a temporary file in the same folder, synced, renamed).
pub fn import_one(
    file: &FixtureFile,
    name: &str,
    output: &Path,
) -> Result<(Option<PathBuf>, ImportStats), ImportError> {
    check_output(output, std::slice::from_ref(&file.path))?;
    let value = file
        .tests
        .get(name)
        .ok_or_else(|| ImportError::TestNotFound {
            path: file.path.clone(),
            test: name.into(),
            available: available(file.names()),
        })?;
    let test = BlockchainTest::from_json(name, value)?;
    let (dump, stats) = import_test(&file.path, name, &test)?;
    let Some(dump) = dump else {
        return Ok((None, stats));
    };
    gigagas_dump::write_dump(&dump, output)?;
    Ok((Some(output.to_path_buf()), stats))
}

fn available<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let mut s = names
        .iter()
        .take(5)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 5 {
        s.push_str(&format!(" and {} more", names.len() - 5));
    }
    if s.is_empty() { "none".into() } else { s }
}

/// How [`import`] lays out its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputLayout {
    /// One test from one file: `output` is the dump file (or a directory to put it in).
    Single,
    /// Many tests: `output` is a directory, one `<sanitised name>.gigagas` per test.
    Directory,
}

/// Import `input` (a fixture file or a directory of them, searched recursively), all
/// tests or only `test`. Calls `on_report` once per test as it finishes.
///
/// A single selected test from a file is written to `output` itself (or into `output` if
/// it is an existing directory) and any failure, skips included, is returned as the
/// error. Otherwise `output` is a directory; every test gets a report (files that are not
/// fixtures are reported as failed), and the totals are returned.
///
/// No output overwrites an input: `output` and every dump path are checked against the
/// fixture files ([`check_output`]) before anything is executed or written
/// ([`ImportError::OutputIsInput`]). Every test of the run writes its own file
/// ([`OutputLayout::Directory`] names are unique per run: a later test whose name is taken
/// gets a hash of its fixture file's relative path and its name appended), so the passed
/// count is the number of dumps written (plus tests with no valid block, which write none).
pub fn import(
    input: &Path,
    test: Option<&str>,
    output: &Path,
    mut on_report: impl FnMut(&TestReport),
) -> Result<(OutputLayout, ImportSummary), ImportError> {
    if !input.is_dir() {
        return import_file(input, test, output, on_report);
    }
    let mut summary = ImportSummary::default();
    let files = fixture_files(input)?;
    let inputs = InputSet::new(&files);
    inputs.check(output)?;
    make_dir(output)?;
    let mut used = Names::default();
    let mut found = false;
    for path in files {
        let file = match FixtureFile::read(&path) {
            Ok(f) => f,
            Err(error) => {
                if test.is_none() {
                    summary.failed += 1;
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    on_report(&TestReport {
                        file: path.clone(),
                        test: name,
                        outcome: Outcome::Failed { error },
                    });
                }
                continue;
            }
        };
        let names: Vec<String> = match test {
            Some(t) => Vec::from_iter(file.tests.contains_key(t).then(|| t.to_string())),
            None => file.names().map(String::from).collect(),
        };
        let relative = path.strip_prefix(input).unwrap_or(&path);
        let relative = relative.to_string_lossy();
        for name in &names {
            found = true;
            let target = output.join(used.file_name(name, &relative));
            run_one(&file, name, target, &inputs, &mut summary, &mut on_report);
        }
    }
    if let (Some(t), false) = (test, found) {
        return Err(ImportError::TestNotFound {
            path: input.to_path_buf(),
            test: t.into(),
            available: "see the fixture files".into(),
        });
    }
    Ok((OutputLayout::Directory, summary))
}

/// [`import`] of a fixture file: one selected test is written to `output` itself (or into
/// it, if it is a directory), several into the directory `output`.
fn import_file(
    input: &Path,
    test: Option<&str>,
    output: &Path,
    mut on_report: impl FnMut(&TestReport),
) -> Result<(OutputLayout, ImportSummary), ImportError> {
    let mut summary = ImportSummary::default();
    let inputs = [input.to_path_buf()];
    check_output(output, &inputs)?;
    let file = FixtureFile::read(input)?;
    let selected: Vec<String> = match test {
        Some(t) => {
            if !file.tests.contains_key(t) {
                return Err(ImportError::TestNotFound {
                    path: input.to_path_buf(),
                    test: t.into(),
                    available: available(file.names()),
                });
            }
            vec![t.to_string()]
        }
        None => file.names().map(String::from).collect(),
    };
    if selected.len() == 1 {
        let name = &selected[0];
        let target = if output.is_dir() {
            output.join(format!("{}.gigagas", sanitize_name(name)))
        } else {
            output.to_path_buf()
        };
        check_output(&target, &inputs)?;
        let (output, stats) = import_one(&file, name, &target)?;
        summary.passed = 1;
        on_report(&TestReport {
            file: input.to_path_buf(),
            test: name.clone(),
            outcome: Outcome::Passed { output, stats },
        });
        return Ok((OutputLayout::Single, summary));
    }
    make_dir(output)?;
    let inputs = InputSet::new(&inputs);
    let mut used = Names::default();
    for name in &selected {
        let target = output.join(used.file_name(name, ""));
        run_one(&file, name, target, &inputs, &mut summary, &mut on_report);
    }
    Ok((OutputLayout::Directory, summary))
}

fn make_dir(dir: &Path) -> Result<(), ImportError> {
    std::fs::create_dir_all(dir).map_err(|source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn run_one(
    file: &FixtureFile,
    name: &str,
    output: PathBuf,
    inputs: &InputSet,
    summary: &mut ImportSummary,
    on_report: &mut impl FnMut(&TestReport),
) {
    let result = inputs
        .check(&output)
        .map_err(ImportError::from)
        .and_then(|()| import_one(file, name, &output));
    let outcome = match result {
        Ok((output, stats)) => {
            summary.passed += 1;
            Outcome::Passed { output, stats }
        }
        Err(e) if e.is_unsupported() => {
            summary.skipped += 1;
            Outcome::Skipped {
                reason: e.to_string(),
            }
        }
        Err(error) => {
            summary.failed += 1;
            Outcome::Failed { error }
        }
    };
    on_report(&TestReport {
        file: file.path.clone(),
        test: name.to_string(),
        outcome,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_names_are_file_names() {
        assert_eq!(sanitize_name("add11_d0g0v0_Cancun"), "add11_d0g0v0_Cancun");
        assert_eq!(
            sanitize_name("src/a/test_x.py::test_y[fork_Cancun-blockchain_test-z]"),
            "src_a_test_x.py__test_y_fork_Cancun-blockchain_test-z"
        );
        let long = "x".repeat(300);
        let s = sanitize_name(&long);
        assert!(s.len() <= 209);
        assert_ne!(s, sanitize_name(&"x".repeat(301)));
        assert_eq!(sanitize_name("../"), "test");
        let mut used = Names::default();
        assert_eq!(used.file_name("a/b", "x.json"), "a_b.gigagas");
        assert_ne!(used.file_name("a_b", "x.json"), "a_b.gigagas");
    }

    #[test]
    fn output_names_are_unique_per_run() {
        // Three fixture files whose tests share a name, a name differing in case only,
        // and a name that is another's disambiguated one: every file name distinct.
        let mut used = Names::default();
        let mut names = std::collections::HashSet::new();
        for (test, file) in [
            ("t", "a/f.json"),
            ("t", "b/f.json"),
            ("t", "c/f.json"),
            ("t", "c/f.json"),
            ("T", "d/f.json"),
        ] {
            let n = used.file_name(test, file);
            assert!(names.insert(n.to_ascii_lowercase()), "{n} given twice");
        }
        let taken = names.iter().find(|n| n.starts_with("t-")).unwrap().clone();
        let taken = taken.trim_end_matches(".gigagas");
        let n = used.file_name(taken, "e/f.json");
        assert!(names.insert(n.to_ascii_lowercase()), "{n} given twice");
    }
}
