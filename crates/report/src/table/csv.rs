//! The CSV files of a results folder: `results.csv`, `totals.csv`, `simulation.csv`,
//! `blocks.csv` and `latency.csv`.
//!
//! Every line is a tuple of column groups, each a flat struct whose field names are the
//! heads: the machine first (so files of several machines concatenate), then what the
//! line is about (a dump, a grid point), then its figures. A grid point is written from
//! [`Point`] by one group, [`PointColumns`], so every dimension of the grid is a column
//! of every file that names a point, and the machine, dump and point columns together
//! are a key: no two lines of one results folder share them. A dump is named by its label
//! (`dump`: the config's label, else its name, else its file stem where names collide;
//! [`crate::results::dump_labels`]), then its name and checksum.

use super::terminal::{any_unverified, scheduler_cell};
use crate::{
    latency::{BlockLatency, Bounds, Distribution},
    results::{DumpLabels, ResultRow, SuiteTotal, SweepResults},
    simulation::Projection,
};
use gigagas_grid::{Point, StateRead};
use serde::{Serialize, Serializer};

/// The heads of the columns that name a grid point, in file order: in `results.csv`
/// after the machine's (`machine_cpu`, `machine_cores`, `commit`) and the dump's
/// (`dump`, `dump_checksum`), in `totals.csv` after the machine's. With those, the key of
/// a line. `state` is `memory` or `store`; `io` and `cache` are the store's I/O mode and
/// page-cache state, `-` for memory; `bal_design` is what the access list carries when the
/// replay reads the store with one (`full`, `keys`, `writes`), `-` for memory and on demand;
/// `state_root` is the state-root phase (`off`, `after`, `overlapped`); `persist` whether
/// each block was committed into the store after its root; `scheduler` is `-` for the
/// sequential baseline.
pub const POINT_COLUMNS: [&str; 13] = [
    "mode",
    "threads",
    "scheduler",
    "batch",
    "recover_senders",
    "receipts",
    "state",
    "io",
    "cache",
    "bal_design",
    "state_root",
    "persist",
    "claims",
];

/// A figure written with `N` decimals (`{:.N}`), as every CSV file writes its figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Fixed<const N: usize>(f64);

impl<const N: usize> Serialize for Fixed<N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:.*}", N, self.0))
    }
}

/// The machine columns that lead every CSV line.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct MachineColumns<'a> {
    machine_cpu: &'a str,
    machine_cores: usize,
    commit: &'a str,
}

impl<'a> MachineColumns<'a> {
    fn of(s: &'a SweepResults) -> Self {
        Self {
            machine_cpu: &s.machine.cpu,
            machine_cores: s.machine.cores.get(),
            commit: &s.machine.commit,
        }
    }
}

/// The dump a line is about: its label (unique in the folder), its name and checksum.
#[derive(Debug, Default, Serialize)]
struct DumpColumns<'a> {
    dump: &'a str,
    dump_name: &'a str,
    dump_checksum: &'a str,
}

impl<'a> DumpColumns<'a> {
    fn new(labels: &'a DumpLabels, dump_name: &'a str, dump_checksum: &'a str) -> Self {
        Self {
            dump: labels.label(dump_name, dump_checksum),
            dump_name,
            dump_checksum,
        }
    }

    fn of_row(labels: &'a DumpLabels, r: &'a ResultRow) -> Self {
        Self::new(labels, &r.dump, &r.dump_checksum)
    }
}

/// A grid point as the columns [`POINT_COLUMNS`] names.
#[derive(Debug, Default, Serialize)]
struct PointColumns {
    mode: &'static str,
    threads: usize,
    scheduler: &'static str,
    batch: usize,
    recover_senders: bool,
    receipts: bool,
    state: &'static str,
    io: &'static str,
    cache: &'static str,
    bal_design: &'static str,
    state_root: &'static str,
    persist: &'static str,
    claims: &'static str,
}

impl From<&Point> for PointColumns {
    fn from(point: &Point) -> Self {
        let work = point.work();
        let (state, io, cache) = match work.state {
            StateRead::Memory => ("memory", "-", "-"),
            StateRead::Store { read, cache } => ("store", read.io().name(), cache.name()),
        };
        let bal_design = work.state.design().map_or("-", |d| d.name());
        Self {
            mode: point.mode(),
            threads: point.threads(),
            scheduler: scheduler_cell(point),
            batch: point.batch(),
            recover_senders: work.recover_senders,
            receipts: work.receipts,
            state,
            io,
            cache,
            bal_design,
            state_root: work.state_root.name(),
            persist: work.persist.name(),
            claims: match point {
                Point::Sequential(_) => "-",
                Point::Bal(c) => c.claims.name(),
            },
        }
    }
}

