//! Request counters and latency histograms per route, kept in atomics, rendered as Prometheus text.

use sluice_pg::pool::PoolStatus;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in microseconds (0.5 ms to 10 s).
const BOUNDS_MICROS: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    2_500_000, 5_000_000, 10_000_000,
];

/// Status codes 100..=599 each have a counter; anything else counts as 599's neighbour "other".
const FIRST_STATUS: u16 = 100;
const STATUSES: usize = 500;

/// The counters of one route. Recording a request is a handful of relaxed atomic adds.
struct RouteMetrics {
    by_status: Box<[AtomicU64]>,
    other_status: AtomicU64,
    /// Requests per latency bucket (not cumulative; rendering sums them).
    buckets: [AtomicU64; BOUNDS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl RouteMetrics {
    fn new() -> RouteMetrics {
        RouteMetrics {
            by_status: (0..STATUSES).map(|_| AtomicU64::new(0)).collect(),
            other_status: AtomicU64::new(0),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_micros: AtomicU64::new(0),
        }
    }
}

/// The server's metrics: one set of counters per mount, one for the ops endpoints, one for
/// requests no mount matched, and the connection gauges.
pub struct Metrics {
    names: Box<[Arc<str>]>,
    routes: Box<[RouteMetrics]>,
    connections_open: Arc<AtomicU64>,
    connections_total: AtomicU64,
    connections_evicted: AtomicU64,
    budget: Option<Arc<crate::budget::MemoryBudget>>,
}

/// Keeps the open-connections gauge up while it lives.
pub struct OpenConnection(Arc<AtomicU64>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// Metrics for the mounts at `prefixes` (index i is the router's mount i).
    pub fn new(prefixes: &[Arc<str>]) -> Metrics {
        let mut names: Vec<Arc<str>> = prefixes
            .iter()
            .map(|p| if p.is_empty() { "/".into() } else { p.clone() })
            .collect();
        names.push("/-".into());
        names.push("unmatched".into());
        Metrics {
            routes: names.iter().map(|_| RouteMetrics::new()).collect(),
            names: names.into(),
            connections_open: Arc::new(AtomicU64::new(0)),
            connections_total: AtomicU64::new(0),
            connections_evicted: AtomicU64::new(0),
            budget: None,
        }
    }

    /// Reports the memory budget's use too.
    pub fn with_budget(mut self, budget: Option<Arc<crate::budget::MemoryBudget>>) -> Metrics {
        self.budget = budget;
        self
    }

    /// Counts a connection closed at the cap to give its slot to a new one.
    pub fn connection_evicted(&self) {
        self.connections_evicted.fetch_add(1, Ordering::Relaxed);
    }

    /// The route index of the ops endpoints.
    pub fn ops_route(&self) -> usize {
        self.names.len().saturating_sub(2)
    }

    /// The route index of requests no mount matched.
    pub fn unmatched_route(&self) -> usize {
        self.names.len().saturating_sub(1)
    }

    /// Counts a new connection; the gauge goes down when the guard is dropped.
    pub fn connection_opened(&self) -> OpenConnection {
        self.connections_total.fetch_add(1, Ordering::Relaxed);
        self.connections_open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(self.connections_open.clone())
    }

    /// Records one answered request.
    pub fn record(&self, route: usize, status: u16, elapsed: Duration) {
        let Some(metrics) = self.routes.get(route) else {
            return;
        };
        let counter = status
            .checked_sub(FIRST_STATUS)
            .and_then(|i| metrics.by_status.get(usize::from(i)))
            .unwrap_or(&metrics.other_status);
        counter.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_MICROS
            .iter()
            .position(|&bound| micros <= bound)
            .unwrap_or(BOUNDS_MICROS.len());
        if let Some(b) = metrics.buckets.get(bucket) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        metrics.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The metrics in Prometheus text format (version 0.0.4), with the pool's gauges if any.
    pub fn render(&self, pool: Option<&PoolStatus>) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str(
            "# HELP sluice_http_requests_total HTTP requests answered, by route (mount prefix) and status.\n\
             # TYPE sluice_http_requests_total counter\n",
        );
        for (name, metrics) in self.names.iter().zip(self.routes.iter()) {
            for (i, counter) in metrics.by_status.iter().enumerate() {
                let count = counter.load(Ordering::Relaxed);
                if count > 0 {
                    let status = usize::from(FIRST_STATUS) + i;
                    let _ = writeln!(
                        out,
                        "sluice_http_requests_total{{route=\"{}\",status=\"{status}\"}} {count}",
                        escape(name)
                    );
                }
            }
            let other = metrics.other_status.load(Ordering::Relaxed);
            if other > 0 {
                let _ = writeln!(
                    out,
                    "sluice_http_requests_total{{route=\"{}\",status=\"other\"}} {other}",
                    escape(name)
                );
            }
        }
        out.push_str(
            "# HELP sluice_http_request_duration_seconds Time from request head to the end of the response body.\n\
             # TYPE sluice_http_request_duration_seconds histogram\n",
        );
        for (name, metrics) in self.names.iter().zip(self.routes.iter()) {
            let name = escape(name);
            let mut cumulative = 0u64;
            for (i, bucket) in metrics.buckets.iter().enumerate() {
                cumulative += bucket.load(Ordering::Relaxed);
                match BOUNDS_MICROS.get(i) {
                    Some(&bound) => {
                        let le = bound as f64 / 1e6;
                        let _ = writeln!(
                            out,
                            "sluice_http_request_duration_seconds_bucket{{route=\"{name}\",le=\"{le}\"}} {cumulative}"
                        );
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "sluice_http_request_duration_seconds_bucket{{route=\"{name}\",le=\"+Inf\"}} {cumulative}"
                        );
                    }
                }
            }
            let sum = metrics.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(
                out,
                "sluice_http_request_duration_seconds_sum{{route=\"{name}\"}} {sum}\n\
                 sluice_http_request_duration_seconds_count{{route=\"{name}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP sluice_http_connections_open HTTP connections being served.\n\
             # TYPE sluice_http_connections_open gauge\n\
             sluice_http_connections_open {}\n\
             # HELP sluice_http_connections_total HTTP connections accepted.\n\
             # TYPE sluice_http_connections_total counter\n\
             sluice_http_connections_total {}\n\
             # HELP sluice_http_connections_evicted_total HTTP connections closed at the connection cap for making no progress.\n\
             # TYPE sluice_http_connections_evicted_total counter\n\
             sluice_http_connections_evicted_total {}",
            self.connections_open.load(Ordering::Relaxed),
            self.connections_total.load(Ordering::Relaxed),
            self.connections_evicted.load(Ordering::Relaxed),
        );
        if let Some(budget) = &self.budget {
            let _ = writeln!(
                out,
                "# HELP sluice_http_inflight_body_bytes Request-body bytes held in memory now (reserved against the budget).\n\
                 # TYPE sluice_http_inflight_body_bytes gauge\n\
                 sluice_http_inflight_body_bytes {}\n\
                 # HELP sluice_http_inflight_body_budget_bytes The budget of request-body bytes in memory (max_inflight_bytes).\n\
                 # TYPE sluice_http_inflight_body_budget_bytes gauge\n\
                 sluice_http_inflight_body_budget_bytes {}",
                budget.in_use(),
                budget.bytes(),
            );
        }
        if let Some(pool) = pool {
            render_pool(&mut out, pool);
        }
        out
    }
}

fn render_pool(out: &mut String, pool: &PoolStatus) {
    let gauges: [(&str, &str, usize); 5] = [
        (
            "sluice_pool_max_connections",
            "The most connections the pool opens.",
            pool.max_size,
        ),
        (
            "sluice_pool_connections",
            "Connections open or being opened.",
            pool.size,
        ),
        (
            "sluice_pool_connections_idle",
            "Connections waiting in the pool.",
            pool.idle,
        ),
        (
            "sluice_pool_connections_busy",
            "Connections out of the pool.",
            pool.busy,
        ),
        (
            "sluice_pool_waiting",
            "Callers waiting for a connection.",
            pool.waiting,
        ),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
        );
    }
    let counters: [(&str, &str, u64); 5] = [
        (
            "sluice_pool_connections_created_total",
            "Connections opened.",
            pool.created,
        ),
        (
            "sluice_pool_connections_closed_total",
            "Connections closed.",
            pool.closed,
        ),
        (
            "sluice_pool_acquire_timeouts_total",
            "Acquires that timed out.",
            pool.timeouts,
        ),
        (
            "sluice_pool_unavailable_total",
            "Acquires that failed because the database could not be reached.",
            pool.unavailable,
        ),
        (
            "sluice_pool_overloaded_total",
            "Acquires refused at once because the most callers were already waiting.",
            pool.overloaded,
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
}

/// Each read replica's requests, requests in flight, measured lag and state.
pub fn render_replicas(out: &mut String, replicas: &sluice_pg::pool::ReadPools) {
    use sluice_pg::pool::Replica;
    let label = |replica: &Replica| {
        format!(
            "replica=\"{}\",host=\"{}\"",
            replica.index(),
            escape(replica.host())
        )
    };
    /// A family's name, type, help and value for one replica.
    type Family = (
        &'static str,
        &'static str,
        &'static str,
        fn(&Replica) -> String,
    );
    let families: [Family; 4] = [
        (
            "sluice_replica_requests_total",
            "counter",
            "Reads sent to the replica.",
            |r| r.served().to_string(),
        ),
        (
            "sluice_replica_requests_in_flight",
            "gauge",
            "Reads on the replica now.",
            |r| r.in_flight().to_string(),
        ),
        (
            "sluice_replica_lag_seconds",
            "gauge",
            "Replay lag at the last check (age of the oldest primary WAL position not replayed).",
            |r| (r.lag().as_secs_f64()).to_string(),
        ),
        (
            "sluice_replica_up",
            "gauge",
            "1 while the replica serves reads, 0 while it is out.",
            |r| u8::from(r.state() == sluice_pg::pool::ReplicaState::Healthy).to_string(),
        ),
    ];
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for replica in replicas.replicas() {
            let _ = writeln!(out, "{name}{{{}}} {}", label(replica), value(replica));
        }
    }
    let _ = writeln!(
        out,
        "# HELP sluice_replica_state The replica's state at the last check (healthy, unreachable, not_in_recovery, lagging).\n\
         # TYPE sluice_replica_state gauge"
    );
    for replica in replicas.replicas() {
        let _ = writeln!(
            out,
            "sluice_replica_state{{{},state=\"{}\"}} 1",
            label(replica),
            replica.state().as_str()
        );
    }
    let _ = writeln!(
        out,
        "# HELP sluice_read_your_writes_total Reads that named a commit position (Sluice-Lsn), by \
         where they went: a replica that had replayed it, one that replayed it while the read \
         waited, the primary (none did within the wait), the primary after a replica's guard \
         found it behind.\n# TYPE sluice_read_your_writes_total counter"
    );
    for (outcome, count) in replicas.lsn_outcomes() {
        let _ = writeln!(
            out,
            "sluice_read_your_writes_total{{route=\"{}\"}} {count}",
            outcome.as_str()
        );
    }
}

/// A label value escaped as the text format asks (backslash, quote, newline).
fn escape(value: &str) -> std::borrow::Cow<'_, str> {
    if value.contains(['\\', '"', '\n']) {
        value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
            .into()
    } else {
        value.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_route_status_and_bucket() {
        let metrics = Metrics::new(&["/films".into(), "".into()]);
        metrics.record(0, 200, Duration::from_micros(700));
        metrics.record(0, 200, Duration::from_secs(20));
        metrics.record(1, 404, Duration::from_micros(10));
        metrics.record(metrics.unmatched_route(), 42, Duration::ZERO);
        let text = metrics.render(None);
        assert!(text.contains("sluice_http_requests_total{route=\"/films\",status=\"200\"} 2\n"));
        assert!(text.contains("sluice_http_requests_total{route=\"/\",status=\"404\"} 1\n"));
        assert!(
            text.contains("sluice_http_requests_total{route=\"unmatched\",status=\"other\"} 1\n")
        );
        assert!(text.contains(
            "sluice_http_request_duration_seconds_bucket{route=\"/films\",le=\"0.0005\"} 0\n"
        ));
        assert!(text.contains(
            "sluice_http_request_duration_seconds_bucket{route=\"/films\",le=\"0.001\"} 1\n"
        ));
        assert!(text.contains(
            "sluice_http_request_duration_seconds_bucket{route=\"/films\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains("sluice_http_request_duration_seconds_count{route=\"/films\"} 2\n"));
    }

    #[test]
    fn escapes_label_values() {
        assert_eq!(escape("a\"b\\c\n"), "a\\\"b\\\\c\\n");
        assert_eq!(escape("/films"), "/films");
    }
}
