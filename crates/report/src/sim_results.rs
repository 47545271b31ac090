//! A simulation's results: what `gigagas simulate` found, written as JSON by `--json` and
//! as a results folder by `--out DIR` ([`SIMULATION_FILE`] and `table.md`), which
//! `gigagas report DIR` renders again ([`SimulationResults::render_dir`]). The folder's
//! JSON has its own name so that no reader of sweeps takes it for a `results.json`.

use crate::{
    error::ReportError,
    machine::MachineInfo,
    output::{read_json, write_atomic},
    provenance::Provenance,
    table::simulation_markdown,
};
use gigagas_sim::{SimulationReport, WholeBlockReport};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The JSON file of a simulation's results folder.
pub const SIMULATION_FILE: &str = "simulation.json";

/// The largest simulation JSON read back, bytes.
const MAX_SIMULATION_BYTES: u64 = 256 << 20;

/// What `gigagas simulate` found, with the machine and dump it ran on. The fields are
/// declared in the JSON's key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationResults {
    /// The dump, relative to the repository (by its name alone outside it).
    pub dump_path: String,
    /// The machine the profile and validation runs were taken on.
    pub machine: MachineInfo,
    /// The command line, build and load of the run (absent in JSON written without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The execution model's projections and validations (with the whole block, the
    /// memory points' validation that fits the slowdown; none without validation).
    #[serde(rename = "simulation")]
    pub execution: Option<SimulationReport>,
    /// The whole block's projections and validations (with a store).
    pub whole_block: Option<WholeBlockReport>,
}

impl SimulationResults {
    /// The tables as the terminal shows them: the execution model's, then the whole
    /// block's.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if let Some(report) = &self.execution {
            out.push_str(&simulation_markdown(report, None));
        }
        if let Some(report) = &self.whole_block {
            out.push_str(&report.markdown());
        }
        out
    }

    /// `table.md`: [`Self::markdown`], then the dump, the machine and the run.
    fn table_md(&self) -> String {
        let m = &self.machine;
        let mut out = format!(
            "{}\n## Run\n\n- dump: `{}`\n- machine: {} ({} cores), commit {}\n",
            self.markdown(),
            self.dump_path,
            m.cpu,
            m.cores,
            m.commit
        );
        if let Some(p) = &self.provenance {
            out.push_str(&p.markdown());
            out.push('\n');
        }
        out
    }

    /// The results as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("simulation results serialize")
    }

    /// Read a simulation's JSON (`--json`'s file, or a folder's [`SIMULATION_FILE`]).
    pub fn load(path: &Path) -> Result<Self, ReportError> {
        read_json(path, MAX_SIMULATION_BYTES)
    }

    /// Write [`SIMULATION_FILE`] and `table.md` into `dir` (created if needed), each
    /// atomically.
    pub fn write_into(&self, dir: &Path) -> Result<(), ReportError> {
        std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
        write_atomic(&dir.join(SIMULATION_FILE), self.to_json().as_bytes())?;
        write_atomic(&dir.join("table.md"), self.table_md().as_bytes())
    }

    /// Re-render a simulation folder's `table.md` from its [`SIMULATION_FILE`].
    pub fn render_dir(dir: &Path) -> Result<Self, ReportError> {
        let results = Self::load(&dir.join(SIMULATION_FILE))?;
        write_atomic(&dir.join("table.md"), results.table_md().as_bytes())?;
        Ok(results)
    }
}
