//! The consumer view: every committed offset of the groups in the inputs'
//! `__consumer_offsets`, held against the data partition it names (same cluster only).

use super::lineage::{CheckpointLineage, ClusterLineage, Lineage, LineageSource, MetadataEpochs};
use crate::cluster::leadership::ClusterHistory;
use crate::cluster::report::ScanReport;
use crate::discover::identity::{ClusterKey, Identities, same_cluster, transaction_partition_for};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{Kind, Source};
use crate::partition::groups::{self, GroupType};
use crate::partition::results::{PartitionReport, ScanOptions};
use crate::partition::walked::{GroupCommit, GroupOffsets};
use crate::read::format::groups::CONSUMER_OFFSETS_TOPIC;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// `offsets.topic.num.partitions`' default.
pub const DEFAULT_OFFSETS_PARTITIONS: i32 = 50;

/// Which rows `klogscan consumers` keeps.
#[derive(Debug, Clone, Default)]
pub struct ConsumersOptions {
    pub group: Option<String>,
    pub topic: Option<String>,
    pub partition: Option<i32>,
}

impl ConsumersOptions {
    fn keeps(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.group.as_deref().is_none_or(|g| g == group)
            && self.topic.as_deref().is_none_or(|t| t == topic)
            && self.partition.is_none_or(|p| p == partition)
    }
}

/// Where a group's offsets live: `Utils.abs(groupId.hashCode) % partitionCount`
/// (`GroupCoordinatorService.partitionFor` / the classic `GroupMetadataManager.partitionFor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The `__consumer_offsets` partition the group hashes to.
    pub partition: i32,
    pub partition_count: i32,
    /// Where the count comes from (the metadata log, or the default 50).
    pub partition_count_from: &'static str,
    /// The partition the group's records were read from.
    pub read_from: i32,
}

/// A group found in `__consumer_offsets`.
#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    pub group_id: String,
    #[serde(rename = "type")]
    pub group_type: GroupType,
    pub coordinator: Placement,
    /// The `__consumer_offsets` directory read.
    pub path: String,
    /// Committed offsets, and how many of them name a partition in the inputs.
    pub commits: usize,
    pub commits_matched: usize,
    /// Transactional offset commits still pending (their transaction is not closed).
    pub pending: usize,
}

/// A hanging transaction of a data partition (its `hanging_transaction` finding).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hanging {
    pub producer_id: i64,
    pub producer_epoch: Option<i16>,
    pub first_offset: i64,
    /// The finding's identity key (what `caused_by` links to).
    #[serde(skip)]
    pub key: String,
}

/// A data partition at the time of the scan (the copy the rows are held against).
#[derive(Debug, Clone, Serialize)]
pub struct PartitionState {
    pub path: String,
    pub broker_id: Option<i32>,
    /// Live copies of the partition in the same cluster (the one with the highest log end
    /// is used).
    pub copies: usize,
    pub log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub last_stable_offset: Option<i64>,
    /// The checkpointed high watermark (`replication-offset-checkpoint`): a lower bound of
    /// the high watermark when the broker stopped.
    pub high_watermark: Option<i64>,
    pub hanging: Vec<Hanging>,
    pub lineage: Option<Lineage>,
    /// The copy was not read to its end (`--max-bytes`): no verdict rests on its end.
    pub partially_read: bool,
    /// The topic id of the copy's `partition.metadata` (`None`: absent or unreadable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// The copy's log dir holds a broker's files but no `.kafka_cleanshutdown`: its broker
    /// was running, or did not shut down cleanly (`Inventory::unclean_shutdown`).
    #[serde(skip)]
    pub unclean_shutdown: bool,
    #[serde(skip)]
    pub index: usize,
}

