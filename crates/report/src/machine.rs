//! What results record about the machine and build they were measured on.

use serde::{Deserialize, Serialize};
use std::{num::NonZeroUsize, path::Path, process::Command};

/// Machine and build facts, for reproducibility and for merging results of several
/// machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// CPU model name (`/proc/cpuinfo`).
    pub cpu: String,
    /// Logical cores available to the process.
    pub cores: NonZeroUsize,
    /// Total memory, GiB.
    pub memory_gib: f64,
    /// Operating system: distribution (if known), kernel, architecture.
    pub os: String,
    /// `rustc --version` of the compiler that built the measuring binary (recorded at build
    /// time), or `unknown`.
    pub rustc: String,
    /// Git commit of the measured code (`-dirty` if the tree had changes).
    pub commit: String,
    /// Whether the tracked files of the build's tree matched the commit (`None`: not
    /// recorded, or no commit known; [`MachineInfo::tree_clean`] then reads the commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_clean: Option<bool>,
    /// Free-form note about the conditions (e.g. "shared VM, other compiles running").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl MachineInfo {
    /// Read this machine's facts; `commit` is the build's commit (see [`git_commit`]).
    pub fn detect(commit: impl Into<String>) -> Self {
        let commit = commit.into();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, s)| s.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
            .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0)
            .unwrap_or(0.0);
        let distro = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_string())
            });
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string());
        let os = [
            distro,
            Some(std::env::consts::OS.to_string()),
            kernel,
            Some(std::env::consts::ARCH.to_string()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        Self {
            cpu,
            cores: Self::detect_cores(),
            memory_gib,
            os,
            rustc: env!("GIGAGAS_RUSTC_VERSION").to_string(),
            tree_clean: tree_clean_of(&commit),
            commit,
            note: None,
        }
    }

    /// Whether the tracked files of the measured build's tree matched its commit: as
    /// recorded, or read from the commit (`-dirty` when not) in results written before it
    /// was recorded; `None` when the commit is unknown.
    pub fn tree_clean(&self) -> Option<bool> {
        self.tree_clean.or_else(|| tree_clean_of(&self.commit))
    }

    /// Logical cores available to this process (1 if unknown): the one place a core
    /// count is made, non-zero from here on.
    pub fn detect_cores() -> NonZeroUsize {
        std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
    }

    /// Short label for merged tables and plot legends: `CPU ×cores`.
    pub fn label(&self) -> String {
        format!("{} x{}", self.cpu, self.cores)
    }
}

/// Whether a commit as [`git_commit`] writes it names a clean tree: `Some(false)` with
/// `-dirty`, `None` for `unknown` (no checkout), else `Some(true)`.
pub fn tree_clean_of(commit: &str) -> Option<bool> {
    if commit.is_empty() || commit == "unknown" {
        None
    } else {
        Some(!commit.ends_with("-dirty"))
    }
}

/// The short commit of the git checkout containing `dir` (`-dirty` when tracked files
/// changed), or `unknown` outside a checkout.
pub fn git_commit(dir: &Path) -> String {
    let Some(hash) = command_line("git", &["rev-parse", "--short=12", "HEAD"], Some(dir)) else {
        return "unknown".into();
    };
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if dirty { format!("{hash}-dirty") } else { hash }
}

/// First line of a command's output, if it ran successfully.
fn command_line(program: &str, args: &[&str], dir: Option<&Path>) -> Option<String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()?
        .trim()
        .to_string();
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_this_machine() {
        let m = MachineInfo::detect("abc");
        // The cores this process may use (cgroup quota included), not a constant.
        let cores = std::thread::available_parallelism();
        assert_eq!(Ok(m.cores), cores.map_err(|_| ()));
        assert_eq!(m.commit, "abc");
        assert!(!m.os.is_empty());
        assert!(m.label().contains(&format!("x{}", m.cores)));
        let back: MachineInfo = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(m.tree_clean, Some(true));
    }

    /// The tree's state is read from the commit where results did not record it.
    #[test]
    fn the_tree_is_clean_unless_the_commit_says_dirty() {
        assert_eq!(tree_clean_of("1f500c55bbd9"), Some(true));
        assert_eq!(tree_clean_of("cf0977f668cb-dirty"), Some(false));
        assert_eq!(tree_clean_of("unknown"), None);
        let mut m = MachineInfo::detect("abc-dirty");
        assert_eq!(m.tree_clean, Some(false));
        m.tree_clean = None;
        assert_eq!(m.tree_clean(), Some(false));
        m.commit = "abc".into();
        assert_eq!(m.tree_clean(), Some(true));
    }

    /// A fresh repository: its commit's short hash, `-dirty` once a tracked file changes,
    /// `unknown` outside any repository.
    #[test]
    fn commit_of_a_checkout_dirty_or_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) {
            eprintln!(
                "SKIPPED: commit_of_a_checkout_dirty_or_unknown: git cannot make a repository here"
            );
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(git_commit(outside.path()), "unknown");
        std::fs::write(dir.path().join("f"), "1").unwrap();
        assert!(git(&["add", "f"]));
        assert!(git(&["commit", "-q", "-m", "one"]));
        let head = Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let head = String::from_utf8(head.stdout).unwrap().trim().to_string();
        assert_eq!(head.len(), 12);
        assert_eq!(git_commit(dir.path()), head);
        std::fs::write(dir.path().join("f"), "2").unwrap();
        assert_eq!(git_commit(dir.path()), format!("{head}-dirty"));
    }
}
