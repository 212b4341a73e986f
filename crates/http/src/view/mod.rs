//! Views: REST endpoints declared in Fostgres-style JSON files (see VIEWS.md).

pub mod accept;
pub mod error;
pub mod json;
pub mod load;
pub mod model;
pub mod mount;
pub mod order;
pub mod path;
pub mod precondition;
pub mod read;
pub mod write;

pub use load::{Problem, ViewError, load_file, load_slice};
pub use mount::ViewMount;
