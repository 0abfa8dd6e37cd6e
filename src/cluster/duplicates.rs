//! One broker holding the same partition in two of its log dirs:
//! `duplicate_log_directories`.
//!
//! `LogManager.loadLogs` loads every log dir's partition directories and `loadLog` puts
//! each live log in the broker's map of current logs; when one topic-partition is already
//! there it throws `IllegalStateException` ("Duplicate log directories for … are found in
//! both …"), which the broker's startup does not catch: the broker does not start. Kafka's
//! message names the usual cause — a log dir that failed while the broker was replacing
//! the current replica with a `-future` one (an inter-log-dir move) — and the repair:
//! delete one of the two directories.
//!
//! What proves the two directories are one broker's two log dirs, not two captures of one
//! log dir (a copy before and after an incident, which `replicas` treats as one replica
//! seen twice): both log dirs' `meta.properties` name the same cluster and node, and each
//! has a `directory.id` (written since 3.7) of its own — a capture of one log dir carries
//! that log dir's id. Without both ids nothing proves it, and nothing is said.
//!
//! The KRaft metadata log (`__cluster_metadata-0`) is never one: `LogManager.loadLogs`
//! skips its directories (since 2.8), and `KafkaRaftServer.initializeLogDirs` refuses it
//! outside `metadata.log.dir` before any log is loaded (`verify`'s
//! `unexpected_metadata_log_dir`).
//!
//! A KRaft broker (a v1 `meta.properties`) checks each log against its metadata image
//! first (`LogManager.isStrayKraftReplica`): a log without a topic id in its
//! `partition.metadata`, of a topic id the image does not hold, or of a partition the
//! broker no longer hosts is renamed `-stray` and loaded aside, never compared. Two
//! copies of one topic id are both current or both stray: the verdict is the failure,
//! stating that it assumes the broker still hosts the partition. Copies of different (or
//! missing) topic ids are at most one current incarnation: no failure then, and no finding
//! (which one the broker keeps depends on its image). A ZooKeeper-era broker (v0) checks
//! nothing first: any two live copies fail its start.

use std::collections::BTreeMap;

use serde_json::json;

use super::replicas::{ScannedCopy, copy_groups, topic_id_in};
use super::report::ScanReport;
use crate::discover::identity::{Identities, LogDirIdentity};
use crate::discover::layout::{DirKind, Inventory, PartitionDir, is_kraft_metadata};
use crate::finding::{Finding, Kind};
use crate::partition::results::ScanOptions;
use crate::read::format::checkpoint::encode_uuid;

/// The cluster check: a `duplicate_log_directories` finding on the first (report order)
/// of each pair of live directories of one topic-partition in two log dirs of one broker
/// that its load refuses.
pub fn check(
    report: &ScanReport,
    inv: &Inventory,
    _opts: &ScanOptions,
    _histories: &[crate::cluster::leadership::ClusterHistory],
) -> BTreeMap<usize, Vec<Finding>> {
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let groups = copy_groups(report, inv);
    if groups.is_empty() {
        return extra;
    }
    let ids = Identities::load(inv);
    for copies in groups {
        // One finding per topic-partition and broker: the first pair that fails.
        let mut said: Vec<i32> = Vec::new();
        for (n, a) in copies.iter().enumerate() {
            for b in &copies[n + 1..] {
                let Some(d) = duplicate(inv, &ids, *a, *b) else {
                    continue;
                };
                if said.contains(&d.broker) {
                    continue;
                }
                said.push(d.broker);
                extra.entry(a.0).or_default().push(d.finding(report));
            }
        }
    }
    extra
}

/// Two live directories of one topic-partition that one broker's load refuses.
struct Duplicate<'a> {
    broker: i32,
    copies: [(ScannedCopy<'a>, LogDirIdentity); 2],
    /// The copies' topic id (KRaft: the same in both), when known.
    topic_id: Option<[u8; 16]>,
    kraft: bool,
    /// Two `-future` copies (the destinations of inter-log-dir moves): `loadLog` keeps one
    /// future log per topic-partition and throws for a second as for a current one.
    futures: bool,
}

fn duplicate<'a>(
    inv: &Inventory,
    ids: &Identities,
    a: ScannedCopy<'a>,
    b: ScannedCopy<'a>,
) -> Option<Duplicate<'a>> {
    let live = |p: &PartitionDir| matches!(p.kind, Some(DirKind::Normal));
    let future = |p: &PartitionDir| matches!(p.kind, Some(DirKind::Future { .. }));
    // Two future copies may sit in one log dir (each name carries its own unique id), and
    // two live ones whose names `Integer.parseInt` reads as one partition (`orders-5`,
    // `orders-05`, `orders-+5`): one listing holds both at once, no capture of it can.
    let futures = future(a.1) && future(b.1);
    let same_dir = a.1.log_dir.is_some() && a.1.log_dir == b.1.log_dir;
    let lives = live(a.1) && live(b.1);
    if !futures && !lives {
        return None;
    }
    // `LogManager.loadLogs` skips the KRaft metadata log's directories (since 2.8:
    // `KafkaRaftServer.initializeLogDirs` judges them, `unexpected_metadata_log_dir`).
    if a.1
        .tp
        .as_ref()
        .is_some_and(|tp| is_kraft_metadata(&tp.topic))
    {
        return None;
    }
    let (ia, ib) = (
        ids.log_dir(a.1.log_dir.as_deref()),
        ids.log_dir(b.1.log_dir.as_deref()),
    );
    let broker = ia.broker_id?;
    let one_broker =
        ia.cluster_id.is_some() && ia.cluster_id == ib.cluster_id && ib.broker_id == Some(broker);
    let two_log_dirs =
        same_dir || matches!((&ia.directory_id, &ib.directory_id), (Some(x), Some(y)) if x != y);
    if !one_broker || !two_log_dirs {
        return None;
    }
    let kraft = ia.meta_version == Some(1) || ib.meta_version == Some(1);
    let topic_id = match (topic_id_in(inv, a.1), topic_id_in(inv, b.1)) {
        (Some(x), Some(y)) if x == y => Some(x),
        // KRaft: one of them at least is a stray replica, renamed aside.
        _ if kraft => return None,
        _ => None,
    };
    Some(Duplicate {
        broker,
        copies: [(a, ia), (b, ib)],
        topic_id,
        kraft,
        futures,
    })
}