/// One group × partition.
#[derive(Debug, Clone, Serialize)]
pub struct ConsumerRow {
    pub group_id: String,
    #[serde(rename = "type")]
    pub group_type: GroupType,
    pub topic: String,
    pub partition: i32,
    pub committed_offset: i64,
    /// `None` when the commit carries none (-1: value versions below 3, or a client
    /// that did not send one).
    pub committed_leader_epoch: Option<i32>,
    pub commit_timestamp: i64,
    pub metadata: String,
    /// The topic id the commit names (`OffsetCommitValue.topicId`), when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_topic_id: Option<String>,
    /// Where the commit is: `__consumer_offsets` partition and record offset.
    pub offsets_partition: i32,
    pub commit_record_offset: i64,
    pub coordinator: Placement,
    /// The data partition, when it is in the inputs (same cluster).
    pub data: Option<PartitionState>,
    /// High watermark − committed offset (a lower bound: the checkpoint lags). The three
    /// lags are `None` for a negative committed offset, which is no position (the admin
    /// reads it as no committed offset, and `kafka-consumer-groups.sh` prints no lag).
    pub lag_high_watermark: Option<i64>,
    /// Last stable offset − committed offset (what a `read_committed` group can read).
    pub lag_last_stable: Option<i64>,
    /// Log end offset − committed offset.
    pub lag_log_end: Option<i64>,
    /// When a coordinator holding the load expires the commit (`None`: never while the
    /// group stays as loaded, or not judged; see `partition::groups::expiry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry: Option<crate::partition::walked::Expiry>,
    /// The reference time of the `__consumer_offsets` copy read (`--now`, else its newest
    /// batch timestamp): the coordinator's clock the expiry is held against.
    #[serde(skip)]
    pub(crate) reference_time: i64,
}

/// A transactional offset commit left pending at the end of `__consumer_offsets`.
#[derive(Debug, Clone, Serialize)]
pub struct PendingCommit {
    pub group_id: String,
    pub producer_id: i64,
    pub offsets_partition: i32,
    pub path: String,
    /// Offset of the first pending commit record of this group and producer.
    pub first_offset: i64,
    /// `(topic, partition, offset)` of each pending commit.
    pub offsets: Vec<(String, i32, i64)>,
    #[serde(skip)]
    pub index: usize,
}

/// Commits that name no partition of the inputs: counted, never judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    /// No copy of the partition in the inputs.
    pub absent: u64,
    /// Copies only of another (or an unproven) cluster.
    pub other_cluster: u64,
}

/// The whole view.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConsumerView {
    pub groups: Vec<GroupSummary>,
    pub rows: Vec<ConsumerRow>,
    pub pending: Vec<PendingCommit>,
    pub unmatched: Unmatched,
    /// `__consumer_offsets` records not read (`(directory, why)`): groups may miss them.
    pub unread: Vec<(String, String)>,
    /// The `leader-epoch-checkpoint` files a commit's validation needed and could not read:
    /// the scan's `unreadable_file` findings (those no other check or discovery named).
    #[serde(skip)]
    pub(crate) unread_checkpoints: Vec<crate::cluster::epoch_file::Unread>,
}

/// The `__consumer_offsets` copies to read: live ones, the one with the highest log end
/// per cluster and partition (replicas of one partition hold the same groups).
fn offsets_copies(report: &ScanReport) -> Vec<usize> {
    let mut best: BTreeMap<(ClusterKey, i32), usize> = BTreeMap::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if p.topic != CONSUMER_OFFSETS_TOPIC || !p.source.copy.is_live() {
            continue;
        }
        let k = (ClusterKey::of(&p.source), p.partition);
        let better = best
            .get(&k)
            .is_none_or(|&j| report.partitions[j].log_end_offset < p.log_end_offset);
        if better {
            best.insert(k, i);
        }
    }
    best.into_values().collect()
}

/// The partition count of `__consumer_offsets` for a copy: the same cluster's metadata
/// log, else the highest partition read (when above the default), else 50.
fn partition_count(
    source: &Source,
    metadata: &[crate::discover::compaction::ClusterMetadata],
    highest_read: i32,
) -> (i32, &'static str) {
    if let Some(n) = metadata
        .iter()
        .filter(|m| same_cluster(source, &m.source).is_same())
        .find_map(|m| m.partition_count(CONSUMER_OFFSETS_TOPIC))
    {
        return (n, "the cluster's metadata log");
    }
    if highest_read >= DEFAULT_OFFSETS_PARTITIONS {
        (
            highest_read + 1,
            "the highest partition read (above the default 50)",
        )
    } else {
        (
            DEFAULT_OFFSETS_PARTITIONS,
            "the default offsets.topic.num.partitions (no metadata log of this cluster in the inputs)",
        )
    }
}

