//! The cost of authentication on the REST API: point GETs carrying an HS256 token whose claims a
//! row-level security policy reads, against the same GET without authentication (a server with
//! no roles at all, and the authenticating server's own anonymous request), side by side, in
//! rotation.

use crate::http::{Serve, request, wrk};
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
    // The anonymous role reads the same table under a policy that lets it see every row: the
    // same GET without a token, on the same server.
    target.psql(&format!(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT FROM pg_policies WHERE tablename = '{TABLE}' \
                          AND policyname = 'anonymous') THEN \
             CREATE POLICY anonymous ON {TABLE} FOR SELECT TO {ANON_ROLE} USING (true); \
           END IF; \
         END $$; \
         GRANT SELECT ON {TABLE} TO {ANON_ROLE}"
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
    // The first requests may come before the server has read its schema: retried a while.
    let mut probe = Err(anyhow::anyhow!("not sent"));
    for _ in 0..20 {
        probe = request(
            &authed.base,
            "GET",
            &format!("/{TABLE}?aid=eq.1"),
            &[("authorization", bearer.as_str())],
            &[],
        );
        if matches!(&probe, Ok((200, body)) if body.len() >= 10) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    match probe {
        Ok((200, body)) if body.len() >= 10 => {}
        Ok((status, body)) => {
            let body = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            anyhow::bail!("the authenticated GET of one row answered {status}: {body}");
        }
        Err(e) => return Err(e.context("the authenticated GET of one row")),
    }
    let plain_script = dir.join("auth_plain.lua");
    let anonymous_script = dir.join("auth_anonymous.lua");
    let authed_script = dir.join("auth_jwt.lua");
    std::fs::write(&plain_script, script("pgbench_accounts", None))?;
    std::fs::write(&anonymous_script, script(TABLE, None))?;
    std::fs::write(&authed_script, script(TABLE, Some(&token)))?;
    let [plain_run, anonymous_run, authed_run] = paired(
        "auth",
        [
            ("no auth", plain, &plain.base, &plain_script),
            ("anonymous", &authed, &authed.base, &anonymous_script),
            ("JWT + RLS", &authed, &authed.base, &authed_script),
        ],
        args,
    )?;
    let ratios = authed_run.ratios_to(&plain_run);
    let to_anonymous = authed_run.ratios_to(&anonymous_run);
    print(
        &title,
        &[
            Line {
                case: "`sluice serve`, `GET /pgbench_accounts?aid=eq.N`, no token".into(),
                figure: plain_run.figure(),
                note: "reference".into(),
            },
            Line {
                case: format!(
                    "the same server as below, `GET /{TABLE}?aid=eq.N`, no token: as `anon_role` \
                     (its settings and role switch), under a policy letting it see every row"
                ),
                figure: anonymous_run.figure(),
                note: "PostgREST's request without authentication".into(),
            },
            Line {
                case: format!(
                    "`sluice serve` with `jwt_secret`, `GET /{TABLE}?aid=eq.N`, HS256 token, RLS"
                ),
                figure: authed_run.figure(),
                note: format!(
                    "{:.2} x no auth (median of the rounds' ratios; bar >= 0.85), {:.2} x the \
                     anonymous GET",
                    median(&ratios),
                    median(&to_anonymous)
                ),
            },
        ],
    );
    drop(authed);
    Ok(())
}

/// One contender's rounds: requests per second and server CPU µs per request.
pub(crate) struct Measured {
    rps: Vec<f64>,
    cpu: Vec<f64>,
}

impl Measured {
    fn figure(&self) -> String {
        format!(
            "{:.0} req/s, {:.1} µs server CPU per request",
            median(&self.rps),
            median(&self.cpu)
        )
    }

    /// Each round's throughput divided by `other`'s in the same round.
    fn ratios_to(&self, other: &Measured) -> Vec<f64> {
        self.rps
            .iter()
            .zip(&other.rps)
            .map(|(a, b)| a / b)
            .collect()
    }
}

/// Contenders (a name, the server, what wrk is pointed at, its script) run in turn for
/// `args.rounds` rounds, the first to go rotating; a line per round on stderr. Two contenders
/// on one server share its CPU figure's process, each measured while it alone runs.
fn paired<const N: usize>(
    case: &str,
    contenders: [(&str, &Serve, &str, &Path); N],
    args: &crate::rest::RestArgs,
) -> Result<[Measured; N]> {
    let mut runs = [(); N].map(|()| Measured {
        rps: Vec::new(),
        cpu: Vec::new(),
    });
    for round in 0..args.rounds {
        for turn in 0..N {
            let which = (round + turn) % N;
            let (_, serve, target, script) = contenders[which];
            let before = serve.cpu_seconds()?;
            let (rps, _) = wrk(target, script, args.seconds)?;
            let cpu = serve.cpu_seconds()? - before;
            runs[which].rps.push(rps);
            runs[which]
                .cpu
                .push(cpu * 1e6 / (rps * args.seconds as f64));
        }
        let line: Vec<String> = contenders
            .iter()
            .zip(&runs)
            .map(|((name, ..), run)| {
                format!(
                    "{name} {:.0} req/s ({:.1} µs CPU)",
                    run.rps.last().copied().unwrap_or(f64::NAN),
                    run.cpu.last().copied().unwrap_or(f64::NAN)
                )
            })
            .collect();
        eprintln!("{case} round {}: {}", round + 1, line.join(", "));
    }
    Ok(runs)
}

/// A self-signed P-256 certificate for 127.0.0.1 and localhost, written as PEM files into `dir`.
fn certificate(dir: &Path) -> Result<(std::path::PathBuf, std::path::PathBuf)> {
    let key = rcgen::KeyPair::generate().context("making the benchmark's TLS key")?;
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
        .context("the benchmark's certificate parameters")?;
    let cert = params
        .self_signed(&key)
        .context("signing the benchmark's certificate")?;
    let (cert_path, key_path) = (dir.join("bench-tls.crt"), dir.join("bench-tls.key"));
    std::fs::write(&cert_path, cert.pem())?;
    std::fs::write(&key_path, key.serialize_pem())?;
    Ok((cert_path, key_path))
}

/// The same authenticated GETs (HS256 token, RLS) over HTTPS with keep-alive against plain HTTP:
/// two `sluice serve` configured alike but for the certificate.
pub(crate) fn run_https(
    target: &Target,
    sluice: &Path,
    dir: &Path,
    views: &Path,
    args: &crate::rest::RestArgs,
) -> Result<()> {
    let title = format!(
        "GET by key with an HS256 token and an RLS policy, HTTPS (TLS 1.3, P-256, keep-alive) \
         against plain HTTP, 64 connections (wrk -t2 -c64), serve pools of {}",
        args.pool_size
    );
    prepare(target)?;
    let token = token(args.scale)?;
    let (cert, key) = certificate(dir)?;
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let cache_lifetime = args.jwt_cache.to_string();
    let auth_env = [
        ("SLUICE_REST_JWT_SECRET", SECRET),
        ("SLUICE_REST_ANON_ROLE", ANON_ROLE),
        (
            "SLUICE_REST_JWT_CACHE_MAX_LIFETIME",
            cache_lifetime.as_str(),
        ),
    ];
    let free_port = || -> Result<u16> {
        Ok(std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port())
    };
    let start = |env: &[(&str, &str)]| {
        Serve::start_with_env(
            sluice,
            &target.url,
            free_port()?,
            views,
            args.pool_size,
            "session",
            env,
        )
    };
    let plain = start(&auth_env)?;
    let mut tls_env = auth_env.to_vec();
    tls_env.extend([
        ("SLUICE_HTTP_CERT", cert.as_str()),
        ("SLUICE_HTTP_KEY", key.as_str()),
    ]);
    let tls = start(&tls_env)?;
    let script_path = dir.join("auth_jwt.lua");
    std::fs::write(&script_path, script(TABLE, Some(&token)))?;
    let (plain_url, tls_url) = (plain.url(), tls.url());
    let [plain_run, tls_run] = paired(
        "https",
        [
            ("HTTP", &plain, &plain_url, &script_path),
            ("HTTPS", &tls, &tls_url, &script_path),
        ],
        args,
    )?;
    let ratios = tls_run.ratios_to(&plain_run);
    print(
        &title,
        &[
            Line {
                case: format!("plain HTTP, `GET /{TABLE}?aid=eq.N`, HS256 token, RLS"),
                figure: plain_run.figure(),
                note: "reference".into(),
            },
            Line {
                case: "the same over HTTPS".into(),
                figure: tls_run.figure(),
                note: format!(
                    "{:.2} x plain HTTP (median of the rounds' ratios; bar >= 0.8)",
                    median(&ratios)
                ),
            },
        ],
    );
    Ok(())
}
