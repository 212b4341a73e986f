//! `Accept` negotiation of row GETs: media ranges weighed by `q` (RFC 9110, 12.5.1) against the
//! formats Sluice writes.

use sluice_formats::Format;

/// A format a GET answers in, chosen by `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The encoder's format.
    pub format: Format,
    /// The `Content-Type` of the answer.
    pub content_type: &'static str,
}

/// CSJ as `text/plain`: the answer when `Accept` is absent, names nothing Sluice writes, or
/// excludes everything.
pub const FALLBACK: Negotiated = Negotiated {
    format: Format::Csj,
    content_type: "text/plain; charset=utf-8",
};

/// What Sluice writes: the media types that name each answer, in the order that breaks ties
/// between answers a wildcard accepts equally. The fallback comes first so that `*/*` (curl,
/// browsers) keeps getting readable text.
const OFFERS: [(&[&str], Negotiated); 5] = [
    (&["text/plain"], FALLBACK),
    (
        &["application/csj"],
        Negotiated {
            format: Format::Csj,
            content_type: "application/csj",
        },
    ),
    (
        &["text/csv"],
        Negotiated {
            format: Format::Csv,
            content_type: "text/csv; charset=utf-8",
        },
    ),
    (
        &["application/json"],
        Negotiated {
            format: Format::Json,
            content_type: "application/json",
        },
    ),
    (
        &["application/x-ndjson", "application/jsonl"],
        Negotiated {
            format: Format::JsonLines,
            content_type: "application/x-ndjson",
        },
    ),
];

/// One media range of an `Accept` header.
struct Range<'a> {
    kind: &'a str,
    subtype: &'a str,
    /// The weight in thousandths (`q=0.5` is 500).
    q: u16,
}

/// The ranges of `accept` in order; a malformed range (no `/`, a bad `q`) is skipped.
fn ranges(accept: &str) -> impl Iterator<Item = Range<'_>> {
    accept.split(',').filter_map(|range| {
        let mut parts = range.split(';');
        let media = parts.next()?.trim();
        let (kind, subtype) = media.split_once('/')?;
        let (kind, subtype) = (kind.trim(), subtype.trim());
        if kind.is_empty() || subtype.is_empty() || (kind == "*" && subtype != "*") {
            return None;
        }
        let mut q = 1000;
        for parameter in parts {
            let Some((name, value)) = parameter.split_once('=') else {
                continue;
            };
            if name.trim().eq_ignore_ascii_case("q") {
                q = weight(value.trim())?;
                // Parameters after the weight are accept-extensions, not part of the range.
                break;
            }
        }
        Some(Range { kind, subtype, q })
    })
}

