//! Careless and hostile input, run against the built binary: outputs never
//! alias inputs, bad output locations fail before any measurement, thread counts and
//! sample times have stated limits, `--no-verify` says so everywhere, empty dumps and
//! absurd results are refused or drawn in bounded time, hostile names are escaped, inputs
//! that are not regular files are refused at once and warm-up counts are bounded.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

mod common;
use common::{BIN, generated, gigagas, s, text};

/// The quickest grid: one point, one pass per sample.
const QUICK: [&str; 12] = [
    "--threads",
    "1",
    "--batch",
    "1",
    "--scheduler",
    "ols",
    "--warmup",
    "0",
    "--repeats",
    "1",
    "--min-sample-ms",
    "0",
];

/// A private copy of the generated dump in `dir`.
fn copy_dump(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(generated(), &p).unwrap();
    p
}

/// Failed, with no panic, and stderr's last line an `error:` containing every `needle`.
fn assert_refused(out: &Output, needles: &[&str]) -> String {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "expected failure; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("error:"), "{stderr}");
    for n in needles {
        assert!(last.contains(n), "`{n}` not in: {last}");
    }
    last
}

#[test]
fn outputs_over_inputs_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let dump = copy_dump(dir.path(), "x.gigagas");
    let before = std::fs::read(&dump).unwrap();
    let d = s(&dump);
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", d, "--json", d],
        vec!["run", d, "--out", d],
        vec!["simulate", d, "--json", d, "--no-validate"],
        vec!["simulate", d, "--out", d, "--no-validate"],
    ];
    let nested = dump.join("results");
    let mut cases = cases;
    cases.push(vec!["run", d, "--out", s(&nested)]);
    for args in &cases {
        let mut all = args.clone();
        if args[0] == "run" {
            all.extend(QUICK);
        }
        let out = gigagas(&all);
        assert_refused(&out, &["x.gigagas", "input"]);
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
        assert_eq!(
            std::fs::read(&dump).unwrap(),
            before,
            "{args:?} changed the dump"
        );
    }
    // Through a symbolic link to the dump.
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&dump, &link).unwrap();
    let mut args = vec!["run", d, "--json", s(&link)];
    args.extend(QUICK);
    assert_refused(&gigagas(&args), &["input"]);
    // Importers: a fixture file as its own output, a snapshot folder receiving the dump.
    let fixture = dir.path().join("f.json");
    std::fs::write(&fixture, b"{}").unwrap();
    let out = gigagas(&["import", "blockchain-test", s(&fixture), "-o", s(&fixture)]);
    assert_refused(&out, &["input"]);
    assert_eq!(std::fs::read(&fixture).unwrap(), b"{}");
    let snap = dir.path().join("snap");
    std::fs::create_dir(&snap).unwrap();
    std::fs::write(snap.join("block.json"), b"{}").unwrap();
    let out = gigagas(&[
        "import",
        "snapshot",
        s(&snap),
        "-o",
        s(&snap.join("block.json")),
    ]);
    assert_refused(&out, &["input"]);
    assert_eq!(std::fs::read(snap.join("block.json")).unwrap(), b"{}");
}

