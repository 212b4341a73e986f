//! sluice-embedded: finds or installs PostgreSQL server binaries and runs a private cluster.
