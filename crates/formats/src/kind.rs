//! What a column's values are in JSON: a scalar kind (number, boolean, JSON, string), alone or as
//! the elements of an array, learnt from the column's type OID and, for types that are not built
//! in (domains, enums, arrays of those), from what the connection learnt from the catalog.

pub use sluice_pg::types::Oid;
use sluice_pg::{Connection, TypeInfo};

/// The JSON shape of a single value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// int2, int4, int8, oid, float4, float8, numeric: a JSON number when the text is one
    /// (NaN and the infinities become strings).
    Number,
    /// bool: `true` / `false`.
    Bool,
    /// json, jsonb: embedded as is.
    Json,
    /// Everything else: an escaped JSON string of the type's text output.
    String,
}

/// How a column's values map to JSON: a scalar, or an array of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnKind {
    /// The kind of the value, or of each array element.
    pub scalar: Scalar,
    /// For an array type: the delimiter between elements in its text form (`,` for every
    /// built-in type but `box`, which uses `;`).
    pub array_delimiter: Option<u8>,
}

impl ColumnKind {
    /// A text-like column: values are JSON strings.
    pub const STRING: ColumnKind = ColumnKind::scalar(Scalar::String);

    /// A column of single values.
    pub const fn scalar(scalar: Scalar) -> ColumnKind {
        ColumnKind {
            scalar,
            array_delimiter: None,
        }
    }

    /// An array column with `delimiter` between elements.
    pub const fn array(element: Scalar, delimiter: u8) -> ColumnKind {
        ColumnKind {
            scalar: element,
            array_delimiter: Some(delimiter),
        }
    }

    /// Whether the column is an array.
    pub fn is_array(&self) -> bool {
        self.array_delimiter.is_some()
    }

    /// The kind of a built-in type, or `None` when the type needs a catalog lookup.
    pub fn builtin(oid: Oid) -> Option<ColumnKind> {
        use Scalar::*;
        let kind = match oid {
            20 | 21 | 23 | 26 | 700 | 701 | 1700 => ColumnKind::scalar(Number),
            16 => ColumnKind::scalar(Bool),
            114 | 3802 => ColumnKind::scalar(Json),
            // bytea, "char", name, text, bpchar, varchar, date, time, timestamp, timestamptz,
            // interval, timetz, uuid, inet, cidr, macaddr, macaddr8, money, bit, varbit, xml,
            // geometric types, tsvector, tsquery, jsonpath, record, unknown, int2vector,
            // oidvector, reg* types, xid, cid, tid, xid8, pg_lsn, refcursor, cstring.
            17 | 18 | 19 | 25 | 1042 | 1043 | 1082 | 1083 | 1114 | 1184 | 1186 | 1266 | 2950
            | 869 | 650 | 829 | 774 | 790 | 1560 | 1562 | 142 | 600 | 601 | 602 | 603 | 604
            | 628 | 718 | 3614 | 3615 | 4072 | 2249 | 705 | 22 | 30 | 24 | 2202 | 2203 | 2204
            | 2205 | 2206 | 3734 | 3769 | 4089 | 4096 | 4191 | 28 | 29 | 27 | 5069 | 3220
            | 1790 | 2275 => ColumnKind::STRING,
            1005 | 1007 | 1016 | 1028 | 1021 | 1022 | 1231 => ColumnKind::array(Number, b','),
            1000 => ColumnKind::array(Bool, b','),
            199 | 3807 => ColumnKind::array(Json, b','),
            1020 => ColumnKind::array(String, b';'),
            1001 | 1002 | 1003 | 1009 | 1014 | 1015 | 1115 | 1182 | 1183 | 1185 | 1187 | 1270
            | 2951 | 1041 | 651 | 1040 | 775 | 791 | 1561 | 1563 | 143 | 1017 | 1018 | 1019
            | 1027 | 629 | 719 | 3643 | 3645 | 4073 | 1008 | 2207 | 2208 | 2209 | 2210 | 2211
            | 1011 | 1012 | 1010 | 2287 | 1006 | 1013 => ColumnKind::array(String, b','),
            _ => return None,
        };
        Some(kind)
    }
}

/// How many domain or array links are followed before giving up (a catalog cannot loop, but a
/// bad lookup result must not hang us).
const MAX_LINKS: usize = 8;

