//! PUT, PATCH and POST of views: bodies into upserts, set-replace, inserts, in one transaction.

use crate::mount::{RequestContext, Response};
use crate::view::error::ApiError;
use crate::view::model::Endpoint;

/// Everything a writing request needs; built by the view dispatcher after path matching and the
/// precondition.
pub struct WriteRequest<'a> {
    pub endpoint: &'a Endpoint,
    /// PUT, PATCH or POST.
    pub method: &'a http::Method,
    /// `captures[n - 1]` is capture `$n`, percent-decoded (missing captures are empty strings).
    pub captures: &'a [String],
    pub headers: &'a http::HeaderMap,
    pub body: hyper::body::Incoming,
    pub context: &'a RequestContext,
    pub pool: &'a sluice_pg::Pool,
}

/// Answers a PUT, PATCH or POST on a view endpoint.
pub async fn handle(request: WriteRequest<'_>) -> Response {
    // Replaced by the writing half of the gateway (branch views-write).
    ApiError::new(
        http::StatusCode::NOT_IMPLEMENTED,
        "not_implemented",
        format!("{} on views is not built yet", request.method),
    )
    .into_response()
}
