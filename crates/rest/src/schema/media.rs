//! Media type handlers: functions and aggregates returning a domain named after a media type.

use std::collections::{HashMap, HashSet};

use sluice_pg::Connection;

use super::model::{NameKey, QualifiedName};

/// The media type a domain named `*/*` stands for: any, answered as this one.
pub const ANY: &str = "*/*";

/// What answers one media type for one relation or function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaHandler {
    /// The media type as the domain names it, in lowercase (`text/html`, `*/*`).
    pub media_type: String,
    /// The answer's media type: the domain's name, `application/octet-stream` for `*/*`.
    pub resolved: String,
    /// The aggregate that folds the rows into the answer; `None` for a function returning the
    /// domain, whose value is the answer.
    pub aggregate: Option<QualifiedName>,
    /// The domain is over `bytea`: the value's text form is hex (or escaped) to decode.
    pub bytea: bool,
}

/// Every handler of the exposed schemas.
#[derive(Debug, Clone, Default)]
pub struct MediaHandlers {
    /// By the relation an aggregate takes the rows of, or the function returning the domain.
    by_target: HashMap<QualifiedName, Vec<MediaHandler>>,
    /// Aggregates over `anyelement`: for the rows of any relation.
    any_relation: Vec<MediaHandler>,
    /// The media types some handler answers.
    media_types: HashSet<String>,
}

impl MediaHandlers {
    /// No handler at all: negotiation is the built-in one alone.
    pub fn is_empty(&self) -> bool {
        self.by_target.is_empty() && self.any_relation.is_empty()
    }

    /// The handler of `schema.name` (a relation or a function) for `media_type` (lowercase).
    pub fn of(&self, schema: &str, name: &str, media_type: &str) -> Option<&MediaHandler> {
        self.of_target(schema, name)
            .iter()
            .find(|h| h.media_type == media_type)
    }

    /// Every handler of `schema.name` (a relation or a function).
    pub fn of_target(&self, schema: &str, name: &str) -> &[MediaHandler] {
        self.by_target
            .get(&(schema, name) as &dyn NameKey)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether some `anyelement` aggregate answers any relation.
    pub fn any_relation_is_empty(&self) -> bool {
        self.any_relation.is_empty()
    }

    /// The `anyelement` aggregate for `media_type` (lowercase).
    pub fn of_any_relation(&self, media_type: &str) -> Option<&MediaHandler> {
        self.any_relation
            .iter()
            .find(|h| h.media_type == media_type)
    }

    /// Whether some handler, of any target, answers `media_type` (lowercase): its own, or `*/*`.
    pub fn may_answer(&self, media_type: &str) -> bool {
        self.media_types.contains(media_type) || self.media_types.contains(ANY)
    }

    /// Adds a handler for `target` (`None`: any relation); the first for a media type stays.
    pub fn insert(&mut self, target: Option<QualifiedName>, handler: MediaHandler) {
        let list = match target {
            Some(target) => self.by_target.entry(target).or_default(),
            None => &mut self.any_relation,
        };
        if !list.iter().any(|h| h.media_type == handler.media_type) {
            self.media_types.insert(handler.media_type.clone());
            list.push(handler);
        }
    }
}

/// Aggregates of the exposed schemas taking one relation's row type (or `anyelement`) and
/// returning a media type domain; then functions of the exposed schemas returning one (not a
/// set). Each: aggregate's schema and name (NULL for a function), the target's schema and
/// name (NULL for `anyelement`), the media type, whether the domain is over bytea.
const HANDLERS: &str = "\
WITH media AS ( \
  SELECT t.oid, pg_catalog.lower(t.typname) AS media_type, \
         t.typbasetype = 'pg_catalog.bytea'::pg_catalog.regtype AS over_bytea \
  FROM pg_catalog.pg_type t \
  WHERE t.typtype = 'd' \
    AND (t.typname OPERATOR(pg_catalog.~*) '^[A-Za-z0-9.-]+/[A-Za-z0-9.+-]+$' OR t.typname = '*/*')) \
SELECT an.nspname::text, p.proname::text, cn.nspname::text, c.relname::text, m.media_type, \
       m.over_bytea \
FROM media m \
JOIN pg_catalog.pg_proc p ON p.prorettype = m.oid \
JOIN pg_catalog.pg_aggregate g ON g.aggfnoid = p.oid \
JOIN pg_catalog.pg_namespace an ON an.oid = p.pronamespace \
LEFT JOIN pg_catalog.pg_class c ON c.reltype = p.proargtypes[0] \
  AND c.relkind IN ('r', 'v', 'm', 'f', 'p') \
LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace \
WHERE an.nspname = ANY($1::text[]) AND p.pronargs = 1 \
  AND (c.oid IS NOT NULL OR p.proargtypes[0] = 'pg_catalog.anyelement'::pg_catalog.regtype) \
UNION ALL \
SELECT NULL, NULL, n.nspname::text, p.proname::text, m.media_type, m.over_bytea \
FROM media m \
JOIN pg_catalog.pg_proc p ON p.prorettype = m.oid \
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
WHERE n.nspname = ANY($1::text[]) AND p.prokind = 'f' AND NOT p.proretset \
ORDER BY 1, 2, 3, 4";

/// The handlers of the schemas in `list` (a text array literal).
pub(super) async fn load(
    conn: &mut Connection,
    list: &str,
) -> Result<MediaHandlers, sluice_pg::Error> {
    let rows = conn.query(HANDLERS, &[&list]).await?;
    let mut handlers = MediaHandlers::default();
    for row in rows.iter() {
        let aggregate = match (row.get::<Option<String>>(0)?, row.get::<Option<String>>(1)?) {
            (Some(schema), Some(name)) => Some(QualifiedName::new(schema, name)),
            _ => None,
        };
        let target = match (row.get::<Option<String>>(2)?, row.get::<Option<String>>(3)?) {
            (Some(schema), Some(name)) => Some(QualifiedName::new(schema, name)),
            _ => None,
        };
        let media_type: String = row.get(4)?;
        let bytea: bool = row.get(5)?;
        handlers.insert(target, handler(media_type, aggregate, bytea));
    }
    Ok(handlers)
}

/// A handler for the domain named `media_type`.
pub fn handler(media_type: String, aggregate: Option<QualifiedName>, bytea: bool) -> MediaHandler {
    let resolved = if media_type == ANY {
        "application/octet-stream".to_string()
    } else {
        media_type.clone()
    };
    MediaHandler {
        media_type,
        resolved,
        aggregate,
        bytea,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handlers_are_found_by_target_and_media_type() {
        let mut handlers = MediaHandlers::default();
        assert!(handlers.is_empty());
        let lines = QualifiedName::new("public", "lines");
        let twkb = QualifiedName::new("public", "twkb_agg");
        handlers.insert(
            Some(lines.clone()),
            handler("application/vnd.twkb".into(), Some(twkb.clone()), true),
        );
        handlers.insert(
            Some(lines),
            handler("application/vnd.twkb".into(), None, false),
        );
        handlers.insert(None, handler(ANY.into(), None, true));
        let found = handlers
            .of("public", "lines", "application/vnd.twkb")
            .unwrap();
        assert_eq!(found.aggregate.as_ref(), Some(&twkb), "the first one stays");
        assert!(handlers.of("public", "lines", "text/html").is_none());
        assert!(handlers.may_answer("text/html"), "*/* answers it");
        assert_eq!(
            handlers.of_any_relation(ANY).unwrap().resolved,
            "application/octet-stream"
        );
    }
}
