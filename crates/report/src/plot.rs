//! SVG plots (plotters, SVG backend only): throughput against threads with the ideal
//! linear line and the critical-path bound, throughput against batch size, the
//! longest-transaction share of total time, and the simulator's projection.
//!
//! Every plot has a title, labelled axes and a legend. With several result sets
//! (machines) merged, series labels start with the machine tag (`M1`, `M2`, ...).

pub use crate::error::PlotError;
use crate::{
    results::{ResultRow, SweepResults},
    table::{distinct, escape::xml_safe, machine_tag},
};
use gigagas_grid::SchedulerKind;
use plotters::prelude::*;

/// One rendered plot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotFile {
    /// File name, e.g. `ggas-vs-threads-batch50.svg`.
    pub name: String,
    /// The SVG document.
    pub svg: String,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Solid line with point markers: measured or projected values.
    Measured,
    /// Dashed: the ideal linear scaling.
    Ideal,
    /// Short dashes: the critical-path bound.
    Bound,
    /// Markers only.
    Points,
}

/// A named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points, sorted by x.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub kind: LineKind,
    /// Colour index into the palette.
    pub color: usize,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// X-axis label.
    pub x_desc: String,
    /// Y-axis label.
    pub y_desc: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Largest y value to show (else 105 % of the largest value); the axis extends
    /// above it to make room for the legend.
    pub y_max: Option<f64>,
    /// The series.
    pub series: Vec<Series>,
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The largest magnitude drawn on an axis. Values beyond it (or not finite: a hand-edited
/// or corrupted results.json) are left out of the chart, as the axis range and its ticks
/// would overflow (plotters then never finishes laying out the mesh).
pub const MAX_PLOTTED: f64 = 1e15;

fn plottable(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0.abs() <= MAX_PLOTTED && p.1.abs() <= MAX_PLOTTED
}

fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

macro_rules! draw_chart {
    ($root:expr, $chart:expr, $x_spec:expr, $y_max:expr) => {{
        let chart: &Chart = $chart;
        let mut ctx = ChartBuilder::on($root)
            .caption(xml_safe(&chart.title), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d($x_spec, 0f64..$y_max)
            .map_err(|e| PlotError(e.to_string()))?;
        ctx.configure_mesh()
            .x_desc(xml_safe(&chart.x_desc))
            .y_desc(xml_safe(&chart.y_desc))
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| {
                if $y_max > 20.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.2}")
                }
            })
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;
        for s in &chart.series {
            let color = PALETTE[s.color % PALETTE.len()];
            let pts = s.points.clone();
            let label = xml_safe(&s.label);
            match s.kind {
                LineKind::Measured => {
                    ctx.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                        .map_err(|e| PlotError(e.to_string()))?
                        .label(label)
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                    ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|e| PlotError(e.to_string()))?;
                }
                LineKind::Ideal | LineKind::Bound => {
                    let (dash, gap, width) = if s.kind == LineKind::Ideal {
                        (8, 5, 1)
                    } else {
                        (3, 3, 2)
                    };
                    ctx.draw_series(DashedLineSeries::new(
                        pts,
                        dash,
                        gap,
                        color.stroke_width(width),
                    ))
                    .map_err(|e| PlotError(e.to_string()))?
                    .label(label)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
                    });
                }
                LineKind::Points => {
                    ctx.draw_series(PointSeries::of_element(
                        pts,
                        5,
                        color.stroke_width(2),
                        &|c, s, st| EmptyElement::at(c) + Cross::new((0, 0), s, st),
                    ))
                    .map_err(|e| PlotError(e.to_string()))?
                    .label(label)
                    .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
                }
            }
        }
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| PlotError(e.to_string()))?;
    }};
}

