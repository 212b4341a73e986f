//! Grouping a parsed body by table: each measurement's columns, and where each point's values go.

use crate::reply::ApiError;
use crate::shape::{ColumnType, TableShape};
use foldhash::HashMap;
use sluice_lineproto::Point;

/// PostgreSQL cuts identifiers to 63 bytes; longer names would silently collide.
pub const MAX_IDENTIFIER_LEN: usize = 63;

/// The column holding every tag in the `tags_as_jsonb` layout.
pub const TAGS_COLUMN: &str = "tags";

/// The column holding the point's time.
pub const TIME_COLUMN: &str = "time";

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
    pub name: &'b str,
    pub ty: ColumnType,
    pub role: Role,
}

/// Where the values of points with one set of keys go: the column position of each tag (in the
/// point's tag order) then of each field (in field order). Points of one table nearly always
/// share a layout, so it is found by comparing keys with the previous point's, without hashing.
#[derive(Debug)]
pub struct Layout<'b> {
    keys: Vec<&'b str>,
    tag_count: usize,
    pub positions: Vec<usize>,
}

impl Layout<'_> {
    fn fits(&self, point: &Point<'_, '_>, jsonb_tags: bool) -> bool {
        let tags = if jsonb_tags { &[][..] } else { point.tags() };
        self.tag_count == tags.len()
            && self.keys.len() == tags.len() + point.fields().len()
            && tags
                .iter()
                .map(|t| &*t.key)
                .chain(point.fields().iter().map(|f| &*f.key))
                .zip(&self.keys)
                .all(|(a, b)| a == *b)
    }
}

/// The rows of one table in this body.
#[derive(Debug)]
pub struct TablePlan<'b> {
    pub name: &'b str,
    /// The columns written, in COPY order after `time`.
    pub columns: Vec<PlannedColumn<'b>>,
    index: HashMap<&'b str, usize>,
    pub layouts: Vec<Layout<'b>>,
    /// Each row: the point's index in the body and its layout.
    pub rows: Vec<(usize, usize)>,
}

impl<'b> TablePlan<'b> {
    fn new(name: &'b str, jsonb_tags: bool) -> TablePlan<'b> {
        let mut plan = TablePlan {
            name,
            columns: Vec::new(),
            index: HashMap::default(),
            layouts: Vec::new(),
            rows: Vec::new(),
        };
        if jsonb_tags {
            plan.column(TAGS_COLUMN, ColumnType::Jsonb, Role::TagsJson);
        }
        plan
    }

    fn column(&mut self, name: &'b str, ty: ColumnType, role: Role) -> usize {
        let position = self.columns.len();
        self.columns.push(PlannedColumn { name, ty, role });
        self.index.insert(name, position);
        position
    }

    /// The position of column `key` for a value of type `ty`, adding the column on first sight.
    fn position(&mut self, key: &'b str, ty: ColumnType, role: Role) -> Result<usize, ApiError> {
        if let Some(&position) = self.index.get(key) {
            let column = &self.columns[position];
            if column.ty != ty || column.role != role {
                return Err(conflict(self.name, key, ty, column.ty));
            }
            return Ok(position);
        }
        if key.len() > MAX_IDENTIFIER_LEN {
            return Err(too_long("key", key));
        }
        Ok(self.column(key, ty, role))
    }

    fn add_layout(&mut self, point: &Point<'b, 'b>, jsonb_tags: bool) -> Result<usize, ApiError> {
        let tags = if jsonb_tags { &[][..] } else { point.tags() };
        let mut keys = Vec::with_capacity(tags.len() + point.fields().len());
        let mut positions = Vec::with_capacity(keys.capacity());
        for tag in tags {
            let key: &'b str = cow_str(&tag.key);
            positions.push(self.position(key, ColumnType::Text, Role::Tag)?);
            keys.push(key);
        }
        for field in point.fields() {
            let key: &'b str = cow_str(&field.key);
            let ty = ColumnType::of_value(&field.value);
            positions.push(self.position(key, ty, Role::Field)?);
            keys.push(key);
        }
        self.layouts.push(Layout {
            keys,
            tag_count: tags.len(),
            positions,
        });
        Ok(self.layouts.len() - 1)
    }

    /// The columns the table lacks, given what it is known to have; a column of another type
    /// is a conflict, named in the error.
    pub fn missing_columns(&self, shape: &TableShape) -> Result<Vec<usize>, ApiError> {
        let mut missing = Vec::new();
        match shape.get(TIME_COLUMN) {
            None | Some(ColumnType::Timestamp) => {}
            Some(other) => {
                return Err(conflict(
                    self.name,
                    TIME_COLUMN,
                    ColumnType::Timestamp,
                    other,
                ));
            }
        }
        for (position, column) in self.columns.iter().enumerate() {
            match shape.get(column.name) {
                None => missing.push(position),
                Some(ty) if ty == column.ty => {}
                Some(ty) => return Err(conflict(self.name, column.name, column.ty, ty)),
            }
        }
        Ok(missing)
    }

    /// Whether the known shape lacks the `time` column (a table made by hand).
    pub fn lacks_time(shape: &TableShape) -> bool {
        shape.get(TIME_COLUMN).is_none()
    }

    /// The field values of a row's layout check against the columns (a layout fitted by keys
    /// may still carry other value types).
    fn check_types(&self, layout: usize, point: &Point<'_, '_>) -> Result<(), ApiError> {
        let layout = &self.layouts[layout];
        let positions = &layout.positions[layout.tag_count..];
        for (field, &position) in point.fields().iter().zip(positions) {
            let ty = ColumnType::of_value(&field.value);
            let column = &self.columns[position];
            if column.ty != ty {
                return Err(conflict(self.name, &field.key, ty, column.ty));
            }
        }
        Ok(())
    }
}

/// The body grouped by table, in order of first appearance.
#[derive(Debug, Default)]
pub struct Plan<'b> {
    pub tables: Vec<TablePlan<'b>>,
}

impl<'b> Plan<'b> {
    /// Groups `points` by measurement; a field whose type differs between lines (or which is
    /// also a tag) fails the plan.
    pub fn build(points: &[Point<'b, 'b>], jsonb_tags: bool) -> Result<Plan<'b>, ApiError> {
        let mut plan = Plan::default();
        let mut by_name: HashMap<&'b str, usize> = HashMap::default();
        let mut last_table = usize::MAX;
        for (index, point) in points.iter().enumerate() {
            let name: &'b str = point.measurement();
            let table = match plan.tables.get(last_table) {
                Some(t) if t.name == name => last_table,
                _ => match by_name.get(name) {
                    Some(&t) => t,
                    None => {
                        if name.len() > MAX_IDENTIFIER_LEN {
                            return Err(too_long("measurement", name));
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
            let layout = match table.rows.last() {
                Some(&(_, last)) if table.layouts[last].fits(point, jsonb_tags) => {
                    table.check_types(last, point)?;
                    last
                }
                _ => table.add_layout(point, jsonb_tags)?,
            };
            table.rows.push((index, layout));
        }
        Ok(plan)
    }
}

fn cow_str<'b>(cow: &'b std::borrow::Cow<'b, str>) -> &'b str {
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
