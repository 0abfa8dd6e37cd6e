//! Kafka's KRaft controller-manager unit tests for the records klogscan reads from
//! `__cluster_metadata-0` besides partitions: `ConfigurationControlManagerTest`
//! (`ConfigRecord`, and the `cleanup.policy` a topic runs under), `FeatureControlManagerTest`
//! (`FeatureLevelRecord`), `ProducerIdControlManagerTest` (`ProducerIdsRecord`),
//! `ClusterControlManagerTest` (broker registration records), and the same records held by
//! a `.checkpoint` snapshot with deltas after it (`MetadataLoaderTest`, `SnapshotsTest`).
//! Kafka sources: metadata/src/test/java/org/apache/kafka/controller/ and
//! metadata/src/main/java/org/apache/kafka/{controller,image}/ of the apache/kafka mirror
//! (trunk 2024-10) and the newer fork (2025-10).
//!
//! Each case is rebuilt as a log dir (cluster `c1`) holding a metadata log written with the
//! testkit's record writers and, where compaction matters, a data partition `events-0`
//! whose producer skips sequences: its `sequence_gap` is no finding on a compacted topic,
//! an error on a topic known not compacted, a warning when the policy is unknown.
//!
//! A test marked `#[ignore = "divergence: …"]` holds Kafka's answer where klogscan gives
//! another.
#![cfg(feature = "testkit")]

mod cluster;
mod config;
mod features;
mod producer_ids;
mod real;

use klogscan::finding::{Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER, RESOURCE_TOPIC, TopicId};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

pub(crate) use crate::common::kraft::T0;

/// The data topic.
pub(crate) const EVENTS: &str = "events";

/// `events`' first incarnation (the id the testkit's `partition.metadata` names).
pub(crate) fn events_id() -> TopicId {
    topic_id_for(EVENTS)
}

/// A second incarnation of `events`, created after the first was deleted.
pub(crate) fn events_id2() -> TopicId {
    topic_id_for("events, again")
}

pub(crate) fn topic(name: &str, id: TopicId) -> MetaRecord {
    MetaRecord::Topic {
        name: name.into(),
        topic_id: id,
    }
}

pub(crate) fn remove(id: TopicId) -> MetaRecord {
    MetaRecord::RemoveTopic { topic_id: id }
}

/// A `ConfigRecord` of topic `name`.
pub(crate) fn topic_config(name: &str, key: &str, value: Option<&str>) -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: name.into(),
        name: key.into(),
        value: value.map(str::to_string),
    }
}

/// A `ConfigRecord` of broker `resource` (empty: the cluster-wide default).
pub(crate) fn broker_config(resource: &str, key: &str, value: Option<&str>) -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_BROKER,
        resource_name: resource.into(),
        name: key.into(),
        value: value.map(str::to_string),
    }
}

/// `cleanup.policy` of `events`.
pub(crate) fn policy(value: Option<&str>) -> MetaRecord {
    topic_config(EVENTS, "cleanup.policy", value)
}

pub(crate) fn feature(name: &str, level: i16) -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: name.into(),
        feature_level: level,
    }
}

/// `events-0`: producer 7 writes sequences 0..1, then 5..6 at the next offsets (a
/// `sequence_gap`, which only compaction explains); no batch shows a cleaner trace.
pub(crate) fn gap_partition() -> PartitionBuilder {
    let mut p = PartitionBuilder::new(EVENTS, 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.append(
        Batch::new(Producer::idempotent(7, 0))
            .sequence(5)
            .records(2),
    );
    p
}

/// A metadata log of `batches` (one metadata batch each, one ms apart).
pub(crate) fn meta_log(batches: &[Vec<MetaRecord>]) -> MetadataLogBuilder {
    let mut m = MetadataLogBuilder::new(T0);
    for b in batches {
        m.batch(b);
        m.advance(1);
    }
    m
}

/// Log dir `<root>/<name>` of broker `broker` (cluster `c1`): `data` (if any) and `meta`.
pub(crate) fn log_dir(
    root: &Path,
    name: &str,
    broker: i32,
    data: Option<PartitionBuilder>,
    meta: &MetadataLogBuilder,
) -> PathBuf {
    let ld = root.join(name);
    let mut b = LogDirBuilder::new(broker).cluster_id("c1");
    if let Some(p) = data {
        b = b.partition(p);
    }
    b.write(&ld).unwrap();
    meta.write(&ld).unwrap();
    ld
}

/// Rewrites `events-0/partition.metadata` under `ld` to name topic id `id`.
pub(crate) fn set_events_id(ld: &Path, id: TopicId) {
    std::fs::write(
        ld.join("events-0").join("partition.metadata"),
        format!("version: 0\ntopic_id: {}\n", uuid_text(&id)),
    )
    .unwrap();
}

pub(crate) fn scan(paths: &[PathBuf]) -> ScanReport {
    klogscan::pipeline::scan(paths, &ScanOptions::default())
}

/// What the scan concluded of `events-0`: `(compacted, compacted_from, sequence_gap
/// severities)`.
pub(crate) fn events_verdict(r: &ScanReport) -> (Option<bool>, Option<String>, Vec<Severity>) {
    let p = r
        .partitions
        .iter()
        .find(|p| p.topic == EVENTS)
        .expect("events-0 scanned");
    let gaps = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::SequenceGap && f.topic == EVENTS)
        .map(|f| f.severity)
        .collect();
    (p.compacted, p.compacted_from.clone(), gaps)
}

/// [`events_verdict`] of a log dir holding `events-0` (with the gap) and a metadata log of
/// `batches`.
pub(crate) fn verdict_of(
    batches: &[Vec<MetaRecord>],
) -> (Option<bool>, Option<String>, Vec<Severity>) {
    let d = tempfile::tempdir().unwrap();
    let ld = log_dir(d.path(), "b1", 1, Some(gap_partition()), &meta_log(batches));
    events_verdict(&scan(&[ld]))
}

/// [`verdict_of`] with `events-0`'s `partition.metadata` naming incarnation `id`.
pub(crate) fn verdict_in(
    batches: &[Vec<MetaRecord>],
    id: TopicId,
) -> (Option<bool>, Option<String>, Vec<Severity>) {
    let d = tempfile::tempdir().unwrap();
    let ld = log_dir(d.path(), "b1", 1, Some(gap_partition()), &meta_log(batches));
    set_events_id(&ld, id);
    events_verdict(&scan(&[ld]))
}

/// The verdict of a topic the metadata log says is compacted.
pub(crate) fn compacted() -> (Option<bool>, Option<String>, Vec<Severity>) {
    (
        Some(true),
        Some("cleanup.policy with compact (KRaft metadata log)".into()),
        vec![],
    )
}

/// The verdict of a topic the metadata log says is `delete` alone.
pub(crate) fn not_compacted() -> (Option<bool>, Option<String>, Vec<Severity>) {
    (
        Some(false),
        Some("cleanup.policy=delete (KRaft metadata log)".into()),
        vec![Severity::Error],
    )
}

/// The verdict of a topic whose policy the inputs do not say.
pub(crate) fn unknown() -> (Option<bool>, Option<String>, Vec<Severity>) {
    (None, None, vec![Severity::Warning])
}