/// Render a chart as an SVG document (900 × 560).
pub fn render_svg(chart: &Chart) -> Result<String, PlotError> {
    let dropped: usize = chart
        .series
        .iter()
        .map(|s| s.points.iter().filter(|p| !plottable(p)).count())
        .sum();
    if dropped > 0 {
        let mut clean = chart.clone();
        for s in &mut clean.series {
            s.points.retain(plottable);
        }
        clean.y_max = clean
            .y_max
            .filter(|y| y.is_finite() && y.abs() <= MAX_PLOTTED);
        clean.title = format!(
            "{} ({dropped} point(s) out of range not drawn)",
            clean.title
        );
        return render_svg(&clean);
    }
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    if xs.is_empty() {
        (x0, x1) = (1.0, 2.0);
    }
    // Leave room above the data for the legend (upper left): ~22 px per entry of a
    // ~450 px high plot area.
    let legend = (chart.series.len() as f64 * 22.0 + 16.0) / 450.0;
    let data_max = chart
        .y_max
        .filter(|y| y.is_finite() && y.abs() <= MAX_PLOTTED)
        .unwrap_or_else(|| ys.fold(0f64, f64::max) * 1.05);
    let y_max = (data_max / (1.0 - legend.min(0.6))).max(1e-6);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| PlotError(e.to_string()))?;
        if chart.log_x {
            let (lo, hi) = (x0.max(1e-3) / 1.3, x1.max(1e-3) * 1.3);
            draw_chart!(&root, chart, (lo..hi).log_scale(), y_max);
        } else {
            let pad = ((x1 - x0) * 0.05).max(0.25);
            draw_chart!(&root, chart, (x0 - pad)..(x1 + pad), y_max);
        }
        root.present().map_err(|e| PlotError(e.to_string()))?;
    }
    Ok(svg)
}

fn sorted_distinct<T: PartialEq + PartialOrd>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = distinct(it);
    v.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    v
}

fn parallel_rows(set: &SweepResults) -> impl Iterator<Item = &ResultRow> {
    set.rows.iter().filter(|r| !r.point.is_sequential())
}

/// A group of rows drawn together: (the dump's label, sender recovery), and the dumps (name,
/// checksum) under that label.
type GroupKey = ((String, bool), Vec<(String, String)>);

/// Groups of rows drawn together: same dump (by its label) and sender recovery, with the
/// dumps (name, checksum) that label stands for over every set.
fn groups(sets: &[SweepResults]) -> Vec<GroupKey> {
    let mut g: Vec<GroupKey> = Vec::new();
    for s in sets {
        let labels = crate::results::DumpLabels::of(s);
        for r in parallel_rows(s) {
            let key = (labels.of_row(r).to_string(), r.point.work().recover_senders);
            let dump = (r.dump.clone(), r.dump_checksum.clone());
            match g.iter_mut().find(|(k, _)| *k == key) {
                Some((_, dumps)) => {
                    if !dumps.contains(&dump) {
                        dumps.push(dump);
                    }
                }
                None => g.push((key, vec![dump])),
            }
        }
    }
    g
}

