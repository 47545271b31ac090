//! What a result row records about the machine it ran on.

use serde::Serialize;

/// Machine and build facts for reproducibility.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MachineInfo {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Total memory in GiB.
    pub memory_gib: f64,
    /// Operating system.
    pub os: String,
    /// Git commit of the build.
    pub commit: String,
}

impl MachineInfo {
    /// Read the facts of this machine.
    pub(crate) fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
            .map(|kb| kb / 1024.0 / 1024.0)
            .unwrap_or(0.0);
        Self {
            cpu,
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_gib,
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            commit: env!("GIGAGAS_COMMIT").to_string(),
        }
    }
}
