//! `compare` on results built from a shipped results.json with known samples: a 20 %
//! change is faster or slower, a 1 % change is within noise, different dumps, different
//! work and nothing in common are refused, points in one run only are listed, and a
//! regression beyond the limit is reported.

use gigagas_report::{
    ResultRow, SweepResults,
    compare::{CompareError, Comparison, NOISE_FLOOR, Verdict, bootstrap_ratio_interval},
    folder::{latest_results_dir, load_dir},
};
use std::path::PathBuf;

/// A results folder shipped with the repository (mainnet dump: a baseline and the
/// parallel grid).
fn shipped_folder() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../results/mainnet");
    latest_results_dir(&root)
        .unwrap()
        .expect("a results folder under results/mainnet")
}

/// Relative spread of the synthetic samples (±1 %, as on a quiet machine).
const SPREAD: [f64; 7] = [1.0, 1.01, 0.99, 1.005, 0.995, 1.008, 0.992];

/// The shipped results with every row's samples replaced by `scale × base × SPREAD`
/// (rotated by `rotate`, so OLD and NEW do not share the same noise pattern), where
/// `base` is the row's median.
fn with_samples(base: &SweepResults, scale: f64, rotate: usize) -> SweepResults {
    let mut r = base.clone();
    for row in &mut r.rows {
        let g = row.summary.median.ggas_per_s;
        let template = row.summary.repeats[0];
        row.summary.repeats = (0..SPREAD.len())
            .map(|i| {
                let mut m = template;
                m.ggas_per_s = g * scale * SPREAD[(i + rotate) % SPREAD.len()];
                m.wall_s = row.total_gas as f64 / 1e9 / m.ggas_per_s;
                m
            })
            .collect();
        row.repeats = SPREAD.len();
    }
    r
}

fn shipped() -> SweepResults {
    let r = load_dir(&shipped_folder()).unwrap();
    assert!(r.rows.len() > 2, "the shipped run has a grid");
    r
}

/// Why the shipped run and a copy of it whose every row `edit` changed cannot be compared.
fn refused(edit: impl FnMut(&mut ResultRow)) -> CompareError {
    let base = shipped();
    let mut new = base.clone();
    new.rows.iter_mut().for_each(edit);
    Comparison::new(&base, &new, NOISE_FLOOR).unwrap_err()
}

#[test]
fn a_twenty_percent_change_is_marked_and_a_one_percent_change_is_not() {
    let base = shipped();
    let old = with_samples(&base, 1.0, 0);
    for (scale, want) in [
        (1.2, Verdict::Faster),
        (0.8, Verdict::Slower),
        (1.01, Verdict::WithinNoise),
        (0.99, Verdict::WithinNoise),
    ] {
        let new = with_samples(&base, scale, 3);
        let c = Comparison::new(&old, &new, NOISE_FLOOR).unwrap();
        assert_eq!(c.points.len(), base.rows.len());
        assert!(c.only_in_old.is_empty() && c.only_in_new.is_empty());
        for p in &c.points {
            assert_eq!(p.verdict, want, "scale {scale}: {p:?}");
            assert!(
                p.lo <= p.ratio && p.ratio <= p.hi,
                "the ratio lies in its interval: {p:?}"
            );
            assert!((p.ratio - scale).abs() < 0.02 * scale, "{p:?}");
            assert_eq!(p.samples, (SPREAD.len(), SPREAD.len()));
        }
        assert!((c.geomean() - scale).abs() < 0.01 * scale);
        let n = c.points.len();
        let counts = match want {
            Verdict::Faster => (n, 0, 0),
            Verdict::Slower => (0, n, 0),
            Verdict::WithinNoise => (0, 0, n),
        };
        assert_eq!(c.counts(), counts);
        let text = c.to_string();
        assert!(
            text.starts_with("| dump | point | OLD MGas/s | NEW MGas/s |"),
            "{text}"
        );
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("| mainnet |"))
                .count(),
            n
        );
        assert!(
            text.trim_end()
                .lines()
                .last()
                .unwrap()
                .starts_with(&format!("{n} points: ")),
            "{text}"
        );
    }
}

#[test]
fn a_threshold_wider_than_the_change_hides_it() {
    let base = shipped();
    let c = Comparison::new(
        &with_samples(&base, 1.0, 0),
        &with_samples(&base, 1.2, 3),
        0.25,
    )
    .unwrap();
    assert_eq!(c.counts(), (0, 0, c.points.len()));
    assert!(c.summary_line().contains("noise floor 25 %"));
    assert!(matches!(
        Comparison::new(&base, &base, 1.5),
        Err(CompareError::InvalidThreshold(_))
    ));
}

