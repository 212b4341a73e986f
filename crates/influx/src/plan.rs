//! Grouping a parsed body by table: each measurement's columns, the distinct key sets (layouts)
//! of its points, and the points rejected on the way (partial writes).

use crate::reply::ApiError;
use crate::shape::{ColumnType, TableShape};
use foldhash::HashMap;
use sluice_lineproto::{FieldValue, Point};
use std::borrow::Cow;
use std::hash::{BuildHasher, Hasher};

/// PostgreSQL cuts identifiers to 63 bytes; longer names would silently collide.
pub const MAX_IDENTIFIER_LEN: usize = 63;

/// The column holding every tag in the `tags_as_jsonb` layout.
pub const TAGS_COLUMN: &str = "tags";

/// The column holding the point's time.
pub const TIME_COLUMN: &str = "time";

/// Column names a tag or field key cannot have as they are: the point's `time` column,
/// PostgreSQL's system columns, and the series column and staging ordinal of merging tables. Such a key is stored in the column `<key>_tag` (a tag) or
/// `<key>_field` (a field).
pub const RESERVED_COLUMNS: &[&str] = &[
    "time",
    "tableoid",
    "xmin",
    "cmin",
    "xmax",
    "cmax",
    "ctid",
    "sluice_series",
    "sluice_n",
];

/// Reasons listed in a partial write's message; beyond them only the count grows.
pub const MAX_REASONS: usize = 20;

/// What a column carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Tag,
    Field,
    /// All tags as one jsonb object.
    TagsJson,
}

/// A column the body writes to (besides `time`, which every row has).
#[derive(Debug, Clone)]
pub struct PlannedColumn<'b> {
    pub name: Cow<'b, str>,
    pub ty: ColumnType,
    pub role: Role,
}

/// The column a tag or field key is stored in (see [`RESERVED_COLUMNS`]).
pub fn column_name<'b>(key: &'b str, role: Role) -> Cow<'b, str> {
    if RESERVED_COLUMNS.contains(&key) {
        let suffix = if role == Role::Tag { "_tag" } else { "_field" };
        Cow::Owned(format!("{key}{suffix}"))
    } else {
        Cow::Borrowed(key)
    }
}

/// Points with one set of keys and field types: the keys (tags then fields, as the points
/// carry them), the fields' types, and the column each value goes to, in COPY order (the jsonb
/// tags column first when tags are jsonb).
#[derive(Debug)]
pub struct Layout<'b> {
    keys: Vec<&'b str>,
    tag_keys: usize,
    field_types: Vec<ColumnType>,
    pub positions: Vec<usize>,
    /// How many rows of the body have this layout.
    pub rows: usize,
}

impl Layout<'_> {
    fn fits(&self, point: &Point<'_, '_>, jsonb_tags: bool) -> bool {
        let tags = if jsonb_tags { &[][..] } else { point.tags() };
        self.tag_keys == tags.len()
            && self.keys.len() == tags.len() + point.fields().len()
            && tags
                .iter()
                .map(|t| &*t.key)
                .chain(point.fields().iter().map(|f| &*f.key))
                .zip(&self.keys)
                .all(|(a, b)| a == *b)
            && point
                .fields()
                .iter()
                .zip(&self.field_types)
                .all(|(f, &ty)| ColumnType::of_value(&f.value) == ty)
    }
}

/// A hash of a point's keys and field types, to find its layout among many without building
/// a key list.
fn keys_hash(point: &Point<'_, '_>, jsonb_tags: bool) -> u64 {
    let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
    if !jsonb_tags {
        for tag in point.tags() {
            hasher.write(tag.key.as_bytes());
            hasher.write_u8(0xff);
        }
    }
    hasher.write_u8(0xfe);
    for field in point.fields() {
        hasher.write(field.key.as_bytes());
        hasher.write_u8(ColumnType::of_value(&field.value).tag());
    }
    hasher.finish()
}

