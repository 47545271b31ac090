//! `gigagas compare OLD NEW`: two runs of the same dumps and grid, point by point.
//!
//! For every (dump, grid point) measured in both runs: the throughput ratio NEW / OLD
//! (median sample over median sample) with a 95 % percentile-bootstrap interval computed
//! from the samples of both, and a verdict against a noise floor ([`NOISE_FLOOR`]): a
//! point is *faster* only when the whole interval lies above `1 + floor`, *slower* only
//! when it lies below `1 − floor`. Two runs of different dumps (same name, different
//! checksum) or of different timed work are refused, naming the difference; points
//! measured in one run only are listed, not compared.

use crate::{
    results::{ResultRow, SweepResults},
    table::escape_name,
};
use gigagas_grid::Point;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::{fmt, fmt::Write};

/// The default noise floor: a ratio interval must clear 1 ± 2 % to count as a change.
/// Back-to-back runs of one build on a quiet machine move by about this much; on a
/// drifting VM pass a larger one (`--threshold`).
pub const NOISE_FLOOR: f64 = 0.02;

/// Bootstrap resamples per point.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Seed of the bootstrap's random draws: the same two runs always give the same
/// intervals.
pub const BOOTSTRAP_SEED: u64 = 0x6716_6a5c_0c0f_fee5;

/// Coverage of the interval: the 2.5th to the 97.5th percentile of the resampled ratios.
pub const COVERAGE: f64 = 0.95;

/// Why two runs cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// The same dump name with different content: the runs measured different blocks.
    #[error(
        "dump {dump}: checksum {old} in OLD, {new} in NEW (different dumps: their numbers are not comparable)"
    )]
    DifferentDump {
        /// The dump's name.
        dump: String,
        /// Its checksum in OLD.
        old: String,
        /// Its checksum in NEW.
        new: String,
    },
    /// The same point timed different work (e.g. receipts inside the window in one run).
    #[error("dump {dump}, {point}: timed work \"{old}\" in OLD, \"{new}\" in NEW")]
    DifferentWork {
        /// The dump's name.
        dump: String,
        /// The grid point.
        point: Point,
        /// OLD's timed work in words (`(not recorded)` for old results).
        old: String,
        /// NEW's timed work.
        new: String,
    },
    /// No (dump, grid point) was measured in both runs.
    #[error("no grid point in common: OLD has {old}; NEW has {new}")]
    NothingInCommon {
        /// OLD's dumps and point count, in words.
        old: String,
        /// NEW's dumps and point count, in words.
        new: String,
    },
    /// A row with no finite, positive throughput sample.
    #[error("dump {dump}, {point}: no measured sample in {side}")]
    NoSamples {
        /// The dump's name.
        dump: String,
        /// The grid point.
        point: Point,
        /// `OLD` or `NEW`.
        side: &'static str,
    },
    /// A noise floor or regression threshold outside `[0, 1)`.
    #[error("threshold {0} is not a fraction in [0, 1) (a percentage 0 ≤ PCT < 100)")]
    InvalidThreshold(f64),
}

/// What the interval says about a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval lies above `1 + noise floor`.
    Faster,
    /// The whole interval lies below `1 − noise floor`.
    Slower,
    /// Anything else: no change larger than the noise floor is shown.
    WithinNoise,
}

impl Verdict {
    /// `faster`, `slower` or `within noise`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
        }
    }

    /// The verdict of an interval `[lo, hi]` of NEW / OLD against `noise_floor`.
    pub fn of(lo: f64, hi: f64, noise_floor: f64) -> Self {
        if lo > 1.0 + noise_floor {
            Verdict::Faster
        } else if hi < 1.0 - noise_floor {
            Verdict::Slower
        } else {
            Verdict::WithinNoise
        }
    }
}

