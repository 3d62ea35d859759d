//! The key registry.

use bundle::SecretKey;
use store::{StoreError, Tier};

use crate::harness::on_each_backend;

#[tokio::test]
async fn keys_are_added_listed_and_revoked() {
    on_each_backend(|store| async move {
        let (a, b) = (SecretKey::generate().public_key(), SecretKey::generate().public_key());
        let ka = store.add_key(&a, "RExBench maintainers", Tier::Maintainer).await.unwrap();
        assert_eq!(ka.keyid, a.keyid().to_hex());
        assert_eq!(ka.tier, Tier::Maintainer);
        store.add_key(&b, "Team B", Tier::Submitter).await.unwrap();
        assert!(matches!(store.add_key(&b, "again", Tier::Submitter).await, Err(StoreError::KeyExists(_))));
        assert_eq!(store.keys().await.unwrap().len(), 2);
        assert_eq!(store.trusted_keys().await.unwrap().len(), 2);

        let revoked = store.revoke_key(&ka.keyid).await.unwrap();
        let at = revoked.revoked_at.clone().expect("revoked");
        assert_eq!(
            store.revoke_key(&ka.keyid).await.unwrap().revoked_at,
            Some(at),
            "the first revocation stands"
        );
        let trusted = store.trusted_keys().await.unwrap();
        assert_eq!(trusted.len(), 1);
        assert_eq!(trusted[0].1.owner, "Team B");
        assert!(matches!(store.revoke_key(&"0".repeat(64)).await, Err(StoreError::UnknownKey(_))));
    })
    .await;
}

#[tokio::test]
async fn migrating_twice_changes_nothing() {
    on_each_backend(|store| async move {
        store.add_key(&SecretKey::generate().public_key(), "x", Tier::Submitter).await.unwrap();
        store.migrate().await.unwrap();
        assert_eq!(store.keys().await.unwrap().len(), 1);
        store.ping().await.unwrap();
    })
    .await;
}
