//! The operations endpoints under `/-/`: liveness, readiness (the database answers), metrics.

mod metrics;

pub use metrics::{Metrics, OpenConnection};

use crate::mount::{Response, full};
use crate::server::error_response;
use std::time::Duration;

/// Longest wait for the readiness query (acquire plus `SELECT 1`).
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Answers `/-/{op}`: `live` (200 while the process serves), `ready` (200 when the database
/// answers `SELECT 1`, else 503 with `Retry-After`; 503 too while shutting down), `metrics`
/// (Prometheus text); anything else 404.
pub async fn answer(
    op: &str,
    pool: Option<&sluice_pg::Pool>,
    replicas: Option<&sluice_pg::pool::ReadPools>,
    metrics: &Metrics,
    shutting_down: bool,
) -> Response {
    match op {
        "live" => text(http::StatusCode::OK, "live\n"),
        "ready" if shutting_down => unavailable("the server is shutting down"),
        "ready" => match pool {
            None => text(http::StatusCode::OK, "ready\n"),
            Some(pool) => match tokio::time::timeout(READY_TIMEOUT, check(pool)).await {
                Ok(Ok(())) => text(http::StatusCode::OK, "ready\n"),
                Ok(Err(problem)) => unavailable(&problem),
                Err(_) => unavailable(&format!(
                    "the database did not answer within {} ms",
                    READY_TIMEOUT.as_millis()
                )),
            },
        },
        "metrics" => {
            let status = pool.map(sluice_pg::Pool::status);
            let mut text = metrics.render(status.as_ref());
            if let Some(replicas) = replicas {
                metrics::render_replicas(&mut text, replicas);
            }
            let mut response = Response::new(full(text));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        _ => error_response(
            http::StatusCode::NOT_FOUND,
            "not_found",
            "the operations endpoints are /-/live, /-/ready and /-/metrics",
        ),
    }
}

/// `SELECT 1` on a pooled connection; the error says what failed in words safe for the answer
/// (the full error, with the server's address, goes to the log).
async fn check(pool: &sluice_pg::Pool) -> Result<(), String> {
    let mut conn = pool.get().await.map_err(|error| {
        tracing::warn!(%error, "/-/ready: no database connection");
        format!("no database connection: {}", error.public_message())
    })?;
    conn.query("SELECT 1", &[]).await.map_err(|error| {
        tracing::warn!(%error, "/-/ready: the database did not answer SELECT 1");
        format!(
            "the database did not answer SELECT 1: {}",
            error.public_message()
        )
    })?;
    Ok(())
}

fn text(status: http::StatusCode, body: &'static str) -> Response {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn unavailable(message: &str) -> Response {
    let mut response = error_response(http::StatusCode::SERVICE_UNAVAILABLE, "not_ready", message);
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    response
}
