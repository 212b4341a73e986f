//! Which relationship an embedded resource goes through: by the foreign relation's name or a
//! foreign-key column, narrowed by a hint (constraint, column or junction name), as PostgREST
//! chooses (PGRST200 when none, PGRST201 when several remain).

use crate::error::ApiError;
use crate::schema::{Cardinality, Relationship, SchemaCache, Table};
use http::StatusCode;

/// The relationship from `from` that `target` (with `hint`) names, by PostgREST's rules: the
/// foreign relation's name, a foreign-key constraint or column (not towards a view), narrowed by
/// a hint naming the constraint, a column of either side or the junction; for a relation
/// referencing itself, the table's name means its children (one-to-many, with a hint naming the
/// referencing column) and the column's name its parent (many-to-one).
pub fn find<'s>(
    cache: &'s SchemaCache,
    from: &Table,
    target: &str,
    hint: Option<&str>,
) -> Result<&'s Relationship, ApiError> {
    let all = cache.relationships.get(&from.name);
    let is_view = |r: &Relationship| {
        cache
            .tables
            .get(&r.foreign_table)
            .is_some_and(Table::is_view)
    };
    let named: Vec<&Relationship> = all
        .into_iter()
        .flatten()
        .filter(|r| r.foreign_table.schema == from.name.schema || !r.is_self)
        .filter(|r| matches(r, target, hint, is_view(r), &from.name.schema))
        .collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => Err(no_relationship(from, target, hint)),
        many => Err(ambiguous(from, target, many)),
    }
}

/// The single column pair of a key relationship.
fn single_columns(c: &Cardinality) -> Option<(&str, &str)> {
    match c {
        Cardinality::ManyToOne(key)
        | Cardinality::OneToMany(key)
        | Cardinality::OneToOne { key, .. } => match key.columns.as_slice() {
            [(local, foreign)] => Some((local.as_str(), foreign.as_str())),
            _ => None,
        },
        Cardinality::ManyToMany(_) | Cardinality::Computed { .. } => None,
    }
}

fn constraint(c: &Cardinality) -> Option<&str> {
    match c {
        Cardinality::ManyToOne(key)
        | Cardinality::OneToMany(key)
        | Cardinality::OneToOne { key, .. } => Some(&key.constraint),
        Cardinality::ManyToMany(_) | Cardinality::Computed { .. } => None,
    }
}

fn matches(
    r: &Relationship,
    target: &str,
    hint: Option<&str>,
    to_view: bool,
    schema: &str,
) -> bool {
    // A computed relationship answers to its function's name only, hint or not (PostgREST's
    // rule); it replaced any foreign-key relationship to a relation of that name.
    if let Cardinality::Computed { function, .. } = &r.cardinality {
        return function.name == target && function.schema == schema;
    }
    let names_table = r.foreign_table.name == target && r.foreign_table.schema == schema;
    let one_to_many = matches!(r.cardinality, Cardinality::OneToMany(_));
    let many_to_one = matches!(r.cardinality, Cardinality::ManyToOne(_));
    let local = single_columns(&r.cardinality).map(|(l, _)| l);
    let foreign = single_columns(&r.cardinality).map(|(_, f)| f);
    if r.is_self {
        return match hint {
            None => (names_table && one_to_many) || (many_to_one && local == Some(target)),
            Some(hint) => names_table && one_to_many && foreign == Some(hint),
        };
    }
    match hint {
        None => {
            names_table
                || (!to_view && constraint(&r.cardinality) == Some(target))
                || (!to_view && local == Some(target))
        }
        Some(hint) => {
            names_table
                && (constraint(&r.cardinality) == Some(hint)
                    || local == Some(hint)
                    || foreign == Some(hint)
                    || matches!(&r.cardinality, Cardinality::ManyToMany(j) if j.table.name == hint))
        }
    }
}

fn no_relationship(from: &Table, target: &str, hint: Option<&str>) -> ApiError {
    let details = match hint {
        Some(hint) => format!(
            "Searched for a foreign key relationship between '{}' and '{target}' using the hint \
             '{hint}' in the schema '{}', but no matches were found.",
            from.name.name, from.name.schema
        ),
        None => format!(
            "Searched for a foreign key relationship between '{}' and '{target}' in the schema \
             '{}', but no matches were found.",
            from.name.name, from.name.schema
        ),
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "PGRST200",
        format!(
            "Could not find a relationship between '{}' and '{target}' in the schema cache",
            from.name.name
        ),
    )
    .details(details)
}

/// A relationship's cardinality and PostgREST's description of it (`fk using t(a) and u(b)`).
fn describe(r: &Relationship) -> (String, String) {
    let using = |key: &crate::schema::ForeignKey| {
        let (from, to): (Vec<&str>, Vec<&str>) = key
            .columns
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .unzip();
        format!(
            "{} using {}({}) and {}({})",
            key.constraint,
            r.table.name,
            from.join(", "),
            r.foreign_table.name,
            to.join(", ")
        )
    };
    match &r.cardinality {
        Cardinality::ManyToOne(key) => ("many-to-one".into(), using(key)),
        Cardinality::OneToMany(key) => ("one-to-many".into(), using(key)),
        Cardinality::OneToOne { key, .. } => ("one-to-one".into(), using(key)),
        Cardinality::Computed { function, to_one } => (
            if *to_one {
                "many-to-one"
            } else {
                "one-to-many"
            }
            .into(),
            format!("computed by {function}"),
        ),
        Cardinality::ManyToMany(junction) => (
            "many-to-many".into(),
            format!(
                "{} using {}({}) and {}({})",
                junction.table.name,
                junction.source.constraint,
                junction
                    .source
                    .columns
                    .iter()
                    .map(|(_, j)| j.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                junction.target.constraint,
                junction
                    .target
                    .columns
                    .iter()
                    .map(|(_, j)| j.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
    }
}

fn hint_word(r: &Relationship) -> String {
    match &r.cardinality {
        Cardinality::ManyToOne(key)
        | Cardinality::OneToMany(key)
        | Cardinality::OneToOne { key, .. } => key.constraint.clone(),
        Cardinality::ManyToMany(junction) => junction.table.name.clone(),
        Cardinality::Computed { function, .. } => function.name.clone(),
    }
}

fn ambiguous(from: &Table, target: &str, many: &[&Relationship]) -> ApiError {
    let details: Vec<serde_json::Value> = many
        .iter()
        .map(|r| {
            let (cardinality, relationship) = describe(r);
            serde_json::json!({
                "cardinality": cardinality,
                "embedding": format!("{} with {}", r.table.name, r.foreign_table.name),
                "relationship": relationship,
            })
        })
        .collect();
    let options: Vec<String> = many
        .iter()
        .map(|r| format!("'{target}!{}'", hint_word(r)))
        .collect();
    let mut error = ApiError::new(
        StatusCode::MULTIPLE_CHOICES,
        "PGRST201",
        format!(
            "Could not embed because more than one relationship was found for '{}' and \
             '{target}'",
            from.name.name
        ),
    )
    .hint(format!(
        "Try changing '{target}' to one of the following: {}. Find the desired relationship in \
         the 'details' key.",
        options.join(", ")
    ));
    error.details = Some(serde_json::Value::Array(details));
    error
}
