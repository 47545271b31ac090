//! One Markdown table built cell by cell ([`MdTable`]): every table of `table.md` goes
//! through it, so a column that says nothing on any row (every cell empty or `–`) is
//! left out the same way everywhere.

use std::fmt::Write;

/// How a column's cells are aligned: text to the left, figures to the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Names, labels, points.
    Left,
    /// Figures.
    Right,
}

/// A Markdown table: heads with their alignment, then rows of cells (already escaped for
/// a cell: [`super::escape::md_cell`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct MdTable {
    heads: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

/// Heads as a table names them: `names` (left-aligned) then `figures` (right-aligned), each
/// a ` | `-separated list, as a Markdown head row writes them; an empty list adds none.
pub(crate) fn heads<'a>(
    names: &'a str,
    figures: &'a str,
) -> impl Iterator<Item = (&'a str, Align)> {
    let split = |list: &'a str, align| {
        list.split(" | ")
            .filter(|h| !h.is_empty())
            .map(move |h| (h, align))
    };
    split(names, Align::Left).chain(split(figures, Align::Right))
}

/// Whether a cell says nothing: empty, or the `–` a table writes for a missing figure.
pub(crate) fn is_empty_cell(cell: &str) -> bool {
    let c = cell.trim();
    c.is_empty() || c == "–"
}

impl MdTable {
    /// A table with these heads and no rows.
    pub(crate) fn new<S: Into<String>>(heads: impl IntoIterator<Item = (S, Align)>) -> Self {
        Self {
            heads: heads.into_iter().map(|(h, a)| (h.into(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row: one cell per head (a short row is padded with `–`, extra cells are
    /// dropped).
    pub(crate) fn push(&mut self, mut cells: Vec<String>) {
        cells.resize(self.heads.len(), "–".into());
        self.rows.push(cells);
    }

    /// The table as Markdown, a line per row after the head and the rule, without the
    /// columns whose every cell is empty or `–` ([`is_empty_cell`]). Empty without rows.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        if self.rows.is_empty() {
            return out;
        }
        let kept: Vec<usize> = (0..self.heads.len())
            .filter(|&c| !self.rows.iter().all(|r| is_empty_cell(&r[c])))
            .collect();
        let heads: Vec<&str> = kept.iter().map(|&c| self.heads[c].0.as_str()).collect();
        let _ = writeln!(out, "| {} |", heads.join(" | "));
        let rule: String = kept
            .iter()
            .map(|&c| match self.heads[c].1 {
                Align::Left => "---|",
                Align::Right => "---:|",
            })
            .collect();
        let _ = writeln!(out, "|{rule}");
        for row in &self.rows {
            let cells: Vec<&str> = kept.iter().map(|&c| row[c].as_str()).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column that is `–` or empty on every row is left out, head and rule included; a
    /// column with one figure stays, and so does a table's every other column.
    #[test]
    fn columns_empty_on_every_row_are_dropped() {
        let mut t = MdTable::new([
            ("point", Align::Left),
            ("MGas/s", Align::Right),
            ("geomean", Align::Right),
            ("vs 1 thread", Align::Right),
        ]);
        assert_eq!(t.render(), "");
        t.push(vec!["a".into(), "10".into(), "–".into(), "–".into()]);
        t.push(vec!["b".into(), "20".into(), "".into(), "1.9×".into()]);
        assert_eq!(
            t.render(),
            "| point | MGas/s | vs 1 thread |\n|---|---:|---:|\n| a | 10 | – |\n| b | 20 | 1.9× |\n"
        );
        // A short row is padded.
        t.push(vec!["c".into()]);
        assert!(t.render().ends_with("| c | – | – |\n"), "{}", t.render());
    }
}
