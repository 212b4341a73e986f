//! One owner per schema: a second store on the same schema is refused and told who holds it.

use crate::common::{pg_config, schema, store_config};
use sluice_resp::durable::AppendFsync;
use sluice_resp_store::{Error, PgStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_is_refused_and_told_who_holds_the_schema() {
    let schema = schema("rs_owner");
    let first = PgStore::open(&pg_config(), store_config(&schema, AppendFsync::EverySec))
        .await
        .expect("the first owner");
    let second = PgStore::open(&pg_config(), store_config(&schema, AppendFsync::EverySec)).await;
    match second {
        Err(Error::Locked { holder, .. }) => {
            assert!(holder.contains("backend pid"), "{holder}");
            assert!(holder.contains("sluice redis store"), "{holder}");
        }
        other => panic!("expected the lock to be refused, got {other:?}"),
    }
    // Another schema is another owner.
    let other = PgStore::open(
        &pg_config(),
        store_config(&format!("{schema}_b"), AppendFsync::No),
    )
    .await
    .expect("another schema");
    other.close().await;
    first.close().await;
    // Once the first let go, the schema can be taken.
    let again = PgStore::open(&pg_config(), store_config(&schema, AppendFsync::EverySec))
        .await
        .expect("the schema once free");
    again.close().await;
}
