//! Cluster-wide transactions: the per-partition transactions of the replay
//! ([`crate::partition::state::txnrec`]) joined with each other and with the coordinator's
//! `__transaction_state` records, within one cluster (`TransactionMetadata`,
//! `TransactionMarkerChannelManager`).
//!
//! Everything here is a pure function of typed, serde-serialisable inputs ([`input`]):
//! [`analyse`] groups the parts into [`ClusterTxn`]s ([`group`]), applies the cross-partition
//! rules ([`rules`]) and computes the statistics ([`stats`]). Building the inputs from a scan
//! and attaching the findings to its report is the caller's job
//! (`cluster.rs` of the coordinator module).
//!
//! Joins happen only within one domain: partitions whose log dirs' `meta.properties` carry
//! the same `cluster.id`, or, when it is unknown, partitions of the same log dir. Only live
//! copies (`topic-N`) count; of several live copies of a partition (replicas on several
//! brokers) the one with the highest log end offset is the partition, and of a
//! `__transaction_state` partition the metadata-named leader's copy, else the furthest.

pub mod align;
pub mod clock;
pub mod end_version;
pub mod exhaustion;
pub mod first_sequence;
pub mod group;
pub mod input;
pub mod rules;
pub mod stats;
pub mod unread;

use crate::cluster::coordinator::model::{CoordModel, CoordTxn};
use crate::finding::Finding;
use crate::partition::state::txnrec::TxnEnd;
use crate::read::format::txnlog::TxnState;
use group::{Group, Grouping};
pub use input::{
    CoordRecord, CoordValue, CoordinatorLog, Domain, INPUT_VERSION, Origin, PartitionTxns,
    RecordProblem, TxnInputs, UnreadBatch,
};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The coordinator's internal topic.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// How a cluster transaction ended, over all its partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Committed,
    Aborted,
    /// COMMIT on some partitions, ABORT on others.
    Mixed,
    /// Markers on some partitions, none yet on others.
    Partial,
    /// No marker anywhere yet.
    Open,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Committed => "committed",
            Outcome::Aborted => "aborted",
            Outcome::Mixed => "mixed",
            Outcome::Partial => "partial",
            Outcome::Open => "open",
        }
    }
}

/// One partition's part of a cluster transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterTxnPart {
    /// Shared by every part of the partition (millions of transactions, few partitions).
    pub topic: Arc<str>,
    pub partition: i32,
    pub path: Arc<str>,
    /// First data offset (the marker's offset for a marker alone).
    pub first_offset: i64,
    pub last_data_offset: Option<i64>,
    pub marker_offset: Option<i64>,
    pub end: TxnEnd,
    pub producer_epoch: i16,
    pub marker_epoch: Option<i16>,
    pub coordinator_epoch: Option<i32>,
    pub first_timestamp: i64,
    pub last_timestamp: i64,
    pub records: u32,
    pub batches: u32,
    pub bytes: u64,
    /// Offsets of re-sent markers of the same outcome (coordinator failover).
    pub duplicate_markers: Vec<i64>,
    /// Index of the input partition.
    #[serde(skip)]
    pub input: usize,
}

/// What the coordinator recorded about a cluster transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoordinatorInfo {
    pub log_partition: i32,
    /// Index of its `CoordinatorLog` in the inputs.
    #[serde(skip)]
    pub log: usize,
    pub state: TxnState,
    pub producer_id: i64,
    pub data_epoch: i16,
    pub end_epoch: Option<i16>,
    pub client_transaction_version: i16,
    pub timeout_ms: i32,
    /// `topic-partition`s of its Ongoing/Prepare records (`None`: only Complete known).
    pub partitions: Option<Vec<String>>,
    pub start_ms: i64,
    pub prepare_ms: Option<i64>,
    pub complete_ms: Option<i64>,
    pub first_record_offset: i64,
    pub last_record_offset: i64,
}

/// One transaction across its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterTxn {
    /// The join domain.
    pub domain: Arc<Domain>,
    pub transactional_id: Option<Arc<str>>,
    pub producer_id: i64,
    /// Epoch of the data.
    pub producer_epoch: i16,
    pub marker_epoch: Option<i16>,
    pub transaction_version_2: bool,
    pub outcome: Outcome,
    pub grouping: Grouping,
    /// Sorted by topic, partition.
    pub partitions: Vec<ClusterTxnPart>,
    pub coordinator: Option<CoordinatorInfo>,
    /// Earliest first timestamp of its parts.
    pub start_ms: i64,
    /// Latest marker timestamp, once every part has a marker.
    pub end_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    pub records: u64,
    pub batches: u64,
    pub bytes: u64,
}

