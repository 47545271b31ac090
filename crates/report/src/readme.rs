//! The README's generated figures: every table between a pair of markers
//!
//! ```text
//! <!-- gigagas:figures BEGIN mainnet -->
//! ...
//! <!-- gigagas:figures END mainnet -->
//! ```
//!
//! is the [`crate::table::figure`] of the newest folder of the sweep it names
//! (`results/mainnet/<newest>/`, [`crate::folder::latest_results_dir`]), rendered by
//! [`render`]; the text outside the markers is left as it is. A sweep with no folder yet
//! renders a line that says so. [`stale`] names the blocks whose text is not what the
//! committed folders render.

pub(crate) mod markers;

pub use markers::{BEGIN, END, MarkerProblem};

use crate::{error::ReportError, folder, table};
use markers::marker_name;
use std::path::Path;

/// One generated block of a README: the sweep it names and the byte range of its text
/// (between the end of the opening marker's line and the start of the closing one's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The sweep, a folder under `results/`.
    pub name: String,
    /// The block's text in the README.
    pub text: std::ops::Range<usize>,
}

/// The generated blocks of a README's text, in order. `path` names the README in errors.
pub fn blocks(text: &str, path: &Path) -> Result<Vec<Block>, ReportError> {
    let problem = |line: usize, problem: MarkerProblem| ReportError::Readme {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let mut out = Vec::new();
    let mut open: Option<(String, usize, usize)> = None;
    let mut at = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        if trimmed.starts_with(BEGIN) {
            let name = marker_name(trimmed, BEGIN).map_err(|p| problem(n + 1, p))?;
            if let Some((open, _, _)) = &open {
                let (open, name) = (open.clone(), name.to_string());
                return Err(problem(n + 1, MarkerProblem::Nested { open, name }));
            }
            open = Some((name.to_string(), at, n + 1));
        } else if trimmed.starts_with(END) {
            let name = marker_name(trimmed, END).map_err(|p| problem(n + 1, p))?;
            match open.take() {
                Some((open, from, _)) if open == name => out.push(Block {
                    name: open,
                    text: from..start,
                }),
                _ => {
                    let name = name.to_string();
                    return Err(problem(n + 1, MarkerProblem::NotOpen { name }));
                }
            }
        }
    }
    match open {
        Some((name, _, line)) => Err(problem(line, MarkerProblem::NotClosed { name })),
        None => Ok(out),
    }
}

/// The folder a block shows: the newest of sweep `name` under `results_root`, if there is
/// one; or, where the marker names one folder (`io/2026-11-28-1310270bd576`), that folder,
/// so that a README keeps every table from one commit while newer folders of a sweep land
/// beside it.
fn newest(results_root: &Path, name: &str) -> Result<Option<std::path::PathBuf>, ReportError> {
    if name.contains('/') {
        let dir = results_root.join(name);
        return Ok(dir.join("results.json").is_file().then_some(dir));
    }
    let sweep = results_root.join(name);
    if sweep.is_dir() {
        folder::latest_results_dir(&sweep)
    } else {
        Ok(None)
    }
}

/// The commit each block's figures come from (`None`: no folder yet), in order: the
/// figures are from one commit when these are one.
pub fn commits(
    text: &str,
    path: &Path,
    results_root: &Path,
) -> Result<Vec<(String, Option<String>)>, ReportError> {
    let mut out = Vec::new();
    for block in blocks(text, path)? {
        let commit = match newest(results_root, &block.name)? {
            Some(dir) => Some(folder::load_dir(&dir)?.machine.commit),
            None => None,
        };
        out.push((block.name, commit));
    }
    Ok(out)
}

/// A commit the figures come from (`None`: no folder yet) and the blocks that show it.
pub type CommitBlocks = (Option<String>, Vec<String>);

/// The blocks grouped by the commit their figures come from, each commit once, in the
/// order first met.
pub fn by_commit(
    text: &str,
    path: &Path,
    results_root: &Path,
) -> Result<Vec<CommitBlocks>, ReportError> {
    let mut out: Vec<CommitBlocks> = Vec::new();
    for (name, commit) in commits(text, path, results_root)? {
        match out.iter_mut().find(|(c, _)| *c == commit) {
            Some((_, names)) => names.push(name),
            None => out.push((commit, vec![name])),
        }
    }
    Ok(out)
}

/// Fails with [`ReportError::SeveralCommits`] when the blocks' figures come from more than
/// one commit (a block with no folder yet names none).
pub fn check_one_commit(text: &str, path: &Path, results_root: &Path) -> Result<(), ReportError> {
    let commits: Vec<(String, Vec<String>)> = by_commit(text, path, results_root)?
        .into_iter()
        .filter_map(|(commit, names)| Some((commit?, names)))
        .collect();
    if commits.len() > 1 {
        return Err(ReportError::SeveralCommits {
            path: path.to_path_buf(),
            commits,
        });
    }
    Ok(())
}

/// The text of the block for sweep `name`: a blank line, the figure of the newest folder
/// under `results_root/name/` linked as `results/name/<folder>`, a blank line; or, with
/// no folder, a line that says so.
pub fn render_block(results_root: &Path, name: &str) -> Result<String, ReportError> {
    let Some(dir) = newest(results_root, name)? else {
        return Ok(format!(
            "\n*No results under `results/{name}/` yet: `bench-configs/readme-figures.sh` \
             writes them (it skips a sweep whose peer or input is absent, and says so).*\n\n"
        ));
    };
    let results = folder::load_dir(&dir)?;
    let folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sweep = name.split_once('/').map_or(name, |(sweep, _)| sweep);
    let link = format!("results/{sweep}/{folder_name}");
    Ok(format!("\n{}\n", table::figure(&results, &link)))
}

