//! Database rows as JSON objects (VIEWS.md, Values): `__` in column names nests, values typed by
//! the sluice-formats encoders; and the column kinds of a result, learnt once per type.

use sluice_formats::encode::write_json_value;
use sluice_formats::kind;
use sluice_formats::{ColumnKind, Oid};
use sluice_pg::{Column, Connection, Row};
use std::sync::Arc;

/// Writes rows of one result as JSON objects. The layout (keys, commas, braces of nested
/// objects) is computed once from the column names, so a row costs no allocation; it can be kept
/// and shared by later results of the same statement.
#[derive(Debug, Clone)]
pub struct ObjectWriter {
    layout: Arc<ObjectLayout>,
    scratch: Vec<u8>,
}

/// The fixed parts of the objects of one result's rows.
#[derive(Debug)]
pub struct ObjectLayout {
    /// Literal bytes, then the column whose value follows them, in output order.
    steps: Vec<(Vec<u8>, usize)>,
    /// The bytes after the last value (closing braces).
    tail: Vec<u8>,
    kinds: Vec<ColumnKind>,
    /// The type of each column, to tell whether a later result still fits.
    oids: Vec<Oid>,
}

impl ObjectLayout {
    /// Whether rows with `columns` can be written with this layout.
    pub fn fits(&self, columns: &[Column]) -> bool {
        self.oids.len() == columns.len()
            && self
                .oids
                .iter()
                .zip(columns)
                .all(|(oid, column)| *oid == column.type_oid())
    }
}

/// A node of the nesting tree built from the column names.
#[derive(Debug, Default)]
struct Node<'a> {
    /// Children in order of first appearance: a key and either a column or an object.
    children: Vec<(&'a str, Child<'a>)>,
}

#[derive(Debug)]
enum Child<'a> {
    Value(usize),
    Object(Node<'a>),
}

impl<'a> Node<'a> {
    fn insert(&mut self, path: &[&'a str], column: usize) {
        let Some((&first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            self.children.push((first, Child::Value(column)));
            return;
        }
        let existing = self
            .children
            .iter_mut()
            .find_map(|(key, child)| match child {
                Child::Object(node) if *key == first => Some(node),
                _ => None,
            });
        match existing {
            Some(node) => node.insert(rest, column),
            None => {
                let mut node = Node::default();
                node.insert(rest, column);
                self.children.push((first, Child::Object(node)));
            }
        }
    }

    /// Lays out this object's contents: `pending` holds the literal bytes not yet followed by a
    /// value.
    fn lay_out(&self, pending: &mut Vec<u8>, steps: &mut Vec<(Vec<u8>, usize)>) {
        pending.push(b'{');
        for (i, (key, child)) in self.children.iter().enumerate() {
            if i > 0 {
                pending.push(b',');
            }
            sluice_formats::encode::write_json_string(pending, key.as_bytes());
            pending.push(b':');
            match child {
                Child::Value(column) => steps.push((std::mem::take(pending), *column)),
                Child::Object(node) => node.lay_out(pending, steps),
            }
        }
        pending.push(b'}');
    }
}

impl ObjectWriter {
    /// A writer for rows with columns named `names` (in result order) of kinds `kinds`.
    /// `watched__last` becomes `{"watched": {"last": ...}}`; columns sharing a prefix are
    /// gathered in one object where the prefix first appears.
    pub fn new<'n>(names: impl IntoIterator<Item = &'n str>, kinds: Vec<ColumnKind>) -> Self {
        ObjectWriter::build(names, kinds, Vec::new())
    }

    fn build<'n>(
        names: impl IntoIterator<Item = &'n str>,
        kinds: Vec<ColumnKind>,
        oids: Vec<Oid>,
    ) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        let mut root = Node::default();
        let mut path: Vec<&str> = Vec::new();
        for (column, name) in names.iter().enumerate() {
            path.clear();
            path.extend(name.split("__"));
            // A name such as `a__` or `__b` keeps its empty parts as keys: still valid JSON.
            root.insert(&path, column);
        }
        let mut steps = Vec::with_capacity(names.len());
        let mut tail = Vec::new();
        root.lay_out(&mut tail, &mut steps);
        ObjectWriter {
            layout: Arc::new(ObjectLayout {
                steps,
                tail,
                kinds,
                oids,
            }),
            scratch: Vec::new(),
        }
    }

    /// A writer for a result's columns, kinds given in the same order.
    pub fn for_columns(columns: &[Column], kinds: Vec<ColumnKind>) -> Self {
        let oids = columns.iter().map(Column::type_oid).collect();
        ObjectWriter::build(columns.iter().map(Column::name), kinds, oids)
    }

    /// A writer with a layout kept from an earlier result.
    pub fn with_layout(layout: Arc<ObjectLayout>) -> Self {
        ObjectWriter {
            layout,
            scratch: Vec::new(),
        }
    }

    /// The layout, to keep for later results.
    pub fn layout(&self) -> &Arc<ObjectLayout> {
        &self.layout
    }

    /// Writes `row` as one JSON object (no newline) at the end of `out`.
    #[inline]
    pub fn write_row(&mut self, row: Row<'_>, out: &mut Vec<u8>) {
        let layout = &*self.layout;
        for (literal, column) in &layout.steps {
            out.extend_from_slice(literal);
            let kind = layout
                .kinds
                .get(*column)
                .copied()
                .unwrap_or(ColumnKind::STRING);
            write_json_value(out, kind, row.raw(*column), &mut self.scratch);
        }
        out.extend_from_slice(&layout.tail);
    }
}

/// The JSON kinds of `columns` (types that are not built in are looked up in the catalog once per
/// connection).
pub async fn column_kinds(
    conn: &mut Connection,
    columns: &[Column],
) -> Result<Vec<ColumnKind>, sluice_pg::Error> {
    let oids: Vec<_> = columns.iter().map(Column::type_oid).collect();
    kind::column_kinds(conn, &oids).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(names: &[&str]) -> (Vec<(String, usize)>, String) {
        let kinds = vec![ColumnKind::STRING; names.len()];
        let writer = ObjectWriter::new(names.iter().copied(), kinds);
        (
            writer
                .layout
                .steps
                .iter()
                .map(|(l, c)| (String::from_utf8_lossy(l).into_owned(), *c))
                .collect(),
            String::from_utf8_lossy(&writer.layout.tail).into_owned(),
        )
    }

    #[test]
    fn flat_columns_make_one_object() {
        let (steps, tail) = layout(&["a", "b"]);
        assert_eq!(
            steps,
            vec![("{\"a\":".to_owned(), 0), (",\"b\":".to_owned(), 1)]
        );
        assert_eq!(tail, "}");
    }

    #[test]
    fn double_underscores_nest_and_gather() {
        let (steps, tail) = layout(&["id", "watched__last", "name", "watched__count", "x__y__z"]);
        let text: Vec<String> = steps.iter().map(|(l, c)| format!("{l}<{c}>")).collect();
        assert_eq!(
            text.concat() + &tail,
            "{\"id\":<0>,\"watched\":{\"last\":<1>,\"count\":<3>},\"name\":<2>,\"x\":{\"y\":{\"z\":<4>}}}"
        );
    }

    #[test]
    fn no_columns_is_an_empty_object() {
        let (steps, tail) = layout(&[]);
        assert!(steps.is_empty());
        assert_eq!(tail, "{}");
    }
}