/// The rows of one table in this body.
#[derive(Debug)]
pub struct TablePlan<'b> {
    pub name: &'b str,
    /// The columns written, in order of first sight (COPY order after `time`). A key seen with
    /// values of two types has two entries (variants); the table keeps one type, the others'
    /// points are type conflicts (see [`TablePlan::conflicts`]).
    pub columns: Vec<PlannedColumn<'b>>,
    index: HashMap<Cow<'b, str>, Vec<usize>>,
    pub layouts: Vec<Layout<'b>>,
    by_keys: HashMap<u64, Vec<usize>>,
    /// Each row: the point's index in the body and its layout.
    pub rows: Vec<(u32, u32)>,
    jsonb_tags: bool,
}

impl<'b> TablePlan<'b> {
    fn new(name: &'b str, jsonb_tags: bool) -> TablePlan<'b> {
        let mut plan = TablePlan {
            name,
            columns: Vec::new(),
            index: HashMap::default(),
            layouts: Vec::new(),
            by_keys: HashMap::default(),
            rows: Vec::new(),
            jsonb_tags,
        };
        if jsonb_tags {
            plan.columns.push(PlannedColumn {
                name: Cow::Borrowed(TAGS_COLUMN),
                ty: ColumnType::Jsonb,
                role: Role::TagsJson,
            });
            plan.index.insert(Cow::Borrowed(TAGS_COLUMN), vec![0]);
        }
        plan
    }

    /// Whether tags go to one jsonb column.
    pub fn jsonb_tags(&self) -> bool {
        self.jsonb_tags
    }

    /// The layout of `point`: the previous row's, one seen before, or a new one. A point whose
    /// keys or values cannot be stored is an error, and leaves the plan as it was.
    fn layout_of(&mut self, point: &Point<'b, 'b>) -> Result<usize, ApiError> {
        let jsonb = self.jsonb_tags;
        if let Some(&(_, last)) = self.rows.last() {
            let last = last as usize;
            if self.layouts[last].fits(point, jsonb) {
                check_values(self.name, point)?;
                return Ok(last);
            }
        }
        let hash = keys_hash(point, jsonb);
        if let Some(candidates) = self.by_keys.get(&hash)
            && let Some(&found) = candidates
                .iter()
                .find(|&&l| self.layouts[l].fits(point, jsonb))
        {
            check_values(self.name, point)?;
            return Ok(found);
        }
        let layout = self.add_layout(point)?;
        self.by_keys.entry(hash).or_default().push(layout);
        Ok(layout)
    }

    /// Adds the layout of `point`, with any columns it brings; checks everything first, so a
    /// refused point adds nothing.
    fn add_layout(&mut self, point: &Point<'b, 'b>) -> Result<usize, ApiError> {
        check_values(self.name, point)?;
        let tags = if self.jsonb_tags {
            &[][..]
        } else {
            point.tags()
        };
        let mut keys = Vec::with_capacity(tags.len() + point.fields().len());
        let mut wanted = Vec::with_capacity(keys.capacity() + 1);
        if self.jsonb_tags {
            wanted.push((
                Cow::Borrowed(TAGS_COLUMN),
                ColumnType::Jsonb,
                Role::TagsJson,
            ));
        }
        for tag in tags {
            let key: &'b str = cow_str(&tag.key);
            keys.push(key);
            wanted.push((column_name(key, Role::Tag), ColumnType::Text, Role::Tag));
        }
        let mut field_types = Vec::with_capacity(point.fields().len());
        for field in point.fields() {
            let key: &'b str = cow_str(&field.key);
            keys.push(key);
            let ty = ColumnType::of_value(&field.value);
            field_types.push(ty);
            wanted.push((column_name(key, Role::Field), ty, Role::Field));
        }
        for (i, (name, _, role)) in wanted.iter().enumerate() {
            if name.len() > MAX_IDENTIFIER_LEN {
                let what = if *role == Role::Tag {
                    "tag key"
                } else {
                    "field key"
                };
                return Err(too_long(what, name));
            }
            if wanted[..i].iter().any(|(other, _, _)| other == name) {
                return Err(ApiError::Invalid(format!(
                    "{name:?} is both a tag and a field of a point of measurement {:?}: one                      table column cannot hold both",
                    self.name
                )));
            }
        }
        let mut positions = Vec::with_capacity(wanted.len());
        for (name, ty, role) in wanted {
            let variants = self.index.entry(name.clone()).or_default();
            let position = match variants.iter().find(|&&p| self.columns[p].ty == ty) {
                Some(&position) => position,
                None => {
                    let position = self.columns.len();
                    variants.push(position);
                    self.columns.push(PlannedColumn { name, ty, role });
                    position
                }
            };
            positions.push(position);
        }
        self.layouts.push(Layout {
            keys,
            tag_keys: tags.len(),
            field_types,
            positions,
            rows: 0,
        });
        Ok(self.layouts.len() - 1)
    }

    /// The type each planned column conflicts with (`None` where it fits): the table's type
    /// when it has the column, else the type of the column's first variant in the body (the
    /// first point to bring a key sets its type, as in InfluxDB).
    pub fn conflicts(&self, shape: &TableShape) -> Vec<Option<ColumnType>> {
        self.columns
            .iter()
            .map(|column| {
                let kept = shape.get(&column.name).or_else(|| {
                    let first = self.index.get(&*column.name)?.first()?;
                    Some(self.columns[*first].ty)
                });
                kept.filter(|&ty| ty != column.ty)
            })
            .collect()
    }

    /// The type conflict of planned column `position` with the type `kept`.
    pub fn conflict_error(&self, position: usize, kept: ColumnType) -> ApiError {
        let column = &self.columns[position];
        let key = column
            .name
            .strip_suffix("_field")
            .filter(|k| RESERVED_COLUMNS.contains(k));
        conflict(self.name, key.unwrap_or(&column.name), column.ty, kept)
    }

    /// Whether the known shape lacks the `time` column (a table made by hand).
    pub fn lacks_time(shape: &TableShape) -> bool {
        shape.get(TIME_COLUMN).is_none()
    }

    /// Whether the known `time` column is not a `timestamptz`.
    pub fn time_conflict(&self, shape: &TableShape) -> Option<ApiError> {
        match shape.get(TIME_COLUMN) {
            None | Some(ColumnType::Timestamp) => None,
            Some(other) => Some(conflict(
                self.name,
                TIME_COLUMN,
                ColumnType::Timestamp,
                other,
            )),
        }
    }
}

/// Points rejected while planning or writing, for a partial write's answer.
#[derive(Debug, Default)]
pub struct Rejections {
    /// How many points were dropped.
    pub dropped: usize,
    /// Why, one line each (identical reasons once), at most [`MAX_REASONS`].
    pub reasons: Vec<String>,
    /// Reasons not listed.
    pub unlisted: usize,
    /// Whether every rejection was a line that did not parse.
    pub parse_only: bool,
}

impl Rejections {
    /// Records `count` points dropped for `reason` (made only when it will be listed).
    pub fn add(&mut self, count: usize, reason: impl FnOnce() -> String, parse: bool) {
        if self.dropped == 0 {
            self.parse_only = true;
        }
        self.dropped += count;
        self.parse_only &= parse;
        if self.reasons.len() < MAX_REASONS {
            let reason = reason();
            if !self.reasons.contains(&reason) {
                self.reasons.push(reason);
            }
        } else {
            self.unlisted += 1;
        }
    }

