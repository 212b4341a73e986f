//! Negotiation with media type handlers, their answers' `Content-Type`, and `bytea` values.

use super::{Representation, negotiate};
use crate::error::ApiError;
use crate::request::{MediaType, SelectItem};
use crate::schema::media::{ANY, MediaHandler, MediaHandlers};
use http::HeaderValue;

/// What answers a request: rows in a built-in representation, or a handler's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiated<'c> {
    /// Rows, written by Sluice.
    Builtin(Representation),
    /// The value of a handler (a function's, or an aggregate's over the rows).
    Handler {
        /// The handler.
        handler: &'c MediaHandler,
        /// It is the target's own (else an `anyelement` aggregate's).
        own: bool,
    },
}

impl Negotiated<'_> {
    /// The answer's `Content-Type`.
    pub fn content_type(&self) -> HeaderValue {
        match self {
            Negotiated::Builtin(representation) => {
                HeaderValue::from_static(representation.content_type())
            }
            Negotiated::Handler { handler, .. } => content_type(handler),
        }
    }
}

/// What a request's answer is for, to find its handlers.
#[derive(Debug, Clone, Copy)]
pub struct Answering<'a> {
    /// The schema of the relation read (a table, a function's result table) or function called.
    pub schema: &'a str,
    /// Its name.
    pub name: &'a str,
    /// The request selects the default (`*`, no `select=`): only then do the relation's (or
    /// function's) own handlers apply, as their aggregates take its whole row.
    pub default_select: bool,
    /// Which handlers can answer: those returning the domain (a scalar function's value)
    /// besides aggregates.
    pub values: bool,
}

/// PostgREST's content negotiation with handlers: for each accepted media type, best first,
/// the vendor types (`vnd.pgrst.object`) built in; else the target's `*/*` handler, its handler
/// for that media type (both with the default select only), the `anyelement` aggregate for it,
/// then Sluice's built-in representations; 406 PGRST107 when none answers. Without handlers of
/// the target nor `anyelement` ones, this is [`negotiate`].
pub fn negotiate_handlers<'c>(
    accept: &[MediaType],
    handlers: &'c MediaHandlers,
    answering: Answering<'_>,
) -> Result<Negotiated<'c>, ApiError> {
    if handlers.is_empty() {
        return negotiate(accept).map(Negotiated::Builtin);
    }
    // The target's own handlers, found once (and only with the default select); none at all
    // is the built-in negotiation, with no more work.
    let own: &[MediaHandler] = match answering.default_select {
        true => handlers.of_target(answering.schema, answering.name),
        false => &[],
    };
    if own.is_empty() && handlers.any_relation_is_empty() {
        return negotiate(accept).map(Negotiated::Builtin);
    }
    let own_for = |media_type: &str| {
        own.iter()
            .find(|h| h.media_type == media_type && (answering.values || h.aggregate.is_some()))
    };
    for media in accept {
        if let MediaType::SingleObject { .. } = media {
            return negotiate(std::slice::from_ref(media)).map(Negotiated::Builtin);
        }
        let Some(key) = handler_key(media) else {
            continue;
        };
        if let Some(handler) = own_for(ANY).or_else(|| own_for(key)) {
            return Ok(Negotiated::Handler { handler, own: true });
        }
        let any_relation = handlers.of_any_relation(key);
        if let Some(handler) = any_relation.filter(|h| h.aggregate.is_some()) {
            return Ok(Negotiated::Handler {
                handler,
                own: false,
            });
        }
        if let Ok(representation) = negotiate(std::slice::from_ref(media)) {
            return Ok(Negotiated::Builtin(representation));
        }
    }
    // Nothing answered: the built-in negotiation's answer (its 406).
    negotiate(accept).map(Negotiated::Builtin)
}

