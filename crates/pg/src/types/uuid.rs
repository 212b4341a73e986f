//! [`Uuid`]: PostgreSQL `uuid` as 16 bytes, with its text forms.

use super::wire::{fixed, invalid_text};
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::fmt;
use std::str::FromStr;

/// A PostgreSQL `uuid`: 16 bytes, shown as lowercase `8-4-4-4-12` hex groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid([u8; 16]);

impl Uuid {
    /// The UUID with these 16 bytes, in network order.
    pub const fn from_bytes(bytes: [u8; 16]) -> Uuid {
        Uuid(bytes)
    }

    /// The 16 bytes, in network order.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The UUID whose bytes are `value`, most significant first.
    pub const fn from_u128(value: u128) -> Uuid {
        Uuid(value.to_be_bytes())
    }

    /// The bytes as one number, most significant first.
    pub const fn as_u128(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// Parses any form `uuid_in` accepts: 32 hex digits in either case, optionally in braces,
    /// with an optional hyphen after any group of four digits (`a0eebc99-9c0b-4ef8-...`,
    /// `{a0eebc999c0b4ef8bb6d6bb9bd380a11}`, `a0ee-bc99-9c0b-...`).
    pub fn parse(text: &[u8]) -> Option<Uuid> {
        let (mut rest, braces) = match text {
            [b'{', inner @ .., b'}'] => (inner, true),
            _ => (text, false),
        };
        if !braces && text.first() == Some(&b'{') {
            return None;
        }
        let mut bytes = [0u8; 16];
        for (index, byte) in bytes.iter_mut().enumerate() {
            let [high, low, tail @ ..] = rest else {
                return None;
            };
            *byte = hex_digit(*high)? << 4 | hex_digit(*low)?;
            rest = tail;
            if index % 2 == 1
                && index < 15
                && let [b'-', tail @ ..] = rest
            {
                rest = tail;
            }
        }
        rest.is_empty().then_some(Uuid(bytes))
    }
}

fn hex_digit(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for Uuid {
    type Err = ConversionError;

    fn from_str(text: &str) -> Result<Uuid, ConversionError> {
        Uuid::parse(text.as_bytes())
            .ok_or_else(|| invalid_text(oid::UUID, "Uuid", text.as_bytes(), "a UUID"))
    }
}

impl From<[u8; 16]> for Uuid {
    fn from(bytes: [u8; 16]) -> Uuid {
        Uuid(bytes)
    }
}

impl From<Uuid> for [u8; 16] {
    fn from(uuid: Uuid) -> [u8; 16] {
        uuid.0
    }
}

fn decode_uuid(oid: Oid, format: Format, raw: &[u8]) -> Result<Uuid, ConversionError> {
    match (oid, format) {
        (oid::UUID, Format::Binary) => Ok(Uuid(fixed(oid, "Uuid", raw)?)),
        (oid::UUID, Format::Text) => {
            Uuid::parse(raw).ok_or_else(|| invalid_text(oid, "Uuid", raw, "a UUID"))
        }
        _ => Err(ConversionError::wrong_type(oid, "Uuid")),
    }
}

impl<'a> FromSql<'a> for Uuid {
    fn accepts(oid: Oid) -> bool {
        oid == oid::UUID
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_uuid(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_uuid(oid, format, raw)
    }
}

impl ToSql for Uuid {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::UUID
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::UUID {
            return Err(ConversionError::wrong_type(oid, "Uuid"));
        }
        out.put_slice(&self.0);
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        use std::fmt::Write as _;
        write!(out, "{self}").map_err(|_| {
            ConversionError::invalid(oid::UUID, "Uuid", "could not format the UUID")
        })?;
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ConversionErrorKind;
    use proptest::prelude::*;

    const GOLDEN: Uuid = Uuid::from_u128(0xa0eebc999c0b4ef8bb6d6bb9bd380a11);

    // Golden values from PostgreSQL 15: each input below reads as uuid_send
    // a0eebc999c0b4ef8bb6d6bb9bd380a11 and prints as a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11.
    #[test]
    fn accepts_every_form_uuid_in_accepts() {
        for input in [
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
        ] {
            assert_eq!(input.parse::<Uuid>(), Ok(GOLDEN), "{input}");
        }
        assert_eq!(GOLDEN.to_string(), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    }

    // Each of these is rejected by uuid_in too.
    #[test]
    fn rejects_what_uuid_in_rejects() {
        for input in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1-1",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11-",
            "-a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0e-ebc999c0b4ef8bb6d6bb9bd380a11",
            " a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "{a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a1",
            "",
        ] {
            let err = input.parse::<Uuid>().unwrap_err();
            assert_eq!(err.kind(), ConversionErrorKind::Invalid, "{input}");
        }
    }

    #[test]
    fn binary_golden() {
        let bytes = 0xa0eebc999c0b4ef8bb6d6bb9bd380a11u128.to_be_bytes();
        assert_eq!(
            Uuid::from_sql(oid::UUID, Format::Binary, &bytes),
            Ok(GOLDEN)
        );
        let mut out = BytesMut::new();
        GOLDEN.to_sql_binary(oid::UUID, &mut out).unwrap();
        assert_eq!(&out[..], bytes);
        assert!(Uuid::from_sql(oid::UUID, Format::Binary, &bytes[1..]).is_err());
    }

    proptest! {
        #[test]
        fn round_trips_both_formats(value: u128) {
            let uuid = Uuid::from_u128(value);
            let mut out = BytesMut::new();
            uuid.to_sql_binary(oid::UUID, &mut out).unwrap();
            prop_assert_eq!(Uuid::from_sql(oid::UUID, Format::Binary, &out), Ok(uuid));
            out.clear();
            uuid.to_sql_text(&mut out).unwrap();
            prop_assert_eq!(Uuid::from_sql(oid::UUID, Format::Text, &out), Ok(uuid));
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(raw: Vec<u8>) {
            let _ = Uuid::from_sql(oid::UUID, Format::Binary, &raw);
            let _ = Uuid::from_sql(oid::UUID, Format::Text, &raw);
        }
    }
}
