//! One-dimensional arrays: `Vec<T>` and `Vec<Option<T>>` ↔ `T[]`, in both formats.

mod binary;
mod text;

use super::oid::element_of;
use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql};
use bytes::BytesMut;
use text::Element;

/// The element type of array type `oid`, if `T` can read it.
fn readable_element<'a, T: FromSql<'a>>(
    oid: Oid,
    rust_type: &'static str,
) -> Result<Oid, ConversionError> {
    match element_of(oid) {
        Some(element) if T::accepts(element) => Ok(element),
        _ => Err(ConversionError::wrong_type(oid, rust_type)),
    }
}

fn decode_binary<'a, T: FromSql<'a>>(oid: Oid, raw: &'a [u8]) -> Result<Vec<T>, ConversionError> {
    let rust_type = std::any::type_name::<Vec<T>>();
    let array = binary::parse(oid, rust_type, raw)?;
    // An empty array may carry any element type; elements must be readable as T.
    if array.len > 0 && !T::accepts(array.element_oid) {
        return Err(ConversionError::wrong_type(oid, rust_type));
    }
    let element = array.element_oid;
    let mut items = Vec::with_capacity(array.capacity());
    array.for_each(oid, rust_type, |index, value| {
        let item = T::from_sql_nullable(element, Format::Binary, value);
        items.push(item.map_err(|e| e.in_array_element(oid, index + 1))?);
        Ok(())
    })?;
    Ok(items)
}

fn decode_text<'a, T: FromSql<'a>>(
    oid: Oid,
    element: Oid,
    raw: &'a [u8],
) -> Result<Vec<T>, ConversionError> {
    let rust_type = std::any::type_name::<Vec<T>>();
    // Commas bound the element count from above (quoted commas only over-reserve).
    let mut items = Vec::with_capacity(memchr::memchr_iter(b',', raw).count() + 1);
    text::for_each_element(oid, rust_type, raw, |value| {
        let position = items.len() + 1;
        let item = match value {
            Element::Null => T::from_sql_null(element),
            Element::Raw(text) => T::from_sql(element, Format::Text, text),
            Element::Unescaped(text) => T::from_sql_unescaped(element, Format::Text, text),
        };
        items.push(item.map_err(|e| e.in_array_element(oid, position))?);
        Ok(())
    })?;
    Ok(items)
}

/// Reads a one-dimensional array (any lower bound; the Vec starts at index 0). NULL
/// elements need `Vec<Option<T>>`. Multi-dimensional arrays are a `WrongType` error.
impl<'a, T: FromSql<'a>> FromSql<'a> for Vec<T> {
    fn accepts(oid: Oid) -> bool {
        element_of(oid).is_some_and(T::accepts)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        let element = readable_element::<T>(oid, std::any::type_name::<Self>())?;
        match format {
            Format::Binary => decode_binary(oid, raw),
            Format::Text => decode_text(oid, element, raw),
        }
    }
}

/// Writes `items` in `format` for array type `oid`, leaving `out` untouched on error.
fn encode_array<T: ToSql>(
    items: &[T],
    oid: Oid,
    format: Format,
    out: &mut BytesMut,
) -> Result<IsNull, ConversionError> {
    let start = out.len();
    let result = match format {
        Format::Binary => match element_of(oid) {
            Some(element) => binary::encode(items, element, out),
            None => {
                return Err(ConversionError::wrong_type(
                    oid,
                    std::any::type_name::<[T]>(),
                ));
            }
        },
        Format::Text => text::encode(items, out),
    };
    match result {
        Ok(()) => Ok(IsNull::No),
        Err((index, error)) => {
            out.truncate(start);
            Err(error.in_array_element(oid, index + 1))
        }
    }
}

/// Sends a one-dimensional array; binary when every element can be sent in binary as the
/// element type of the parameter's array type, else as `{...}` text.
impl<T: ToSql> ToSql for [T] {
    fn accepts_binary(&self, oid: Oid) -> bool {
        element_of(oid).is_some_and(|element| self.iter().all(|item| item.accepts_binary(element)))
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_array(self, oid, Format::Binary, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        encode_array(self, 0, Format::Text, out)
    }
}

impl<T: ToSql> ToSql for Vec<T> {
    fn accepts_binary(&self, oid: Oid) -> bool {
        self.as_slice().accepts_binary(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_text(out)
    }
}

/// Lets `&[1, 2, 3]` be passed as a parameter without slicing it first.
impl<T: ToSql, const N: usize> ToSql for [T; N] {
    fn accepts_binary(&self, oid: Oid) -> bool {
        self.as_slice().accepts_binary(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_slice().to_sql_text(out)
    }
}

#[cfg(test)]
mod tests;
