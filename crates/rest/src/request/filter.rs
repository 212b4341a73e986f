//! Horizontal filters (`column=[not.]op.value`, every PostgREST operator with `any`/`all`,
//! `in` lists, `is`, full-text search) and logic trees (`or=(...)`, `and=(...)`, nested).

use super::ast::{
    EmbedPath, Field, Filter, FtsOperator, IsValue, LogicOperator, LogicTree, Operation, Operator,
    PathFilter, Quantifier,
};
use super::cursor::Cursor;
use super::select::json_path;
use crate::error::ApiError;

/// How deep logic trees may nest.
const MAX_DEPTH: usize = 32;

const OPERATORS: &str = "eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, in, is, \
                         isdistinct, fts, plfts, phfts, wfts, cs, cd, ov, sl, sr, nxr, nxl, adj";

fn operator(word: &str) -> Option<Operator> {
    Some(match word {
        "eq" => Operator::Eq,
        "neq" => Operator::Neq,
        "gt" => Operator::Gt,
        "gte" => Operator::Gte,
        "lt" => Operator::Lt,
        "lte" => Operator::Lte,
        "like" => Operator::Like,
        "ilike" => Operator::Ilike,
        "match" => Operator::Match,
        "imatch" => Operator::Imatch,
        "cs" => Operator::Contains,
        "cd" => Operator::Contained,
        "ov" => Operator::Overlap,
        "sl" => Operator::StrictlyLeft,
        "sr" => Operator::StrictlyRight,
        "nxr" => Operator::NotExtendsRight,
        "nxl" => Operator::NotExtendsLeft,
        "adj" => Operator::Adjacent,
        _ => return None,
    })
}

fn fts_operator(word: &str) -> Option<FtsOperator> {
    Some(match word {
        "fts" => FtsOperator::Fts,
        "plfts" => FtsOperator::Plain,
        "phfts" => FtsOperator::Phrase,
        "wfts" => FtsOperator::Websearch,
        _ => return None,
    })
}

/// Parses a filter parameter: the key (`embed.path.column->json`) and the value.
pub fn parse_filter(key: &str, value: &str) -> Result<PathFilter, ApiError> {
    let (path, field) = filter_key(key)?;
    let mut cur = Cursor::new(value);
    let (negated, operation) = operation(&mut cur, Ending::Whole)?;
    Ok(PathFilter {
        path,
        filter: Filter {
            field,
            negated,
            operation,
        },
    })
}

/// A filter's key: the embed path (names before the last `.`) and the field.
fn filter_key(key: &str) -> Result<(EmbedPath, Field), ApiError> {
    let error = |cur: &Cursor<'_>| {
        cur.error(
            format!("failed to parse filter key ({key})"),
            "a column name, optionally after embedded resources' names and dots",
        )
    };
    let mut cur = Cursor::new(key);
    let mut names = Vec::new();
    loop {
        let name = cur.name().ok_or_else(|| error(&cur))?;
        names.push(name);
        if !cur.eat('.') {
            break;
        }
    }
    let path = json_path(&mut cur).ok_or_else(|| error(&cur))?;
    if !cur.at_end() {
        return Err(error(&cur));
    }
    let name = names.pop().ok_or_else(|| error(&cur))?;
    Ok((
        names,
        Field {
            name,
            json_path: path,
        },
    ))
}

/// Where a value ends: the whole parameter, or (inside a logic tree) at `,` or `)`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Whole,
    InTree,
}

fn filter_error(cur: &Cursor<'_>, expecting: &str) -> ApiError {
    cur.error(format!("failed to parse filter ({})", cur.text), expecting)
        .hint(format!(
            "A filter is column=[not.]operator.value; the operators: {OPERATORS}"
        ))
}

