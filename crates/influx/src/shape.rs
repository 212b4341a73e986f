//! Column types, the known shape of each measurement's table, and the per-process cache of them.

use foldhash::HashMap;
use parking_lot::RwLock;
use sluice_lineproto::FieldValue;
use std::sync::Arc;

/// The PostgreSQL type of a column, as this API creates and writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// `timestamptz`: the `time` column.
    Timestamp,
    /// `text`: tags and string fields.
    Text,
    /// `float8`: float fields.
    Float,
    /// `int8`: integer (`i`) fields.
    Int,
    /// `numeric`: unsigned (`u`) fields, which may exceed int8.
    Numeric,
    /// `boolean`: boolean fields.
    Bool,
    /// `jsonb`: every tag of a point in one column (the `tags_as_jsonb` option).
    Jsonb,
    /// `uuid`: the series column of tables that merge duplicates.
    Uuid,
    /// Any other type (a table made by hand): nothing this API writes fits it.
    Other(u32),
}

impl ColumnType {
    /// The type a field value needs.
    pub fn of_value(value: &FieldValue<'_>) -> ColumnType {
        match value {
            FieldValue::Float(_) => ColumnType::Float,
            FieldValue::Int(_) => ColumnType::Int,
            FieldValue::UInt(_) => ColumnType::Numeric,
            FieldValue::String(_) => ColumnType::Text,
            FieldValue::Bool(_) => ColumnType::Bool,
        }
    }

    /// The type of a column from its `pg_attribute.atttypid`.
    pub fn from_oid(oid: u32) -> ColumnType {
        match oid {
            1184 => ColumnType::Timestamp,
            // varchar and bpchar take the same binary input as text.
            25 | 1043 => ColumnType::Text,
            701 => ColumnType::Float,
            20 => ColumnType::Int,
            1700 => ColumnType::Numeric,
            16 => ColumnType::Bool,
            3802 => ColumnType::Jsonb,
            2950 => ColumnType::Uuid,
            other => ColumnType::Other(other),
        }
    }

    /// A small number per type, for hashing.
    pub fn tag(self) -> u8 {
        match self {
            ColumnType::Timestamp => 1,
            ColumnType::Text => 2,
            ColumnType::Float => 3,
            ColumnType::Int => 4,
            ColumnType::Numeric => 5,
            ColumnType::Bool => 6,
            ColumnType::Jsonb => 7,
            ColumnType::Uuid => 9,
            ColumnType::Other(_) => 8,
        }
    }

    /// The SQL name used in CREATE TABLE and ALTER TABLE.
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Timestamp => "timestamptz",
            ColumnType::Text => "text",
            ColumnType::Float => "float8",
            ColumnType::Int => "int8",
            ColumnType::Numeric => "numeric",
            ColumnType::Bool => "boolean",
            ColumnType::Jsonb => "jsonb",
            ColumnType::Uuid => "uuid",
            ColumnType::Other(_) => "unknown",
        }
    }

    /// The name InfluxDB uses in its type conflict messages.
    pub fn influx_name(self) -> &'static str {
        match self {
            ColumnType::Timestamp => "timestamp",
            ColumnType::Text => "string",
            ColumnType::Float => "float",
            ColumnType::Int => "integer",
            ColumnType::Numeric => "unsigned",
            ColumnType::Bool => "boolean",
            ColumnType::Jsonb => "jsonb",
            ColumnType::Uuid => "uuid",
            ColumnType::Other(_) => "another PostgreSQL type",
        }
    }
}

/// The columns a table is known to have (a snapshot of the catalog, grown as this API adds).
#[derive(Debug, Clone, Default)]
pub struct TableShape {
    pub columns: HashMap<String, ColumnType>,
    /// The days of a partitioned table's partitions (see [`crate::retention`]); `None` for a
    /// table without partitions.
    pub partitions: Option<std::collections::BTreeSet<i64>>,
}

impl TableShape {
    /// The type of column `name`, if the table has it.
    pub fn get(&self, name: &str) -> Option<ColumnType> {
        self.columns.get(name).copied()
    }

    /// Whether the table merges duplicate points: it has the series column (and its unique
    /// index on time and series), see [`crate::merge`].
    pub fn merges(&self) -> bool {
        self.get(crate::merge::SERIES_COLUMN) == Some(ColumnType::Uuid)
    }
}

/// The known tables of each schema. Read on every write (one short read lock); written only
/// after a transaction that read the catalog or changed a table committed.
#[derive(Debug, Default)]
pub struct ShapeCache {
    schemas: RwLock<HashMap<String, HashMap<String, Arc<TableShape>>>>,
}

impl ShapeCache {
    /// Whether `schema` is known to exist.
    pub fn has_schema(&self, schema: &str) -> bool {
        self.schemas.read().contains_key(schema)
    }

    /// The known shape of `schema.table`.
    pub fn table(&self, schema: &str, table: &str) -> Option<Arc<TableShape>> {
        self.schemas.read().get(schema)?.get(table).cloned()
    }

    /// Records that `schema` exists.
    pub fn add_schema(&self, schema: &str) {
        self.schemas.write().entry(schema.to_owned()).or_default();
    }

    /// Records the shape of `schema.table`.
    pub fn put_table(&self, schema: &str, table: &str, shape: TableShape) {
        self.schemas
            .write()
            .entry(schema.to_owned())
            .or_default()
            .insert(table.to_owned(), Arc::new(shape));
    }

    /// Forgets everything known of `schema` (a table or column vanished behind our back).
    pub fn forget_schema(&self, schema: &str) {
        self.schemas.write().remove(schema);
    }
}
