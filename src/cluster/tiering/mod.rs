//! Tiered storage (KIP-405): the `__remote_log_metadata` topic replayed per user partition
//! ([`replay`]), each replica's view of its log compared with it ([`checks`]: gaps between
//! the remote and the local log, copies and deletes left unfinished, segments of an
//! abandoned leader lineage, a log start offset that contradicts the remote segments),
//! and, with `--remote-storage`, the remote segments themselves ([`storage`]).
//!
//! The metadata topic is recognised by its name, never by record keys (its api keys 0–3
//! are also KRaft record types). Of the copies of one metadata partition, the live one
//! with the highest log end offset is replayed.

pub mod aiven;
pub mod checks;
pub mod corrupt;
mod cover;
pub mod epochs;
pub mod expiry;
pub mod history;
pub mod hosting;
pub mod lineage;
#[cfg(feature = "remote-object-store-core")]
pub mod objects;
pub mod prepare;
pub mod replay;
pub mod snapshot;
pub mod storage;
pub mod txn_extra;
pub mod txn_index;

use crate::cluster::epoch_file;
use crate::cluster::report::ScanReport;
use crate::discover::layout::{DirKind, Inventory, LEADER_EPOCH_CHECKPOINT, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{
    LogItem, REMOTE_LOG_METADATA_TOPIC, SegmentNames, SegmentRead, stream_records,
};
use crate::read::format::checkpoint::{EpochEntry, TextFileKind, parse_offset_checkpoint};
use crate::read::segment::{FileClass, MmapMode, load};
use checks::ReplicaView;
use lineage::Lineage;
use replay::{Replay, UserPartition};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

pub use prepare::RemoteStorage;

/// One run's replay of the remote log metadata, as one broker's
/// `TopicBasedRemoteLogMetadataManager` holds one `RemoteLogMetadataCache` per user
/// partition (`RemotePartitionMetadataStore`): made once, read by everything that needs
/// the remote segments — the object-store mirror (`prepare`), the remote history a
/// scan replays ([`history::remote_history`]), what a merge cannot replay
/// ([`history::unreplayed`]) and the tiering check ([`check`]).
#[derive(Debug, Clone, Default)]
pub struct MetadataReplay {
    /// Every user partition's remote segments and deletion state.
    pub replay: Replay,
    /// Per metadata partition number, the report index of the copy replayed (`None`: not
    /// in the report — replayed before the scan, or from a `remote_log_snapshot`).
    pub chosen: BTreeMap<i32, Option<usize>>,
    /// Which brokers of the inputs each record the cache throws on stops.
    pub hosting: hosting::Hosting,
}

#[cfg(feature = "testkit")]
thread_local! {
    static REPLAYS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times [`MetadataReplay::of`] ran on this thread (what a test counts to prove
/// a run replays the remote log metadata once).
#[cfg(feature = "testkit")]
pub fn replays_on_this_thread() -> usize {
    REPLAYS.with(std::cell::Cell::get)
}

impl MetadataReplay {
    /// The replay of every `__remote_log_metadata` partition of `inv` (the records the
    /// walks of `report` kept, else read from the segments), or, with none, of the 3.6–3.7
    /// `remote_log_snapshot` files.
    pub fn of(report: &ScanReport, inv: &Inventory, opts: &ScanOptions) -> Self {
        Self::with_copies(report, inv, &[], opts)
    }

    /// [`Self::of`] with `copies`, other `__remote_log_metadata` partition directories
    /// beside the inventory's (another broker's, read from their segments:
    /// `collect --remote-log-metadata`). The inventory's copy of a metadata partition comes
    /// first: one of `copies` is replayed where the inventory has none.
    pub fn with_copies(
        report: &ScanReport,
        inv: &Inventory,
        copies: &[PartitionDir],
        opts: &ScanOptions,
    ) -> Self {
        #[cfg(feature = "testkit")]
        REPLAYS.with(|c| c.set(c.get() + 1));
        let (replay, chosen) = replay_inventory(report, inv, copies, opts);
        let hosting = hosting::Hosting::of(inv, &replay);
        MetadataReplay {
            replay,
            chosen,
            hosting,
        }
    }

    /// User partition `up`'s log as the broker of the replica in `p` holds it (`None`: no
    /// record of it before its consumer stopped), and how sure that reading is.
    pub fn seen_by(
        &self,
        p: &PartitionDir,
        up: &UserPartition,
    ) -> (Option<&replay::PartitionLog>, hosting::Reading) {
        let metadata_partition = self
            .replay
            .partitions
            .get(up)
            .and_then(|l| l.last_event)
            .map(|at| at.metadata_partition);
        let reading = self.hosting.reading(p, metadata_partition);
        (self.replay.log_at(up, reading.cut), reading)
    }
}

/// The replay of every `__remote_log_metadata` partition of `inv`, and, per metadata
/// partition number, the report index of the copy replayed (when the scan reported it).
fn replay_inventory(
    report: &ScanReport,
    inv: &Inventory,
    copies: &[PartitionDir],
    opts: &ScanOptions,
) -> (Replay, BTreeMap<i32, Option<usize>>) {
    let index = report_index(report);
    let mut best: BTreeMap<i32, (i64, Option<usize>, &PartitionDir)> = BTreeMap::new();
    for p in inv.partitions.iter().chain(copies) {
        let Some(tp) = &p.tp else { continue };
        if !is_metadata_copy(p) {
            continue;
        }
        let i = index.get(p.path.to_string_lossy().as_ref()).copied();
        let leo = i
            .and_then(|i| report.partitions[i].log_end_offset)
            .unwrap_or(-1);
        if best.get(&tp.partition).is_none_or(|b| leo > b.0) {
            best.insert(tp.partition, (leo, i, p));
        }
    }
    if best.is_empty() {
        // No metadata partition: the 3.6–3.7 per-partition snapshots, when present.
        return snapshot::replay_snapshots(inv);
    }
    let mut replay = Replay::default();
    let mut chosen = BTreeMap::new();
    for (n, (_, i, p)) in best {
        chosen.insert(n, i);
        if metadata_cut(report, i, p, opts) {
            replay.cut.insert(n);
        }
        // The names written out once per copy, not once per record.
        let mut apply = |item: &LogItem, names: &[String]| match item {
            LogItem::Record(r) => {
                let segment = names.get(r.segment as usize).map_or("", String::as_str);
                replay.apply(n, r.offset, r.value.as_deref(), segment, r.position)
            }
            LogItem::Undecodable { message, .. } => replay.unread.push((n, message.clone())),
            LogItem::Marker { .. } => {}
        };
        let walked = i.and_then(|i| {
            let carried = &report.partitions[i].carried;
            Some((
                carried.cluster_inputs.remote_log.as_ref()?,
                &carried.segment_names,
            ))
        });
        match walked {
            Some((items, names)) => {
                let names: Vec<String> = names.iter().map(Cow::into_owned).collect();
                items.iter().for_each(|item| apply(item, &names))
            }
            // Not selected by the scan: read here, one batch at a time.
            None => {
                let names = p.log_names();
                let how = SegmentRead::report(opts.max_bytes, opts.max_decompressed);
                let mut each = |item: LogItem| apply(&item, &names);
                // `ReadErrors::Report` reads every segment to its end: never `Err`.
                let _ = stream_records(p, &how, Some(&mut each), &mut |_, _| {});
            }
        }
    }
    (replay, chosen)
}

/// Whether `p` is a copy of a `__remote_log_metadata` partition to replay (a partition
/// directory, not one being deleted or a future replica).
pub fn is_metadata_copy(p: &PartitionDir) -> bool {
    p.tp.as_ref()
        .is_some_and(|tp| tp.topic == REMOTE_LOG_METADATA_TOPIC && p.kind == Some(DirKind::Normal))
}

/// Whether `--max-bytes` leaves part of metadata partition `p` (report index `i`) unread.
fn metadata_cut(
    report: &ScanReport,
    i: Option<usize>,
    p: &PartitionDir,
    opts: &ScanOptions,
) -> bool {
    match i {
        Some(i) => report.partitions[i].partially_read,
        None => opts.max_bytes.is_some_and(|m| {
            p.segments
                .iter()
                .filter_map(|s| std::fs::metadata(s.log.as_deref()?).ok())
                .any(|md| md.len() > m)
        }),
    }
}

fn report_index(report: &ScanReport) -> BTreeMap<&str, usize> {
    report
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| (p.path.as_str(), i))
        .collect()
}

/// A small text file, read bounded; `None` when absent or unreadable.
fn small_file(path: Option<&Path>) -> Option<Vec<u8>> {
    load(path?, FileClass::Checkpoint, MmapMode::Never, None)
        .ok()
        .map(|d| d.to_vec())
}

/// What the `unreadable_file` finding of a replica's `leader-epoch-checkpoint` says was
/// not given.
const UNREAD_LINEAGE: &str = "not applicable: the tiered-storage verdicts resting on this replica's leader-epoch lineage were not given (remote segments outside the lineage, the log start offset against the remote segments, which gaps a stopped metadata consumer caused); gaps no leader epoch serves are still reported";

/// The replica's view of its log: checkpointed log start, local start and end, lineage.
/// `report_segments`: the names of its segments with a `.log` as the walk listed them
/// (what an inventory rebuilt from bundles knows of its segments).
fn replica_view(
    p: &PartitionDir,
    log_end_offset: Option<i64>,
    report_segments: &SegmentNames,
    log_starts: &mut BTreeMap<std::path::PathBuf, Vec<(String, i32, i64)>>,
    inv: &Inventory,
) -> ReplicaView {
    let tp = p.tp.as_ref();
    let log_start_offset = p.log_dir.as_ref().and_then(|d| {
        let entries = log_starts.entry(d.clone()).or_insert_with(|| {
            let ld = inv.log_dirs.iter().find(|l| &l.path == d);
            ld.and_then(|l| {
                let found = l.log_start_offset_checkpoint.as_deref();
                inv.small_file(&l.path, found, "log-start-offset-checkpoint", |f| {
                    small_file(Some(f))
                })
            })
            .and_then(|b| parse_offset_checkpoint(&b, TextFileKind::LogStartOffsetCheckpoint).ok())
            .map(|v| {
                v.into_iter()
                    .map(|e| (e.topic, e.partition, e.offset))
                    .collect()
            })
            .unwrap_or_default()
        });
        let tp = tp?;
        entries
            .iter()
            .rev()
            .find(|e| e.0 == tp.topic && e.1 == tp.partition)
            .map(|e| e.2)
    });
    let (lineage, lineage_unread) = match epoch_file::read(inv, p) {
        // Read as the broker's constructor loads it (tiered storage needs 3.6+, so the
        // 2.7+ constructor, `epoch_file::as_constructed`).
        Ok(entries) => {
            let pairs = |v: &[EpochEntry]| {
                (epoch_file::as_constructed(v).into_iter()).map(|e| (e.epoch, e.start_offset))
            };
            (entries.map(|v| Lineage::new(pairs(&v))), None)
        }
        Err(u) => (None, Some(u)),
    };
    let local_log_start = match &inv.recorded {
        None => p
            .segments
            .iter()
            .find(|s| s.log.is_some())
            .map(|s| s.base_offset),
        Some(_) => report_segments
            .get(0)
            .and_then(|n| crate::discover::layout::parse_segment_file_name(&n))
            .map(|(offset, _)| offset),
    };
    ReplicaView {
        log_start_offset,
        local_log_start,
        log_end_offset,
        lineage,
        lineage_unread,
    }
}

/// Whether directory `p` holds user partition `up` (same name and partition; the same
/// topic id when its `partition.metadata` reads).
fn holds(inv: &Inventory, p: &PartitionDir, up: &UserPartition) -> bool {
    copy_of(inv, p, up) == Some(&DirKind::Normal)
}

/// Which copy of user partition `up` directory `p` is (live, `-delete`, `-future`,
/// `-stray`), when it is one: the same name and partition, and the same topic id when its
/// `partition.metadata` reads.
fn copy_of<'a>(inv: &Inventory, p: &'a PartitionDir, up: &UserPartition) -> Option<&'a DirKind> {
    let tp = p.tp.as_ref()?;
    if tp.topic != up.topic || tp.partition != up.partition {
        return None;
    }
    let kind = p.kind.as_ref()?;
    crate::cluster::replicas::topic_id_in(inv, p)
        .is_none_or(|id| id == up.topic_id)
        .then_some(kind)
}

