//! The timeline of a parallel pass's longest batch: workers × time, as recorded in
//! results.json and drawn as `timeline.svg` in a results folder — where a parallel pass
//! waits, apart from its longest transaction.
//!
//! A batch of a mega-block holds thousands of items, far more than a picture can show
//! one by one: items a worker ran back to back (gap under [`RESOLUTION`] of the batch's
//! span) are merged into one [`BusyRun`]. The idle gaps between runs, the idle tail of
//! each worker and the longest item stay exact. The full per-item record is the trace
//! file (`gigagas run --trace FILE`). The bench crate captures a timeline from a pass
//! (`gigagas_bench::timeline_of`); this module holds it and draws it.

use crate::{error::PlotError, table::escape::xml_safe};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// Items closer together than this fraction of the batch's span are drawn as one run
/// (about one pixel of the picture).
pub const RESOLUTION: f64 = 1.0 / 2000.0;

/// The most worker rows drawn; a pass with more workers shows the first ones (and says
/// so in the title).
pub const MAX_WORKERS_DRAWN: usize = 64;

/// The longest batch of one parallel pass, workers × time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The dump the pass replayed.
    pub dump: String,
    /// The grid point (`RunConfig`'s display: threads, batch, scheduler).
    pub config: String,
    /// Worker threads of the pass.
    pub threads: std::num::NonZeroUsize,
    /// Index of the drawn batch in the pass, and the pass's number of batches.
    pub batch: usize,
    /// Number of batches of the pass.
    pub batches: usize,
    /// Items of the batch.
    pub items: usize,
    /// Gas used by the batch's items.
    pub gas: u64,
    /// Wall time of the batch, nanoseconds (the scheduler's dispatch to the last item's
    /// end).
    pub span_ns: u64,
    /// Sum of the items' execution times, nanoseconds.
    pub busy_ns: u64,
    /// The batch's longest item (the bound on its span whatever the thread count).
    pub longest: LongestItem,
    /// Busy runs per worker, ordered by worker then start.
    pub runs: Vec<BusyRun>,
    /// With a state store: the time spent reading state inside the batch's span (its own
    /// prefetch, or the next batch's pipelined read), nanoseconds; 0 otherwise and in
    /// results written before stores.
    pub read_ns: u64,
}

/// Items one worker ran back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyRun {
    /// The worker.
    pub worker: u32,
    /// Start, nanoseconds after the batch started.
    pub start_ns: u64,
    /// From the first item's start to the last one's end, nanoseconds.
    pub ns: u64,
    /// Items merged into the run.
    pub items: u32,
    /// Whether the run holds pre- or post-block system calls (never merged with
    /// transactions).
    pub system: bool,
}

/// The longest item of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongestItem {
    /// Block number.
    pub block: u64,
    /// The item in its block (`tx 12`, `pre-block`, ...).
    pub item: String,
    /// The worker that ran it.
    pub worker: u32,
    /// Start, nanoseconds after the batch started.
    pub start_ns: u64,
    /// Execution time, nanoseconds.
    pub ns: u64,
    /// Gas used.
    pub gas: u64,
}

impl Timeline {
    /// Busy time over `threads ×` the span: 1.0 when no worker ever waits.
    pub fn utilisation(&self) -> f64 {
        if self.span_ns == 0 {
            return 0.0;
        }
        self.busy_ns as f64 / (self.span_ns as f64 * self.threads.get() as f64)
    }

    /// Each worker's idle tail: from its last item's end to the batch's end, ns.
    pub fn idle_tails_ns(&self) -> Vec<u64> {
        let mut end = vec![0u64; self.threads.get()];
        for r in &self.runs {
            if let Some(e) = end.get_mut(r.worker as usize) {
                *e = (*e).max(r.start_ns + r.ns);
            }
        }
        end.into_iter()
            .map(|e| self.span_ns.saturating_sub(e))
            .collect()
    }

    /// Whether this batch is a better picture than `other`: more workers first (the
    /// question is where parallel passes wait), then the longer span.
    pub fn better_than(&self, other: &Timeline) -> bool {
        (self.threads, self.span_ns) > (other.threads, other.span_ns)
    }

