//! `gigagas report`: re-render results folders, or merge several into one table (logic in
//! `gigagas-report`).

use crate::cli::Command;
use anyhow::Result;
use gigagas_report::{folder, output, table};
use std::path::{Path, PathBuf};

/// Arguments of `gigagas report`.
///
/// With one results folder: re-render its table.md, results.csv and plots from its
/// results.json. With several (e.g. the same sweep on several machines): print one table
/// with a row per machine and grid point; `--out DIR` also writes the merged table, CSV
/// and plots there.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Results folders (each holding a results.json).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the merged report (several folders), or an output folder other than
    /// the results folder itself (one folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl Command for ReportArgs {
    fn execute(self) -> Result<()> {
        report(self)
    }
}

/// `gigagas report DIR...`.
fn report(args: ReportArgs) -> Result<()> {
    // The results.json files read are inputs; the files written (into the one folder, or
    // into --out) must not be one of them.
    let inputs: Vec<PathBuf> = args
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
    let target = match (&args.dirs[..], &args.out) {
        ([dir], None) if !dir.is_dir() => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
        ([dir], None) => dir.clone(),
        (_, Some(out)) => out.clone(),
        (_, None) => PathBuf::new(),
    };
    if !target.as_os_str().is_empty() {
        let mut outputs = vec![("--out", target.clone())];
        outputs.extend(folder::FILES.iter().map(|f| ("--out", target.join(f))));
        // The one folder re-rendered in place holds its own results.json: not an output.
        if args.out.is_none() {
            outputs.retain(|(_, p)| !p.ends_with("results.json"));
            outputs.retain(|(_, p)| *p != target);
        }
        output::check_not_inputs(&inputs, &outputs)?;
    }
    if let Some(out) = &args.out {
        output::prepare_output_dir(out, false)?;
    }
    match (&args.dirs[..], &args.out) {
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
