//! COPY text-format (TSV) input: the optional header line's names, and a streaming check that no
//! line holds only `\.` (COPY's end-of-data marker, which would end the load early). The data
//! itself goes to COPY unchanged.

use super::error::{DecodeError, DecodeErrorKind};

/// The column names of a text-format header line (without its line end): fields split on tabs,
/// backslash escapes decoded as COPY decodes them.
pub fn parse_text_header(line: &[u8]) -> Result<Vec<String>, DecodeError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if std::str::from_utf8(line).is_err() {
        return Err(DecodeError::new(DecodeErrorKind::InvalidUtf8, 1));
    }
    if line.is_empty() {
        return Err(
            DecodeError::new(DecodeErrorKind::BadHeader, 1).detail("the header line is empty")
        );
    }
    Ok(line
        .split(|&b| b == b'\t')
        .map(|field| String::from_utf8_lossy(&unescape(field)).into_owned())
        .collect())
}

/// Decodes COPY text escapes: `\b \f \n \r \t \v`, octal `\NNN`, hex `\xHH`, else the character.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while let Some(&b) = field.get(i) {
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&c) = field.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        let decoded = match c {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'0'..=b'7' => {
                let mut value = u32::from(c - b'0');
                for _ in 0..2 {
                    match field.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                (value & 0xff) as u8
            }
            b'x' => {
                let hex = |d: u8| (d as char).to_digit(16);
                match field.get(i).and_then(|&d| hex(d)) {
                    Some(first) => {
                        i += 1;
                        let mut value = first;
                        if let Some(second) = field.get(i).and_then(|&d| hex(d)) {
                            value = value * 16 + second;
                            i += 1;
                        }
                        value as u8
                    }
                    None => b'x',
                }
            }
            other => other,
        };
        out.push(decoded);
    }
    out
}

/// Watches COPY text data go by for a line holding only `\.`.
#[derive(Clone, Debug)]
pub struct TsvScanner {
    line: u64,
    /// Bytes of the current line so far, up to 3.
    head: [u8; 3],
    head_len: usize,
}

impl TsvScanner {
    /// A scanner whose first line is `first_line`.
    pub fn new(first_line: u64) -> TsvScanner {
        TsvScanner {
            line: first_line,
            head: [0; 3],
            head_len: 0,
        }
    }

    /// The line the scanner is on.
    pub fn line(&self) -> u64 {
        self.line
    }

    fn take(&mut self, bytes: &[u8]) {
        for (slot, &b) in self.head.iter_mut().skip(self.head_len).zip(bytes) {
            *slot = b;
        }
        self.head_len = (self.head_len + bytes.len()).min(4);
    }

    fn end_line(&mut self) -> Result<(), DecodeError> {
        let head = self.head.get(..self.head_len.min(3)).unwrap_or_default();
        if self.head_len <= 3 && (head == b"\\." || head == b"\\.\r") {
            return Err(DecodeError::new(
                DecodeErrorKind::EndOfDataMarker,
                self.line,
            ));
        }
        self.line += 1;
        self.head_len = 0;
        Ok(())
    }

    /// Checks the next piece of data.
    pub fn scan(&mut self, input: &[u8]) -> Result<(), DecodeError> {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', input) {
            self.take(input.get(start..end).unwrap_or_default());
            self.end_line()?;
            start = end + 1;
        }
        self.take(input.get(start..).unwrap_or_default());
        Ok(())
    }

    /// Ends the data (a last line without a line end is checked too).
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        if self.head_len > 0 {
            self.end_line()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_unescape() {
        assert_eq!(
            parse_text_header(b"a\tb\\tc\td\\\\e\t\\101\\x42\r").expect("valid"),
            vec!["a", "b\tc", "d\\e", "AB"]
        );
        assert!(parse_text_header(b"").is_err());
    }

    #[test]
    fn end_marker_lines_are_refused_at_any_split() {
        let data: &[u8] = b"1\t\\\\.\n\\.x\n\\.\nlast";
        for split in 0..=data.len() {
            let mut scanner = TsvScanner::new(1);
            let result = scanner
                .scan(&data[..split])
                .and_then(|()| scanner.scan(&data[split..]))
                .and_then(|()| scanner.finish());
            let e = result.expect_err("marker");
            assert_eq!(
                (e.kind(), e.line()),
                (DecodeErrorKind::EndOfDataMarker, 3),
                "split {split}"
            );
        }
        let mut scanner = TsvScanner::new(1);
        scanner.scan(b"a\n\\.\r").expect("no line end yet");
        assert!(scanner.finish().is_err());
        let mut scanner = TsvScanner::new(1);
        scanner.scan(b"a\nb\n").expect("fine");
        scanner.finish().expect("fine");
        assert_eq!(scanner.line(), 3);
    }
}
