//! The REST API's options, named after PostgREST's settings.

/// How a request's transaction ends (PostgREST's `db-tx-end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxEnd {
    /// Commit; `Prefer: tx=rollback` is ignored.
    #[default]
    Commit,
    /// Commit, unless `Prefer: tx=rollback` asks otherwise.
    CommitAllowOverride,
    /// Roll back; `Prefer: tx=commit` is ignored.
    Rollback,
    /// Roll back, unless `Prefer: tx=commit` asks otherwise.
    RollbackAllowOverride,
}

impl TxEnd {
    /// Whether a request with `prefer` (its `tx=` preference) commits.
    pub fn commits(self, prefer: Option<crate::request::PreferTx>) -> bool {
        use crate::request::PreferTx;
        match (self, prefer) {
            (TxEnd::Commit, _) => true,
            (TxEnd::Rollback, _) => false,
            (TxEnd::CommitAllowOverride, Some(PreferTx::Rollback)) => false,
            (TxEnd::CommitAllowOverride, _) => true,
            (TxEnd::RollbackAllowOverride, Some(PreferTx::Commit)) => true,
            (TxEnd::RollbackAllowOverride, _) => false,
        }
    }

    /// Whether `Prefer: tx=` is honoured (and so reported in `Preference-Applied`).
    pub fn allows_override(self) -> bool {
        matches!(
            self,
            TxEnd::CommitAllowOverride | TxEnd::RollbackAllowOverride
        )
    }
}

/// Options of the REST API.
#[derive(Debug, Clone)]
pub struct RestConfig {
    /// The exposed schemas; the first is the default (PostgREST's `db-schemas`).
    pub schemas: Vec<String>,
    /// The role requests run as (`SET LOCAL ROLE`), PostgREST's `db-anon-role`; `None`: the
    /// role Sluice connects with.
    pub anon_role: Option<String>,
    /// At most this many rows in a response (`db-max-rows`); `None`: no cap.
    pub max_rows: Option<u64>,
    /// `db-tx-end`.
    pub tx_end: TxEnd,
    /// Aggregates in `select` (`db-aggregates-enabled`).
    pub aggregates_enabled: bool,
    /// `Accept: application/vnd.pgrst.plan` answers the request's execution plan
    /// (`db-plan-enabled`); off, that media type is not available (406).
    pub plan_enabled: bool,
    /// Answer `GET /` with the OpenAPI description (`openapi-mode` other than `disabled`).
    pub openapi: bool,
    /// Bearer tokens are verified with this (PostgREST's `jwt-secret`); `None`: a token is
    /// refused (PGRST300) and every request runs as `anon_role`.
    pub jwt: Option<std::sync::Arc<crate::auth::JwtConfig>>,
    /// The origins cross-origin requests may come from (PostgREST's
    /// `server-cors-allowed-origins`); empty: any origin.
    pub cors_allowed_origins: Vec<String>,
    /// A function called in each request's transaction after its settings and role
    /// (PostgREST's `db-pre-request`, `name` or `schema.name`): it may raise to refuse the
    /// request, and the `response.headers` / `response.status` it sets shape the answer.
    pub pre_request: Option<String>,
    /// Seconds a verified token's identity is kept (PostgREST's `jwt-cache-max-lifetime`); 0:
    /// every token is verified each time.
    pub jwt_cache_max_lifetime: u64,
    /// Schemas searched after the request's own (PostgREST's `db-extra-search-path`): where
    /// extensions' types, operators and functions live. Empty: the request's schema alone.
    pub extra_search_path: Vec<String>,
    /// The settings a function's `SET` clause gives the whole call's transaction, set before
    /// it runs (PostgREST's `db-hoisted-tx-settings`); other `SET` clauses apply inside the
    /// function only, as PostgreSQL applies them.
    pub hoisted_tx_settings: Vec<String>,
}

impl Default for RestConfig {
    fn default() -> RestConfig {
        RestConfig {
            schemas: vec!["public".to_string()],
            anon_role: None,
            max_rows: None,
            tx_end: TxEnd::Commit,
            aggregates_enabled: false,
            plan_enabled: false,
            openapi: true,
            jwt: None,
            cors_allowed_origins: Vec::new(),
            pre_request: None,
            jwt_cache_max_lifetime: 0,
            extra_search_path: vec!["public".to_string()],
            hoisted_tx_settings: [
                "statement_timeout",
                "plan_filter.statement_cost_limit",
                "default_transaction_isolation",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}
