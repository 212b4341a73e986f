//! What the server's catalog says of the types a result shows, read from `pg_type` (with
//! `pg_range` and the attributes of composites) once per type and kept per connection.

use crate::conn::Connection;
use crate::error::Result;
use crate::types::Oid;
use std::collections::HashMap;
use std::sync::Arc;

/// One type as the catalog describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInfo {
    /// `pg_type.oid`.
    pub oid: Oid,
    /// The namespace the type lives in.
    pub schema: Box<str>,
    /// `typname`.
    pub name: Box<str>,
    /// `typtype`: `b` base, `c` composite, `d` domain, `e` enum, `p` pseudo, `r` range,
    /// `m` multirange.
    pub typtype: u8,
    /// `typcategory`: `A` array, `B` boolean, `N` numeric, `S` string, `U` user-defined, ...
    pub category: u8,
    /// `typelem`: the element type of an array type, else 0.
    pub element: Oid,
    /// `typbasetype`: the type a domain is over, else 0.
    pub base: Oid,
    /// `typdelim`: the delimiter between array elements of this type in text form.
    pub delimiter: u8,
    /// The element type of a range type, else 0.
    pub range_subtype: Oid,
    /// The attributes of a composite type (name, type), in order.
    pub fields: Box<[(Box<str>, Oid)]>,
}

impl TypeInfo {
    /// Whether this is an array type.
    pub fn is_array(&self) -> bool {
        self.category == b'A' && self.element != 0
    }

    /// Whether this is a domain.
    pub fn is_domain(&self) -> bool {
        self.typtype == b'd'
    }

    /// Whether this is a composite (row) type.
    pub fn is_composite(&self) -> bool {
        self.typtype == b'c'
    }

    /// The types this one leads to: an array's element, a domain's base, a range's subtype and
    /// a composite's attribute types.
    fn links(&self) -> impl Iterator<Item = Oid> + '_ {
        [self.element, self.base, self.range_subtype]
            .into_iter()
            .chain(self.fields.iter().map(|(_, oid)| *oid))
            .filter(|&oid| oid != 0)
    }
}

/// The types a connection has looked up.
#[derive(Debug, Default)]
pub(crate) struct TypeCache {
    types: HashMap<Oid, Arc<TypeInfo>>,
}

/// Rounds of lookups that follow links (a catalog cannot loop, but a bad answer must not hang).
const MAX_ROUNDS: usize = 8;

const TYPE_QUERY: &str = "\
SELECT t.oid, n.nspname::text, t.typname::text, t.typtype::text, t.typcategory::text, t.typelem, \
       t.typbasetype, t.typdelim::text, coalesce(r.rngsubtype, 0::oid), \
       coalesce(array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), \
                '{}'), \
       coalesce(array_agg(a.atttypid ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}') \
FROM pg_catalog.pg_type t \
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace \
LEFT JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid \
LEFT JOIN pg_catalog.pg_attribute a \
       ON t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped \
WHERE t.oid = ANY($1::text::oid[]) \
GROUP BY t.oid, n.nspname, r.rngsubtype";

fn first_byte(text: &str) -> u8 {
    text.as_bytes().first().copied().unwrap_or(0)
}

impl Connection {
    /// Looks up `oids` in the catalog, and the types they lead to (array elements, domain
    /// bases, range subtypes, composite attributes), unless this connection already has them:
    /// afterwards [`Connection::type_info`] answers for each. One query per level of links.
    pub async fn load_types(&mut self, oids: &[Oid]) -> Result<()> {
        let mut wanted: Vec<Oid> = oids.to_vec();
        for _ in 0..MAX_ROUNDS {
            wanted.retain(|oid| *oid != 0 && !self.types.types.contains_key(oid));
            wanted.sort_unstable();
            wanted.dedup();
            if wanted.is_empty() {
                break;
            }
            let list = format!(
                "{{{}}}",
                wanted
                    .iter()
                    .map(Oid::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let rows = self.query(TYPE_QUERY, &[&list]).await?;
            let mut next = Vec::new();
            for row in rows.iter() {
                let names: Vec<String> = row.get(9)?;
                let types: Vec<Oid> = row.get(10)?;
                let info = TypeInfo {
                    oid: row.get(0)?,
                    schema: row.get::<&str>(1)?.into(),
                    name: row.get::<&str>(2)?.into(),
                    typtype: first_byte(row.get(3)?),
                    category: first_byte(row.get(4)?),
                    element: row.get(5)?,
                    base: row.get(6)?,
                    delimiter: first_byte(row.get(7)?),
                    range_subtype: row.get(8)?,
                    fields: names
                        .into_iter()
                        .map(String::into_boxed_str)
                        .zip(types)
                        .collect(),
                };
                next.extend(info.links());
                self.types.types.insert(info.oid, Arc::new(info));
            }
            // Types the catalog does not know (dropped meanwhile) are not asked for again.
            for oid in &wanted {
                if !self.types.types.contains_key(oid) {
                    self.types.types.insert(*oid, Arc::new(unknown(*oid)));
                }
            }
            wanted = next;
        }
        Ok(())
    }

    /// What the catalog said of `oid`, if [`Connection::load_types`] looked it up.
    pub fn type_info(&self, oid: Oid) -> Option<&Arc<TypeInfo>> {
        self.types.types.get(&oid)
    }

    /// Forgets the types looked up (after DDL that drops or alters types).
    pub fn clear_type_cache(&mut self) {
        self.types.types.clear();
    }
}

/// A type the catalog no longer has: treated as text.
fn unknown(oid: Oid) -> TypeInfo {
    TypeInfo {
        oid,
        schema: "".into(),
        name: "".into(),
        typtype: b'b',
        category: b'X',
        element: 0,
        base: 0,
        delimiter: b',',
        range_subtype: 0,
        fields: Box::new([]),
    }
}
