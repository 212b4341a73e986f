//! `select=` (columns, aliases, casts, JSON paths, aggregates, embedded resources and spreads)
//! and `order=`, and the field names they are made of.

use super::ast::{
    Aggregate, Direction, Field, JoinType, JsonKey, JsonStep, Nulls, OrderTerm, SelectItem,
};
use super::cursor::Cursor;
use crate::error::ApiError;

/// How deep embedded resources may nest in `select`.
const MAX_DEPTH: usize = 32;

/// A field: a column name with an optional JSON path (`data->a->>b`, `arr->0`).
pub(crate) fn field(cur: &mut Cursor<'_>) -> Option<Field> {
    let name = cur.name()?;
    let json_path = json_path(cur)?;
    Some(Field { name, json_path })
}

/// The JSON path after a column name: `->key`, `->>key`, `->0`; `None` when an arrow has no key.
pub(crate) fn json_path(cur: &mut Cursor<'_>) -> Option<Vec<JsonStep>> {
    let mut path = Vec::new();
    loop {
        let as_text = if cur.eat_str("->>") {
            true
        } else if cur.eat_str("->") {
            false
        } else {
            return Some(path);
        };
        let key = cur.json_key()?;
        let key = match key.parse::<i64>() {
            Ok(index) => JsonKey::Index(index),
            Err(_) => JsonKey::Key(key),
        };
        path.push(JsonStep { as_text, key });
    }
}

/// Parses `select=`.
pub fn parse_select(text: &str) -> Result<Vec<SelectItem>, ApiError> {
    let mut cur = Cursor::new(text);
    let items = items(&mut cur, 0)?;
    if !cur.at_end() {
        return Err(select_error(&cur, "\",\" or the end of the parameter"));
    }
    Ok(items)
}

fn select_error(cur: &Cursor<'_>, expecting: &str) -> ApiError {
    cur.error(
        format!("failed to parse select parameter ({})", cur.text),
        expecting,
    )
    .hint("A select item is a column (alias:column->path::cast), * or relation(items)")
}

fn items(cur: &mut Cursor<'_>, depth: usize) -> Result<Vec<SelectItem>, ApiError> {
    if depth > MAX_DEPTH {
        return Err(select_error(cur, "less nesting"));
    }
    let mut items = Vec::new();
    loop {
        while cur.eat(' ') {}
        if matches!(cur.peek(), None | Some(')')) && items.is_empty() {
            // `()`: an embedded resource without columns; an empty select: none.
            return Ok(items);
        }
        items.push(item(cur, depth)?);
        while cur.eat(' ') {}
        if !cur.eat(',') {
            return Ok(items);
        }
    }
}

fn item(cur: &mut Cursor<'_>, depth: usize) -> Result<SelectItem, ApiError> {
    if cur.eat('*') {
        return Ok(SelectItem::Star);
    }
    if cur.eat_str("...") {
        let relation = cur
            .name()
            .ok_or_else(|| select_error(cur, "a relation after \"...\""))?;
        let (hint, join) = hints(cur)?;
        let select = embedded_items(cur, depth)?;
        return Ok(SelectItem::Spread {
            relation,
            hint,
            join,
            select,
        });
    }
    let first = cur
        .name()
        .ok_or_else(|| select_error(cur, "a column, *, or a relation"))?;
    // `alias:` (but not the `::` of a cast).
    let (alias, name) = if cur.rest().starts_with(':') && !cur.rest().starts_with("::") {
        cur.eat(':');
        let name = cur
            .name()
            .ok_or_else(|| select_error(cur, "a column or a relation after the alias"))?;
        (Some(first), name)
    } else {
        (None, first)
    };
    if name == "count" && cur.eat_str("()") {
        let aggregate_cast = cast(cur)?;
        return Ok(SelectItem::Field {
            field: Field {
                name,
                json_path: Vec::new(),
            },
            alias,
            cast: None,
            aggregate: Some(Aggregate::Count),
            aggregate_cast,
        });
    }
    if matches!(cur.peek(), Some('!') | Some('(')) {
        let (hint, join) = hints(cur)?;
        let select = embedded_items(cur, depth)?;
        return Ok(SelectItem::Embed {
            relation: name,
            alias,
            hint,
            join,
            select,
        });
    }
    // A column: the name already read, then its JSON path.
    let json_path =
        json_path(cur).ok_or_else(|| select_error(cur, "a key or an index after the arrow"))?;
    let cast_type = cast(cur)?;
    let (aggregate, aggregate_cast) = if cur.rest().starts_with('.') {
        cur.eat('.');
        let function = cur.name().ok_or_else(|| {
            select_error(cur, "an aggregate: sum(), avg(), min(), max(), count()")
        })?;
        let aggregate = match function.as_str() {
            "sum" => Aggregate::Sum,
            "avg" => Aggregate::Avg,
            "min" => Aggregate::Min,
            "max" => Aggregate::Max,
            "count" => Aggregate::Count,
            _ => {
                return Err(select_error(
                    cur,
                    "an aggregate: sum(), avg(), min(), max(), count()",
                ));
            }
        };
        if !cur.eat_str("()") {
            return Err(select_error(cur, "\"()\""));
        }
        (Some(aggregate), cast(cur)?)
    } else {
        (None, None)
    };
    Ok(SelectItem::Field {
        field: Field { name, json_path },
        alias,
        cast: cast_type,
        aggregate,
        aggregate_cast,
    })
}