fn suffix(dump: &str, recover: bool, many_dumps: bool) -> String {
    let mut s = String::new();
    if many_dumps {
        s.push('-');
        s.push_str(&dump.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"));
    }
    if recover {
        s.push_str("-senders");
    }
    s
}

fn title_tail(dump: &str, recover: bool) -> String {
    format!("{dump}{}", if recover { ", senders recovered" } else { "" })
}

fn prefix(merged: bool, i: usize) -> String {
    if merged {
        format!("{} ", machine_tag(i))
    } else {
        String::new()
    }
}

/// The parallel rows drawn together: one dump and sender-recovery setting, over every
/// result set (machine).
struct Group {
    /// The dump's label.
    dump: String,
    /// The dumps (name, checksum) shown under that label.
    members: Vec<(String, String)>,
    recover: bool,
    /// Thread counts and batch sizes present, ascending.
    threads: Vec<usize>,
    batches: Vec<usize>,
    /// File-name suffix (the dump when there are several, `-senders`).
    suffix: String,
    /// Several result sets: series labels start with the machine tag.
    merged: bool,
}

impl Group {
    fn contains(&self, r: &&ResultRow) -> bool {
        self.members
            .iter()
            .any(|(name, checksum)| r.dump == *name && r.dump_checksum == *checksum)
            && r.point.work().recover_senders == self.recover
    }
}

/// More dumps than this (a suite) get no per-dump plots: `table.md`'s per-dump table and
/// the suite totals show them instead.
pub const MAX_DUMPS_PLOTTED: usize = 4;

/// Every plot the results support (a plot needs at least two x values): per dump and
/// sender recovery, throughput against threads and against batch size and the
/// longest-transaction share; per simulation, the projection.
pub fn render_plots(sets: &[SweepResults]) -> Result<Vec<PlotFile>, PlotError> {
    let mut charts: Vec<(String, Chart)> = Vec::new();
    let all_groups = groups(sets);
    let dumps = distinct_dumps(&all_groups);
    let many_dumps = dumps > 1;
    if dumps <= MAX_DUMPS_PLOTTED {
        for ((dump, recover), members) in all_groups {
            let mut g = Group {
                threads: Vec::new(),
                batches: Vec::new(),
                suffix: suffix(&dump, recover, many_dumps),
                merged: sets.len() > 1,
                dump,
                members,
                recover,
            };
            let rows = || {
                sets.iter()
                    .flat_map(parallel_rows)
                    .filter(|r| g.contains(r))
            };
            let threads = sorted_distinct(rows().map(|r| r.point.threads()));
            let batches = sorted_distinct(rows().map(|r| r.point.batch()));
            (g.threads, g.batches) = (threads, batches);
            charts.extend(threads_charts(sets, &g));
            charts.extend(batch_charts(sets, &g));
            charts.extend(longest_share_chart(sets, &g));
        }
    }
    charts.extend(simulation_charts(sets, many_dumps));
    if crate::table::any_unverified(sets) {
        for (_, chart) in &mut charts {
            chart.title = format!("UNVERIFIED (--no-verify): {}", chart.title);
        }
    }
    let mut plots = charts
        .into_iter()
        .map(|(name, chart)| render_svg(&chart).map(|svg| PlotFile { name, svg }))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, set) in sets.iter().enumerate() {
        if let Some(timeline) = &set.timeline {
            let mut timeline = timeline.clone();
            if crate::table::any_unverified(std::slice::from_ref(set)) {
                timeline.dump = format!("UNVERIFIED (--no-verify): {}", timeline.dump);
            }
            let svg = timeline.render_svg()?;
            let name = if sets.len() > 1 {
                format!("timeline-{}.svg", machine_tag(i))
            } else {
                "timeline.svg".to_string()
            };
            plots.push(PlotFile { name, svg });
        }
    }
    Ok(plots)
}

fn distinct_dumps(groups: &[GroupKey]) -> usize {
    let mut names: Vec<&str> = groups.iter().map(|g| g.0.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// The grid dimension a chart draws along its x axis; the other one is held fixed per
/// series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XAxis {
    /// Worker threads, linear.
    Threads,
    /// Batch size, logarithmic.
    Batch,
}

impl XAxis {
    /// The row's value along this axis.
    fn of(self, r: &ResultRow) -> usize {
        match self {
            XAxis::Threads => r.point.threads(),
            XAxis::Batch => r.point.batch(),
        }
    }

    /// The dimension held fixed along a series.
    fn other(self) -> XAxis {
        match self {
            XAxis::Threads => XAxis::Batch,
            XAxis::Batch => XAxis::Threads,
        }
    }

    /// The values present in the group, ascending.
    fn values(self, g: &Group) -> &[usize] {
        match self {
            XAxis::Threads => &g.threads,
            XAxis::Batch => &g.batches,
        }
    }

    /// The axis label.
    fn desc(self) -> &'static str {
        match self {
            XAxis::Threads => "threads",
            XAxis::Batch => "batch size (blocks per mega-block)",
        }
    }

    /// A series' fixed value in words: `batch 50`, `4 threads`.
    fn fixed_at(self, v: usize) -> String {
        match self {
            XAxis::Threads => format!("{v} threads"),
            XAxis::Batch => format!("batch {v}"),
        }
    }
}

