//! An A/B of two builds: the same points run by an OLD and a NEW binary in alternating
//! rounds, paired round by round.
//!
//! Each round holds one `gigagas run --repeats 1` of each build, so one sample of every
//! point per build; the two run back to back, in ABBA order ([`round_order`]: OLD first in
//! even rounds, NEW first in odd ones), so a machine whose speed drifts, or a first run
//! that pays for a cold page cache, moves both builds alike. For every (dump, point) the
//! ratio NEW / OLD is taken within each round, and its median gets the
//! distribution-free 95 % interval of [`median_interval`], the interval `gigagas run`
//! gives its own paired ratios; the verdict is [`Verdict::of`] that interval against the
//! noise floor, as in `gigagas compare`. The points come out as a [`Comparison`], so the
//! table, the summary line and `--fail-on-regression` are `gigagas compare`'s.
//!
//! Rows pair by dump, checksum and point apart from sender recovery and receipts (the
//! timed work one build may be asked to add, to measure its cost); a point whose timed
//! work differs between the builds is named with both.

use crate::{
    compare::{CompareError, Comparison, PointComparison, Verdict},
    error::ReportError,
    machine::MachineInfo,
    output::write_atomic,
    provenance::{BuildInfo, Provenance},
    results::{ResultRow, SweepResults},
    stats::{Interval, median_interval},
    table::escape_name,
};
use gigagas_grid::{Point, TimedWork};
use serde::{Deserialize, Serialize};
use std::{fmt::Write, path::Path};

/// The schema version of an A/B's `results.json`.
pub const AB_FORMAT: u32 = 1;

/// The largest A/B `results.json` read back, bytes.
const MAX_AB_BYTES: u64 = 64 << 20;

/// One of the two builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The build compared against (`--against`).
    Old,
    /// The build under test.
    New,
}

impl Side {
    /// `OLD` or `NEW`, as tables and messages name the builds.
    pub fn name(self) -> &'static str {
        match self {
            Side::Old => "OLD",
            Side::New => "NEW",
        }
    }
}

/// Which build runs first in round `round` (from 0): OLD in even rounds, NEW in odd ones,
/// so rounds 0 and 1 run OLD, NEW, NEW, OLD (ABBA).
pub fn round_order(round: usize) -> [Side; 2] {
    if round.is_multiple_of(2) {
        [Side::Old, Side::New]
    } else {
        [Side::New, Side::Old]
    }
}

/// What each build's run of one round wrote.
#[derive(Debug, Clone)]
pub struct Round {
    /// OLD's results.
    pub old: SweepResults,
    /// NEW's results.
    pub new: SweepResults,
}

/// Why the rounds of an A/B cannot be paired.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PairError {
    /// What `gigagas compare` refuses too: different dumps, no point in common, a point
    /// without samples, a noise floor out of range.
    #[error(transparent)]
    Compare(Box<CompareError>),
    /// No round was run.
    #[error("no round to pair")]
    NoRounds,
    /// A point of the first round is missing from a later one.
    #[error("dump {dump}, {point}: missing from {side}'s round {round}")]
    MissingPoint {
        /// The dump's name.
        dump: String,
        /// The grid point (as OLD names it).
        point: Point,
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The round, from 1.
        round: usize,
    },
    /// A binary's commit changed between rounds: it was rebuilt while the A/B ran.
    #[error("{side}'s commit changed between rounds: {first} in round 1, {then} in round {round}")]
    BuildChanged {
        /// `OLD` or `NEW`.
        side: &'static str,
        /// The commit of round 1.
        first: String,
        /// The commit of round `round`.
        then: String,
        /// The round, from 1.
        round: usize,
    },
}

impl From<CompareError> for PairError {
    fn from(e: CompareError) -> Self {
        Self::Compare(Box::new(e))
    }
}

