//! The same row-body scenarios as `write_rows`, every body written through COPY and set-based
//! passes (threshold 0): both paths must give the same answers and tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::write_support;

use write_support::scenarios;

fn through_copy() {
    sluice_http::view::write::set_copy_threshold(0);
}

#[tokio::test]
async fn set_replace_put() {
    through_copy();
    scenarios::set_replace_put().await;
}

#[tokio::test]
async fn patch_upserts() {
    through_copy();
    scenarios::patch_upserts().await;
}

#[tokio::test]
async fn errors_commit_nothing() {
    through_copy();
    scenarios::errors_commit_nothing().await;
}

#[tokio::test]
async fn method_arrays() {
    through_copy();
    scenarios::method_arrays().await;
}
