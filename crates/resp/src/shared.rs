//! State shared by all connections: the store, the pub/sub hub, parameters, the client registry.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::Config;
use crate::engine::Store;
use crate::hub::Hub;
use crate::observe::Observe;
use crate::params::Params;
use crate::pause::Pause;
use crate::script::{Scripting, StartError};
use crate::session::ClientInfo;

/// Server-wide counters (INFO stats).
#[derive(Debug, Default)]
pub struct Stats {
    pub commands: AtomicU64,
    pub connections: AtomicU64,
    pub expired_active: AtomicU64,
}

/// Everything connections share.
#[derive(Debug)]
pub struct Shared {
    pub store: Arc<Mutex<Store>>,
    /// The persistence sink's handle, when the store is kept in one.
    pub durability: Option<Arc<crate::durable::Durability>>,
    /// Name of the sink (INFO persistence), `memory` without one.
    pub sink: &'static str,
    /// Set on a read-only follower: writes are refused (READONLY).
    pub replica: Option<Arc<crate::replica::Replica>>,
    pub hub: Mutex<Hub>,
    pub params: RwLock<Params>,
    pub clients: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    pub next_client_id: AtomicU64,
    pub started: Instant,
    pub stats: Stats,
    /// proto-max-bulk-len, read by each connection's parser.
    pub bulk_max: AtomicI64,
    /// maxmemory in bytes (0: no limit), read before each command.
    pub maxmemory: AtomicU64,
    pub port: u16,
    /// Number of databases (fixed at start).
    pub databases: usize,
    /// Lua interpreters, the script cache and function libraries.
    pub scripting: Scripting,
    /// Command and error counters, the slow log.
    pub observe: Observe,
    /// CLIENT PAUSE.
    pub pause: Pause,
    /// The active expiry cycle runs (DEBUG SET-ACTIVE-EXPIRE turns it off).
    pub active_expire: AtomicBool,
    /// Users, the ACL log and the ACL file.
    pub acl: crate::acl::Acl,
    /// min-replicas-to-write asks for replicas Sluice never has: writes are refused
    /// (NOREPLICAS), as Redis refuses them without enough good replicas.
    pub no_good_replicas: AtomicBool,
    /// SHUTDOWN asked the gate to stop (its listener loop waits on this).
    pub shutdown: tokio::sync::Notify,
}

impl Shared {
    pub fn new(config: &Config, port: u16) -> Result<Self, StartError> {
        let mut params = Params::new(config.databases, port, config.password.as_deref());
        if let Some(persistence) = &config.persistence {
            params.start_value("appendonly", "yes");
            params.start_value("appendfsync", persistence.durability.policy().name());
        }
        Ok(Self {
            store: match &config.persistence {
                Some(p) => p.store.clone(),
                None => Arc::new(Mutex::new(Store::new(config.databases))),
            },
            durability: config.persistence.as_ref().map(|p| p.durability.clone()),
            sink: config.persistence.as_ref().map_or("memory", |p| p.sink),
            replica: config.persistence.as_ref().and_then(|p| p.replica.clone()),
            hub: Mutex::new(Hub::default()),
            params: RwLock::new(params),
            clients: Mutex::new(BTreeMap::new()),
            next_client_id: AtomicU64::new(1),
            started: Instant::now(),
            stats: Stats::default(),
            bulk_max: AtomicI64::new(crate::frame::BULK_MAX_DEFAULT),
            maxmemory: AtomicU64::new(0),
            port,
            databases: match &config.persistence {
                Some(p) => p.store.lock().db_count(),
                None => config.databases.max(1),
            },
            scripting: {
                let scripting = Scripting::new()?;
                if let Some(p) = &config.persistence {
                    scripting.load_libraries(&p.functions)?;
                }
                scripting
            },
            observe: Observe::default(),
            pause: Pause::default(),
            active_expire: AtomicBool::new(true),
            acl: crate::acl::Acl::new(config.password.as_deref(), config.aclfile.clone()),
            no_good_replicas: AtomicBool::new(false),
            shutdown: tokio::sync::Notify::new(),
        })
    }

    /// Takes min-replicas-to-write and min-replicas-max-lag after CONFIG SET.
    pub fn refresh_replica_check(&self, params: &Params) {
        let positive = |name: &str| {
            params
                .get(name)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|n| n > 0)
        };
        let refuse = positive("min-replicas-to-write") && positive("min-replicas-max-lag");
        self.no_good_replicas
            .store(refuse, std::sync::atomic::Ordering::Relaxed);
    }

    /// Milliseconds since start.
    pub fn uptime_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}