/// What the view reads besides the scan's report.
struct Context<'a> {
    report: &'a ScanReport,
    inv: &'a Inventory,
    dirs: &'a HashMap<String, &'a PartitionDir>,
    /// `(topic, partition)` → indexes of live copies in the report.
    by_tp: HashMap<(&'a str, i32), Vec<usize>>,
    lineages: &'a dyn LineageSource,
    states: HashMap<usize, PartitionState>,
    /// Per log dir, [`Inventory::unclean_shutdown`] (asked once each).
    unclean: HashMap<&'a std::path::Path, bool>,
}

impl Context<'_> {
    fn data_copy(&self, co: &Source, topic: &str, partition: i32) -> Result<usize, bool> {
        data_copy(self.report, &self.by_tp, co, topic, partition)
    }

    fn state(&mut self, co: &Source, i: usize) -> PartitionState {
        if let Some(s) = self.states.get(&i) {
            return s.clone();
        }
        let p = &self.report.partitions[i];
        let copies = self.by_tp[&(p.topic.as_str(), p.partition)]
            .iter()
            .filter(|&&j| same_cluster(co, &self.report.partitions[j].source).is_same())
            .count();
        // A tiered log starts at its checkpointed log start, below the local log: the
        // offsets between are fetched from remote storage (`ReplicaManager` reads
        // `[logStartOffset, localLogStartOffset)` remotely, and `LogLoader` trims a
        // remote-enabled log's epoch cache at that start).
        let log_start = (p.tiered.as_ref())
            .and_then(|t| t.log_start_offset)
            .filter(|&t| p.log_start_offset.is_none_or(|l| t < l))
            .or(p.log_start_offset);
        let s = PartitionState {
            path: p.path.clone(),
            broker_id: p.source.broker_id,
            copies,
            log_start_offset: log_start,
            log_end_offset: p.log_end_offset,
            last_stable_offset: p.last_stable_offset,
            high_watermark: self.high_watermark(p),
            hanging: hanging_of(self.report, i),
            lineage: self
                .lineages
                .lineage(&p.topic, p.partition, &p.path)
                .map(|l| {
                    let end = p.carried.recovery.log_end_after.or(p.log_end_offset);
                    l.as_loaded(log_start, end)
                }),
            partially_read: p.partially_read,
            topic_id: self
                .dirs
                .get(&p.path)
                .and_then(|d| crate::cluster::replicas::topic_id_in(self.inv, d))
                .map(|id| crate::read::format::checkpoint::encode_uuid(&id)),
            unclean_shutdown: self.unclean_shutdown(&p.path),
            index: i,
        };
        self.states.insert(i, s.clone());
        s
    }

    /// Whether the log dir of the partition directory `path` has no clean-shutdown file.
    fn unclean_shutdown(&mut self, path: &str) -> bool {
        let Some(ld) = self.dirs.get(path).and_then(|d| d.log_dir.as_deref()) else {
            return false;
        };
        let inv = self.inv;
        *self
            .unclean
            .entry(ld)
            .or_insert_with(|| inv.unclean_shutdown(ld))
    }

    /// The partition's checkpointed high watermark, as its scan read it (a merge's
    /// report carries it; the log dir's file is on the broker).
    fn high_watermark(&mut self, p: &PartitionReport) -> Option<i64> {
        p.high_watermark
    }
}

