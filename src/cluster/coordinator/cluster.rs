//! The scan's side of the cluster-wide transaction join ([`crate::cluster::txns`]): build the typed
//! inputs from a finished scan (each partition's transaction records, moved out of its
//! replay outcome) and from the `__transaction_state` partitions of the inventory, run
//! [`txns::analyse`], then attach its findings to the report, link each
//! `hanging_transaction` to its root cause (`caused_by`) and keep the transactions and
//! statistics in [`ScanReport::transactions`].

use super::leader::LeaderCopies;
use super::model::CoordModel;
use crate::cluster::report::ScanReport;
#[cfg(feature = "testkit")]
use crate::cluster::txns::TxnInputs;
use crate::cluster::txns::{self, INPUT_VERSION, Origin, PartitionTxns, Target, TxnOptions};
use crate::discover::identity::Identities;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{CopyKind, Finding, Kind, Source};
use crate::partition::results::ScanOptions;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The identity of every partition directory (`crate::discover::identity`: the log dir's
/// `meta.properties`, the path, the copy kind), as the join's [`Origin`]s.
struct Origins<'a> {
    ids: Identities,
    dirs: HashMap<&'a Path, &'a PartitionDir>,
}

impl<'a> Origins<'a> {
    fn new(inv: &'a Inventory) -> Self {
        Origins {
            ids: Identities::load(inv),
            dirs: inv
                .partitions
                .iter()
                .map(|p| (p.path.as_path(), p))
                .collect(),
        }
    }

    fn of(&self, path: &str) -> (Origin, CopyKind) {
        let source = match self.dirs.get(Path::new(path)) {
            Some(d) => self.ids.source(d),
            None => Source {
                path: Some(path.to_string()),
                ..Source::default()
            },
        };
        (
            Origin {
                cluster_id: source.cluster_id.map(|c| c.to_string()),
                broker_id: source.broker_id,
                log_dir: source.log_dir.map(|d| d.to_string()),
                path: path.to_string(),
                live: source.copy.is_live(),
                kraft: source.kraft,
            },
            source.copy,
        )
    }
}

fn source(o: &Origin, copy: CopyKind) -> Source {
    Source {
        cluster_id: o.cluster_id.as_deref().map(Into::into),
        broker_id: o.broker_id,
        log_dir: o.log_dir.as_deref().map(Into::into),
        path: Some(o.path.clone()),
        copy,
        kraft: o.kraft,
    }
}

/// Build the join's inputs from `report` (moving each partition's transaction records out
/// of its outcome, and the `__transaction_state` records out of its walk's results) and
/// `inv`; the `__transaction_state` partitions whose records the scan did not keep are
/// read streaming, as [`replay_logs`] reads them.
#[cfg(feature = "testkit")]
pub fn inputs(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) -> TxnInputs {
    let origins = Origins::new(inv);
    let logs = super::decode::decode_logs(report, inv, opts, |path| origins.of(path).0);
    TxnInputs {
        version: INPUT_VERSION,
        partitions: partitions_of(report, inv, true),
        coordinator: logs,
    }
}

/// The model of every `__transaction_state` directory of `inv`
/// ([`super::decode::replay_logs`]), each named by its identity (the join's [`Origin`]),
/// replayed as `loads` says its coordinator loads it (the release), each of its copies
/// marked ([`LeaderCopies::mark`]).
pub fn replay_logs(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    loads: &LeaderCopies,
) -> Vec<CoordModel> {
    let origins = Origins::new(inv);
    let mut models =
        super::decode::replay_logs(report, inv, opts, |path| origins.of(path).0, loads);
    loads.mark(&mut models);
    // A failed PrepareCommit's abort, held against the COMMIT markers the data partitions
    // hold (`sent`), before any reader reads the history.
    super::sent::settle(&mut models, || {
        (report.partitions.iter())
            .filter(|p| p.topic != super::TRANSACTION_STATE_TOPIC && !p.outcome().txns.is_empty())
            .filter_map(|p| {
                let (o, copy) = origins.of(&p.path);
                copy.is_live().then(|| super::sent::DataPart {
                    domain: o.domain(),
                    topic: &p.topic,
                    partition: p.partition,
                    path: &p.path,
                    txns: &p.outcome().txns,
                })
            })
            .collect()
    });
    models
}

