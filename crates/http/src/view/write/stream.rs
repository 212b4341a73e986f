//! Where the rows of a COPY write come from: a CSJ / JSON Lines body read frame by frame as it
//! arrives, or read back from the file it was spooled to, so only a frame and a cut line are
//! held.

use super::body::{BodyFormat, BodyRow, FramedRows, Next, RowReader};
use super::spool::SpoolFile;
use crate::body::{BodyError, BodyReader};
use crate::view::error::ApiError;
use bytes::Bytes;

/// The answer to a body that could not be read (413, 408, 400).
pub fn body_error(error: BodyError) -> ApiError {
    ApiError::new(error.status(), "bad_body", error.to_string())
}

/// Where the frames of a body come from.
enum Frames {
    /// The request, as it arrives; `read_ahead` holds the frames read before the body was found
    /// large enough to stream, split first.
    Request {
        reader: BodyReader,
        read_ahead: std::vec::IntoIter<Bytes>,
    },
    /// A temporary file the body was spooled to, read again for each method object.
    Spool(SpoolFile),
}

/// The rows a COPY write encodes: a CSJ or JSON Lines body parsed frame by frame, so only a
/// frame and a cut line are held.
pub struct RowSource {
    frames: Frames,
    format: BodyFormat,
    rows: FramedRows,
}

impl RowSource {
    /// Rows of the frames `read_ahead`, then of the rest of the request's body.
    pub fn streamed(reader: BodyReader, read_ahead: Vec<Bytes>, format: BodyFormat) -> RowSource {
        let read_ahead = read_ahead.into_iter();
        RowSource::new(Frames::Request { reader, read_ahead }, format)
    }

    /// Rows of a spooled body.
    pub fn spooled(file: SpoolFile, format: BodyFormat) -> RowSource {
        RowSource::new(Frames::Spool(file), format)
    }

    fn new(frames: Frames, format: BodyFormat) -> RowSource {
        RowSource {
            frames,
            format,
            rows: FramedRows::new(format),
        }
    }

    /// The next row, `None` after the last; reads frames as needed (from the request: within
    /// the body limit and the timeout of the request).
    pub async fn next_row(&mut self) -> Result<Option<BodyRow>, ApiError> {
        loop {
            match self.rows.next()? {
                Next::Row(row) => return Ok(Some(row)),
                Next::End => return Ok(None),
                Next::More => {}
            }
            let frame = match &mut self.frames {
                Frames::Request { reader, read_ahead } => match read_ahead.next() {
                    Some(frame) => Some(frame),
                    None => reader.frame().await.map_err(body_error)?,
                },
                Frames::Spool(file) => file.frame().await?,
            };
            match frame {
                Some(frame) => self.rows.push(frame),
                None => self.rows.finish(),
            }
        }
    }

    /// Starts again from the first row: a spooled body is read again from its start; a body
    /// read from the request is read once, so there this does nothing.
    pub async fn restart(&mut self) -> Result<(), ApiError> {
        if let Frames::Spool(file) = &mut self.frames {
            file.rewind().await?;
            self.rows = FramedRows::new(self.format);
        }
        Ok(())
    }

    /// Reads and drops what is left of a request's body (see [`BodyReader::discard_rest`]).
    pub async fn discard_rest(&mut self) {
        if let Frames::Request { reader, read_ahead } = &mut self.frames {
            *read_ahead = Vec::new().into_iter();
            reader.discard_rest().await;
        }
    }
}