/// What the KRaft metadata logs in the inputs say of each live data copy's leader epochs
/// (by partition directory): the epochs of the copy's cluster's history
/// (`ClusterHistory::lineage`) and its newest one. A copy whose `partition.metadata`
/// names another topic id than the history is another incarnation of the topic and gets
/// nothing from it.
fn metadata_epochs(
    report: &ScanReport,
    histories: &[ClusterHistory],
    by_tp: &HashMap<(&str, i32), Vec<usize>>,
    dirs: &HashMap<String, &PartitionDir>,
) -> HashMap<String, MetadataEpochs> {
    let mut out = HashMap::new();
    for (&(topic, partition), copies) in by_tp {
        for &i in copies {
            let p = &report.partitions[i];
            // The one history that speaks for the copy's cluster (two that cannot be told
            // apart give none, as the coordinator's copy choice reads them).
            let Some(h) = ClusterHistory::of_cluster(histories, &p.source) else {
                continue;
            };
            let Some(t) = h.timeline(topic, partition) else {
                continue;
            };
            let other_incarnation = dirs
                .get(&p.path)
                .and_then(|d| crate::cluster::replicas::topic_id(d))
                .is_some_and(|id| id != t.topic_id);
            if other_incarnation {
                continue;
            }
            let entries = h
                .lineage(report, topic, partition)
                .into_iter()
                .filter_map(|(epoch, start)| {
                    Some(crate::read::format::checkpoint::EpochEntry {
                        epoch,
                        start_offset: start?,
                    })
                })
                .collect();
            let latest = t.current().map(|s| s.leader_epoch);
            out.insert(p.path.clone(), MetadataEpochs { entries, latest });
        }
    }
    out
}

/// `(topic, partition)` → indexes of the live copies of data partitions in `report`.
fn live_copies(report: &ScanReport) -> HashMap<(&str, i32), Vec<usize>> {
    let mut by_tp: HashMap<(&str, i32), Vec<usize>> = HashMap::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if p.source.copy.is_live() && p.topic != CONSUMER_OFFSETS_TOPIC {
            by_tp
                .entry((p.topic.as_str(), p.partition))
                .or_default()
                .push(i);
        }
    }
    by_tp
}

/// The copy a commit of a group read from `co` is held against: among the live copies of
/// the same cluster, the one with the highest log end. `Err(true)`: copies only of
/// another (or an unproven) cluster; `Err(false)`: none.
fn data_copy(
    report: &ScanReport,
    by_tp: &HashMap<(&str, i32), Vec<usize>>,
    co: &Source,
    topic: &str,
    partition: i32,
) -> Result<usize, bool> {
    let Some(all) = by_tp.get(&(topic, partition)) else {
        return Err(false);
    };
    all.iter()
        .copied()
        .filter(|&i| same_cluster(co, &report.partitions[i].source).is_same())
        .max_by_key(|&i| (report.partitions[i].log_end_offset, std::cmp::Reverse(i)))
        .ok_or(true)
}

/// Each group's applied, non-negative committed offset on each partition of `report` (aligned with
/// `report.partitions`, sorted by offset then group), as the view matches them, from what
/// the scan's walk kept of `__consumer_offsets` (for the HTML timelines: no file is read).
pub fn committed_positions(report: &ScanReport) -> Vec<Vec<(String, i64)>> {
    let mut out = vec![Vec::new(); report.partitions.len()];
    let by_tp = live_copies(report);
    for i in offsets_copies(report) {
        let co = &report.partitions[i];
        let Some(o) = &co.carried.cluster_inputs.group_offsets else {
            continue;
        };
        // A negative committed offset is no position (`ConsumerRow`'s lags): not marked.
        let applied =
            (o.commits.iter()).filter(|c| c.pending_producer.is_none() && c.commit.offset >= 0);
        for c in applied {
            if let Ok(d) = data_copy(
                report,
                &by_tp,
                &co.source,
                &c.commit.topic,
                c.commit.partition,
            ) {
                out[d].push((c.group.clone(), c.commit.offset));
            }
        }
    }
    for v in &mut out {
        v.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    }
    out
}

/// The `hanging_transaction` findings of partition `i`, earliest first.
pub(crate) fn hanging_of(report: &ScanReport, i: usize) -> Vec<Hanging> {
    let mut h: Vec<Hanging> = report
        .partition_findings(i)
        .iter()
        .filter(|f| f.kind == Kind::HangingTransaction && f.source.copy.is_live())
        .filter_map(|f| {
            Some(Hanging {
                producer_id: f.producer_id?,
                producer_epoch: f.producer_epoch,
                first_offset: f.offset?,
                key: f.identity_key(),
            })
        })
        .collect();
    h.sort_by_key(|h| h.first_offset);
    h
}