/// The join's partition inputs: each partition's transactions, moved out of `report`.
///
/// Without `all`, a partition without transactions is left out when nothing in the join
/// can read it (the caller knows there is no coordinator log, which names the partitions
/// a transaction spans) and no copy of its topic-partition has transactions (among copies,
/// the join reads the one with the highest log end offset, whether it has transactions or
/// not): many empty partitions then cost the join nothing.
fn partitions_of(report: &mut ScanReport, inv: &Inventory, all: bool) -> Vec<PartitionTxns> {
    let origins = Origins::new(inv);
    let has_txns =
        |p: &crate::partition::results::PartitionReport| !p.carried.outcome.txns.is_empty();
    let wanted: Vec<bool> = {
        let with_txns: std::collections::HashSet<(&str, i32)> = report
            .partitions
            .iter()
            .filter(|p| !all && has_txns(p))
            .map(|p| (p.topic.as_str(), p.partition))
            .collect();
        report
            .partitions
            .iter()
            .map(|p| {
                txns::stats::joined(p)
                    && (all || with_txns.contains(&(p.topic.as_str(), p.partition)))
            })
            .collect()
    };
    let mut out = Vec::with_capacity(wanted.iter().filter(|&&w| w).count());
    for (p, _) in report
        .partitions
        .iter_mut()
        .zip(&wanted)
        .filter(|(_, w)| **w)
    {
        let (origin, _) = origins.of(&p.path);
        out.push(PartitionTxns {
            version: INPUT_VERSION,
            topic: p.topic.clone(),
            partition: p.partition,
            origin,
            ref_time_ms: p.ref_time,
            log_end_offset: p.log_end_offset,
            // Compacted as the replay reads it: the stated policy, else the cleaner's
            // traces in the batches (`PartitionReport::compaction`).
            compacted: if p.compaction().is_some() {
                Some(true)
            } else {
                p.compacted
            },
            // Moved to the join, except where the tiering check reads them after it: a
            // partition whose scan replayed its remote history (`remote_txn_index_extra`
            // holds its remote segments' indexes against their markers).
            txns: match p.tiered.as_ref().is_some_and(|t| t.replayed.is_some()) {
                true => p.outcome().txns.clone(),
                false => (p.carried.outcome.get_mut())
                    .map(|o| std::mem::take(&mut o.txns))
                    .unwrap_or_default(),
            },
            first_txn_batches: (p.carried.outcome.get_mut())
                .map(|o| std::mem::take(&mut o.first_txn_batches).into())
                .unwrap_or_default(),
        });
    }
    out
}

