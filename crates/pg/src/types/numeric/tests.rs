//! Tests of [`Numeric`] against golden values from PostgreSQL 15.

use super::*;
use crate::types::ConversionErrorKind;
use proptest::prelude::*;

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(raw: &[u8]) -> String {
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

fn binary(value: &Numeric) -> String {
    let mut out = BytesMut::new();
    value.to_sql_binary(oid::NUMERIC, &mut out).unwrap();
    hex(&out)
}

// `select encode(numeric_send(v), 'hex'), v::text` on PostgreSQL 15.
const GOLDEN: [(&str, &str); 17] = [
    ("0000000000000000", "0"),
    ("0000000000000002", "0.00"),
    ("000200004000000100011388", "-1.5"),
    ("00000000c0000000", "NaN"),
    (
        "0006000200000009000109291a85000004d21388",
        "123456789.000012345",
    ),
    ("0001ffff000000040001", "0.0001"),
    ("0001fffd0000000a0064", "0.0000000001"),
    ("00010001000000000001", "10000"),
    ("0001fffe4000000804ce", "-0.00001230"),
    ("0002000100000000270f270f", "99999999"),
    ("0002000000000002000103e8", "1.10"),
    ("0002000040000004270f270f", "-9999.9999"),
    (
        "000800040000000904d2162e23340d801ed204d2162e2328",
        "12345678901234567890.123456789",
    ),
    ("0001ffff000000011388", "0.5"),
    ("0001fffb400000140001", "-0.00000000000000000001"),
    ("000100fa000000000001", "1e1000"),
    ("0001ff06000003e80001", "1e-1000"),
];

#[test]
fn golden_binary_decodes_to_the_server_text_and_encodes_back() {
    for (binary_hex, text_form) in GOLDEN {
        let expected: Numeric = text_form.parse().unwrap();
        let decoded = Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex(binary_hex)).unwrap();
        assert_eq!(decoded, expected, "{binary_hex}");
        assert_eq!(binary(&expected), binary_hex, "{text_form}");
        let from_text = Numeric::from_sql(oid::NUMERIC, Format::Text, expected.as_str().as_bytes());
        assert_eq!(from_text, Ok(expected));
    }
}

// The server sends `Infinity` as 00000000d0000020 and `-Infinity` as 00000000f0000020 (the
// display scale field carries header bits); numeric_recv ignores the scale of special values.
#[test]
fn golden_infinities() {
    let inf = Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex("00000000d0000020")).unwrap();
    assert_eq!(inf, Numeric::infinity());
    let ninf = Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex("00000000f0000020")).unwrap();
    assert_eq!(ninf, Numeric::neg_infinity());
    assert_eq!(binary(&inf), "00000000d0000000");
    assert_eq!(binary(&ninf), "00000000f0000000");
    assert_eq!(binary(&Numeric::nan()), "00000000c0000000");
    assert!(inf.is_infinite() && !inf.is_nan() && Numeric::nan().is_nan());
    assert_eq!("-inf".parse::<Numeric>(), Ok(Numeric::neg_infinity()));
}

#[test]
fn huge_values_have_exact_text() {
    let big =
        Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex("000100fa000000000001")).unwrap();
    assert_eq!(big.as_str().len(), 1001);
    let tiny =
        Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex("0001ff06000003e80001")).unwrap();
    assert_eq!(tiny.scale(), 1000);
    assert!(tiny.as_str().ends_with("0001"));
    let max = Numeric::from_str(&"9".repeat(131_072)).unwrap();
    let mut out = BytesMut::new();
    max.to_sql_binary(oid::NUMERIC, &mut out).unwrap();
    assert_eq!(
        Numeric::from_sql(oid::NUMERIC, Format::Binary, &out),
        Ok(max)
    );
}

#[test]
fn negative_zero_is_zero() {
    assert_eq!(Numeric::from_str("-0.000").unwrap().as_str(), "0.000");
    // A negative sign with no digits (the server never sends it) still reads as zero.
    let raw = unhex("0000000040000001");
    assert_eq!(
        Numeric::from_sql(oid::NUMERIC, Format::Binary, &raw)
            .unwrap()
            .as_str(),
        "0.0"
    );
}

