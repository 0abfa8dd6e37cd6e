//! The same records in a metadata log a real broker wrote (Kafka 4.x, one combined node:
//! `ArthurArutunyan04__Backend_labs`, read in place): what `FeatureControlManager`,
//! `ClusterControlManager` and `ConfigurationControlManager` replay from it, and what
//! klogscan reads. Its first batch finalizes `metadata.version` 25, `group.version` 1 and
//! `transaction.version` 2 (offsets 2–4); every start registers broker 1 anew, fenced, with
//! a new incarnation and the record's offset as its broker epoch
//! (`ClusterControlManager.registerBroker`: the epoch is the write offset); topics
//! `oms_order_created` and `oms_order_status_changed` are created with `cleanup.policy=delete`.

use super::*;
use crate::common::{kraft::history, real_data};
use klogscan::cluster::leadership::replay::BrokerChange;

#[test]
fn a_real_kraft_log_features_registrations_and_policies() {
    let Some(root) = real_data() else { return };
    let dir = root.join("broker/ArthurArutunyan04__Backend_labs/kafka-data");
    let h = history(&dir);
    assert!(h.log.unknown.is_empty(), "{:?}", h.log.unknown);
    assert_eq!(h.history.metadata_versions.first(), Some(&(2, 25)));
    assert_eq!(h.history.metadata_version_at(h.log.end_offset), Some(25));
    // The other features are in the log (decoded), not in the history.
    let tv: Vec<(i64, i16)> = (h.log.entries.iter())
        .filter_map(|e| match &e.record {
            MetaRecord::FeatureLevel {
                name,
                feature_level,
            } if name == "transaction.version" => Some((e.offset, *feature_level)),
            _ => None,
        })
        .collect();
    assert_eq!(tv.first(), Some(&(4, 2)));
    // Each registration: broker 1, fenced, broker epoch = the record's offset.
    let regs: Vec<_> = (h.history.brokers.iter())
        .filter_map(|b| match b.change {
            BrokerChange::Registered { fenced, epoch } => Some((b.offset, b.broker, fenced, epoch)),
            _ => None,
        })
        .collect();
    assert!(regs.len() >= 5, "{regs:?}");
    assert!(
        regs.iter().all(|&(o, b, f, e)| b == 1 && f && e == o),
        "{regs:?}"
    );
    assert!(regs.iter().any(|r| r.0 == 7) && regs.iter().any(|r| r.0 == 4334));
    // Their policies: `delete` from the metadata log, known not compacted.
    let r = scan(&[dir]);
    for t in ["oms_order_created", "oms_order_status_changed"] {
        let p = r.partitions.iter().find(|p| p.topic == t).unwrap();
        assert_eq!(
            (p.compacted, p.compacted_from.as_deref()),
            (
                Some(false),
                Some("cleanup.policy=delete (KRaft metadata log)")
            ),
            "{t}"
        );
    }
}
