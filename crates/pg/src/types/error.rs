//! The error of a value conversion: which types, and what went wrong.

use super::oid::{Oid, type_name};
use std::fmt;

/// What kind of conversion failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConversionErrorKind {
    /// The Rust type cannot represent the PostgreSQL type at all.
    WrongType,
    /// The value was NULL but the Rust type cannot hold NULL (use `Option<T>`).
    UnexpectedNull,
    /// The bytes are not a valid value of the PostgreSQL type.
    Invalid,
    /// The value does not fit the target type.
    OutOfRange,
}

/// A failed conversion between a Rust value and a PostgreSQL value.
///
/// Boxed, so that `Result<i64, ConversionError>` stays two words and decoding a fixed-size
/// value returns in registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError {
    inner: Box<Inner>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    kind: ConversionErrorKind,
    oid: Oid,
    rust_type: &'static str,
    detail: String,
}

impl ConversionError {
    /// A conversion error of `kind` between server type `oid` and `rust_type`.
    pub fn new(
        kind: ConversionErrorKind,
        oid: Oid,
        rust_type: &'static str,
        detail: impl Into<String>,
    ) -> ConversionError {
        ConversionError {
            inner: Box::new(Inner {
                kind,
                oid,
                rust_type,
                detail: detail.into(),
            }),
        }
    }

    /// `rust_type` cannot be read from or written to a value of type `oid`.
    pub fn wrong_type(oid: Oid, rust_type: &'static str) -> ConversionError {
        ConversionError::new(ConversionErrorKind::WrongType, oid, rust_type, "")
    }

    /// A NULL arrived for `rust_type`, which cannot hold it.
    pub fn unexpected_null(oid: Oid, rust_type: &'static str) -> ConversionError {
        ConversionError::new(ConversionErrorKind::UnexpectedNull, oid, rust_type, "")
    }

    /// The bytes are not a valid `oid` value; `detail` says why.
    pub fn invalid(
        oid: Oid,
        rust_type: &'static str,
        detail: impl Into<String>,
    ) -> ConversionError {
        ConversionError::new(ConversionErrorKind::Invalid, oid, rust_type, detail)
    }

    /// The value does not fit; `detail` says which value and which range.
    pub fn out_of_range(
        oid: Oid,
        rust_type: &'static str,
        detail: impl Into<String>,
    ) -> ConversionError {
        ConversionError::new(ConversionErrorKind::OutOfRange, oid, rust_type, detail)
    }

    /// What went wrong.
    pub fn kind(&self) -> ConversionErrorKind {
        self.inner.kind
    }

    /// The PostgreSQL type involved.
    pub fn oid(&self) -> Oid {
        self.inner.oid
    }

    /// The Rust type involved.
    pub fn rust_type(&self) -> &'static str {
        self.inner.rust_type
    }

    /// What exactly failed (the offending value, the byte offset), or `""`.
    pub fn detail(&self) -> &str {
        &self.inner.detail
    }

    /// The same error, naming `rust_type` instead: for conversions made through another type.
    #[cfg_attr(
        not(any(
            feature = "with-chrono-0_4",
            feature = "with-jiff-0_2",
            feature = "with-time-0_3",
            feature = "with-uuid-1"
        )),
        allow(dead_code)
    )]
    pub(crate) fn for_rust_type(mut self, rust_type: &'static str) -> ConversionError {
        self.inner.rust_type = rust_type;
        self
    }

    /// The same error, placed at 1-based element `position` of an array of type `array_oid`.
    pub(crate) fn in_array_element(mut self, array_oid: Oid, position: usize) -> ConversionError {
        let inner = &mut *self.inner;
        let element = type_name(inner.oid);
        inner.detail = if inner.detail.is_empty() {
            format!("array element {position} ({element})")
        } else {
            format!("array element {position} ({element}): {}", inner.detail)
        };
        inner.oid = array_oid;
        self
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner {
            kind,
            oid,
            rust_type,
            detail,
        } = &*self.inner;
        let pg = type_name(*oid);
        match kind {
            ConversionErrorKind::WrongType => write!(
                f,
                "cannot convert between PostgreSQL type {pg} and Rust type {rust_type}"
            )?,
            ConversionErrorKind::UnexpectedNull => write!(
                f,
                "unexpected NULL of type {pg} for Rust type {rust_type} (use Option<_> to accept NULL)"
            )?,
            ConversionErrorKind::Invalid => write!(f, "invalid {pg} value")?,
            ConversionErrorKind::OutOfRange => {
                write!(f, "{pg} value out of range for Rust type {rust_type}")?
            }
        }
        if !detail.is_empty() {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConversionError {}