#[test]
fn bad_binary_is_invalid_with_a_reason() {
    for (raw, reason) in [
        ("000100000000", "8-byte header"),
        ("0002000000000000000a", "announces 2 digits"),
        ("00010000000000002710", "above 9999"),
        ("0000000012340000", "sign code"),
        ("0000000000004000", "display scale"),
    ] {
        let err = Numeric::from_sql(oid::NUMERIC, Format::Binary, &unhex(raw)).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::Invalid, "{raw}");
        assert!(err.to_string().contains(reason), "{raw}: {err}");
    }
}

#[test]
fn bad_text_is_invalid_with_an_offset() {
    let err = Numeric::from_sql(oid::NUMERIC, Format::Text, b"12x").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::Invalid);
    assert!(err.to_string().contains("offset 2"), "{err}");
    let err = Numeric::from_str("1e-20000").unwrap_err();
    assert_eq!(err.kind(), ConversionErrorKind::OutOfRange);
}

#[test]
fn reads_integers_exactly() {
    assert_eq!(
        Numeric::from_sql(oid::INT8, Format::Binary, &i64::MIN.to_be_bytes())
            .unwrap()
            .as_str(),
        "-9223372036854775808"
    );
    assert_eq!(
        Numeric::from_sql(oid::INT4, Format::Text, b"-5").unwrap(),
        Numeric::from(-5)
    );
    assert_eq!(Numeric::from(u128::MAX).as_str(), u128::MAX.to_string());
}

/// Decimal strings with up to 40 integer and 40 fraction digits, either sign.
fn decimal_text() -> impl Strategy<Value = String> {
    ("-?", "[0-9]{1,40}", proptest::option::of("[0-9]{0,40}")).prop_map(|(sign, int, frac)| {
        match frac {
            Some(frac) => format!("{sign}{int}.{frac}"),
            None => format!("{sign}{int}"),
        }
    })
}

proptest! {
    #[test]
    fn round_trips_both_formats(text in decimal_text()) {
        let value: Numeric = text.parse().unwrap();
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::NUMERIC, &mut out).unwrap();
        prop_assert_eq!(Numeric::from_sql(oid::NUMERIC, Format::Binary, &out), Ok(value.clone()));
        out.clear();
        value.to_sql_text(&mut out).unwrap();
        prop_assert_eq!(Numeric::from_sql(oid::NUMERIC, Format::Text, &out), Ok(value.clone()));
        // Canonical text is a fixed point of parsing.
        prop_assert_eq!(value.as_str().parse::<Numeric>(), Ok(value.clone()));
    }

    #[test]
    fn exponent_forms_agree_with_plain_forms(digits in "[1-9][0-9]{0,20}", exponent in -30i32..30) {
        // d × 10^e written with an exponent equals the same number written out.
        let with_exponent: Numeric = format!("{digits}e{exponent}").parse().unwrap();
        let plain = if exponent >= 0 {
            format!("{digits}{}", "0".repeat(exponent as usize))
        } else {
            let shift = exponent.unsigned_abs() as usize;
            let padded = format!("{}{digits}", "0".repeat(shift));
            let split = padded.len() - shift;
            format!("{}.{}", &padded[..split], &padded[split..])
        };
        prop_assert_eq!(with_exponent, plain.parse::<Numeric>().unwrap());
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
        let _ = Numeric::from_sql(oid::NUMERIC, Format::Binary, &raw);
        let _ = Numeric::from_sql(oid::NUMERIC, Format::Text, &raw);
    }

    #[test]
    fn never_panics_on_well_framed_binary(weight: i16, sign in prop::sample::select(vec![0u16, 0x4000, 0xC000, 0xD000, 0xF000, 1]), dscale in 0u16..0x4100, digits in prop::collection::vec(0u16..10100, 0..12)) {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(digits.len() as u16).to_be_bytes());
        raw.extend_from_slice(&weight.to_be_bytes());
        raw.extend_from_slice(&sign.to_be_bytes());
        raw.extend_from_slice(&dscale.to_be_bytes());
        for d in &digits {
            raw.extend_from_slice(&d.to_be_bytes());
        }
        if let Ok(value) = Numeric::from_sql(oid::NUMERIC, Format::Binary, &raw) {
            // Whatever decodes is canonical text.
            prop_assert_eq!(value.as_str().parse::<Numeric>(), Ok(value.clone()));
        }
    }
}
