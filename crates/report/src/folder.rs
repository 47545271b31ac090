//! Results folders: `results/<name>/<YYYY-MM-DD>-<commit>/` with `results.json` (the
//! source of truth), `results.csv`, `table.md`, `simulation.csv` (if simulated),
//! `blocks.csv` and `latency.csv` (if some row kept its batches' figures) and SVG plots,
//! all derived from `results.json` and re-renderable with [`render_dir`].

use crate::{error::ReportError, output::write_atomic, plot, results::SweepResults, table};
use std::{
    path::{Path, PathBuf},
    time::SystemTime,
};

/// `YYYY-MM-DDTHH:MM:SSZ` of a time (UTC).
pub fn utc_timestamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The folder name of a result set: `<YYYY-MM-DD>-<commit>`.
pub fn folder_name(results: &SweepResults) -> String {
    dated_name(&results.started_utc, &results.machine.commit)
}

/// `<YYYY-MM-DD>-<commit>`: the date of `started_utc` and `commit` with every character
/// but ASCII letters, digits, `-`, `_` and `.` made `_`.
pub(crate) fn dated_name(started_utc: &str, commit: &str) -> String {
    let date = started_utc.get(..10).unwrap_or("0000-00-00");
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let commit: String = commit
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    format!("{date}-{commit}")
}

/// The files of fixed names a results folder may hold (the plots are `*.svg`): outputs
/// that are checked against the inputs before any work.
pub const FILES: [&str; 8] = [
    "results.json",
    "results.csv",
    "totals.csv",
    "table.md",
    "simulation.csv",
    "blocks.csv",
    "latency.csv",
    "merged.json",
];

/// Write the files derived from `sets` into `dir`: `table.md`, `results.csv`,
/// `simulation.csv` (if any set has simulations), `blocks.csv` and `latency.csv` (if any
/// row kept its batches' figures) and the plots. Returns the written file names.
pub fn render_into(dir: &Path, sets: &[SweepResults]) -> Result<Vec<String>, ReportError> {
    let plots = plot::render_plots(sets).map_err(|source| ReportError::Plot {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for p in &plots {
        write_atomic(&dir.join(&p.name), p.svg.as_bytes())?;
        written.push(p.name.clone());
    }
    let names: Vec<String> = plots.iter().map(|p| p.name.clone()).collect();
    write_atomic(
        &dir.join("table.md"),
        table::render_markdown(sets, &names).as_bytes(),
    )?;
    written.push("table.md".to_string());
    type Render = fn(&[SweepResults]) -> String;
    let batches = sets
        .iter()
        .any(|s| s.rows.iter().any(|r| !r.per_batch.is_empty()));
    let csvs: [(&str, bool, Render); 5] = [
        ("results.csv", true, table::render_csv),
        (
            "totals.csv",
            sets.iter().any(|s| !s.totals.is_empty()),
            table::render_totals_csv,
        ),
        (
            "simulation.csv",
            sets.iter().any(|s| !s.simulations.is_empty()),
            table::render_simulation_csv,
        ),
        ("blocks.csv", batches, table::render_blocks_csv),
        ("latency.csv", batches, table::render_latency_csv),
    ];
    for (name, wanted, render) in csvs {
        if wanted {
            write_atomic(&dir.join(name), render(sets).as_bytes())?;
            written.push(name.to_string());
        }
    }
    Ok(written)
}

/// Write `results.json` and everything derived from it into `dir` (created if needed;
/// files of the same names are replaced). For `gigagas run --out DIR`.
pub fn write_into(dir: &Path, results: &SweepResults) -> Result<Vec<String>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
    write_atomic(&dir.join("results.json"), results.to_json().as_bytes())?;
    let mut written = vec!["results.json".to_string()];
    written.extend(render_into(dir, std::slice::from_ref(results))?);
    Ok(written)
}

/// Write a new results folder `<results_root>/<name>/<YYYY-MM-DD>-<commit>/` atomically:
/// everything is written into a temporary sibling folder that is then renamed into
/// place (a `-2`, `-3`, ... suffix is added if the folder exists). Returns the folder.
pub fn write_results_dir(
    results_root: &Path,
    results: &SweepResults,
) -> Result<PathBuf, ReportError> {
    let parent = results_root.join(&results.name);
    std::fs::create_dir_all(&parent).map_err(|e| ReportError::io(&parent, e))?;
    let base = folder_name(results);
    let tmp = parent.join(format!(".{base}.tmp-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| ReportError::io(&tmp, e))?;
    }
    std::fs::create_dir(&tmp).map_err(|e| ReportError::io(&tmp, e))?;
    let fill = || -> Result<(), ReportError> {
        write_atomic(&tmp.join("results.json"), results.to_json().as_bytes())?;
        render_into(&tmp, std::slice::from_ref(results))?;
        Ok(())
    };
    if let Err(e) = fill() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let mut n = 1;
    loop {
        let target = if n == 1 {
            parent.join(&base)
        } else {
            parent.join(format!("{base}-{n}"))
        };
        if !target.exists() {
            match std::fs::rename(&tmp, &target) {
                Ok(()) => return Ok(target),
                Err(_) if target.exists() => {}
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return Err(ReportError::io(&target, e));
                }
            }
        }
        n += 1;
    }
}

/// Load the `results.json` of a results folder (or the file itself).
pub fn load_dir(dir: &Path) -> Result<SweepResults, ReportError> {
    let file = if dir.is_dir() {
        dir.join("results.json")
    } else {
        dir.to_path_buf()
    };
    SweepResults::load(&file)
}

/// The newest results folder of a sweep: of the folders under `sweep_dir` (e.g.
/// `results/mainnet`) that hold a `results.json`, the one whose run started last (its
/// `started_utc`; folders of one date are named by commit, not by time), the last by name
/// among equals. `None` if there is none.
pub fn latest_results_dir(sweep_dir: &Path) -> Result<Option<PathBuf>, ReportError> {
    let entries = std::fs::read_dir(sweep_dir).map_err(|e| ReportError::io(sweep_dir, e))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| ReportError::io(sweep_dir, e))?.path();
        if path.join("results.json").is_file() {
            let started = load_dir(&path)?.started_utc;
            dirs.push((started, path));
        }
    }
    dirs.sort();
    Ok(dirs.pop().map(|(_, path)| path))
}