    /// Records `count` points dropped without listing why (beyond the listed ones).
    pub fn add_unlisted(&mut self, count: usize, parse: bool) {
        if count == 0 {
            return;
        }
        if self.dropped == 0 {
            self.parse_only = true;
        }
        self.dropped += count;
        self.parse_only &= parse;
        self.unlisted += count;
    }

    /// Adds another set of rejections.
    pub fn extend(&mut self, other: Rejections) {
        if other.dropped == 0 {
            return;
        }
        if self.dropped == 0 {
            *self = other;
            return;
        }
        self.dropped += other.dropped;
        self.parse_only &= other.parse_only;
        self.unlisted += other.unlisted;
        for reason in other.reasons {
            if self.reasons.len() >= MAX_REASONS {
                self.unlisted += 1;
            } else if !self.reasons.contains(&reason) {
                self.reasons.push(reason);
            }
        }
    }

    /// Whether nothing was rejected.
    pub fn is_empty(&self) -> bool {
        self.dropped == 0
    }

    /// The reasons as InfluxDB joins them: one per line, with a count of those not listed.
    pub fn joined(&self) -> String {
        let mut text = self.reasons.join("\n");
        if self.unlisted > 0 {
            text.push_str(&format!("\n(and {} more)", self.unlisted));
        }
        text
    }
}

/// The body grouped by table, in order of first appearance, and the points left out.
#[derive(Debug, Default)]
pub struct Plan<'b> {
    pub tables: Vec<TablePlan<'b>>,
    pub rejected: Rejections,
}