/// The figures of a `results.csv` line: how the point was run, the median sample's
/// figures and the range; with the state-root phase on, the median sample's execution,
/// root and overlap times (empty without).
#[derive(Debug, Default, Serialize)]
struct RowFigures {
    warmup: usize,
    repeats: usize,
    verified: bool,
    avg_batch_gas: Fixed<0>,
    mgas_per_s: Fixed<2>,
    mgas_per_s_min: Fixed<2>,
    mgas_per_s_max: Fixed<2>,
    longest_tx_s: Fixed<6>,
    wall_s: Fixed<6>,
    bound_s: Fixed<6>,
    efficiency: Fixed<4>,
    longest_share: Fixed<4>,
    work_s: Fixed<6>,
    utilisation: Fixed<4>,
    speedup_vs_sequential: Option<Fixed<4>>,
    tx_p50_us: Fixed<1>,
    tx_p99_us: Fixed<1>,
    tx_max_us: Fixed<1>,
    passes_min: u32,
    passes_max: u32,
    exec_s: Option<Fixed<6>>,
    root_s: Option<Fixed<6>>,
    overlap_s: Option<Fixed<6>>,
}

impl RowFigures {
    fn of(r: &ResultRow) -> Self {
        let m = &r.summary.median;
        let crate::stats::TxTimes { p50, p99, max } = r.summary.tx_us;
        let (passes_min, passes_max) = r.passes_range();
        let root = |f: fn(&crate::stats::RootFigures) -> f64| m.root.as_ref().map(|x| Fixed(f(x)));
        Self {
            warmup: r.warmup,
            repeats: r.repeats,
            verified: r.verified,
            avg_batch_gas: Fixed(r.avg_batch_gas),
            mgas_per_s: Fixed(r.mgas_per_s()),
            mgas_per_s_min: Fixed(r.summary.min_ggas_per_s * 1e3),
            mgas_per_s_max: Fixed(r.summary.max_ggas_per_s * 1e3),
            longest_tx_s: Fixed(m.longest_tx_s),
            wall_s: Fixed(m.wall_s),
            bound_s: Fixed(m.bound_s),
            efficiency: Fixed(m.efficiency),
            longest_share: Fixed(r.longest_share()),
            work_s: Fixed(m.work_s),
            utilisation: Fixed(m.utilisation),
            speedup_vs_sequential: r.speedup_vs_sequential.map(Fixed),
            tx_p50_us: Fixed(p50),
            tx_p99_us: Fixed(p99),
            tx_max_us: Fixed(max),
            passes_min,
            passes_max,
            exec_s: root(|x| x.exec_s),
            root_s: root(|x| x.root_s),
            overlap_s: root(|x| x.overlap_s),
        }
    }
}

/// The figures of a `totals.csv` line: a point summed over a suite's dumps.
#[derive(Debug, Default, Serialize)]
struct TotalFigures {
    dumps: usize,
    total_gas: u64,
    total_wall_s: Fixed<6>,
    mgas_per_s: Fixed<2>,
    geomean_speedup_vs_sequential: Option<Fixed<4>>,
    verified: bool,
}

impl TotalFigures {
    /// `verified`: whether every row of the total's result set was.
    fn of(t: &SuiteTotal, verified: bool) -> Self {
        Self {
            dumps: t.dumps,
            total_gas: t.total_gas,
            total_wall_s: Fixed(t.total_wall_s),
            mgas_per_s: Fixed(t.mgas_per_s()),
            geomean_speedup_vs_sequential: t.speedup().map(Fixed),
            verified,
        }
    }
}

/// The figures of a `blocks.csv` line: one batch of one sample of a row (a block at batch
/// 1, a mega-block otherwise: `unit`), phase by phase ([`crate::results::BatchFigures`]).
/// `sample` is the sample's index in run order (empty in results that kept the median
/// sample's batches alone), `median_sample` whether it is the median one.
#[derive(Debug, Default, Serialize)]
struct BatchColumns {
    sample: Option<usize>,
    median_sample: bool,
    unit: &'static str,
    batch_index: usize,
    first_block: u32,
    blocks: u32,
    gas: u64,
    read_s: Fixed<6>,
    read_hidden_s: Option<Fixed<6>>,
    read_exposed_s: Option<Fixed<6>>,
    exec_s: Fixed<6>,
    root_s: Fixed<6>,
    root_busy_s: Fixed<6>,
    root_read_s: Fixed<6>,
    root_hash_s: Fixed<6>,
    persist_s: Fixed<6>,
    persist_bytes: u64,
    persist_pages: u64,
    commit_blocks: u32,
    commit_s: Fixed<6>,
    wall_s: Fixed<6>,
    updated_accounts: u64,
    updated_slots: u64,
    root_ns_per_key: Option<Fixed<1>>,
}

