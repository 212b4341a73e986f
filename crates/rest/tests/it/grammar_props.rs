//! Property tests of the URL grammar: any filter or logic tree written the way PostgREST's
//! clients write it parses back to itself, and any text at all parses or fails with PGRST100
//! naming where it stopped, never a panic.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use sluice_rest::request::{
    Field, Filter, FtsOperator, IsValue, JsonKey, JsonStep, LogicOperator, LogicTree, Operation,
    Operator, Quantifier, parse_filter, parse_logic, parse_order, parse_select,
};

const OPERATORS: [(Operator, &str); 18] = [
    (Operator::Eq, "eq"),
    (Operator::Neq, "neq"),
    (Operator::Gt, "gt"),
    (Operator::Gte, "gte"),
    (Operator::Lt, "lt"),
    (Operator::Lte, "lte"),
    (Operator::Like, "like"),
    (Operator::Ilike, "ilike"),
    (Operator::Match, "match"),
    (Operator::Imatch, "imatch"),
    (Operator::Contains, "cs"),
    (Operator::Contained, "cd"),
    (Operator::Overlap, "ov"),
    (Operator::StrictlyLeft, "sl"),
    (Operator::StrictlyRight, "sr"),
    (Operator::NotExtendsRight, "nxr"),
    (Operator::NotExtendsLeft, "nxl"),
    (Operator::Adjacent, "adj"),
];

const FTS: [(FtsOperator, &str); 4] = [
    (FtsOperator::Fts, "fts"),
    (FtsOperator::Plain, "plfts"),
    (FtsOperator::Phrase, "phfts"),
    (FtsOperator::Websearch, "wfts"),
];

const IS: [(IsValue, &str); 5] = [
    (IsValue::Null, "null"),
    (IsValue::NotNull, "not_null"),
    (IsValue::True, "true"),
    (IsValue::False, "false"),
    (IsValue::Unknown, "unknown"),
];

/// Any text a value may hold: the grammar's own characters, quotes, backslashes, non-ASCII.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex(r#"[a-z0-9 ,.()"\\{}\[\]:*é-]{0,12}"#).unwrap()
}

