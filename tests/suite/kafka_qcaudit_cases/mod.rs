//! The KRaft metadata logs `QuorumControllerTest` (apache/kafka trunk of 2024-10,
//! metadata/src/test/java/org/apache/kafka/controller/) leaves, for the methods no earlier
//! klogscan test cited: what the quorum controller writes when it activates (bootstrap
//! records, aborts of open transactions), registers, fences, unfences and unregisters
//! brokers, shuts one down uncleanly under ELR, stores configs, allocates producer ids,
//! splits a large result over batches, and the snapshot it saves; and the logs and
//! snapshots it refuses to load.
//!
//! Kafka's load path, read before any verdict: the controller replays every committed
//! record, an open transaction's too, under a fatal fault handler
//! (`QuorumController.replay`, `OffsetControlManager.replay`), and activates over what it
//! replayed (`ActivationRecordsGenerator`, `CompleteActivationEvent`: a throw there is fatal
//! too); a broker's metadata loader replays each record into the image's deltas and
//! publishes nothing of an open transaction (`MetadataBatchLoader`).
//!
//! Each case writes the brokers' log dirs and the controller's metadata log dir (the
//! writers of `kafka_quiet_cluster_cases::kraft`), runs `scan`, `verify` and the merge of
//! the nodes' bundles, replays the history, and asserts what Kafka's nodes do with the
//! bytes, with a near miss that flips the answer. Where klogscan disagreed the case says so
//! (fixed).
#![cfg(feature = "testkit")]

mod activation;
mod brokers;
mod snapshots;

use crate::kafka_imgaudit_cases::{all_lines, brokers_with, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::{
    CONTROLLER, MetaLog, broker_change, change, partition, register, topic,
};
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict};
use klogscan::finding::Kind;

/// The tests' topic.
pub(crate) const FOO: &str = "foo";

/// Brokers `ids`' log dirs, each with its copy of `m` (no data partitions), and the
/// controller's metadata log dir with its own.
pub(crate) fn nodes(m: &MetaLog, ids: &[i32]) -> Brokers {
    let mut b = brokers_with(m, ids, |_| Vec::new());
    let c = b.controller(CONTROLLER);
    m.write(&c);
    b
}

/// Register `ids` (fenced, each at the offset of its record: `ClusterControlManager.
/// registerBroker`), then unfence them all in one write (their first heartbeats,
/// `BrokerHeartbeatManager`); their broker epochs.
pub(crate) fn register_and_unfence(m: &mut MetaLog, ids: &[i32]) -> Vec<i64> {
    let epochs: Vec<i64> = (ids.iter())
        .map(|&id| {
            let e = m.p.next_offset();
            m.batch(&[register(id, e, id as u8, true)]);
            e
        })
        .collect();
    let unfence: Vec<_> = (ids.iter().zip(&epochs))
        .map(|(&id, &e)| broker_change(id, e, -1, 0))
        .collect();
    m.batch(&unfence);
    epochs
}

/// After [`register_and_unfence`] of brokers 1 and 2 (`epochs`): `foo-0` created on [1, 2]
/// led by 1; 2 fenced (out of the ISR), then 1 (no leader, the last ISR member kept:
/// `PartitionChangeBuilder` without ELR); 2 unfenced and elected uncleanly
/// (`unclean.leader.election.enable`: ISR [2], RECOVERING).
pub(crate) fn foo_unclean(m: &mut MetaLog, epochs: &[i64]) {
    m.batch(&[topic(FOO), partition(FOO, 0, &[1, 2], &[1, 2], (1, 0, 0))]);
    m.batch(&[
        change(FOO, 0, |c| c.isr = Some(vec![1])),
        broker_change(2, epochs[1], 1, 0),
    ]);
    m.batch(&[
        change(FOO, 0, |c| c.leader = -1),
        broker_change(1, epochs[0], 1, 0),
    ]);
    m.batch(&[
        broker_change(2, epochs[1], -1, 0),
        change(FOO, 0, |c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
    ]);
}

/// The evidence of the one `unclean_leader_election` of scan, verify and the merge alike.
pub(crate) fn unclean_of(v: &Verdict) -> serde_json::Value {
    let found = of_kind(v, Kind::UncleanLeaderElection);
    for f in &found {
        assert_eq!(f.len(), 1, "{}", all_lines(v));
    }
    found[0][0].evidence.clone()
}