/// The tiering check of the cluster stage over the run's one replay: every tiered-storage
/// finding added to `report` (on a user partition's replica; on the metadata partition
/// for findings about the topic itself or about a user partition not in the inputs), and
/// each tiered replica's [`crate::partition::results::TieredRanges`] (its remote and local
/// offsets) set.
pub fn check(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) {
    let (extra, ranges) = analyse(report, inv, opts, replayed);
    report.add_partition_findings(extra);
    set_ranges(report, ranges);
}

/// Each tiered partition's ranges (`PartitionReport::tiered`) without the findings: set
/// before the other cluster checks, which read a tiered log's start from them (the
/// consumers' commits: a commit in the remote range is fetchable). [`check`] sets the same
/// again with its findings.
pub fn ranges(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) {
    let (_, ranges) = analyse(report, inv, opts, replayed);
    set_ranges(report, ranges);
}

/// The aborted transactions of the first replica among `replicas` whose replay read the
/// remote history whole (every remote segment it met read), with the offsets it read from
/// remote segments: what the remote transaction indexes are held against
/// ([`txn_index::incomplete`]).
fn remote_aborts<'r>(
    report: &'r ScanReport,
    replicas: &[(usize, &PartitionDir)],
) -> Option<txn_index::RemoteAborts<'r>> {
    replicas.iter().find_map(|&(i, _)| {
        let r = &report.partitions[i];
        let done = r.tiered.as_ref()?.replayed.as_ref()?;
        if done.segments == 0 || !done.unread.is_empty() {
            return None;
        }
        Some(txn_index::RemoteAborts {
            first_offset: done.first_offset?,
            last_offset: done.last_offset?,
            aborted: &r.carried.outcome.aborted,
            txns: &r.carried.outcome.txns,
        })
    })
}

