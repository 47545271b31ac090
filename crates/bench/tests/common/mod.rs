//! What the bench crate's sweep tests share.

use gigagas_bench::{SweepOptions, run_sweep};
use gigagas_report::SweepResults;
use std::path::Path;

/// Loads the sweep config at `config` and runs it as commit `test`, without progress output.
/// Panics with `context`, the first failed dump's path and its reason when any dump failed
/// (a store that cannot be evicted fails its cold points), so a test reads only the rows of
/// a sweep that ran whole.
pub(crate) fn run_test_sweep(config: &Path, context: &str) -> SweepResults {
    let sweep = gigagas_bench::load(config).expect("the config loads");
    let results = run_sweep(
        &sweep,
        &SweepOptions {
            commit: "test".into(),
            note: None,
            build: None,
        },
        &mut (),
    );
    if let Some(f) = results.failures.first() {
        panic!(
            "{context}: {}: {} ({} failed)",
            f.path,
            f.reason,
            results.failures.len()
        );
    }
    results
}