impl ClusterTxn {
    /// No data on any partition (markers alone).
    pub fn is_empty(&self) -> bool {
        self.batches == 0
    }
}

/// Where a finding of the join belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `inputs.partitions[i]`.
    Partition(usize),
    /// `inputs.coordinator[i]`.
    Coordinator(usize),
}

/// A finding of the join and where it belongs.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub target: Target,
    pub finding: Finding,
    /// The `hanging_transaction`s it is the root cause of, as `(topic, partition, producer
    /// id, first offset)` in the same domain.
    pub causes_hanging: Vec<rules::HangingRef>,
}

/// The result of `analyse`.
#[derive(Debug, Clone, Default)]
pub struct TxnAnalysis {
    /// Every cluster transaction, by domain, start time, producer id (empty unless
    /// `TxnOptions::keep_transactions`: the statistics and findings do not need them).
    pub transactions: Vec<ClusterTxn>,
    pub findings: Vec<Placed>,
    pub stats: stats::TxnStatistics,
    /// The markers whose coordinator record gives a TV0/1 EndTxn (`end_version`): the
    /// caller lowers the partition's `marker_epoch_not_bumped` at each.
    pub tv01_markers: Vec<end_version::Tv01Marker>,
}

/// Tunables of the join.
#[derive(Debug, Clone, Copy)]
pub struct TxnOptions {
    /// How long after a transaction's other markers a missing one is reported (ms).
    pub marker_grace_ms: i64,
    /// How many of the longest transactions the statistics list.
    pub longest: usize,
    /// Keep every cluster transaction in [`TxnAnalysis::transactions`] (`txns --cluster`);
    /// otherwise each is dropped once checked and counted (300 000 open
    /// transactions would cost ≈ 400 bytes each).
    pub keep_transactions: bool,
    /// How far (ms) a partition's marker or open data may lie outside a coordinator
    /// transaction's window (Prepare…Complete for a marker, start…Prepare for open data)
    /// and still be that transaction's: the clocks of the coordinator, the partition
    /// leaders and the producer differ. Only a tie-break: the join aligns by order
    /// ([`align`]).
    pub coordinator_tolerance_ms: i64,
    /// Without the coordinator's records (TV0/1): how long after the coordinator's
    /// Prepare record a transaction's first marker may land. Data stamped earlier than
    /// that before a group's first marker cannot belong to the producer's next
    /// transaction ([`group`]).
    pub marker_delay_ms: i64,
}

impl Default for TxnOptions {
    fn default() -> Self {
        TxnOptions {
            marker_grace_ms: crate::partition::state::LATE_TRANSACTION_BUFFER_MS,
            longest: 10,
            keep_transactions: true,
            coordinator_tolerance_ms: group::COORDINATOR_TOLERANCE_MS,
            marker_delay_ms: group::MARKER_DELAY_MS,
        }
    }
}

/// What the join reads: the partitions' transactions and the coordinator's model of each
/// `__transaction_state` partition copy ([`CoordModel`], indexed by [`Target::Coordinator`]).
#[derive(Debug, Clone, Copy)]
pub struct Joined<'a> {
    pub partitions: &'a [PartitionTxns],
    pub coordinator: &'a [CoordModel],
}

/// The producer ids of the partitions' transactions: the coordinator transactions the join
/// can match ([`CoordModel`] keeps the finished ones of these).
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
pub fn producer_ids(parts: &[PartitionTxns]) -> std::collections::HashSet<i64> {
    parts
        .iter()
        .flat_map(|p| p.txns.iter().map(|t| t.producer_id))
        .collect()
}

/// The live copy chosen for each partition of each domain, and the coordinator logs.
struct DomainInputs {
    partitions: Vec<usize>,
    coordinator: Vec<usize>,
}