/// `text` with every generated block rendered from the newest folders under
/// `results_root` (the README's own `results/`). `path` names the README in errors.
pub fn render(text: &str, path: &Path, results_root: &Path) -> Result<String, ReportError> {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for block in blocks(text, path)? {
        out.push_str(&text[at..block.text.start]);
        out.push_str(&render_block(results_root, &block.name)?);
        at = block.text.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The names of the blocks of `text` whose text differs from what [`render`] makes of
/// them: empty when the README's figures are those of the folders under `results_root`.
pub fn stale(text: &str, path: &Path, results_root: &Path) -> Result<Vec<String>, ReportError> {
    let mut out = Vec::new();
    for block in blocks(text, path)? {
        if text[block.text.clone()] != render_block(results_root, &block.name)? {
            out.push(block.name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Result<Vec<String>, ReportError> {
        Ok(blocks(text, Path::new("README.md"))?
            .into_iter()
            .map(|b| b.name)
            .collect())
    }

    /// Blocks are found with their text between the marker lines; the text outside is
    /// left alone, and a sweep without a folder renders a line saying so.
    #[test]
    fn blocks_are_found_and_rendered_in_place() {
        let text =
            "# t\n\n<!-- gigagas:figures BEGIN a -->\nold\n<!-- gigagas:figures END a -->\ntail\n";
        let found = blocks(text, Path::new("README.md")).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(&text[found[0].text.clone()], "old\n");
        let root = tempfile::tempdir().unwrap();
        let out = render(text, Path::new("README.md"), root.path()).unwrap();
        assert!(
            out.starts_with(
                "# t\n\n<!-- gigagas:figures BEGIN a -->\n\n*No results under `results/a/` yet"
            ),
            "{out}"
        );
        assert!(
            out.ends_with("\n\n<!-- gigagas:figures END a -->\ntail\n"),
            "{out}"
        );
        assert_eq!(
            stale(text, Path::new("README.md"), root.path()).unwrap(),
            ["a"]
        );
        assert!(
            stale(&out, Path::new("README.md"), root.path())
                .unwrap()
                .is_empty()
        );
    }

    /// Writes a results folder of sweep `name` under `root` whose machine names `commit`.
    fn folder_at(root: &Path, name: &str, commit: &str) {
        let mut set = crate::results::tests::sample("CPU");
        set.machine.commit = commit.into();
        let dir = root.join(name).join(format!("2026-01-01-{commit}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.json"), set.to_json()).unwrap();
    }

    /// Figures of one commit pass; figures of two fail, naming each commit with its
    /// blocks; a block with no folder names no commit.
    #[test]
    fn figures_of_several_commits_are_refused() {
        let b = |n: &str| {
            format!("<!-- gigagas:figures BEGIN {n} -->\n\n<!-- gigagas:figures END {n} -->\n")
        };
        let text = format!("{}{}{}", b("a"), b("b"), b("none"));
        let readme = Path::new("README.md");
        let root = tempfile::tempdir().unwrap();
        folder_at(root.path(), "a", "1111111");
        folder_at(root.path(), "b", "1111111");
        check_one_commit(&text, readme, root.path()).unwrap();
        assert_eq!(
            by_commit(&text, readme, root.path()).unwrap(),
            [
                (
                    Some("1111111".to_string()),
                    vec!["a".to_string(), "b".to_string()]
                ),
                (None, vec!["none".to_string()]),
            ]
        );
        std::fs::remove_dir_all(root.path().join("b")).unwrap();
        folder_at(root.path(), "b", "2222222");
        let err = check_one_commit(&text, readme, root.path()).unwrap_err();
        assert!(matches!(err, ReportError::SeveralCommits { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "README.md: the generated figures name several commits, not one: 1111111 (a); 2222222 (b)"
        );
    }

    /// Markers that do not pair up are refused with their line.
    #[test]
    fn unpaired_markers_are_refused() {
        let b = |n: &str| format!("<!-- gigagas:figures BEGIN {n} -->\n");
        let e = |n: &str| format!("<!-- gigagas:figures END {n} -->\n");
        assert_eq!(names(&format!("{}x\n{}", b("a"), e("a"))).unwrap(), ["a"]);
        // A sweep and one of its folders: that folder, pinned.
        let pinned = "io/2026-11-28-1310270bd576";
        assert_eq!(
            names(&format!("{}x\n{}", b(pinned), e(pinned))).unwrap(),
            [pinned]
        );
        for bad in ["io/", "/x", "a/b/c"] {
            assert!(names(&format!("{}{}", b(bad), e(bad))).is_err(), "{bad}");
        }
        for (text, line, problem) in [
            (
                format!("{}{}", b("a"), b("b")),
                2,
                "`b` opens before `a` is closed",
            ),
            (
                format!("{}{}", b("a"), e("b")),
                2,
                "`b` closes, but is not open",
            ),
            (format!("x\n{}", b("a")), 2, "`a` is never closed"),
            (
                "<!-- gigagas:figures BEGIN a b -->\n".to_string(),
                1,
                "a figures marker",
            ),
        ] {
            let err = names(&text).unwrap_err().to_string();
            assert!(err.starts_with(&format!("README.md:{line}: ")), "{err}");
            assert!(err.contains(problem), "{err}");
        }
    }
}
