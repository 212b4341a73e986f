//! The cost of authentication on the REST API: point GETs carrying an HS256 token whose claims a
//! row-level security policy reads, against the same GET without authentication, two `sluice
//! serve` processes side by side, alternating.

use crate::http::{Serve, print_unavailable, request, wrk};
use crate::report::{Line, median, print};
use crate::setup::Target;
use anyhow::{Context, Result};
use std::path::Path;

const TABLE: &str = "sluice_bench_rls";
const USER_ROLE: &str = "sluice_bench_user";
const ANON_ROLE: &str = "sluice_bench_anon";
/// A benchmark's secret, not a deployment's.
const SECRET: &str = "sluice-bench-jwt-secret-of-32-characters-at-least";

/// Creates the roles, and a copy of pgbench_accounts whose policy reads the token's claims
/// (once; later runs reuse it).
fn prepare(target: &Target) -> Result<()> {
    target.psql(&format!(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{USER_ROLE}') THEN \
             CREATE ROLE {USER_ROLE} NOLOGIN; END IF; \
           IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ANON_ROLE}') THEN \
             CREATE ROLE {ANON_ROLE} NOLOGIN; END IF; \
         END $$"
    ))?;
    if target.psql(&format!("SELECT to_regclass('{TABLE}') IS NULL"))? == "t" {
        eprintln!("auth: copying pgbench_accounts into {TABLE} with a row-level security policy");
        target.psql(&format!(
            "BEGIN; \
             CREATE TABLE {TABLE} AS SELECT * FROM pgbench_accounts; \
             ALTER TABLE {TABLE} ADD PRIMARY KEY (aid); \
             ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY; \
             CREATE POLICY by_claims ON {TABLE} FOR SELECT TO {USER_ROLE} USING \
               (bid <= (current_setting('request.jwt.claims', true)::json ->> 'max_bid')::int); \
             GRANT SELECT ON {TABLE} TO {USER_ROLE}; \
             COMMIT"
        ))?;
    }
    target.psql(&format!(
        "GRANT USAGE ON SCHEMA public TO {USER_ROLE}, {ANON_ROLE}"
    ))?;
    Ok(())
}

/// An HS256 token for the user role that sees every account (pgbench has `scale` branches).
fn token(scale: u32) -> Result<String> {
    let claims = serde_json::json!({ "role": USER_ROLE, "max_bid": scale, "sub": "bench" });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .context("signing the benchmark's token")
}

fn script(path: &str, token: Option<&str>) -> String {
    let header = token.map_or(String::new(), |t| {
        format!("wrk.headers[\"Authorization\"] = \"Bearer {t}\"\n")
    });
    format!(
        "-- One account by a random key per request.\n\
         math.randomseed(os.time())\n{header}\
         request = function()\n  \
           return wrk.format(\"GET\", \"/{path}?aid=eq.\" .. math.random(1, 2000000))\n\
         end\n"
    )
}

/// Runs the comparison: `plain` serves the unauthenticated GETs of pgbench_accounts.
pub(crate) fn run(
    target: &Target,
    plain: &Serve,
    sluice: &Path,
    dir: &Path,
    views: &Path,
    args: &crate::rest::RestArgs,
) -> Result<()> {
    let title = format!(
        "GET by key with an HS256 token and an RLS policy on its claims, 64 HTTP connections \
         (wrk -t2 -c64), serve pools of {}, jwt_cache_max_lifetime {}",
        args.pool_size, args.jwt_cache
    );
    prepare(target)?;
    let token = token(args.scale)?;
    let cache_lifetime = args.jwt_cache.to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let authed = Serve::start_with_env(
        sluice,
        &target.url,
        port,
        views,
        args.pool_size,
        "session",
        &[
            ("SLUICE_REST_JWT_SECRET", SECRET),
            ("SLUICE_REST_ANON_ROLE", ANON_ROLE),
            ("SLUICE_REST_JWT_CACHE_MAX_LIFETIME", &cache_lifetime),
        ],
    )?;
    let bearer = format!("Bearer {token}");
    let probe = request(
        &authed.base,
        "GET",
        &format!("/{TABLE}?aid=eq.1"),
        &[("authorization", bearer.as_str())],
        &[],
    );
    if probe.map_or(true, |(s, body)| s != 200 || body.len() < 10) {
        print_unavailable(&title, "the authenticated GET of one row");
        return Ok(());
    }
    let plain_script = dir.join("auth_plain.lua");
    let authed_script = dir.join("auth_jwt.lua");
    std::fs::write(&plain_script, script("pgbench_accounts", None))?;
    std::fs::write(&authed_script, script(TABLE, Some(&token)))?;
    let (mut plain_rps, mut authed_rps, mut plain_cpu, mut authed_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Requests per second and server CPU µs per request.
    let measure = |serve: &Serve, script: &Path| -> Result<(f64, f64)> {
        let before = serve.cpu_seconds()?;
        let (rps, _) = wrk(&serve.base, script, args.seconds)?;
        let cpu = serve.cpu_seconds()? - before;
        Ok((rps, cpu * 1e6 / (rps * args.seconds as f64)))
    };
    for round in 0..args.rounds {
        for turn in 0..2 {
            if (round + turn) % 2 == 0 {
                let (rps, cpu) = measure(plain, &plain_script)?;
                plain_rps.push(rps);
                plain_cpu.push(cpu);
            } else {
                let (rps, cpu) = measure(&authed, &authed_script)?;
                authed_rps.push(rps);
                authed_cpu.push(cpu);
            }
        }
        eprintln!(
            "auth round {}: no auth {:.0} req/s ({:.1} µs CPU), JWT + RLS {:.0} req/s ({:.1} µs CPU)",
            round + 1,
            plain_rps.last().copied().unwrap_or(f64::NAN),
            plain_cpu.last().copied().unwrap_or(f64::NAN),
            authed_rps.last().copied().unwrap_or(f64::NAN),
            authed_cpu.last().copied().unwrap_or(f64::NAN),
        );
    }
    let ratios: Vec<f64> = authed_rps
        .iter()
        .zip(&plain_rps)
        .map(|(a, p)| a / p)
        .collect();
    print(
        &title,
        &[
            Line {
                case: "`sluice serve`, `GET /pgbench_accounts?aid=eq.N`, no token".into(),
                figure: format!(
                    "{:.0} req/s, {:.1} µs server CPU per request",
                    median(&plain_rps),
                    median(&plain_cpu)
                ),
                note: "reference".into(),
            },
            Line {
                case: format!(
                    "`sluice serve` with `jwt_secret`, `GET /{TABLE}?aid=eq.N`, HS256 token, RLS"
                ),
                figure: format!(
                    "{:.0} req/s, {:.1} µs server CPU per request",
                    median(&authed_rps),
                    median(&authed_cpu)
                ),
                note: format!(
                    "{:.2} x no auth (median of the rounds' ratios; bar >= 0.85)",
                    median(&ratios)
                ),
            },
        ],
    );
    drop(authed);
    Ok(())
}