#[test]
fn bad_output_locations_fail_before_the_first_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let blocked = file.join("sub");
    let d = s(generated());
    for flag in ["--json", "--out"] {
        let target = blocked.join("r.json");
        let mut args = vec!["run", d, flag, s(&target)];
        args.extend(QUICK);
        let out = gigagas(&args);
        assert_refused(&out, &["a-file"]);
        // Nothing was measured: no table printed.
        assert!(out.stdout.is_empty(), "{flag}: {}", text(&out.stdout));
    }
    // A sweep into a results folder that cannot be created, with and without --dry-run.
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "dumps = [\"{d}\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\nwarmup = 0\nrepeats = 1\nmin_sample_ms = 0\n"
        ),
    )
    .unwrap();
    for dry in [true, false] {
        let mut args = vec!["sweep", s(&config), "--results-dir", s(&blocked)];
        if dry {
            args.push("--dry-run");
        }
        let out = gigagas(&args);
        assert_refused(&out, &["a-file"]);
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
    // A good location still works, and --json is the only file written there.
    let good = dir.path().join("new/sub/r.json");
    let mut args = vec!["run", d, "--json", s(&good)];
    args.extend(QUICK);
    let out = gigagas(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let names: Vec<_> = std::fs::read_dir(good.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.json"], "temporary or probe files left");
}

#[test]
fn thread_counts_and_sample_times_have_stated_limits() {
    let d = s(generated());
    let run = |extra: &[&str]| {
        let mut args = vec!["run", d, "--warmup", "0", "--repeats", "1"];
        args.extend(extra);
        gigagas(&args)
    };
    assert_refused(
        &run(&["--threads", "1,100000", "--batch", "1"]),
        &["--threads", "100000", "1024"],
    );
    assert_refused(
        &run(&["--threads", "1", "--min-sample-ms", "60001"]),
        &["--min-sample-ms", "60000"],
    );
    let out = gigagas(&["simulate", d, "--validate", "100000"]);
    assert_refused(&out, &["--validate", "1024"]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!("dumps = [\"{d}\"]\nthreads = [100000]\nbatch = [1]\nschedulers = [\"ols\"]\n"),
    )
    .unwrap();
    let out = gigagas(&["sweep", s(&config), "--dry-run"]);
    assert_refused(&out, &["threads", "1024"]);
    std::fs::write(
        &config,
        format!("dumps = [\"{d}\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\n"),
    )
    .unwrap();
    let out = gigagas(&[
        "sweep",
        s(&config),
        "--dry-run",
        "--min-sample-ms",
        "999999",
    ]);
    assert_refused(&out, &["--min-sample-ms", "60000"]);
}

#[test]
fn no_verify_results_say_unverified_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = gigagas(&[
        "run",
        s(generated()),
        "--no-verify",
        "--threads",
        "1",
        "--batch",
        "1,2",
        "--scheduler",
        "ols",
        "--warmup",
        "0",
        "--repeats",
        "1",
        "--min-sample-ms",
        "0",
        "--out",
        s(&out_dir),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("UNVERIFIED"), "{stdout}");
    let md = std::fs::read_to_string(out_dir.join("table.md")).unwrap();
    assert!(md.contains("UNVERIFIED"), "{md}");
    assert!(!md.contains("every pass verified"), "{md}");
    let mut plots = 0;
    for e in std::fs::read_dir(&out_dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            plots += 1;
            let svg = std::fs::read_to_string(&p).unwrap();
            assert!(svg.contains("UNVERIFIED"), "{}", p.display());
        }
    }
    assert!(plots > 0, "no plot written");
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert!(csv.lines().skip(1).all(|l| l.contains(",false,")), "{csv}");
}

#[test]
fn empty_dumps_are_refused_before_any_timing() {
    let dir = tempfile::tempdir().unwrap();
    let (dump, _) = gigagas_dump::read_dump(generated()).unwrap();
    let mut no_txs = dump.clone();
    for b in no_txs.blocks_mut() {
        b.transactions.clear();
        b.receipts.clear();
        b.header.gas_used = 0;
        b.access_list.clear();
    }
    let no_txs_path = dir.path().join("no-txs.gigagas");
    gigagas_dump::write_dump(&no_txs, &no_txs_path).unwrap();
    let mut no_blocks = dump;
    no_blocks.segments.clear();
    let no_blocks_path = dir.path().join("no-blocks.gigagas");
    gigagas_dump::write_dump(&no_blocks, &no_blocks_path).unwrap();
    for p in [&no_txs_path, &no_blocks_path] {
        let mut args = vec!["run", s(p)];
        args.extend(QUICK);
        let out = gigagas(&args);
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{stdout}{stderr}");
        assert!(
            !stdout.contains("NaN") && !stdout.contains("0 [0–0]"),
            "{stdout}"
        );
        // Skipped once (nothing to measure), and the run still fails: nothing was measured.
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("skipped ")
                    && l.contains(s(p))
                    && l.contains("no transactions"))
                .count(),
            1,
            "{stderr}"
        );
        assert!(!stderr.contains("FAIL"), "{stderr}");
        assert!(
            stderr
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("error: nothing was measured")),
            "{stderr}"
        );
        assert!(!stderr.contains("other rows are verified"), "{stderr}");
        let out = gigagas(&["simulate", s(p), "--no-validate", "--threads", "2"]);
        assert_refused(&out, &[s(p)]);
        assert!(
            !text(&out.stdout).contains("0.000"),
            "{}",
            text(&out.stdout)
        );
    }
}

#[test]
fn hostile_names_are_escaped_and_failures_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let (mut dump, _) = gigagas_dump::read_dump(generated()).unwrap();
    dump.meta.name = "evil\u{1b}[31m\nsecond line|x".into();
    let evil = dir.path().join("evil.gigagas");
    gigagas_dump::write_dump(&dump, &evil).unwrap();
    let missing = dir.path().join("missing\u{1b}[2J.gigagas");
    let out_dir = dir.path().join("out");
    let mut args = vec![
        "run",
        s(&evil),
        s(generated()),
        s(&missing),
        "--out",
        s(&out_dir),
    ];
    args.extend(QUICK);
    let out = gigagas(&args);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    for t in [&stdout, &stderr] {
        assert!(
            !t.contains('\u{1b}'),
            "a raw escape reached the terminal: {t:?}"
        );
        assert!(!t.contains("\nsecond line"), "a name split a line: {t:?}");
    }
    assert!(
        !stdout.contains("FAIL"),
        "FAIL lines go to stderr only: {stdout}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("FAIL ")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("the other rows are verified"), "{stderr}");
    let md = std::fs::read_to_string(out_dir.join("table.md")).unwrap();
    for (i, l) in md.lines().enumerate() {
        assert!(
            !l.contains('\u{1b}') && !l.starts_with("second line"),
            "line {i}: {l:?}"
        );
    }
    assert!(md.contains("evil\\u{1b}[31m\\nsecond line\\|x"), "{md}");
    // Every dump failed: no claim about other rows.
    let mut args = vec!["run", s(&missing)];
    args.extend(QUICK);
    let last = assert_refused(&gigagas(&args), &["1 of 1 dump(s) failed"]);
    assert!(!last.contains("other rows"), "{last}");
}