impl Group {
    /// A chart of this group: the file `<stem><suffix>.svg`, titled `<title> (<dump>)`,
    /// GGas/s or `y_desc` against `x`.
    fn chart(
        &self,
        stem: String,
        title: String,
        x: XAxis,
        y_desc: &str,
        y_max: Option<f64>,
        series: Vec<Series>,
    ) -> (String, Chart) {
        (
            format!("{stem}{}.svg", self.suffix),
            Chart {
                title: format!("{title} ({})", title_tail(&self.dump, self.recover)),
                x_desc: x.desc().into(),
                y_desc: y_desc.into(),
                log_x: x == XAxis::Batch,
                y_max,
                series,
            },
        )
    }

    /// The group's parallel rows of one result set where the dimension other than `x`
    /// equals `at` (and the scheduler is `scheduler`, when given).
    fn rows_at<'a>(
        &'a self,
        set: &'a SweepResults,
        x: XAxis,
        at: usize,
        scheduler: Option<SchedulerKind>,
    ) -> impl Iterator<Item = &'a ResultRow> + 'a {
        parallel_rows(set)
            .filter(|r| self.contains(r))
            .filter(move |r| {
                x.other().of(r) == at && scheduler.is_none_or(|s| r.point.scheduler() == Some(s))
            })
    }

    /// One measured series of one result set and scheduler: `y` of each row against `x`,
    /// the other dimension at `at`, sorted by x.
    fn points(
        &self,
        set: &SweepResults,
        x: XAxis,
        at: usize,
        scheduler: SchedulerKind,
        y: impl Fn(&ResultRow) -> f64,
    ) -> Vec<(f64, f64)> {
        let mut p: Vec<(f64, f64)> = self
            .rows_at(set, x, at, Some(scheduler))
            .map(|r| (x.of(r) as f64, y(r)))
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    }

    /// Measured GGas/s against `x`, one series per scheduler of result set `i`, the other
    /// dimension at `at`.
    fn throughput_series(&self, set: &SweepResults, i: usize, x: XAxis, at: usize) -> Vec<Series> {
        SchedulerKind::ALL
            .into_iter()
            .enumerate()
            .filter_map(|(k, s)| {
                let points = self.points(set, x, at, s, |r| r.summary.median.ggas_per_s);
                (!points.is_empty()).then(|| Series {
                    label: format!("{}{s}", prefix(self.merged, i)),
                    points,
                    kind: LineKind::Measured,
                    color: i * 3 + k,
                })
            })
            .collect()
    }
}

/// GGas/s against threads, one chart per batch size, with the ideal linear line and the
/// critical-path bound.
fn threads_charts(sets: &[SweepResults], g: &Group) -> Vec<(String, Chart)> {
    if g.threads.len() < 2 {
        return Vec::new();
    }
    let x = XAxis::Threads;
    let mut charts = Vec::new();
    for &b in &g.batches {
        let mut series = Vec::new();
        for (i, set) in sets.iter().enumerate() {
            let here: Vec<&ResultRow> = g.rows_at(set, x, b, None).collect();
            if here.is_empty() {
                continue;
            }
            series.extend(g.throughput_series(set, i, x, b));
            // The best scheduler's figure at each thread count.
            let best = |t: usize, y: fn(&ResultRow) -> f64| {
                here.iter()
                    .filter(|r| r.point.threads() == t)
                    .map(|r| y(r))
                    .fold(0.0, f64::max)
            };
            let ts = sorted_distinct(here.iter().map(|r| r.point.threads()));
            let t0 = ts[0];
            let g0 = best(t0, |r| r.summary.median.ggas_per_s);
            series.push(Series {
                label: format!("{}ideal linear", prefix(g.merged, i)),
                points: ts
                    .iter()
                    .map(|&t| (t as f64, g0 * t as f64 / t0 as f64))
                    .collect(),
                kind: LineKind::Ideal,
                color: 7 + i,
            });
            series.push(Series {
                label: format!("{}critical-path bound", prefix(g.merged, i)),
                points: ts
                    .iter()
                    .map(|&t| (t as f64, best(t, ResultRow::bound_ggas_per_s)))
                    .collect(),
                kind: LineKind::Bound,
                color: 3 + 3 * i,
            });
        }
        charts.push(g.chart(
            format!("ggas-vs-threads-batch{b}"),
            format!("Throughput vs threads, batch {b}"),
            x,
            "GGas/s",
            None,
            series,
        ));
    }
    charts
}

