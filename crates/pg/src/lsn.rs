//! WAL positions (`pg_lsn`): PostgreSQL's `X/Y` text form, the position a commit reports for
//! reads that must see it (`Connection::commit_lsn`, [`crate::Pipeline::commit_position`]), and the
//! guard a read on a replica runs first ([`REPLAYED_SQL`]).
//!
//! The commit position is read right after the COMMIT, in the same round trip:
//! `pg_current_wal_insert_lsn()`, the end of everything inserted into the WAL so far, so at
//! least the end of this transaction's commit record whatever `synchronous_commit` says. A
//! replica whose `pg_last_wal_replay_lsn()` has reached it has replayed the commit, and a
//! snapshot taken there afterwards sees the transaction. It may lie a little beyond the commit
//! (other sessions' records inserted meanwhile): a replica then needs those too, which costs
//! wait, never correctness.
//!
//! One adjustment keeps it reachable on a quiet server: when nothing has been inserted on the
//! current WAL page yet, the insert position is just past the page header, where no record can
//! end, while a replica that replayed everything reports the page's start. Such a position is
//! reported as the page's start ([`Lsn::from_insert_position`]).

use crate::rows::Rows;
use std::fmt;

/// A position in the write-ahead log, as `pg_lsn` holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

/// The statement that reads the commit position: run after the COMMIT (in a later group of the
/// same pipeline, or after the COMMIT statement), never inside the transaction.
pub const COMMIT_POSITION_SQL: &str =
    "SELECT pg_catalog.pg_current_wal_insert_lsn(), pg_catalog.current_setting('wal_block_size')";

/// The guard of a read on a replica, its parameter the position (text): `t` when the replica
/// has replayed at least that far. Statements after it in the same implicit transaction take
/// their snapshots after it ran, so under read committed they see everything up to the position.
pub const REPLAYED_SQL: &str = "SELECT pg_catalog.pg_last_wal_replay_lsn() >= $1::text::pg_lsn";

/// Whether the rows of [`REPLAYED_SQL`] say the server has replayed the position (`t`; `f` or
/// NULL, on a server that never was in recovery, say it has not).
pub fn replayed(rows: &Rows) -> bool {
    rows.get(0).and_then(|row| row.raw(0)) == Some(b"t".as_slice())
}

/// The largest WAL page header (a segment's first page): an insert position this close to a
/// page's start with nothing on the page yet.
const MAX_PAGE_HEADER: u64 = 40;

/// The smallest WAL record (its header alone).
const MIN_RECORD: u64 = 24;

/// The smallest page header (a 32-bit server's short header): no record fits between its end
/// and [`MAX_PAGE_HEADER`], which [`Lsn::from_insert_position`] relies on.
const MIN_PAGE_HEADER: u64 = 20;
const _: () = assert!(MAX_PAGE_HEADER - MIN_PAGE_HEADER < MIN_RECORD);

impl Lsn {
    /// Parses PostgreSQL's text form (`16/B374D848`: two groups of one to eight hexadecimal
    /// digits). `None` for anything else.
    pub fn parse(text: &[u8]) -> Option<Lsn> {
        let slash = text.iter().position(|&b| b == b'/')?;
        let (high, low) = (&text[..slash], &text[slash + 1..]);
        let group = |digits: &[u8]| -> Option<u64> {
            if digits.is_empty() || digits.len() > 8 {
                return None;
            }
            digits.iter().try_fold(0u64, |value, &b| {
                let digit = (b as char).to_digit(16)?;
                Some((value << 4) | u64::from(digit))
            })
        };
        Some(Lsn((group(high)? << 32) | group(low)?))
    }

    /// The position to report for an insert position `position` on a server whose WAL pages
    /// are `block_size` bytes: the page's start when nothing is on the page yet (the position is
    /// within the page header, where no record ends), else the position itself.
    ///
    /// Safe whatever the header's size (20 to 40 bytes): a record is at least `MIN_RECORD` (24)
    /// bytes, so none fits between a header's end and `position`. A commit that ended at or
    /// before `position` either ended at or before the page's start, or is the record that
    /// crosses into this page, and then no record ends between the page's start and it: a
    /// replica at the page's start has replayed it.
    pub fn from_insert_position(position: Lsn, block_size: u64) -> Lsn {
        if block_size < 2 * MAX_PAGE_HEADER || !block_size.is_power_of_two() {
            return position;
        }
        let into_page = position.0 % block_size;
        if into_page != 0 && into_page <= MAX_PAGE_HEADER {
            Lsn(position.0 - into_page)
        } else {
            position
        }
    }

