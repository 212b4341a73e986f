//! The request's context inside its transaction: the role it runs as and PostgREST's request
//! settings (`request.method`, `request.path`, `request.headers`, `request.cookies`), set by one
//! statement sent in front of the request's own (the seam where JWT roles will plug in).

use crate::sql::Statement;

/// What a request sets in its transaction before its statements run.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    /// `SET LOCAL ROLE` to this role (`anon_role`, later the JWT's role).
    pub role: Option<String>,
    /// `search_path`: the request's schema.
    pub search_path: String,
    /// `request.method`: the HTTP method.
    pub method: String,
    /// `request.path`: the URL path.
    pub path: String,
    /// Request headers as a JSON object, names in lower case.
    pub headers_json: String,
    /// Cookies as a JSON object.
    pub cookies_json: String,
    /// The token's claims (`request.jwt.claims`), when the request carried one.
    pub claims_json: Option<String>,
}

impl RequestContext {
    /// From the request's parts; headers that are not text are left out.
    pub fn new(
        identity: crate::auth::Identity,
        schema: &str,
        method: &http::Method,
        path: &str,
        headers: &http::HeaderMap,
    ) -> RequestContext {
        let mut header_map = serde_json::Map::new();
        let mut cookies = serde_json::Map::new();
        for (name, value) in headers {
            let Ok(value) = value.to_str() else { continue };
            if name == http::header::COOKIE {
                for pair in value.split(';') {
                    if let Some((k, v)) = pair.trim().split_once('=') {
                        cookies.insert(k.to_string(), serde_json::Value::String(v.to_string()));
                    }
                }
            }
            header_map.insert(
                name.as_str().to_string(),
                serde_json::Value::String(value.to_string()),
            );
        }
        RequestContext {
            role: identity.role,
            claims_json: identity.claims_json,
            search_path: sluice_pg::sql::quote_ident(schema),
            method: method.as_str().to_string(),
            path: path.to_string(),
            headers_json: serde_json::Value::Object(header_map).to_string(),
            cookies_json: serde_json::Value::Object(cookies).to_string(),
        }
    }

    /// The statement that sets it all, local to the transaction.
    pub fn statement(&self) -> Statement {
        let mut st = Statement::new();
        st.push("SELECT pg_catalog.set_config('search_path', ")
            .param(self.search_path.clone())
            .push(", true), pg_catalog.set_config('request.method', ")
            .param(self.method.clone())
            .push(", true), pg_catalog.set_config('request.path', ")
            .param(self.path.clone())
            .push(", true), pg_catalog.set_config('request.headers', ")
            .param(self.headers_json.clone())
            .push(", true), pg_catalog.set_config('request.cookies', ")
            .param(self.cookies_json.clone())
            .push(", true)");
        if let Some(claims) = &self.claims_json {
            st.push(", pg_catalog.set_config('request.jwt.claims', ")
                .param(claims.clone())
                .push(", true)");
        }
        if let Some(role) = &self.role {
            st.push(", pg_catalog.set_config('role', ")
                .param(role.clone())
                .push(", true)");
        }
        st
    }
}
