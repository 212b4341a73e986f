//! A whole body parsed at once: every point, or the first error (one bad line fails the batch);
//! or, for partial writes, every good point and an error for each bad line.

use std::borrow::Cow;
use std::ops::Range;

use crate::error::{Error, ErrorKind, Fail};
use crate::fields::FieldKeys;
use crate::parser::{Options, Source, parse_line, skip_blank_lines};
use crate::point::{Field, Point, Tag};
use crate::scan::Cursor;

/// One point's place in the batch's flat storage.
#[derive(Debug, Clone)]
pub(crate) struct Entry<'a> {
    measurement: Cow<'a, str>,
    tags: Range<usize>,
    fields: Range<usize>,
    time: i64,
    time_given: bool,
}

/// Every point of a body. Tags and fields of all points live in two flat vectors, so a batch
/// allocates a handful of times in all, not per line.
#[derive(Debug, Clone, Default)]
pub struct Batch<'a> {
    entries: Vec<Entry<'a>>,
    tags: Vec<Tag<'a>>,
    fields: Vec<Field<'a>>,
}

/// The vectors of a [`Batch`], empty, kept to parse the next body without allocating anew
/// (see [`Batch::parse_reusing`]). Large bodies make large vectors, and allocating them fresh
/// for every body costs page faults that can exceed the parsing itself.
#[derive(Debug, Default)]
pub struct BatchStorage {
    entries: Vec<Entry<'static>>,
    tags: Vec<Tag<'static>>,
    fields: Vec<Field<'static>>,
}

impl BatchStorage {
    /// The bytes the storage holds allocated (to decide whether keeping it is worth it).
    pub fn allocated_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry<'static>>()
            + self.tags.capacity() * std::mem::size_of::<Tag<'static>>()
            + self.fields.capacity() * std::mem::size_of::<Field<'static>>()
    }
}

/// Empties `items` and gives its allocation back typed for any lifetime. An empty vector
/// holds no borrow, and collecting an emptied `IntoIter` into a vector of a type of the same
/// size and alignment reuses the allocation (std's in-place collection).
fn recycle<T, U>(mut items: Vec<T>) -> Vec<U> {
    items.clear();
    items.into_iter().filter_map(|_| None).collect()
}

impl<'a> Batch<'a> {
    /// Parses a whole body; the first bad line fails it, with that line's number and column.
    pub fn parse(input: &'a [u8], options: &Options) -> Result<Self, Error> {
        Self::parse_reusing(input, options, &mut BatchStorage::default())
    }

    /// As [`Batch::parse`], in the vectors of an earlier batch ([`Batch::into_storage`]),
    /// which it takes from `storage`; on an error they are put back there.
    pub fn parse_reusing(
        input: &'a [u8],
        options: &Options,
        storage: &mut BatchStorage,
    ) -> Result<Self, Error> {
        let taken = std::mem::take(storage);
        let source = Source::new(input);
        let mut batch = Batch {
            entries: taken.entries,
            tags: taken.tags,
            fields: taken.fields,
        };
        // Line protocol lines are rarely shorter than 40 bytes: a cheap bound that avoids
        // regrowing the vectors on typical bodies.
        batch.entries.reserve(input.len() / 40 + 1);
        match batch.fill(&source, options) {
            Ok(()) => Ok(batch),
            Err(fail) => {
                *storage = batch.into_storage();
                Err(source.error(fail, options))
            }
        }
    }

    /// Parses a whole body, keeping going past bad lines: the batch holds every point of the
    /// good lines, and `errors` gets the error of each of the first `max_errors` bad lines
    /// (with its line number), in input order; returns the batch and the number of bad lines.
    /// A bad line ends at the first line feed at or after the place it failed (a line feed
    /// inside a broken string value ends it there). Takes its vectors from `storage` like
    /// [`Batch::parse_reusing`].
    pub fn parse_partial_reusing(
        input: &'a [u8],
        options: &Options,
        storage: &mut BatchStorage,
        errors: &mut Vec<Error>,
        max_errors: usize,
    ) -> (Self, usize) {
        let mut failed = 0;
        let taken = std::mem::take(storage);
        let mut batch = Batch {
            entries: taken.entries,
            tags: taken.tags,
            fields: taken.fields,
        };
        batch.entries.reserve(input.len() / 40 + 1);
        // Invalid UTF-8 fails only its own line: parse the valid text up to that line, record
        // the line, and go on after it.
        let mut start = 0;
        let mut lines_before = 0;
        while start < input.len() {
            let rest = input.get(start..).unwrap_or_default();
            let source = Source::new(rest);
            let (text_end, bad) = match source.utf8_error_at {
                None => (rest.len(), None),
                Some(bad) => {
                    let prefix = rest.get(..bad).unwrap_or_default();
                    let line_start = memchr::memrchr(b'\n', prefix).map_or(0, |i| i + 1);
                    (line_start, Some(bad))
                }
            };
            let text = source.text.get(..text_end).unwrap_or_default();
            let good = Source {
                text,
                utf8_error_at: None,
            };
            failed += batch.fill_partial(&good, options, start, lines_before, errors, max_errors);
            let Some(bad) = bad else {
                break;
            };
            failed += 1;
            if errors.len() < max_errors {
                let error = source.error(Fail::at(ErrorKind::InvalidUtf8, bad), options);
                errors.push(error.shifted(start, lines_before));
            }
            let line_end = memchr::memchr(b'\n', rest.get(bad..).unwrap_or_default())
                .map_or(rest.len(), |i| bad + i + 1);
            let segment = rest.get(..line_end).unwrap_or_default();
            lines_before += memchr::memchr_iter(b'\n', segment).count() as u64;
            start += line_end;
        }
        (batch, failed)
    }

