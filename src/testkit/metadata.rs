//! KRaft metadata records, written the way Kafka's generated serializers write them
//! (`AbstractApiMessageSerde` frame + flexible message body), from the typed values the
//! reader returns ([`MetaRecord`]); and [`MetadataLogBuilder`], a `__cluster_metadata-0`
//! directory with its snapshot.
//!
//! Like [`super::encode`], the writing shares no code with the reader: field orders, tags
//! and defaults were transcribed from Kafka's `metadata/src/main/resources/common/metadata`
//! schemas.

use super::encode::write_unsigned_varint as uv;
use super::scenario::{Batch, PartitionBuilder, Producer, Rec};
use crate::read::format::metadata::{MetaRecord, PartitionChange, PartitionRecord};
use std::path::{Path, PathBuf};

fn i8_(o: &mut Vec<u8>, v: i8) {
    o.push(v as u8);
}
fn i16_(o: &mut Vec<u8>, v: i16) {
    o.extend_from_slice(&v.to_be_bytes());
}
fn i32_(o: &mut Vec<u8>, v: i32) {
    o.extend_from_slice(&v.to_be_bytes());
}
fn i64_(o: &mut Vec<u8>, v: i64) {
    o.extend_from_slice(&v.to_be_bytes());
}
fn string(o: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => uv(o, 0),
        Some(s) => {
            uv(o, s.len() as u64 + 1);
            o.extend_from_slice(s.as_bytes());
        }
    }
}
fn ints(o: &mut Vec<u8>, v: Option<&[i32]>) {
    match v {
        None => uv(o, 0),
        Some(v) => {
            uv(o, v.len() as u64 + 1);
            for x in v {
                i32_(o, *x);
            }
        }
    }
}
fn uuids(o: &mut Vec<u8>, v: Option<&[[u8; 16]]>) {
    match v {
        None => uv(o, 0),
        Some(v) => {
            uv(o, v.len() as u64 + 1);
            for x in v {
                o.extend_from_slice(x);
            }
        }
    }
}

/// A tagged-field section: `(tag, bytes)` in ascending tag order.
fn tagged(o: &mut Vec<u8>, fields: Vec<(u64, Vec<u8>)>) {
    uv(o, fields.len() as u64);
    for (tag, data) in fields {
        uv(o, tag);
        uv(o, data.len() as u64);
        o.extend_from_slice(&data);
    }
}