fn domains(inputs: &Joined<'_>) -> BTreeMap<Domain, DomainInputs> {
    let mut best: BTreeMap<(Domain, String, i32), usize> = BTreeMap::new();
    for (i, p) in inputs.partitions.iter().enumerate() {
        if !p.origin.live || p.version != INPUT_VERSION {
            continue;
        }
        let key = (p.origin.domain(), p.topic.clone(), p.partition);
        let e = best.entry(key).or_insert(i);
        let cur = &inputs.partitions[*e];
        if p.log_end_offset.unwrap_or(-1) > cur.log_end_offset.unwrap_or(-1) {
            *e = i;
        }
    }
    let mut cbest: BTreeMap<(Domain, i32), usize> = BTreeMap::new();
    for (i, c) in inputs.coordinator.iter().enumerate() {
        if !c.origin.live || c.version != INPUT_VERSION {
            continue;
        }
        // The copy the metadata log's current leader holds, which its coordinator loads
        // (`TransactionCoordinator.onElection`, `coordinator::leader`), else the furthest.
        let e = cbest.entry((c.origin.domain(), c.partition)).or_insert(i);
        let cur = &inputs.coordinator[*e];
        if (c.leader_copy, c.last_usable_offset) > (cur.leader_copy, cur.last_usable_offset) {
            *e = i;
        }
    }
    let mut out: BTreeMap<Domain, DomainInputs> = BTreeMap::new();
    for ((d, _, _), i) in best {
        out.entry(d)
            .or_insert_with(|| DomainInputs {
                partitions: Vec::new(),
                coordinator: Vec::new(),
            })
            .partitions
            .push(i);
    }
    for ((d, _), i) in cbest {
        out.entry(d)
            .or_insert_with(|| DomainInputs {
                partitions: Vec::new(),
                coordinator: Vec::new(),
            })
            .coordinator
            .push(i);
    }
    out
}

/// How many producer ids are grouped, rendered and checked at a time: the groups and
/// rendered transactions of one block are alive at once, never all of them.
const BLOCK_PRODUCERS: usize = 4096;

/// Join, check and count the transactions of `inputs` (each coordinator log replayed into
/// its [`CoordModel`]).
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
pub fn analyse(inputs: &TxnInputs, opts: &TxnOptions) -> TxnAnalysis {
    let wanted = Arc::new(producer_ids(&inputs.partitions));
    let mut models: Vec<CoordModel> = inputs
        .coordinator
        .iter()
        .enumerate()
        .map(|(i, l)| CoordModel::of(l, Some(wanted.clone())).at(i))
        .collect();
    crate::cluster::coordinator::sent::settle(&mut models, || {
        (inputs.partitions.iter())
            .filter(|p| p.origin.live)
            .map(|p| crate::cluster::coordinator::sent::DataPart {
                domain: p.origin.domain(),
                topic: &p.topic,
                partition: p.partition,
                path: &p.origin.path,
                txns: &p.txns,
            })
            .collect()
    });
    analyse_joined(
        &Joined {
            partitions: &inputs.partitions,
            coordinator: &models,
        },
        opts,
    )
}

