//! `ZkMigrationIntegrationTest.testMigrateAcls`, `testStartZkBrokerWithAuthorizer`,
//! `testDualWriteScram`, `testDualWriteQuotaAndScram` and
//! `testIncrementalAlterConfigsPreMigration`: what the migration copies besides topics —
//! ACLs (`ZkAclMigrationClient.iterateAcls` → `AccessControlEntryRecord`), SCRAM credentials
//! and client quotas (`ZkConfigMigrationClient.iterateClientQuotas` →
//! `UserScramCredentialRecord`, `ClientQuotaRecord`), broker configs set while the brokers ran
//! on ZooKeeper (`iterateBrokerConfigs` → `ConfigRecord` of resource type BROKER) — written in
//! the migration transaction and read by every node's loader (`AclsDelta`, `ScramDelta`,
//! `ClientQuotasDelta`, `ConfigurationsDelta`).

use super::{MIGRATED_AT, MV_3_6, Migration, ORDERS_0_ZK, ORDERS_1_ZK, cluster, replica};
use super::{zk_partitions, zk_rest};
use crate::kafka_imgaudit_cases::{all_lines, dump, of_kind, segment_of};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::SEC;
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER};
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::metadata::encode;

/// A compact string (length + 1 as an unsigned varint, below 128 here, then the bytes).
fn compact(out: &mut Vec<u8>, s: &[u8]) {
    out.push(s.len() as u8 + 1);
    out.extend_from_slice(s);
}

/// `AccessControlEntryRecord` v0: `User:alice` may READ the topic `orders` (LITERAL, ALLOW).
fn acl() -> Vec<u8> {
    let mut v = vec![1, 18, 0];
    v.extend_from_slice(&topic_id_for("acl alice read orders"));
    v.push(2); // ResourceType TOPIC
    compact(&mut v, b"orders");
    v.push(3); // PatternType LITERAL
    compact(&mut v, b"User:alice");
    compact(&mut v, b"*");
    v.extend([3, 3]); // Operation READ, PermissionType ALLOW
    v.push(0);
    v
}

/// `UserScramCredentialRecord` v0: `alice`'s SCRAM-SHA-256 credential, 4096 iterations.
fn scram() -> Vec<u8> {
    let mut v = vec![1, 11, 0];
    compact(&mut v, b"alice");
    v.push(1); // SCRAM_SHA_256
    for b in [[7u8; 16].as_slice(), &[8; 32], &[9; 32]] {
        compact(&mut v, b);
    }
    v.extend(4096i32.to_be_bytes());
    v.push(0);
    v
}

/// `ClientQuotaRecord` v0: `producer_byte_rate` 1048576 for user `alice`.
fn quota() -> Vec<u8> {
    let mut v = vec![1, 14, 0];
    v.push(2); // one entity
    compact(&mut v, b"user");
    compact(&mut v, b"alice");
    v.push(0);
    compact(&mut v, b"producer_byte_rate");
    v.extend(1_048_576f64.to_be_bytes());
    v.push(0); // Remove false
    v.push(0);
    v
}

/// The migration with the ACL, the credential and the quota in a batch of their own
/// (`truncated`: the quota record cut short by 9 bytes), a broker config of broker 1.
fn life(truncated: bool) -> Migration {
    let mut mig = Migration::bootstrap(MV_3_6);
    mig.m.at(MIGRATED_AT + 20 * SEC);
    let mut rest = zk_rest();
    rest.push(MetaRecord::Config {
        resource_type: RESOURCE_BROKER,
        resource_name: "1".into(),
        name: "log.cleaner.threads".into(),
        value: Some("2".into()),
    });
    mig.m.batch(&[MetaRecord::BeginTransaction {
        name: Some("ZK Migration".into()),
    }]);
    mig.m.batch(&zk_partitions());
    let mut q = quota();
    if truncated {
        q.truncate(q.len() - 9);
    }
    mig.m.raw(vec![acl(), scram(), q]);
    mig.m.raw(rest.iter().map(encode).collect());
    mig.m.batch(&[
        MetaRecord::ZkMigrationState { state: 1 },
        MetaRecord::EndTransaction,
    ]);
    mig.finalize(T0 + 400 * SEC);
    mig
}

/// The copied ACL, credential, quota and broker config decode as the loader reads them and
/// change nothing klogscan judges: nothing at warning or above. Near miss: the quota record
/// cut short, which `MetadataRecordSerde.read` cannot read (every node's loader fails on
/// it): `metadata_record_undecodable`.
#[test]
fn acls_credentials_quotas_and_broker_configs_migrated() {
    for truncated in [false, true] {
        let data = |_| {
            vec![
                replica("orders", 0, &ORDERS_0_ZK, &[]),
                replica("orders", 1, &ORDERS_1_ZK, &[]),
            ]
        };
        let b = cluster(&life(truncated), true, data, |_, _| {});
        let v = b.check();
        if truncated {
            let n = of_kind(&v, Kind::MetadataRecordUndecodable);
            assert!(n.iter().any(|f| !f.is_empty()), "{}", all_lines(&v));
            continue;
        }
        let text = dump(&segment_of(&b, 1, 0));
        for t in [
            "ACCESS_CONTROL_ENTRY_RECORD",
            "USER_SCRAM_CREDENTIAL_RECORD",
            "CLIENT_QUOTA_RECORD",
        ] {
            assert_eq!(text.matches(t).count(), 1, "{t}: {text}");
        }
        assert!(text.contains(r#""principal":"User:alice""#), "{text}");
        v.assert_quiet();
    }
}
