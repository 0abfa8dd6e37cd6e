//! Building a [`CoordinatorView`] from the decoded records of `__transaction_state`
//! partitions ([`super::decode`]): the ones a scan's walk kept
//! ([`crate::partition::walked::ClusterInputs::txn_log`]), and, for partitions outside the
//! scan's selection, one walk of their own ([`walk_unscanned`]).

use super::decode::{decode_log, decode_logs, walk_dir};
use super::{CoordinatorTxn, CoordinatorView, Source, TRANSACTION_STATE_TOPIC};
use crate::cluster::report::ScanReport;
use crate::cluster::txns::{CoordRecord, CoordinatorLog, Origin};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::ClusterInputs;
use std::collections::BTreeMap;

/// The records of the `__transaction_state` partition directories outside a scan's
/// selection, by path (see [`walk_unscanned`]).
pub type UnscannedLogs = BTreeMap<String, ClusterInputs>;

/// Walk, once, every `__transaction_state` partition directory of `inv` whose records
/// `report` does not hold (not selected by `--topic`/`--partition`): the coordinator's
/// log is evidence for every data partition. Both coordinator checks read the result.
pub fn walk_unscanned(report: &ScanReport, inv: &Inventory, opts: &ScanOptions) -> UnscannedLogs {
    inv.partitions
        .iter()
        .filter(|p| {
            p.tp.as_ref()
                .is_some_and(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
        })
        .map(|p| (p.path.display().to_string(), p))
        .filter(|(path, _)| logs_of(report, &UnscannedLogs::new(), path).is_none())
        .map(|(path, p)| (path, walk_dir(p, opts)))
        .collect()
}

/// The walked records of the `__transaction_state` directory `path`: from the scan's
/// results, else from `unscanned`.
pub fn logs_of<'a>(
    report: &'a ScanReport,
    unscanned: &'a UnscannedLogs,
    path: &str,
) -> Option<&'a ClusterInputs> {
    report
        .partitions
        .iter()
        .find(|p| p.path == path && p.carried.cluster_inputs.txn_log.is_some())
        .map(|p| &p.carried.cluster_inputs)
        .or_else(|| unscanned.get(path))
}

impl CoordinatorView {
    /// Replay every `__transaction_state` partition of `inv` (read-only; each is walked
    /// here: a scan's results already hold their records, see [`Self::load_clusters_from`]).
    pub fn load(inv: &Inventory, opts: &ScanOptions) -> CoordinatorView {
        let mut view = CoordinatorView::default();
        for p in &inv.partitions {
            if let Some(tp) =
                p.tp.as_ref()
                    .filter(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
            {
                let path = p.path.display().to_string();
                let log = decode_log(tp.partition, origin(&path), 0, &walk_dir(p, opts));
                view.replay_log(&log);
            }
        }
        view
    }

    /// Replay the `__transaction_state` records walks kept elsewhere (an evidence bundle's
    /// partition results): `(partition number, directory, its cluster inputs)`, in the
    /// order [`Self::load`] takes the directories (topic-partition, then path).
    pub fn from_inputs<'a>(
        logs: impl IntoIterator<Item = (i32, &'a str, &'a ClusterInputs)>,
    ) -> CoordinatorView {
        let mut view = CoordinatorView::default();
        for (partition, path, inputs) in logs {
            view.replay_log(&decode_log(partition, origin(path), 0, inputs));
        }
        view
    }

    /// One view per cluster (`crate::discover::identity::ClusterKey`) holding a live
    /// `__transaction_state` partition, each replaying only that cluster's partitions.
    /// Every partition is walked here; [`Self::load_clusters_from`] reuses a scan's walk.
    pub fn load_clusters(inv: &Inventory, opts: &ScanOptions) -> Vec<CoordinatorView> {
        Self::load_clusters_from(&mut ScanReport::default(), inv, opts)
    }

    /// [`Self::load_clusters`] from the records the scan's walk kept
    /// ([`crate::partition::walked::ClusterInputs::txn_log`], taken out of `report` once
    /// decoded) for every partition of `report`; only the `__transaction_state` partitions
    /// the scan did not select are walked here.
    pub fn load_clusters_from(
        report: &mut ScanReport,
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        let unscanned = walk_unscanned(report, inv, opts);
        let logs = decode_logs(report, &unscanned, inv, opts, origin);
        Self::load_clusters_of(&logs, inv, opts)
    }