/// Re-render a results folder's table, CSV and plots from its `results.json`.
pub fn render_dir(dir: &Path) -> Result<SweepResults, ReportError> {
    let results = load_dir(dir)?;
    let out = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        dir.parent().unwrap_or(Path::new(".")).to_path_buf()
    };
    render_into(&out, std::slice::from_ref(&results))?;
    Ok(results)
}

/// Merge the results of several folders (machines) into `out`: a `results.json` holding
/// every set (a JSON array), and the table, CSV and plots with a row per machine and grid
/// point.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path) -> Result<Vec<SweepResults>, ReportError> {
    let sets = dirs
        .iter()
        .map(|d| load_dir(d))
        .collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(out).map_err(|e| ReportError::io(out, e))?;
    let json = serde_json::to_string_pretty(&sets).expect("results serialize");
    write_atomic(&out.join("merged.json"), json.as_bytes())?;
    render_into(out, &sets)?;
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(
            utc_timestamp(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00Z"
        );
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_210_096); // 2024-02-29 12:34:56
        assert_eq!(utc_timestamp(t), "2024-02-29T12:34:56Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(951_868_799); // 2000-02-29 23:59:59
        assert_eq!(utc_timestamp(t), "2000-02-29T23:59:59Z");
    }

    #[test]
    fn writes_folder_atomically_and_rerenders() {
        let root = tempfile::tempdir().unwrap();
        let r = sample("CPU");
        let dir = write_results_dir(root.path(), &r).unwrap();
        assert_eq!(
            dir,
            root.path().join("sample").join("2025-01-01-0000000c0ffee")
        );
        for f in [
            "results.json",
            "results.csv",
            "table.md",
            "ggas-vs-threads-batch50.svg",
            "longest-tx-share.svg",
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        // No temporary folder left, and a second write does not overwrite the first.
        let second = write_results_dir(root.path(), &r).unwrap();
        assert_eq!(second.file_name().unwrap(), "2025-01-01-0000000c0ffee-2");
        let entries: Vec<_> = std::fs::read_dir(root.path().join("sample"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(entries.len(), 2, "{entries:?}");
        // Re-render from results.json gives the same table.
        let before = std::fs::read_to_string(dir.join("table.md")).unwrap();
        std::fs::remove_file(dir.join("table.md")).unwrap();
        let loaded = render_dir(&dir).unwrap();
        assert_eq!(loaded, r);
        assert_eq!(
            std::fs::read_to_string(dir.join("table.md")).unwrap(),
            before
        );
    }

    #[test]
    fn the_latest_folder_is_the_last_run() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(latest_results_dir(root.path()).unwrap(), None);
        let mut r = sample("CPU");
        let first = write_results_dir(root.path(), &r).unwrap();
        r.started_utc = "2025-03-01T00:00:00Z".into();
        let later = write_results_dir(root.path(), &r).unwrap();
        std::fs::create_dir(root.path().join("sample/9999-no-results")).unwrap();
        let sweep = root.path().join("sample");
        assert_ne!(first, later);
        assert_eq!(latest_results_dir(&sweep).unwrap(), Some(later.clone()));
        // On one date folders are named by commit: the run that started last is newest,
        // whatever its commit's name.
        r.started_utc = "2025-03-01T09:00:00Z".into();
        r.machine.commit = "0000000".into();
        let same_day = write_results_dir(root.path(), &r).unwrap();
        assert!(
            same_day < later,
            "{same_day:?} sorts before {later:?} by name"
        );
        assert_eq!(latest_results_dir(&sweep).unwrap(), Some(same_day));
        assert!(latest_results_dir(&root.path().join("missing")).is_err());
    }

    #[test]
    fn merges_folders() {
        let root = tempfile::tempdir().unwrap();
        let mut a = sample("CPU A");
        a.machine.commit = "aaa".into();
        let mut b = sample("CPU B");
        b.machine.commit = "bbb".into();
        let da = write_results_dir(root.path(), &a).unwrap();
        let db = write_results_dir(root.path(), &b).unwrap();
        let out = root.path().join("merged");
        let sets = merge_dirs(&[da, db], &out).unwrap();
        assert_eq!(sets.len(), 2);
        let md = std::fs::read_to_string(out.join("table.md")).unwrap();
        assert!(md.contains("| M2 |"), "{md}");
        assert!(out.join("merged.json").is_file());
    }
}
