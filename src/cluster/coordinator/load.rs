//! Building a [`CoordinatorView`] from the records of `__transaction_state` partitions: the
//! ones a scan's walk kept ([`crate::partition::walked::ClusterInputs::txn_log`]), and, for partitions
//! outside the scan's selection, one walk of their own ([`walk_unscanned`]).

use super::{CoordinatorTxn, CoordinatorView, Source, TRANSACTION_STATE_TOPIC, history, tp_list};
use crate::cluster::report::ScanReport;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{ClusterInputs, LogItem};
use crate::read::format::txnlog::{self, LogKey};
use std::collections::BTreeMap;

/// The records of a `__transaction_state` partition directory the scan did not walk,
/// with a walk of their own.
fn walk_dir(p: &PartitionDir, opts: &ScanOptions) -> ClusterInputs {
    crate::partition::walked::collect_dir(p, false, opts.max_bytes, opts.max_decompressed, None)
}

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
                let inputs = walk_dir(p, opts);
                view.replay_inputs(tp.partition, &p.path.display().to_string(), &inputs);
            }
        }
        view
    }

    /// One view per cluster (`crate::discover::identity::ClusterKey`) holding a live
    /// `__transaction_state` partition, each replaying only that cluster's partitions.
    /// Every partition is walked here; [`Self::load_clusters_from`] reuses a scan's walk.
    pub fn load_clusters(inv: &Inventory, opts: &ScanOptions) -> Vec<CoordinatorView> {
        Self::load_clusters_from(&ScanReport::default(), inv, opts)
    }

    /// [`Self::load_clusters`] from the records the scan's walk kept
    /// ([`crate::partition::walked::ClusterInputs::txn_log`]) for every partition of `report`; only
    /// the `__transaction_state` partitions the scan did not select are walked here.
    pub fn load_clusters_from(
        report: &ScanReport,
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        Self::load_clusters_with(report, &walk_unscanned(report, inv, opts), inv, opts)
    }

    /// [`Self::load_clusters_from`] with the partitions outside the scan already walked
    /// (`walk_unscanned`).
    pub(crate) fn load_clusters_with(
        report: &ScanReport,
        unscanned: &UnscannedLogs,
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        use crate::discover::identity::{ClusterKey, Identities, same_cluster};
        let replay = |view: &mut CoordinatorView, p: &PartitionDir, partition: i32| {
            let path = p.path.display().to_string();
            match logs_of(report, unscanned, &path) {
                Some(inputs) => view.replay_inputs(partition, &path, inputs),
                None => view.replay_inputs(partition, &path, &walk_dir(p, opts)),
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
    /// Replay the records one walk kept of `__transaction_state-<partition>` (directory
    /// `path`), in offset order.
    fn replay_inputs(&mut self, partition: i32, path: &str, inputs: &ClusterInputs) {
        self.partitions_read.insert(partition);
        for item in inputs.txn_log.iter().flatten() {
            match item {
                LogItem::Record(r) => {
                    let src = Source {
                        partition,
                        offset: r.offset,
                        path: path.to_string(),
                    };
                    self.history.record(
                        r.key.as_deref(),
                        r.value.as_deref(),
                        history::HistoryRecord {
                            source: src.clone(),
                            segment: inputs.segment_name(r.segment).to_string(),
                            position: r.position,
                            timestamp: r.timestamp,
                            content: history::Content::Tombstone,
                        },
                    );
                    if let Err(e) = self.apply(r.key.as_deref(), r.value.as_deref(), src) {
                        self.errors
                            .push((path.to_string(), format!("offset {}: {e}", r.offset)));
                    }
                }
                LogItem::Undecodable { message, .. } => {
                    self.errors.push((path.to_string(), message.clone()));
                    self.unread.push((path.to_string(), message.clone()));
                }
                LogItem::Marker { .. } => {}
            }
        }
    }

    /// Apply one record (later offsets replace earlier ones; across copies of the same
    /// partition, the higher offset wins).
    fn apply(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        src: Source,
    ) -> Result<(), crate::read::format::FormatError> {
        let Some(key) = key else { return Ok(()) };
        let id = match txnlog::parse_key(key)? {
            LogKey::Unknown { .. } => return Ok(()),
            LogKey::Transaction(k) => k.transactional_id.unwrap_or_default().into_owned(),
        };
        let v = txnlog::parse_value(value)?;
        self.records += 1;
        let existing = self.ids.get_mut(&id);
        if let Some(e) = &existing {
            let newest = e.tombstoned.as_ref().unwrap_or(&e.source);
            if newest.partition == src.partition && newest.offset >= src.offset {
                return Ok(());
            }
        }
        let Some(v) = v else {
            if let Some(e) = existing {
                e.tombstoned = Some(src);
            }
            return Ok(());
        };
        let partitions = tp_list(&v.partitions);
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
        self.ids.insert(id, txn);
        Ok(())
    }
}
