//! `gigagas report`: re-render results folders, or merge several into one table (logic in
//! `gigagas-report`).

use crate::args::Command;
use anyhow::{Context, Result, bail};
use gigagas_report::{
    SimulationResults, folder, output, readme, sim_results::SIMULATION_FILE, table,
};
use std::path::{Path, PathBuf};

/// Arguments of `gigagas report`.
///
/// With one results folder: re-render its table.md, results.csv and plots from its
/// results.json. With several (e.g. the same sweep on several machines): print one table
/// with a row per machine and grid point; `--out DIR` also writes the merged table, CSV
/// and plots there. With `--readme README.md`: render the README's generated figures
/// (the tables between `<!-- gigagas:figures BEGIN NAME -->` and `<!-- gigagas:figures END
/// NAME -->`) from the newest folder of each sweep they name, in place. A simulation's
/// folder (`gigagas simulate --out`): its table.md from its simulation.json.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Results folders (each holding a results.json), or one simulation folder.
    #[arg(required_unless_present = "readme", conflicts_with = "readme")]
    pub dirs: Vec<PathBuf>,
    /// A README whose generated figures to render from the newest results folders.
    #[arg(long, value_name = "README")]
    pub readme: Option<PathBuf>,
    /// With --readme: write nothing; fail, naming them, if some figures differ from what
    /// the folders render or the figures come from more than one commit.
    #[arg(long, requires = "readme")]
    pub check: bool,
    /// With --readme: the results folders' root (default: `results` beside the README).
    #[arg(long, requires = "readme")]
    pub results_dir: Option<PathBuf>,
    /// Where to write the merged report (several folders), or an output folder other than
    /// the results folder itself (one folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl Command for ReportArgs {
    fn execute(self) -> Result<()> {
        if let Some(path) = &self.readme {
            return readme(path, self.results_dir.as_deref(), self.check);
        }
        if let [dir] = &self.dirs[..]
            && dir.join(SIMULATION_FILE).is_file()
        {
            return simulation(dir, self.out.as_deref());
        }
        // The results.json files read are inputs; the files written (into the one folder, or
        // into --out) must not be one of them.
        let inputs: Vec<PathBuf> = self
            .dirs
            .iter()
            .map(|d| {
                if d.is_dir() {
                    d.join("results.json")
                } else {
                    d.clone()
                }
            })
            .collect();
        let target = match (&self.dirs[..], &self.out) {
            ([dir], None) if !dir.is_dir() => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
            ([dir], None) => dir.clone(),
            (_, Some(out)) => out.clone(),
            (_, None) => PathBuf::new(),
        };
        if !target.as_os_str().is_empty() {
            let mut outputs = vec![("--out", target.clone())];
            outputs.extend(folder::FILES.iter().map(|f| ("--out", target.join(f))));
            // The one folder re-rendered in place holds its own results.json: not an output.
            if self.out.is_none() {
                outputs.retain(|(_, p)| !p.ends_with("results.json"));
                outputs.retain(|(_, p)| *p != target);
            }
            output::check_not_inputs(&inputs, &outputs)?;
        }
        if let Some(out) = &self.out {
            output::prepare_output_dir(out, false)?;
        }
        match (&self.dirs[..], &self.out) {
            ([dir], None) => {
                let results = folder::render_dir(dir)?;
                print!("{}", table::rows_table(std::slice::from_ref(&results)));
                eprintln!("re-rendered {}", dir.display());
            }
            (dirs, out) => {
                let sets = dirs
                    .iter()
                    .map(|d| folder::load_dir(d))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(out) = out {
                    folder::merge_dirs(dirs, out)?;
                    eprintln!("wrote {}", out.display());
                }
                if sets.len() > 1 {
                    for (i, s) in sets.iter().enumerate() {
                        println!(
                            "{}: {} ({} cores), commit {}",
                            table::machine_tag(i),
                            s.machine.cpu,
                            s.machine.cores,
                            s.machine.commit
                        );
                    }
                    println!();
                }
                print!("{}", table::rows_table(&sets));
            }
        }
        Ok(())
    }
}

/// `gigagas report --readme README [--check]`.
fn readme(path: &Path, results_dir: Option<&Path>, check: bool) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let root = match results_dir {
        Some(dir) => dir.to_path_buf(),
        None => path.parent().unwrap_or(Path::new(".")).join("results"),
    };
    let stale = readme::stale(&text, path, &root)?;
    if check {
        if !stale.is_empty() {
            bail!(
                "{}: figures differ from the newest results folders: {} (run `gigagas report --readme {}`)",
                path.display(),
                stale.join(", "),
                path.display()
            );
        }
        readme::check_one_commit(&text, path, &root)?;
        eprintln!("{}: every figure is its folder's", path.display());
        return Ok(());
    }
    output::write_atomic(path, readme::render(&text, path, &root)?.as_bytes())?;
    if stale.is_empty() {
        eprintln!("{}: unchanged", path.display());
    } else {
        eprintln!("{}: rendered {}", path.display(), stale.join(", "));
    }
    // Figures of one commit are the goal; say where they are not.
    let by_commit = readme::by_commit(&text, path, &root)?;
    if by_commit.len() > 1 {
        eprintln!("the figures come from several commits:");
        for (commit, names) in &by_commit {
            let commit = commit.as_deref().unwrap_or("no folder");
            eprintln!("  {commit}: {}", names.join(", "));
        }
    }
    Ok(())
}

/// `gigagas report SIMULATION_DIR [--out DIR]`: its table.md rendered again, in the folder
/// or with its simulation.json into `out`.
fn simulation(dir: &Path, out: Option<&Path>) -> Result<()> {
    let Some(out) = out else {
        print!("{}", SimulationResults::render_dir(dir)?.markdown());
        eprintln!("re-rendered {}", dir.display());
        return Ok(());
    };
    let outputs = [SIMULATION_FILE, "table.md"].map(|f| ("--out", out.join(f)));
    output::check_not_inputs(&[dir.join(SIMULATION_FILE)], &outputs)?;
    output::prepare_output_dir(out, false)?;
    let results = SimulationResults::load(&dir.join(SIMULATION_FILE))?;
    results.write_into(out)?;
    print!("{}", results.markdown());
    eprintln!("wrote {}", out.display());
    Ok(())
}