/// Build the view from a finished scan (`report`) of `inv`: the groups and commits each
/// `__consumer_offsets` copy's load ends with (kept by the scan's walk), held against the
/// partitions the scan read. It replays the inputs' KRaft metadata logs for the leader-epoch
/// lineage; the pipeline's check, and `pipeline::analyse_consumers` (the scan and this view
/// together), hand in the scan's own replay instead (`build_over`).
pub fn build(
    report: &ScanReport,
    inv: &Inventory,
    scan: &ScanOptions,
    opts: &ConsumersOptions,
) -> ConsumerView {
    if offsets_copies(report).is_empty() {
        return ConsumerView::default();
    }
    let histories = if inv.partitions.iter().any(|p| p.is_kraft_metadata()) {
        crate::cluster::leadership::load_all(inv, scan.max_bytes, scan.max_decompressed)
    } else {
        Vec::new()
    };
    build_over(report, inv, scan, opts, &histories)
}

/// [`build`] over `histories`, the replay of each cluster's KRaft metadata log in `inv`
/// (`cluster::leadership::load_all`).
pub(crate) fn build_over(
    report: &ScanReport,
    inv: &Inventory,
    scan: &ScanOptions,
    opts: &ConsumersOptions,
    histories: &[ClusterHistory],
) -> ConsumerView {
    let copies = offsets_copies(report);
    let mut view = ConsumerView::default();
    if copies.is_empty() {
        return view;
    }
    let dirs: HashMap<String, &PartitionDir> = inv
        .partitions
        .iter()
        .map(|p| (p.path.display().to_string(), p))
        .collect();
    let ids = Identities::load(inv);
    let metadata = crate::discover::compaction::load_cluster_metadata(
        inv,
        &ids,
        scan.max_bytes,
        scan.max_decompressed,
    );
    let by_tp = live_copies(report);
    let lineages = ClusterLineage::new(
        CheckpointLineage::new(
            inv,
            by_tp
                .values()
                .flatten()
                .filter_map(|&i| dirs.get(&report.partitions[i].path).copied()),
        ),
        metadata_epochs(report, histories, &by_tp, &dirs),
    );
    let mut cx = Context {
        report,
        inv,
        dirs: &dirs,
        by_tp,
        lineages: &lineages,
        states: HashMap::new(),
        unclean: HashMap::new(),
    };
    let highest: HashMap<ClusterKey, i32> = copies.iter().fold(HashMap::new(), |mut m, &i| {
        let p = &report.partitions[i];
        let e = m.entry(ClusterKey::of(&p.source)).or_insert(0);
        *e = (*e).max(p.partition);
        m
    });
    for i in copies {
        let co = &report.partitions[i];
        // The scan's walk kept what the load ends with; results made without it are
        // replayed here.
        let replayed;
        let offsets = match &co.carried.cluster_inputs.group_offsets {
            Some(o) => o,
            None => {
                let Some(dir) = dirs.get(&co.path) else {
                    continue;
                };
                let r = groups::replay_partition_dir(dir, scan.max_bytes, scan.max_decompressed);
                view.unread
                    .extend(r.unread.iter().map(|why| (co.path.clone(), why.clone())));
                replayed = groups::load::group_offsets(&r);
                &replayed
            }
        };
        let count = partition_count(&co.source, &metadata, highest[&ClusterKey::of(&co.source)]);
        add_copy(&mut view, &mut cx, i, offsets, count, opts);
    }
    view.unread_checkpoints = lineages.unread();
    view.groups
        .sort_by(|a, b| (&a.group_id, &a.path).cmp(&(&b.group_id, &b.path)));
    view.rows.sort_by(|a, b| {
        (&a.group_id, &a.topic, a.partition).cmp(&(&b.group_id, &b.topic, b.partition))
    });
    view
}

