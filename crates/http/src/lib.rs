//! The HTTP gateway: the server loop, the mount interface other HTTP gates plug into, and views.

#![warn(missing_docs)]
pub mod body;
pub mod budget;
pub mod jwt;
pub mod lsn;
pub mod mount;
pub mod ops;
pub mod server;
pub mod stream;
#[cfg(feature = "test-support")]
pub mod testkit;
pub mod view;

pub use body::{BodyError, BodyReader, Slow, read_body};
pub use budget::MemoryBudget;
pub use mount::{Mount, MountFuture, Request, RequestContext, Response, ResponseBody, empty, full};
pub use server::tls::{ALPN, Tls, TlsError};
pub use server::{Router, ServerOptions, run};
