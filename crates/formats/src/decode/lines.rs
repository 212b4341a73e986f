//! Line bookkeeping shared by the line-based decoders: splitting input into complete lines,
//! skipping blank ones, and remembering which input line each emitted row came from, so a
//! server error about COPY row N can name the line of the file.

use super::MAX_LINE;
use super::error::{DecodeError, DecodeErrorKind};

/// How many discontinuities a [`LineMap`] records; past that, rows after the last one recorded
/// are not mapped (memory stays bounded whatever the input).
const MAX_ENTRIES: usize = 1 << 16;

/// Maps COPY row numbers (1-based, as in the server's `COPY t, line N` context) to input lines.
/// Only rows where the line does not follow from the previous row are recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMap {
    /// (row, line) where `line` is not the previous entry's line plus the rows in between.
    entries: Vec<(u64, u64)>,
    full: bool,
}

impl LineMap {
    /// Records that `row` came from `line` (rows are recorded in increasing order).
    pub fn record(&mut self, row: u64, line: u64) {
        if self.full {
            return;
        }
        if let Some(&(r, l)) = self.entries.last()
            && l + (row - r.min(row)) == line
        {
            return;
        }
        if self.entries.len() == MAX_ENTRIES {
            self.full = true;
            return;
        }
        self.entries.push((row, line));
    }

    /// The input line that COPY row `row` came from, if known.
    pub fn line_of(&self, row: u64) -> Option<u64> {
        let index = self.entries.partition_point(|&(r, _)| r <= row);
        let &(r, l) = self.entries.get(index.checked_sub(1)?)?;
        if self.full && index == self.entries.len() {
            return None;
        }
        Some(l + (row - r))
    }
}

/// Splits input into lines and numbers them.
#[derive(Clone, Debug)]
pub(crate) struct Lines {
    /// The number of the next line to read.
    pub(crate) next_line: u64,
    /// Rows emitted so far.
    pub(crate) rows: u64,
    pub(crate) map: LineMap,
}

/// Whether a line holds nothing but whitespace.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

impl Lines {
    pub(crate) fn new(first_line: u64) -> Lines {
        Lines {
            next_line: first_line,
            rows: 0,
            map: LineMap::default(),
        }
    }

    /// Calls `row` for every complete non-blank line of `input` (and for the unterminated last
    /// one when `eof`), without its line end; returns the bytes consumed.
    pub(crate) fn each<F>(
        &mut self,
        input: &[u8],
        eof: bool,
        mut row: F,
    ) -> Result<usize, DecodeError>
    where
        F: FnMut(&[u8], u64) -> Result<(), DecodeError>,
    {
        let mut consumed = 0;
        loop {
            let rest = input.get(consumed..).unwrap_or_default();
            let (line, advance) = match memchr::memchr(b'\n', rest) {
                Some(end) => (rest.get(..end).unwrap_or_default(), end + 1),
                None if eof && !rest.is_empty() => (rest, rest.len()),
                None => {
                    if rest.len() > MAX_LINE {
                        return Err(DecodeError::new(
                            DecodeErrorKind::LineTooLong,
                            self.next_line,
                        ));
                    }
                    return Ok(consumed);
                }
            };
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let number = self.next_line;
            if !is_blank(line) {
                self.rows += 1;
                self.map.record(self.rows, number);
                row(line, number)?;
            }
            self.next_line += 1;
            consumed += advance;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_records_only_jumps() {
        let mut map = LineMap::default();
        map.record(1, 2);
        map.record(2, 3);
        map.record(3, 5);
        map.record(4, 6);
        assert_eq!(map.entries.len(), 2);
        assert_eq!(map.line_of(0), None);
        assert_eq!(map.line_of(1), Some(2));
        assert_eq!(map.line_of(2), Some(3));
        assert_eq!(map.line_of(3), Some(5));
        assert_eq!(map.line_of(9), Some(11));
    }

    #[test]
    fn lines_skip_blanks_and_keep_numbers() {
        let mut lines = Lines::new(1);
        let mut seen = Vec::new();
        let used = lines
            .each(b"a\n\n \r\nb\r\nc", false, |l, n| {
                seen.push((l.to_vec(), n));
                Ok(())
            })
            .expect("no error");
        assert_eq!(used, 9);
        assert_eq!(seen, vec![(b"a".to_vec(), 1), (b"b".to_vec(), 4)]);
        lines
            .each(b"c", true, |l, n| {
                seen.push((l.to_vec(), n));
                Ok(())
            })
            .expect("no error");
        assert_eq!(seen.last(), Some(&(b"c".to_vec(), 5)));
        assert_eq!(lines.map.line_of(2), Some(4));
        assert_eq!(lines.map.line_of(3), Some(5));
    }
}