#[test]
fn the_interval_of_single_samples_is_their_ratio() {
    assert_eq!(bootstrap_ratio_interval(&[2.0], &[2.5]), (1.25, 1.25));
    // Three samples each: a resampled median is one of the samples, so the interval lies
    // within [min NEW / max OLD, max NEW / min OLD].
    let (lo, hi) = bootstrap_ratio_interval(&[1.0, 1.1, 0.9], &[2.0, 2.2, 1.8]);
    assert!(
        lo >= 1.8 / 1.1 - 1e-12 && hi <= 2.2 / 0.9 + 1e-12,
        "{lo} {hi}"
    );
    assert!(lo < 2.0 && hi > 2.0);
}

#[test]
fn different_dumps_are_refused_naming_both_checksums() {
    let old_sum = shipped().rows[0].dump_checksum.clone();
    let err = refused(|row| row.dump_checksum = "00000000deadbeef".into());
    assert_eq!(
        err,
        CompareError::DifferentDump {
            dump: "mainnet".into(),
            old: old_sum.clone(),
            new: "00000000deadbeef".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "dump mainnet: checksum {old_sum} in OLD, 00000000deadbeef in NEW (different dumps: their numbers are not comparable)"
        )
    );
}

#[test]
fn different_work_is_refused() {
    let err = refused(|row| row.timed_work = "execution and receipts".into());
    assert!(matches!(err, CompareError::DifferentWork { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("\"execution and receipts\" in NEW"),
        "{err}"
    );
}

#[test]
fn nothing_in_common_is_refused_and_one_sided_points_are_listed() {
    let err = refused(|row| row.dump = "elsewhere".into());
    assert!(
        matches!(err, CompareError::NothingInCommon { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("elsewhere"), "{err}");

    // NEW lacks OLD's last row and has one of its own: both listed, the rest compared.
    let base = shipped();
    let mut new = base.clone();
    let dropped = new.rows.pop().unwrap();
    let mut extra = dropped.clone();
    let gigagas_grid::Point::Bal(c) = &mut extra.point else {
        panic!("the last row is a replay row")
    };
    c.threads = std::num::NonZeroUsize::new(999).unwrap();
    new.rows.push(extra);
    let c = Comparison::new(&base, &new, NOISE_FLOOR).unwrap();
    assert_eq!(c.points.len(), base.rows.len() - 1);
    assert_eq!(c.only_in_old.len(), 1);
    assert_eq!(c.only_in_new.len(), 1);
    assert_eq!(c.only_in_new[0].1.threads(), 999);
    let text = c.to_string();
    assert!(text.contains("only in OLD: mainnet, "), "{text}");
    assert!(text.contains("only in NEW: mainnet, BAL 999t"), "{text}");
}

#[test]
fn a_regression_beyond_the_limit_names_the_worst_point() {
    let base = shipped();
    let old = with_samples(&base, 1.0, 0);
    let mut new = with_samples(&base, 1.0, 3);
    // One point 20 % slower, another 8 % slower.
    for m in &mut new.rows[1].summary.repeats {
        m.ggas_per_s *= 0.8;
    }
    for m in &mut new.rows[2].summary.repeats {
        m.ggas_per_s *= 0.92;
    }
    let c = Comparison::new(&old, &new, NOISE_FLOOR).unwrap();
    let worst = c
        .regression(0.05)
        .unwrap()
        .expect("a regression beyond 5 %");
    assert_eq!(worst.point, c.points[1].point);
    assert_eq!(worst.verdict, Verdict::Slower);
    assert_eq!(c.counts().1, 2);
    assert_eq!(
        c.regression(0.10).unwrap().map(|p| p.point),
        Some(c.points[1].point)
    );
    assert!(c.regression(0.25).unwrap().is_none());
    // No regression at all: none.
    let same = Comparison::new(&old, &with_samples(&base, 1.0, 3), NOISE_FLOOR).unwrap();
    assert!(same.regression(0.0).unwrap().is_none());
}

#[test]
fn a_run_loads_from_its_folder_or_its_file() {
    let dir = shipped_folder();
    assert_eq!(
        load_dir(&dir).unwrap(),
        load_dir(&dir.join("results.json")).unwrap()
    );
    assert!(load_dir(&dir.join("no-such.json")).is_err());
}
