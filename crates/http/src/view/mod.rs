//! Views: REST endpoints declared in Fostgres-style JSON files (see VIEWS.md).

pub mod error;
pub mod json;
pub mod model;
pub mod write;