/// The groups and commits of one `__consumer_offsets` copy (`report.partitions[i]`).
fn add_copy(
    view: &mut ConsumerView,
    cx: &mut Context<'_>,
    i: usize,
    offsets: &GroupOffsets,
    (count, from): (i32, &'static str),
    opts: &ConsumersOptions,
) {
    let co = &cx.report.partitions[i];
    let mut by_group: BTreeMap<&str, Vec<&GroupCommit>> = BTreeMap::new();
    // Per producer and group: its pending commits; per group: how many.
    let mut pending: BTreeMap<(i64, &str), PendingCommit> = BTreeMap::new();
    let mut pending_of: HashMap<&str, usize> = HashMap::new();
    for c in &offsets.commits {
        match c.pending_producer {
            Some(pid) if opts.keeps(&c.group, &c.commit.topic, c.commit.partition) => {
                *pending_of.entry(&c.group).or_default() += 1;
                add_pending(&mut pending, co, i, pid, c);
            }
            Some(_) => {}
            None => by_group.entry(&c.group).or_default().push(c),
        }
    }
    view.pending.extend(pending.into_values());
    for (id, t) in &offsets.groups {
        if opts.group.as_deref().is_some_and(|g| g != id) {
            continue;
        }
        let Some(group_type) = GroupType::parse(t) else {
            continue;
        };
        let coordinator = Placement {
            partition: transaction_partition_for(id, count),
            partition_count: count,
            partition_count_from: from,
            read_from: co.partition,
        };
        let commits = by_group.remove(id.as_str()).unwrap_or_default();
        let mut summary = GroupSummary {
            group_id: id.clone(),
            group_type,
            coordinator: coordinator.clone(),
            path: co.path.clone(),
            commits: commits.len(),
            commits_matched: 0,
            pending: pending_of.get(id.as_str()).copied().unwrap_or(0),
        };
        for c in commits {
            let data = match cx.data_copy(&co.source, &c.commit.topic, c.commit.partition) {
                Ok(d) => {
                    summary.commits_matched += 1;
                    Some(cx.state(&co.source, d))
                }
                Err(other_cluster) => {
                    if other_cluster {
                        view.unmatched.other_cluster += 1;
                    } else {
                        view.unmatched.absent += 1;
                    }
                    None
                }
            };
            if opts.keeps(id, &c.commit.topic, c.commit.partition) {
                let mut r = row(group_type, c, coordinator.clone(), data);
                r.reference_time = co.ref_time;
                view.rows.push(r);
            }
        }
        view.groups.push(summary);
    }
}

fn add_pending<'a>(
    pending: &mut BTreeMap<(i64, &'a str), PendingCommit>,
    co: &PartitionReport,
    index: usize,
    pid: i64,
    c: &'a GroupCommit,
) {
    let p = pending
        .entry((pid, c.group.as_str()))
        .or_insert_with(|| PendingCommit {
            group_id: c.group.clone(),
            producer_id: pid,
            offsets_partition: co.partition,
            path: co.path.clone(),
            first_offset: c.commit.record_offset,
            offsets: Vec::new(),
            index,
        });
    p.first_offset = p.first_offset.min(c.commit.record_offset);
    p.offsets
        .push((c.commit.topic.clone(), c.commit.partition, c.commit.offset));
}

fn row(
    group_type: GroupType,
    c: &GroupCommit,
    coordinator: Placement,
    data: Option<PartitionState>,
) -> ConsumerRow {
    // A negative committed offset is no position: the admin reads one as no committed
    // offset (`ListConsumerGroupOffsetsHandler.handleResponse`) and the describe prints no
    // lag for it (`ConsumerGroupCommand.ConsumerGroupService.getLag`).
    let lag = |o: Option<i64>| {
        o.filter(|_| c.commit.offset >= 0)
            .map(|o| o - c.commit.offset)
    };
    let (hw, lso, leo) = match &data {
        Some(d) if !d.partially_read => (
            lag(d.high_watermark),
            lag(d.last_stable_offset),
            lag(d.log_end_offset),
        ),
        _ => (None, None, None),
    };
    ConsumerRow {
        group_id: c.group.clone(),
        group_type,
        topic: c.commit.topic.clone(),
        partition: c.commit.partition,
        committed_offset: c.commit.offset,
        committed_leader_epoch: (c.commit.leader_epoch >= 0).then_some(c.commit.leader_epoch),
        commit_timestamp: c.commit.commit_timestamp,
        metadata: c.commit.metadata.clone(),
        commit_topic_id: c.commit.topic_id.clone(),
        offsets_partition: coordinator.read_from,
        commit_record_offset: c.commit.record_offset,
        coordinator,
        data,
        lag_high_watermark: hw,
        lag_last_stable: lso,
        lag_log_end: leo,
        expiry: c.expiry,
        reference_time: 0,
    }
}
