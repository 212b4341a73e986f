//! [`Numeric`]: PostgreSQL `numeric` kept exact, as its canonical decimal text.

mod binary;
mod text;

#[cfg(feature = "decimal")]
pub(crate) use binary::{SIGN_INFINITY, SIGN_NAN, SIGN_NEG_INFINITY, parse as parse_binary};
pub(crate) use binary::{SIGN_NEGATIVE, SIGN_POSITIVE};
use text::MAX_SCALE;
pub(crate) use text::Parts;
#[cfg(feature = "decimal")]
pub(crate) use text::split_plain;

use super::wire::preview;
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql, oid};
use bytes::{BufMut, BytesMut};
use std::fmt;
use std::str::FromStr;

/// An exact PostgreSQL `numeric`, held as the text `numeric_out` writes for it: `-12.50`,
/// `0.0001`, `NaN`, `Infinity`, `-Infinity`. The number of decimals is the display scale, so
/// `1.50` and `1.5` are different values here (PostgreSQL compares them equal).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Numeric {
    text: String,
}

impl Numeric {
    /// Not-a-number.
    pub fn nan() -> Numeric {
        Numeric {
            text: "NaN".to_owned(),
        }
    }

    /// Positive infinity (PostgreSQL 14 and later).
    pub fn infinity() -> Numeric {
        Numeric {
            text: "Infinity".to_owned(),
        }
    }

    /// Negative infinity (PostgreSQL 14 and later).
    pub fn neg_infinity() -> Numeric {
        Numeric {
            text: "-Infinity".to_owned(),
        }
    }

    /// The canonical text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The canonical text, owned.
    pub fn into_string(self) -> String {
        self.text
    }

    /// Whether this is `NaN`.
    pub fn is_nan(&self) -> bool {
        self.text == "NaN"
    }

    /// Whether this is `Infinity` or `-Infinity`.
    pub fn is_infinite(&self) -> bool {
        self.text.ends_with("Infinity")
    }

    /// The number of decimal digits shown after the point (0 for the special values).
    pub fn scale(&self) -> u16 {
        match self.parts() {
            // Canonical text never has more decimals than MAX_SCALE, which fits u16.
            Parts::Finite { fraction, .. } => u16::try_from(fraction.len()).unwrap_or(u16::MAX),
            _ => 0,
        }
    }

    pub(crate) fn parts(&self) -> Parts<'_> {
        text::split_canonical(&self.text)
    }

    /// Parses `numeric_in` syntax (`' +1.5e3 '`, `.5`, `inf`, `NaN`), reporting errors for `oid`.
    pub(crate) fn parse_for(
        oid: Oid,
        rust_type: &'static str,
        raw: &[u8],
    ) -> Result<Numeric, ConversionError> {
        match text::canonicalize(raw) {
            Ok(text) => Ok(Numeric { text }),
            Err(text::ParseError::Syntax(offset)) => Err(ConversionError::invalid(
                oid,
                rust_type,
                format!(
                    "{} is not a number: unexpected input at byte offset {offset}",
                    preview(raw)
                ),
            )),
            Err(text::ParseError::Overflow) => Err(ConversionError::out_of_range(
                oid,
                rust_type,
                format!(
                    "{} has more than {} integer digits or {MAX_SCALE} decimal digits",
                    preview(raw),
                    text::MAX_INTEGER_DIGITS
                ),
            )),
        }
    }

    /// Decodes `numeric_send`'s binary form.
    pub(crate) fn from_binary(
        oid: Oid,
        rust_type: &'static str,
        raw: &[u8],
    ) -> Result<Numeric, ConversionError> {
        binary::decode_to_text(raw)
            .map(|text| Numeric { text })
            .map_err(|detail| ConversionError::invalid(oid, rust_type, detail))
    }

    /// Encodes the binary form `numeric_recv` reads.
    pub(crate) fn to_binary(&self, out: &mut BytesMut) -> Result<(), ConversionError> {
        binary::encode(self.parts(), out)
            .map_err(|detail| ConversionError::out_of_range(oid::NUMERIC, "Numeric", detail))
    }
}

#[cfg(feature = "decimal")]
/// Encodes decimal parts as binary numeric, for other decimal types.
pub(crate) fn encode_parts(parts: Parts<'_>, out: &mut BytesMut) -> Result<(), String> {
    binary::encode(parts, out)
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Numeric {
    type Err = ConversionError;

    /// Parses `numeric_in` syntax into the canonical form PostgreSQL would print.
    fn from_str(text: &str) -> Result<Numeric, ConversionError> {
        Numeric::parse_for(oid::NUMERIC, "Numeric", text.as_bytes())
    }
}

macro_rules! numeric_from_integer {
    ($($int:ty),*) => {$(
        impl From<$int> for Numeric {
            fn from(value: $int) -> Numeric {
                Numeric { text: itoa::Buffer::new().format(value).to_owned() }
            }
        }
    )*};
}

numeric_from_integer!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

fn decode_numeric(oid: Oid, format: Format, raw: &[u8]) -> Result<Numeric, ConversionError> {
    match (oid, format) {
        (oid::NUMERIC, Format::Binary) => Numeric::from_binary(oid, "Numeric", raw),
        (oid::NUMERIC | oid::INT2 | oid::INT4 | oid::INT8, Format::Text) => {
            Numeric::parse_for(oid, "Numeric", raw)
        }
        (oid::INT2 | oid::INT4 | oid::INT8, Format::Binary) => {
            i64::from_sql(oid, format, raw).map(Numeric::from)
        }
        _ => Err(ConversionError::wrong_type(oid, "Numeric")),
    }
}

/// Reads numeric, and the integer types exactly.
impl<'a> FromSql<'a> for Numeric {
    fn accepts(oid: Oid) -> bool {
        matches!(oid, oid::NUMERIC | oid::INT2 | oid::INT4 | oid::INT8)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        decode_numeric(oid, format, raw)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        decode_numeric(oid, format, raw)
    }
}

impl ToSql for Numeric {
    fn accepts_binary(&self, oid: Oid) -> bool {
        oid == oid::NUMERIC
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        if oid != oid::NUMERIC {
            return Err(ConversionError::wrong_type(oid, "Numeric"));
        }
        self.to_binary(out)?;
        Ok(IsNull::No)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        out.put_slice(self.text.as_bytes());
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests;