    /// [`Self::load_clusters`] from the decoded logs of the `__transaction_state`
    /// directories of `inv` ([`decode_logs`]).
    pub(crate) fn load_clusters_of(
        logs: &[CoordinatorLog],
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        use crate::discover::identity::{ClusterKey, Identities, same_cluster};
        let by_path: BTreeMap<&str, &CoordinatorLog> =
            logs.iter().map(|l| (l.origin.path.as_str(), l)).collect();
        let replay = |view: &mut CoordinatorView, p: &PartitionDir, partition: i32| {
            let path = p.path.display().to_string();
            match by_path.get(path.as_str()) {
                Some(log) => view.replay_log(log),
                None => {
                    view.replay_log(&decode_log(partition, origin(&path), 0, &walk_dir(p, opts)))
                }
            }
        };
        let ids = Identities::load(inv);
        let mut groups: BTreeMap<ClusterKey, Vec<(&PartitionDir, i32)>> = BTreeMap::new();
        let mut sources = BTreeMap::new();
        let mut out = Vec::new();
        for p in &inv.partitions {
            let Some(tp) =
                p.tp.as_ref()
                    .filter(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
            else {
                continue;
            };
            let src = ids.source(p);
            if src.copy.is_live() {
                let key = ClusterKey::of(&src);
                sources.entry(key.clone()).or_insert(src);
                groups.entry(key).or_default().push((p, tp.partition));
            } else {
                // A non-live copy: its own log is still checked (rule 31), but it is no
                // coordinator's state, so its view joins nothing (`cluster: None`).
                let mut view = CoordinatorView::default();
                replay(&mut view, p, tp.partition);
                out.push(view);
            }
        }
        if groups.is_empty() {
            return out;
        }
        let metadata = crate::discover::compaction::load_cluster_metadata(
            inv,
            &ids,
            opts.max_bytes,
            opts.max_decompressed,
        );
        for (key, parts) in groups {
            let mut view = CoordinatorView::default();
            for (p, partition) in parts {
                replay(&mut view, p, partition);
            }
            let src = &sources[&key];
            view.partition_count = metadata
                .iter()
                .filter(|m| same_cluster(src, &m.source).is_same())
                .find_map(|m| m.partition_count(TRANSACTION_STATE_TOPIC));
            view.cluster = Some(key);
            out.push(view);
        }
        out
    }

    /// Replay one decoded `__transaction_state` partition copy, in offset order: every
    /// record goes to the history rules and to the latest-value index.
    fn replay_log(&mut self, log: &CoordinatorLog) {
        let path = &log.origin.path;
        self.partitions_read.insert(log.partition);
        for u in &log.records_not_read {
            self.errors.push((path.clone(), u.reason.clone()));
            self.unread.push((path.clone(), u.reason.clone()));
        }
        for r in &log.records {
            let src = Source {
                partition: log.partition,
                offset: r.offset,
                path: path.clone(),
            };
            self.history
                .record(r, log.segment_name(r.segment), src.clone());
            if let Some(e) = r.problem.as_deref().and_then(|p| p.error()) {
                self.errors
                    .push((path.clone(), format!("offset {}: {e}", r.offset)));
            } else if r.problem.is_none() {
                self.apply(r, src);
            }
        }
    }

    /// Apply one record (later offsets replace earlier ones; across copies of the same
    /// partition, the higher offset wins).
    fn apply(&mut self, r: &CoordRecord, src: Source) {
        let id = &r.transactional_id;
        self.records += 1;
        let existing = self.ids.get_mut(id);
        if let Some(e) = &existing {
            let newest = e.tombstoned.as_ref().unwrap_or(&e.source);
            if newest.partition == src.partition && newest.offset >= src.offset {
                return;
            }
        }
        let Some(v) = &r.value else {
            if let Some(e) = existing {
                e.tombstoned = Some(src);
            }
            return;
        };
        let partitions = v.partitions.clone();
        let last_txn_partitions = if v.state.is_in_progress() {
            partitions.clone()
        } else {
            match &existing {
                Some(e)
                    if e.producer_id == v.producer_id
                        && e.tombstoned.is_none()
                        && (e.producer_epoch == v.producer_epoch
                            // TV2: the Complete record may carry the bumped epoch
                            || e.producer_epoch.checked_add(1) == Some(v.producer_epoch)) =>
                {
                    e.last_txn_partitions.clone()
                }
                _ => Vec::new(),
            }
        };
        let txn = CoordinatorTxn {
            transactional_id: id.clone(),
            producer_id: v.producer_id,
            previous_producer_id: v.previous_producer_id,
            next_producer_id: v.next_producer_id,
            producer_epoch: v.producer_epoch,
            timeout_ms: v.timeout_ms,
            state: v.state,
            partitions,
            last_txn_partitions,
            last_update_ms: v.last_update_ms,
            start_ms: v.start_ms,
            client_transaction_version: v.client_transaction_version,
            tombstoned: None,
            source: src,
        };
        self.ids.insert(id.clone(), txn);
    }
}

/// The origin of a `__transaction_state` directory when only its path is known (the view
/// reads the path alone).
fn origin(path: &str) -> Origin {
    Origin {
        path: path.to_string(),
        ..Origin::default()
    }
}
