//! The markers around a README's generated block, and why a marker line cannot be read.

/// The start of a block's opening marker; the sweep's name and ` -->` follow.
pub const BEGIN: &str = "<!-- gigagas:figures BEGIN ";
/// The start of a block's closing marker; the sweep's name and ` -->` follow.
pub const END: &str = "<!-- gigagas:figures END ";
/// The end of both markers.
const CLOSE: &str = " -->";

/// Why a README's markers cannot be read ([`crate::ReportError::Readme`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkerProblem {
    /// A marker line that does not end in ` -->` or names no sweep (a name is letters,
    /// digits, `-` and `_`; a sweep and one of its folders are two names joined by `/`).
    #[error("a figures marker must read `{BEGIN}NAME -->` or `{END}NAME -->`")]
    Malformed,
    /// A block opened inside another.
    #[error("`{name}` opens before `{open}` is closed")]
    Nested {
        /// The block still open.
        open: String,
        /// The block that opens.
        name: String,
    },
    /// A closing marker without its opening one.
    #[error("`{name}` closes, but is not open")]
    NotOpen {
        /// The name it closes.
        name: String,
    },
    /// An opening marker never closed.
    #[error("`{name}` is never closed")]
    NotClosed {
        /// The block's name.
        name: String,
    },
}

/// The name a marker line carries after `prefix`, or why it carries none.
pub(super) fn marker_name<'a>(line: &'a str, prefix: &str) -> Result<&'a str, MarkerProblem> {
    let name = line
        .trim_end()
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(CLOSE))
        .ok_or(MarkerProblem::Malformed)?;
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    // A sweep, or a sweep and one of its folders (`io/2026-11-28-1310270bd576`).
    let ok = match name.split_once('/') {
        Some((sweep, folder)) => word(sweep) && word(folder),
        None => word(name),
    };
    if ok {
        Ok(name)
    } else {
        Err(MarkerProblem::Malformed)
    }
}
