//! Result rows: column metadata, blocks of rows sharing one buffer, and typed field access.
//!
//! A [`RowBlock`] is every DataRow that one read brought in: the raw message bytes (a `Bytes`
//! slice of the connection's read buffer, no copy) plus a flat table of field spans. Rows and
//! fields are views into it, so reading a row allocates nothing.

use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::{FieldDescription, FieldSpan};
use crate::types::{ConversionError, Format, FromSql, Oid};
use bytes::Bytes;
use std::sync::Arc;

/// One column of a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    name: Box<str>,
    type_oid: Oid,
    format: Format,
    table_oid: Oid,
    column_id: i16,
    type_size: i16,
    type_modifier: i32,
}

impl Column {
    pub(crate) fn from_description(d: &FieldDescription<'_>, format: Format) -> Column {
        Column {
            name: d.name.into(),
            type_oid: d.type_oid,
            format,
            table_oid: d.table_oid,
            column_id: d.column_id,
            type_size: d.type_size,
            type_modifier: d.type_modifier,
        }
    }

    pub(crate) fn with_format(&self, format: Format) -> Column {
        Column {
            format,
            ..self.clone()
        }
    }

    /// The column's name (its alias when the query gives one).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The OID of its data type.
    pub fn type_oid(&self) -> Oid {
        self.type_oid
    }

    /// The format its values arrive in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The OID of the table it comes from, or 0 for a computed column.
    pub fn table_oid(&self) -> Oid {
        self.table_oid
    }

    /// Its attribute number in that table, or 0.
    pub fn column_id(&self) -> i16 {
        self.column_id
    }

    /// The type's size (`pg_type.typlen`); negative for variable width.
    pub fn type_size(&self) -> i16 {
        self.type_size
    }

    /// The type modifier (`atttypmod`), e.g. the length of `char(84)` plus 4.
    pub fn type_modifier(&self) -> i32 {
        self.type_modifier
    }
}

/// The columns of a result, shared by all of its blocks.
pub type Columns = Arc<[Column]>;

/// Rows that arrived together, their fields slices of one shared buffer.
#[derive(Clone, Debug)]
pub struct RowBlock {
    data: Bytes,
    spans: Vec<FieldSpan>,
    rows: usize,
    columns: Columns,
}

impl RowBlock {
    pub(crate) fn new(
        data: Bytes,
        spans: Vec<FieldSpan>,
        rows: usize,
        columns: Columns,
    ) -> RowBlock {
        RowBlock {
            data,
            spans,
            rows,
            columns,
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the block holds no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The shared column list.
    pub fn shared_columns(&self) -> &Columns {
        &self.columns
    }

    /// Row `index`, if there is one.
    pub fn row(&self, index: usize) -> Option<Row<'_>> {
        if index >= self.rows {
            return None;
        }
        let n = self.columns.len();
        let spans = self.spans.get(index * n..(index + 1) * n)?;
        Some(Row {
            columns: &self.columns,
            data: &self.data,
            spans,
        })
    }

    /// The rows in order.
    pub fn iter(&self) -> BlockRows<'_> {
        BlockRows {
            block: self,
            next: 0,
        }
    }

    /// The raw bytes of the block: the DataRow messages as the server sent them.
    pub fn raw_data(&self) -> &Bytes {
        &self.data
    }

    /// All field spans, row after row; offsets are into [`RowBlock::raw_data`].
    pub fn spans(&self) -> &[FieldSpan] {
        &self.spans
    }
}

impl<'a> IntoIterator for &'a RowBlock {
    type Item = Row<'a>;
    type IntoIter = BlockRows<'a>;

    fn into_iter(self) -> BlockRows<'a> {
        self.iter()
    }
}

/// Iterator over the rows of a [`RowBlock`].
#[derive(Clone, Debug)]
pub struct BlockRows<'a> {
    block: &'a RowBlock,
    next: usize,
}

impl<'a> Iterator for BlockRows<'a> {
    type Item = Row<'a>;

    #[inline]
    fn next(&mut self) -> Option<Row<'a>> {
        let row = self.block.row(self.next)?;
        self.next += 1;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.block.rows - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for BlockRows<'_> {}

/// Something that picks a column: its index or its name.
pub trait ColumnIndex {
    /// The index in `columns`, if it names one.
    fn index(&self, columns: &[Column]) -> Option<usize>;
    /// How to name it in an error.
    fn describe(&self) -> String;
}

impl ColumnIndex for usize {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        (*self < columns.len()).then_some(*self)
    }
    fn describe(&self) -> String {
        format!("column {self}")
    }
}

impl ColumnIndex for &str {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        columns.iter().position(|c| c.name() == *self)
    }
    fn describe(&self) -> String {
        format!("column \"{self}\"")
    }
}

/// One row: a view of its fields in a [`RowBlock`].
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    columns: &'a [Column],
    data: &'a Bytes,
    spans: &'a [FieldSpan],
}