fn with(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// The version [`encode`] writes a record at when not told: the lowest that holds its fields.
pub fn natural_version(r: &MetaRecord) -> i16 {
    match r {
        MetaRecord::Partition(p) => {
            if p.eligible_leader_replicas.is_some() || p.last_known_elr.is_some() {
                2
            } else if !p.directories.is_empty() {
                1
            } else {
                0
            }
        }
        MetaRecord::PartitionChange(c) => {
            if c.eligible_leader_replicas.is_some() || c.last_known_elr.is_some() {
                2
            } else if c.directories.is_some() {
                1
            } else {
                0
            }
        }
        MetaRecord::RegisterBroker(b) => {
            if !b.log_dirs.is_empty() {
                3
            } else {
                1
            }
        }
        MetaRecord::BrokerRegistrationChange(c) => {
            if !c.log_dirs.is_empty() {
                2
            } else {
                1
            }
        }
        _ => 0,
    }
}

/// A record value at its [`natural_version`].
pub fn encode(r: &MetaRecord) -> Vec<u8> {
    encode_at(r, natural_version(r))
}

fn partition(o: &mut Vec<u8>, p: &PartitionRecord, v: i16) {
    i32_(o, p.partition_id);
    o.extend_from_slice(&p.topic_id);
    ints(o, Some(&p.replicas));
    ints(o, Some(&p.isr));
    ints(o, Some(&p.removing_replicas));
    ints(o, Some(&p.adding_replicas));
    i32_(o, p.leader);
    i32_(o, p.leader_epoch);
    i32_(o, p.partition_epoch);
    if v >= 1 {
        uuids(o, Some(&p.directories));
    }
    let mut t = Vec::new();
    if p.leader_recovery_state != 0 {
        t.push((0, vec![p.leader_recovery_state as u8]));
    }
    if v >= 2 {
        if let Some(e) = &p.eligible_leader_replicas {
            t.push((1, with(|b| ints(b, Some(e)))));
        }
        if let Some(e) = &p.last_known_elr {
            t.push((2, with(|b| ints(b, Some(e)))));
        }
    }
    tagged(o, t);
}

fn change(o: &mut Vec<u8>, c: &PartitionChange, v: i16) {
    i32_(o, c.partition_id);
    o.extend_from_slice(&c.topic_id);
    let mut t = Vec::new();
    let arr = |x: &Option<Vec<i32>>| x.as_ref().map(|x| with(|b| ints(b, Some(x))));
    if let Some(b) = arr(&c.isr) {
        t.push((0, b));
    }
    if c.leader != -2 {
        t.push((1, with(|b| i32_(b, c.leader))));
    }
    for (tag, x) in [
        (2, &c.replicas),
        (3, &c.removing_replicas),
        (4, &c.adding_replicas),
    ] {
        if let Some(b) = arr(x) {
            t.push((tag, b));
        }
    }
    if c.leader_recovery_state != -1 {
        t.push((5, vec![c.leader_recovery_state as u8]));
    }
    if v >= 2 {
        for (tag, x) in [(6, &c.eligible_leader_replicas), (7, &c.last_known_elr)] {
            if let Some(b) = arr(x) {
                t.push((tag, b));
            }
        }
    }
    if v >= 1
        && let Some(d) = &c.directories
    {
        t.push((8, with(|b| uuids(b, Some(d)))));
    }
    tagged(o, t);
}

/// A record value at `version` (fields the version lacks are not written). An
/// [`MetaRecord::Unknown`] is its stored bytes; [`MetaRecord::Other`] a frame with an
/// empty body.
pub fn encode_at(r: &MetaRecord, version: i16) -> Vec<u8> {
    if let MetaRecord::Unknown { bytes, .. } = r {
        return bytes.clone();
    }
    let mut o = vec![1u8];
    uv(&mut o, r.api_key() as u64);
    uv(&mut o, version as u64);
    let none = Vec::new;
    match r {
        MetaRecord::RegisterBroker(b) => {
            i32_(&mut o, b.broker_id);
            if version >= 2 {
                o.push(b.is_migrating_zk_broker as u8);
            }
            o.extend_from_slice(&b.incarnation_id);
            i64_(&mut o, b.broker_epoch);
            uv(&mut o, 1); // no endpoints
            uv(&mut o, 1); // no features
            string(&mut o, b.rack.as_deref());
            o.push(b.fenced as u8);
            if version >= 1 {
                o.push(b.in_controlled_shutdown as u8);
            }
            let mut t = none();
            if version >= 3 && !b.log_dirs.is_empty() {
                t.push((0, with(|x| uuids(x, Some(&b.log_dirs)))));
            }
            tagged(&mut o, t);
        }
        MetaRecord::UnregisterBroker {
            broker_id,
            broker_epoch,
        } => {
            i32_(&mut o, *broker_id);
            i64_(&mut o, *broker_epoch);
            tagged(&mut o, none());
        }
        MetaRecord::Topic { name, topic_id } => {
            string(&mut o, Some(name));
            o.extend_from_slice(topic_id);
            tagged(&mut o, none());
        }
        MetaRecord::Partition(p) => partition(&mut o, p, version),
        MetaRecord::Config {
            resource_type,
            resource_name,
            name,
            value,
        } => {
            i8_(&mut o, *resource_type);
            string(&mut o, Some(resource_name));
            string(&mut o, Some(name));
            string(&mut o, value.as_deref());
            tagged(&mut o, none());
        }
        MetaRecord::PartitionChange(c) => change(&mut o, c, version),
        MetaRecord::FenceBroker { id, epoch } | MetaRecord::UnfenceBroker { id, epoch } => {
            i32_(&mut o, *id);
            i64_(&mut o, *epoch);
            tagged(&mut o, none());
        }
        MetaRecord::RemoveTopic { topic_id } => {
            o.extend_from_slice(topic_id);
            tagged(&mut o, none());
        }
        MetaRecord::FeatureLevel {
            name,
            feature_level,
        } => {
            string(&mut o, Some(name));
            i16_(&mut o, *feature_level);
            tagged(&mut o, none());
        }
        MetaRecord::ProducerIds {
            broker_id,
            broker_epoch,
            next_producer_id,
        } => {
            i32_(&mut o, *broker_id);
            i64_(&mut o, *broker_epoch);
            i64_(&mut o, *next_producer_id);
            tagged(&mut o, none());
        }
        MetaRecord::BrokerRegistrationChange(c) => {
            i32_(&mut o, c.broker_id);
            i64_(&mut o, c.broker_epoch);
            let mut t = none();
            if c.fenced != 0 {
                t.push((0, vec![c.fenced as u8]));
            }
            if version >= 1 && c.in_controlled_shutdown != 0 {
                t.push((1, vec![c.in_controlled_shutdown as u8]));
            }
            if version >= 2 && !c.log_dirs.is_empty() {
                t.push((2, with(|x| uuids(x, Some(&c.log_dirs)))));
            }
            tagged(&mut o, t);
        }
        MetaRecord::NoOp | MetaRecord::EndTransaction | MetaRecord::Other { .. } => {
            tagged(&mut o, none())
        }
        MetaRecord::ZkMigrationState { state } => {
            i8_(&mut o, *state);
            tagged(&mut o, none());
        }
        MetaRecord::BeginTransaction { name: s } | MetaRecord::AbortTransaction { reason: s } => {
            let t = s
                .as_deref()
                .map(|s| vec![(0, with(|x| string(x, Some(s))))])
                .unwrap_or_default();
            tagged(&mut o, t);
        }
        MetaRecord::RegisterController {
            controller_id,
            incarnation_id,
        } => {
            i32_(&mut o, *controller_id);
            o.extend_from_slice(incarnation_id);
            o.push(0); // ZkMigrationReady
            uv(&mut o, 1); // no endpoints
            uv(&mut o, 1); // no features
            tagged(&mut o, none());
        }
        MetaRecord::ClearElr { topic_name } => {
            string(&mut o, Some(topic_name));
            tagged(&mut o, none());
        }
        MetaRecord::Unknown { .. } => unreachable!("returned above"),
    }
    o
}

/// A `SnapshotHeaderRecord` value (version 0): `lastContainedLogTimestamp`, no tagged field.
pub fn snapshot_header_value(last_contained_log_timestamp: i64) -> Vec<u8> {
    let mut o = Vec::new();
    i16_(&mut o, 0);
    i64_(&mut o, last_contained_log_timestamp);
    uv(&mut o, 0);
    o
}

/// A `SnapshotFooterRecord` value (version 0).
pub fn snapshot_footer_value() -> Vec<u8> {
    vec![0, 0, 0]
}

/// A `__cluster_metadata-0` partition: batches of metadata records at a KRaft epoch, and
/// optionally a snapshot whose records come first.
pub struct MetadataLogBuilder {
    log: PartitionBuilder,
    t0: i64,
    snapshot: Option<(i64, i32, Vec<MetaRecord>)>,
    raft_epoch: i32,
}

impl MetadataLogBuilder {
    /// An empty log whose first batch is at `start_offset`, its clock at `t0` ms.
    pub fn new(t0: i64) -> Self {
        MetadataLogBuilder {
            log: PartitionBuilder::new("__cluster_metadata", 0)
                .start_time(t0)
                .leader_epoch(1),
            t0,
            snapshot: None,
            raft_epoch: 1,
        }
    }

    /// The log starts at `offset` (the records before it are in the snapshot).
    pub fn start_offset(mut self, offset: i64) -> Self {
        self.log = self.log.start_offset(offset);
        self
    }

    /// A snapshot `<end_offset>-<epoch>.checkpoint` holding `records`.
    pub fn snapshot(mut self, end_offset: i64, epoch: i32, records: Vec<MetaRecord>) -> Self {
        self.snapshot = Some((end_offset, epoch, records));
        self
    }

    /// The KRaft epoch of the next batches.
    pub fn raft_epoch(&mut self, e: i32) -> &mut Self {
        self.raft_epoch = e;
        self
    }

    /// Advance the clock.
    pub fn advance(&mut self, ms: i64) -> &mut Self {
        self.log.advance_time(ms);
        self
    }

    /// The offset the next record gets.
    pub fn next_offset(&self) -> i64 {
        self.log.next_offset()
    }

    /// One batch of `records` (each encoded at its [`natural_version`]); returns its base offset.
    pub fn batch(&mut self, records: &[MetaRecord]) -> i64 {
        let values: Vec<Vec<u8>> = records.iter().map(encode).collect();
        self.raw_batch(values)
    }

    /// One batch of record values as given, framed as the raft writer frames one
    /// (`BatchBuilder.writeRecord`: every record at timestamp delta 0, which
    /// `RecordsIterator.readRecord` requires at every start).
    pub fn raw_batch(&mut self, values: Vec<Vec<u8>>) -> i64 {
        let base = self.log.next_offset();
        let t = self.log.now();
        let mut b = Batch::new(Producer::PLAIN)
            .leader_epoch(self.raft_epoch)
            .at(t);
        for v in values {
            b = b.record(Rec::value(v).at(t));
        }
        self.log.append(b);
        base
    }

    /// Write `<dir>/__cluster_metadata-0`; returns its path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        self.log.write(dir)?;
        let part = dir.join("__cluster_metadata-0");
        if let Some((end, epoch, records)) = &self.snapshot {
            // The snapshot's batches, framed as a segment, written beside and renamed.
            let tmp = dir.join(format!(".snapshot-{end}-{epoch}"));
            // Framed as `RecordsSnapshotWriter` frames a snapshot: a control batch whose
            // first record is the SnapshotHeader, the records, a SnapshotFooter batch
            // (`RecordsSnapshotReader` refuses a snapshot whose first batch is not that
            // header).
            let mut s = PartitionBuilder::new("__cluster_metadata", 0)
                .leader_epoch(*epoch)
                .start_time(self.t0);
            s.control_raw(Producer::PLAIN, 3, Some(snapshot_header_value(self.t0)));
            // One append time for the batch (timestamp delta 0 in every record, which
            // `RecordsIterator.readRecord` requires).
            let mut b = Batch::new(Producer::PLAIN).leader_epoch(*epoch).at(self.t0);
            for r in records {
                b = b.record(Rec::value(encode(r)).at(self.t0));
            }
            s.append(b);
            s.control_raw(Producer::PLAIN, 4, Some(snapshot_footer_value()));
            s.write(&tmp)?;
            let from = tmp
                .join("__cluster_metadata-0")
                .join("00000000000000000000.log");
            std::fs::rename(from, part.join(format!("{end:020}-{epoch:010}.checkpoint")))?;
            std::fs::remove_dir_all(&tmp)?;
        }
        Ok(part)
    }
}