fn set_ranges(
    report: &mut ScanReport,
    ranges: Vec<(usize, crate::partition::results::TieredRanges)>,
) {
    for (i, mut r) in ranges {
        // What the scan replayed of the remote segments stays.
        r.replayed = report.partitions[i].tiered.take().and_then(|t| t.replayed);
        report.partitions[i].tiered = Some(Box::new(r));
    }
}

type Analysis = (
    BTreeMap<usize, Vec<Finding>>,
    Vec<(usize, crate::partition::results::TieredRanges)>,
);

fn undecodable_finding(u: &replay::Undecodable) -> Finding {
    let what = if u.deserializes {
        "deserializes but names no user partition"
    } else {
        "does not deserialize"
    };
    Finding::new(
        Kind::RemoteMetadataUndecodable,
        REMOTE_LOG_METADATA_TOPIC,
        u.at.metadata_partition,
        format!("a __remote_log_metadata record {what}: {}", u.error),
    )
    .offset(u.at.offset)
    .position(u.position)
    .segment(u.segment.clone())
    .broker("TopicBasedRemoteLogMetadataManager's consumer task stops at a record it cannot deserialize, or cannot ask for its user partition: the broker's remote log metadata is frozen from here, copies and reads of every user partition of this metadata partition wait")
    .remediation("find which broker wrote the record (a different RemoteLogMetadataManager or a damaged segment); the metadata consumer resumes only past it")
    .evidence(serde_json::json!({"error": u.error}))
}