    /// The good lines of `source` (text starting at byte `base` of the input, after
    /// `lines_before` lines) into the batch, the error of each bad one into `errors` while it
    /// holds fewer than `max_errors` (an error's line number costs a scan of the text before
    /// it); returns the number of bad lines.
    fn fill_partial(
        &mut self,
        source: &Source<'a>,
        options: &Options,
        base: usize,
        lines_before: u64,
        errors: &mut Vec<Error>,
        max_errors: usize,
    ) -> usize {
        let mut failed = 0;
        let default_time = options.precision.truncate(options.default_time);
        let mut cursor = Cursor::new(source.text);
        let mut keys = FieldKeys::default();
        while skip_blank_lines(&mut cursor) {
            let tags_start = self.tags.len();
            let fields_start = self.fields.len();
            match parse_line(
                &mut cursor,
                options,
                default_time,
                &mut self.tags,
                &mut self.fields,
                &mut keys,
            ) {
                Ok(head) => self.entries.push(Entry {
                    measurement: head.measurement,
                    tags: tags_start..self.tags.len(),
                    fields: fields_start..self.fields.len(),
                    time: head.time,
                    time_given: head.time_given,
                }),
                Err(fail) => {
                    self.tags.truncate(tags_start);
                    self.fields.truncate(fields_start);
                    let at = fail.at.min(source.text.len());
                    failed += 1;
                    if errors.len() < max_errors {
                        errors.push(source.error(fail, options).shifted(base, lines_before));
                    }
                    cursor.pos =
                        memchr::memchr(b'\n', source.text.as_bytes().get(at..).unwrap_or_default())
                            .map_or(source.text.len(), |i| at + i + 1);
                }
            }
        }
        failed
    }

    /// Gives the batch's vectors back, empty, for [`Batch::parse_reusing`].
    pub fn into_storage(self) -> BatchStorage {
        BatchStorage {
            entries: recycle(self.entries),
            tags: recycle(self.tags),
            fields: recycle(self.fields),
        }
    }

    /// The point at `index` (input order).
    pub fn point(&self, index: usize) -> Option<Point<'a, '_>> {
        let entry = self.entries.get(index)?;
        Some(Point {
            measurement: &entry.measurement,
            tags: self.tags.get(entry.tags.clone()).unwrap_or_default(),
            fields: self.fields.get(entry.fields.clone()).unwrap_or_default(),
            time: entry.time,
            time_given: entry.time_given,
        })
    }