    /// The picture's title (dump, point, batch, items, gas, span) and subtitle
    /// (utilisation, longest item, mean idle tail, state read, workers left out) for
    /// `rows` worker rows drawn.
    fn headings(&self, rows: usize) -> (String, String) {
        let ms = |ns: u64| ns as f64 / 1e6;
        let span = ms(self.span_ns).max(1e-6);
        let tails = self.idle_tails_ns();
        let mean_tail = tails.iter().sum::<u64>() as f64 / tails.len().max(1) as f64;
        let title = format!(
            "{}: {}, batch {} of {}: {} items, {:.1} Mgas in {:.2} ms",
            self.dump,
            self.config,
            self.batch + 1,
            self.batches,
            self.items,
            self.gas as f64 / 1e6,
            span,
        );
        let subtitle = format!(
            "utilisation {:.0} %, longest item {:.2} ms ({}% of the span: block {} {}), mean idle tail {:.2} ms{}{}",
            self.utilisation() * 100.0,
            ms(self.longest.ns),
            (self.longest.ns as f64 / self.span_ns.max(1) as f64 * 100.0).round(),
            self.longest.block,
            self.longest.item,
            mean_tail / 1e6,
            if self.read_ns > 0 {
                format!(", reading state {:.2} ms of the span", ms(self.read_ns))
            } else {
                String::new()
            },
            if self.threads.get() > rows {
                format!(", first {rows} of {} workers drawn", self.threads)
            } else {
                String::new()
            },
        );
        (title, subtitle)
    }

    /// The timeline as an SVG document: one row per worker, a bar per busy run
    /// (transactions blue, system calls grey, the longest item red), idle time white.
    pub fn render_svg(&self) -> Result<String, PlotError> {
        let err = |e: &dyn std::fmt::Display| PlotError(e.to_string());
        let rows = self.threads.get().min(MAX_WORKERS_DRAWN);
        let ms = |ns: u64| ns as f64 / 1e6;
        let span = ms(self.span_ns).max(1e-6);
        let (title, subtitle) = self.headings(rows);
        let height = 130 + 50 * rows as u32;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1100, height)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let (top, body) = root.split_vertically(56);
            top.draw(&Text::new(
                xml_safe(&title),
                (70, 10),
                ("sans-serif", 17).into_font(),
            ))
            .map_err(|e| err(&e))?;
            top.draw(&Text::new(
                xml_safe(&subtitle),
                (70, 34),
                ("sans-serif", 13).into_font(),
            ))
            .map_err(|e| err(&e))?;
            let mut ctx = ChartBuilder::on(&body)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0f64..span, 0f64..rows as f64)
                .map_err(|e| err(&e))?;
            ctx.configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_desc("time since the batch started (ms)")
                .draw()
                .map_err(|e| err(&e))?;
            let row = |w: u32| rows as f64 - w as f64 - 1.0;
            let tx = RGBColor(70, 110, 190);
            let sys = RGBColor(160, 160, 160);
            ctx.draw_series(
                self.runs
                    .iter()
                    .filter(|r| (r.worker as usize) < rows)
                    .map(|r| {
                        let y = row(r.worker);
                        let color = if r.system { sys } else { tx };
                        Rectangle::new(
                            [
                                (ms(r.start_ns), y + 0.05),
                                (ms(r.start_ns + r.ns.max(1)), y + 0.68),
                            ],
                            color.filled(),
                        )
                    }),
            )
            .map_err(|e| err(&e))?;
            ctx.draw_series((0..rows as u32).map(|w| {
                Text::new(
                    format!("worker {w}"),
                    (0.0, row(w) + 0.98),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(|e| err(&e))?;
            let l = &self.longest;
            if (l.worker as usize) < rows {
                let y = row(l.worker);
                ctx.draw_series(std::iter::once(Rectangle::new(
                    [
                        (ms(l.start_ns), y + 0.1),
                        (ms(l.start_ns + l.ns.max(1)), y + 0.9),
                    ],
                    RED.filled(),
                )))
                .map_err(|e| err(&e))?;
            }
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }
}
