//! What a results folder's text files say, one file per output format: the rows table a
//! terminal shows (`terminal.rs`: its [`Column`]s, the full and the narrow table), the
//! whole `table.md` (`markdown.rs`) with its throughput tables laid out by the sweep's
//! dimensions (`layout.rs`), the README's summary of a folder (`figures.rs`), the CSV files
//! (`csv.rs`), the one Markdown table builder, which leaves out the columns empty on every
//! row (`md.rs`), and the escaping every name shown goes through (`escape.rs`). The items are re-exported here.

mod csv;
pub(crate) mod escape;
mod figures;
mod layout;
mod markdown;
mod md;
mod terminal;

pub use csv::{
    POINT_COLUMNS, render_blocks_csv, render_csv, render_latency_csv, render_simulation_csv,
    render_totals_csv,
};
pub use escape::escape_name;
pub use figures::{MAX_FIGURE_DUMPS, figure};
pub(crate) use layout::distinct;
pub use layout::{Layout, MAX_POINT_COLUMNS, layout_of, throughput_tables};
pub use markdown::{
    batch_table, drift_lines, failures_list, io_table, latency_section, render_markdown,
    short_test_name, simulation_markdown, skipped_list, timed_work_lines, totals_table,
};
pub use terminal::{
    Column, UNVERIFIED, any_unverified, machine_tag, narrow_columns, ratio_cell, rows_columns,
    rows_table, rows_table_with, table_width,
};
