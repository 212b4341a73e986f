//! `sluice serve` over HTTPS with real clients: the InfluxDB endpoints written by the official
//! `influxdb-client` trusting the test CA (`ssl_ca_cert`), and the REST API read by curl with
//! `--cacert`; a client that does not trust the CA is refused.
#![allow(clippy::unwrap_used)]

use crate::serve_support::{Running, announced_address};

use sluice_embedded::clients;
use std::process::{Command, Stdio};

const V2_TLS_SCRIPT: &str = r#"
import sys
from influxdb_client import InfluxDBClient, Point
from influxdb_client.client.write_api import SYNCHRONOUS
url, bucket, ca = sys.argv[1], sys.argv[2], sys.argv[3]
with InfluxDBClient(url=url, token="any", org="o", ssl_ca_cert=ca, verify_ssl=True) as client:
    assert client.ping(), "ping over HTTPS failed"
    write_api = client.write_api(write_options=SYNCHRONOUS)
    write_api.write(bucket=bucket, record=[
        Point("tls").tag("host", f"h{i}").field("v", i).time(1_700_000_000_000_000_000 + i)
        for i in range(50)])
print("influxdb-client over https ok")
"#;

const UNTRUSTING_SCRIPT: &str = r#"
import sys, traceback
from influxdb_client import InfluxDBClient
from influxdb_client.client.write_api import SYNCHRONOUS
url = sys.argv[1]
with InfluxDBClient(url=url, token="any", org="o", verify_ssl=True, timeout=5000,
                    retries=False) as client:
    try:
        client.write_api(write_options=SYNCHRONOUS).write(bucket="nope", record="m v=1")
    except Exception as error:
        # The client wraps the TLS failure; it is in the chain of causes.
        assert "CERTIFICATE_VERIFY_FAILED" in traceback.format_exc(), traceback.format_exc()
        print("refused: " + type(error).__name__)
    else:
        raise SystemExit("a client that does not trust the CA was served")
"#;

#[test]
fn influx_writes_and_rest_reads_over_https_with_real_clients() {
    let Some(python) = clients::require(clients::python(), "the Python clients venv") else {
        return;
    };
    let url = sluice_embedded::test_database().url().to_string();
    let dir = tempfile::tempdir().unwrap();
    let tls = sluice_embedded::generate_test_tls().unwrap();
    let (ca, cert, key) = (
        dir.path().join("ca.crt"),
        dir.path().join("server.crt"),
        dir.path().join("server.key"),
    );
    std::fs::write(&ca, &tls.ca_cert_pem).unwrap();
    std::fs::write(&cert, &tls.server_cert_pem).unwrap();
    std::fs::write(&key, &tls.server_key_pem).unwrap();

    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    let child = command
        .args(["serve", "-d", &url, "--http", "127.0.0.1:0"])
        .arg("--http-cert")
        .arg(&cert)
        .arg("--http-key")
        .arg(&key)
        .env("SLUICE_LOG", "warn")
        .env("SLUICE_INFLUX_ENABLED", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let addr = announced_address(&mut running.0, "sluice: HTTP on https://");
    let port = addr.rsplit(':').next().unwrap();
    // The certificate names localhost.
    let base = format!("https://localhost:{port}");

    let bucket = sluice_embedded::testkit::unique("influx_tls");
    let output = Command::new(&python)
        .args(["-c", V2_TLS_SCRIPT, &base, &bucket])
        .arg(&ca)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(sluice_embedded::testkit::rows(&format!(
            "SELECT count(*)::text, sum(v)::text FROM \"{bucket}\".tls"
        )));
    assert_eq!(rows, [vec![Some("50".to_owned()), Some("1225".to_owned())]]);

    let output = Command::new(&python)
        .args(["-c", UNTRUSTING_SCRIPT, &base])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    // The REST API on the same listener, read by curl trusting the CA.
    match Command::new("curl")
        .args(["-sS", "--fail", "--cacert"])
        .arg(&ca)
        .arg(format!("{base}/"))
        .output()
    {
        Ok(output) => {
            assert!(
                output.status.success(),
                "curl: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let body = String::from_utf8_lossy(&output.stdout);
            assert!(body.contains("\"swagger\""), "{body}");
        }
        Err(error) if std::env::var_os("CI").is_some() => panic!("curl: {error}"),
        Err(error) => eprintln!("SKIP curl: {error}"),
    }
}
