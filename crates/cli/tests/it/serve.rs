//! `sluice serve` as a process: config file plus overrides, ops endpoints, SIGTERM, bad input.
#![allow(clippy::unwrap_used)]

use crate::serve_support::{Running, http_address};

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A folder for a test's files, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("sluice-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sluice serve` with a clean environment (no DATABASE_URL or SLUICE_* from the caller).
fn serve_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command.arg("serve");
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    command.env("SLUICE_LOG", "warn");
    command
}

/// One HTTP/1.1 request with `Connection: close`: the status line and the body.
fn get(addr: &str, path: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// One HTTP/1.1 request with `Connection: close`: the status line, the head's lines and the
/// body.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (String, Vec<String>, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    write!(stream, "{head}\r\n{body}").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines().map(str::to_owned);
    let status = lines.next().unwrap_or_default();
    (status, lines.collect(), body.to_string())
}

/// The value of header `name` among a head's lines.
fn header<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    lines.iter().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "serve did not exit within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serves_from_a_config_file_with_overrides_and_stops_on_sigterm() {
    let url = sluice_embedded::test_database().url().to_string();
    let scratch = Scratch::new("config");
    // The file's database and listen address are overridden (the file's would fail), and its
    // pool size by a variable.
    let config = scratch.write(
        "sluice.toml",
        "[database]\nurl = \"postgres://nobody@127.0.0.1:1/none\"\n\
         [pool]\nsize = 3\n\
         [http]\nlisten = \"192.0.2.1:80\"\naccess_log = false\n\
         [views]\n\"/one\" = \"one.json\"\n",
    );
    scratch.write(
        "one.json",
        r#"{"sql": {"path": [], "GET": "SELECT 1 AS one, 'a' AS letter"}}"#,
    );
    let child = serve_command()
        .arg("--config")
        .arg(&config)
        .args(["--http", "127.0.0.1:0"])
        .env("SLUICE_DATABASE_URL", &url)
        .env("SLUICE_POOL_SIZE", "4")
        .env("SLUICE_INFLUX_ENABLED", "true")
        .env("SLUICE_HTTP_LISTEN", "192.0.2.2:80")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let addr = http_address(&mut running.0);

    let (status, body) = get(&addr, "/-/ready");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert_eq!(get(&addr, "/-/live").0, "HTTP/1.1 200 OK");
    let (status, metrics) = get(&addr, "/-/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        metrics.contains("sluice_pool_max_connections 4\n"),
        "{metrics}"
    );
    assert_eq!(get(&addr, "/nothing").0, "HTTP/1.1 404 Not Found");
    // The Influx API, enabled by a variable.
    assert_eq!(get(&addr, "/ping").0, "HTTP/1.1 204 No Content");
    // The view from the file, its path relative to the file.
    let (status, body) = get(&addr, "/one");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(body.contains("\"a\""), "{body}");

    let pid = running.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let exit = wait_with_timeout(&mut running.0, Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit} after SIGTERM");
}

#[test]
fn a_bad_config_file_stops_serve_naming_the_file_and_key() {
    let scratch = Scratch::new("bad-config");
    let config = scratch.write("sluice.toml", "[http]\nbody_limit = \"lots\"\n");
    let output = serve_command()
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&config.display().to_string()), "{stderr}");
    assert!(stderr.contains("body_limit"), "{stderr}");
}

#[test]
fn a_bad_view_file_stops_serve_naming_the_file_and_json_path() {
    let scratch = Scratch::new("bad-view");
    let view = scratch.write(
        "films.json",
        r#"{"sql": [{"path": [], "GET": "SELECT 1"}, {"path": [1, "tags"], "GET": "SELECT 2"}]}"#,
    );
    // No database is needed to find out: the views are checked first.
    let output = serve_command()
        .args([
            "-d",
            "postgres://nobody@127.0.0.1:1/none",
            "--http",
            "127.0.0.1:0",
        ])
        .arg("--views")
        .arg(format!("/films={}", view.display()))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&view.display().to_string()), "{stderr}");
    assert!(stderr.contains("$.sql[1].path[1]"), "{stderr}");
}

