//! A whole body parsed at once: every point, or the first error (one bad line fails the batch).

use std::borrow::Cow;
use std::ops::Range;

use crate::error::{Error, ErrorKind, Fail};
use crate::fields::FieldKeys;
use crate::parser::{Options, Source, parse_line, skip_blank_lines};
use crate::point::{Field, Point, Tag};
use crate::scan::Cursor;

/// One point's place in the batch's flat storage.
#[derive(Debug, Clone)]
struct Entry<'a> {
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

impl<'a> Batch<'a> {
    /// Parses a whole body; the first bad line fails it, with that line's number and column.
    pub fn parse(input: &'a [u8], options: &Options) -> Result<Self, Error> {
        let source = Source::new(input);
        let mut batch = Batch {
            // Line protocol lines are rarely shorter than 40 bytes: a cheap upper bound that
            // avoids regrowing the vectors on typical bodies.
            entries: Vec::with_capacity(input.len() / 40 + 1),
            tags: Vec::new(),
            fields: Vec::new(),
        };
        batch
            .fill(&source, options)
            .map_err(|fail| source.error(fail, options))?;
        Ok(batch)
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