/// `[not.]op[(modifier)].value`.
fn operation(cur: &mut Cursor<'_>, ending: Ending) -> Result<(bool, Operation), ApiError> {
    let negated = cur.eat_str("not.");
    let start = cur.pos;
    let word: String = cur
        .rest()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    cur.pos += word.len();
    let operation = if let Some(op) = operator(&word) {
        let quantifier = if cur.eat('(') {
            let q = if cur.eat_str("any") {
                Quantifier::Any
            } else if cur.eat_str("all") {
                Quantifier::All
            } else {
                return Err(filter_error(cur, "any or all"));
            };
            if !cur.eat(')') || !op.quantifiable() {
                return Err(filter_error(cur, "\")\" after a quantifiable operator"));
            }
            Some(q)
        } else {
            None
        };
        dot(cur)?;
        Operation::Compare {
            op,
            quantifier,
            value: value(cur, ending)?,
        }
    } else if word == "in" {
        dot(cur)?;
        Operation::In(list(cur)?)
    } else if word == "is" {
        dot(cur)?;
        let word: String = cur
            .rest()
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
            .collect();
        let is = match word.to_ascii_lowercase().as_str() {
            "null" => IsValue::Null,
            "not_null" => IsValue::NotNull,
            "true" => IsValue::True,
            "false" => IsValue::False,
            "unknown" => IsValue::Unknown,
            _ => return Err(filter_error(cur, "null, not_null, true, false or unknown")),
        };
        cur.pos += word.len();
        Operation::Is(is)
    } else if word == "isdistinct" {
        dot(cur)?;
        Operation::IsDistinct(value(cur, ending)?)
    } else if let Some(op) = fts_operator(&word) {
        let language = if cur.eat('(') {
            let language: String = cur.rest().chars().take_while(|c| *c != ')').collect();
            cur.pos += language.len();
            if !cur.eat(')') || language.is_empty() {
                return Err(filter_error(cur, "a language and \")\""));
            }
            Some(language)
        } else {
            None
        };
        dot(cur)?;
        Operation::Fts {
            op,
            language,
            value: value(cur, ending)?,
        }
    } else {
        cur.pos = start;
        return Err(filter_error(cur, "an operator"));
    };
    if ending == Ending::Whole && !cur.at_end() {
        return Err(filter_error(cur, "the end of the filter"));
    }
    Ok((negated, operation))
}

fn dot(cur: &mut Cursor<'_>) -> Result<(), ApiError> {
    if cur.eat('.') {
        Ok(())
    } else {
        Err(filter_error(cur, "\".\" then the value"))
    }
}

/// A value: the rest of the parameter, or in a tree up to `,` or `)` outside quotes, braces
/// and brackets (`"a,b"` in double quotes, backslash escaping).
fn value(cur: &mut Cursor<'_>, ending: Ending) -> Result<String, ApiError> {
    if ending == Ending::Whole {
        let value = cur.rest().to_string();
        cur.pos = cur.text.len();
        return Ok(value);
    }
    if cur.peek() == Some('"') {
        return quoted(cur);
    }
    let mut depth = 0usize;
    let mut end = cur.rest().len();
    for (i, c) in cur.rest().char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' | ')' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let value = cur.rest().get(..end).unwrap_or_default().to_string();
    cur.pos += end;
    Ok(value)
}

/// `"..."`: backslash escapes the next character.
fn quoted(cur: &mut Cursor<'_>) -> Result<String, ApiError> {
    cur.eat('"');
    let mut out = String::new();
    let mut chars = cur.rest().char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, next)) => out.push(next),
                None => break,
            },
            '"' => {
                cur.pos += i + 1;
                return Ok(out);
            }
            c => out.push(c),
        }
    }
    cur.pos = cur.text.len();
    Err(filter_error(cur, "the closing '\"'"))
}

/// `(a,"b,c",d)`, as PostgREST reads it: spaces after `(` are skipped, a quoted value not closed
/// or not followed by `,` or `)` is taken as written (`in.(")`), and `( )` is the empty list
/// (`("")` stays a list of one empty string).
fn list(cur: &mut Cursor<'_>) -> Result<Vec<String>, ApiError> {
    if !cur.eat('(') {
        return Err(filter_error(cur, "\"(\" starting the list"));
    }
    while cur.eat(' ') || cur.eat('\t') {}
    let mut items = Vec::new();
    if cur.eat(')') {
        return Ok(items);
    }
    loop {
        let (item, quoted) = list_item(cur);
        items.push(item);
        if cur.eat(')') {
            if items.len() == 1 && !quoted && items.first().is_some_and(String::is_empty) {
                items.clear();
            }
            return Ok(items);
        }
        if !cur.eat(',') {
            return Err(filter_error(cur, "\",\" or \")\""));
        }
    }
}

