//! uuid 1 (feature `with-uuid-1`): `uuid::Uuid` ↔ uuid.

use super::convert_through;
use crate::types::{Uuid, oid};

convert_through!(::uuid::Uuid, Uuid, oid::UUID, "uuid::Uuid",
    read: |u| Some(::uuid::Uuid::from_bytes(*u.as_bytes())),
    write: |u| Ok(Uuid::from_bytes(*u.as_bytes())));

#[cfg(test)]
mod tests {
    use crate::types::{Format, FromSql, ToSql, oid};
    use bytes::BytesMut;

    #[test]
    fn round_trips_both_formats() {
        let value = ::uuid::Uuid::from_u128(0xa0ee_bc99_9c0b_4ef8_bb6d_6bb9_bd38_0a11);
        let mut out = BytesMut::new();
        value.to_sql_binary(oid::UUID, &mut out).unwrap();
        assert_eq!(&out[..], value.as_bytes());
        assert_eq!(
            ::uuid::Uuid::from_sql(oid::UUID, Format::Binary, &out),
            Ok(value)
        );
        out.clear();
        value.to_sql_text(&mut out).unwrap();
        assert_eq!(&out[..], b"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        assert_eq!(
            ::uuid::Uuid::from_sql(oid::UUID, Format::Text, &out),
            Ok(value)
        );
        assert!(::uuid::Uuid::from_sql(oid::TEXT, Format::Text, &out).is_err());
        assert!(::uuid::Uuid::from_sql(oid::UUID, Format::Binary, &out[..15]).is_err());
    }
}
