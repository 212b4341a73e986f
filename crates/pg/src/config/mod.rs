//! Connection settings: libpq-style conninfo strings and URLs, `PG*` variables, `~/.pgpass`.