impl<'a> Row<'a> {
    /// The number of fields.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the row has no fields.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The columns.
    pub fn columns(&self) -> &'a [Column] {
        self.columns
    }

    /// The raw bytes of field `index` in its wire format; `None` for NULL or a bad index.
    #[inline]
    pub fn raw(&self, index: usize) -> Option<&'a [u8]> {
        let span = self.spans.get(index)?;
        if span.len < 0 {
            return None;
        }
        let start = span.start as usize;
        self.data.get(start..start + span.len as usize)
    }

    /// The raw fields in order.
    pub fn raw_fields(&self) -> impl ExactSizeIterator<Item = Option<&'a [u8]>> + 'a {
        let data = self.data;
        self.spans.iter().map(move |s| {
            if s.len < 0 {
                None
            } else {
                data.get(s.start as usize..s.start as usize + s.len as usize)
            }
        })
    }

    /// Field `index` as a `Bytes` sharing the block's buffer (no copy); `None` for NULL.
    pub fn bytes(&self, index: usize) -> Option<Bytes> {
        let span = self.spans.get(index)?;
        if span.len < 0 {
            return None;
        }
        let start = span.start as usize;
        Some(self.data.slice(start..start + span.len as usize))
    }

    /// Whether field `index` is NULL (or missing).
    pub fn is_null(&self, index: usize) -> bool {
        self.spans.get(index).is_none_or(|s| s.len < 0)
    }

    /// Field `idx` converted to `T`; a clear error names the column on a type mismatch or NULL.
    #[inline]
    pub fn get<T: FromSql<'a>>(&self, idx: impl ColumnIndex) -> Result<T> {
        let Some(index) = idx.index(self.columns) else {
            return Err(Error::new(
                ErrorKind::ColumnNotFound,
                format!(
                    "{} does not exist in a result of {} columns",
                    idx.describe(),
                    self.columns.len()
                ),
            ));
        };
        let column = &self.columns[index];
        if !T::accepts(column.type_oid) {
            return Err(column_error(
                column,
                index,
                ConversionError::wrong_type(column.type_oid, std::any::type_name::<T>()),
            ));
        }
        T::from_sql_nullable(column.type_oid, column.format, self.raw(index))
            .map_err(|e| column_error(column, index, e))
    }
}

fn column_error(column: &Column, index: usize, e: ConversionError) -> Error {
    Error::from(e).context(format!("column {index} (\"{}\")", column.name()))
}

/// A single row that owns its block (as returned by `query_one`).
#[derive(Clone, Debug)]
pub struct OwnedRow {
    block: RowBlock,
}

impl OwnedRow {
    pub(crate) fn new(block: RowBlock) -> OwnedRow {
        OwnedRow { block }
    }

    /// The row as a view.
    pub fn row(&self) -> Row<'_> {
        let n = self.block.columns.len();
        Row {
            columns: &self.block.columns,
            data: &self.block.data,
            spans: &self.block.spans[..n],
        }
    }

    /// Field `idx` converted to `T`.
    pub fn get<'a, T: FromSql<'a>>(&'a self, idx: impl ColumnIndex) -> Result<T> {
        self.row().get(idx)
    }

    /// The raw bytes of field `index`; `None` for NULL.
    pub fn raw(&self, index: usize) -> Option<&[u8]> {
        self.row().raw(index)
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.block.columns
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.block.columns.len()
    }

    /// Whether the row has no fields.
    pub fn is_empty(&self) -> bool {
        self.block.columns.is_empty()
    }
}

/// A whole result held in memory: its blocks and its command tag.
#[derive(Clone, Debug)]
pub struct Rows {
    columns: Columns,
    blocks: Vec<RowBlock>,
    len: usize,
    tag: CommandTag,
}

impl Rows {
    pub(crate) fn new(columns: Columns, blocks: Vec<RowBlock>, tag: CommandTag) -> Rows {
        let len = blocks.iter().map(RowBlock::len).sum();
        Rows {
            columns,
            blocks,
            len,
            tag,
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The blocks as they arrived.
    pub fn blocks(&self) -> &[RowBlock] {
        &self.blocks
    }

    /// The blocks as they arrived, owned.
    pub fn into_blocks(self) -> Vec<RowBlock> {
        self.blocks
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        self.blocks.iter().flat_map(RowBlock::iter)
    }

    /// Row `index` (walks the blocks).
    pub fn get(&self, mut index: usize) -> Option<Row<'_>> {
        for block in &self.blocks {
            if index < block.len() {
                return block.row(index);
            }
            index -= block.len();
        }
        None
    }

    /// The command tag (`SELECT 3`, `UPDATE 7`, ...).
    pub fn command_tag(&self) -> &CommandTag {
        &self.tag
    }
}

/// The tag of CommandComplete: what a statement did and to how many rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandTag(String);

impl CommandTag {
    pub(crate) fn new(tag: &str) -> CommandTag {
        CommandTag(tag.to_owned())
    }

    /// The tag text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number of rows the statement affected or returned (the tag's last number), or 0.
    pub fn rows_affected(&self) -> u64 {
        self.0
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

impl std::fmt::Display for CommandTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