/// `::type`, if there.
fn cast(cur: &mut Cursor<'_>) -> Result<Option<String>, ApiError> {
    if !cur.eat_str("::") {
        return Ok(None);
    }
    let rest = cur.rest();
    let end = rest.find([',', ')', '.', '(']).unwrap_or(rest.len());
    let name = rest.get(..end).unwrap_or_default().trim();
    if name.is_empty() {
        return Err(select_error(cur, "a type after \"::\""));
    }
    cur.pos += end;
    Ok(Some(name.to_string()))
}

/// `!hint!inner` after a relation.
fn hints(cur: &mut Cursor<'_>) -> Result<(Option<String>, Option<JoinType>), ApiError> {
    let mut hint = None;
    let mut join = None;
    while cur.eat('!') {
        let word = cur
            .name()
            .ok_or_else(|| select_error(cur, "a hint or inner/left after \"!\""))?;
        match word.as_str() {
            "inner" => join = Some(JoinType::Inner),
            "left" => join = Some(JoinType::Left),
            _ if hint.is_none() => hint = Some(word),
            _ => return Err(select_error(cur, "one hint at most")),
        }
    }
    Ok((hint, join))
}

/// `(items)` of an embedded resource.
fn embedded_items(cur: &mut Cursor<'_>, depth: usize) -> Result<Vec<SelectItem>, ApiError> {
    if !cur.eat('(') {
        return Err(select_error(cur, "\"(\""));
    }
    let items = items(cur, depth + 1)?;
    if !cur.eat(')') {
        return Err(select_error(cur, "\",\" or \")\""));
    }
    Ok(items)
}

/// Parses `order=`: `field[.asc|.desc][.nullsfirst|.nullslast]`, comma-separated, or
/// `relation(field).desc` for a to-one embedded resource.
pub fn parse_order(text: &str) -> Result<Vec<OrderTerm>, ApiError> {
    let error = |cur: &Cursor<'_>, expecting: &str| {
        cur.error(format!("failed to parse order ({text})"), expecting)
    };
    let mut cur = Cursor::new(text);
    let mut terms = Vec::new();
    loop {
        let first = field(&mut cur).ok_or_else(|| error(&cur, "a column"))?;
        let (relation, field_) = if cur.eat('(') {
            let inner = field(&mut cur).ok_or_else(|| error(&cur, "a column of the relation"))?;
            if !cur.eat(')') {
                return Err(error(&cur, "\")\""));
            }
            (Some(first.name), inner)
        } else {
            (None, first)
        };
        let mut direction = None;
        let mut nulls = None;
        while cur.eat('.') {
            let word = cur
                .name()
                .ok_or_else(|| error(&cur, "asc, desc, nullsfirst or nullslast"))?;
            match word.as_str() {
                "asc" if direction.is_none() => direction = Some(Direction::Asc),
                "desc" if direction.is_none() => direction = Some(Direction::Desc),
                "nullsfirst" if nulls.is_none() => nulls = Some(Nulls::First),
                "nullslast" if nulls.is_none() => nulls = Some(Nulls::Last),
                _ => return Err(error(&cur, "asc, desc, nullsfirst or nullslast")),
            }
        }
        terms.push(OrderTerm {
            relation,
            field: field_,
            direction,
            nulls,
        });
        if cur.at_end() {
            return Ok(terms);
        }
        if !cur.eat(',') {
            return Err(error(&cur, "\",\", \".\" or the end"));
        }
    }
}