fn stopped_finding(
    s: &replay::Stop,
    replay: &replay::Replay,
    hosting: &hosting::Hosting,
) -> Finding {
    let tp = format!("{}-{}", s.partition.topic, s.partition.partition);
    let brokers = hosting.stopped(s.at);
    let earlier = hosting.stopped_earlier(s.at);
    let mut maybe = hosting.maybe_stopped(s.at);
    let whose = stopped_whose(&tp, &brokers, &earlier, &maybe);
    let maybe_count = maybe.len();
    maybe.truncate(hosting::NAMED_IN_EVIDENCE);
    Finding::new(
        Kind::RemoteMetadataConsumerStopped,
        REMOTE_LOG_METADATA_TOPIC,
        s.at.metadata_partition,
        format!(
            "the record at offset {} ({} of {tp}: {}) makes RemoteLogMetadataCache throw IllegalArgumentException on {whose}; their metadata consumer stops there and never applies the {} record(s) after it in this partition, while brokers not hosting {tp} skip the record and go on",
            s.at.offset, s.segment_id, s.why, replay.records_after(s)
        ),
    )
    .offset(s.at.offset)
    .broker("ConsumerTask.processConsumerRecord deserializes every record but hands it to RemotePartitionMetadataStore only on a broker hosting its user partition (shouldProcess); there the cache's IllegalArgumentException is not caught and ConsumerTask.ingestRecords closes the consumer task: that broker applies no later record of this metadata partition, its other metadata partitions stop wherever the task was, segments copied after it are never served by it (remote reads fail), and each restart stops at the same record. A broker not hosting the partition skips the record and goes on")
    .remediation("find which broker wrote the record (a RemoteLogMetadataManager bug, a replayed or hand-written record); a broker hosting the partition goes past it only once the record is gone from its consumed range")
    .evidence(serde_json::json!({
        "segment_id": s.segment_id,
        "why": s.why,
        "records_after": replay.records_after(s),
        "partition": tp,
        "topic_id": crate::read::format::checkpoint::encode_uuid(&s.partition.topic_id),
        "stops_brokers": brokers,
        "stops_broker_ids": hosting.stopped_ids(s.at),
        "may_stop_brokers": maybe,
        "may_stop_broker_count": maybe_count,
        "stopped_earlier_brokers": earlier,
    }))
}

