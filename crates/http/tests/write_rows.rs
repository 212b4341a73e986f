//! Writes of row bodies on the pipelined path (bodies under the COPY threshold).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod write_support;

use write_support::scenarios;

#[tokio::test]
async fn set_replace_put() {
    scenarios::set_replace_put().await;
}

#[tokio::test]
async fn patch_upserts() {
    scenarios::patch_upserts().await;
}

#[tokio::test]
async fn errors_commit_nothing() {
    scenarios::errors_commit_nothing().await;
}

#[tokio::test]
async fn method_arrays() {
    scenarios::method_arrays().await;
}
