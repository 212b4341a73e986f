//! A streaming CSV scanner with PostgreSQL's rules (CopyReadLineText and CopyReadAttributesCSV in
//! CSV mode, default options): `,` between fields, `"` toggles quoting anywhere in a field, `""`
//! inside quotes is a quote, newlines inside quotes are data; records end with LF, CR LF or CR,
//! as the first record ends, and the other line ends are errors outside quotes. It tracks the
//! physical line, checks each record's field count, and refuses an unquoted line holding only `\.`
//! (COPY's end-of-data marker). Fields go to a [`CsvSink`]: [`SkipFields`] for the pass-through
//! import, [`CollectFields`] for the header and tests.

use super::MAX_LINE;
use super::error::{DecodeError, DecodeErrorKind};
use crate::swar;

/// Receives what the scanner finds.
pub trait CsvSink {
    /// Bytes of the current field's value (quotes removed, `""` as one quote).
    fn data(&mut self, bytes: &[u8]);
    /// The current field ended; `quoted` when a quote appeared in it (so an empty field is an
    /// empty string, not NULL).
    fn end_field(&mut self, quoted: bool);
    /// The current record ended; return false to stop scanning after it.
    fn end_record(&mut self) -> bool;
}

/// Ignores the fields: scanning only checks and counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkipFields;

impl CsvSink for SkipFields {
    #[inline(always)]
    fn data(&mut self, _: &[u8]) {}
    #[inline(always)]
    fn end_field(&mut self, _: bool) {}
    #[inline(always)]
    fn end_record(&mut self) -> bool {
        true
    }
}

/// Collects records: each field is `None` for an unquoted empty field (COPY's NULL), else its
/// value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollectFields {
    /// The records collected.
    pub records: Vec<Vec<Option<Vec<u8>>>>,
    /// Stop after this many records.
    pub limit: Option<usize>,
    current: Vec<Option<Vec<u8>>>,
    field: Vec<u8>,
}

impl CollectFields {
    /// A collector that stops after `limit` records (or never).
    pub fn new(limit: Option<usize>) -> CollectFields {
        CollectFields {
            limit,
            ..CollectFields::default()
        }
    }
}

impl CsvSink for CollectFields {
    fn data(&mut self, bytes: &[u8]) {
        self.field.extend_from_slice(bytes);
    }

    fn end_field(&mut self, quoted: bool) {
        let field = std::mem::take(&mut self.field);
        self.current.push(if field.is_empty() && !quoted {
            None
        } else {
            Some(field)
        });
    }

