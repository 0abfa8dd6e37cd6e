//! Review of session 26's changes on main (`8b34258..68ff057`), each held against Kafka's
//! sources (apache/kafka trunk of 2024-10; the 2025-10 mirror where it says so):
//!
//! * [`varint`]: `Cursor::uvarint`'s inline two-byte path (`77a6ef5`) against
//!   `ByteUtils.readUnsignedVarint` — value, bytes taken, and the error's field, position
//!   and kind for every buffer (a property test against a model of Kafka's reader).
//! * [`quorum_state`]: `quorum_state_failure` / `parse_quorum_state` and `verify`'s
//!   `quorum_state_unreadable` (`68ff057`) against `FileQuorumStateStore.readStateFromFile`,
//!   the generated `QuorumStateDataJsonConverter.read` (`QuorumStateData.json` through
//!   `JsonConverterGenerator`, `MessageUtil.jsonNodeToInt`/`jsonNodeToLong`,
//!   `Uuid.fromString`), `ElectionState.fromQuorumStateData` and `QuorumState.initialize`.
//! * [`raft_truncation`]: `replica_divergence` between `__cluster_metadata` copies made info
//!   when the copy behind in epochs truncates it away (`truncation::with_raft_truncation`,
//!   `68ff057`) against `KafkaRaftClient.handleFetchResponse`, `KafkaMetadataLog.truncateTo`
//!   / `createNewSnapshot` and `KafkaMetadataLogTest.testTruncateBelowHighWatermark`.
//! * [`tiered_cover`]: `remote_copy_unfinished` made info when later finished copies hold
//!   its offsets (`tiering::checks::unfinished`, `4c08860`) against
//!   `RemoteLogManager.copyLogSegmentsToRemote`, `RLMExpirationTask.
//!   cleanupExpiredRemoteLogSegments`, `isRemoteSegmentWithinLeaderEpochs` and
//!   `RemoteLogLeaderEpochState.listAllRemoteLogSegments`.
//!
//! A test marked `#[ignore = "divergence: …"]` asserts Kafka's answer where klogscan gives
//! another, and fails when run with `--ignored`; the others pin what was checked and agrees.
#![cfg(feature = "testkit")]

mod quorum_state;
mod raft_truncation;
mod tiered_cover;
mod varint;

use crate::kafka_quiet_cluster_cases::kraft::{
    broker_change, isr, metadata_version, partition, register, topic,
};
use crate::kafka_quiet_kraft_cases::{Step, VOTERS, data};

/// The brokers' registration offsets (their broker epochs).
pub(crate) const BROKER_EPOCHS: [i64; 2] = [2, 3];

/// The first writes of a three-controller quorum (voters 3000–3002) with brokers 1 and 2:
/// 3000 elected at epoch 1 with 3001's vote, the metadata version, the registrations, the
/// brokers unfenced, `orders-0` created; then 3001 elected at epoch 2 and its first ISR
/// change (offsets 0..=9, the shape of `kafka_quiet_kraft_cases::quorum`).
pub(crate) fn before_failover() -> Vec<Step> {
    vec![
        Step::Elect {
            leader: 3000,
            voters: VOTERS.to_vec(),
            granting: vec![3000, 3001],
        },
        data(vec![metadata_version(19)]),
        data(vec![register(1, BROKER_EPOCHS[0], 1, true)]),
        data(vec![register(2, BROKER_EPOCHS[1], 2, true)]),
        data(vec![
            broker_change(1, BROKER_EPOCHS[0], -1, 0),
            broker_change(2, BROKER_EPOCHS[1], -1, 0),
        ]),
        data(vec![
            topic("orders"),
            partition("orders", 0, &[1, 2], &[1, 2], (1, 0, 0)),
        ]),
        crate::kafka_quiet_kraft_cases::elect(3001, &VOTERS),
        data(vec![isr("orders", 0, &[1])]),
    ]
}

/// No data partitions beside the metadata log.
pub(crate) fn no_data(_: i32) -> Vec<klogscan::testkit::PartitionBuilder> {
    Vec::new()
}

/// The tree of a checked cluster (kept alive while its verdict is read).
pub(crate) type Tree = crate::kafka_quiet_cluster_cases::Brokers;