/// GGas/s against batch size, one chart per thread count.
fn batch_charts(sets: &[SweepResults], g: &Group) -> Vec<(String, Chart)> {
    if g.batches.len() < 2 {
        return Vec::new();
    }
    let x = XAxis::Batch;
    g.threads
        .iter()
        .map(|&t| {
            let series = sets
                .iter()
                .enumerate()
                .flat_map(|(i, set)| g.throughput_series(set, i, x, t))
                .collect();
            g.chart(
                format!("ggas-vs-batch-threads{t}"),
                format!("Throughput vs batch size, {t} threads"),
                x,
                "GGas/s",
                None,
                series,
            )
        })
        .collect()
}

/// The longest-transaction share of total time: against threads if several, else
/// against batch size.
fn longest_share_chart(sets: &[SweepResults], g: &Group) -> Option<(String, Chart)> {
    let x = if g.threads.len() > 1 {
        XAxis::Threads
    } else {
        XAxis::Batch
    };
    if x.values(g).len() < 2 {
        return None;
    }
    let mut series = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        for s in SchedulerKind::ALL {
            for &o in x.other().values(g) {
                let points = g.points(set, x, o, s, |r| r.longest_share() * 100.0);
                if points.is_empty() {
                    continue;
                }
                series.push(Series {
                    label: format!("{}{s}, {}", prefix(g.merged, i), x.other().fixed_at(o)),
                    points,
                    kind: LineKind::Measured,
                    color: series.len(),
                });
            }
        }
    }
    Some(g.chart(
        "longest-tx-share".into(),
        "Longest-transaction latency as a share of total time".into(),
        x,
        "longest tx / total (%)",
        Some(100.0),
        series,
    ))
}

