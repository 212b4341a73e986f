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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError {
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
            kind,
            oid,
            rust_type,
            detail: detail.into(),
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
        self.kind
    }

    /// The PostgreSQL type involved.
    pub fn oid(&self) -> Oid {
        self.oid
    }

    /// The Rust type involved.
    pub fn rust_type(&self) -> &'static str {
        self.rust_type
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pg = type_name(self.oid);
        match self.kind {
            ConversionErrorKind::WrongType => write!(
                f,
                "cannot convert between PostgreSQL type {pg} and Rust type {}",
                self.rust_type
            )?,
            ConversionErrorKind::UnexpectedNull => write!(
                f,
                "unexpected NULL of type {pg} for Rust type {} (use Option<_> to accept NULL)",
                self.rust_type
            )?,
            ConversionErrorKind::Invalid => write!(f, "invalid {pg} value")?,
            ConversionErrorKind::OutOfRange => write!(
                f,
                "{pg} value out of range for Rust type {}",
                self.rust_type
            )?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConversionError {}
