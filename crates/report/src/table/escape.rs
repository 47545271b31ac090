//! Names from dumps, paths and reasons made safe to show: on a terminal, in a Markdown
//! table cell and in SVG text.

use std::{borrow::Cow, fmt::Write};

/// A name from a dump, a path or a reason as it may be shown: control characters (escape
/// sequences, newlines, tabs, DEL, C1 controls) and the invisible bidirectional-text
/// controls are written as `\n`, `\t`, `\r` or `\u{..}`, so a hostile name can neither
/// drive the terminal nor split a line of `table.md`. The one escaping function of every
/// name shown on a terminal or written to a table.
pub fn escape_name(s: &str) -> Cow<'_, str> {
    let special = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(special) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if special(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape_name`] for a markdown table cell: `|` escaped too.
pub(super) fn md_cell(s: &str) -> String {
    escape_name(s).replace('|', "\\|")
}

/// [`escape_name`] for SVG text: the characters SVG text must not hold raw replaced (`&`
/// by `and`) or left out (`<`, `>`, `"`).
pub(crate) fn xml_safe(s: &str) -> String {
    escape_name(s)
        .replace('&', "and")
        .replace(['<', '>', '"'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_written_out_and_pipes_escaped_in_cells() {
        assert_eq!(escape_name("plain-name[x]"), "plain-name[x]");
        assert_eq!(
            escape_name("a\u{1b}[31mred\nb\t\u{7f}\u{202e}"),
            "a\\u{1b}[31mred\\nb\\t\\u{7f}\\u{202e}"
        );
        assert_eq!(md_cell("a|b\r"), "a\\|b\\r");
    }
}
