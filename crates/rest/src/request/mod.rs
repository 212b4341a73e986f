//! The sans-I/O front of the REST API: a request's method, path, query string and headers parsed
//! into an [`ApiRequest`] (PostgREST's URL grammar and headers), before anything looks at the
//! schema.

pub mod ast;
mod canonical;
mod cursor;
mod filter;
mod headers;
mod parse;
mod select;

pub use ast::*;
pub use canonical::canonical_query;
pub use filter::{parse_filter, parse_logic};
pub use headers::{accept, media_type, preferences, range};
pub use parse::parse_request;
pub use select::{parse_columns, parse_order, parse_select};

/// A request as the grammar reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiRequest {
    /// The method.
    pub method: Method,
    /// What the path names.
    pub resource: Resource,
    /// The query string, split by parameter.
    pub query: QueryParams,
    /// The `Prefer` headers.
    pub prefer: Preferences,
    /// The `Range` header (with `Range-Unit: items` or none), for GET/HEAD.
    pub range: Option<RowRange>,
    /// The `Accept` header's media types, best first (q-values and order); `[Any]` without one.
    pub accept: Vec<MediaType>,
    /// The `Content-Type` of the body, when there is one.
    pub content_type: Option<MediaType>,
    /// `Accept-Profile` (GET, HEAD) or `Content-Profile` (other methods): the schema asked for.
    pub profile: Option<String>,
    /// The query string in canonical form ([`canonical_query`]) for a read of a relation (its
    /// `Content-Location`); empty otherwise.
    pub canonical_query: String,
}