/// One (dump, grid point) measured in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PointComparison {
    /// The dump's name.
    pub dump: String,
    /// The grid point.
    pub point: Point,
    /// OLD's median sample, Mgas/s.
    pub old_mgas_per_s: f64,
    /// NEW's median sample, Mgas/s.
    pub new_mgas_per_s: f64,
    /// Samples in OLD and in NEW.
    pub samples: (usize, usize),
    /// `new_mgas_per_s / old_mgas_per_s`.
    pub ratio: f64,
    /// Lower end of the 95 % bootstrap interval of the ratio.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// The interval against the noise floor.
    pub verdict: Verdict,
}

/// Two runs compared point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The points of both, in OLD's row order.
    pub points: Vec<PointComparison>,
    /// (dump, point) measured in OLD only.
    pub only_in_old: Vec<(String, Point)>,
    /// (dump, point) measured in NEW only.
    pub only_in_new: Vec<(String, Point)>,
    /// The noise floor the verdicts used (a fraction: 0.02 is 2 %).
    pub noise_floor: f64,
}

fn check_fraction(x: f64) -> Result<f64, CompareError> {
    if x.is_finite() && (0.0..1.0).contains(&x) {
        Ok(x)
    } else {
        Err(CompareError::InvalidThreshold(x))
    }
}

/// The finite, positive Ggas/s samples of a row.
fn samples(row: &ResultRow) -> Vec<f64> {
    row.summary
        .repeats
        .iter()
        .map(|m| m.ggas_per_s)
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect()
}

/// The median of `v` (the mean of the middle two for an even count); `v` is sorted in
/// place. `v` must not be empty.
fn median_of(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The percentile-bootstrap interval of `median(new) / median(old)`: [`BOOTSTRAP_RESAMPLES`]
/// times, resample each side's samples with replacement and take the ratio of the
/// medians; the interval is the 2.5th and 97.5th percentiles of those ratios. Seeded with
/// [`BOOTSTRAP_SEED`], so deterministic. Both slices must be non-empty.
pub fn bootstrap_ratio_interval(old: &[f64], new: &[f64]) -> (f64, f64) {
    assert!(!old.is_empty() && !new.is_empty(), "samples on both sides");
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut a = vec![0.0; old.len()];
    let mut b = vec![0.0; new.len()];
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for x in a.iter_mut() {
            *x = old[rng.random_range(0..old.len())];
        }
        for x in b.iter_mut() {
            *x = new[rng.random_range(0..new.len())];
        }
        ratios.push(median_of(&mut b) / median_of(&mut a));
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - COVERAGE) / 2.0;
    let last = ratios.len() - 1;
    let at = |q: f64| ratios[((q * ratios.len() as f64).floor() as usize).min(last)];
    (at(tail), at(1.0 - tail))
}

