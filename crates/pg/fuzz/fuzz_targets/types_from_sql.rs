//! Fuzz target: every `FromSql` type on arbitrary bytes in both formats; what decodes must
//! re-encode (where it is in range) and decode back to an equal value.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use sluice_pg::types::{
    Date, Format, FromSql, Interval, Numeric, Oid, Time, Timestamp, TimestampTz, ToSql, Uuid, oid,
};
use std::fmt::Debug;

/// Decodes `raw`; on success re-encodes in the same format and checks the value survives.
fn check<T>(oid: Oid, format: Format, raw: &[u8], same: fn(&T, &T) -> bool)
where
    T: for<'a> FromSql<'a> + ToSql + Debug,
{
    let Ok(value) = T::from_sql(oid, format, raw) else { return };
    let mut out = BytesMut::new();
    let encoded = match format {
        Format::Binary if value.accepts_binary(oid) => value.to_sql_binary(oid, &mut out),
        Format::Binary => return,
        Format::Text => value.to_sql_text(&mut out),
    };
    if encoded.is_err() {
        // Out-of-range values (a forged binary timestamp) are refused, never sent.
        return;
    }
    let again = T::from_sql(oid, format, &out);
    assert!(again.as_ref().is_ok_and(|v| same(v, &value)), "{value:?} -> {out:?} -> {again:?}");
}

fn equal<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

fn same_f64(a: &f64, b: &f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_f32(a: &f32, b: &f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// serde_json parses floats to the nearest value only with its `float_roundtrip` feature, so
/// JSON numbers are checked for re-encoding, not for bit-exact equality.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    a.is_number() == b.is_number() || a == b
}

fn same_decimal(a: &rust_decimal::Decimal, b: &rust_decimal::Decimal) -> bool {
    a == b
}

/// jiff's Span has no `PartialEq`: its units are compared one by one.
fn same_span(a: &jiff::Span, b: &jiff::Span) -> bool {
    a.fieldwise() == b.fieldwise()
}

fuzz_target!(|input: &[u8]| {
    let Some((&selector, raw)) = input.split_first() else { return };
    let format = if selector & 0x80 != 0 { Format::Binary } else { Format::Text };
    match selector & 0x7f {
        0 => check::<bool>(oid::BOOL, format, raw, equal),
        1 => check::<i16>(oid::INT2, format, raw, equal),
        2 => check::<i32>(oid::INT4, format, raw, equal),
        3 => check::<i64>(oid::INT8, format, raw, equal),
        4 => check::<u32>(oid::OID, format, raw, equal),
        5 => check::<i8>(oid::CHAR, format, raw, equal),
        6 => check::<f32>(oid::FLOAT4, format, raw, same_f32),
        7 => check::<f64>(oid::FLOAT8, format, raw, same_f64),
        8 => check::<Numeric>(oid::NUMERIC, format, raw, equal),
        9 => check::<rust_decimal::Decimal>(oid::NUMERIC, format, raw, same_decimal),
        10 => check::<String>(oid::TEXT, format, raw, equal),
        11 => check::<String>(oid::JSONB, format, raw, equal),
        12 => check::<serde_json::Value>(oid::JSONB, format, raw, same_json),
        13 => check::<Vec<u8>>(oid::BYTEA, format, raw, equal),
        14 => check::<Uuid>(oid::UUID, format, raw, equal),
        15 => check::<Date>(oid::DATE, format, raw, equal),
        16 => check::<Time>(oid::TIME, format, raw, equal),
        17 => check::<Timestamp>(oid::TIMESTAMP, format, raw, equal),
        18 => check::<TimestampTz>(oid::TIMESTAMPTZ, format, raw, equal),
        19 => check::<Interval>(oid::INTERVAL, format, raw, equal),
        20 => check::<Vec<Option<String>>>(oid::TEXT_ARRAY, format, raw, equal),
        21 => check::<Vec<Option<i32>>>(oid::INT4_ARRAY, format, raw, equal),
        22 => check::<Vec<Option<Vec<u8>>>>(oid::BYTEA_ARRAY, format, raw, equal),
        23 => check::<Vec<Option<Numeric>>>(oid::NUMERIC_ARRAY, format, raw, equal),
        24 => check::<Vec<Option<Interval>>>(oid::INTERVAL_ARRAY, format, raw, equal),
        25 => check::<Vec<Option<TimestampTz>>>(oid::TIMESTAMPTZ_ARRAY, format, raw, equal),
        26 => check::<chrono::NaiveDate>(oid::DATE, format, raw, equal),
        27 => check::<chrono::NaiveTime>(oid::TIME, format, raw, equal),
        28 => check::<chrono::NaiveDateTime>(oid::TIMESTAMP, format, raw, equal),
        29 => check::<chrono::DateTime<chrono::Utc>>(oid::TIMESTAMPTZ, format, raw, equal),
        30 => check::<chrono::DateTime<chrono::FixedOffset>>(oid::TIMESTAMPTZ, format, raw, equal),
        31 => check::<time::Date>(oid::DATE, format, raw, equal),
        32 => check::<time::Time>(oid::TIME, format, raw, equal),
        33 => check::<time::PrimitiveDateTime>(oid::TIMESTAMP, format, raw, equal),
        34 => check::<time::OffsetDateTime>(oid::TIMESTAMPTZ, format, raw, equal),
        35 => check::<jiff::civil::Date>(oid::DATE, format, raw, equal),
        36 => check::<jiff::civil::Time>(oid::TIME, format, raw, equal),
        37 => check::<jiff::civil::DateTime>(oid::TIMESTAMP, format, raw, equal),
        38 => check::<jiff::Timestamp>(oid::TIMESTAMPTZ, format, raw, equal),
        39 => check::<jiff::Span>(oid::INTERVAL, format, raw, same_span),
        40 => check::<uuid::Uuid>(oid::UUID, format, raw, equal),
        _ => {
            // Borrowing types cannot re-encode through the same check; decode only.
            let _ = <&str>::from_sql(oid::TEXT, format, raw);
            let _ = <&[u8]>::from_sql(oid::BYTEA, format, raw);
            let _ = Vec::<Option<&str>>::from_sql(oid::TEXT_ARRAY, format, raw);
            let _ = std::time::SystemTime::from_sql(oid::TIMESTAMPTZ, format, raw);
        }
    }
});
