//! `gigagas compare OLD NEW` (two results) and `gigagas compare --against OLD_BINARY`
//! (an A/B of two builds): parse, run, print; the logic is in
//! [`gigagas_report::compare`], [`gigagas_report::ab`] and [`gigagas_bench::ab`].

use crate::{
    args::{Command, build_info},
    terminal::Bar,
};
use anyhow::{Context, Result, bail};
use gigagas_bench::AbPlan;
use gigagas_report::{
    ab::AbSetup,
    compare::{Comparison, NOISE_FLOOR},
    folder, output,
    provenance::{Provenance, portable_command},
    table::escape_name,
};
use std::{
    ffi::OsString,
    num::NonZeroUsize,
    path::{Path, PathBuf},
};

/// Where an A/B's results folder goes unless `--out` names one.
const DEFAULT_PARENT: &str = "results/ab";

/// Arguments of `gigagas compare`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The earlier run: a results.json, or a results folder holding one.
    #[arg(required_unless_present = "against", conflicts_with = "against")]
    pub old: Option<PathBuf>,
    /// The later run, the same way.
    #[arg(required_unless_present = "against", conflicts_with = "against")]
    pub new: Option<PathBuf>,
    /// Noise floor, percent: a point is faster (slower) only when its whole interval lies
    /// above 1 + PCT/100 (below 1 − PCT/100).
    #[arg(long, value_name = "PCT", default_value_t = NOISE_FLOOR * 100.0)]
    pub threshold: f64,
    /// Exit with status 1, naming the worst point, when any point's interval lies wholly
    /// below 1 − PCT/100 (NEW at least PCT % slower than OLD, beyond doubt).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// A/B of two builds: this binary is OLD, the one running (or --new-binary) is NEW;
    /// both run the same `gigagas run` arguments (RUN_ARGS, after `--`) in alternating
    /// rounds.
    #[arg(long, value_name = "OLD_BINARY", help_heading = "A/B of two builds")]
    pub against: Option<PathBuf>,
    /// The build under test [default: this binary]. To measure a build against itself, give
    /// two copies other than the one running the A/B, so that neither side is the binary
    /// that stays running for the whole A/B.
    #[arg(
        long,
        value_name = "NEW_BINARY",
        requires = "against",
        help_heading = "A/B of two builds"
    )]
    pub new_binary: Option<PathBuf>,
    /// Rounds: each runs every point once in each build (ABBA: OLD first in odd rounds,
    /// NEW first in even ones). 10 give an interval from the 2nd to the 9th smallest ratio
    /// (97.9 % coverage); fewer than 6 cannot reach 95 % ([min, max]).
    #[arg(long, requires = "against", default_value_t = gigagas_grid::DEFAULT_REPEATS, help_heading = "A/B of two builds")]
    pub rounds: usize,
    /// Samples each build takes of every point in a round (its `gigagas run --repeats`,
    /// interleaved over the points); the round's figure is their median, so a burst of
    /// noise that hits one sample moves no round's ratio. Each round takes about as many
    /// times longer.
    #[arg(long, requires = "against", default_value_t = NonZeroUsize::MIN, help_heading = "A/B of two builds")]
    pub samples: NonZeroUsize,
    /// The results folder (results.json, table.md) [default: results/ab/<date>-<NEW's
    /// commit>, with -2, -3, ... if it exists].
    #[arg(long, requires = "against", help_heading = "A/B of two builds")]
    pub out: Option<PathBuf>,
    /// Arguments OLD alone gets after RUN_ARGS, in one word separated by spaces (e.g.
    /// --old-args=--receipts): to measure what a step costs.
    #[arg(long, value_name = "ARGS", requires = "against")]
    #[arg(allow_hyphen_values = true, help_heading = "A/B of two builds")]
    pub old_args: Option<String>,
    /// Arguments NEW alone gets after RUN_ARGS, the same way.
    #[arg(long, value_name = "ARGS", requires = "against")]
    #[arg(allow_hyphen_values = true, help_heading = "A/B of two builds")]
    pub new_args: Option<String>,
    /// The `gigagas run` arguments of both builds (dumps, --threads, --batch, ...; not
    /// --repeats, --json or --out, which the A/B sets: --samples is its --repeats).
    #[arg(last = true, value_name = "RUN_ARGS", requires = "against")]
    pub run_args: Vec<OsString>,
}

impl Command for CompareArgs {
    fn execute(self) -> Result<()> {
        let comparison = match (&self.against, &self.old, &self.new) {
            (Some(against), _, _) => ab(&self, against)?,
            (None, Some(old), Some(new)) => two_runs(old, new, self.threshold)?,
            _ => unreachable!("clap requires OLD and NEW without --against"),
        };
        fail_on_regression(&comparison, self.fail_on_regression)
    }
}