    fn end_record(&mut self) -> bool {
        self.records.push(std::mem::take(&mut self.current));
        self.limit.is_none_or(|limit| self.records.len() < limit)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unquoted,
    Quoted,
    /// A quote inside quotes: a doubled quote if a quote follows, else the end of the quoting.
    QuoteInQuoted,
    /// A carriage return outside quotes: CR LF if a newline follows.
    CarriageReturn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eol {
    Unknown,
    Lf,
    CrLf,
    Cr,
}

/// Scans CSV in chunks of any size.
#[derive(Clone, Debug)]
pub struct CsvScanner {
    state: State,
    eol: Eol,
    line: u64,
    record_line: u64,
    records: u64,
    fields: usize,
    expected: Option<usize>,
    field_quoted: bool,
    record_quoted: bool,
    /// Bytes of the current record so far (without its line end).
    record_len: usize,
    /// Its first two bytes, to spot `\.`.
    record_head: [u8; 2],
}

impl Default for CsvScanner {
    fn default() -> CsvScanner {
        CsvScanner::new()
    }
}

impl CsvScanner {
    /// A scanner at the start of the input.
    pub fn new() -> CsvScanner {
        CsvScanner {
            state: State::Unquoted,
            eol: Eol::Unknown,
            line: 1,
            record_line: 1,
            records: 0,
            fields: 0,
            expected: None,
            field_quoted: false,
            record_quoted: false,
            record_len: 0,
            record_head: [0; 2],
        }
    }

    /// From now on, every record must have `fields` fields.
    pub fn expect_fields(&mut self, fields: usize) {
        self.expected = Some(fields);
    }

    /// The records ended so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The physical line the scanner is on.
    pub fn line(&self) -> u64 {
        self.line
    }

    #[inline]
    fn note(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        if self.record_len < 2 {
            for (slot, &b) in self.record_head.iter_mut().skip(self.record_len).zip(bytes) {
                *slot = b;
            }
        }
        self.record_len = self.record_len.saturating_add(bytes.len());
        if self.record_len > MAX_LINE {
            return Err(DecodeError::new(
                DecodeErrorKind::LineTooLong,
                self.record_line,
            ));
        }
        Ok(())
    }

    /// Scans `input`; returns the bytes consumed: all of them, unless the sink stopped after a
    /// record.
    pub fn scan<S: CsvSink>(&mut self, input: &[u8], sink: &mut S) -> Result<usize, DecodeError> {
        let mut i = 0;
        while let Some(rest) = input.get(i..).filter(|r| !r.is_empty()) {
            match self.state {
                State::Unquoted => {
                    let Some(k) = swar::find_csv_special(rest) else {
                        sink.data(rest);
                        self.note(rest)?;
                        i = input.len();
                        continue;
                    };
                    let (run, special) = rest.split_at(k);
                    sink.data(run);
                    self.note(run)?;
                    i += k + 1;
                    match special.first() {
                        Some(b',') => {
                            self.note(b",")?;
                            sink.end_field(self.field_quoted);
                            self.field_quoted = false;
                            self.fields += 1;
                        }
                        Some(b'"') => {
                            self.note(b"\"")?;
                            self.state = State::Quoted;
                            self.field_quoted = true;
                            self.record_quoted = true;
                        }
                        Some(b'\n') => {
                            if matches!(self.eol, Eol::Cr | Eol::CrLf) {
                                return Err(DecodeError::new(
                                    DecodeErrorKind::UnquotedNewline,
                                    self.line,
                                ));
                            }
                            self.eol = Eol::Lf;
                            self.line += 1;
                            if !self.end_record(sink)? {
                                return Ok(i);
                            }
                        }
                        _ => {
                            if self.eol == Eol::Lf {
                                return Err(DecodeError::new(
                                    DecodeErrorKind::UnquotedCarriageReturn,
                                    self.line,
                                ));
                            }
                            self.state = State::CarriageReturn;
                        }
                    }
                }
                State::Quoted => {
                    let Some(k) = memchr::memchr2(b'"', b'\n', rest) else {
                        sink.data(rest);
                        self.note(rest)?;
                        i = input.len();
                        continue;
                    };
                    let run = rest.get(..=k).unwrap_or_default();
                    let Some((&byte, data)) = run.split_last() else {
                        break;
                    };
                    sink.data(data);
                    self.note(run)?;
                    i += k + 1;
                    if byte == b'\n' {
                        self.line += 1;
                        sink.data(b"\n");
                    } else {
                        self.state = State::QuoteInQuoted;
                    }
                }
                State::QuoteInQuoted => {
                    if rest.first() == Some(&b'"') {
                        sink.data(b"\"");
                        self.note(b"\"")?;
                        self.state = State::Quoted;
                        i += 1;
                    } else {
                        self.state = State::Unquoted;
                    }
                }
                State::CarriageReturn => {
                    self.state = State::Unquoted;
                    if rest.first() == Some(&b'\n') {
                        if self.eol == Eol::Cr {
                            return Err(DecodeError::new(
                                DecodeErrorKind::UnquotedNewline,
                                self.line,
                            ));
                        }
                        self.eol = Eol::CrLf;
                        i += 1;
                    } else {
                        if self.eol == Eol::CrLf {
                            return Err(DecodeError::new(
                                DecodeErrorKind::UnquotedCarriageReturn,
                                self.line,
                            ));
                        }
                        self.eol = Eol::Cr;
                    }
                    self.line += 1;
                    if !self.end_record(sink)? {
                        return Ok(i);
                    }
                }
            }
        }
        Ok(i)
    }

    /// Ends the input: a last record without a line end is a record; an open quote is an error.
    pub fn finish<S: CsvSink>(&mut self, sink: &mut S) -> Result<(), DecodeError> {
        match self.state {
            State::Quoted => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnterminatedQuote,
                    self.record_line,
                ));
            }
            State::CarriageReturn => {
                self.state = State::Unquoted;
                self.line += 1;
                self.end_record(sink)?;
                return Ok(());
            }
            State::QuoteInQuoted | State::Unquoted => self.state = State::Unquoted,
        }
        if self.record_len > 0 || self.fields > 0 {
            self.end_record(sink)?;
        }
        Ok(())
    }

    fn end_record<S: CsvSink>(&mut self, sink: &mut S) -> Result<bool, DecodeError> {
        sink.end_field(self.field_quoted);
        let fields = self.fields + 1;
        if !self.record_quoted && self.record_len == 2 && self.record_head == *b"\\." {
            return Err(DecodeError::new(
                DecodeErrorKind::EndOfDataMarker,
                self.record_line,
            ));
        }
        if let Some(expected) = self.expected
            && fields != expected
        {
            return Err(
                DecodeError::new(DecodeErrorKind::ColumnCount, self.record_line)
                    .detail(format!("{fields} fields, the header has {expected}")),
            );
        }
        self.records += 1;
        self.fields = 0;
        self.field_quoted = false;
        self.record_quoted = false;
        self.record_len = 0;
        self.record_line = self.line;
        Ok(sink.end_record())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8]) -> Result<Vec<Vec<Option<String>>>, DecodeError> {
        let mut scanner = CsvScanner::new();
        let mut sink = CollectFields::new(None);
        let used = scanner.scan(input, &mut sink)?;
        assert_eq!(used, input.len());
        scanner.finish(&mut sink)?;
        Ok(sink
            .records
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|f| f.map(|v| String::from_utf8(v).expect("UTF-8")))
                    .collect()
            })
            .collect())
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    #[test]
    fn fields_as_postgresql_reads_them() {
        assert_eq!(
            collect(b"a,\"b,c\",,\"\"\n\"x\"\"y\",ab\"c,d\"e,\"q\nr\",z").expect("valid"),
            vec![
                vec![s("a"), s("b,c"), None, s("")],
                vec![s("x\"y"), s("abc,de"), s("q\nr"), s("z")],
            ]
        );
        assert_eq!(
            collect(b"").expect("empty"),
            Vec::<Vec<Option<String>>>::new()
        );
        assert_eq!(
            collect(b"a\r\nb\r\n").expect("crlf"),
            vec![vec![s("a")], vec![s("b")]]
        );
        assert_eq!(
            collect(b"a\rb").expect("cr"),
            vec![vec![s("a")], vec![s("b")]]
        );
        assert_eq!(
            collect(b"\"\\.\"\n").expect("quoted marker"),
            vec![vec![s("\\.")]]
        );
        assert_eq!(
            collect(b"\\.,1\n").expect("marker with more"),
            vec![vec![s("\\."), s("1")]]
        );
    }

    #[test]
    fn errors_with_lines() {
        let kind_line = |input: &[u8]| collect(input).map_err(|e| (e.kind(), e.line()));
        assert_eq!(
            kind_line(b"a\n\"b\nc"),
            Err((DecodeErrorKind::UnterminatedQuote, 2))
        );
        assert_eq!(
            kind_line(b"a\nb\rc\n"),
            Err((DecodeErrorKind::UnquotedCarriageReturn, 2))
        );
        assert_eq!(
            kind_line(b"a\r\nb\nc"),
            Err((DecodeErrorKind::UnquotedNewline, 2))
        );
        assert_eq!(
            kind_line(b"a\n\\.\nb\n"),
            Err((DecodeErrorKind::EndOfDataMarker, 2))
        );
        let mut scanner = CsvScanner::new();
        scanner.expect_fields(2);
        let e = scanner
            .scan(b"1,2\n\"x\ny\",2\n3\n", &mut SkipFields)
            .expect_err("short record");
        assert_eq!((e.kind(), e.line()), (DecodeErrorKind::ColumnCount, 4));
        assert_eq!(
            e.to_string(),
            "line 4: wrong number of values: 1 fields, the header has 2"
        );
    }

    #[test]
    fn stops_after_the_header() {
        let input = b"\"a\",b\r\n1,2\r\n";
        let mut scanner = CsvScanner::new();
        let mut header = CollectFields::new(Some(1));
        let used = scanner.scan(input, &mut header).expect("header");
        assert_eq!(used, 7);
        assert_eq!(
            header.records,
            vec![vec![Some(b"a".to_vec()), Some(b"b".to_vec())]]
        );
        scanner.expect_fields(2);
        scanner.scan(&input[used..], &mut SkipFields).expect("rows");
        scanner.finish(&mut SkipFields).expect("end");
        assert_eq!((scanner.records(), scanner.line()), (2, 3));
    }

    #[test]
    fn any_split_gives_the_same_records() {
        let input: &[u8] = b"a,\"b\"\"c\",\"\r\n\"\r\nd,e\"\"f\r\n\r\n";
        let whole = collect(input).expect("valid");
        for split in 0..=input.len() {
            let mut scanner = CsvScanner::new();
            let mut sink = CollectFields::new(None);
            scanner
                .scan(&input[..split], &mut sink)
                .expect("first part");
            scanner
                .scan(&input[split..], &mut sink)
                .expect("second part");
            scanner.finish(&mut sink).expect("end");
            let records: Vec<Vec<Option<String>>> = sink
                .records
                .into_iter()
                .map(|r| {
                    r.into_iter()
                        .map(|f| f.map(|v| String::from_utf8(v).expect("UTF-8")))
                        .collect()
                })
                .collect();
            assert_eq!(records, whole, "split at {split}");
        }
    }
}
