//! `gigagas compare OLD NEW`: parse, load, print; the logic is in
//! [`gigagas_report::compare`].

use crate::args::Command;
use anyhow::{Context, Result, bail};
use gigagas_report::compare::{Comparison, NOISE_FLOOR, load_run};
use std::path::PathBuf;

/// Arguments of `gigagas compare`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The earlier run: a results.json, or a results folder holding one.
    pub old: PathBuf,
    /// The later run, the same way.
    pub new: PathBuf,
    /// Noise floor, percent: a point is faster (slower) only when its whole interval lies
    /// above 1 + PCT/100 (below 1 − PCT/100).
    #[arg(long, value_name = "PCT", default_value_t = NOISE_FLOOR * 100.0)]
    pub threshold: f64,
    /// Exit with status 1, naming the worst point, when any point's interval lies wholly
    /// below 1 − PCT/100 (NEW at least PCT % slower than OLD, beyond doubt).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
}

impl Command for CompareArgs {
    fn execute(self) -> Result<()> {
        run(self)
    }
}

fn run(args: CompareArgs) -> Result<()> {
    let old = load_run(&args.old).context("OLD")?;
    let new = load_run(&args.new).context("NEW")?;
    let comparison = Comparison::new(&old, &new, args.threshold / 100.0)
        .with_context(|| format!("{} vs {}", args.old.display(), args.new.display()))?;
    print!("{comparison}");
    if let Some(pct) = args.fail_on_regression
        && let Some(worst) = comparison.regression(pct / 100.0)?
    {
        bail!(
            "regression beyond {pct} %: dump {}, {}: NEW/OLD {:.3}× [{:.3}–{:.3}] ({:.0} → {:.0} MGas/s)",
            gigagas_report::table::escape_name(&worst.dump),
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
