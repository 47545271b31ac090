//! What the subcommands share: the [`Command`] trait, the default dump, the scheduler
//! parser, the input-file check, a refused flag's message, and the build and commit a
//! run records. Every `cmd_*` module takes these from here and never from another command.

use anyhow::{Result, anyhow, bail};
use gigagas_bench::plan::PlanError;
use gigagas_grid::SchedulerKind;
use std::{
    path::{Path, PathBuf},
    str::FromStr,
};

/// A subcommand's parsed arguments, ready to run.
pub(crate) trait Command {
    /// Run the subcommand; an error becomes the one `error:` line.
    fn execute(self) -> Result<()>;
}

/// The default dump, relative to a checkout: 42 real mainnet blocks (Frontier to Cancun).
pub(crate) const DEFAULT_DUMP: &str = "dumps/mainnet.gigagas";

/// The dump a command was given, or else the default one, found at run time: in the
/// checkout around the current folder (the current folder and its parents), then beside the
/// executable (and its parents, which covers `target/release/gigagas`), then in the source
/// tree this binary was built from.
pub(crate) fn dump_or_default(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        roots.extend(dir.ancestors().map(Path::to_path_buf));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for root in roots {
        let candidate = root.join(DEFAULT_DUMP);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "no dump given and the default {DEFAULT_DUMP} was not found in the current folder, beside the executable \
         or in their parents; pass a dump file (e.g. `gigagas run path/to/mainnet.gigagas`) or run from a gigagas checkout"
    )
}

/// A `--scheduler` value: one scheduler, or `all` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchedulerChoice {
    /// One scheduler, by its name (any of [`SchedulerKind::NAMED`], heavy-first and the
    /// oracle included).
    One(SchedulerKind),
    /// The schedulers `all` runs ([`SchedulerKind::ALL`]: heavy-first and the oracle are
    /// named alone).
    All,
}

impl SchedulerChoice {
    /// The name `all` is taken by.
    const ALL_NAME: &str = "all";

    /// The name on the command line: the scheduler's, or `all`.
    fn name(self) -> &'static str {
        match self {
            Self::One(kind) => kind.name(),
            Self::All => Self::ALL_NAME,
        }
    }
}

impl FromStr for SchedulerChoice {
    type Err = gigagas_grid::UnknownName;
    /// A scheduler's name or `all`; an unknown name is refused with every choice listed.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let choices: Vec<Self> = SchedulerKind::NAMED
            .into_iter()
            .map(Self::One)
            .chain([Self::All])
            .collect();
        gigagas_grid::UnknownName::parse(s, "scheduler", &choices, Self::name)
    }
}

impl std::fmt::Display for SchedulerChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The schedulers `--scheduler` names, `all` expanded, each once, in the order given;
/// every scheduler when none is named.
pub(crate) fn schedulers(choices: &[SchedulerChoice]) -> Vec<SchedulerKind> {
    let mut kinds: Vec<SchedulerKind> = Vec::new();
    let named = choices.iter().flat_map(|c| match c {
        SchedulerChoice::One(kind) => vec![*kind],
        SchedulerChoice::All => SchedulerKind::ALL.to_vec(),
    });
    for kind in named {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if kinds.is_empty() {
        kinds = SchedulerKind::ALL.to_vec();
    }
    kinds
}

/// A refused flag value: the flag, then what is wrong (the message a sweep config gets
/// for the same value under its key).
pub(crate) fn flag_error(flag: &str) -> impl FnOnce(PlanError) -> anyhow::Error + '_ {
    move |e| anyhow!("{flag}: {e}")
}

/// Refuse an input path that exists but is not a regular file (a FIFO, a device, a
/// socket; a folder too unless `folder_ok`) by its metadata, before anything opens it
/// (opening a FIFO with no writer blocks forever): one line naming the file. A path that
/// does not exist passes (its reader says so in its own words).
pub(crate) fn refuse_non_regular(path: &Path, folder_ok: bool) -> Result<()> {
    use gigagas_fs_util::{FileKind, NotARegularFile, require_regular_file};
    match require_regular_file(path) {
        Ok(_) => Ok(()),
        Err(e) => match e
            .get_ref()
            .and_then(|r| r.downcast_ref::<NotARegularFile>())
        {
            Some(n) if folder_ok && n.kind == FileKind::Folder => Ok(()),
            Some(n) => bail!("{}: {n}", path.display()),
            None => Ok(()),
        },
    }
}

/// How this binary was built (recorded by build.rs), for the provenance of results.
pub(crate) fn build_info() -> gigagas_report::provenance::BuildInfo {
    gigagas_report::provenance::BuildInfo {
        profile: env!("GIGAGAS_BUILD_PROFILE").into(),
        opt_level: env!("GIGAGAS_BUILD_OPT_LEVEL").into(),
        lto: env!("GIGAGAS_BUILD_LTO").into(),
        codegen_units: env!("GIGAGAS_BUILD_CODEGEN_UNITS").into(),
        target_cpu: env!("GIGAGAS_BUILD_TARGET_CPU").into(),
        allocator: crate::allocator::ALLOCATOR_NAME.into(),
        features: env!("GIGAGAS_BUILD_FEATURES")
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect(),
    }
}

/// The commit of this build, or of the checkout at run time.
pub(crate) fn commit() -> String {
    match option_env!("GIGAGAS_COMMIT") {
        Some(c) if c != "unknown" => c.to_string(),
        _ => gigagas_report::machine::git_commit(&std::env::current_dir().unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_choices_expand_all_once_in_the_order_given() {
        let parse = |s: &str| s.parse::<SchedulerChoice>();
        let given = ["gas-limit", "all", "ols"].map(|s| parse(s).unwrap());
        assert_eq!(
            schedulers(&given),
            [
                SchedulerKind::GasLimit,
                SchedulerKind::Ols,
                SchedulerKind::GasUsed
            ]
        );
        assert_eq!(schedulers(&[]), SchedulerKind::ALL);
        assert_eq!(
            parse("oracle"),
            Ok(SchedulerChoice::One(SchedulerKind::Oracle))
        );
        assert_eq!(
            parse("fifo").unwrap_err().to_string(),
            "unknown scheduler `fifo` (expected ols, gas-used, gas-limit, heavy-first, oracle or all)"
        );
    }
}
