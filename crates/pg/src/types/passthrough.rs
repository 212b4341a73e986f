//! Conversions that forward to an inner type: references, boxes, `Cow`, and `Option` for NULL.

use super::{ConversionError, Format, FromSql, IsNull, Oid, ToSql};
use bytes::BytesMut;
use std::borrow::Cow;

impl<T: ToSql + ?Sized> ToSql for &T {
    fn accepts_binary(&self, oid: Oid) -> bool {
        (**self).accepts_binary(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        (**self).to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        (**self).to_sql_text(out)
    }

    fn rust_type(&self) -> &'static str {
        (**self).rust_type()
    }
}

impl<T: ToSql + ?Sized> ToSql for Box<T> {
    fn accepts_binary(&self, oid: Oid) -> bool {
        (**self).accepts_binary(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        (**self).to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        (**self).to_sql_text(out)
    }

    fn rust_type(&self) -> &'static str {
        (**self).rust_type()
    }
}

impl<T> ToSql for Cow<'_, T>
where
    T: ToSql + ToOwned + ?Sized,
    T::Owned: std::fmt::Debug + Sync,
{
    fn accepts_binary(&self, oid: Oid) -> bool {
        self.as_ref().accepts_binary(oid)
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_ref().to_sql_binary(oid, out)
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        self.as_ref().to_sql_text(out)
    }

    fn rust_type(&self) -> &'static str {
        self.as_ref().rust_type()
    }
}

/// `None` is SQL NULL, in either format and for any parameter type.
impl<T: ToSql> ToSql for Option<T> {
    fn accepts_binary(&self, oid: Oid) -> bool {
        match self {
            Some(value) => value.accepts_binary(oid),
            None => true,
        }
    }

    fn to_sql_binary(&self, oid: Oid, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match self {
            Some(value) => value.to_sql_binary(oid, out),
            None => Ok(IsNull::Yes),
        }
    }

    fn to_sql_text(&self, out: &mut BytesMut) -> Result<IsNull, ConversionError> {
        match self {
            Some(value) => value.to_sql_text(out),
            None => Ok(IsNull::Yes),
        }
    }

    fn rust_type(&self) -> &'static str {
        std::any::type_name::<T>()
    }
}

/// SQL NULL reads as `None`.
impl<'a, T: FromSql<'a>> FromSql<'a> for Option<T> {
    fn accepts(oid: Oid) -> bool {
        T::accepts(oid)
    }

    fn from_sql(oid: Oid, format: Format, raw: &'a [u8]) -> Result<Self, ConversionError> {
        T::from_sql(oid, format, raw).map(Some)
    }

    fn from_sql_unescaped(oid: Oid, format: Format, raw: &[u8]) -> Result<Self, ConversionError> {
        T::from_sql_unescaped(oid, format, raw).map(Some)
    }

    fn from_sql_null(_oid: Oid) -> Result<Self, ConversionError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ConversionErrorKind, oid};

    #[test]
    fn option_none_is_null_in_both_formats() {
        let mut out = BytesMut::new();
        let none: Option<i32> = None;
        assert!(none.accepts_binary(oid::TEXT));
        assert_eq!(none.to_sql_binary(oid::INT4, &mut out), Ok(IsNull::Yes));
        assert_eq!(none.to_sql_text(&mut out), Ok(IsNull::Yes));
        assert!(out.is_empty());
        assert_eq!(none.rust_type(), "i32");
    }

    #[test]
    fn option_some_reference_and_box_forward() {
        let mut out = BytesMut::new();
        let value = Some(7i32);
        assert!(value.accepts_binary(oid::INT4));
        assert_eq!(value.to_sql_binary(oid::INT4, &mut out), Ok(IsNull::No));
        assert_eq!(&out[..], [0, 0, 0, 7]);
        out.clear();
        let boxed: Box<dyn ToSql> = Box::new(7i64);
        assert_eq!(boxed.to_sql_text(&mut out), Ok(IsNull::No));
        assert_eq!(ToSql::to_sql_text(&&boxed, &mut out), Ok(IsNull::No));
        assert_eq!(&out[..], b"77");
        assert_eq!(boxed.rust_type(), "i64");
        out.clear();
        let cow: Cow<'_, str> = Cow::Borrowed("hi");
        assert_eq!(cow.to_sql_text(&mut out), Ok(IsNull::No));
        assert_eq!(&out[..], b"hi");
    }

    #[test]
    fn option_reads_null_as_none() {
        assert_eq!(
            Option::<i32>::from_sql_nullable(oid::INT4, Format::Text, None),
            Ok(None)
        );
        assert_eq!(
            Option::<i32>::from_sql_nullable(oid::INT4, Format::Text, Some(b"5")),
            Ok(Some(5))
        );
        let err = i32::from_sql_nullable(oid::INT4, Format::Binary, None).unwrap_err();
        assert_eq!(err.kind(), ConversionErrorKind::UnexpectedNull);
    }
}
