//! `Sluice-Lsn`: the commit position a write answers with, and the one a read names so that a
//! replica serves it only once it has replayed that far (read your writes).
//!
//! A successful write's answer carries the WAL position of its commit in the `Sluice-Lsn`
//! header (and, when asked, a `sluice-lsn` cookie holding the largest position the client
//! presented or got). A read that sends one back, in the header or the cookie, is served by a
//! replica that has replayed at least that far, else by the primary. The header may list
//! several positions (repeated, or separated by commas): the read waits for the largest.

use http::{HeaderMap, HeaderName, HeaderValue, header};
use sluice_pg::Lsn;
use std::time::Duration;

/// The header, request and response.
pub const HEADER: HeaderName = HeaderName::from_static("sluice-lsn");

/// The cookie's name.
pub const COOKIE: &str = "sluice-lsn";

/// Whether and how writes report their commit position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LsnOptions {
    /// Write answers carry `Sluice-Lsn` (on when reads may go to replicas).
    pub report: bool,
    /// Write answers also set the `sluice-lsn` cookie, kept this long by the client.
    pub cookie: Option<Duration>,
}

/// A `Sluice-Lsn` header or cookie that is not a WAL position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {place} is not a WAL position: {value:?}")]
pub struct BadLsn {
    /// `Sluice-Lsn header` or `sluice-lsn cookie`.
    pub place: &'static str,
    /// What was sent (cut to 64 bytes).
    pub value: String,
}

impl BadLsn {
    fn new(place: &'static str, value: &[u8]) -> BadLsn {
        let cut = &value[..value.len().min(64)];
        BadLsn {
            place,
            value: String::from_utf8_lossy(cut).into_owned(),
        }
    }

    /// What the client should do, for the error's details.
    pub fn details(&self) -> String {
        format!(
            "expected a position as PostgreSQL prints a pg_lsn, two groups of 1 to 8 \
             hexadecimal digits such as 0/16B3748; got {:?}",
            self.value
        )
    }

    /// The error's hint.
    pub const HINT: &str =
        "Send back the Sluice-Lsn of a write's answer as it came, or leave the header out";
}

/// The position a request names: the largest in its `Sluice-Lsn` headers, else its
/// `sluice-lsn` cookie; `None` when it names none.
pub fn requested(headers: &HeaderMap) -> Result<Option<Lsn>, BadLsn> {
    let mut largest: Option<Lsn> = None;
    for value in headers.get_all(HEADER) {
        for item in value.as_bytes().split(|&b| b == b',') {
            let item = item.trim_ascii();
            let lsn = Lsn::parse(item).ok_or_else(|| BadLsn::new("Sluice-Lsn header", item))?;
            largest = largest.max(Some(lsn));
        }
    }
    if largest.is_some() {
        return Ok(largest);
    }
    for value in headers.get_all(header::COOKIE) {
        for pair in value.as_bytes().split(|&b| b == b';') {
            let Some(eq) = pair.iter().position(|&b| b == b'=') else {
                continue;
            };
            if pair[..eq].trim_ascii() != COOKIE.as_bytes() {
                continue;
            }
            let item = pair[eq + 1..].trim_ascii();
            let item = item
                .strip_prefix(b"\"")
                .and_then(|i| i.strip_suffix(b"\""))
                .unwrap_or(item);
            let lsn = Lsn::parse(item).ok_or_else(|| BadLsn::new("sluice-lsn cookie", item))?;
            largest = largest.max(Some(lsn));
        }
    }
    Ok(largest)
}

