//! What a reader of a published table needs to reproduce it: the command line (portable:
//! the binary by its name, paths relative to the repository, a file outside it by its
//! name), the build,
//! the definition of the timed work (on every row), the process's peak memory, and the
//! machine's load and CPU frequency governor before and after.

use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// How the measuring binary was built (recorded at build time by the binary's build
/// script; see `crates/gigagas/build.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Cargo profile (`release`, `debug`).
    pub profile: String,
    /// Optimisation level.
    pub opt_level: String,
    /// Link-time optimisation of the profile (`thin`, `fat`, `false`).
    pub lto: String,
    /// Codegen units of the profile.
    pub codegen_units: String,
    /// `-C target-cpu` if given, else the target's baseline.
    pub target_cpu: String,
    /// The global allocator.
    pub allocator: String,
    /// Cargo features enabled on the binary.
    pub features: Vec<String>,
}

/// Facts about one run of the binary, for results.json and table.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The command line as given, made portable ([`portable_command`]): the program by
    /// its name alone, every path argument relative to the repository the run started in,
    /// a path outside it by its name alone.
    pub command_line: Vec<String>,
    /// How the binary was built.
    pub build: BuildInfo,
    /// Peak resident memory of the process, bytes (`VmHWM`), read at the end.
    pub peak_rss_bytes: Option<u64>,
    /// 1, 5 and 15-minute load averages before the first measurement.
    pub load_average_before: Option<[f64; 3]>,
    /// The same after the last measurement.
    pub load_average_after: Option<[f64; 3]>,
    /// `scaling_governor` of cpu0, where the kernel exposes it.
    pub cpu_governor: Option<String>,
    /// Worker `i` of every pass ran pinned to the `i`-th core the process may use
    /// (`--pin`; false, the kernel placing the workers, in results written before).
    #[serde(default)]
    pub workers_pinned: bool,
}

impl Provenance {
    /// Start recording: the command line (portable, against the current folder), the
    /// build, the load and governor now.
    pub fn start(build: BuildInfo) -> Self {
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let start = std::env::current_dir().ok();
        Self {
            command_line: portable_command(&args, start.as_deref()),
            build,
            peak_rss_bytes: None,
            load_average_before: load_average(),
            load_average_after: None,
            cpu_governor: std::fs::read_to_string(
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            )
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
            workers_pinned: false,
        }
    }

    /// Finish recording after the last measurement: the load and the peak RSS now.
    pub fn finish(mut self) -> Self {
        self.load_average_after = load_average();
        self.peak_rss_bytes = peak_rss_bytes();
        self
    }