/// One build as an A/B records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbBuild {
    /// The binary's file name (its folder is of the measuring machine).
    pub binary: String,
    /// The commit it was built from, as its results record it (`-dirty` when its tree had
    /// changes).
    pub commit: String,
    /// Whether its tree was clean (`None`: unknown).
    pub tree_clean: Option<bool>,
    /// How it was built, as its results record it.
    pub build: Option<BuildInfo>,
    /// The arguments given to this build alone, after the shared ones.
    pub args: Vec<String>,
}

/// One (dump, point) of an A/B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbPoint {
    /// The dump's name.
    pub dump: String,
    /// The dump's checksum.
    pub dump_checksum: String,
    /// The point as OLD ran it.
    pub old_point: Point,
    /// The point as NEW ran it (the same point, unless one build alone was given sender
    /// recovery or receipts).
    pub new_point: Point,
    /// OLD's figure of every round, Ggas/s: its one sample, or its samples' median.
    pub old_ggas_per_s: Vec<f64>,
    /// NEW's figure of every round, the same way.
    pub new_ggas_per_s: Vec<f64>,
    /// NEW / OLD of every round.
    pub ratios: Vec<f64>,
    /// The ratios' median with its distribution-free interval.
    pub ratio: Interval,
    /// `faster`, `slower` or `within noise`: the interval against the noise floor.
    pub verdict: String,
}

impl AbPoint {
    /// The point's name: OLD's, and NEW's after it when they differ.
    pub fn name(&self) -> String {
        if self.old_point == self.new_point {
            self.old_point.to_string()
        } else {
            format!("{} / NEW {}", self.old_point, self.new_point)
        }
    }
}

/// What an A/B measured: the contents of its `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbResults {
    /// The schema version ([`AB_FORMAT`]).
    pub format: u32,
    /// Always `ab`: what the file holds.
    pub kind: String,
    /// When the first round started, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_utc: String,
    /// The measuring machine (as NEW's first run recorded it).
    pub machine: MachineInfo,
    /// Rounds run.
    pub rounds: usize,
    /// Samples each build took of every point in a round (`gigagas run --repeats`); the
    /// round's figure of a point is their median.
    #[serde(default = "one_sample", skip_serializing_if = "is_one_sample")]
    pub samples: usize,
    /// The noise floor of the verdicts, a fraction (0.02 is 2 %).
    pub noise_floor: f64,
    /// The build compared against.
    pub old: AbBuild,
    /// The build under test.
    pub new: AbBuild,
    /// The `gigagas run` arguments both builds were given.
    pub run_args: Vec<String>,
    /// Every (dump, point) both ran, in OLD's row order.
    pub points: Vec<AbPoint>,
    /// (dump, point) run by OLD only.
    pub only_in_old: Vec<(String, Point)>,
    /// (dump, point) run by NEW only.
    pub only_in_new: Vec<(String, Point)>,
    /// The A/B's own command line and build, load before and after.
    pub provenance: Option<Provenance>,
}

/// How an A/B was set up, beside what its rounds measured.
#[derive(Debug, Clone)]
pub struct AbSetup {
    /// The binaries' file names, OLD then NEW.
    pub binaries: [String; 2],
    /// The arguments given to one build alone, OLD's then NEW's.
    pub side_args: [Vec<String>; 2],
    /// The `gigagas run` arguments both builds were given.
    pub run_args: Vec<String>,
    /// Samples each build takes of every point in a round ([`AbResults::samples`]).
    pub samples: usize,
    /// The noise floor of the verdicts, a fraction.
    pub noise_floor: f64,
    /// When the first round started, UTC.
    pub started_utc: String,
    /// The A/B's own provenance.
    pub provenance: Option<Provenance>,
}

/// The key two rows pair by: the dump, its checksum and the point without sender recovery
/// or receipts.
type Key = (String, String, Point);

fn key(row: &ResultRow) -> Key {
    let strip = |w: TimedWork| TimedWork {
        recover_senders: false,
        receipts: false,
        ..w
    };
    let point = match row.point {
        Point::Sequential(w) => Point::Sequential(strip(w)),
        Point::Bal(c) => Point::Bal(c.with_work(strip(c.work))),
    };
    (row.dump.clone(), row.dump_checksum.clone(), point)
}

