//! The plan of a function call (`/rpc/name`): the overload the arguments name, how each argument
//! reaches it, and the shape of its result.

use crate::error::ApiError;
use crate::schema::{ReturnType, Routine, SchemaCache};
use http::StatusCode;

/// How the arguments reach the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arguments {
    /// A JSON object whose keys are the named arguments (POST).
    JsonObject {
        /// The object's keys, each a parameter's name.
        keys: Vec<String>,
    },
    /// Query-string values by parameter name, several for a variadic parameter (GET, or a form
    /// body).
    Text(Vec<(String, Vec<String>)>),
    /// The whole body as the one unnamed parameter (json, jsonb, text, bytea, xml).
    Raw,
    /// No arguments.
    None,
}

impl Arguments {
    fn names(&self) -> Vec<String> {
        match self {
            Arguments::JsonObject { keys } => keys.clone(),
            Arguments::Text(pairs) => pairs.iter().map(|(k, _)| k.clone()).collect(),
            Arguments::Raw | Arguments::None => Vec::new(),
        }
    }
}

/// What the call's response looks like (PostgREST's shapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultShape {
    /// One value: the JSON of the scalar.
    Scalar,
    /// `SETOF scalar`: a JSON array of values.
    ScalarSet,
    /// `SETOF` a table's row type or a composite, or `RETURNS TABLE`: rows, like a table.
    Rows,
    /// One row (not SETOF): a table's row type, a composite or `OUT`/`INOUT` parameters: one
    /// JSON object.
    Object,
}

/// The routine chosen for a call.
#[derive(Debug, Clone)]
pub struct CallPlan<'s> {
    /// The overload that fits the arguments.
    pub routine: &'s Routine,
    /// How the arguments reach it.
    pub arguments: Arguments,
    /// What the response looks like.
    pub shape: ResultShape,
}

/// Chooses among `name`'s overloads the one whose parameters the arguments fit: every argument
/// names a parameter and every parameter without a default has an argument; a single unnamed
/// json/jsonb (or text, bytea, xml) parameter takes a raw body. With `single_object`
/// (`Prefer: params=single-object`) the JSON body goes whole to the overload whose one
/// parameter, named or not, is json or jsonb. 404 PGRST202 when none fits, 300 PGRST203 when
/// several do.
pub fn plan_call<'s>(
    cache: &'s SchemaCache,
    schema: &str,
    name: &str,
    arguments: Arguments,
    raw_body_type: Option<&str>,
    single_object: bool,
) -> Result<CallPlan<'s>, ApiError> {
    let overloads: &[Routine] = cache
        .routine(schema, name)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if single_object {
        let candidates: Vec<&Routine> = overloads
            .iter()
            .filter(|r| {
                matches!(r.params.as_slice(), [p] if matches!(p.type_name.as_str(), "json" | "jsonb"))
            })
            .collect();
        return choose(schema, name, candidates, Arguments::Raw, &[]);
    }
    let given = arguments.names();
    // A text, bytes or XML body is for a parameter: a function without any does not take it.
    let raw_only = matches!(raw_body_type, Some("text" | "bytea" | "xml"));
    let fits = |r: &&Routine| {
        !(raw_only && r.params.is_empty())
            && given
                .iter()
                .all(|g| r.params.iter().any(|p| !p.name.is_empty() && &p.name == g))
            && r.params
                .iter()
                .all(|p| p.has_default || p.variadic || given.contains(&p.name))
    };
    let mut candidates: Vec<&Routine> = overloads.iter().filter(fits).collect();
    let mut arguments = arguments;
    if candidates.is_empty() {
        // A single unnamed parameter taking the body as it is.
        if let Some(body_type) = raw_body_type {
            candidates = overloads
                .iter()
                .filter(|r| {
                    matches!(r.params.as_slice(), [p] if p.name.is_empty()
                        && raw_types(body_type).contains(&p.type_name.as_str()))
                })
                .collect();
            if !candidates.is_empty() {
                arguments = Arguments::Raw;
            }
        }
    }
    choose(schema, name, candidates, arguments, &given)
}

/// The one candidate, with the shape of its result.
fn choose<'s>(
    schema: &str,
    name: &str,
    candidates: Vec<&'s Routine>,
    arguments: Arguments,
    given: &[String],
) -> Result<CallPlan<'s>, ApiError> {
    let routine = match candidates.as_slice() {
        [one] => *one,
        [] => return Err(not_found(schema, name, given)),
        many => {
            let signatures: Vec<String> = many.iter().map(|r| signature(r)).collect();
            return Err(ApiError::new(
                StatusCode::MULTIPLE_CHOICES,
                "PGRST203",
                format!(
                    "Could not choose the best candidate function between: {}",
                    signatures.join(", ")
                ),
            )
            .hint(
                "Try renaming the parameters or the function itself in the database so function \
                 overloading can be resolved",
            ));
        }
    };
    let shape = match (&routine.returns, routine.returns_composite) {
        (ReturnType::SetOf { .. }, true) => ResultShape::Rows,
        (ReturnType::SetOf { .. }, false) => ResultShape::ScalarSet,
        // One row, of a table's type or of OUT parameters: one object, as PostgREST answers.
        (ReturnType::Single { .. }, true) => ResultShape::Object,
        (ReturnType::Single { .. }, false) => ResultShape::Scalar,
    };
    Ok(CallPlan {
        routine,
        arguments,
        shape,
    })
}

/// The unnamed parameter types a body of this media type can go to.
fn raw_types(body_type: &str) -> &'static [&'static str] {
    match body_type {
        "json" => &["json", "jsonb"],
        "text" => &["text"],
        "bytea" => &["bytea"],
        "xml" => &["xml"],
        _ => &[],
    }
}

fn signature(routine: &Routine) -> String {
    let params: Vec<String> = routine
        .params
        .iter()
        .map(|p| format!("{} => {}", p.name, p.type_name))
        .collect();
    format!(
        "{}.{}({})",
        routine.name.schema,
        routine.name.name,
        params.join(", ")
    )
}

fn not_found(schema: &str, name: &str, given: &[String]) -> ApiError {
    let mut sorted: Vec<&str> = given.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let with = if sorted.is_empty() {
        "without parameters".to_string()
    } else {
        format!("with parameters {}", sorted.join(", "))
    };
    ApiError::new(
        StatusCode::NOT_FOUND,
        "PGRST202",
        format!(
            "Could not find the function {schema}.{name}({}) in the schema cache",
            sorted.join(", ")
        ),
    )
    .details(format!(
        "Searched for the function {schema}.{name} {with}, but no matches were found in the \
         schema cache."
    ))
}
