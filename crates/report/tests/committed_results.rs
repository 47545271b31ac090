//! The results folders committed under `results/`: each loads, whatever schema version
//! wrote it, and re-renders to the files committed beside it, whose CSV keys are unique.

use gigagas_report::{SweepResults, ab::AbResults, table};
use std::path::{Path, PathBuf};

/// Every committed `results/**/results.json`, sorted.
fn committed() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // An A/B of two builds is no sweep: `committed_ab_folders_render_from_their_results`.
            if path.is_dir() && path.file_name().is_some_and(|n| n != "ab") {
                walk(&path, out);
            } else if path.file_name().is_some_and(|n| n == "results.json") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let mut out = Vec::new();
    walk(&root, &mut out);
    out.sort();
    out
}

/// Every results.json loads, the version-1 ones through their upgrade: no committed
/// folder is left unreadable by a change of the model.
#[test]
fn every_committed_results_file_loads() {
    let files = committed();
    assert!(files.len() >= 10, "found {files:?}");
    for f in &files {
        let r = SweepResults::load(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!r.rows.is_empty(), "{}", f.display());
        assert_eq!(r.format, gigagas_report::results::RESULTS_FORMAT);
    }
}

/// The lines of a CSV text, split into the key columns and the rest.
fn keys(text: &str, key: &[&str]) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let head = reader.headers().unwrap().clone();
    let at: Vec<usize> = key
        .iter()
        .map(|k| {
            head.iter()
                .position(|h| h == *k)
                .unwrap_or_else(|| panic!("no column {k} in {head:?}"))
        })
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            at.iter().map(|&i| r[i].to_string()).collect()
        })
        .collect()
}

/// The key columns (the machine, the dump by its label where there is one, every
/// dimension of the point; in blocks.csv the sample and the batch too) name one line each
/// in every committed folder's CSV files, as rendered from its results.json: the label
/// alone tells dumps apart, without their checksums.
#[test]
fn csv_keys_are_unique_in_every_committed_folder() {
    let machine = ["machine_cpu", "machine_cores", "commit"];
    let results_key: Vec<&str> = machine
        .iter()
        .chain(&["dump"])
        .chain(&table::POINT_COLUMNS)
        .copied()
        .collect();
    let totals_key: Vec<&str> = machine
        .iter()
        .chain(&table::POINT_COLUMNS)
        .copied()
        .collect();
    let blocks_key: Vec<&str> = results_key
        .iter()
        .chain(&["sample", "batch_index"])
        .copied()
        .collect();
    let mut with_batches = 0;
    for f in committed() {
        let r = SweepResults::load(&f).unwrap();
        let sets = std::slice::from_ref(&r);
        let blocks = table::render_blocks_csv(sets);
        with_batches += usize::from(blocks.lines().count() > 1);
        for (name, text, key) in [
            ("results.csv", table::render_csv(sets), &results_key),
            ("totals.csv", table::render_totals_csv(sets), &totals_key),
            ("blocks.csv", blocks, &blocks_key),
            ("latency.csv", table::render_latency_csv(sets), &results_key),
        ] {
            let mut lines = keys(&text, key);
            let n = lines.len();
            lines.sort();
            lines.dedup();
            assert_eq!(lines.len(), n, "{}: {name} repeats a key", f.display());
        }
    }
    assert!(with_batches >= 1, "folders with batches: {with_batches}");
}

/// The cells of a Markdown table's lines (`| a | b |`), split on the unescaped pipes.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// Every committed folder's throughput tables: at most eight point columns a table (the
/// baseline's aside), a table per value of the rest, and every replay row and total in
/// exactly one cell; no column empty on every row in any table of table.md; each note once.
#[test]
fn every_committed_folder_is_laid_out_by_its_dimensions() {
    for f in committed() {
        let r = SweepResults::load(&f).unwrap();
        let layout = table::layout_of(&r);
        let text = table::throughput_tables(&r, false);
        let shown = f.display();
        let tables: Vec<Vec<Vec<String>>> = text
            .split("\n\n")
            .filter(|b| b.starts_with('|'))
            .map(|b| b.lines().map(cells).collect())
            .collect();
        assert!(!tables.is_empty(), "{shown}: no table");
        if !layout.tables.is_empty() {
            assert_eq!(
                text.matches("\n### ").count(),
                tables.len(),
                "{shown}: a heading per table"
            );
        }
        let heads = layout.rows.len().max(1);
        let mut filled = 0;
        for t in &tables {
            let points: Vec<usize> = (heads..t[0].len())
                .filter(|&c| !t[0][c].starts_with("sequential"))
                .collect();
            assert!(
                points.len() <= table::MAX_POINT_COLUMNS,
                "{shown}: {} point columns: {:?}",
                points.len(),
                t[0]
            );
            for row in &t[2..] {
                filled += points.iter().filter(|&&c| row[c] != "–").count();
            }
        }
        let replay = r.rows.iter().filter(|x| !x.point.is_sequential()).count()
            + r.totals.iter().filter(|x| !x.point.is_sequential()).count();
        assert_eq!(filled, replay, "{shown}: every replay row and total once");
        // table.md: no column empty on every row; each note once.
        let md = table::render_markdown(std::slice::from_ref(&r), &[]);
        for block in md.split("\n\n").filter(|b| b.starts_with('|')) {
            let lines: Vec<Vec<String>> = block
                .lines()
                .take_while(|l| l.starts_with('|'))
                .map(cells)
                .collect();
            for c in 0..lines[0].len() {
                assert!(
                    lines[2..]
                        .iter()
                        .any(|l| !matches!(l[c].as_str(), "" | "–")),
                    "{shown}: column `{}` is empty on every row",
                    lines[0][c]
                );
            }
        }
        assert!(
            md.matches("- timed work, the same on both paths").count() <= 1,
            "{shown}: the timed work once"
        );
        assert!(
            md.matches("- drift").count() <= 1,
            "{shown}: the drift once"
        );
    }
}

