//! The request's context inside its transaction: the role it runs as and PostgREST's request
//! settings (`request.method`, `request.path`, `request.headers`, `request.cookies`,
//! `request.jwt.claims`), set by one statement sent in front of the request's own, then the
//! pre-request function, whose `response.headers` and `response.status` shape the answer.

use crate::sql::Statement;

/// What a request sets in its transaction before its statements run.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    /// `SET LOCAL ROLE` to this role (`anon_role`, later the JWT's role).
    pub role: Option<String>,
    /// `search_path`: the request's schema, then the extra search path, each quoted.
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
    /// The pre-request function, quoted (`"schema"."name"` or `"name"`), called after the
    /// settings.
    pub pre_request: Option<String>,
    /// `timezone` for the transaction (`Prefer: timezone`, checked against the server's names).
    pub timezone: Option<String>,
    /// The role's own settings (`ALTER ROLE .. SET`), set before it (PostgREST's order, so a
    /// setting granted to the connecting role with `GRANT SET ON PARAMETER` can be set).
    pub role_settings: std::sync::Arc<[(String, String)]>,
    /// The called function's hoisted settings, set last (after `timezone`, as PostgREST does).
    pub function_settings: Vec<(String, String)>,
    /// The transaction may not write (`transaction_read_only`): PostgREST's access mode for
    /// GET and HEAD, and for calls of functions that are not `VOLATILE`.
    pub read_only: bool,
    /// The role's isolation level (its `default_transaction_isolation`), when above the
    /// default: the request's explicit transaction starts at it.
    pub isolation: Option<crate::schema::IsolationLevel>,
}

impl RequestContext {
    /// From the request's parts; headers that are not text are left out.
    pub fn new(
        identity: crate::auth::Identity,
        schema: &str,
        extra_search_path: &[String],
        method: &http::Method,
        path: &str,
        headers: &http::HeaderMap,
    ) -> RequestContext {
        // JSON objects written straight out (one buffer each): this runs on every request with
        // a context. A header given twice counts with its last value, as a map would keep it.
        use sluice_formats::encode::write_json_str;
        let mut headers_json = Vec::with_capacity(256);
        let mut cookies_json = Vec::with_capacity(16);
        headers_json.push(b'{');
        cookies_json.push(b'{');
        for name in headers.keys() {
            let Some(value) = headers.get_all(name).iter().next_back() else {
                continue;
            };
            let Ok(value) = value.to_str() else { continue };
            if name == http::header::COOKIE {
                for pair in value.split(';') {
                    if let Some((k, v)) = pair.trim().split_once('=') {
                        if cookies_json.len() > 1 {
                            cookies_json.push(b',');
                        }
                        write_json_str(&mut cookies_json, k);
                        cookies_json.push(b':');
                        write_json_str(&mut cookies_json, v);
                    }
                }
            }
            if headers_json.len() > 1 {
                headers_json.push(b',');
            }
            write_json_str(&mut headers_json, name.as_str());
            headers_json.push(b':');
            write_json_str(&mut headers_json, value);
        }
        headers_json.push(b'}');
        cookies_json.push(b'}');
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap_or_else(|_| "{}".to_string());
        let mut search_path = sluice_pg::sql::quote_ident(schema);
        for extra in extra_search_path {
            search_path.push_str(", ");
            search_path.push_str(&sluice_pg::sql::quote_ident(extra));
        }
        RequestContext {
            role: identity.role,
            claims_json: identity.claims_json,
            search_path,
            method: method.as_str().to_string(),
            path: path.to_string(),
            headers_json: text(headers_json),
            cookies_json: text(cookies_json),
            pre_request: None,
            timezone: None,
            role_settings: std::sync::Arc::new([]),
            function_settings: Vec::new(),
            read_only: false,
            isolation: None,
        }
    }

    /// The statements sent in front of the request's own: the settings, then the pre-request
    /// function (its row carries the answer's `response.headers` and `response.status`).
    pub fn statements(&self) -> Vec<Statement> {
        let mut statements = vec![self.statement()];
        if let Some(function) = &self.pre_request {
            let mut call = Statement::new();
            call.push("SELECT ").push(function).push(
                "(), pg_catalog.current_setting('response.headers', true), \
                     pg_catalog.current_setting('response.status', true)",
            );
            statements.push(call);
        }
        statements
    }