/// Whose consumer the stop stops, as its finding's message says it: `brokers`, the
/// inputs' brokers it stops; `earlier`, those hosting the partition an earlier stop of the
/// metadata partition stopped first; `maybe`, those it may stop.
fn stopped_whose(tp: &str, brokers: &[String], earlier: &[String], maybe: &[String]) -> String {
    let mut of = if brokers.is_empty() && earlier.is_empty() {
        "no input holds a live replica of it: which brokers is not known".to_string()
    } else if brokers.is_empty() {
        "of the inputs: none".to_string()
    } else {
        format!("of the inputs: {}", brokers.join(", "))
    };
    if !earlier.is_empty() {
        of.push_str(&format!(
            ", {} hosting it too having stopped at an earlier record of this partition",
            earlier.join(", ")
        ));
    }
    if !maybe.is_empty() {
        of.push_str(&format!(
            "; perhaps also {}, a node id not being known or a replica of it being deleted",
            hosting::listed(maybe)
        ));
    }
    format!("the brokers hosting {tp} ({of})")
}

/// The ranges and findings of the replica in `p` of user partition `up` (`log`: every
/// record's), held against the log its broker's cache holds ([`MetadataReplay::seen_by`]);
/// `None` when that broker's consumer stopped before any record of the partition and the
/// stop is not known to have cost it a segment.
fn judge(
    replayed: &MetadataReplay,
    up: &UserPartition,
    log: &replay::PartitionLog,
    p: &PartitionDir,
    view: impl FnOnce() -> ReplicaView,
) -> Option<(crate::partition::results::TieredRanges, Vec<Finding>)> {
    let (seen, reading) = replayed.seen_by(p, up);
    // Where the broker certainly stopped: the key of the stop's finding, which its gaps
    // follow from. Not knowing how far the broker applied the records, its gaps would be
    // a guess: none is reported.
    let stop = reading.cut.filter(|_| reading.known).map(|at| {
        let key = crate::finding::identity_key(
            Kind::RemoteMetadataConsumerStopped,
            REMOTE_LOG_METADATA_TOPIC,
            at.metadata_partition,
            Some(at.offset),
            None,
        );
        (key, at)
    });
    // Stopped before any record of the partition: its cache holds no segment of it, so it
    // serves none of the offsets below its local log (`RemoteLogManager.read` answers
    // OFFSET_OUT_OF_RANGE) while the other brokers' caches serve them.
    let empty = replay::PartitionLog::default();
    let shown = match seen {
        Some(seen) => seen,
        None if stop.is_some() && checks::serves_any(log) => &empty,
        None => return None,
    };
    let view = view();
    let mut found = match (&stop, reading.known) {
        (Some((key, at)), _) => checks::stopped_gaps(up, seen, log, &view, (key, *at)),
        (None, true) => checks::gaps(up, shown, &view),
        (None, false) => Vec::new(),
    };
    found.extend(checks::abandoned(up, shown, &view));
    found.extend(checks::log_start_mismatch(up, shown, &view));
    Some((checks::ranges(shown, &view), found))
}