impl BatchColumns {
    fn of(
        (sample, median_sample): SampleKey,
        batch_index: usize,
        b: &crate::results::BatchFigures,
    ) -> Self {
        Self {
            sample,
            median_sample,
            unit: if b.blocks > 1 { "mega-block" } else { "block" },
            batch_index,
            first_block: b.first_block,
            blocks: b.blocks,
            gas: b.gas,
            read_s: Fixed(b.read_s),
            read_hidden_s: b.read_exposed_s.map(|e| Fixed((b.read_s - e).max(0.0))),
            read_exposed_s: b.read_exposed_s.map(Fixed),
            exec_s: Fixed(b.exec_s),
            root_s: Fixed(b.root_s),
            root_busy_s: Fixed(b.root_busy_s),
            root_read_s: Fixed(b.root_read_s),
            root_hash_s: Fixed((b.root_busy_s - b.root_read_s - b.persist_s).max(0.0)),
            persist_s: Fixed(b.persist_s),
            persist_bytes: b.persist_bytes,
            persist_pages: b.persist_pages,
            commit_blocks: b.commit_blocks,
            commit_s: Fixed(b.commit_s),
            wall_s: Fixed(b.wall_s),
            updated_accounts: b.updated_accounts,
            updated_slots: b.updated_slots,
            root_ns_per_key: b.root_ns_per_key().map(Fixed),
        }
    }
}

/// `blocks.csv`'s last column, the root units' device reads ([`BatchFigures::root_faults`]),
/// written only where some batch of the file counted them: a folder recorded before keeps
/// its file as it was.
///
/// [`BatchFigures::root_faults`]: crate::results::BatchFigures::root_faults
#[derive(Debug, Default, Serialize)]
struct RootFaultColumns {
    root_faults: Option<Fixed<1>>,
}

/// No column at all (`blocks.csv` without [`RootFaultColumns`]).
#[derive(Debug, Default, Serialize)]
struct NoColumns {}

/// A projection of `simulation.csv`: a virtual point of one dump's simulation (not a
/// measured [`Point`]: the simulator models the replay only, in memory).
#[derive(Debug, Default, Serialize)]
struct ProjectionColumns {
    threads: usize,
    batch: usize,
    scheduler: &'static str,
    makespan_s: Fixed<6>,
    ggas_per_s: Fixed<4>,
    longest_tx_s: Fixed<6>,
    longest_share: Fixed<4>,
    bound_s: Fixed<6>,
    one_item_makespan_s: Option<Fixed<6>>,
}

impl ProjectionColumns {
    fn of(p: &Projection) -> Self {
        Self {
            threads: p.threads,
            batch: p.batch,
            scheduler: p.scheduler.name(),
            makespan_s: Fixed(p.makespan_s),
            ggas_per_s: Fixed(p.ggas_per_s),
            longest_tx_s: Fixed(p.longest_tx_s),
            longest_share: Fixed(p.longest_share),
            bound_s: Fixed(p.bound_s),
            one_item_makespan_s: p.one_item_makespan_s.map(Fixed),
        }
    }
}