#[test]
fn config_files_that_are_not_regular_files_are_named_so() {
    let out = gigagas(&["sweep", "/dev/zero", "--dry-run"]);
    assert_refused(&out, &["/dev/zero", "not a regular file"]);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let out = gigagas(&["sweep", s(&fifo), "--dry-run"]);
        assert_refused(&out, &["fifo.toml", "not a regular file"]);
    }
}

#[test]
fn report_on_absurd_results_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let mut args = vec![
        "run",
        s(generated()),
        "--threads",
        "1",
        "--batch",
        "1,2",
        "--scheduler",
        "ols",
        "--warmup",
        "0",
        "--repeats",
        "1",
        "--min-sample-ms",
        "0",
    ];
    args.extend(["--out", s(&out_dir)]);
    let out = gigagas(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = out_dir.join("results.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for row in v["rows"].as_array_mut().unwrap() {
        let m = &mut row["summary"]["median"];
        for k in ["ggas_per_s", "wall_s", "bound_s", "longest_tx_s"] {
            m[k] = serde_json::json!(1.5e308);
        }
        row["summary"]["max_ggas_per_s"] = serde_json::json!(1.5e308);
    }
    std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
    let mut child = Command::new(BIN)
        .args(["report", s(&out_dir)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            assert!(status.success(), "{stderr}");
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("gigagas report spun for over 60 s on absurd values");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run the binary with `args`, killed if it has not ended within 10 s; its output and how
/// long it ran.
fn gigagas_timed(args: &[&str]) -> (Output, Duration) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the gigagas binary");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let elapsed = start.elapsed();
            return (child.wait_with_output().unwrap(), elapsed);
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "gigagas {args:?} hung on its input (killed after 10 s); stderr: {}",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn fifos_devices_and_sockets_are_refused_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<(PathBuf, &str)> = vec![(PathBuf::from("/dev/null"), "a character device")];
    let fifo = dir.path().join("pipe.gigagas");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        inputs.push((fifo, "a FIFO"));
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
    let socket = dir.path().join("socket.gigagas");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    inputs.push((socket, "a socket"));
    for (input, kind) in &inputs {
        let p = s(input);
        let mut run = vec!["run", p];
        run.extend(QUICK);
        let mut cases = vec![vec!["inspect", p], run, vec!["state", "build", p, "-o"]];
        let store = dir.path().join("store");
        cases[2].push(s(&store));
        cases.push(vec!["simulate", p, "--no-validate"]);
        cases.push(vec!["report", p]);
        cases.push(vec!["compare", p, p]);
        let imported = dir.path().join("imported");
        cases.push(vec!["import", "blockchain-test", p, "-o", s(&imported)]);
        for args in &cases {
            let (out, elapsed) = gigagas_timed(args);
            let last = assert_refused(&out, &[p, "not a regular file", kind]);
            assert!(
                elapsed < Duration::from_secs(1),
                "{args:?} took {elapsed:?} to refuse: {last}"
            );
            // One line: the error alone, no FAIL row besides it.
            assert_eq!(
                text(&out.stderr).lines().count(),
                1,
                "{args:?}: {}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn oversized_warmups_and_repeats_are_refused_naming_their_limit() {
    let d = s(generated());
    let (out, elapsed) = gigagas_timed(&["run", d, "--warmup", "18446744073709551615"]);
    assert_refused(&out, &["--warmup", "18446744073709551615", "limit of 1000"]);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_refused(
        &gigagas(&["run", d, "--repeats", "18446744073709551615"]),
        &["--repeats", "limit of 10000"],
    );
    assert_refused(
        &gigagas(&["simulate", d, "--warmup", "1001", "--no-validate"]),
        &["--warmup", "limit of 1000"],
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    let grid = format!("dumps = [\"{d}\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\n");
    std::fs::write(&config, format!("{grid}warmup = 1001\n")).unwrap();
    let from_config = assert_refused(
        &gigagas(&["sweep", s(&config), "--dry-run"]),
        &["key `warmup`"],
    );
    std::fs::write(&config, &grid).unwrap();
    let from_flag = assert_refused(
        &gigagas(&["sweep", s(&config), "--dry-run", "--warmup", "1001"]),
        &["--warmup"],
    );
    // The same message for the key and the flag.
    let message = "1001 warm-up passes is over the limit of 1000 per point";
    assert!(from_config.ends_with(message), "{from_config}");
    assert!(from_flag.ends_with(message), "{from_flag}");
}
