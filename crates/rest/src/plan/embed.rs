//! Which relationship an embedded resource goes through: by the foreign relation's name or a
//! foreign-key column, narrowed by a hint (constraint, column or junction name), as PostgREST
//! chooses (PGRST200 when none, PGRST201 when several remain).

use crate::error::ApiError;
use crate::schema::{Cardinality, Relationship, SchemaCache, Table};
use http::StatusCode;

/// The relationship from `from` that `target` (with `hint`) names.
pub fn find<'s>(
    cache: &'s SchemaCache,
    from: &Table,
    target: &str,
    hint: Option<&str>,
) -> Result<&'s Relationship, ApiError> {
    let all = cache.relationships.get(&from.name);
    let named: Vec<&Relationship> = all
        .into_iter()
        .flatten()
        .filter(|r| names_target(r, &from.name.schema, target))
        .filter(|r| hint.is_none_or(|hint| matches_hint(r, hint)))
        .collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => Err(no_relationship(from, target, hint)),
        many => Err(ambiguous(from, target, many)),
    }
}

/// Whether `target` names the relationship's foreign relation (in the request's schema) or,
/// for a to-one relationship over one column, that column of `table`.
fn names_target(r: &Relationship, schema: &str, target: &str) -> bool {
    if r.foreign_table.name == target && r.foreign_table.schema == schema {
        return true;
    }
    match &r.cardinality {
        Cardinality::ManyToOne(key) | Cardinality::OneToOne { key, parent: false } => {
            matches!(key.columns.as_slice(), [(column, _)] if column == target)
        }
        _ => false,
    }
}

/// Whether `hint` names the relationship's constraint, one of its columns, or (many-to-many)
/// its junction table or one of the junction's constraints.
fn matches_hint(r: &Relationship, hint: &str) -> bool {
    match &r.cardinality {
        Cardinality::ManyToOne(key)
        | Cardinality::OneToMany(key)
        | Cardinality::OneToOne { key, .. } => {
            key.constraint == hint
                || key
                    .columns
                    .iter()
                    .any(|(local, foreign)| local == hint || foreign == hint)
        }
        Cardinality::ManyToMany(junction) => {
            junction.table.name == hint
                || junction.source.constraint == hint
                || junction.target.constraint == hint
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

fn describe(r: &Relationship) -> (String, String) {
    match &r.cardinality {
        Cardinality::ManyToOne(key) => ("many-to-one".into(), key.constraint.clone()),
        Cardinality::OneToMany(key) => ("one-to-many".into(), key.constraint.clone()),
        Cardinality::OneToOne { key, .. } => ("one-to-one".into(), key.constraint.clone()),
        Cardinality::ManyToMany(junction) => (
            "many-to-many".into(),
            format!(
                "{}.{} using {}({}) and {}({})",
                junction.table.schema,
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