impl Duplicate<'_> {
    fn finding(&self, report: &ScanReport) -> Finding {
        let [(a, ia), (b, ib)] = &self.copies;
        let (pa, pb) = (&report.partitions[a.0], &report.partitions[b.0]);
        let tp = format!("{}-{}", pa.topic, pa.partition);
        let (da, db) = (crate::escape::text(&pa.path), crate::escape::text(&pb.path));
        let why = match (self.kraft, self.topic_id) {
            (true, Some(t)) => format!(
                "both carry topic id {} in partition.metadata, so neither is a stray replica while broker {} hosts the partition (LogManager.isStrayKraftReplica)",
                encode_uuid(&t),
                self.broker
            ),
            _ => {
                "a ZooKeeper-era broker (meta.properties v0) checks no log for strays first".into()
            }
        };
        let copy = |p: &crate::partition::results::PartitionReport, id: &LogDirIdentity| {
            json!({
                "path": p.path,
                "log_dir": p.source.log_dir,
                "directory_id": id.directory_id,
                "log_start_offset": p.log_start_offset,
                "log_end_offset": p.log_end_offset,
                "latest_leader_epoch": p.carried.leader_epochs.last().map(|e| e.0),
            })
        };
        let keep = keeper(pa, pb);
        let held = match (self.futures, pa.source.log_dir == pb.source.log_dir) {
            (true, _) => format!("two -future copies of {tp} ({da} and {db}"),
            // Names `LocalLog.parseTopicPartitionName` reads as one partition.
            (false, true) => format!("two directories of {tp} ({da} and {db}"),
            (false, false) => format!("{tp} in two of its log dirs ({da} and {db}"),
        };
        let thrown = match self.futures {
            true => "Duplicate log directories found: …",
            false => "Duplicate log directories for … are found in both …",
        };
        let (xa, xb) = (
            ia.directory_id.as_deref().unwrap_or("?"),
            ib.directory_id.as_deref().unwrap_or("?"),
        );
        let dirs = match pa.source.log_dir == pb.source.log_dir {
            true => format!("in one log dir, directory id {xa}"),
            false => format!("directory ids {xa} and {xb}"),
        };
        let msg = format!(
            "broker {} holds {held}, {dirs}): its next start fails — LogManager.loadLog throws IllegalStateException (\"{thrown}\"); {why}",
            self.broker,
        );
        let remediation = match (self.futures, keep) {
            (true, _) => format!(
                "with broker {} stopped, move one of the two -future directories out of its log dir (keep it as evidence): each is the destination of a move between log dirs (kafka-reassign-partitions.sh with log dirs), and the broker resumes the move into the one left; the current replica is untouched",
                self.broker
            ),
            (false, keep) => match keep {
                Some(k) => format!(
                    "with broker {} stopped, move one of the two directories out of its log dir (keep it as evidence; do not delete it before the broker runs again): Kafka advises removing the copy in the log dir that failed recently. {} ends at the higher offset or leader epoch of the two, so keeping it keeps more of the partition; then start the broker, which re-fetches the rest from the leader",
                    self.broker,
                    crate::escape::text(k)
                ),
                None => format!(
                    "with broker {} stopped, move one of the two directories out of its log dir (keep it as evidence): Kafka advises removing the copy in the log dir that failed recently; then start the broker, which re-fetches the rest from the leader",
                    self.broker
                ),
            },
        };
        let mut evidence = json!({
            "broker": self.broker,
            "copies": [copy(pa, ia), copy(pb, ib)],
            "topic_id": self.topic_id.as_ref().map(encode_uuid),
            "kraft": self.kraft,
            "assumes": self.kraft.then_some("the broker still hosts the partition: otherwise both copies are renamed -stray and the start goes on"),
        });
        if self.futures {
            evidence["future_copies"] = json!(true);
        }
        Finding::new(Kind::DuplicateLogDirectories, &pa.topic, pa.partition, msg)
            .evidence(evidence)
            .broker("LogManager.loadLogs → loadLog keeps one current log (and one future log) per topic-partition and throws IllegalStateException for a second; the startup does not catch it: the broker does not start, and its partitions stay on the other replicas (offline where it was the only in-sync one)")
            .remediation(remediation)
    }
}

/// The copy that holds more: the higher latest leader epoch, then the higher log end
/// offset (`None` when they tie or are unknown).
fn keeper<'a>(
    a: &'a crate::partition::results::PartitionReport,
    b: &'a crate::partition::results::PartitionReport,
) -> Option<&'a str> {
    let key = |p: &crate::partition::results::PartitionReport| {
        (
            p.carried.leader_epochs.last().map(|e| e.0),
            p.log_end_offset,
        )
    };
    match key(a).cmp(&key(b)) {
        std::cmp::Ordering::Greater => Some(&a.path),
        std::cmp::Ordering::Less => Some(&b.path),
        std::cmp::Ordering::Equal => None,
    }
}