/// A `qvalue` in thousandths: `0`, `0.5`, `1`, `1.000`; anything else is `None`.
fn weight(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths: u16 = 0;
    for (i, digit) in fraction.bytes().enumerate() {
        let place = [100, 10, 1][i];
        thousandths += u16::from(digit - b'0') * place;
    }
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// How specifically `range` names `media` (`type/subtype`): 2 exactly, 1 by `type/*`, 0 by
/// `*/*`; `None` when it does not.
fn specificity(range: &Range<'_>, media: &str) -> Option<u8> {
    let (kind, subtype) = media.split_once('/')?;
    if range.kind == "*" {
        Some(0)
    } else if !range.kind.eq_ignore_ascii_case(kind) {
        None
    } else if range.subtype == "*" {
        Some(1)
    } else if range.subtype.eq_ignore_ascii_case(subtype) {
        Some(2)
    } else {
        None
    }
}

/// The weight `accept` gives one of Sluice's answers and where the deciding range stands: the
/// most specific range naming one of its media types decides (so `text/csv;q=0` excludes CSV
/// even beside `*/*`). `None`: no range names it.
fn offer_weight(accept: &str, names: &[&str]) -> Option<(u16, usize)> {
    let mut best: Option<(u8, u16, usize)> = None;
    for (position, range) in ranges(accept).enumerate() {
        let Some(specific) = names.iter().filter_map(|n| specificity(&range, n)).max() else {
            continue;
        };
        if best.is_none_or(|(s, _, _)| specific > s) {
            best = Some((specific, range.q, position));
        }
    }
    best.map(|(_, q, position)| (q, position))
}

/// The answer for `accept`: the format with the highest weight, ties to the range listed first,
/// then to the order of `OFFERS`; a weight of 0 excludes. Nothing acceptable (or no header):
/// [`FALLBACK`].
pub fn negotiate(accept: Option<&str>) -> Negotiated {
    let Some(accept) = accept else {
        return FALLBACK;
    };
    let mut chosen: Option<(u16, usize, Negotiated)> = None;
    for (names, offer) in OFFERS {
        let Some((q, position)) = offer_weight(accept, names) else {
            continue;
        };
        if q == 0 {
            continue;
        }
        let better = match chosen {
            None => true,
            Some((best_q, best_position, _)) => {
                q > best_q || (q == best_q && position < best_position)
            }
        };
        if better {
            chosen = Some((q, position, offer));
        }
    }
    chosen.map_or(FALLBACK, |(_, _, offer)| offer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(accept: &str) -> &'static str {
        negotiate(Some(accept)).content_type
    }

    const CSJ: &str = "application/csj";
    const CSV: &str = "text/csv; charset=utf-8";
    const JSON: &str = "application/json";
    const LINES: &str = "application/x-ndjson";
    const PLAIN: &str = "text/plain; charset=utf-8";

    #[test]
    fn first_listed_wins_among_equal_weights() {
        assert_eq!(negotiate(None), FALLBACK);
        assert_eq!(format("text/csv"), CSV);
        assert_eq!(format("application/json, text/csv"), JSON);
        assert_eq!(format("text/html, application/jsonl"), LINES);
        assert_eq!(format("APPLICATION/CSJ; charset=utf-8"), CSJ);
        assert_eq!(format("text/html"), PLAIN);
        assert_eq!(format(""), PLAIN);
    }

    #[test]
    fn the_highest_weight_wins() {
        assert_eq!(format("application/json;q=0.5, text/csv"), CSV);
        assert_eq!(format("text/csv;q=0.2, application/json;q=0.9"), JSON);
        assert_eq!(format("text/csv; q=0.333, application/csj ; Q=0.334"), CSJ);
        assert_eq!(format("application/json;q=1.000, text/csv;q=1"), JSON);
    }

    #[test]
    fn wildcards_and_exclusions() {
        // `*/*` alone keeps the readable fallback; type wildcards pick that type's first answer.
        assert_eq!(format("*/*"), PLAIN);
        assert_eq!(format("application/*"), CSJ);
        assert_eq!(format("text/*"), PLAIN);
        assert_eq!(format("text/*, text/plain;q=0"), CSV);
        assert_eq!(format("*/*, text/plain;q=0"), CSJ);
        assert_eq!(format("application/*;q=0.5, application/json"), JSON);
        assert_eq!(format("text/html, */*;q=0.1, application/json;q=0.2"), JSON);
        // An exact range outweighs a wildcard for its type, whatever the order.
        assert_eq!(format("application/*, application/csj;q=0"), JSON);
        // Everything excluded: the documented fallback, not 406.
        assert_eq!(format("application/json;q=0"), PLAIN);
        assert_eq!(format("*/*;q=0"), PLAIN);
    }

    #[test]
    fn malformed_ranges_are_skipped() {
        assert_eq!(format("text/csv;q=2, application/json"), JSON);
        assert_eq!(format("text/csv;q=0.5x, application/json;q=0.1"), JSON);
        assert_eq!(
            format("csv, */csv, application/json;q=0.0001, text/csv;q=0.9"),
            CSV
        );
        assert_eq!(
            format("text/csv;level=1;q=0.1;ext=2, application/json;q=0.2"),
            JSON
        );
        assert_eq!(weight("0.25"), Some(250));
        assert_eq!(weight("1.0"), Some(1000));
        assert_eq!(weight("1.5"), None);
        assert_eq!(weight(""), None);
        assert_eq!(weight("."), None);
    }
}