/// `gigagas compare OLD NEW`: the comparison, printed.
fn two_runs(old_path: &Path, new_path: &Path, threshold: f64) -> Result<Comparison> {
    let old = folder::load_dir(old_path).context("OLD")?;
    let new = folder::load_dir(new_path).context("NEW")?;
    let comparison = Comparison::new(&old, &new, threshold / 100.0)
        .with_context(|| format!("{} vs {}", old_path.display(), new_path.display()))?;
    print!("{comparison}");
    Ok(comparison)
}

/// An error naming the worst point when one lost more than `pct` percent beyond doubt.
fn fail_on_regression(comparison: &Comparison, pct: Option<f64>) -> Result<()> {
    if let Some(pct) = pct
        && let Some(worst) = comparison.regression(pct / 100.0)?
    {
        bail!(
            "regression beyond {pct} %: dump {}, {}: NEW/OLD {:.3}× [{:.3}–{:.3}] ({:.0} → {:.0} MGas/s)",
            escape_name(&worst.dump),
            worst.point,
            worst.ratio,
            worst.lo,
            worst.hi,
            worst.old_mgas_per_s,
            worst.new_mgas_per_s
        );
    }
    Ok(())
}

/// Words of an `--old-args`/`--new-args` value.
fn words(args: &Option<String>) -> Vec<OsString> {
    args.iter()
        .flat_map(|a| a.split_whitespace())
        .map(OsString::from)
        .collect()
}

/// A binary's file name, as results name it.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

/// Arguments as results record them: paths relative to the repository.
fn portable(args: &[OsString]) -> Vec<String> {
    let mut line = vec!["gigagas".to_string()];
    line.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
    let cwd = std::env::current_dir().ok();
    portable_command(&line, cwd.as_deref()).split_off(1)
}

/// `gigagas compare --against OLD_BINARY [-- RUN_ARGS]`: run the A/B, write its folder,
/// print its table.
fn ab(args: &CompareArgs, against: &Path) -> Result<Comparison> {
    let rounds = NonZeroUsize::new(args.rounds).context("--rounds: at least 1")?;
    let new = match &args.new_binary {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("the running binary's path")?,
    };
    let work_dir = std::env::temp_dir().join(format!("gigagas-ab-{}", std::process::id()));
    let plan = AbPlan {
        binaries: [against.to_path_buf(), new.clone()],
        run_args: args.run_args.clone(),
        side_args: [words(&args.old_args), words(&args.new_args)],
        rounds,
        samples: args.samples,
        noise_floor: args.threshold / 100.0,
        work_dir: work_dir.clone(),
    };
    plan.check()?;
    if let Some(out) = &args.out {
        output::prepare_output_dir(out, false)?;
    } else {
        output::prepare_output_dir(Path::new(DEFAULT_PARENT), false)?;
    }
    std::fs::create_dir_all(&plan.work_dir)
        .with_context(|| format!("{}: cannot create it", plan.work_dir.display()))?;
    let setup = AbSetup {
        binaries: [file_name(against), file_name(&new)],
        side_args: [portable(&plan.side_args[0]), portable(&plan.side_args[1])],
        run_args: portable(&plan.run_args),
        samples: plan.samples.get(),
        noise_floor: plan.noise_floor,
        started_utc: folder::utc_timestamp(std::time::SystemTime::now()),
        provenance: Some(Provenance::start(build_info())),
    };
    eprintln!(
        "A/B: OLD {} against NEW {}, {rounds} rounds in ABBA order, each build a `gigagas run{} --repeats {}` a round",
        escape_name(&against.display().to_string()),
        escape_name(&new.display().to_string()),
        setup
            .run_args
            .iter()
            .map(|a| format!(" {}", escape_name(a)))
            .collect::<String>(),
        plan.samples
    );
    let mut bar = Bar::new("A/B");
    let result = plan.run(setup, &mut bar);
    bar.finish();
    let _ = std::fs::remove_dir_all(&work_dir);
    let mut results = result?;
    results.provenance = results.provenance.map(Provenance::finish);
    let dir = match &args.out {
        Some(out) => out.clone(),
        None => free_folder(&Path::new(DEFAULT_PARENT).join(results.folder_name())),
    };
    results.write_into(&dir)?;
    let comparison = results.comparison();
    eprintln!(
        "OLD {} at {}, NEW {} at {}",
        escape_name(&results.old.binary),
        escape_name(&results.old.commit),
        escape_name(&results.new.binary),
        escape_name(&results.new.commit)
    );
    print!("{comparison}");
    eprintln!("wrote {}", dir.display());
    Ok(comparison)
}

/// `base`, or `base-2`, `base-3`, ... : the first that does not exist.
fn free_folder(base: &Path) -> PathBuf {
    (1..)
        .map(|n| {
            if n == 1 {
                base.to_path_buf()
            } else {
                PathBuf::from(format!("{}-{n}", base.display()))
            }
        })
        .find(|p| !p.exists())
        .expect("a free name")
}