    /// The statement that sets it all, local to the transaction.
    pub fn statement(&self) -> Statement {
        // Without a token the claims are the anonymous role's, as PostgREST sets them, so
        // `current_setting('request.jwt.claims', true)::json` always parses.
        let claims = match (&self.claims_json, &self.role) {
            (Some(claims), _) => Some(claims.clone()),
            (None, Some(role)) => Some(serde_json::json!({ "role": role }).to_string()),
            (None, None) => None,
        };
        let mut params = Vec::with_capacity(8);
        params.extend(
            [
                &self.search_path,
                &self.method,
                &self.path,
                &self.headers_json,
                &self.cookies_json,
            ]
            .map(|value| Some(value.clone())),
        );
        let shape = SettingsShape {
            claims: claims.is_some(),
            timezone: self.timezone.is_some(),
            role: self.role.is_some(),
            read_only: self.read_only,
        };
        params.extend(
            [claims, self.timezone.clone(), self.role.clone()]
                .into_iter()
                .flatten()
                .map(Some),
        );
        if self.role_settings.is_empty() && self.function_settings.is_empty() {
            return Statement {
                sql: shape.sql().to_string(),
                params,
            };
        }
        // Settings named by the catalog: names and values are parameters, the text written
        // for this request (only requests whose role or function has settings pay for it).
        let mut calls = Vec::new();
        let mut all = Vec::with_capacity(
            params.len() + 2 * (self.role_settings.len() + self.function_settings.len()),
        );
        // PostgREST's order: the search path, the role's settings (so its own `search_path`
        // wins, and before the role, so a setting granted to the connecting role can be set),
        // the rest, the function's.
        let mut params = params.into_iter();
        calls.extend(shape.calls(1).take(1));
        all.extend(params.next());
        push_settings(&mut calls, &mut all, &self.role_settings);
        // Numbered so that the call after the search path's takes the next parameter.
        calls.extend(shape.calls(all.len()).skip(1));
        all.extend(params);
        push_settings(&mut calls, &mut all, &self.function_settings);
        Statement {
            sql: format!("SELECT {}", calls.join(", ")),
            params: all,
        }
    }
}

/// The statement starting an explicit transaction at `isolation`.
pub fn begin(isolation: Option<crate::schema::IsolationLevel>) -> &'static str {
    isolation.map_or("BEGIN", crate::schema::IsolationLevel::begin)
}

/// A statement setting `pairs` (name, value) for the transaction, both as parameters.
pub fn settings_statement(pairs: &[(String, String)]) -> Statement {
    let mut calls = Vec::with_capacity(pairs.len());
    let mut params = Vec::with_capacity(2 * pairs.len());
    push_settings(&mut calls, &mut params, pairs);
    Statement {
        sql: format!("SELECT {}", calls.join(", ")),
        params,
    }
}

/// A `set_config` call per pair onto `calls`, its name and value onto `params`.
fn push_settings(
    calls: &mut Vec<String>,
    params: &mut Vec<Option<String>>,
    pairs: &[(String, String)],
) {
    for (name, value) in pairs {
        let at = params.len() + 1;
        calls.push(format!("pg_catalog.set_config(${at}, ${}, true)", at + 1));
        params.push(Some(name.clone()));
        params.push(Some(value.clone()));
    }
}

/// Which of the optional settings a request's settings statement carries; each shape's text is
/// written once (it was written per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SettingsShape {
    claims: bool,
    timezone: bool,
    role: bool,
    read_only: bool,
}