/// Marks a write's answer with its commit position `lsn`: the `Sluice-Lsn` header, and with
/// [`LsnOptions::cookie`] the cookie, holding the larger of `lsn` and what the request
/// presented (`presented`), so concurrent writes do not take a client back.
pub fn stamp(headers: &mut HeaderMap, lsn: Lsn, presented: Option<Lsn>, options: &LsnOptions) {
    if !options.report {
        return;
    }
    if let Ok(value) = HeaderValue::from_str(&lsn.to_string()) {
        headers.insert(HEADER, value);
    }
    if let Some(max_age) = options.cookie {
        let kept = presented.max(Some(lsn)).unwrap_or(lsn);
        let cookie = format!(
            "{COOKIE}={kept}; Path=/; Max-Age={}; HttpOnly; SameSite=Lax",
            max_age.as_secs().max(1)
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            headers.append(header::SET_COOKIE, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap_or(HEADER),
                HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
            );
        }
        map
    }

    #[test]
    fn a_request_names_the_largest_position_of_its_header_else_its_cookie() {
        assert_eq!(requested(&headers(&[])), Ok(None));
        assert_eq!(
            requested(&headers(&[("sluice-lsn", "0/16B3748")])),
            Ok(Some(Lsn(0x16B_3748)))
        );
        assert_eq!(
            requested(&headers(&[
                ("sluice-lsn", "0/5, 1/0"),
                ("sluice-lsn", " 0/FFFFFFFF ")
            ])),
            Ok(Some(Lsn(1 << 32)))
        );
        assert_eq!(
            requested(&headers(&[("cookie", "a=b; sluice-lsn=0/20; c=d")])),
            Ok(Some(Lsn(0x20)))
        );
        assert_eq!(
            requested(&headers(&[("cookie", "sluice-lsn=\"0/20\"")])),
            Ok(Some(Lsn(0x20)))
        );
        // The header wins over the cookie.
        assert_eq!(
            requested(&headers(&[
                ("cookie", "sluice-lsn=9/0"),
                ("sluice-lsn", "0/1")
            ])),
            Ok(Some(Lsn(1)))
        );
        // Other cookies are left alone.
        assert_eq!(
            requested(&headers(&[("cookie", "other-lsn=zz; sluice-lsnx=1")])),
            Ok(None)
        );
    }

    #[test]
    fn a_malformed_position_is_refused_saying_where() {
        for bad in [
            "",
            "16B3748",
            "0/16B3748/1",
            "x/1",
            "0/1,",
            "-1/0",
            "0/123456789",
        ] {
            let error = requested(&headers(&[("sluice-lsn", bad)])).unwrap_err();
            assert_eq!(error.place, "Sluice-Lsn header", "{bad:?}");
            assert!(error.details().contains("0/16B3748"));
        }
        let error = requested(&headers(&[("cookie", "sluice-lsn=soon")])).unwrap_err();
        assert_eq!(error.place, "sluice-lsn cookie");
        assert_eq!(error.value, "soon");
        let long = "9".repeat(500);
        let error = requested(&headers(&[("sluice-lsn", &long)])).unwrap_err();
        assert_eq!(error.value.len(), 64);
    }

    #[test]
    fn a_write_answer_carries_its_position_and_the_cookie_only_when_asked() {
        let mut map = HeaderMap::new();
        stamp(&mut map, Lsn(5), None, &LsnOptions::default());
        assert!(map.is_empty(), "not reported unless on");
        let on = LsnOptions {
            report: true,
            cookie: None,
        };
        stamp(&mut map, Lsn(5), Some(Lsn(9)), &on);
        assert_eq!(map.get(HEADER).map(|v| v.as_bytes()), Some(&b"0/5"[..]));
        assert!(map.get(header::SET_COOKIE).is_none());
        let cookie = LsnOptions {
            report: true,
            cookie: Some(Duration::from_secs(11)),
        };
        let mut map = HeaderMap::new();
        stamp(&mut map, Lsn(5), Some(Lsn(0x1_0000_0009)), &cookie);
        assert_eq!(map.get(HEADER).map(|v| v.as_bytes()), Some(&b"0/5"[..]));
        assert_eq!(
            map.get(header::SET_COOKIE).map(|v| v.as_bytes()),
            Some(&b"sluice-lsn=1/9; Path=/; Max-Age=11; HttpOnly; SameSite=Lax"[..])
        );
    }
}