/// `dump (n points)` for each dump of `rows`, for [`CompareError::NothingInCommon`].
fn describe_side(rows: &[ResultRow]) -> String {
    let mut dumps: Vec<(&str, &str, usize)> = Vec::new();
    for r in rows {
        match dumps
            .iter_mut()
            .find(|(d, c, _)| *d == r.dump && *c == r.dump_checksum)
        {
            Some((_, _, n)) => *n += 1,
            None => dumps.push((&r.dump, &r.dump_checksum, 1)),
        }
    }
    if dumps.is_empty() {
        return "no rows".into();
    }
    dumps
        .iter()
        .map(|(d, c, n)| {
            format!(
                "{} ({c}, {n} point{})",
                escape_name(d),
                if *n == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Comparison {
    /// Compare NEW against OLD with `noise_floor` (a fraction, e.g. [`NOISE_FLOOR`]).
    ///
    /// Refused: a dump name in both runs whose checksums differ; a point in both whose
    /// timed work differs; no point in common. Rows are matched on dump name, checksum
    /// and [`Point`]; a row repeated in one run is matched by its first occurrence.
    pub fn new(
        old: &SweepResults,
        new: &SweepResults,
        noise_floor: f64,
    ) -> Result<Self, CompareError> {
        let noise_floor = check_fraction(noise_floor)?;
        // Same dump name, different content: refused before anything is compared.
        for o in old.rows.iter() {
            if let Some(n) = new.rows.iter().find(|n| n.dump == o.dump)
                && !new
                    .rows
                    .iter()
                    .any(|n| n.dump == o.dump && n.dump_checksum == o.dump_checksum)
            {
                return Err(CompareError::DifferentDump {
                    dump: escape_name(&o.dump).into_owned(),
                    old: o.dump_checksum.clone(),
                    new: n.dump_checksum.clone(),
                });
            }
        }
        let key = |r: &ResultRow| (r.dump.clone(), r.dump_checksum.clone(), r.point);
        let find = |rows: &'_ [ResultRow], k: &(String, String, Point)| {
            rows.iter().position(|r| key(r) == *k)
        };
        let mut points = Vec::new();
        let mut only_in_old = Vec::new();
        for (i, o) in old.rows.iter().enumerate() {
            let k = key(o);
            if find(&old.rows, &k) != Some(i) {
                continue; // a repeated row: the first one counts
            }
            let Some(j) = find(&new.rows, &k) else {
                only_in_old.push((o.dump.clone(), k.2));
                continue;
            };
            let n = &new.rows[j];
            if o.timed_work != n.timed_work {
                let words = |w: &str| {
                    if w.is_empty() {
                        "(not recorded)".to_string()
                    } else {
                        escape_name(w).into_owned()
                    }
                };
                return Err(CompareError::DifferentWork {
                    dump: escape_name(&o.dump).into_owned(),
                    point: k.2,
                    old: words(&o.timed_work),
                    new: words(&n.timed_work),
                });
            }
            points.push(Self::point(o, n, noise_floor)?);
        }
        let mut only_in_new = Vec::new();
        for (j, n) in new.rows.iter().enumerate() {
            let k = key(n);
            if find(&new.rows, &k) == Some(j) && find(&old.rows, &k).is_none() {
                only_in_new.push((n.dump.clone(), k.2));
            }
        }
        if points.is_empty() {
            return Err(CompareError::NothingInCommon {
                old: describe_side(&old.rows),
                new: describe_side(&new.rows),
            });
        }
        Ok(Self {
            points,
            only_in_old,
            only_in_new,
            noise_floor,
        })
    }

    fn point(
        old: &ResultRow,
        new: &ResultRow,
        noise_floor: f64,
    ) -> Result<PointComparison, CompareError> {
        let side = |row: &ResultRow, side| {
            let s = samples(row);
            if s.is_empty() {
                Err(CompareError::NoSamples {
                    dump: escape_name(&row.dump).into_owned(),
                    point: row.point,
                    side,
                })
            } else {
                Ok(s)
            }
        };
        let (a, b) = (side(old, "OLD")?, side(new, "NEW")?);
        let (lo, hi) = bootstrap_ratio_interval(&a, &b);
        let old_g = median_of(&mut a.clone());
        let new_g = median_of(&mut b.clone());
        Ok(PointComparison {
            dump: old.dump.clone(),
            point: old.point,
            old_mgas_per_s: old_g * 1e3,
            new_mgas_per_s: new_g * 1e3,
            samples: (a.len(), b.len()),
            ratio: new_g / old_g,
            lo,
            hi,
            verdict: Verdict::of(lo, hi, noise_floor),
        })
    }

    /// How many points are faster, slower and within noise.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |v| self.points.iter().filter(|p| p.verdict == v).count();
        (
            n(Verdict::Faster),
            n(Verdict::Slower),
            n(Verdict::WithinNoise),
        )
    }

    /// The geometric mean of the points' NEW / OLD ratios.
    pub fn geomean(&self) -> f64 {
        let logs: f64 = self.points.iter().map(|p| p.ratio.ln()).sum();
        (logs / self.points.len().max(1) as f64).exp()
    }

    /// The worst point whose whole interval lies below `1 − max_loss` (a fraction: 0.05
    /// for `--fail-on-regression 5`), the one with the lowest upper bound; `None` when no
    /// point regressed by more than that.
    pub fn regression(&self, max_loss: f64) -> Result<Option<&PointComparison>, CompareError> {
        let max_loss = check_fraction(max_loss)?;
        Ok(self
            .points
            .iter()
            .filter(|p| p.hi < 1.0 - max_loss)
            .min_by(|a, b| a.hi.total_cmp(&b.hi)))
    }

    /// The markdown table: dump, point, OLD and NEW Mgas/s (median sample), NEW / OLD
    /// with its interval, verdict.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| dump | point | OLD MGas/s | NEW MGas/s | NEW/OLD [95 % interval] | verdict |\n\
             |---|---|---:|---:|---:|---|\n",
        );
        for p in &self.points {
            let _ = writeln!(
                out,
                "| {} | {} | {:.0} | {:.0} | {:.3}× [{:.3}–{:.3}] | {} |",
                escape_name(&p.dump).replace('|', "\\|"),
                p.point,
                p.old_mgas_per_s,
                p.new_mgas_per_s,
                p.ratio,
                p.lo,
                p.hi,
                p.verdict.name()
            );
        }
        out
    }

    /// One line per point measured in one run only: `only in OLD: dump, point`.
    pub fn only_lines(&self) -> String {
        let mut out = String::new();
        for (side, list) in [("OLD", &self.only_in_old), ("NEW", &self.only_in_new)] {
            for (dump, point) in list {
                let _ = writeln!(out, "only in {side}: {}, {point}", escape_name(dump));
            }
        }
        out
    }

    /// `12 points: 2 faster, 1 slower, 9 within noise (noise floor 2 %); geomean NEW/OLD 1.03×`.
    pub fn summary_line(&self) -> String {
        let (faster, slower, within) = self.counts();
        let n = self.points.len();
        format!(
            "{n} point{}: {faster} faster, {slower} slower, {within} within noise (noise floor {} %); geomean NEW/OLD {:.3}×",
            if n == 1 { "" } else { "s" },
            self.noise_floor * 100.0,
            self.geomean()
        )
    }
}