/// [`analyse`] over the coordinator's models already replayed.
pub fn analyse_joined(inputs: &Joined<'_>, opts: &TxnOptions) -> TxnAnalysis {
    let mut out = TxnAnalysis::default();
    let mut rows: Vec<stats::TxnRow> = Vec::new();
    let parts = &inputs.partitions;
    for (di, (domain, d)) in domains(inputs).into_iter().enumerate() {
        let di = u32::try_from(di).unwrap_or(u32::MAX);
        // The domain's coordinator transactions, each copy's in its order (one copy's are
        // read in place).
        let coord: std::borrow::Cow<'_, [CoordTxn]> = match d.coordinator.as_slice() {
            [i] => std::borrow::Cow::Borrowed(&inputs.coordinator[*i].txns),
            many => many
                .iter()
                .flat_map(|&i| inputs.coordinator[i].txns.iter().cloned())
                .collect(),
        };
        let coord = &*coord;
        let grouper = group::Grouper::new(parts, &d.partitions, coord, opts);
        // At most one transaction per record: no growth beyond it.
        rows.reserve_exact(d.partitions.iter().map(|&i| parts[i].txns.len()).sum());
        let shared = Shared {
            domain: Arc::new(domain.clone()),
            names: d
                .partitions
                .iter()
                .map(|&i| {
                    let p = &parts[i];
                    (
                        i,
                        (
                            Arc::from(p.topic.as_str()),
                            Arc::from(p.origin.path.as_str()),
                        ),
                    )
                })
                .collect(),
            ids: coord.iter().map(|t| t.transactional_id.clone()).collect(),
        };
        // Coordinator transactions stuck in Prepare*: the transactions grouped with them
        // are kept for their finding.
        let stuck = rules::stuck_candidates(inputs, coord);
        let stuck_set: BTreeSet<usize> = stuck.iter().copied().collect();
        let mut matched: BTreeMap<usize, Vec<ClusterTxn>> = BTreeMap::new();
        let mut found: Vec<Placed> = Vec::new();
        let mut from = 0;
        while from < grouper.producers() {
            let to = (from + BLOCK_PRODUCERS).min(grouper.producers());
            let groups = grouper.groups(from..to);
            from = to;
            // Checked in parallel; the findings keep the transactions' order. Only the
            // transactions kept, matched to a stuck coordinator transaction or that a rule
            // may report are rendered: the rows are read from the groups' records.
            let done: Vec<Done> = groups
                .par_iter()
                .with_min_len(256)
                .map(|g| {
                    let s = Summary::of(parts, g);
                    let row = s.row(g, &shared, di);
                    let stuck = g.coord.is_some_and(|c| stuck_set.contains(&c));
                    if !(opts.keep_transactions || stuck || s.may_find(g)) {
                        return (row, None);
                    }
                    let t = render(parts, &shared, g, coord, &s);
                    let mut f = rules::per_txn(inputs, &d.coordinator, &t, opts);
                    f.extend(rules::absorbed(parts, inputs.coordinator, g, coord));
                    (row, Some(Box::new((t, f))))
                })
                .collect();
            for ((row, rendered), g) in done.into_iter().zip(&groups) {
                rows.push(row);
                end_version::of_group(parts, g, coord, &mut out.tv01_markers);
                let Some(rendered) = rendered else { continue };
                let (t, f) = *rendered;
                found.extend(f);
                if let Some(c) = g.coord.filter(|c| stuck_set.contains(c)) {
                    matched.entry(c).or_default().push(t.clone());
                }
                if opts.keep_transactions {
                    out.transactions.push(t);
                }
            }
        }
        // A TV2 producer's first batch above sequence 0, by the coordinator's record.
        found.extend(first_sequence::check(inputs, &d.partitions, coord));
        rules::qualify_for_domain(&domain, &mut found);
        rules::stuck_in_prepare(
            inputs,
            &domain,
            &d.partitions,
            &stuck,
            &matched,
            coord,
            &mut found,
        );
        out.findings.extend(found);
        out.findings
            .extend(exhaustion::check(inputs, &d.coordinator));
    }
    // The transaction order: a stable sort of the order they were made in by domain,
    // start time, producer id and epoch. The rows stay in that order: the statistics break their ties by it.
    out.transactions.sort_by(|a, b| {
        (&a.domain, a.start_ms, a.producer_id, a.producer_epoch).cmp(&(
            &b.domain,
            b.start_ms,
            b.producer_id,
            b.producer_epoch,
        ))
    });
    out.stats = stats::statistics(inputs, rows, opts);
    out
}

fn coordinator_info(t: &CoordTxn) -> CoordinatorInfo {
    CoordinatorInfo {
        log_partition: t.log_partition,
        log: t.log,
        state: t.state,
        producer_id: t.producer_id,
        data_epoch: t.data_epoch,
        end_epoch: t.end_epoch,
        client_transaction_version: t.client_transaction_version,
        timeout_ms: t.timeout_ms,
        partitions: t
            .partitions
            .as_ref()
            .map(|s| s.iter().map(|(t, p)| format!("{t}-{p}")).collect()),
        start_ms: t.start_ms,
        prepare_ms: t.prepare_ms,
        complete_ms: t.complete_ms,
        first_record_offset: t.first_record_offset,
        last_record_offset: t.last_record_offset,
    }
}

/// Strings shared by the transactions of one domain.
struct Shared {
    domain: Arc<Domain>,
    /// Input index → (topic, path).
    names: BTreeMap<usize, (Arc<str>, Arc<str>)>,
    /// Coordinator transaction → transactional id.
    ids: Vec<Arc<str>>,
}

fn render(
    parts: &[PartitionTxns],
    shared: &Shared,
    g: &Group,
    coord: &[CoordTxn],
    s: &Summary,
) -> ClusterTxn {
    let mut ps: Vec<ClusterTxnPart> = g
        .members
        .iter()
        .map(|m| {
            let p = &parts[m.input];
            let r = &p.txns[m.rec];
            let open = r.is_open();
            let (topic, path) = shared.names.get(&m.input).cloned().unwrap_or_else(|| {
                (
                    Arc::from(p.topic.as_str()),
                    Arc::from(p.origin.path.as_str()),
                )
            });
            ClusterTxnPart {
                topic,
                partition: p.partition,
                path,
                first_offset: r.first_offset,
                last_data_offset: (!r.is_empty()).then_some(r.last_data_offset),
                marker_offset: (!open).then_some(r.marker_offset),
                end: r.end,
                producer_epoch: r.producer_epoch,
                marker_epoch: (!open).then_some(r.marker_epoch),
                coordinator_epoch: (!open).then_some(r.coordinator_epoch),
                first_timestamp: r.first_timestamp,
                last_timestamp: r.last_timestamp,
                records: r.records,
                batches: r.batches,
                bytes: r.bytes,
                duplicate_markers: g
                    .duplicates
                    .iter()
                    .filter(|d| d.input == m.input)
                    .map(|d| parts[d.input].txns[d.rec].marker_offset)
                    .collect(),
                input: m.input,
            }
        })
        .collect();
    ps.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    ClusterTxn {
        domain: shared.domain.clone(),
        transactional_id: g.coord.and_then(|i| shared.ids.get(i).cloned()),
        producer_id: g.producer_id,
        producer_epoch: g.data_epoch,
        marker_epoch: s.marker_epoch,
        transaction_version_2: g.tv2,
        outcome: s.outcome,
        grouping: g.grouping,
        records: s.records,
        batches: s.batches,
        bytes: s.bytes,
        partitions: ps,
        coordinator: g.coord.map(|i| coordinator_info(&coord[i])),
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        duration_ms: s.duration_ms(),
    }
}