/// The kind of type `oid`: built in, or followed through domains and arrays with `lookup` (what
/// the catalog says of a type); any type still unknown is a string.
pub fn resolve<'a>(oid: Oid, lookup: &impl Fn(Oid) -> Option<&'a TypeInfo>) -> ColumnKind {
    resolve_links(oid, lookup, MAX_LINKS)
}

fn resolve_links<'a>(
    oid: Oid,
    lookup: &impl Fn(Oid) -> Option<&'a TypeInfo>,
    links: usize,
) -> ColumnKind {
    if let Some(kind) = ColumnKind::builtin(oid) {
        return kind;
    }
    let Some(info) = lookup(oid) else {
        return ColumnKind::STRING;
    };
    if links == 0 {
        return ColumnKind::STRING;
    }
    if info.is_domain() {
        return resolve_links(info.base, lookup, links - 1);
    }
    if info.is_array() {
        let element = resolve_links(info.element, lookup, links - 1);
        // An array of arrays does not exist in PostgreSQL; a domain over an array type as
        // element is treated as a string.
        let scalar = if element.is_array() {
            Scalar::String
        } else {
            element.scalar
        };
        return ColumnKind::array(scalar, info.delimiter);
    }
    ColumnKind::STRING
}

/// The kinds of columns of types `oids`: built-in types directly, others from what `conn` has
/// learnt of them from the catalog (looked up once per connection).
pub async fn column_kinds(
    conn: &mut Connection,
    oids: &[Oid],
) -> Result<Vec<ColumnKind>, sluice_pg::Error> {
    let unknown: Vec<Oid> = oids
        .iter()
        .copied()
        .filter(|&oid| ColumnKind::builtin(oid).is_none())
        .collect();
    if !unknown.is_empty() {
        conn.load_types(&unknown).await?;
    }
    let lookup = |oid| conn.type_info(oid).map(|info| &**info);
    Ok(oids.iter().map(|&oid| resolve(oid, &lookup)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(oid: Oid, typtype: u8, category: u8, element: Oid, base: Oid) -> TypeInfo {
        TypeInfo {
            oid,
            schema: "public".into(),
            name: format!("t{oid}").into(),
            typtype,
            category,
            element,
            base,
            delimiter: b',',
            range_subtype: 0,
            fields: Box::new([]),
        }
    }

    fn lookup<'a>(known: &'a [TypeInfo]) -> impl Fn(Oid) -> Option<&'a TypeInfo> {
        move |oid| known.iter().find(|t| t.oid == oid)
    }

    #[test]
    fn builtins() {
        assert_eq!(
            ColumnKind::builtin(23),
            Some(ColumnKind::scalar(Scalar::Number))
        );
        assert_eq!(
            ColumnKind::builtin(3802),
            Some(ColumnKind::scalar(Scalar::Json))
        );
        assert_eq!(
            ColumnKind::builtin(1020),
            Some(ColumnKind::array(Scalar::String, b';'))
        );
        assert_eq!(ColumnKind::builtin(790), Some(ColumnKind::STRING));
        assert_eq!(ColumnKind::builtin(99999), None);
    }

    #[test]
    fn domains_enums_and_their_arrays() {
        // domain over int4, an array of that domain, an enum, an array of the enum, a domain
        // over int4[].
        let known = [
            row(50000, b'd', b'N', 0, 23),
            row(50001, b'b', b'A', 50000, 0),
            row(50002, b'e', b'E', 0, 0),
            row(50003, b'b', b'A', 50002, 0),
            row(50004, b'd', b'A', 0, 1007),
        ];
        let known = lookup(&known);
        assert_eq!(resolve(50000, &known), ColumnKind::scalar(Scalar::Number));
        assert_eq!(
            resolve(50001, &known),
            ColumnKind::array(Scalar::Number, b',')
        );
        assert_eq!(resolve(50002, &known), ColumnKind::STRING);
        assert_eq!(
            resolve(50003, &known),
            ColumnKind::array(Scalar::String, b',')
        );
        assert_eq!(
            resolve(50004, &known),
            ColumnKind::array(Scalar::Number, b',')
        );
        assert_eq!(resolve(60000, &known), ColumnKind::STRING);
    }

    #[test]
    fn cycles_end() {
        let known = [row(7, b'd', b'S', 0, 8), row(8, b'd', b'S', 0, 7)];
        assert_eq!(resolve(7, &lookup(&known)), ColumnKind::STRING);
    }
}