/// The media type a handler would be named by (lowercase), for those handlers may answer.
pub fn handler_key(media: &MediaType) -> Option<&str> {
    Some(match media {
        MediaType::Json => "application/json",
        MediaType::Csv => "text/csv",
        MediaType::JsonLines => "application/x-ndjson",
        MediaType::Csj => "application/csj",
        MediaType::TextPlain => "text/plain",
        MediaType::OctetStream => "application/octet-stream",
        MediaType::OpenApi => "application/openapi+json",
        MediaType::UrlEncoded => "application/x-www-form-urlencoded",
        MediaType::Any => ANY,
        MediaType::Other(other) => other,
        MediaType::SingleObject { .. } | MediaType::ArrayStripped | MediaType::Plan(_) => {
            return None;
        }
    })
}

/// Whether `select=` is the default (not given, or `*` alone).
pub fn default_select(select: Option<&[SelectItem]>) -> bool {
    matches!(select, None | Some([SelectItem::Star]))
}

/// The `Content-Type` of a handler's answer: its media type, with `; charset=utf-8` for those
/// PostgREST knows as text (JSON, GeoJSON, CSV, plain text, XML, OpenAPI, forms).
pub fn content_type(handler: &MediaHandler) -> HeaderValue {
    let text = matches!(
        handler.resolved.as_str(),
        "application/json"
            | "application/geo+json"
            | "text/csv"
            | "text/plain"
            | "text/xml"
            | "application/openapi+json"
            | "application/x-www-form-urlencoded"
    );
    let value = if text {
        HeaderValue::from_str(&format!("{}; charset=utf-8", handler.resolved))
    } else {
        HeaderValue::from_str(&handler.resolved)
    };
    value.unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"))
}

/// Appends a handler's value (`raw`, the first column of its one row) to `out`: a `bytea`'s
/// bytes, else its text; none (NULL) appends nothing. Gives the number of rows the aggregate
/// took (`count`, the second column), 1 when there is none (a function's value).
pub fn push_value(raw: Option<&[u8]>, count: Option<&[u8]>, bytea: bool, out: &mut Vec<u8>) -> u64 {
    match raw {
        Some(raw) if bytea => push_bytea(raw, out),
        Some(raw) => out.extend_from_slice(raw),
        None => {}
    }
    count
        .and_then(|n| std::str::from_utf8(n).ok()?.parse().ok())
        .unwrap_or(1)
}