impl SettingsShape {
    /// The statement's text: `set_config(name, $n, true)` for the five request settings,
    /// then the claims, the timezone and the role, in that order, where the shape has them,
    /// and `transaction_read_only` (no parameter) for a read-only one.
    fn sql(self) -> &'static str {
        static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let index = |shape: SettingsShape| {
            usize::from(shape.claims)
                | usize::from(shape.timezone) << 1
                | usize::from(shape.role) << 2
                | usize::from(shape.read_only) << 3
        };
        let texts = TEXTS.get_or_init(|| {
            let mut texts = vec![String::new(); 16];
            for bits in 0..16usize {
                let shape = SettingsShape {
                    claims: bits & 1 != 0,
                    timezone: bits & 2 != 0,
                    role: bits & 4 != 0,
                    read_only: bits & 8 != 0,
                };
                texts[index(shape)] = shape.write_sql();
            }
            texts
        });
        &texts[index(self)]
    }

    fn write_sql(self) -> String {
        format!("SELECT {}", self.calls(1).collect::<Vec<_>>().join(", "))
    }

    /// The `set_config` calls, their parameters numbered from `first`.
    fn calls(self, first: usize) -> impl Iterator<Item = String> {
        [
            "search_path",
            "request.method",
            "request.path",
            "request.headers",
            "request.cookies",
        ]
        .into_iter()
        .chain(self.claims.then_some("request.jwt.claims"))
        .chain(self.timezone.then_some("timezone"))
        .chain(self.role.then_some("role"))
        .enumerate()
        .map(move |(i, name)| format!("pg_catalog.set_config('{name}', ${}, true)", first + i))
        .chain(
            self.read_only
                .then(|| "pg_catalog.set_config('transaction_read_only', 'on', true)".to_string()),
        )
    }
}

/// Whether a connection whose own `search_path` resolves to `connection` (its
/// `current_schemas(false)`) already searches what a request on `schema` with
/// `extra_search_path` would set, repeated schemas counting once: then the request need not set
/// it. A named schema that does not exist makes them differ, which only costs the statement.
pub fn search_path_matches(
    connection: &[String],
    schema: &str,
    extra_search_path: &[String],
) -> bool {
    let wanted = std::iter::once(schema).chain(extra_search_path.iter().map(String::as_str));
    let mut seen = 0;
    for (i, name) in wanted.clone().enumerate() {
        if wanted.clone().take(i).any(|earlier| earlier == name) {
            continue;
        }
        if connection.get(seen).map(String::as_str) != Some(name) {
            return false;
        }
        seen += 1;
    }
    seen == connection.len()
}

/// The pre-request function as configured (`name` or `schema.name`), quoted for SQL.
pub fn quote_function(name: &str) -> String {
    match name.split_once('.') {
        Some((schema, function)) => {
            let mut out = String::new();
            sluice_pg::sql::push_qualified(&mut out, schema, function);
            out
        }
        None => sluice_pg::sql::quote_ident(name),
    }
}

/// Reads what SQL set for the answer, in the transaction that set it.
pub const RESPONSE_SETTINGS: &str = "SELECT pg_catalog.current_setting('response.headers', true), \
                                     pg_catalog.current_setting('response.status', true)";

/// What SQL set to shape the answer (PostgREST's `response.headers` and `response.status`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shaping {
    /// The status to answer with instead of the usual one.
    pub status: Option<http::StatusCode>,
    /// Headers to add to (or replace in) the answer.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

impl Shaping {
    /// From the pre-request statement's row (the function's result, then the two settings);
    /// PostgREST's PGRST111 and PGRST112 when SQL set them to something unusable.
    pub fn from_pre_request(rows: &sluice_pg::Rows) -> Result<Shaping, crate::error::ApiError> {
        Shaping::from_columns(rows, 1)
    }

    /// From the row of [`RESPONSE_SETTINGS`], read after the statement that may have set them.
    pub fn from_settings(rows: &sluice_pg::Rows) -> Result<Shaping, crate::error::ApiError> {
        Shaping::from_columns(rows, 0)
    }

    /// From the two settings' columns of the first row, the headers' at `first`.
    fn from_columns(
        rows: &sluice_pg::Rows,
        first: usize,
    ) -> Result<Shaping, crate::error::ApiError> {
        let cell = |i: usize| {
            rows.get(0)
                .and_then(|row| row.raw(i))
                .map(|raw| String::from_utf8_lossy(raw).into_owned())
                .filter(|text| !text.is_empty())
        };
        Shaping::parse(cell(first).as_deref(), cell(first + 1).as_deref())
    }