/// A group's row, and its rendered transaction and findings when it needed them (boxed:
/// few are, and the rows are moved three times).
type Done = (stats::TxnRow, Option<Box<(ClusterTxn, Vec<Placed>)>>);

/// What the statistics and `render` read of a group, from its parts' records (the values
/// a rendered [`ClusterTxn`] holds; none depends on the order of the parts).
struct Summary {
    outcome: Outcome,
    open: bool,
    closed: bool,
    start_ms: i64,
    end_ms: Option<i64>,
    marker_epoch: Option<i16>,
    records: u64,
    batches: u64,
    bytes: u64,
    partitions: u32,
}

impl Summary {
    fn of(parts: &[PartitionTxns], g: &Group) -> Summary {
        let (mut commit, mut abort, mut open) = (false, false, false);
        let mut s = Summary {
            outcome: Outcome::Open,
            open: false,
            closed: false,
            start_ms: i64::MAX,
            end_ms: None,
            marker_epoch: None,
            records: 0,
            batches: 0,
            bytes: 0,
            partitions: u32::try_from(g.members.len()).unwrap_or(u32::MAX),
        };
        let mut last = i64::MIN;
        for m in g.members.iter() {
            let r = &parts[m.input].txns[m.rec];
            match r.end {
                TxnEnd::Commit => commit = true,
                TxnEnd::Abort => abort = true,
                TxnEnd::Open => open = true,
            }
            if !r.is_open() {
                s.marker_epoch = Some(
                    s.marker_epoch
                        .map_or(r.marker_epoch, |e| e.min(r.marker_epoch)),
                );
            }
            s.start_ms = s.start_ms.min(r.first_timestamp);
            last = last.max(r.last_timestamp);
            s.records = s.records.saturating_add(u64::from(r.records));
            s.batches = s.batches.saturating_add(u64::from(r.batches));
            s.bytes = s.bytes.saturating_add(r.bytes);
        }
        // (A group has a part: `start_ms` is one of its timestamps.)
        if !open {
            s.end_ms = Some(last);
        }
        s.outcome = match (commit, abort, open) {
            (true, true, _) => Outcome::Mixed,
            (true, false, false) => Outcome::Committed,
            (false, true, false) => Outcome::Aborted,
            (false, false, _) => Outcome::Open,
            _ => Outcome::Partial,
        };
        s.open = open;
        s.closed = commit || abort;
        s
    }

    fn duration_ms(&self) -> Option<i64> {
        self.end_ms.map(|e| e.saturating_sub(self.start_ms).max(0))
    }

    /// Whether [`rules::per_txn`] may report the transaction: its outcomes disagree, or a
    /// part is open while another has its marker or the coordinator recorded it.
    fn may_find(&self, g: &Group) -> bool {
        self.outcome == Outcome::Mixed
            || (self.open && (self.closed || g.coord.is_some()))
            || !g.absorbed.is_empty()
    }

    fn row(&self, g: &Group, shared: &Shared, domain: u32) -> stats::TxnRow {
        stats::TxnRow {
            transactional_id: g.coord.and_then(|i| shared.ids.get(i).cloned()),
            producer_id: g.producer_id,
            start_ms: self.start_ms,
            end_ms: self.end_ms,
            records: self.records,
            batches: self.batches,
            bytes: self.bytes,
            partitions: self.partitions,
            domain,
            producer_epoch: g.data_epoch,
            marker_epoch: self.marker_epoch,
            transaction_version_2: g.tv2,
            outcome: self.outcome,
        }
    }
}

#[cfg(test)]
mod tests;