/// Per user partition of the replay, its findings and each replica's ranges.
fn analyse(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
) -> Analysis {
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let mut ranges = Vec::new();
    let MetadataReplay {
        replay,
        chosen,
        hosting,
    } = replayed;
    if chosen.is_empty() {
        return (extra, ranges);
    }
    let index = report_index(report);
    for u in &replay.undecodable {
        if let Some(Some(i)) = chosen.get(&u.at.metadata_partition) {
            extra.entry(*i).or_default().push(undecodable_finding(u));
        }
    }
    for s in replay.all_stops() {
        if let Some(Some(i)) = chosen.get(&s.at.metadata_partition) {
            extra
                .entry(*i)
                .or_default()
                .push(stopped_finding(s, replay, hosting));
        }
    }
    let mut log_starts = BTreeMap::new();
    for (up, log) in &replay.partitions {
        // Events read in part (`--max-bytes`): later ones may finish, delete or add
        // segments, so no finding is made of them (the ranges are still shown).
        let findings = log
            .last_event
            .is_none_or(|at| !replay.cut.contains(&at.metadata_partition));
        let replicas: Vec<(usize, &PartitionDir)> = inv
            .partitions
            .iter()
            .filter(|p| holds(inv, p, up))
            .filter_map(|p| Some((*index.get(p.path.to_string_lossy().as_ref())?, p)))
            .collect();
        let aborts = remote_aborts(report, &replicas);
        let home = replicas.first().map(|r| r.0).or_else(|| {
            log.last_event
                .and_then(|at| chosen.get(&at.metadata_partition).copied().flatten())
        });
        // Every replica's view: what the unfinished copies are held against.
        let mut views: Vec<ReplicaView> = Vec::new();
        for (i, p) in replicas {
            let r = &report.partitions[i];
            let mut unread = None;
            let view = || {
                let segments = &r.carried.segment_names;
                let v = replica_view(p, r.log_end_offset, segments, &mut log_starts, inv);
                unread.clone_from(&v.lineage_unread);
                views.push(v.clone());
                v
            };
            if let Some((range, found)) = judge(replayed, up, log, p, view) {
                ranges.push((i, range));
                if findings {
                    let mine = extra.entry(i).or_default();
                    mine.extend(found);
                    // The lineage its verdicts needed, named once: not when discovery or
                    // another check (the consumers' commit validation) said it already.
                    let said = |u: &epoch_file::Unread| {
                        let named = |f: &Finding| f.names_unreadable_file(&u.path);
                        let mine_named = |f: &Finding| {
                            f.kind == Kind::UnreadableFile
                                && f.segment.as_deref() == Some(LEADER_EPOCH_CHECKPOINT)
                        };
                        u.said || report.findings.iter().any(named) || mine.iter().any(mine_named)
                    };
                    if let Some(u) = unread.filter(|u| !said(u)) {
                        mine.push(epoch_file::finding(r, &u, UNREAD_LINEAGE));
                    }
                }
            }
        }
        let Some(home) = home.filter(|_| findings) else {
            continue;
        };
        let mine = extra.entry(home).or_default();
        mine.extend(checks::unfinished(up, log, &views));
        if let Some(root) = &opts.remote_storage {
            mine.extend(storage::check(root, up, log, opts, aborts.as_ref()));
        }
    }
    (extra, ranges)
}