/// Run the join over a finished scan, with the coordinator's models already replayed
/// ([`replay_logs`]), and attach its results to `report`.
pub fn check_models(
    report: &mut ScanReport,
    models: Vec<CoordModel>,
    inv: &Inventory,
    opts: &ScanOptions,
) {
    let parts = partitions_of(report, inv, !models.is_empty());
    let models: Vec<CoordModel> = models
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.at(i))
        .collect();
    let inputs = txns::Joined {
        partitions: &parts,
        coordinator: &models,
    };
    let txn_opts = TxnOptions {
        keep_transactions: opts.keep_cluster_txns,
        coordinator_tolerance_ms: opts.coordinator_tolerance_ms,
        marker_delay_ms: opts.marker_delay_ms,
        ..TxnOptions::default()
    };
    let mut analysis = txns::analyse_joined(&inputs, &txn_opts);
    let origins = Origins::new(inv);
    // (made only to place findings: one entry per partition of the scan)
    let by_path: HashMap<&str, usize> = report
        .partitions
        .iter()
        .enumerate()
        .filter(|_| !analysis.findings.is_empty())
        .map(|(i, p)| (p.path.as_str(), i))
        .collect();
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    // (the cause as placed, its partition, its domain, the hanging transactions it explains)
    let mut causes = Vec::new();
    for placed in std::mem::take(&mut analysis.findings) {
        let origin = match placed.target {
            Target::Partition(i) => &inputs.partitions[i].origin,
            Target::Coordinator(i) => &inputs.coordinator[i].origin,
        };
        let Some(&at) = by_path.get(origin.path.as_str()) else {
            continue; // a __transaction_state partition the scan did not select
        };
        let (o, copy) = origins.of(&origin.path);
        let mut f = placed.finding;
        f.source = source(&o, copy);
        if !placed.causes_hanging.is_empty() {
            causes.push((f.clone(), at, o.domain(), placed.causes_hanging));
        }
        extra.entry(at).or_default().push(f);
    }
    report.add_partition_findings(extra);
    lower_tv01_markers(report, &inputs, &analysis.tv01_markers);
    report.recount_findings();
    link_hanging(report, &origins, &causes);
    report.transactions = Some(analysis);
}

/// Lower the `marker_epoch_not_bumped` finding at each marker of `markers`, whose
/// coordinator record gives a TV0/1 EndTxn ([`txns::end_version`]).
fn lower_tv01_markers(
    report: &mut ScanReport,
    inputs: &txns::Joined<'_>,
    markers: &[txns::end_version::Tv01Marker],
) {
    if markers.is_empty() {
        return;
    }
    let by_path: HashMap<&str, std::ops::Range<usize>> = (report.partitions.iter())
        .map(|p| (p.path.as_str(), p.carried.finding_range.clone()))
        .collect();
    for m in markers {
        let Some(input) = inputs.partitions.get(m.input) else {
            continue;
        };
        let Some(range) = by_path.get(input.origin.path.as_str()) else {
            continue;
        };
        for f in report.findings.get_mut(range.clone()).into_iter().flatten() {
            if txns::end_version::is_finding_of(f, m) {
                txns::end_version::lower(f, m);
            }
        }
    }
}

/// Name each cause's id in the `caused_by` of the `hanging_transaction`/`open_transaction`
/// findings it explains (same topic-partition, producer id and first offset, in its domain;
/// the cause may sit on another partition, e.g. the coordinator's).
fn link_hanging(
    report: &mut ScanReport,
    origins: &Origins<'_>,
    causes: &[(Finding, usize, txns::Domain, Vec<txns::rules::HangingRef>)],
) {
    let mut links: Vec<(usize, String)> = Vec::new();
    for (cause, at, domain, hanging) in causes {
        let Some(id) = report
            .partition_findings(*at)
            .iter()
            .find(|f| {
                f.kind == cause.kind
                    && f.offset == cause.offset
                    && f.producer_id == cause.producer_id
            })
            .map(|f| f.id.clone())
        else {
            continue;
        };
        for (topic, partition, pid, first) in hanging {
            for p in &report.partitions {
                if p.topic.as_str() != &**topic
                    || p.partition != *partition
                    || origins.of(&p.path).0.domain() != *domain
                {
                    continue;
                }
                for fi in p.carried.finding_range.clone() {
                    let h = &report.findings[fi];
                    if matches!(h.kind, Kind::HangingTransaction | Kind::OpenTransaction)
                        && h.producer_id == Some(*pid)
                        && h.offset == Some(*first)
                    {
                        links.push((fi, id.clone()));
                    }
                }
            }
        }
    }
    if links.is_empty() {
        return;
    }
    for (fi, id) in links {
        if let Some(h) = report.findings.get_mut(fi)
            && !h.caused_by.contains(&id)
        {
            h.caused_by.push(id);
        }
    }
    report.recount_findings();
}