    /// The position in the result of [`COMMIT_POSITION_SQL`]; `None`, with a warning in the
    /// log, when it failed or holds none (the write committed all the same).
    pub fn from_commit_result(result: Option<&crate::Result<Rows>>) -> Option<Lsn> {
        match result {
            Some(Ok(rows)) => {
                let lsn = Lsn::from_commit_position(rows);
                if lsn.is_none() {
                    tracing::warn!("the commit position read after a COMMIT is not a WAL position");
                }
                lsn
            }
            Some(Err(error)) => {
                tracing::warn!(%error, "the commit position could not be read after a COMMIT; \
                    reads naming this write go to the primary");
                None
            }
            None => None,
        }
    }

    /// The position in the rows of [`COMMIT_POSITION_SQL`].
    pub fn from_commit_position(rows: &Rows) -> Option<Lsn> {
        let row = rows.get(0)?;
        let position = Lsn::parse(row.raw(0)?)?;
        let block_size = std::str::from_utf8(row.raw(1)?).ok()?.parse().ok()?;
        Some(Lsn::from_insert_position(position, block_size))
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}

impl std::str::FromStr for Lsn {
    type Err = InvalidLsn;
    fn from_str(text: &str) -> Result<Lsn, InvalidLsn> {
        Lsn::parse(text.as_bytes()).ok_or(InvalidLsn)
    }
}

/// A text that is not a WAL position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a WAL position: expected PostgreSQL's pg_lsn form, two groups of 1 to 8 hexadecimal digits such as 0/16B3748"
)]
pub struct InvalidLsn;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse_print_and_order() {
        assert_eq!(Lsn::parse(b"0/0"), Some(Lsn(0)));
        let lsn = Lsn::parse(b"16/B374D848").unwrap_or_default();
        assert_eq!(lsn, Lsn((0x16 << 32) | 0xB374_D848));
        assert_eq!(lsn.to_string(), "16/B374D848");
        assert_eq!(Lsn::parse(b"16/b374d848"), Some(lsn));
        assert_eq!("FFFFFFFF/FFFFFFFF".parse::<Lsn>(), Ok(Lsn(u64::MAX)));
        assert!(Lsn::parse(b"1/FFFFFFFF") < Lsn::parse(b"2/0"));
        for bad in [
            &b""[..],
            b"/",
            b"1/",
            b"/1",
            b"x/1",
            b"+1/1",
            b"1/-1",
            b" 1/1",
            b"1/1 ",
            b"123456789/0",
            b"0/123456789",
            b"1/2/3",
            b"\xff/1",
        ] {
            assert_eq!(Lsn::parse(bad), None, "{bad:?}");
        }
        assert_eq!("x".parse::<Lsn>(), Err(InvalidLsn));
    }

    #[test]
    fn an_insert_position_past_a_page_header_is_reported_as_the_page_start() {
        let page = 8192;
        // Just past a page header (short 24, long 40): nothing ends there.
        assert_eq!(
            Lsn::from_insert_position(Lsn(5 * page + 24), page),
            Lsn(5 * page)
        );
        assert_eq!(
            Lsn::from_insert_position(Lsn(2048 * page + 40), page),
            Lsn(2048 * page)
        );
        // Anywhere else, as it is.
        for position in [0, 5 * page, 5 * page + 48, 5 * page + 8000] {
            assert_eq!(
                Lsn::from_insert_position(Lsn(position), page),
                Lsn(position)
            );
        }
        // Other page sizes count from their own pages; a nonsense size changes nothing.
        assert_eq!(
            Lsn::from_insert_position(Lsn(3 * 32768 + 24), 32768),
            Lsn(3 * 32768)
        );
        assert_eq!(
            Lsn::from_insert_position(Lsn(8192 + 24), 32768),
            Lsn(8192 + 24)
        );
        assert_eq!(
            Lsn::from_insert_position(Lsn(1000 + 24), 1000),
            Lsn(1000 + 24)
        );
    }
}
