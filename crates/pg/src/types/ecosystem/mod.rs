//! The ecosystem's date, time and UUID types (features `with-chrono-0_4`, `with-time-0_3`,
//! `with-jiff-0_2`, `with-uuid-1`), each converted through Sluice's own type, whose parsers
//! and encoders do the wire work: a value the other type cannot hold (an infinity, a year
//! outside its range, 24:00:00) is an out-of-range error, never a panic or a wrong value.

#[cfg(feature = "with-chrono-0_4")]
mod with_chrono;
#[cfg(feature = "with-jiff-0_2")]
mod with_jiff;
#[cfg(feature = "with-time-0_3")]
mod with_time;
#[cfg(feature = "with-uuid-1")]
mod with_uuid;

/// Implements [`FromSql`](crate::types::FromSql) and [`ToSql`](crate::types::ToSql) for
/// `$ext` through Sluice's `$ours`, the type of server type `$oid`.
///
/// `read` turns a decoded `$ours` into `$ext` (`None` when `$ext` cannot hold it); `write`
/// turns `$ext` into `$ours` (an error when PostgreSQL cannot hold it).
#[cfg_attr(
    not(any(
        feature = "with-chrono-0_4",
        feature = "with-jiff-0_2",
        feature = "with-time-0_3",
        feature = "with-uuid-1"
    )),
    allow(unused_macros)
)]
macro_rules! convert_through {
    (
        $ext:ty, $ours:ty, $oid:path, $name:literal,
        read: $read:expr,
        write: $write:expr $(,)?
    ) => {
        impl<'a> $crate::types::FromSql<'a> for $ext {
            fn accepts(oid: $crate::types::Oid) -> bool {
                oid == $oid
            }

            fn from_sql(
                oid: $crate::types::Oid,
                format: $crate::types::Format,
                raw: &'a [u8],
            ) -> Result<Self, $crate::types::ConversionError> {
                <$ext as $crate::types::FromSql<'a>>::from_sql_unescaped(oid, format, raw)
            }

            fn from_sql_unescaped(
                oid: $crate::types::Oid,
                format: $crate::types::Format,
                raw: &[u8],
            ) -> Result<Self, $crate::types::ConversionError> {
                if oid != $oid {
                    return Err($crate::types::ConversionError::wrong_type(oid, $name));
                }
                let ours =
                    <$ours as $crate::types::FromSql<'_>>::from_sql_unescaped(oid, format, raw)
                        .map_err(|e| e.for_rust_type($name))?;
                let read: fn($ours) -> Option<$ext> = $read;
                read(ours).ok_or_else(|| {
                    $crate::types::ConversionError::out_of_range(
                        oid,
                        $name,
                        format!("{ours} is outside the range of {}", $name),
                    )
                })
            }
        }

        impl $crate::types::ToSql for $ext {
            fn accepts_binary(&self, oid: $crate::types::Oid) -> bool {
                oid == $oid
            }

            fn to_sql_binary(
                &self,
                oid: $crate::types::Oid,
                out: &mut bytes::BytesMut,
            ) -> Result<$crate::types::IsNull, $crate::types::ConversionError> {
                if oid != $oid {
                    return Err($crate::types::ConversionError::wrong_type(oid, $name));
                }
                let write: fn(&$ext) -> Result<$ours, $crate::types::ConversionError> = $write;
                write(self)
                    .map_err(|e| e.for_rust_type($name))?
                    .to_sql_binary(oid, out)
                    .map_err(|e| e.for_rust_type($name))
            }

            fn to_sql_text(
                &self,
                out: &mut bytes::BytesMut,
            ) -> Result<$crate::types::IsNull, $crate::types::ConversionError> {
                let write: fn(&$ext) -> Result<$ours, $crate::types::ConversionError> = $write;
                write(self)
                    .map_err(|e| e.for_rust_type($name))?
                    .to_sql_text(out)
                    .map_err(|e| e.for_rust_type($name))
            }

            fn rust_type(&self) -> &'static str {
                $name
            }
        }
    };
}

#[allow(unused_imports)]
pub(crate) use convert_through;

/// The binary and text encodings of a value, for the conversions' unit tests.
#[cfg(all(
    test,
    any(
        feature = "with-chrono-0_4",
        feature = "with-jiff-0_2",
        feature = "with-time-0_3"
    )
))]
#[allow(clippy::unwrap_used)]
mod test_support {
    use crate::types::{Oid, ToSql};
    use bytes::BytesMut;

    /// `value` encoded in binary for server type `oid`.
    pub(crate) fn binary<T: ToSql>(value: &T, oid: Oid) -> BytesMut {
        let mut out = BytesMut::new();
        value.to_sql_binary(oid, &mut out).unwrap();
        out
    }

    /// `value` in PostgreSQL's text input syntax.
    #[cfg_attr(not(feature = "with-chrono-0_4"), allow(dead_code))]
    pub(crate) fn text<T: ToSql>(value: &T) -> String {
        let mut out = BytesMut::new();
        value.to_sql_text(&mut out).unwrap();
        String::from_utf8(out.to_vec()).unwrap()
    }
}
