//! The parsed forms: a point, its tags and fields, and a field's typed value.

use std::borrow::Cow;

/// A tag: key and value, borrowed from the input unless an escape forced a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag<'a> {
    /// The tag key, escapes resolved.
    pub key: Cow<'a, str>,
    /// The tag value, escapes resolved.
    pub value: Cow<'a, str>,
}

/// A field value with its line protocol type.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue<'a> {
    /// A float (`1.5`, `1`, `-3e-2`): finite, as InfluxDB rejects NaN and infinity.
    Float(f64),
    /// A signed integer, written with a trailing `i`.
    Int(i64),
    /// An unsigned integer, written with a trailing `u`.
    UInt(u64),
    /// A double-quoted string, unescaped.
    String(Cow<'a, str>),
    /// A boolean (`t`, `T`, `true`, `True`, `TRUE`, `f`, `F`, `false`, `False`, `FALSE`).
    Bool(bool),
}

impl FieldValue<'_> {
    /// The name of the value's type as `sluice lp parse` prints it.
    pub fn type_name(&self) -> &'static str {
        match self {
            FieldValue::Float(_) => "float",
            FieldValue::Int(_) => "int",
            FieldValue::UInt(_) => "uint",
            FieldValue::String(_) => "string",
            FieldValue::Bool(_) => "bool",
        }
    }
}

/// A field: key and typed value.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    /// The field key, escapes resolved.
    pub key: Cow<'a, str>,
    /// The field value, typed as the line protocol writes it.
    pub value: FieldValue<'a>,
}

/// One parsed line.
///
/// `'a` is the input's lifetime; `'s` is the storage the tags and fields live in (the
/// parser's scratch buffers or a [`crate::Batch`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point<'a, 's> {
    pub(crate) measurement: &'s Cow<'a, str>,
    pub(crate) tags: &'s [Tag<'a>],
    pub(crate) fields: &'s [Field<'a>],
    pub(crate) time: i64,
    pub(crate) time_given: bool,
}

impl<'a, 's> Point<'a, 's> {
    /// The measurement name, unescaped.
    pub fn measurement(&self) -> &'s str {
        self.measurement
    }

    /// The measurement name as parsed: borrowed from the input unless it had escapes.
    pub fn measurement_cow(&self) -> &'s Cow<'a, str> {
        self.measurement
    }

    /// The tags, sorted by key (byte order, as InfluxDB orders a series key), keys unique.
    pub fn tags(&self) -> &'s [Tag<'a>] {
        self.tags
    }

    /// The fields in input order. A key given twice keeps the first position and the last
    /// value, as InfluxDB keeps the last value.
    pub fn fields(&self) -> &'s [Field<'a>] {
        self.fields
    }

    /// The time in nanoseconds since the Unix epoch: the line's timestamp scaled from the
    /// parser's precision, or the default time truncated to that precision.
    pub fn time(&self) -> i64 {
        self.time
    }

    /// Whether the line carried a timestamp (otherwise [`Point::time`] is the default time).
    pub fn time_given(&self) -> bool {
        self.time_given
    }
}
