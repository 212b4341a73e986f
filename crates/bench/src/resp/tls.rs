//! `sluice-bench resp tls`: what TLS costs on the Redis listener, Sluice against redis-server:
//! both plain and both with TLS (`redis-benchmark --tls --cacert`), in rotating order per round.

use super::{LoadArgs, Server, Table, clock_ticks, free_port, geometric_mean, machine, measure};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct TlsArgs {
    /// The sluice binary (default: the one next to this benchmark).
    #[arg(long)]
    sluice: Option<PathBuf>,
    #[command(flatten)]
    load: LoadArgs,
    /// redis-benchmark's tests (`-t`), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ping_mbulk,set,get,incr,lpush,mset"
    )]
    tests: Vec<String>,
}

/// A CA and a server certificate for localhost and 127.0.0.1 it signed, written into `dir`:
/// (CA, certificate, key).
fn certificates(dir: &Path) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    // OpenSSL (redis-cli, redis-benchmark) wants a named issuer.
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "sluice-bench CA");
    let ca = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &issuer)?;
    let paths = (
        dir.join("ca.crt"),
        dir.join("server.crt"),
        dir.join("server.key"),
    );
    std::fs::write(&paths.0, ca.pem())?;
    std::fs::write(&paths.1, cert.pem())?;
    std::fs::write(&paths.2, key.serialize_pem())?;
    Ok(paths)
}

/// Waits (up to 5 s) until a TLS server answers PING through `redis-cli --tls`.
fn wait_tls(server: &mut Server, ca: &Path) -> Result<()> {
    for _ in 0..100 {
        if let Some(status) = server.child.try_wait()? {
            bail!("the server on port {} exited: {status}", server.port);
        }
        let out = Command::new("redis-cli")
            .args(["-p", &server.port.to_string(), "--tls", "--cacert"])
            .arg(ca)
            .arg("ping")
            .stderr(Stdio::null())
            .output()?;
        if String::from_utf8_lossy(&out.stdout).trim() == "PONG" {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!(
        "the TLS server on port {} did not answer PING through redis-cli --tls",
        server.port
    )
}

pub fn tls(args: TlsArgs) -> Result<()> {
    if !super::tools_present(&["redis-server", "redis-benchmark", "redis-cli"]) {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let (ca, cert, key) = certificates(dir.path())?;
    let bin = crate::setup::sluice_binary(args.sluice.as_deref())?;
    let tls_flags = vec![
        format!("--resp-cert={}", cert.display()),
        format!("--resp-key={}", key.display()),
    ];
    let mut sluice = Server::sluice(&bin, free_port()?, &[])?;
    let mut sluice_tls = Server::sluice(&bin, free_port()?, &tls_flags)?;
    let mut redis = Server::redis(free_port()?)?;
    let port = free_port()?;
    let mut redis_tls = Server {
        child: Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--tls-port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .arg("--tls-cert-file")
            .arg(&cert)
            .arg("--tls-key-file")
            .arg(&key)
            .arg("--tls-ca-cert-file")
            .arg(&ca)
            .args([
                "--tls-auth-clients",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--loglevel", "warning"])
            .stdout(Stdio::null())
            .spawn()
            .context("starting redis-server with TLS")?,
        port,
    };
    sluice.wait_until_serving()?;
    redis.wait_until_serving()?;
    wait_tls(&mut sluice_tls, &ca)?;
    wait_tls(&mut redis_tls, &ca)?;
    let hz = clock_ticks();
    let load = &args.load;
    eprintln!(
        "resp tls: machine: {}; rounds={} n={} n_pipelined={} clients={}",
        machine(),
        load.rounds,
        load.requests,
        load.requests_pipelined,
        load.clients
    );
    let ca_text = ca.display().to_string();
    let contenders: [(&str, &Server, bool); 4] = [
        ("sluice", &sluice, false),
        ("sluice-tls", &sluice_tls, true),
        ("redis", &redis, false),
        ("redis-tls", &redis_tls, true),
    ];
    let mut table = Table::default();
    for round in 0..load.rounds {
        for pipeline in [1, load.pipeline] {
            let n = super::requests_at(load, pipeline);
            for i in 0..contenders.len() {
                let (who, server, with_tls) = contenders[(i + round) % contenders.len()];
                for test in &args.tests {
                    let mut what = vec!["-r", "100000"];
                    if with_tls {
                        what.extend(["--tls", "--cacert", ca_text.as_str()]);
                    }
                    what.extend(["-t", test.as_str()]);
                    if let Some(s) = measure(server, n, load.clients, pipeline, &what, hz)? {
                        table.add(who, pipeline, test, &s);
                    }
                }
            }
        }
        eprintln!("round {} done", round + 1);
    }
    println!(
        "| test | pipe | sluice plain rps | sluice TLS rps | TLS/plain | redis plain rps | redis TLS rps | TLS/plain | sluice TLS / redis TLS | µs CPU/req: sluice plain | sluice TLS | redis plain | redis TLS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut ratios: Vec<(u32, Vec<f64>)> = Vec::new();
    for (test, p) in &table.order {
        let sp = table.median_rps("sluice", *p, test);
        let st = table.median_rps("sluice-tls", *p, test);
        let rp = table.median_rps("redis", *p, test);
        let rt = table.median_rps("redis-tls", *p, test);
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        match ratios.iter_mut().find(|(q, _)| q == p) {
            Some((_, v)) => v.push(ratio(st, rt)),
            None => ratios.push((*p, vec![ratio(st, rt)])),
        }
        println!(
            "| {test} | {p} | {sp:.0} | {st:.0} | {:.2} | {rp:.0} | {rt:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            ratio(st, sp),
            ratio(rt, rp),
            ratio(st, rt),
            table.median_cpu("sluice", *p, test),
            table.median_cpu("sluice-tls", *p, test),
            table.median_cpu("redis", *p, test),
            table.median_cpu("redis-tls", *p, test),
        );
    }
    for (p, v) in ratios {
        println!(
            "geometric mean of sluice TLS / redis TLS at -P {p}: {:.2}",
            geometric_mean(&v)
        );
    }
    Ok(())
}