fn name() -> impl Strategy<Value = String> {
    proptest::string::string_regex(r#"[a-zA-Z_][a-zA-Z0-9_ .,()"\\-]{0,10}"#).unwrap()
}

fn json_step() -> impl Strategy<Value = JsonStep> {
    let key = prop_oneof![
        "[a-z][a-z0-9_]{0,6}".prop_map(JsonKey::Key),
        (-5i64..50).prop_map(JsonKey::Index),
    ];
    (any::<bool>(), key).prop_map(|(as_text, key)| JsonStep { as_text, key })
}

fn field() -> impl Strategy<Value = Field> {
    (name(), proptest::collection::vec(json_step(), 0..3))
        .prop_map(|(name, json_path)| Field { name, json_path })
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        (0..OPERATORS.len(), any::<Option<bool>>(), text()).prop_map(|(i, q, value)| {
            let op = OPERATORS[i].0;
            let quantifier = q.filter(|_| op.quantifiable()).map(|all| {
                if all {
                    Quantifier::All
                } else {
                    Quantifier::Any
                }
            });
            Operation::Compare {
                op,
                quantifier,
                value,
            }
        }),
        proptest::collection::vec(text(), 0..4).prop_map(Operation::In),
        (0..IS.len()).prop_map(|i| Operation::Is(IS[i].0)),
        text().prop_map(Operation::IsDistinct),
        (0..FTS.len(), proptest::option::of("[a-z]{1,8}"), text()).prop_map(
            |(i, language, value)| Operation::Fts {
                op: FTS[i].0,
                language,
                value,
            }
        ),
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    (field(), any::<bool>(), operation()).prop_map(|(field, negated, operation)| Filter {
        field,
        negated,
        operation,
    })
}

fn tree() -> impl Strategy<Value = LogicTree> {
    filter()
        .prop_map(LogicTree::Leaf)
        .prop_recursive(4, 24, 4, |inner| {
            (
                any::<bool>(),
                any::<bool>(),
                proptest::collection::vec(inner, 1..4),
            )
                .prop_map(|(negated, or, children)| LogicTree::Node {
                    negated,
                    op: if or {
                        LogicOperator::Or
                    } else {
                        LogicOperator::And
                    },
                    children,
                })
        })
}

/// `"..."` with backslash before `"` and `\`, as clients quote names and values.
fn quoted(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn write_field(field: &Field) -> String {
    let mut out = quoted(&field.name);
    for step in &field.json_path {
        out.push_str(if step.as_text { "->>" } else { "->" });
        match &step.key {
            JsonKey::Key(key) => out.push_str(key),
            JsonKey::Index(index) => out.push_str(&index.to_string()),
        }
    }
    out
}

/// `[not.]op.value`; a value inside a logic tree is quoted, a whole parameter's is raw.
fn write_operation(negated: bool, operation: &Operation, in_tree: bool) -> String {
    let value = |v: &str| if in_tree { quoted(v) } else { v.to_string() };
    let mut out = String::from(if negated { "not." } else { "" });
    match operation {
        Operation::Compare {
            op,
            quantifier,
            value: v,
        } => {
            let word = OPERATORS.iter().find(|(o, _)| o == op).unwrap().1;
            out.push_str(word);
            match quantifier {
                Some(Quantifier::Any) => out.push_str("(any)"),
                Some(Quantifier::All) => out.push_str("(all)"),
                None => {}
            }
            out.push('.');
            out.push_str(&value(v));
        }
        Operation::In(items) => {
            let items: Vec<String> = items.iter().map(|i| quoted(i)).collect();
            out.push_str(&format!("in.({})", items.join(",")));
        }
        Operation::Is(is) => {
            out.push_str("is.");
            out.push_str(IS.iter().find(|(i, _)| i == is).unwrap().1);
        }
        Operation::IsDistinct(v) => {
            out.push_str("isdistinct.");
            out.push_str(&value(v));
        }
        Operation::Fts {
            op,
            language,
            value: v,
        } => {
            out.push_str(FTS.iter().find(|(o, _)| o == op).unwrap().1);
            if let Some(language) = language {
                out.push_str(&format!("({language})"));
            }
            out.push('.');
            out.push_str(&value(v));
        }
    }
    out
}

fn write_condition(tree: &LogicTree) -> String {
    match tree {
        LogicTree::Leaf(filter) => format!(
            "{}.{}",
            write_field(&filter.field),
            write_operation(filter.negated, &filter.operation, true)
        ),
        LogicTree::Node {
            negated,
            op,
            children,
        } => format!(
            "{}{}{}",
            if *negated { "not." } else { "" },
            if *op == LogicOperator::Or {
                "or"
            } else {
                "and"
            },
            write_group(children)
        ),
    }
}

fn write_group(children: &[LogicTree]) -> String {
    let conditions: Vec<String> = children.iter().map(write_condition).collect();
    format!("({})", conditions.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_filter_parses_back_to_itself(filter in filter()) {
        let key = write_field(&filter.field);
        let value = write_operation(filter.negated, &filter.operation, false);
        let parsed = parse_filter(&key, &value)
            .map_err(|e| TestCaseError::fail(format!("{key}={value}: {e:?}")))?;
        prop_assert!(parsed.path.is_empty());
        prop_assert_eq!(parsed.filter, filter);
    }

    #[test]
    fn a_logic_tree_parses_back_to_itself(
        negated in any::<bool>(),
        or in any::<bool>(),
        children in proptest::collection::vec(tree(), 1..4),
    ) {
        let op = if or { LogicOperator::Or } else { LogicOperator::And };
        let key = format!("{}{}", if negated { "not." } else { "" }, if or { "or" } else { "and" });
        let value = write_group(&children);
        let (path, parsed) = parse_logic(&key, &value)
            .map_err(|e| TestCaseError::fail(format!("{key}={value}: {e:?}")))?;
        prop_assert!(path.is_empty());
        prop_assert_eq!(parsed, LogicTree::Node { negated, op, children });
    }

    #[test]
    fn any_text_parses_or_names_where_it_stopped(key in "\\PC{0,16}", value in "\\PC{0,40}") {
        let errors = [
            parse_filter(&key, &value).err(),
            parse_logic(&key, &value).err(),
            parse_select(&value).err(),
            parse_order(&value).err(),
        ];
        for error in errors.into_iter().flatten() {
            prop_assert_eq!(error.code, "PGRST100");
            prop_assert_eq!(error.status.as_u16(), 400);
            prop_assert!(!error.message.is_empty());
        }
    }

    #[test]
    fn a_damaged_tree_is_refused_with_its_position(
        children in proptest::collection::vec(tree(), 1..3),
        cut in any::<prop::sample::Index>(),
    ) {
        // Cutting a well-formed tree short leaves its parentheses unbalanced: always an error.
        let value = write_group(&children);
        let boundaries: Vec<usize> = (1..value.len()).filter(|i| value.is_char_boundary(*i)).collect();
        prop_assume!(!boundaries.is_empty());
        let short = &value[..boundaries[cut.index(boundaries.len())]];
        let error = parse_logic("or", short).unwrap_err();
        prop_assert_eq!(error.code, "PGRST100");
        let details = error.details.map(|d| d.to_string()).unwrap_or_default();
        prop_assert!(details.contains("at character"), "{}", details);
    }
}