    /// From the settings' text (`None` or empty: not set).
    pub fn parse(
        headers: Option<&str>,
        status: Option<&str>,
    ) -> Result<Shaping, crate::error::ApiError> {
        use crate::error::ApiError;
        use http::StatusCode;
        let bad_headers = || {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "PGRST111",
                "response.headers guc must be a JSON array composed of objects with a single \
                 key and a string value",
            )
        };
        let mut shaping = Shaping::default();
        if let Some(text) = headers.filter(|t| !t.is_empty()) {
            let value: serde_json::Value = serde_json::from_str(text).map_err(|_| bad_headers())?;
            let items = value.as_array().ok_or_else(bad_headers)?;
            for item in items {
                let object = item
                    .as_object()
                    .filter(|o| o.len() == 1)
                    .ok_or_else(bad_headers)?;
                for (name, value) in object {
                    let value = value.as_str().ok_or_else(bad_headers)?;
                    let name =
                        http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad_headers())?;
                    let value = http::HeaderValue::from_str(value).map_err(|_| bad_headers())?;
                    shaping.headers.push((name, value));
                }
            }
        }
        if let Some(text) = status.filter(|t| !t.is_empty()) {
            let status = text
                .trim()
                .parse::<u16>()
                .ok()
                .and_then(|code| StatusCode::from_u16(code).ok())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "PGRST112",
                        "response.status guc must be a valid status code",
                    )
                })?;
            shaping.status = Some(status);
        }
        Ok(shaping)
    }

    /// Applies the status and headers to an answer: a name SQL set replaces the answer's own
    /// header of that name (a trigger's `Location`), and every entry SQL gave for it is sent
    /// (two `Set-Cookie`), as PostgREST adds its own headers only where SQL set none.
    pub fn apply(&self, response: &mut sluice_http::Response) {
        if let Some(status) = self.status {
            *response.status_mut() = status;
        }
        let headers = response.headers_mut();
        for (i, (name, _)) in self.headers.iter().enumerate() {
            if self.headers[..i].iter().all(|(earlier, _)| earlier != name) {
                headers.remove(name);
            }
        }
        for (name, value) in &self.headers {
            headers.append(name.clone(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RequestContext, Shaping, search_path_matches};

    #[test]
    fn headers_and_cookies_become_json_objects() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "x-quote",
            http::HeaderValue::from_static(r#"say "hi" \ there"#),
        );
        headers.append("accept", http::HeaderValue::from_static("text/csv"));
        headers.append("accept", http::HeaderValue::from_static("application/json"));
        headers.insert("cookie", http::HeaderValue::from_static("a=1; b=two"));
        let identity = crate::auth::Identity {
            role: None,
            claims_json: None,
        };
        let context =
            RequestContext::new(identity, "public", &[], &http::Method::GET, "/x", &headers);
        let parsed: serde_json::Value = serde_json::from_str(&context.headers_json).unwrap();
        assert_eq!(parsed["x-quote"], r#"say "hi" \ there"#);
        assert_eq!(
            parsed["accept"], "application/json",
            "the last of a repeated header"
        );
        assert_eq!(parsed["cookie"], "a=1; b=two");
        let cookies: serde_json::Value = serde_json::from_str(&context.cookies_json).unwrap();
        assert_eq!(cookies, serde_json::json!({"a": "1", "b": "two"}));
        let empty = RequestContext::new(
            crate::auth::Identity {
                role: None,
                claims_json: None,
            },
            "public",
            &[],
            &http::Method::GET,
            "/x",
            &http::HeaderMap::new(),
        );
        assert_eq!(
            (empty.headers_json.as_str(), empty.cookies_json.as_str()),
            ("{}", "{}")
        );
    }

    #[test]
    fn each_settings_shape_binds_its_parameters_in_order() {
        let mut context = RequestContext::new(
            crate::auth::Identity {
                role: Some("web".into()),
                claims_json: Some(r#"{"role":"web"}"#.into()),
            },
            "api",
            &["public".to_string(), "Ext \"x\"".to_string()],
            &http::Method::POST,
            "/items",
            &http::HeaderMap::new(),
        );
        for timezone in [None, Some("UTC".to_string())] {
            for role in [None, Some("web".to_string())] {
                for claims in [None, Some(r#"{"role":"web"}"#.to_string())] {
                    context.timezone = timezone.clone();
                    context.role = role.clone();
                    context.claims_json = claims.clone();
                    let statement = context.statement();
                    let names: Vec<&str> = statement
                        .sql
                        .split("set_config('")
                        .skip(1)
                        .map(|rest| rest.split('\'').next().unwrap())
                        .collect();
                    assert_eq!(names.len(), statement.params.len(), "{}", statement.sql);
                    for (i, name) in names.iter().enumerate() {
                        assert!(
                            statement
                                .sql
                                .contains(&format!("'{name}', ${}, true)", i + 1)),
                            "{}",
                            statement.sql
                        );
                    }
                    let value = |name: &str| {
                        let i = names.iter().position(|n| *n == name)?;
                        statement.params[i].as_deref()
                    };
                    assert_eq!(
                        value("search_path"),
                        Some(r#""api", "public", "Ext ""x""""#)
                    );
                    assert_eq!(value("request.method"), Some("POST"));
                    assert_eq!(value("timezone"), timezone.as_deref());
                    assert_eq!(value("role"), role.as_deref());
                    // Without a token, the anonymous role's claims.
                    let expected_claims = match (&claims, &role) {
                        (Some(claims), _) => Some(claims.clone()),
                        (None, Some(_)) => Some(r#"{"role":"web"}"#.to_string()),
                        (None, None) => None,
                    };
                    assert_eq!(
                        value("request.jwt.claims").map(str::to_string),
                        expected_claims
                    );
                }
            }
        }
    }

    /// A GET of `path` on schema `api` as the role `web`, without a token.
    fn web_context(path: &str) -> RequestContext {
        RequestContext::new(
            crate::auth::Identity {
                role: Some("web".into()),
                claims_json: None,
            },
            "api",
            &[],
            &http::Method::GET,
            path,
            &http::HeaderMap::new(),
        )
    }

    #[test]
    fn a_read_only_request_sets_the_access_mode_without_a_parameter() {
        let mut context = web_context("/items");
        let writable = context.statement();
        context.read_only = true;
        let read_only = context.statement();
        assert!(!writable.sql.contains("transaction_read_only"));
        assert!(
            read_only
                .sql
                .ends_with(", pg_catalog.set_config('transaction_read_only', 'on', true)"),
            "{}",
            read_only.sql
        );
        assert_eq!(read_only.params, writable.params);
    }

    #[test]
    fn role_settings_follow_the_search_path_and_precede_the_role_and_function_settings_last() {
        let mut context = web_context("/rpc/f");
        let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
        context.role_settings =
            vec![pair("statement_timeout", "3s"), pair("work_mem", "8MB")].into();
        context.function_settings = vec![pair("statement_timeout", "1s")];
        let statement = context.statement();
        // Each set_config's two placeholders, in the statement's order.
        let placeholders: Vec<usize> = statement
            .sql
            .split('$')
            .skip(1)
            .map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().unwrap()
            })
            .collect();
        let bound = |n: usize| statement.params[n - 1].as_deref().unwrap();
        // The search path, then the role's settings: their names are parameters too.
        assert!(statement.sql.starts_with("SELECT pg_catalog.set_config('search_path', $1, true), pg_catalog.set_config($2, $3, true)"), "{}", statement.sql);
        assert_eq!(bound(1), "\"api\"");
        assert_eq!(
            [bound(2), bound(3), bound(4), bound(5)],
            ["statement_timeout", "3s", "work_mem", "8MB"]
        );
        // The fixed settings follow, then the role, numbered on from there.
        let role_at = statement.sql.find("'role'").unwrap();
        let hoisted_at = statement.sql.rfind("set_config($").unwrap();
        assert!(role_at < hoisted_at, "{}", statement.sql);
        let last = placeholders.len();
        assert_eq!(placeholders[last - 2..], [last - 1, last]);
        assert_eq!([bound(last - 1), bound(last)], ["statement_timeout", "1s"]);
        assert_eq!(
            placeholders,
            (1..=statement.params.len()).collect::<Vec<_>>()
        );
        // Seven fixed settings (five, the claims, the role) bind their values; the three
        // others their names and values.
        assert_eq!(statement.params.len(), 7 + 2 * 3, "{}", statement.sql);
    }

    #[test]
    fn the_connection_search_path_serves_a_request_resolving_alike() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let public = names(&["public"]);
        assert!(search_path_matches(&public, "public", &public));
        assert!(search_path_matches(&public, "public", &[]));
        assert!(search_path_matches(
            &public,
            "public",
            &names(&["public", "public"])
        ));
        assert!(!search_path_matches(&public, "api", &public));
        assert!(!search_path_matches(&public, "public", &names(&["ext"])));
        // "$user", public with a schema named as the user: not public alone.
        assert!(!search_path_matches(
            &names(&["sluice", "public"]),
            "public",
            &public
        ));
        assert!(search_path_matches(
            &names(&["api", "public"]),
            "api",
            &public
        ));
        assert!(!search_path_matches(
            &names(&["public", "api"]),
            "api",
            &public
        ));
        assert!(!search_path_matches(&[], "public", &public));
    }

    #[test]
    fn sql_headers_replace_the_answers_own_and_repeat() {
        let shaping = Shaping::parse(
            Some(r#"[{"Location": "/a?id=eq.1&x"}, {"Set-Cookie": "a=1"}, {"Set-Cookie": "b=2"}]"#),
            Some("205"),
        )
        .unwrap();
        let mut response = sluice_http::Response::new(sluice_http::empty());
        let headers = response.headers_mut();
        headers.insert("location", http::HeaderValue::from_static("/a?id=eq.1"));
        headers.insert("set-cookie", http::HeaderValue::from_static("own=0"));
        headers.insert("content-range", http::HeaderValue::from_static("*/*"));
        shaping.apply(&mut response);
        let all = |name: &str| -> Vec<&str> {
            response
                .headers()
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap())
                .collect()
        };
        assert_eq!(response.status().as_u16(), 205);
        assert_eq!(all("location"), ["/a?id=eq.1&x"]);
        assert_eq!(all("set-cookie"), ["a=1", "b=2"]);
        assert_eq!(all("content-range"), ["*/*"]);
        // No header is blank (PostgREST's issue 1427): an empty name is refused.
        assert!(
            response
                .headers()
                .iter()
                .all(|(n, v)| !n.as_str().is_empty() && !v.is_empty())
        );
        assert_eq!(
            Shaping::parse(Some(r#"[{"": "x"}]"#), None)
                .unwrap_err()
                .code,
            "PGRST111"
        );
    }

    #[test]
    fn response_settings_parse_as_postgrest_reads_them() {
        let shaping = Shaping::parse(
            Some(r#"[{"Cache-Control": "no-store"}, {"X-Who": "me"}]"#),
            Some("418"),
        )
        .unwrap();
        assert_eq!(shaping.status.map(|s| s.as_u16()), Some(418));
        assert_eq!(shaping.headers.len(), 2);
        assert_eq!(shaping.headers[0].0, "cache-control");
        assert_eq!(Shaping::parse(None, Some("")).unwrap(), Shaping::default());
        for bad in [
            r#"{"a": "b"}"#,
            r#"[{"a": 1}]"#,
            r#"[{"a": "b", "c": "d"}]"#,
            "nope",
        ] {
            assert_eq!(
                Shaping::parse(Some(bad), None).unwrap_err().code,
                "PGRST111",
                "{bad}"
            );
        }
        for bad in ["abc", "99", "1000"] {
            assert_eq!(
                Shaping::parse(None, Some(bad)).unwrap_err().code,
                "PGRST112",
                "{bad}"
            );
        }
    }
}