/// One value of a list, and whether it was quoted: quoted when it is a whole quoted value, else
/// up to `,` or `)`.
fn list_item(cur: &mut Cursor<'_>) -> (String, bool) {
    let start = cur.pos;
    if cur.peek() == Some('"') {
        if let Ok(item) = quoted(cur)
            && matches!(cur.peek(), Some(',' | ')'))
        {
            return (item, true);
        }
        cur.pos = start;
    }
    let item: String = cur
        .rest()
        .chars()
        .take_while(|c| *c != ',' && *c != ')')
        .collect();
    cur.pos += item.len();
    (item, false)
}

/// Parses a logic tree parameter: the key (`[path.][not.]or`, `and`) and `(conditions)`.
pub fn parse_logic(key: &str, value: &str) -> Result<(EmbedPath, LogicTree), ApiError> {
    let mut segments: Vec<&str> = key.split('.').collect();
    let op = match segments.pop() {
        Some("or") => LogicOperator::Or,
        Some("and") => LogicOperator::And,
        _ => {
            return Err(ApiError::parse(
                format!("failed to parse logic tree key ({key})"),
                "expected or or and",
            ));
        }
    };
    let negated = segments.last() == Some(&"not");
    if negated {
        segments.pop();
    }
    let path: EmbedPath = segments.into_iter().map(str::to_string).collect();
    let mut cur = Cursor::new(value);
    let children = group(&mut cur, 0)?;
    if !cur.at_end() {
        return Err(tree_error(&cur, "the end of the parameter"));
    }
    Ok((
        path,
        LogicTree::Node {
            negated,
            op,
            children,
        },
    ))
}

fn tree_error(cur: &Cursor<'_>, expecting: &str) -> ApiError {
    cur.error(format!("failed to parse logic tree ({})", cur.text), expecting)
        .hint("A logic tree is (condition,condition,...): each a column.[not.]operator.value or a nested [not.]and(...) / or(...)")
}

/// `(condition, ...)`.
fn group(cur: &mut Cursor<'_>, depth: usize) -> Result<Vec<LogicTree>, ApiError> {
    if depth > MAX_DEPTH {
        return Err(tree_error(cur, "less nesting"));
    }
    if !cur.eat('(') {
        return Err(tree_error(cur, "\"(\""));
    }
    let mut children = Vec::new();
    loop {
        while cur.eat(' ') || cur.eat('\t') {}
        children.push(condition(cur, depth)?);
        while cur.eat(' ') || cur.eat('\t') {}
        if cur.eat(')') {
            return Ok(children);
        }
        if !cur.eat(',') {
            return Err(tree_error(cur, "\",\" or \")\""));
        }
    }
}

