//! The schema cache: what the exposed schemas hold, loaded from the catalog in a handful of
//! queries, kept as an immutable snapshot and swapped whole on reload.

mod computed;
pub mod handle;
pub mod media;
pub mod model;
mod quick;
mod settings;
mod through_views;
mod views;
pub use quick::{load, load_searching};

pub use handle::{LoadScope, SchemaHandle, install_ddl_trigger};
pub use model::*;