fn find<'a>(results: &'a SweepResults, k: &Key) -> Option<&'a ResultRow> {
    results.rows.iter().find(|r| key(r) == *k)
}

/// The build of one side, checked to be the same in every round.
fn build_of(
    rounds: &[Round],
    side: Side,
    binary: String,
    args: Vec<String>,
) -> Result<AbBuild, PairError> {
    fn of(r: &Round, side: Side) -> &SweepResults {
        match side {
            Side::Old => &r.old,
            Side::New => &r.new,
        }
    }
    let first = of(&rounds[0], side);
    for (i, r) in rounds.iter().enumerate().skip(1) {
        let then = &of(r, side).machine.commit;
        if *then != first.machine.commit {
            return Err(PairError::BuildChanged {
                side: side.name(),
                first: first.machine.commit.clone(),
                then: then.clone(),
                round: i + 1,
            });
        }
    }
    Ok(AbBuild {
        binary,
        commit: first.machine.commit.clone(),
        tree_clean: first.machine.tree_clean(),
        build: first.provenance.as_ref().map(|p| p.build.clone()),
        args,
    })
}

/// A round's sample of a row, Ggas/s: its only one (a run of `--repeats 1`), or its
/// median sample.
fn round_sample(row: &ResultRow) -> Option<f64> {
    let s = &row.summary;
    s.median_index().map(|i| s.repeats[i].ggas_per_s)
}

/// An A/B recorded before `samples` was: one sample a round.
fn one_sample() -> usize {
    1
}

fn is_one_sample(n: &usize) -> bool {
    *n == 1
}

/// The median of `v`, which is not empty.
fn median(v: &[f64]) -> f64 {
    median_interval(v).map_or(f64::NAN, |i| i.median)
}

