//! Evaluating an endpoint's `precondition` (eq, or, and, match, header, sql.exists).

use crate::view::model::Expr;
use serde_json::Value;
use std::borrow::Cow;

/// What a precondition can read: the captures, the request headers and a database connection
/// for `sql.exists` (acquired only when one is evaluated).
pub struct Facts<'a> {
    /// `captures[n - 1]` is capture `$n`.
    pub captures: &'a [String],
    /// The request's headers.
    pub headers: &'a http::HeaderMap,
    /// Where `sql.exists` gets its connection.
    pub pool: &'a sluice_pg::Pool,
}

/// Why a precondition could not be evaluated.
#[derive(Debug)]
pub enum EvalError {
    /// No connection could be had.
    Pool(sluice_pg::PoolError),
    /// The statement failed.
    Db(sluice_pg::Error),
}

/// A precondition value: JSON literals, capture and header text, booleans from operators.
type Evaluated<'a> = Cow<'a, Value>;

/// Whether `expr` holds for the request.
pub async fn holds(expr: &Expr, facts: &Facts<'_>) -> Result<bool, EvalError> {
    let mut conn = None;
    let value = eval(expr, facts, &mut conn).await?;
    Ok(truthy(value.as_ref()))
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Two values are equal when their JSON values are, or when their texts are (a capture `"1"`
/// equals the literal `1`).
fn same(a: &Value, b: &Value) -> bool {
    a == b || matches!((text(a), text(b)), (Some(x), Some(y)) if x == y)
}

fn text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        _ => None,
    }
}

fn eval<'e, 'f>(
    expr: &'e Expr,
    facts: &'f Facts<'f>,
    conn: &'f mut Option<sluice_pg::PooledConnection>,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Evaluated<'e>, EvalError>> + Send + 'f>,
>
where
    'e: 'f,
{
    Box::pin(async move {
        Ok(match expr {
            Expr::Literal(value) => Cow::Borrowed(value),
            Expr::Match(n) => match facts.captures.get(usize::from(*n) - 1) {
                Some(capture) => Cow::Owned(Value::String(capture.clone())),
                None => Cow::Owned(Value::Null),
            },
            Expr::Header(name) => match facts.headers.get(name).map(|v| v.to_str()) {
                Some(Ok(value)) => Cow::Owned(Value::String(value.to_owned())),
                _ => Cow::Owned(Value::Null),
            },
            Expr::Eq(items) => {
                let mut first: Option<Evaluated<'e>> = None;
                let mut all = true;
                for item in items {
                    let value = eval(item, facts, conn).await?;
                    match &first {
                        None => first = Some(value),
                        Some(first) => all &= same(first, &value),
                    }
                }
                Cow::Owned(Value::Bool(all))
            }
            Expr::Or(items) => {
                let mut any = false;
                for item in items {
                    let value = eval(item, facts, conn).await?;
                    if truthy(value.as_ref()) {
                        any = true;
                        break;
                    }
                }
                Cow::Owned(Value::Bool(any))
            }
            Expr::And(items) => {
                let mut all = true;
                for item in items {
                    let value = eval(item, facts, conn).await?;
                    if !truthy(value.as_ref()) {
                        all = false;
                        break;
                    }
                }
                Cow::Owned(Value::Bool(all))
            }
            Expr::SqlExists { sql, arguments } => {
                let mut values: Vec<Option<String>> = Vec::with_capacity(arguments.len());
                for argument in arguments {
                    let value = eval(argument, facts, conn).await?;
                    values.push(match &*value {
                        Value::Null => None,
                        other => {
                            Some(text(other).map_or_else(|| other.to_string(), Cow::into_owned))
                        }
                    });
                }
                let pooled = match conn.take() {
                    Some(pooled) => pooled,
                    None => facts.pool.get().await.map_err(EvalError::Pool)?,
                };
                let connection = conn.insert(pooled);
                let params: Vec<&dyn sluice_pg::ToSql> =
                    values.iter().map(|v| v as &dyn sluice_pg::ToSql).collect();
                let row = connection
                    .query_opt(sql, &params)
                    .await
                    .map_err(EvalError::Db)?;
                Cow::Owned(Value::Bool(row.is_some()))
            }
        })
    })
}