impl<'b> Plan<'b> {
    /// Groups `points` by measurement. A point that cannot be stored (a field whose type
    /// differs from an earlier line's, a name too long, a value PostgreSQL cannot hold) fails
    /// the plan when `strict`, and is left out with its reason otherwise.
    pub fn build(
        points: impl Iterator<Item = Point<'b, 'b>>,
        jsonb_tags: bool,
        strict: bool,
    ) -> Result<Plan<'b>, ApiError> {
        let mut plan = Plan::default();
        let mut by_name: HashMap<&'b str, usize> = HashMap::default();
        let mut last_table = usize::MAX;
        for (index, point) in points.enumerate() {
            let point = &point;
            let name: &'b str = point.measurement();
            let table = match plan.tables.get(last_table) {
                Some(t) if t.name == name => last_table,
                _ => match by_name.get(name) {
                    Some(&t) => t,
                    None => {
                        if name.len() > MAX_IDENTIFIER_LEN {
                            let error = too_long("measurement", name);
                            if strict {
                                return Err(error);
                            }
                            plan.rejected.add(1, || error.to_string(), false);
                            continue;
                        }
                        plan.tables.push(TablePlan::new(name, jsonb_tags));
                        by_name.insert(name, plan.tables.len() - 1);
                        plan.tables.len() - 1
                    }
                },
            };
            last_table = table;
            let Some(table) = plan.tables.get_mut(table) else {
                continue;
            };
            match table.layout_of(point) {
                Ok(layout) => {
                    table.layouts[layout].rows += 1;
                    table.rows.push((index as u32, layout as u32));
                }
                Err(error) if strict => return Err(error),
                Err(error) => plan.rejected.add(1, || error.to_string(), false),
            }
        }
        Ok(plan)
    }
}

/// The field values of a point PostgreSQL can store: text cannot hold the NUL character.
fn check_values(measurement: &str, point: &Point<'_, '_>) -> Result<(), ApiError> {
    for field in point.fields() {
        if let FieldValue::String(text) = &field.value
            && memchr::memchr(0, text.as_bytes()).is_some()
        {
            return Err(ApiError::Invalid(format!(
                "field {:?} of measurement {measurement:?} holds a NUL character (\\u0000), \
                     which PostgreSQL text cannot store",
                field.key
            )));
        }
    }
    Ok(())
}

fn cow_str<'b>(cow: &'b Cow<'b, str>) -> &'b str {
    cow
}

fn conflict(measurement: &str, key: &str, given: ColumnType, existing: ColumnType) -> ApiError {
    ApiError::TypeConflict {
        measurement: measurement.to_owned(),
        field: key.to_owned(),
        given: given.influx_name(),
        existing: existing.influx_name(),
    }
}

fn too_long(what: &str, name: &str) -> ApiError {
    ApiError::Invalid(format!(
        "{what} {name:?} is longer than PostgreSQL's identifier limit of {MAX_IDENTIFIER_LEN} bytes"
    ))
}