impl AbResults {
    /// Pair the rounds' rows point by point, round by round. Refused: no rounds; a build
    /// whose commit changes between rounds; what [`Comparison::new`] refuses (checked on
    /// the first round); a point of the first round missing from a later one.
    pub fn pair(rounds: &[Round], setup: AbSetup) -> Result<Self, PairError> {
        let first = rounds.first().ok_or(PairError::NoRounds)?;
        // The checks of `gigagas compare` (the same dumps, a noise floor in range, a sample
        // a point), but not its refusal of a point whose timed work differs: that is what a
        // build's own arguments ask for.
        match Comparison::new(&first.old, &first.new, setup.noise_floor) {
            Ok(_)
            | Err(CompareError::DifferentWork { .. } | CompareError::NothingInCommon { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let [old_binary, new_binary] = setup.binaries;
        let [old_args, new_args] = setup.side_args;
        let old = build_of(rounds, Side::Old, old_binary, old_args)?;
        let new = build_of(rounds, Side::New, new_binary, new_args)?;
        let (mut points, mut seen, mut only_in_old) = (Vec::new(), Vec::new(), Vec::new());
        for row in &first.old.rows {
            let k = key(row);
            if seen.contains(&k) {
                continue; // a repeated row: the first one counts
            }
            seen.push(k.clone());
            match find(&first.new, &k) {
                Some(new_row) => {
                    points.push(Self::point(rounds, &k, row, new_row, setup.noise_floor)?)
                }
                None => only_in_old.push((row.dump.clone(), row.point)),
            }
        }
        let only_in_new = first
            .new
            .rows
            .iter()
            .filter(|r| find(&first.old, &key(r)).is_none())
            .map(|r| (r.dump.clone(), r.point))
            .collect();
        if points.is_empty() {
            return Err(CompareError::NothingInCommon {
                old: format!("{} rows", first.old.rows.len()),
                new: format!("{} rows", first.new.rows.len()),
            }
            .into());
        }
        Ok(Self {
            format: AB_FORMAT,
            kind: "ab".into(),
            started_utc: setup.started_utc,
            machine: first.new.machine.clone(),
            rounds: rounds.len(),
            samples: setup.samples,
            noise_floor: setup.noise_floor,
            old,
            new,
            run_args: setup.run_args,
            points,
            only_in_old,
            only_in_new,
            provenance: setup.provenance,
        })
    }

    /// One point over every round.
    fn point(
        rounds: &[Round],
        k: &Key,
        old_row: &ResultRow,
        new_row: &ResultRow,
        noise_floor: f64,
    ) -> Result<AbPoint, PairError> {
        let (mut olds, mut news, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for (i, r) in rounds.iter().enumerate() {
            let row = |results: &SweepResults, side: Side| {
                find(results, k)
                    .and_then(round_sample)
                    .ok_or_else(|| PairError::MissingPoint {
                        dump: escape_name(&k.0).into_owned(),
                        point: old_row.point,
                        side: side.name(),
                        round: i + 1,
                    })
            };
            let (o, n) = (row(&r.old, Side::Old)?, row(&r.new, Side::New)?);
            for (sample, side) in [(o, Side::Old), (n, Side::New)] {
                if !(sample.is_finite() && sample > 0.0) {
                    return Err(CompareError::NoSamples {
                        dump: escape_name(&k.0).into_owned(),
                        point: old_row.point,
                        side: side.name(),
                    }
                    .into());
                }
            }
            olds.push(o);
            news.push(n);
            ratios.push(n / o);
        }
        let ratio = median_interval(&ratios).expect("finite ratios, one a round");
        Ok(AbPoint {
            dump: old_row.dump.clone(),
            dump_checksum: old_row.dump_checksum.clone(),
            old_point: old_row.point,
            new_point: new_row.point,
            old_ggas_per_s: olds,
            new_ggas_per_s: news,
            ratios,
            ratio,
            verdict: Verdict::of(ratio.lo, ratio.hi, noise_floor).name().into(),
        })
    }

    /// The points as a [`Comparison`]: `gigagas compare`'s table, summary line and
    /// regression check, with the paired median and its interval as each point's ratio.
    pub fn comparison(&self) -> Comparison {
        let points = self
            .points
            .iter()
            .map(|p| PointComparison {
                dump: p.dump.clone(),
                point: p.old_point,
                old_mgas_per_s: median(&p.old_ggas_per_s) * 1e3,
                new_mgas_per_s: median(&p.new_ggas_per_s) * 1e3,
                samples: (p.old_ggas_per_s.len(), p.new_ggas_per_s.len()),
                ratio: p.ratio.median,
                lo: p.ratio.lo,
                hi: p.ratio.hi,
                verdict: Verdict::of(p.ratio.lo, p.ratio.hi, self.noise_floor),
            })
            .collect();
        Comparison {
            points,
            only_in_old: self.only_in_old.clone(),
            only_in_new: self.only_in_new.clone(),
            noise_floor: self.noise_floor,
        }
    }

    /// The lines that say what the A/B ran: the builds, the arguments, the rounds, how
    /// the ratio and its interval are taken, points whose timed work differs.
    fn header(&self) -> String {
        let mut out = String::new();
        let build = |b: &AbBuild| {
            let clean = match b.tree_clean {
                Some(true) => " (tree clean)",
                Some(false) => " (tree dirty)",
                None => "",
            };
            let how = b.build.as_ref().map_or_else(String::new, |i| {
                format!(
                    ", profile {}, LTO {}, target CPU {}, allocator {}",
                    i.profile, i.lto, i.target_cpu, i.allocator
                )
            });
            let args = if b.args.is_empty() {
                String::new()
            } else {
                format!(", its own arguments `{}`", b.args.join(" "))
            };
            format!(
                "`{}` at commit `{}`{clean}{how}{args}",
                escape_name(&b.binary),
                escape_name(&b.commit)
            )
        };
        let _ = writeln!(out, "- OLD: {}", build(&self.old));
        let _ = writeln!(out, "- NEW: {}", build(&self.new));
        let per_round = match self.samples {
            1 => "one sample of every point per build and round".to_string(),
            n => format!(
                "{n} samples of every point per build and round, interleaved; a round's figure is their median"
            ),
        };
        let _ = writeln!(
            out,
            "- both ran `gigagas run {}--repeats {}` in {} rounds, ABBA (OLD first in rounds 1, 3, 5, ..., NEW first in 2, 4, 6, ...): {per_round}",
            self.run_args
                .iter()
                .map(|a| format!("{} ", escape_name(a)))
                .collect::<String>(),
            self.samples,
            self.rounds
        );
        let coverage = self.points.first().map_or(0.0, |p| p.ratio.confidence);
        let _ = writeln!(
            out,
            "- NEW/OLD is taken round by round: the median of the rounds' ratios with its distribution-free interval ({:.1} % coverage with {} rounds); faster when the whole interval lies above 1 + {} %, slower when below 1 − {} %, else within noise",
            coverage * 100.0,
            self.rounds,
            self.noise_floor * 100.0,
            self.noise_floor * 100.0
        );
        let m = &self.machine;
        let _ = writeln!(
            out,
            "- {} ({} cores, {} GiB), {}; started {}",
            escape_name(&m.cpu),
            m.cores,
            m.memory_gib,
            escape_name(&m.os),
            self.started_utc
        );
        if let Some(p) = &self.provenance {
            let _ = writeln!(out, "- command: `{}`", p.command().replace('`', "'"));
        }
        out
    }

    /// `table.md`: the header, `gigagas compare`'s table and summary line.
    pub fn markdown(&self) -> String {
        format!(
            "# A/B: NEW `{}` against OLD `{}`\n\n{}\n{}",
            escape_name(&self.new.commit),
            escape_name(&self.old.commit),
            self.header(),
            self.comparison()
        )
    }

    /// The results as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("A/B results serialize")
    }

    /// Read an A/B's `results.json`.
    pub fn load(path: &Path) -> Result<Self, ReportError> {
        crate::output::read_json(path, MAX_AB_BYTES)
    }

    /// The folder name: `<YYYY-MM-DD>-<NEW's commit>`.
    pub fn folder_name(&self) -> String {
        crate::folder::dated_name(&self.started_utc, &self.new.commit)
    }

    /// Write `results.json` and `table.md` into `dir` (created if needed), each atomically.
    pub fn write_into(&self, dir: &Path) -> Result<(), ReportError> {
        std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
        write_atomic(&dir.join("results.json"), self.to_json().as_bytes())?;
        write_atomic(&dir.join("table.md"), self.markdown().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newest committed `results/mainnet` folder's results: 13 points, 10 rounds.
    fn mainnet() -> SweepResults {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/mainnet");
        let dir = crate::folder::latest_results_dir(&root)
            .unwrap()
            .expect("a committed results/mainnet folder");
        SweepResults::load(&dir.join("results.json")).unwrap()
    }

    /// Round `r` of a real run as a `--repeats 1` run would write it: every row keeps its
    /// `r`-th sample, its throughput times `scale`.
    fn round_of(results: &SweepResults, r: usize, scale: f64) -> SweepResults {
        let mut out = results.clone();
        for row in &mut out.rows {
            let mut m = row.summary.repeats[r % row.summary.repeats.len()];
            m.ggas_per_s *= scale;
            m.wall_s /= scale;
            row.summary.repeats = vec![m];
        }
        out
    }

    /// OLD is the real run's rounds; NEW is each round's sample of the round `shift`
    /// later, times `scale`.
    fn rounds(n: usize, shift: usize, scale: f64) -> Vec<Round> {
        let run = mainnet();
        (0..n)
            .map(|r| Round {
                old: round_of(&run, r, 1.0),
                new: round_of(&run, r + shift, scale),
            })
            .collect()
    }

    fn setup() -> AbSetup {
        AbSetup {
            binaries: ["gigagas-old".into(), "gigagas".into()],
            side_args: [Vec::new(), Vec::new()],
            run_args: vec!["--threads".into(), "1,2".into()],
            samples: 1,
            noise_floor: crate::compare::NOISE_FLOOR,
            started_utc: "2026-11-29T08:00:00Z".into(),
            provenance: None,
        }
    }

    #[test]
    fn rounds_alternate_abba() {
        let order: Vec<[Side; 2]> = (0..4).map(round_order).collect();
        assert_eq!(
            order,
            [
                [Side::Old, Side::New],
                [Side::New, Side::Old],
                [Side::Old, Side::New],
                [Side::New, Side::Old]
            ]
        );
    }

    /// The same samples on both sides: every ratio is 1, every point within noise.
    #[test]
    fn a_build_against_itself_is_within_noise_everywhere() {
        let ab = AbResults::pair(&rounds(10, 0, 1.0), setup()).unwrap();
        assert_eq!(ab.points.len(), 13);
        for p in &ab.points {
            assert_eq!(p.ratios, vec![1.0; 10], "{}", p.name());
            assert_eq!((p.ratio.lo, p.ratio.median, p.ratio.hi), (1.0, 1.0, 1.0));
            assert_eq!(p.verdict, "within noise");
        }
        let c = ab.comparison();
        assert_eq!(c.counts(), (0, 0, 13));
        assert!(c.regression(0.05).unwrap().is_none());
        assert_eq!(ab.old.commit, "1310270bd576");
        assert_eq!(ab.folder_name(), "2026-11-29-1310270bd576");
    }

    /// NEW 3 % slower in every round is slower on every point, with the interval
    /// [0.97, 0.97]; 1 % faster is within the 2 % floor.
    #[test]
    fn a_known_difference_is_found_and_a_smaller_one_is_noise() {
        let ab = AbResults::pair(&rounds(10, 0, 0.97), setup()).unwrap();
        for p in &ab.points {
            assert!(
                p.ratios.iter().all(|r| (r - 0.97).abs() < 1e-12),
                "{:?}",
                p.ratios
            );
            assert!((p.ratio.lo - 0.97).abs() < 1e-12 && (p.ratio.hi - 0.97).abs() < 1e-12);
            assert_eq!(p.verdict, "slower");
        }
        assert_eq!(ab.comparison().counts(), (0, 13, 0));
        let worst = ab.comparison().regression(0.02).unwrap().cloned().unwrap();
        assert!((worst.hi - 0.97).abs() < 1e-12);
        let ab = AbResults::pair(&rounds(10, 0, 1.01), setup()).unwrap();
        assert_eq!(ab.comparison().counts(), (0, 0, 13));
    }

    /// Several samples a round (`--samples 3`): a round's figure is its median sample, so
    /// one slow sample of OLD in every round moves no ratio, and the table says how many
    /// samples a round took; one sample a round keeps the older wording.
    #[test]
    fn a_round_of_several_samples_pairs_their_median() {
        let three = |scale: f64, slow: f64| {
            let mut out = round_of(&mainnet(), 0, scale);
            for row in &mut out.rows {
                let m = row.summary.repeats[0];
                let mut slow_one = m;
                slow_one.ggas_per_s *= slow;
                slow_one.wall_s /= slow;
                row.summary.repeats = vec![m, slow_one, m];
            }
            out
        };
        let rounds: Vec<Round> = (0..10)
            .map(|_| Round {
                old: three(1.0, 0.5),
                new: three(1.0, 1.0),
            })
            .collect();
        let ab = AbResults::pair(
            &rounds,
            AbSetup {
                samples: 3,
                ..setup()
            },
        )
        .unwrap();
        for p in &ab.points {
            assert_eq!(p.ratios, vec![1.0; 10], "{}", p.name());
            assert_eq!(p.verdict, "within noise");
        }
        let text = ab.markdown();
        assert!(text.contains("--repeats 3` in 10 rounds"), "{text}");
        assert!(
            text.contains("3 samples of every point per build and round"),
            "{text}"
        );
        let json = ab.to_json();
        assert!(json.contains("\"samples\": 3"), "{json}");
        let one = AbResults::pair(&rounds, setup()).unwrap();
        assert!(!one.to_json().contains("\"samples\""));
        assert!(
            one.markdown()
                .contains("one sample of every point per build and round")
        );
    }

    /// Real round-to-round noise (NEW's round r is the run's round r + 3): the ratios are
    /// the samples' quotients round by round, the interval is the one `gigagas run` gives
    /// paired ratios, and the verdict is that interval against the floor.
    #[test]
    fn the_ratios_pair_round_by_round() {
        let run = mainnet();
        let ab = AbResults::pair(&rounds(10, 3, 1.0), setup()).unwrap();
        for (p, row) in ab.points.iter().zip(&run.rows) {
            let s: Vec<f64> = row.summary.repeats.iter().map(|m| m.ggas_per_s).collect();
            let want: Vec<f64> = (0..10).map(|r| s[(r + 3) % 10] / s[r]).collect();
            assert_eq!(p.ratios, want);
            assert_eq!(p.old_ggas_per_s, s);
            assert_eq!(p.ratio, median_interval(&want).unwrap());
            assert_eq!(
                p.verdict,
                Verdict::of(p.ratio.lo, p.ratio.hi, ab.noise_floor).name()
            );
        }
        let text = ab.markdown();
        assert!(text.contains("| NEW/OLD [95 % interval] |"), "{text}");
        assert!(text.contains("97.9 % coverage with 10 rounds"), "{text}");
        assert!(text.contains("`gigagas run --threads 1,2 --repeats 1` in 10 rounds"));
        let back: AbResults = serde_json::from_str(&ab.to_json()).unwrap();
        assert_eq!(back, ab);
    }

    /// Receipts on NEW alone: the points pair apart from the receipts and name both.
    #[test]
    fn one_side_s_own_timed_work_still_pairs() {
        let mut rounds = rounds(4, 0, 0.9);
        for r in &mut rounds {
            for row in &mut r.new.rows {
                row.point = match row.point {
                    Point::Sequential(w) => Point::Sequential(TimedWork {
                        receipts: true,
                        ..w
                    }),
                    Point::Bal(c) => Point::Bal(c.with_work(TimedWork {
                        receipts: true,
                        ..c.work
                    })),
                };
                row.timed_work.push_str("; + receipts");
            }
        }
        let mut s = setup();
        s.side_args[1] = vec!["--receipts".into()];
        let ab = AbResults::pair(&rounds, s).unwrap();
        assert_eq!(ab.points.len(), 13);
        assert!(ab.only_in_old.is_empty() && ab.only_in_new.is_empty());
        assert_eq!(ab.points[0].name(), "sequential / NEW sequential +receipts");
        assert!(ab.markdown().contains("its own arguments `--receipts`"));
    }

    #[test]
    fn what_cannot_be_paired_is_refused() {
        assert_eq!(
            AbResults::pair(&[], setup()).unwrap_err(),
            PairError::NoRounds
        );
        let mut r = rounds(3, 0, 1.0);
        r[2].new.rows.pop();
        let e = AbResults::pair(&r, setup()).unwrap_err();
        assert!(
            matches!(
                e,
                PairError::MissingPoint {
                    side: "NEW",
                    round: 3,
                    ..
                }
            ),
            "{e}"
        );
        let mut r = rounds(3, 0, 1.0);
        r[1].old.machine.commit = "abcdef123456".into();
        let e = AbResults::pair(&r, setup()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OLD's commit changed between rounds: 1310270bd576 in round 1, abcdef123456 in round 2"
        );
        let mut r = rounds(2, 0, 1.0);
        for row in &mut r[0].new.rows {
            row.dump_checksum = "00000000deadbeef".into();
        }
        let e = AbResults::pair(&r, setup()).unwrap_err();
        assert!(
            matches!(&e, PairError::Compare(c) if matches!(**c, CompareError::DifferentDump { .. })),
            "{e}"
        );
    }
}