#[test]
fn replicas_of_the_embedded_postgresql_serve_the_view_gets() {
    let scratch = Scratch::new("replicas");
    let view = scratch.write(
        "who.json",
        r#"{"sql": {"path": [], "return": "object",
            "GET": "SELECT pg_is_in_recovery() AS in_recovery, current_setting('application_name') AS app"}}"#,
    );
    let child = serve_command()
        .arg("--data-dir")
        .arg(scratch.0.join("pgdata"))
        .args(["--replicas", "1", "--http", "127.0.0.1:0"])
        .args(["--database-lsn-cookie", "--rest-schemas", "public,metrics"])
        .arg("--views")
        .arg(format!("/who={}", view.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let addr = http_address(&mut running.0);
    let (status, body) = get(&addr, "/who");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(body.contains("\"in_recovery\":true"), "{body}");
    assert!(body.contains("\"app\":\"sluice-replica-0\""), "{body}");
    let (status, metrics) = get(&addr, "/-/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        metrics.contains("sluice_replica_up{replica=\"0\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("sluice_replica_requests_total{replica=\"0\""),
        "{metrics}"
    );

    // Writes answer with their commit position, here also as a cookie: an Influx write (which
    // makes the table), then a REST write into it; a REST read naming the position sees both.
    let (status, head, body) = request(
        &addr,
        "POST",
        "/write?db=metrics",
        &[],
        "ryw,host=a value=1 1700000000000000000",
    );
    assert_eq!(status, "HTTP/1.1 204 No Content", "{body}");
    let influx = header(&head, "sluice-lsn").expect("Sluice-Lsn on an Influx write");
    assert!(
        sluice_pg::Lsn::parse(influx.as_bytes()).is_some(),
        "{influx}"
    );
    assert!(
        header(&head, "set-cookie").is_some_and(|c| c.starts_with("sluice-lsn=")),
        "{head:?}"
    );
    // The REST API learns of the new table by the DDL's NOTIFY (or its next miss).
    let started = Instant::now();
    let (status, head, body) = loop {
        let answer = request(
            &addr,
            "POST",
            "/ryw",
            &["content-type: application/json", "content-profile: metrics"],
            r#"{"time": "2023-11-14T22:13:21Z", "host": "b", "value": 2,
                "sluice_series": "00000000-0000-0000-0000-000000000001"}"#,
        );
        if !answer.0.contains("404") || started.elapsed() > Duration::from_secs(15) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, "HTTP/1.1 201 Created", "{body}");
    let rest = header(&head, "sluice-lsn").expect("Sluice-Lsn on a REST write");
    let cookie = header(&head, "set-cookie").expect("the cookie").to_owned();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    assert_eq!(cookie, format!("sluice-lsn={rest}"));
    let (status, _, body) = request(
        &addr,
        "GET",
        "/ryw?select=host,value&order=host",
        &[&format!("cookie: {cookie}"), "accept-profile: metrics"],
        "",
    );
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([{"host": "a", "value": 1}, {"host": "b", "value": 2}])
    );

    let pid = running.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let exit = wait_with_timeout(&mut running.0, Duration::from_secs(60));
    assert!(exit.success(), "serve exited with {exit} after SIGTERM");
}

#[test]
fn a_primary_given_as_a_replica_and_replicas_with_a_url_are_refused() {
    let url = sluice_embedded::test_database().url().to_string();
    let output = serve_command()
        .args(["--http", "127.0.0.1:0", "-d", &url, "--replica-url", &url])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not a replica"), "{stderr}");
    assert!(stderr.contains("pg_is_in_recovery() is false"), "{stderr}");

    let output = serve_command()
        .args(["--http", "127.0.0.1:0", "-d", &url, "--replicas", "1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--replica-url"), "{stderr}");
}

#[test]
fn a_database_url_that_does_not_parse_is_refused_without_its_password() {
    const SECRET: &str = "Url-Secret-3e1";
    let urls = [
        format!("postgres://app:{SECRET}@127.0.0.1:1/app?sslmode=bogus"),
        format!("host=127.0.0.1 port=x user=app password={SECRET}"),
    ];
    for url in &urls {
        for resp in [
            &[][..],
            &["--resp", "127.0.0.1:0", "--resp-store", "postgres"][..],
        ] {
            let output = serve_command()
                .args(["--http", "127.0.0.1:0", "-d", url])
                .args(resp)
                .output()
                .unwrap();
            assert!(!output.status.success());
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("database URL"), "{url} {resp:?}: {stderr}");
            assert!(
                stderr.contains("sslmode") || stderr.contains("\"port\""),
                "{url} {resp:?}: says what is wrong: {stderr}"
            );
            assert!(
                !stderr.contains(SECRET),
                "{url} {resp:?}: the password on stderr: {stderr}"
            );
        }
    }
}