/// `rows` as CSV text: a header line of the row type's field names (written even when
/// there is no row), then one line per row, fields quoted only where they must be.
fn csv_text<R: Serialize + Default>(rows: impl IntoIterator<Item = R>) -> String {
    let serialize_all = |rows: &mut dyn Iterator<Item = R>| {
        let mut w = csv::Writer::from_writer(Vec::new());
        for row in rows {
            w.serialize(row)
                .expect("CSV rows are tuples of flat structs of strings and numbers");
        }
        let bytes = w.into_inner().expect("writing to memory does not fail");
        String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
    };
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_some() {
        return serialize_all(&mut rows);
    }
    // serde writes the header with the first row: write a default row, keep its header.
    let text = serialize_all(&mut std::iter::once(R::default()));
    text.split_inclusive('\n')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `results.csv`: one line per measured row (a grid point of a dump: median figures and
/// range), machine columns included so files of several machines concatenate.
pub fn render_csv(sets: &[SweepResults]) -> String {
    let labels: Vec<DumpLabels> = sets.iter().map(DumpLabels::of).collect();
    csv_text(sets.iter().zip(&labels).flat_map(|(s, labels)| {
        let machine = MachineColumns::of(s);
        s.rows.iter().map(move |r| {
            let dump = DumpColumns::of_row(labels, r);
            (
                machine,
                dump,
                PointColumns::from(&r.point),
                RowFigures::of(r),
            )
        })
    }))
}

/// `totals.csv`: one line per suite total (grid point summed over a suite's dumps).
pub fn render_totals_csv(sets: &[SweepResults]) -> String {
    csv_text(sets.iter().flat_map(|s| {
        let machine = MachineColumns::of(s);
        let verified = !any_unverified(std::slice::from_ref(s));
        s.totals.iter().map(move |t| {
            (
                machine,
                PointColumns::from(&t.point),
                TotalFigures::of(t, verified),
            )
        })
    }))
}

/// A sample of `blocks.csv`: its index in run order (`None` where only the median sample's
/// batches were kept), and whether it is the median one.
type SampleKey = (Option<usize>, bool);

/// The batches of a row, sample by sample: every recorded sample's with its index and
/// whether it is the median one, or (results that kept the median sample's alone) the
/// median sample's without an index.
fn samples_of(r: &ResultRow) -> Vec<(SampleKey, &[crate::results::BatchFigures])> {
    if r.sample_batches.is_empty() {
        if r.per_batch.is_empty() {
            return Vec::new();
        }
        return vec![((None, true), r.per_batch.as_slice())];
    }
    let median = r.summary.median_index();
    r.sample_batches
        .iter()
        .enumerate()
        .map(|(k, b)| ((Some(k), Some(k) == median), b.as_slice()))
        .collect()
}

/// `blocks.csv`: one line per batch of every recorded sample of every row that kept its
/// batches (the replay's store and root points): the row's machine, dump and point, then
/// the sample and the batch. A mega-block point's line is its batch's (`unit`).
/// The root units' device reads (`root_faults`) come last, where any batch counted them.
pub fn render_blocks_csv(sets: &[SweepResults]) -> String {
    let counted = sets
        .iter()
        .flat_map(|s| &s.rows)
        .flat_map(samples_of)
        .any(|(_, batches)| batches.iter().any(|b| b.root_faults.is_some()));
    if counted {
        blocks_csv(sets, |b| RootFaultColumns {
            root_faults: b.root_faults.map(Fixed),
        })
    } else {
        blocks_csv(sets, |_| NoColumns {})
    }
}

/// `blocks.csv` with `last(batch)` as each line's last columns.
fn blocks_csv<C: Serialize + Default>(
    sets: &[SweepResults],
    last: fn(&crate::results::BatchFigures) -> C,
) -> String {
    let labels: Vec<DumpLabels> = sets.iter().map(DumpLabels::of).collect();
    csv_text(sets.iter().zip(&labels).flat_map(|(s, labels)| {
        let machine = MachineColumns::of(s);
        s.rows.iter().flat_map(move |r| {
            samples_of(r)
                .into_iter()
                .flat_map(move |(sample, batches)| {
                    batches.iter().enumerate().map(move |(k, b)| {
                        (
                            machine,
                            DumpColumns::of_row(labels, r),
                            PointColumns::from(&r.point),
                            BatchColumns::of(sample, k, b),
                            last(b),
                        )
                    })
                })
        })
    }))
}

/// One figure's distribution in the form `latency.csv` writes it (the mean and its bounds,
/// the P50 and its bounds, the P90, the P99 and the slowest value), `None` where there is
/// none (no interval from one sample, no P90 below its batches).
struct DistributionColumns {
    mean: Fixed<6>,
    mean_lo: Option<Fixed<6>>,
    mean_hi: Option<Fixed<6>>,
    p50: Fixed<6>,
    p50_lo: Option<Fixed<6>>,
    p50_hi: Option<Fixed<6>>,
    p90: Option<Fixed<6>>,
    p99: Option<Fixed<6>>,
    slowest: Fixed<6>,
}

impl DistributionColumns {
    fn of(d: &Distribution) -> Self {
        let lo = |b: Option<Bounds>| b.map(|b| Fixed(b.lo));
        let hi = |b: Option<Bounds>| b.map(|b| Fixed(b.hi));
        Self {
            mean: Fixed(d.mean),
            mean_lo: lo(d.mean_bounds),
            mean_hi: hi(d.mean_bounds),
            p50: Fixed(d.p50),
            p50_lo: lo(d.p50_bounds),
            p50_hi: hi(d.p50_bounds),
            p90: d.p90().map(Fixed),
            p99: d.p99().map(Fixed),
            slowest: Fixed(d.slowest),
        }
    }
}

/// The figures of a `latency.csv` line ([`crate::latency::BlockLatency`]): what a value
/// stands for, how many there are, then wall time (seconds) and GGas/s, each a
/// distribution. The figures' heads are prefixed (`wall_s_mean`, `ggas_per_s_p90`, ...).
#[derive(Debug, Default, Serialize)]
struct LatencyColumns {
    unit: &'static str,
    batches: usize,
    samples: usize,
    every_sample: bool,
    wall_s_mean: Fixed<6>,
    wall_s_mean_lo: Option<Fixed<6>>,
    wall_s_mean_hi: Option<Fixed<6>>,
    wall_s_p50: Fixed<6>,
    wall_s_p50_lo: Option<Fixed<6>>,
    wall_s_p50_hi: Option<Fixed<6>>,
    wall_s_p90: Option<Fixed<6>>,
    wall_s_p99: Option<Fixed<6>>,
    wall_s_max: Fixed<6>,
    ggas_per_s_mean: Fixed<6>,
    ggas_per_s_mean_lo: Option<Fixed<6>>,
    ggas_per_s_mean_hi: Option<Fixed<6>>,
    ggas_per_s_p50: Fixed<6>,
    ggas_per_s_p50_lo: Option<Fixed<6>>,
    ggas_per_s_p50_hi: Option<Fixed<6>>,
    ggas_per_s_p90: Option<Fixed<6>>,
    ggas_per_s_p99: Option<Fixed<6>>,
    ggas_per_s_min: Fixed<6>,
}

impl LatencyColumns {
    fn of(l: &BlockLatency) -> Self {
        let w = DistributionColumns::of(&l.wall_s);
        let g = DistributionColumns::of(&l.ggas_per_s);
        Self {
            unit: l.unit.name(),
            batches: l.batches,
            samples: l.samples,
            every_sample: l.every_sample,
            wall_s_mean: w.mean,
            wall_s_mean_lo: w.mean_lo,
            wall_s_mean_hi: w.mean_hi,
            wall_s_p50: w.p50,
            wall_s_p50_lo: w.p50_lo,
            wall_s_p50_hi: w.p50_hi,
            wall_s_p90: w.p90,
            wall_s_p99: w.p99,
            wall_s_max: w.slowest,
            ggas_per_s_mean: g.mean,
            ggas_per_s_mean_lo: g.mean_lo,
            ggas_per_s_mean_hi: g.mean_hi,
            ggas_per_s_p50: g.p50,
            ggas_per_s_p50_lo: g.p50_lo,
            ggas_per_s_p50_hi: g.p50_hi,
            ggas_per_s_p90: g.p90,
            ggas_per_s_p99: g.p99,
            ggas_per_s_min: g.slowest,
        }
    }
}

/// `latency.csv`: one line per row that kept its batches, its per-block latency
/// ([`crate::latency`]): the row's machine, dump and point, then the figures.
pub fn render_latency_csv(sets: &[SweepResults]) -> String {
    let labels: Vec<DumpLabels> = sets.iter().map(DumpLabels::of).collect();
    csv_text(sets.iter().zip(&labels).flat_map(|(s, labels)| {
        let machine = MachineColumns::of(s);
        s.rows.iter().filter_map(move |r| {
            let l = crate::latency::block_latency(r)?;
            Some((
                machine,
                DumpColumns::of_row(labels, r),
                PointColumns::from(&r.point),
                LatencyColumns::of(&l),
            ))
        })
    }))
}

/// `simulation.csv`: one line per projection, with the machine the profile came from.
pub fn render_simulation_csv(sets: &[SweepResults]) -> String {
    let labels: Vec<DumpLabels> = sets.iter().map(DumpLabels::of).collect();
    csv_text(sets.iter().zip(&labels).flat_map(|(s, labels)| {
        let machine = MachineColumns::of(s);
        s.simulations.iter().flat_map(move |sim| {
            let dump = move || DumpColumns::new(labels, &sim.dump, &sim.dump_checksum);
            sim.projections
                .iter()
                .map(move |p| (machine, dump(), ProjectionColumns::of(p)))
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;
    use gigagas_grid::{
        BalDesign, CacheState, IoMode, RunConfig, SchedulerKind, StateRootPhase, StoreRead,
        TimedWork,
    };

    /// The heads of every CSV file: the machine, what the line is about (with every
    /// dimension of the point), then the figures.
    #[test]
    fn csv_headers_name_every_dimension() {
        let header = |text: String| text.lines().next().unwrap().to_string();
        let point = POINT_COLUMNS.join(",");
        assert_eq!(
            point,
            "mode,threads,scheduler,batch,recover_senders,receipts,state,io,cache,bal_design,\
             state_root,persist,claims"
        );
        let results = format!(
            "machine_cpu,machine_cores,commit,dump,dump_name,dump_checksum,{point},warmup,repeats,verified,\
             avg_batch_gas,mgas_per_s,mgas_per_s_min,mgas_per_s_max,longest_tx_s,wall_s,bound_s,\
             efficiency,longest_share,work_s,utilisation,speedup_vs_sequential,tx_p50_us,tx_p99_us,\
             tx_max_us,passes_min,passes_max,exec_s,root_s,overlap_s"
        );
        let totals = format!(
            "machine_cpu,machine_cores,commit,{point},dumps,total_gas,total_wall_s,mgas_per_s,\
             geomean_speedup_vs_sequential,verified"
        );
        let simulation = "machine_cpu,machine_cores,commit,dump,dump_name,dump_checksum,threads,batch,\
             scheduler,makespan_s,ggas_per_s,longest_tx_s,longest_share,bound_s,one_item_makespan_s";
        let blocks = format!(
            "machine_cpu,machine_cores,commit,dump,dump_name,dump_checksum,{point},sample,\
             median_sample,unit,batch_index,first_block,blocks,gas,read_s,read_hidden_s,read_exposed_s,exec_s,root_s,root_busy_s,\
             root_read_s,root_hash_s,persist_s,persist_bytes,persist_pages,commit_blocks,commit_s,wall_s,updated_accounts,\
             updated_slots,root_ns_per_key"
        );
        let latency = format!(
            "machine_cpu,machine_cores,commit,dump,dump_name,dump_checksum,{point},unit,batches,\
             samples,every_sample,wall_s_mean,wall_s_mean_lo,wall_s_mean_hi,wall_s_p50,wall_s_p50_lo,\
             wall_s_p50_hi,wall_s_p90,wall_s_p99,wall_s_max,ggas_per_s_mean,ggas_per_s_mean_lo,\
             ggas_per_s_mean_hi,ggas_per_s_p50,ggas_per_s_p50_lo,ggas_per_s_p50_hi,ggas_per_s_p90,\
             ggas_per_s_p99,ggas_per_s_min"
        );
        assert_eq!(render_blocks_csv(&[]), format!("{blocks}\n"));
        assert_eq!(render_latency_csv(&[]), format!("{latency}\n"));
        let s = sample("CPU");
        assert_eq!(header(render_csv(std::slice::from_ref(&s))), results);
        // No line (no totals, no simulation, no set at all): the header alone.
        assert_eq!(
            render_totals_csv(std::slice::from_ref(&s)),
            format!("{totals}\n")
        );
        assert_eq!(render_simulation_csv(&[]), format!("{simulation}\n"));
        assert_eq!(render_csv(&[]), format!("{results}\n"));
    }

    /// Rows that differ only in how they read the state (what the 16-core I/O folder's
    /// rows did before these columns) are told apart by their point columns, in both
    /// files.
    #[test]
    fn points_that_differ_in_any_dimension_differ_in_their_columns() {
        let mut s = sample("CPU");
        let base = RunConfig::new(
            std::num::NonZeroUsize::new(16).unwrap(),
            42,
            SchedulerKind::Ols,
        );
        let template = s.rows[1].clone();
        s.rows.clear();
        let mut works = vec![TimedWork::default()];
        for io in IoMode::ALL {
            for cache in CacheState::ALL {
                for read in StoreRead::each(io, &BalDesign::ALL) {
                    let state = StateRead::store(read, cache);
                    if !works.iter().any(|w| w.state == state) {
                        works.push(TimedWork {
                            state,
                            ..TimedWork::default()
                        });
                    }
                }
            }
        }
        works.push(TimedWork {
            receipts: true,
            ..TimedWork::default()
        });
        for state_root in [StateRootPhase::After, StateRootPhase::Overlapped] {
            works.push(TimedWork {
                state_root,
                ..TimedWork::default()
            });
        }
        for work in &works {
            let mut row = template.clone();
            row.point = Point::Bal(base.with_work(*work));
            s.rows.push(row);
        }
        s.totals = crate::results::suite_totals(&s.rows);
        for text in [
            render_csv(std::slice::from_ref(&s)),
            render_totals_csv(std::slice::from_ref(&s)),
        ] {
            let mut reader = csv::Reader::from_reader(text.as_bytes());
            let head = reader.headers().unwrap().clone();
            let at: Vec<usize> = POINT_COLUMNS
                .iter()
                .map(|c| head.iter().position(|h| h == *c).unwrap())
                .collect();
            let mut keys: Vec<Vec<String>> = reader
                .records()
                .map(|r| {
                    let r = r.unwrap();
                    at.iter().map(|&i| r[i].to_string()).collect()
                })
                .collect();
            assert_eq!(keys.len(), works.len(), "{text}");
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), works.len(), "{text}");
        }
        let csv = render_csv(std::slice::from_ref(&s));
        assert!(csv.contains(",16,ols,42,false,false,memory,-,-,"), "{csv}");
        assert!(
            csv.contains(",16,ols,42,false,false,store,pipelined,cold,"),
            "{csv}"
        );
        assert!(
            csv.contains(",16,ols,42,false,true,memory,-,-,-,off,"),
            "{csv}"
        );
        assert!(
            csv.contains(",16,ols,42,false,false,memory,-,-,-,overlapped,"),
            "{csv}"
        );
    }

    /// results.csv read back with a CSV reader gives the rows' own values, a machine name
    /// with a comma, quotes and a newline included.
    #[test]
    fn results_csv_round_trips() {
        let mut s = sample("CPU \"X\", 2 GHz\nrev 2");
        s.rows[0].speedup_vs_sequential = None;
        s.rows[1].speedup_vs_sequential = Some(1.23456);
        let text = render_csv(std::slice::from_ref(&s));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let head = reader.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), s.rows.len());
        for (rec, r) in records.iter().zip(&s.rows) {
            assert_eq!(&rec[col("machine_cpu")], s.machine.cpu);
            assert_eq!(&rec[col("dump")], r.dump);
            assert_eq!(&rec[col("mode")], r.point.mode());
            let threads = rec[col("threads")].parse::<usize>().unwrap();
            assert_eq!(threads, r.point.threads());
            assert_eq!(&rec[col("scheduler")], scheduler_cell(&r.point));
            assert_eq!(rec[col("batch")].parse::<usize>().unwrap(), r.point.batch());
            assert_eq!(&rec[col("state")], "memory");
            assert_eq!(rec[col("verified")].parse::<bool>().unwrap(), r.verified);
            let mgas: f64 = rec[col("mgas_per_s")].parse().unwrap();
            assert!((mgas - r.mgas_per_s()).abs() <= 0.005, "{mgas}");
            assert_eq!(&rec[col("mgas_per_s")], format!("{:.2}", r.mgas_per_s()));
            let speedup = &rec[col("speedup_vs_sequential")];
            match r.speedup_vs_sequential {
                Some(x) => assert_eq!(speedup, format!("{x:.4}")),
                None => assert_eq!(speedup, ""),
            }
            let (lo, hi) = r.passes_range();
            assert_eq!(rec[col("passes_min")].parse::<u32>().unwrap(), lo);
            assert_eq!(rec[col("passes_max")].parse::<u32>().unwrap(), hi);
            assert_eq!(&rec[col("state_root")], "off");
            for c in ["exec_s", "root_s", "overlap_s"] {
                assert_eq!(&rec[col(c)], "", "no root: {c} is empty");
            }
        }
    }

    /// A row with root figures writes its phase and the median sample's execution, root
    /// and overlap times.
    /// `blocks.csv`: a line per batch of the rows that kept them, keyed by the row's machine,
    /// dump and point and the batch's index (a header only without any).
    #[test]
    fn a_row_with_batches_writes_a_line_per_batch() {
        let mut s = sample("CPU");
        assert_eq!(
            render_blocks_csv(std::slice::from_ref(&s)).lines().count(),
            1
        );
        let batch = |first_block| crate::results::BatchFigures {
            first_block,
            blocks: 1,
            gas: 30_000_000,
            read_s: 0.001,
            read_exposed_s: Some(0.0),
            exec_s: 0.02,
            root_s: 0.005,
            root_busy_s: 0.006,
            root_read_s: 0.0,
            root_faults: None,
            persist_s: 0.0,
            persist_bytes: 0,
            persist_pages: 0,
            commit_blocks: 0,
            commit_s: 0.0,
            wall_s: 0.026,
            updated_accounts: 100,
            updated_slots: 400,
        };
        s.rows[2].per_batch = vec![batch(0), batch(1)];
        // Results that kept the median sample's batches alone: its lines, no sample index.
        let text = render_blocks_csv(std::slice::from_ref(&s));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let head = reader.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), 2);
        for (k, r) in records.iter().enumerate() {
            assert_eq!(&r[col("dump")], "mainnet-like");
            assert_eq!(&r[col("threads")], s.rows[2].point.threads().to_string());
            assert_eq!(&r[col("batch_index")], k.to_string());
            assert_eq!(&r[col("first_block")], k.to_string());
            assert_eq!(&r[col("wall_s")], "0.026000");
            assert_eq!(&r[col("updated_slots")], "400");
            assert_eq!(&r[col("root_ns_per_key")], "10000.0");
            assert_eq!((&r[col("sample")], &r[col("median_sample")]), ("", "true"));
            assert_eq!(&r[col("unit")], "block");
        }
        // Every sample recorded: a line per batch of each, the median one marked, and the
        // key (dump, point, sample, batch) unique.
        let median = s.rows[2].summary.median_index().unwrap();
        s.rows[2].sample_batches = vec![vec![batch(0), batch(1)]; 3];
        let text = render_blocks_csv(std::slice::from_ref(&s));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), 6);
        let mut keys: Vec<(String, String)> = Vec::new();
        for r in &records {
            let sample: usize = r[col("sample")].parse().unwrap();
            assert_eq!(&r[col("median_sample")], (sample == median).to_string());
            keys.push((r[col("sample")].into(), r[col("batch_index")].into()));
        }
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 6);
        // latency.csv: one line for the row, its figures.
        let text = render_latency_csv(std::slice::from_ref(&s));
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains(",block,2,3,true,0.026000,"), "{text}");
    }

    /// `blocks.csv` ends with `root_faults` where a batch counted the root's device reads,
    /// blank for a batch that did not; without any, the file has no such column.
    #[test]
    fn root_faults_are_a_column_only_where_counted() {
        let mut s = sample("CPU");
        let batch = |root_faults| crate::results::BatchFigures {
            blocks: 1,
            root_faults,
            ..Default::default()
        };
        s.rows[2].per_batch = vec![batch(None), batch(None)];
        let before = render_blocks_csv(std::slice::from_ref(&s));
        assert!(!before.contains("root_faults"), "{before}");
        s.rows[2].per_batch[1] = batch(Some(12.0));
        let text = render_blocks_csv(std::slice::from_ref(&s));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with(",root_ns_per_key,root_faults"), "{text}");
        assert!(lines[1].ends_with(','), "{text}");
        assert!(lines[2].ends_with(",12.0"), "{text}");
        // Every line is the one without the column, with the column's cell added.
        for (with, without) in lines.iter().zip(before.lines()).skip(1) {
            assert!(with.starts_with(&format!("{without},")), "{with}");
        }
    }

    #[test]
    fn a_root_row_writes_its_root_figures() {
        let mut s = sample("CPU");
        s.rows.truncate(2);
        let row = &mut s.rows[1];
        let Point::Bal(mut config) = row.point else {
            panic!("row 1 is a replay row")
        };
        config.work.state_root = StateRootPhase::After;
        row.point = Point::Bal(config);
        row.summary.median.root = Some(crate::stats::RootFigures {
            exec_s: 0.25,
            root_s: 0.125,
            root_busy_s: 0.2,
            overlap_s: 0.0,
            blocks: 3,
            nodes_read: 0,
            nodes_held: 0,
            read_s: 0.0,
            ..Default::default()
        });
        let text = render_csv(std::slice::from_ref(&s));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let head = reader.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(&records[0][col("state_root")], "off");
        assert_eq!(&records[0][col("exec_s")], "");
        assert_eq!(&records[1][col("state_root")], "after");
        assert_eq!(&records[1][col("exec_s")], "0.250000");
        assert_eq!(&records[1][col("root_s")], "0.125000");
        assert_eq!(&records[1][col("overlap_s")], "0.000000");
    }
}