    fn fill(&mut self, source: &Source<'a>, options: &Options) -> Result<(), Fail> {
        let default_time = options.precision.truncate(options.default_time);
        let mut cursor = Cursor::new(source.text);
        let mut keys = FieldKeys::default();
        while skip_blank_lines(&mut cursor) {
            let tags_start = self.tags.len();
            let fields_start = self.fields.len();
            let head = parse_line(
                &mut cursor,
                options,
                default_time,
                &mut self.tags,
                &mut self.fields,
                &mut keys,
            )?;
            self.entries.push(Entry {
                measurement: head.measurement,
                tags: tags_start..self.tags.len(),
                fields: fields_start..self.fields.len(),
                time: head.time,
                time_given: head.time_given,
            });
        }
        match source.utf8_error_at {
            Some(bad) => Err(Fail::at(ErrorKind::InvalidUtf8, bad)),
            None => Ok(()),
        }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the body held no point (only blank lines and comments, or nothing).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The points in input order.
    pub fn points(&self) -> impl ExactSizeIterator<Item = Point<'a, '_>> + '_ {
        self.entries.iter().map(|entry| Point {
            measurement: &entry.measurement,
            tags: self.tags.get(entry.tags.clone()).unwrap_or_default(),
            fields: self.fields.get(entry.fields.clone()).unwrap_or_default(),
            time: entry.time,
            time_given: entry.time_given,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_is_reused() {
        let options = Options::new(0);
        let body = b"cpu,host=a v=1 1\ncpu,host=b v=2,w=3i 2\n".repeat(100);
        let batch = Batch::parse(&body, &options).map_err(|e| e.to_string());
        let storage = batch.map(Batch::into_storage);
        let Ok(storage) = storage else {
            panic!("the body parses");
        };
        let bytes = storage.allocated_bytes();
        assert!(bytes > 0);
        let tags = storage.tags.as_ptr() as usize;
        let other = b"mem v=1 1\n".to_vec();
        let mut storage = storage;
        let Ok(batch) = Batch::parse_reusing(&other, &options, &mut storage) else {
            panic!("the body parses");
        };
        assert_eq!(batch.len(), 1);
        assert_eq!(batch.point(0).map(|p| p.measurement()), Some("mem"));
        let mut storage = batch.into_storage();
        assert_eq!(storage.tags.as_ptr() as usize, tags);
        assert!(storage.allocated_bytes() >= bytes);
        let Err(error) = Batch::parse_reusing(b"bad", &options, &mut storage) else {
            panic!("the body does not parse");
        };
        assert_eq!(error.line(), 1);
        assert!(storage.allocated_bytes() >= bytes);
    }

    /// Line, column, offset and kind of an error.
    type Place = (u64, u64, usize, ErrorKind);

    fn partial(body: &[u8]) -> (Vec<String>, Vec<Place>) {
        let mut errors = Vec::new();
        let (batch, failed) = Batch::parse_partial_reusing(
            body,
            &Options::new(7),
            &mut BatchStorage::default(),
            &mut errors,
            usize::MAX,
        );
        assert_eq!(failed, errors.len());
        let points = batch
            .points()
            .map(|p| format!("{} {:?} {}", p.measurement(), p.fields()[0].value, p.time()))
            .collect();
        let errors = errors
            .iter()
            .map(|e| (e.line(), e.column(), e.offset(), e.kind()))
            .collect();
        (points, errors)
    }

    #[test]
    fn partial_parse_keeps_the_good_lines_and_names_the_bad_ones() {
        let (points, errors) = partial(b"a v=1 1\nb v=oops 2\n\nc v=3 3\nd\ne v=5i\n");
        assert_eq!(points, ["a Float(1.0) 1", "c Float(3.0) 3", "e Int(5) 7"]);
        assert_eq!(
            errors,
            [
                (2, 5, 12, ErrorKind::InvalidFieldValue),
                (5, 2, 29, ErrorKind::MissingFields)
            ]
        );
        // The same body parsed whole fails at the first bad line.
        let whole = Batch::parse(b"a v=1 1\nb v=oops 2\n", &Options::new(0));
        assert_eq!(whole.map(|b| b.len()).map_err(|e| e.line()), Err(2));
    }

    #[test]
    fn partial_parse_fails_only_the_lines_with_invalid_utf8() {
        let (points, errors) =
            partial(b"a v=1 1\nb v=\"\xff\" 2\r\nc v=3 3\nd s=\"\xfe\"\ne v=5 5");
        assert_eq!(
            points,
            ["a Float(1.0) 1", "c Float(3.0) 3", "e Float(5.0) 5"]
        );
        assert_eq!(
            errors,
            [
                (2, 6, 13, ErrorKind::InvalidUtf8),
                (4, 6, 32, ErrorKind::InvalidUtf8)
            ]
        );
        let (points, errors) = partial(b"\xff");
        assert!(points.is_empty());
        assert_eq!(errors, [(1, 1, 0, ErrorKind::InvalidUtf8)]);
    }

    #[test]
    fn partial_parse_of_a_broken_string_resumes_at_the_next_line() {
        let (points, errors) = partial(b"a s=\"open 1\nb v=2 2\n");
        assert_eq!(points, ["b Float(2.0) 2"]);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].0, 1);
    }

    #[test]
    fn partial_parse_lists_at_most_max_errors_and_counts_all() {
        let body = b"a v=1 1\nbad\nbad\nb v=2 2\nbad\n\xff\n".repeat(3);
        let mut errors = Vec::new();
        let (batch, failed) = Batch::parse_partial_reusing(
            &body,
            &Options::new(0),
            &mut BatchStorage::default(),
            &mut errors,
            2,
        );
        assert_eq!((batch.len(), failed, errors.len()), (6, 12, 2));
        assert_eq!((errors[0].line(), errors[1].line()), (2, 3));
    }
}
