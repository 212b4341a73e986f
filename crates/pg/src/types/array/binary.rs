//! Binary arrays as `array_send` writes them: ndim, has-null flag, element type, then per
//! dimension its length and lower bound, then each element as a length (-1 for NULL) and bytes.

use crate::types::{ConversionError, ConversionErrorKind, IsNull, Oid, ToSql};
use bytes::{BufMut, BytesMut};

/// The most dimensions PostgreSQL allows (MAXDIM).
const MAX_DIMENSIONS: i32 = 6;

/// A checked binary array header and the bytes of its elements.
pub(crate) struct BinaryArray<'a> {
    pub(crate) element_oid: Oid,
    pub(crate) len: usize,
    elements: &'a [u8],
}

fn take<const N: usize>(rest: &mut &[u8]) -> Option<[u8; N]> {
    let (head, tail) = rest.split_first_chunk::<N>()?;
    *rest = tail;
    Some(*head)
}

/// Reads and checks the header of a binary array of type `oid`.
pub(crate) fn parse<'a>(
    oid: Oid,
    rust_type: &'static str,
    raw: &'a [u8],
) -> Result<BinaryArray<'a>, ConversionError> {
    let bad = |detail: String| ConversionError::invalid(oid, rust_type, detail);
    let mut rest = raw;
    let short = || {
        bad(format!(
            "binary array header is cut short ({} bytes)",
            raw.len()
        ))
    };
    let ndim = i32::from_be_bytes(take(&mut rest).ok_or_else(short)?);
    let flags = i32::from_be_bytes(take(&mut rest).ok_or_else(short)?);
    let element_oid = u32::from_be_bytes(take(&mut rest).ok_or_else(short)?);
    if !(0..=MAX_DIMENSIONS).contains(&ndim) {
        return Err(bad(format!(
            "{ndim} dimensions is outside 0..={MAX_DIMENSIONS}"
        )));
    }
    if flags != 0 && flags != 1 {
        return Err(bad(format!("has-null flag {flags} is neither 0 nor 1")));
    }
    if ndim > 1 {
        return Err(ConversionError::new(
            ConversionErrorKind::WrongType,
            oid,
            rust_type,
            format!(
                "the array has {ndim} dimensions; only one-dimensional arrays can be read as a Vec"
            ),
        ));
    }
    let mut len = 0;
    if ndim == 1 {
        let count = i32::from_be_bytes(take(&mut rest).ok_or_else(short)?);
        let _lower_bound = i32::from_be_bytes(take(&mut rest).ok_or_else(short)?);
        len = usize::try_from(count)
            .map_err(|_| bad(format!("negative dimension length {count}")))?;
    }
    Ok(BinaryArray {
        element_oid,
        len,
        elements: rest,
    })
}

impl<'a> BinaryArray<'a> {
    /// Calls `visit` with each element (`None` for NULL) in order, checking the framing.
    pub(crate) fn for_each(
        &self,
        oid: Oid,
        rust_type: &'static str,
        mut visit: impl FnMut(usize, Option<&'a [u8]>) -> Result<(), ConversionError>,
    ) -> Result<(), ConversionError> {
        let bad = |detail: String| ConversionError::invalid(oid, rust_type, detail);
        let mut rest = self.elements;
        for index in 0..self.len {
            let position = index + 1;
            let length = take::<4>(&mut rest)
                .map(i32::from_be_bytes)
                .ok_or_else(|| {
                    bad(format!(
                        "array element {position} of {} is missing",
                        self.len
                    ))
                })?;
            let value = match length {
                -1 => None,
                _ => {
                    let length = usize::try_from(length).map_err(|_| {
                        bad(format!("array element {position} has length {length}"))
                    })?;
                    let (value, tail) = rest.split_at_checked(length).ok_or_else(|| {
                        bad(format!(
                            "array element {position} needs {length} bytes, {} remain",
                            rest.len()
                        ))
                    })?;
                    rest = tail;
                    Some(value)
                }
            };
            visit(index, value)?;
        }
        if !rest.is_empty() {
            return Err(bad(format!(
                "{} bytes follow the last array element",
                rest.len()
            )));
        }
        Ok(())
    }

    /// A capacity for the decoded elements that a forged length cannot inflate: every
    /// element takes at least its 4-byte length.
    pub(crate) fn capacity(&self) -> usize {
        self.len.min(self.elements.len() / 4)
    }
}

/// Writes `items` as a one-dimensional binary array of `element_oid` (lower bound 1).
pub(crate) fn encode<T: ToSql>(
    items: &[T],
    element_oid: Oid,
    out: &mut BytesMut,
) -> Result<(), (usize, ConversionError)> {
    let count = i32::try_from(items.len()).map_err(|_| {
        let detail = format!("{} elements exceed the array limit", items.len());
        (
            0,
            ConversionError::out_of_range(element_oid, "array", detail),
        )
    })?;
    out.put_i32(i32::from(count > 0));
    let flags_at = out.len();
    out.put_i32(0);
    out.put_u32(element_oid);
    if count > 0 {
        out.put_i32(count);
        out.put_i32(1);
    }
    let mut has_null = false;
    for (index, item) in items.iter().enumerate() {
        let length_at = out.len();
        out.put_i32(0);
        match item
            .to_sql_binary(element_oid, out)
            .map_err(|e| (index, e))?
        {
            IsNull::Yes => {
                out.truncate(length_at + 4);
                out[length_at..length_at + 4].copy_from_slice(&(-1i32).to_be_bytes());
                has_null = true;
            }
            IsNull::No => {
                let length = out.len() - length_at - 4;
                let length = i32::try_from(length).map_err(|_| {
                    let detail =
                        format!("an element of {length} bytes exceeds the 1 GB field limit");
                    (
                        index,
                        ConversionError::out_of_range(element_oid, item.rust_type(), detail),
                    )
                })?;
                out[length_at..length_at + 4].copy_from_slice(&length.to_be_bytes());
            }
        }
    }
    if has_null {
        out[flags_at..flags_at + 4].copy_from_slice(&1i32.to_be_bytes());
    }
    Ok(())
}
