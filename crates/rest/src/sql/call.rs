//! The SQL of a function call: the call with its arguments (named, from a JSON body through
//! `json_to_record` typed from the catalog, from query-string values cast to the parameters'
//! types, or the raw body) as a FROM item, read like a table's rows by a read plan over the
//! function's result columns: filtered, ordered, paged and counted.

use super::read::{render_count_over, render_explain_over, render_over};
use super::{Statement, array_literal};
use crate::plan::ReadPlan;
use crate::plan::call::{Arguments, CallPlan, ResultShape};
use crate::schema::RoutineParam;
use sluice_pg::sql::{push_ident, qualified};

/// The statement of the call, its result read as `read` plans; `body` is the JSON object (or
/// the raw body) when there is one.
pub fn render(plan: &CallPlan<'_>, read: &ReadPlan<'_>, body: Option<String>) -> Statement {
    let (st, source) = source(plan, body);
    render_over(st, read, &source)
}

/// The count of the rows `read`'s top level gives without its page (see
/// [`super::read::render_count`]). It calls the function again: only for functions that change
/// nothing.
pub fn render_count(
    plan: &CallPlan<'_>,
    read: &ReadPlan<'_>,
    body: Option<String>,
    at_most: Option<u64>,
) -> Statement {
    let (st, source) = source(plan, body);
    render_count_over(st, read, Some(&source), at_most)
}

/// The planner's estimate of the rows `read`'s top level gives without its page; EXPLAIN does
/// not run the function.
pub fn render_explain(plan: &CallPlan<'_>, read: &ReadPlan<'_>, body: Option<String>) -> Statement {
    let (st, source) = source(plan, body);
    render_explain_over(st, read, Some(&source))
}

/// The call as a FROM item (SQL text) and the statement holding the parameters it uses: the
/// function's rows, or for a scalar (single or SETOF) its value(s) as one column named after
/// the function, the column the read plan names.
fn source(plan: &CallPlan<'_>, body: Option<String>) -> (Statement, String) {
    let mut st = Statement::new();
    let routine = plan.routine;
    let function = qualified(&routine.name.schema, &routine.name.name);
    let scalar = matches!(plan.shape, ResultShape::Scalar | ResultShape::ScalarSet)
        .then_some(routine.name.name.as_str());
    let mut source = String::new();
    match &plan.arguments {
        Arguments::JsonObject { keys } => {
            st.params.push(body);
            let param = format!("${}", st.params.len());
            let given: Vec<&RoutineParam> = routine
                .params
                .iter()
                .filter(|p| keys.contains(&p.name))
                .collect();
            source.push_str("(SELECT ");
            if let Some(column) = scalar {
                call(&mut source, &function, &given, |out, p| {
                    out.push_str("\"pgrst_body\".");
                    push_ident(out, &p.name);
                });
                source.push_str(" AS ");
                push_ident(&mut source, column);
                source.push_str(" FROM ");
                body_record(&mut source, &param, &given);
            } else {
                source.push_str("\"pgrst_call\".* FROM ");
                body_record(&mut source, &param, &given);
                source.push_str(", LATERAL ");
                call(&mut source, &function, &given, |out, p| {
                    out.push_str("\"pgrst_body\".");
                    push_ident(out, &p.name);
                });
                source.push_str(" AS \"pgrst_call\"");
            }
            source.push(')');
        }
        Arguments::Text(pairs) => {
            let given: Vec<&RoutineParam> = routine
                .params
                .iter()
                .filter(|p| pairs.iter().any(|(k, _)| k == &p.name))
                .collect();
            let mut values: Vec<String> = Vec::with_capacity(given.len());
            for p in &given {
                let texts = pairs
                    .iter()
                    .find(|(k, _)| k == &p.name)
                    .map(|(_, v)| v.as_slice())
                    .unwrap_or_default();
                let value = if p.variadic {
                    array_literal(texts.iter().map(String::as_str))
                } else {
                    texts.last().cloned().unwrap_or_default()
                };
                st.params.push(Some(value));
                values.push(format!("${}::{}", st.params.len(), p.type_name));
            }
            let mut next = values.iter();
            let mut text_call = String::new();
            call(&mut text_call, &function, &given, |out, _| {
                if let Some(v) = next.next() {
                    out.push_str(v);
                }
            });
            wrap(&mut source, &text_call, scalar);
        }
        Arguments::Raw => {
            st.params.push(body);
            let type_name = routine
                .params
                .first()
                .map(|p| p.type_name.as_str())
                .unwrap_or("json");
            let raw_call = format!("{function}(${}::{type_name})", st.params.len());
            wrap(&mut source, &raw_call, scalar);
        }
        Arguments::None => {
            wrap(&mut source, &format!("{function}()"), scalar);
        }
    }
    (st, source)
}

/// A call as a FROM item: the function's rows, or its value(s) as the column `scalar` names.
fn wrap(source: &mut String, call: &str, scalar: Option<&str>) {
    match scalar {
        Some(column) => {
            source.push_str("(SELECT ");
            source.push_str(call);
            source.push_str(" AS ");
            push_ident(source, column);
            source.push(')');
        }
        None => source.push_str(call),
    }
}

/// `"s"."f"("a" := <arg>, VARIADIC "v" := <arg>)`.
fn call(
    out: &mut String,
    function: &str,
    params: &[&RoutineParam],
    mut argument: impl FnMut(&mut String, &RoutineParam),
) {
    out.push_str(function);
    out.push('(');
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if p.variadic {
            out.push_str("VARIADIC ");
        }
        push_ident(out, &p.name);
        out.push_str(" := ");
        argument(out, p);
    }
    out.push(')');
}

/// `pg_catalog.json_to_record($n::json) AS "pgrst_body"("a" int4, ...)`.
fn body_record(out: &mut String, param: &str, params: &[&RoutineParam]) {
    out.push_str("pg_catalog.json_to_record(");
    out.push_str(param);
    out.push_str("::json) AS \"pgrst_body\"(");
    if params.is_empty() {
        // A record needs a column; an ignored one keeps the FROM item valid.
        out.push_str("\"pgrst_none\" text");
    }
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_ident(out, &p.name);
        out.push(' ');
        out.push_str(&p.type_name);
    }
    out.push(')');
}