    /// The command line as one shell-quoted string, portable ([`portable_command`] without
    /// a start folder: an absolute path by its name alone).
    pub fn command(&self) -> String {
        portable_command(&self.command_line, None)
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Markdown list items for table.md.
    pub fn markdown(&self) -> String {
        let b = &self.build;
        let load = |l: Option<[f64; 3]>| {
            l.map(|[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"))
                .unwrap_or_else(|| "unknown".into())
        };
        format!(
            "- command: `{}`\n- build: profile {}, opt-level {}, LTO {}, codegen units {}, target CPU {}, \
             allocator {}, features [{}]\n- peak RSS {}; load average {} before, {} after; CPU governor {}",
            self.command().replace('`', "'"),
            b.profile,
            b.opt_level,
            b.lto,
            b.codegen_units,
            b.target_cpu,
            b.allocator,
            b.features.join(", "),
            self.peak_rss_bytes
                .map(|r| format!("{:.0} MiB", r as f64 / (1 << 20) as f64))
                .unwrap_or_else(|| "unknown".into()),
            load(self.load_average_before),
            load(self.load_average_after),
            self.cpu_governor.as_deref().unwrap_or("not exposed"),
        ) + if self.workers_pinned {
            "\n- workers pinned to cores (`--pin`)"
        } else {
            ""
        }
    }
}

/// Options whose value is free text, never a path: left as given.
const TEXT_OPTIONS: [&str; 2] = ["--note", "--cpu-profile-point"];

/// A command line that reads the same on any machine: the program (`args[0]`) by its file
/// name alone (`./target/release/gigagas` → `gigagas`), and every path argument (a word or
/// an `--option=value` value with a `/` in it) relative to the repository: resolved
/// against `start`, the folder the run started in, a path inside the git checkout holding
/// `start`
/// ([`repository_root`]) is written relative to its root (`/home/me/gigagas/results` →
/// `results`), and one outside it by its file name alone (`/tmp/gigagas-results` →
/// `gigagas-results`). Without `start`, or outside any checkout, an absolute path is
/// written by its name alone and a relative one as typed without its leading `./`. The
/// values of free-text options (`--note`) are left alone.
pub fn portable_command(args: &[String], start: Option<&Path>) -> Vec<String> {
    let start = start.filter(|s| s.is_absolute());
    let repo = start.and_then(repository_root);
    let mut out = Vec::with_capacity(args.len());
    let mut text_value = false;
    for (i, a) in args.iter().enumerate() {
        let word = if i == 0 {
            name_alone(a)
        } else if text_value {
            a.clone()
        } else if let Some((option, value)) = a.split_once('=').filter(|(o, _)| o.starts_with("--"))
        {
            if TEXT_OPTIONS.contains(&option) {
                a.clone()
            } else {
                format!("{option}={}", portable_path(value, start, repo.as_deref()))
            }
        } else if a.starts_with('-') {
            a.clone()
        } else {
            portable_path(a, start, repo.as_deref())
        };
        text_value = i > 0 && TEXT_OPTIONS.contains(&a.as_str());
        out.push(word);
    }
    out
}

/// A path as results record it, against the current folder: [`portable_command`]'s rule
/// for one path argument (relative to the repository, by its name alone outside it).
pub fn recorded_path(path: &Path) -> String {
    let start = std::env::current_dir().ok();
    let args = ["gigagas".to_string(), path.display().to_string()];
    portable_command(&args, start.as_deref()).swap_remove(1)
}

/// The root of the git checkout holding `dir`: the nearest folder at or above it with a
/// `.git` entry (a folder, or a worktree's file).
pub fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// A path's last component (`/tmp/r/` → `r`); the word as it is where there is none (`/`).
fn name_alone(word: &str) -> String {
    Path::new(word)
        .file_name()
        .map_or_else(|| word.to_string(), |n| n.to_string_lossy().into_owned())
}

/// One argument made portable: a word without a `/` as it is (a subcommand, a number, a
/// file in the start folder); a path resolved against `start` and relative to `repo` when
/// it lies inside it, by its name alone when it does not (or when it is absolute and there
/// is no `start` or no `repo`), else (relative, with nowhere to resolve it) as typed
/// without its leading `./`.
fn portable_path(word: &str, start: Option<&Path>, repo: Option<&Path>) -> String {
    if !word.contains('/') {
        return word.to_string();
    }
    let path = Path::new(word);
    if let (Some(start), Some(repo)) = (start, repo) {
        let full = lexical(&start.join(path));
        return match full.strip_prefix(repo) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".into(),
            Ok(inside) => inside.display().to_string(),
            Err(_) => name_alone(word),
        };
    }
    if path.is_absolute() {
        return name_alone(word);
    }
    let mut rest = word;
    while let Some(r) = rest.strip_prefix("./") {
        rest = r.trim_start_matches('/');
    }
    if rest.is_empty() {
        ".".into()
    } else {
        rest.into()
    }
}

/// `path` with its `.` components dropped and each `..` taken back against the component
/// before it, by the components alone (no link is followed).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c.as_os_str());
                }
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// Peak resident set size of this process (`VmHWM` of /proc/self/status), bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn load_average() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// `a` as a POSIX shell word: as is when it holds only safe characters, else in single
/// quotes.
fn shell_quote(a: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !a.is_empty() && a.chars().all(safe) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_records_this_process() {
        let p = Provenance::start(BuildInfo {
            profile: "test".into(),
            ..Default::default()
        })
        .finish();
        let args: Vec<String> = std::env::args().collect();
        assert_eq!(p.command_line.len(), args.len(), "the real command line");
        let program = Path::new(&args[0]).file_name().unwrap().to_str().unwrap();
        assert_eq!(p.command_line[0], program, "the program by its name alone");
        assert!(p.peak_rss_bytes.unwrap() > 1 << 20);
        assert!(p.load_average_before.is_some() && p.load_average_after.is_some());
        let md = p.markdown();
        assert!(md.contains("profile test") && md.contains("peak RSS"));
    }

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    /// The binary by its name, paths relative to the repository the run started in (from
    /// its root or a folder inside it), a path outside it by its name, `./` dropped, free
    /// text, flags and words without a `/` left alone.
    #[test]
    fn recorded_commands_are_portable() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().canonicalize().unwrap().join("gigagas");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("crates/bench")).unwrap();
        let at = |p: &str| repo.join(p).display().to_string();
        let given = words(&[
            &at("target/release/gigagas"),
            "sweep",
            &at("bench-configs/big-blocks.toml"),
            "--results-dir",
            "/tmp/gigagas-16-core-results",
            "--out=./results/x",
            "--note",
            "/ shared VM, ./ idle",
            "./dumps/mainnet.gigagas",
            "../shared/corpus/one.gigagas",
            "--threads=1,2",
            "--repeats",
            "5",
        ]);
        let portable = words(&[
            "gigagas",
            "sweep",
            "bench-configs/big-blocks.toml",
            "--results-dir",
            "gigagas-16-core-results",
            "--out=results/x",
            "--note",
            "/ shared VM, ./ idle",
            "dumps/mainnet.gigagas",
            "one.gigagas",
            "--threads=1,2",
            "--repeats",
            "5",
        ]);
        assert_eq!(portable_command(&given, Some(&repo)), portable);
        assert_eq!(
            portable_command(
                &words(&["./target/release/gigagas", "report", &at("")]),
                Some(&repo)
            ),
            words(&["gigagas", "report", "."])
        );
        // From a folder inside the checkout: paths still from its root, bare words as typed.
        assert_eq!(
            repository_root(&repo.join("crates/bench")),
            Some(repo.clone())
        );
        assert_eq!(
            portable_command(
                &words(&[
                    "gigagas",
                    "run",
                    "../../dumps/mainnet.gigagas",
                    "--threads",
                    "2"
                ]),
                Some(&repo.join("crates/bench"))
            ),
            words(&["gigagas", "run", "dumps/mainnet.gigagas", "--threads", "2"])
        );
        // Outside any checkout: an absolute path by its name, a relative one as typed.
        let outside = tmp.path().canonicalize().unwrap();
        assert_eq!(repository_root(&outside), None);
        assert_eq!(
            portable_command(
                &words(&["gigagas", "run", &at("dumps/x.gigagas"), "./d/y.gigagas"]),
                Some(&outside)
            ),
            words(&["gigagas", "run", "x.gigagas", "d/y.gigagas"])
        );
        // Without the start folder (results recorded argv as typed): the program's path and
        // `./` go, an absolute path is written by its name.
        let old = Provenance {
            command_line: words(&[
                "/work/main/target/release/gigagas",
                "sweep",
                "./bench-configs/io.toml",
                "--results-dir",
                "/tmp/r",
            ]),
            ..Default::default()
        };
        assert_eq!(
            old.command(),
            "gigagas sweep bench-configs/io.toml --results-dir r"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("--threads=1,2"), "--threads=1,2");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