/// The rows of `body` (or the error) as `(line, row as a JSON object)`, read whole or fed in the
/// frames the `cuts` (offsets into `body`) make: the two must agree. An entry point for the
/// property test and the fuzz target `write_frames`.
pub fn rows_whole_and_framed(
    format: BodyFormat,
    body: &Bytes,
    cuts: &[usize],
) -> (RowsOrError, RowsOrError) {
    let whole = (|| {
        let mut reader = RowReader::new(body.clone(), format)?;
        let mut rows = Vec::new();
        while let Some(row) = reader.next_row()? {
            rows.push((row.line, row.fields.to_object()));
        }
        Ok(rows)
    })();
    let framed = (|| {
        let mut rows = Vec::new();
        let mut framed = FramedRows::new(format);
        let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(body.len())).collect();
        cuts.sort_unstable();
        cuts.push(body.len());
        let mut start = 0;
        let mut frames = cuts.into_iter();
        loop {
            match framed.next()? {
                Next::Row(row) => rows.push((row.line, row.fields.to_object())),
                Next::End => return Ok(rows),
                Next::More => match frames.next() {
                    Some(end) => {
                        framed.push(body.slice(start..end));
                        start = end;
                    }
                    None => framed.finish(),
                },
            }
        }
    })();
    (whole.map_err(describe), framed.map_err(describe))
}

/// Rows as `(line, object)`, or an error as `(status, code, message)`.
pub type RowsOrError = Result<Vec<(u64, serde_json::Value)>, (u16, String, String)>;

fn describe(error: ApiError) -> (u16, String, String) {
    (error.status.as_u16(), error.code.to_string(), error.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (any::<i32>(), "[a-z ,\\\"\t]{0,12}")
                .prop_map(|(n, s)| format!("{n},{}", serde_json::Value::from(s))),
            1 => Just(String::new()),
            1 => Just(String::from("  \r")),
            1 => "[ -~]{0,10}",
        ]
    }

    proptest! {
        /// Frame boundaries anywhere give the rows (or the error, at the same place) of the
        /// whole body, for CSJ and JSON Lines.
        #[test]
        fn frames_do_not_change_rows_or_errors(
            lines in proptest::collection::vec(line(), 0..30),
            crlf in any::<bool>(),
            cuts in proptest::collection::vec(0usize..600, 0..25),
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let csj = format!("\"a\",\"b\"{end}{}", lines.join(end));
            let (whole, framed) =
                rows_whole_and_framed(BodyFormat::Csj, &Bytes::from(csj), &cuts);
            prop_assert_eq!(whole, framed);
            let jsonl: Vec<String> = lines
                .iter()
                .map(|l| match l.split_once(',') {
                    Some((a, b)) if !a.is_empty() => format!("{{\"a\":{a},\"b\":{b}}}"),
                    _ => l.clone(),
                })
                .collect();
            let jsonl = Bytes::from(jsonl.join(end));
            let (whole, framed) = rows_whole_and_framed(BodyFormat::JsonLines, &jsonl, &cuts);
            prop_assert_eq!(whole, framed);
        }
    }

    #[test]
    fn a_cut_row_has_its_line() {
        let body = Bytes::from_static(b"\n\"a\"\r\n1\n\n22\n3x\n");
        let (whole, framed) = rows_whole_and_framed(BodyFormat::Csj, &body, &[7, 8, 12]);
        assert_eq!(whole, framed);
        let error = framed.expect_err("3x is not a value");
        assert_eq!(error.0, 400);
        assert!(error.2.contains("line 6, column 2"), "{}", error.2);
        let (whole, framed) = rows_whole_and_framed(BodyFormat::Csj, &body, &[]);
        assert_eq!(whole, framed);
        let body = Bytes::from_static(b"\"a\"\n1\n22");
        let (_, framed) = rows_whole_and_framed(BodyFormat::Csj, &body, &[9]);
        let expected = vec![
            (2, serde_json::json!({"a": 1})),
            (3, serde_json::json!({"a": 22})),
        ];
        assert_eq!(framed, Ok(expected));
        // No header: the error names the line after the last.
        let (whole, framed) =
            rows_whole_and_framed(BodyFormat::Csj, &Bytes::from_static(b"\n \n"), &[1]);
        assert_eq!(whole, framed);
        assert!(framed.expect_err("no header").2.contains("line 3"));
    }
}
