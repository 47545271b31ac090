//! What a reader of a published table needs to reproduce it: the exact command line, the
//! build, the definition of the timed work (on every row), the process's peak memory, and
//! the machine's load and CPU frequency governor before and after.

use serde::{Deserialize, Serialize};

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
    /// The command line exactly as given (program name first).
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
    /// Start recording: the command line, the build, the load and governor now.
    pub fn start(build: BuildInfo) -> Self {
        Self {
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
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

    /// The command line as one shell-quoted string.
    pub fn command(&self) -> String {
        self.command_line
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
        assert_eq!(
            p.command_line,
            std::env::args().collect::<Vec<_>>(),
            "the real command line"
        );
        assert!(p.peak_rss_bytes.unwrap() > 1 << 20);
        assert!(p.load_average_before.is_some() && p.load_average_after.is_some());
        let md = p.markdown();
        assert!(md.contains("profile test") && md.contains("peak RSS"));
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("--threads=1,2"), "--threads=1,2");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
