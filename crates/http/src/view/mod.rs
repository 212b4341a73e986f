//! Views: REST endpoints declared in Fostgres-style JSON files (see VIEWS.md).

pub mod model;