/// One chart per simulation: projected GGas/s against virtual threads, with the measured
/// validation runs.
fn simulation_charts(sets: &[SweepResults], many_dumps: bool) -> Vec<(String, Chart)> {
    let merged = sets.len() > 1;
    let mut charts = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let labels = crate::results::DumpLabels::of(set);
        for sim in &set.simulations {
            let dump = labels.label(&sim.dump, &sim.dump_checksum);
            let mut series = Vec::new();
            let keys = distinct(sim.projections.iter().map(|p| (p.batch, p.scheduler)));
            for (k, &(b, s)) in keys.iter().enumerate() {
                let mut pts: Vec<(f64, f64)> = sim
                    .projections
                    .iter()
                    .filter(|p| p.batch == b && p.scheduler == s)
                    .map(|p| (p.threads as f64, p.ggas_per_s))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                series.push(Series {
                    label: format!("projected: batch {b}, {s}"),
                    points: pts,
                    kind: LineKind::Measured,
                    color: k,
                });
            }
            let measured: Vec<(f64, f64)> = sim
                .validations
                .iter()
                .map(|v| {
                    (
                        v.threads.get() as f64,
                        sim.total_gas as f64 / 1e9 / v.measured_s.max(f64::MIN_POSITIVE),
                    )
                })
                .collect();
            if !measured.is_empty() {
                series.push(Series {
                    label: "measured (validation runs)".into(),
                    points: measured,
                    kind: LineKind::Points,
                    color: 9,
                });
            }
            let tag = if merged {
                format!("-m{}", i + 1)
            } else {
                String::new()
            };
            let dump_sfx = if many_dumps || set.simulations.len() > 1 {
                suffix(dump, false, true)
            } else {
                String::new()
            };
            charts.push((
                format!("simulated-ggas-vs-threads{dump_sfx}{tag}.svg"),
                Chart {
                    title: format!(
                        "Schedule simulator: projected throughput ({}{})",
                        dump,
                        if merged {
                            format!(", {}", machine_tag(i))
                        } else {
                            String::new()
                        }
                    ),
                    x_desc: "virtual threads".into(),
                    y_desc: "projected GGas/s".into(),
                    log_x: true,
                    y_max: None,
                    series,
                },
            ));
        }
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::sample;

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        doc.descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .map(|t| t.trim().to_string())
            .collect()
    }

    /// The SVG of the plot named `name`.
    fn svg_named<'a>(plots: &'a [PlotFile], name: &str) -> &'a str {
        &plots
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no plot {name}"))
            .svg
    }

    /// A results.json with absurd or non-finite figures renders in bounded time (it used to
    /// spin forever laying out an axis that overflowed), leaving those points out.
    #[test]
    fn absurd_values_do_not_hang_plotting() {
        let mut s = sample("CPU");
        for (i, r) in s.rows.iter_mut().enumerate() {
            let v = [1.5e308, f64::INFINITY, f64::NAN, 1e300][i % 4];
            r.summary.median.ggas_per_s = v;
            r.summary.median.wall_s = v;
            r.summary.median.bound_s = v;
            r.summary.median.longest_tx_s = v;
            r.summary.max_ggas_per_s = v;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(render_plots(&[s]).map(|p| p.len()));
        });
        let rendered = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("plotting absurd values did not finish within 60 s");
        assert!(rendered.unwrap() > 0);
        let chart = Chart {
            title: "t".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            log_x: false,
            y_max: Some(f64::INFINITY),
            series: vec![Series {
                label: "s".into(),
                points: vec![(1.0, 1.0), (2.0, 1.5e308), (f64::NAN, 1.0)],
                kind: LineKind::Measured,
                color: 0,
            }],
        };
        let svg = render_svg(&chart).unwrap();
        assert!(
            texts(&svg)
                .iter()
                .any(|t| t.contains("2 point(s) out of range not drawn")),
            "{svg}"
        );
    }

    #[test]
    fn unverified_plots_say_so_in_the_title() {
        let mut s = sample("CPU");
        for r in &mut s.rows {
            r.verified = false;
        }
        let plots = render_plots(&[s]).unwrap();
        assert!(!plots.is_empty());
        for p in &plots {
            assert!(
                texts(&p.svg).iter().any(|t| t.contains("UNVERIFIED")),
                "{}",
                p.name
            );
        }
        for p in render_plots(&[sample("CPU")]).unwrap() {
            assert!(!p.svg.contains("UNVERIFIED"), "{}", p.name);
        }
    }

    #[test]
    fn plots_are_valid_svg_with_axes_and_legend() {
        let plots = render_plots(&[sample("CPU")]).unwrap();
        let names: Vec<&str> = plots.iter().map(|p| p.name.as_str()).collect();
        assert!(names.contains(&"ggas-vs-threads-batch1.svg"), "{names:?}");
        assert!(names.contains(&"ggas-vs-threads-batch50.svg"));
        assert!(names.contains(&"ggas-vs-batch-threads2.svg"));
        assert!(names.contains(&"longest-tx-share.svg"));
        let t = texts(svg_named(&plots, "ggas-vs-threads-batch50.svg"));
        for want in [
            "threads",
            "GGas/s",
            "ols",
            "gas-used",
            "ideal linear",
            "critical-path bound",
        ] {
            assert!(t.iter().any(|x| x == want), "missing {want} in {t:?}");
        }
    }

    #[test]
    fn merged_plots_label_machines() {
        let plots = render_plots(&[sample("A"), sample("B")]).unwrap();
        let t = texts(svg_named(&plots, "ggas-vs-threads-batch1.svg"));
        assert!(
            t.iter().any(|x| x == "M1 ols") && t.iter().any(|x| x == "M2 ideal linear"),
            "{t:?}"
        );
    }

    #[test]
    fn single_point_chart_still_renders() {
        let chart = Chart {
            title: "t".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            log_x: false,
            y_max: None,
            series: vec![Series {
                label: "one".into(),
                points: vec![(1.0, 0.0)],
                kind: LineKind::Measured,
                color: 0,
            }],
        };
        texts(&render_svg(&chart).unwrap());
    }
}