/// The newest big-blocks folder (the one the README shows) reads as rows per block size
/// and thread count (each dump shown by its label), columns per root phase and persistence,
/// a table per access-list design, and its per-block latency says what it was taken from:
/// every sample's blocks, the slowest alone.
#[test]
fn big_blocks_read_as_rows_per_block_size() {
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/big-blocks");
    let dir = gigagas_report::folder::latest_results_dir(&sweep)
        .unwrap()
        .expect("a big-blocks folder");
    let r = gigagas_report::folder::load_dir(&dir).unwrap();
    let text = table::throughput_tables(&r, false);
    let firsts: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| dump |"))
        .map(|l| cells(l)[0].clone())
        .collect();
    let per_table = [
        "300M",
        "300M",
        "1G",
        "1G",
        "**suite total**",
        "**suite total**",
    ];
    assert_eq!(firsts, per_table.repeat(4), "{text}");
    assert_eq!(
        text.matches("\n### cold store, prefetch, ").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains(
            "| dump | threads | root after not persisted | root after persisted | \
             root after persisted in the background | root overlapped not persisted | \
             root overlapped persisted | root overlapped persisted in the background |"
        ),
        "{text}"
    );
    let latency = table::latency_section(std::slice::from_ref(&r));
    assert!(latency.contains("| block | 8 × 2 |"), "{latency}");
    assert!(latency.contains("| block | 4 × 2 |"), "{latency}");
    assert!(latency.contains("(slowest only)"), "{latency}");
    assert!(
        !latency.contains("| P90 |"),
        "under 20 blocks a sample: no P90 column: {latency}"
    );
}

/// A suite total shows one speedup wherever it appears: every geomean in a folder's
/// throughput tables is one that its totals table shows ([`gigagas_report::SuiteTotal::speedup`]:
/// the median of the round-by-round geomean where the rounds pair).
#[test]
fn a_suite_total_shows_one_geomean() {
    let mut checked = 0;
    for f in committed() {
        let r = SweepResults::load(&f).unwrap();
        let totals: Vec<String> = r
            .totals
            .iter()
            .filter_map(|t| t.speedup())
            .map(|s| format!("{s:.2}"))
            .collect();
        let text = table::throughput_tables(&r, false);
        for (i, _) in text.match_indices("(geomean ") {
            let figure = text[i + "(geomean ".len()..].split('×').next().unwrap();
            assert!(
                totals.iter().any(|t| t == figure),
                "{}: a geomean of {figure}× where the totals show {totals:?}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "a committed folder has suite totals");
}

/// No committed file records a path of the machine it was measured on: results name paths
/// relative to the repository, and a file outside it by its name alone.
#[test]
fn committed_results_hold_no_machine_path() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    const ROOTS: [&str; 9] = [
        "/home/",
        "/tmp/",
        "/work/",
        "/root/",
        "/Users/",
        "/var/",
        "/mnt/",
        "/private/",
        "/opt/",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            // A machine path starts a word: at the line's start, or after a space, a quote, a
            // backtick, a bracket, `=` or `:`.
            let at_word =
                |i: usize| i == 0 || line[..i].ends_with([' ', '"', '\'', '`', '(', '[', '=', ':']);
            if let Some(r) = ROOTS
                .iter()
                .find(|r| line.match_indices(**r).any(|(i, _)| at_word(i)))
            {
                found.push(format!("{}:{}: {r}…", f.display(), n + 1));
            }
        }
    }
    assert!(files.len() > 100, "found {} files", files.len());
    assert!(found.is_empty(), "machine paths:\n{}", found.join("\n"));
}

/// Every file a re-render writes is the one committed: the folders were re-rendered
/// after the last change to what they show (`gigagas report DIR`), and the Markdown and
/// plots come out byte for byte.
#[test]
fn committed_folders_are_rendered_from_their_results() {
    for f in committed() {
        let dir = f.parent().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::copy(&f, tmp.path().join("results.json")).unwrap();
        gigagas_report::render_dir(tmp.path()).unwrap();
        for entry in std::fs::read_dir(tmp.path()).unwrap() {
            let rendered = entry.unwrap().path();
            let name = rendered.file_name().unwrap();
            let committed = dir.join(name);
            assert!(
                committed.is_file(),
                "{}: {} is rendered but not committed",
                dir.display(),
                name.to_string_lossy()
            );
            assert!(
                std::fs::read(&rendered).unwrap() == std::fs::read(&committed).unwrap(),
                "{}: {} differs from its re-render (run `gigagas report {}`)",
                dir.display(),
                name.to_string_lossy(),
                dir.display()
            );
        }
    }
}

/// Every committed A/B of two builds (`results/ab/*`, `gigagas compare --against`) loads
/// and its table.md is what its results.json renders to.
#[test]
fn committed_ab_folders_render_from_their_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/ab");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    assert!(
        !folders.is_empty(),
        "no A/B folder under {}",
        root.display()
    );
    for folder in &folders {
        let ab = AbResults::load(&folder.join("results.json"))
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        // A folder named `-self` is a build against a copy of itself (the noise floor).
        let is_self = folder.to_string_lossy().ends_with("-self");
        assert_eq!(
            ab.old.commit == ab.new.commit,
            is_self,
            "{}",
            folder.display()
        );
        let table = std::fs::read_to_string(folder.join("table.md")).unwrap();
        assert_eq!(table, ab.markdown(), "{}: table.md", folder.display());
    }
}
