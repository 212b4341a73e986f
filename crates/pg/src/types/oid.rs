//! Object identifiers of the built-in PostgreSQL types the driver knows, and their names.

/// A PostgreSQL object identifier.
pub type Oid = u32;

macro_rules! builtin_types {
    ($($name:ident = $oid:literal, $sql:literal;)*) => {
        $(#[doc = concat!("`", $sql, "`")] pub const $name: Oid = $oid;)*

        /// The SQL name of a built-in type, or `"unknown type"` for any other.
        pub fn type_name(oid: Oid) -> &'static str {
            match oid {
                $($oid => $sql,)*
                _ => "unknown type",
            }
        }
    };
}

builtin_types! {
    BOOL = 16, "bool";
    BYTEA = 17, "bytea";
    CHAR = 18, "\"char\"";
    NAME = 19, "name";
    INT8 = 20, "int8";
    INT2 = 21, "int2";
    INT4 = 23, "int4";
    TEXT = 25, "text";
    OID = 26, "oid";
    JSON = 114, "json";
    FLOAT4 = 700, "float4";
    FLOAT8 = 701, "float8";
    UNKNOWN = 705, "unknown";
    BPCHAR = 1042, "bpchar";
    VARCHAR = 1043, "varchar";
    DATE = 1082, "date";
    TIME = 1083, "time";
    TIMESTAMP = 1114, "timestamp";
    TIMESTAMPTZ = 1184, "timestamptz";
    INTERVAL = 1186, "interval";
    NUMERIC = 1700, "numeric";
    UUID = 2950, "uuid";
    JSONB = 3802, "jsonb";
    BOOL_ARRAY = 1000, "bool[]";
    BYTEA_ARRAY = 1001, "bytea[]";
    CHAR_ARRAY = 1002, "\"char\"[]";
    NAME_ARRAY = 1003, "name[]";
    INT2_ARRAY = 1005, "int2[]";
    INT4_ARRAY = 1007, "int4[]";
    TEXT_ARRAY = 1009, "text[]";
    BPCHAR_ARRAY = 1014, "bpchar[]";
    VARCHAR_ARRAY = 1015, "varchar[]";
    INT8_ARRAY = 1016, "int8[]";
    FLOAT4_ARRAY = 1021, "float4[]";
    FLOAT8_ARRAY = 1022, "float8[]";
    OID_ARRAY = 1028, "oid[]";
    TIMESTAMP_ARRAY = 1115, "timestamp[]";
    DATE_ARRAY = 1182, "date[]";
    TIME_ARRAY = 1183, "time[]";
    TIMESTAMPTZ_ARRAY = 1185, "timestamptz[]";
    INTERVAL_ARRAY = 1187, "interval[]";
    NUMERIC_ARRAY = 1231, "numeric[]";
    UUID_ARRAY = 2951, "uuid[]";
    JSON_ARRAY = 199, "json[]";
    JSONB_ARRAY = 3807, "jsonb[]";
}

/// Pairs of (element type, one-dimensional array type) for the built-in types above.
const ARRAY_TYPES: [(Oid, Oid); 22] = [
    (BOOL, BOOL_ARRAY),
    (BYTEA, BYTEA_ARRAY),
    (CHAR, CHAR_ARRAY),
    (NAME, NAME_ARRAY),
    (INT2, INT2_ARRAY),
    (INT4, INT4_ARRAY),
    (TEXT, TEXT_ARRAY),
    (BPCHAR, BPCHAR_ARRAY),
    (VARCHAR, VARCHAR_ARRAY),
    (INT8, INT8_ARRAY),
    (FLOAT4, FLOAT4_ARRAY),
    (FLOAT8, FLOAT8_ARRAY),
    (OID, OID_ARRAY),
    (TIMESTAMP, TIMESTAMP_ARRAY),
    (DATE, DATE_ARRAY),
    (TIME, TIME_ARRAY),
    (TIMESTAMPTZ, TIMESTAMPTZ_ARRAY),
    (INTERVAL, INTERVAL_ARRAY),
    (NUMERIC, NUMERIC_ARRAY),
    (UUID, UUID_ARRAY),
    (JSON, JSON_ARRAY),
    (JSONB, JSONB_ARRAY),
];

/// The element type of the built-in array type `array`, if it is one.
pub fn element_of(array: Oid) -> Option<Oid> {
    ARRAY_TYPES
        .iter()
        .find(|&&(_, oid)| oid == array)
        .map(|p| p.0)
}

/// The one-dimensional array type whose elements are `element`, if it is built in.
pub fn array_of(element: Oid) -> Option<Oid> {
    ARRAY_TYPES
        .iter()
        .find(|&&(oid, _)| oid == element)
        .map(|p| p.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_and_element_types_map_both_ways() {
        assert_eq!(element_of(INT4_ARRAY), Some(INT4));
        assert_eq!(array_of(INT4), Some(INT4_ARRAY));
        assert_eq!(element_of(TEXT_ARRAY), Some(TEXT));
        assert_eq!(array_of(UNKNOWN), None);
        assert_eq!(element_of(INT4), None);
        assert_eq!(array_of(INT4_ARRAY), None);
        for &(element, array) in &ARRAY_TYPES {
            assert_eq!(element_of(array), Some(element), "{}", type_name(array));
            assert_eq!(array_of(element), Some(array), "{}", type_name(element));
            assert!(type_name(array).ends_with("[]"));
        }
    }
}