impl fmt::Display for Comparison {
    /// The table, the one-run-only lines, then the summary line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())?;
        let only = self.only_lines();
        if !only.is_empty() {
            writeln!(f)?;
            f.write_str(&only)?;
        }
        writeln!(f)?;
        writeln!(f, "{}", self.summary_line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_give_a_degenerate_interval() {
        let s = [1.0, 1.1, 0.9];
        let (lo, hi) = bootstrap_ratio_interval(&s, &s);
        assert!(lo <= 1.0 && hi >= 1.0);
        let (lo, hi) = bootstrap_ratio_interval(&[2.0], &[3.0]);
        assert_eq!((lo, hi), (1.5, 1.5));
    }

    #[test]
    fn the_bootstrap_is_deterministic() {
        let a = [1.0, 1.02, 0.97, 1.01, 0.99];
        let b = [1.1, 1.12, 1.07, 1.11, 1.09];
        assert_eq!(
            bootstrap_ratio_interval(&a, &b),
            bootstrap_ratio_interval(&a, &b)
        );
    }

    #[test]
    fn verdicts_need_the_whole_interval_past_the_floor() {
        assert_eq!(Verdict::of(1.03, 1.2, 0.02), Verdict::Faster);
        assert_eq!(Verdict::of(1.01, 1.2, 0.02), Verdict::WithinNoise);
        assert_eq!(Verdict::of(0.8, 0.97, 0.02), Verdict::Slower);
        assert_eq!(Verdict::of(0.8, 0.99, 0.02), Verdict::WithinNoise);
    }
}