/// Parses a list of field names (`columns=`, `on_conflict=`).
pub fn parse_columns(text: &str) -> Result<Vec<String>, ApiError> {
    let mut cur = Cursor::new(text);
    let mut names = Vec::new();
    loop {
        let name = cur.name().ok_or_else(|| {
            cur.error(
                format!("failed to parse columns parameter ({text})"),
                "a column name",
            )
        })?;
        names.push(name);
        while cur.eat(' ') {}
        if cur.at_end() {
            return Ok(names);
        }
        if !cur.eat(',') {
            return Err(cur.error(
                format!("failed to parse columns parameter ({text})"),
                "\",\" or the end",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str) -> SelectItem {
        SelectItem::Field {
            field: Field {
                name: name.into(),
                json_path: vec![],
            },
            alias: None,
            cast: None,
            aggregate: None,
            aggregate_cast: None,
        }
    }

    #[test]
    fn columns_aliases_casts_paths() {
        assert_eq!(parse_select("*").unwrap(), vec![SelectItem::Star]);
        assert_eq!(parse_select("a,b").unwrap(), vec![col("a"), col("b")]);
        let items = parse_select("n:name::text,data->a->>b,arr->0,\"my col\"").unwrap();
        assert_eq!(
            items[0],
            SelectItem::Field {
                field: Field {
                    name: "name".into(),
                    json_path: vec![]
                },
                alias: Some("n".into()),
                cast: Some("text".into()),
                aggregate: None,
                aggregate_cast: None,
            }
        );
        let SelectItem::Field { field, .. } = &items[1] else {
            panic!()
        };
        assert_eq!(field.json_path.len(), 2);
        assert!(field.json_path[1].as_text);
        assert_eq!(field.json_path[1].key, JsonKey::Key("b".into()));
        let SelectItem::Field { field, .. } = &items[2] else {
            panic!()
        };
        assert_eq!(field.json_path[0].key, JsonKey::Index(0));
        assert_eq!(items[3], col("my col"));
    }

    #[test]
    fn embeds_hints_spreads_aggregates() {
        let items =
            parse_select("title,a:authors!author_id!inner(name,books(id)),...x!left(y),c()")
                .unwrap();
        let SelectItem::Embed {
            relation,
            alias,
            hint,
            join,
            select,
        } = &items[1]
        else {
            panic!()
        };
        assert_eq!(
            (relation.as_str(), alias.as_deref(), hint.as_deref(), *join),
            (
                "authors",
                Some("a"),
                Some("author_id"),
                Some(JoinType::Inner)
            )
        );
        assert_eq!(select.len(), 2);
        assert!(
            matches!(&items[2], SelectItem::Spread { relation, join: Some(JoinType::Left), .. } if relation == "x")
        );
        assert!(
            matches!(&items[3], SelectItem::Embed { relation, select, .. } if relation == "c" && select.is_empty())
        );
        let items = parse_select("count(),total:pages.sum()::int,price::numeric.avg()").unwrap();
        assert!(matches!(
            &items[0],
            SelectItem::Field {
                aggregate: Some(Aggregate::Count),
                ..
            }
        ));
        assert!(
            matches!(&items[1], SelectItem::Field { aggregate: Some(Aggregate::Sum), aggregate_cast: Some(c), alias: Some(a), .. } if c == "int" && a == "total")
        );
        assert!(
            matches!(&items[2], SelectItem::Field { aggregate: Some(Aggregate::Avg), cast: Some(c), .. } if c == "numeric")
        );
    }

    #[test]
    fn select_errors() {
        for bad in [
            "a,", "a(", "a(b", "a)b", "x:", "a::", "a.nope()", "a!", "...", "a,,b",
        ] {
            let e = parse_select(bad).unwrap_err();
            assert_eq!(e.code, "PGRST100", "{bad}");
            assert!(
                e.message.contains("failed to parse select parameter"),
                "{bad}"
            );
        }
    }

    #[test]
    fn order_terms() {
        let terms = parse_order("a.desc.nullslast,b,data->>x.asc,author(name).desc").unwrap();
        assert_eq!(terms.len(), 4);
        assert_eq!(terms[0].direction, Some(Direction::Desc));
        assert_eq!(terms[0].nulls, Some(Nulls::Last));
        assert_eq!(terms[1].direction, None);
        assert_eq!(terms[2].field.json_path.len(), 1);
        assert_eq!(terms[3].relation.as_deref(), Some("author"));
        for bad in ["a.up", "a.desc.desc", "", "a,", "a(b"] {
            assert_eq!(parse_order(bad).unwrap_err().code, "PGRST100", "{bad}");
        }
    }

    #[test]
    fn column_lists() {
        assert_eq!(parse_columns("a, b,\"c d\"").unwrap(), ["a", "b", "c d"]);
        assert!(parse_columns("a,").is_err());
    }
}
