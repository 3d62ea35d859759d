//! `runner submit`, the real client, against the real server on a real socket.

use std::fs;

use bundle::PublicKey;
use store::Tier;
use store::testing::for_each_backend;

use crate::harness::{state, vectors};

#[tokio::test]
async fn runner_submit_against_a_server_on_127_0_0_1() {
    for_each_backend(|backend, blobs| async move {
        let state = state(&backend, &blobs).await;
        let key = PublicKey::from_pem(&fs::read_to_string(vectors().join("test-key/key.pub.pem")).unwrap())
            .unwrap();
        state.store.add_key(&key, "conformance", Tier::Submitter).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(axum::serve(listener, server::build_app(state)).into_future());

        let submit = |name: &'static str, url: String| {
            tokio::task::spawn_blocking(move || runner::submit::submit(&vectors().join(name), &url).unwrap())
        };
        match submit("valid-basic.tar.gz", url.clone()).await.unwrap() {
            runner::submit::Verdict::Accepted { status, body } => {
                assert_eq!(status, 201);
                assert_eq!(
                    body["bundle_id"],
                    "5de26650613dd4f4697f5f4d5a1bef3c5439aca84a6608675ae5b8a9fd0e565d"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            submit("valid-basic.tar.gz", url.clone()).await.unwrap(),
            runner::submit::Verdict::Accepted { status: 200, .. }
        ));
        match submit("bad-duplicate-run.tar.gz", url.clone()).await.unwrap() {
            runner::submit::Verdict::Refused { status, code, message } => {
                assert_eq!((status, code.as_str()), (422, "duplicate_run"));
                assert!(message.contains("runs[12]"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        server.abort();
    })
    .await;
}
