//! [`Expected`]: what a reference says and what was found instead, the one field type of
//! every comparison error: the producers' (the RPC dumper's divergences from the node, the
//! importers' mismatches with a fixture, the header checks' `HeaderMismatch` of the
//! feature `producer`) and the executor's verification of a replay.

use std::fmt;

/// A value that differs from the reference: `expected` is what the reference (a node, a
/// fixture, a header) says, `got` what execution produced. Displayed as
/// `expected <expected>, got <got>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Expected<T> {
    /// The reference's value.
    pub expected: T,
    /// The value found instead.
    pub got: T,
}

impl<T> Expected<T> {
    /// `expected` against `got`.
    pub const fn new(expected: T, got: T) -> Self {
        Self { expected, got }
    }

    /// Both values mapped by `f` (e.g. to their display form).
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Expected<U> {
        Expected {
            expected: f(self.expected),
            got: f(self.got),
        }
    }

    /// Both values borrowed.
    pub const fn as_ref(&self) -> Expected<&T> {
        Expected {
            expected: &self.expected,
            got: &self.got,
        }
    }
}

impl<T: fmt::Display> fmt::Display for Expected<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, got {}", self.expected, self.got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_and_maps_both_values() {
        let e = Expected::new(21_000u64, 21_001);
        assert_eq!(e.to_string(), "expected 21000, got 21001");
        assert_eq!(e.map(|v| v + 1), Expected::new(21_001, 21_002));
        assert_eq!(e.as_ref().map(u64::to_string).to_string(), e.to_string());
    }
}