/// Appends the bytes of a `bytea` value from its text form (`\x` hex, or the escape format),
/// decoded as the driver decodes bytea; a value in neither form is appended as it is.
pub fn push_bytea(text: &[u8], out: &mut Vec<u8>) {
    use sluice_pg::FromSql;
    match Vec::<u8>::from_sql(sluice_pg::types::oid::BYTEA, sluice_pg::Format::Text, text) {
        Ok(bytes) => out.extend_from_slice(&bytes),
        Err(_) => out.extend_from_slice(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::QualifiedName;
    use crate::schema::media::handler;

    fn handlers() -> MediaHandlers {
        let mut handlers = MediaHandlers::default();
        let agg = |name: &str| Some(QualifiedName::new("public", name));
        let lines = || Some(QualifiedName::new("public", "lines"));
        handlers.insert(
            lines(),
            handler("application/vnd.twkb".into(), agg("twkb"), true),
        );
        handlers.insert(lines(), handler("text/csv".into(), agg("bom_csv"), false));
        handlers.insert(None, handler("pg/outfunc".into(), agg("outfunc"), false));
        let welcome = Some(QualifiedName::new("public", "welcome"));
        handlers.insert(welcome, handler("text/plain".into(), None, false));
        let numbers = Some(QualifiedName::new("public", "numbers"));
        handlers.insert(numbers, handler(ANY.into(), agg("some_agg"), true));
        handlers
    }

    fn answering(name: &str, default_select: bool, values: bool) -> Answering<'_> {
        Answering {
            schema: "public",
            name,
            default_select,
            values,
        }
    }

    fn chosen(accept: &[MediaType], answering: Answering<'_>) -> Result<String, String> {
        let handlers = handlers();
        match negotiate_handlers(accept, &handlers, answering) {
            Ok(Negotiated::Handler { handler, .. }) => Ok(handler.media_type.clone()),
            Ok(Negotiated::Builtin(r)) => Ok(format!("{r:?}")),
            Err(e) => Err(e.code),
        }
    }

    #[test]
    fn handlers_are_chosen_as_postgrest_chooses_them() {
        let other = |s: &str| MediaType::Other(s.into());
        let lines = answering("lines", true, false);
        assert_eq!(
            chosen(&[other("application/vnd.twkb")], lines).unwrap(),
            "application/vnd.twkb"
        );
        assert_eq!(chosen(&[MediaType::Csv], lines).unwrap(), "text/csv");
        assert_eq!(chosen(&[MediaType::Json], lines).unwrap(), "Array");
        assert_eq!(chosen(&[other("pg/outfunc")], lines).unwrap(), "pg/outfunc");
        assert_eq!(
            chosen(&[other("text/xml"), MediaType::Json], lines).unwrap(),
            "Array"
        );
        assert_eq!(
            chosen(&[MediaType::TextPlain], lines).unwrap_err(),
            "PGRST107"
        );
        // The relation's own handlers need the default select; anyelement's do not.
        let selected = answering("lines", false, false);
        assert!(chosen(&[other("application/vnd.twkb")], selected).is_err());
        assert_eq!(
            chosen(&[other("pg/outfunc")], selected).unwrap(),
            "pg/outfunc"
        );
        // A function's value handler, only for a value.
        assert_eq!(
            chosen(&[MediaType::TextPlain], answering("welcome", true, true)).unwrap(),
            "text/plain"
        );
        assert!(chosen(&[MediaType::TextPlain], answering("welcome", true, false)).is_err());
        // `*/*` answers every media type but the vendor ones.
        let numbers = answering("numbers", true, false);
        for accept in [MediaType::Json, MediaType::Any, other("magic/number")] {
            assert_eq!(chosen(&[accept], numbers).unwrap(), ANY);
        }
        assert_eq!(
            chosen(
                &[MediaType::SingleObject {
                    nulls_stripped: false
                }],
                numbers
            )
            .unwrap(),
            "Object"
        );
    }

    #[test]
    fn content_types_have_a_charset_for_text_postgrest_knows() {
        let of = |name: &str| content_type(&handler(name.into(), None, false));
        assert_eq!(of("text/plain"), "text/plain; charset=utf-8");
        assert_eq!(of("text/xml"), "text/xml; charset=utf-8");
        assert_eq!(of("text/html"), "text/html");
        assert_eq!(of("image/png"), "image/png");
        assert_eq!(of(ANY), "application/octet-stream");
    }

    #[test]
    fn a_value_and_its_count() {
        let mut out = Vec::new();
        assert_eq!(push_value(Some(b"\\x41"), Some(b"3"), true, &mut out), 3);
        assert_eq!(push_value(Some(b"b"), None, false, &mut out), 1);
        assert_eq!(push_value(None, Some(b"0"), true, &mut out), 0);
        assert_eq!(out, b"Ab");
    }

    #[test]
    fn bytea_text_becomes_bytes() {
        let mut out = Vec::new();
        push_bytea(b"\\x00ff41", &mut out);
        assert_eq!(out, b"\x00\xffA");
        out.clear();
        push_bytea(b"a\\\\b\\001\\377", &mut out);
        assert_eq!(out, b"a\\b\x01\xff");
    }

    #[test]
    fn the_default_select_is_none_or_a_star() {
        assert!(default_select(None));
        assert!(default_select(Some(&[SelectItem::Star])));
        assert!(!default_select(Some(&[])));
        assert!(!default_select(Some(&[SelectItem::Star, SelectItem::Star])));
    }
}
