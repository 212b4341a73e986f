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
}