fn condition(cur: &mut Cursor<'_>, depth: usize) -> Result<LogicTree, ApiError> {
    let save = cur.pos;
    let negated = cur.eat_str("not.");
    for (word, op) in [("and", LogicOperator::And), ("or", LogicOperator::Or)] {
        // `and(`, or `and (` with spaces between, as PostgREST allows.
        let spaced = cur.rest().strip_prefix(word).map(|rest| {
            let trimmed = rest.trim_start_matches([' ', '\t']);
            (trimmed.starts_with('('), rest.len() - trimmed.len())
        });
        if let Some((true, spaces)) = spaced {
            cur.pos += word.len() + spaces;
            let children = group(cur, depth + 1)?;
            return Ok(LogicTree::Node {
                negated,
                op,
                children,
            });
        }
    }
    cur.pos = save;
    // A leaf: field.[not.]op.value.
    let name = cur
        .name()
        .ok_or_else(|| tree_error(cur, "a column or and(...)/or(...)"))?;
    let path = json_path(cur).ok_or_else(|| tree_error(cur, "a key after the arrow"))?;
    if !cur.eat('.') {
        return Err(tree_error(cur, "\".\" then an operator"));
    }
    let (negated, operation) = operation(cur, Ending::InTree).map_err(|mut error| {
        error.message = format!("failed to parse logic tree ({})", cur.text);
        error
    })?;
    Ok(LogicTree::Leaf(Filter {
        field: Field {
            name,
            json_path: path,
        },
        negated,
        operation,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(value: &str) -> Operation {
        parse_filter("c", value).unwrap().filter.operation
    }

    #[test]
    fn every_operator() {
        assert_eq!(
            op("eq.a.b"),
            Operation::Compare {
                op: Operator::Eq,
                quantifier: None,
                value: "a.b".into()
            }
        );
        for (word, expected) in [
            ("neq", Operator::Neq),
            ("gte", Operator::Gte),
            ("ilike", Operator::Ilike),
            ("imatch", Operator::Imatch),
            ("cs", Operator::Contains),
            ("cd", Operator::Contained),
            ("ov", Operator::Overlap),
            ("sl", Operator::StrictlyLeft),
            ("sr", Operator::StrictlyRight),
            ("nxr", Operator::NotExtendsRight),
            ("nxl", Operator::NotExtendsLeft),
            ("adj", Operator::Adjacent),
        ] {
            assert_eq!(
                op(&format!("{word}.x")),
                Operation::Compare {
                    op: expected,
                    quantifier: None,
                    value: "x".into()
                }
            );
        }
        assert_eq!(
            op("like(any).{a*,b}"),
            Operation::Compare {
                op: Operator::Like,
                quantifier: Some(Quantifier::Any),
                value: "{a*,b}".into()
            }
        );
        assert_eq!(
            op("in.(1,\"2,3\",x\\y)"),
            Operation::In(vec!["1".into(), "2,3".into(), "x\\y".into()])
        );
        assert_eq!(op("in.()"), Operation::In(vec![]));
        assert_eq!(op("is.null"), Operation::Is(IsValue::Null));
        assert_eq!(op("is.NOT_NULL"), Operation::Is(IsValue::NotNull));
        assert_eq!(op("isdistinct.5"), Operation::IsDistinct("5".into()));
        assert_eq!(
            op("fts(english).cat & dog"),
            Operation::Fts {
                op: FtsOperator::Fts,
                language: Some("english".into()),
                value: "cat & dog".into()
            }
        );
        let f = parse_filter("books.data->a->>b", "not.eq.1").unwrap();
        assert_eq!(f.path, vec!["books".to_string()]);
        assert!(f.filter.negated);
        assert_eq!(f.filter.field.name, "data");
        assert_eq!(f.filter.field.json_path.len(), 2);
    }

    #[test]
    fn filter_errors() {
        for bad in [
            "equals.1",
            "eq",
            "eq1",
            "neq(any).{1}",
            "in.1,2",
            "in.(1",
            "is.maybe",
            "fts().x",
            "eq(some).1",
            "",
        ] {
            let e = parse_filter("c", bad).unwrap_err();
            assert_eq!(e.code, "PGRST100", "{bad}");
            assert!(e.message.starts_with("failed to parse filter"), "{bad}");
            assert!(e.details.is_some(), "{bad}");
        }
        assert!(parse_filter("", "eq.1").is_err());
        assert!(parse_filter("a.", "eq.1").is_err());
    }

    #[test]
    fn logic_trees() {
        let (path, tree) = parse_logic(
            "or",
            "(a.eq.1,and(b.gt.2,c.not.is.null),d.in.(1,2),e.eq.\"x,y)\",f.cs.{1,2})",
        )
        .unwrap();
        assert!(path.is_empty());
        let LogicTree::Node {
            negated: false,
            op: LogicOperator::Or,
            children,
        } = tree
        else {
            panic!()
        };
        assert_eq!(children.len(), 5);
        let LogicTree::Node {
            op: LogicOperator::And,
            children: inner,
            ..
        } = &children[1]
        else {
            panic!()
        };
        assert!(
            matches!(&inner[1], LogicTree::Leaf(f) if f.negated && f.operation == Operation::Is(IsValue::Null))
        );
        assert!(
            matches!(&children[3], LogicTree::Leaf(f) if f.operation == Operation::Compare { op: Operator::Eq, quantifier: None, value: "x,y)".into() })
        );
        assert!(
            matches!(&children[4], LogicTree::Leaf(f) if f.operation == Operation::Compare { op: Operator::Contains, quantifier: None, value: "{1,2}".into() })
        );
        let (path, tree) = parse_logic("books.not.and", "(a.eq.1,not.or(b.eq.2,c.eq.3))").unwrap();
        assert_eq!(path, vec!["books".to_string()]);
        assert!(matches!(
            tree,
            LogicTree::Node {
                negated: true,
                op: LogicOperator::And,
                ..
            }
        ));
        for bad in [
            "a.eq.1",
            "(a.eq.1",
            "(a.eq.1,)",
            "(a.nope.1)",
            "()",
            "(a.eq.1))",
        ] {
            assert_eq!(
                parse_logic("or", bad).unwrap_err().code,
                "PGRST100",
                "{bad}"
            );
        }
    }
}
