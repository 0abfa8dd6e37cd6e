//! Building a [`CoordinatorView`] from the decoded records of `__transaction_state`
//! partitions ([`super::decode`]): the ones a scan's walk kept
//! ([`crate::partition::walked::ClusterInputs::txn_log`]), and, for partitions outside the
//! scan's selection or whose records the walk did not keep, one streaming read of their
//! own (`decode::Walked::Disk`).

use super::decode::{Walked, replay_logs, view_only};
use super::leader::LeaderCopies;
use super::model::CoordModel;
use super::{CoordinatorView, Source, TRANSACTION_STATE_TOPIC};
use crate::cluster::report::ScanReport;
use crate::cluster::txns::Origin;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::{ClusterInputs, ReadErrors, SegmentNames};
use std::collections::{BTreeMap, BTreeSet};

impl CoordinatorView {
    /// Replay every `__transaction_state` partition of `inv` (read-only; each is walked
    /// here: a scan's results already hold their records, see [`Self::load_clusters_from`]).
    pub fn load(inv: &Inventory, opts: &ScanOptions) -> CoordinatorView {
        Self::load_as(inv, opts, &LeaderCopies::of_release(inv, opts))
    }

    /// [`Self::load`] with the coordinator's copy choice `leaders` (the one the scan's
    /// views and join make, `super::leader`): of a partition whose current leader's copy
    /// is named, only that copy's values are taken (the others' own record anomalies and
    /// errors still are); where none is named, each id's value comes from the copy with the
    /// highest offset, as in [`Self::load`]. What `--transactional-id` resolves through.
    pub(crate) fn load_as(
        inv: &Inventory,
        opts: &ScanOptions,
        leaders: &LeaderCopies,
    ) -> CoordinatorView {
        Self::load_copies(inv, leaders, |p| {
            Some(Walked::Disk(p, ReadErrors::Report, opts))
        })
    }

    /// [`Self::load_as`] from the records walks kept elsewhere (a merge's partitions):
    /// `kept(path)` gives the cluster inputs and segment names of the directory at `path`
    /// (a directory it gives none of is not read).
    pub(crate) fn load_kept_as<'a>(
        inv: &'a Inventory,
        leaders: &LeaderCopies,
        kept: impl Fn(&str) -> Option<(&'a ClusterInputs, &'a SegmentNames)>,
    ) -> CoordinatorView {
        Self::load_copies(inv, leaders, |p| {
            let (inputs, names) = kept(p.path.to_str()?)?;
            Some(Walked::Kept(inputs, names))
        })
    }

    /// Every `__transaction_state` directory of `inv` in its order, read by `walked`
    /// (`None`: not read), each copy's values taken when `leaders` loads it.
    fn load_copies<'a>(
        inv: &'a Inventory,
        leaders: &LeaderCopies,
        walked: impl Fn(&'a PartitionDir) -> Option<Walked<'a>>,
    ) -> CoordinatorView {
        let mut view = CoordinatorView::default();
        for p in &inv.partitions {
            if let Some(tp) =
                p.tp.as_ref()
                    .filter(|tp| tp.topic == TRANSACTION_STATE_TOPIC)
                && let Some(walked) = walked(p)
            {
                let path = p.path.display().to_string();
                let how = (view_only(), true, leaders.loaded_by_kafka_4_3(&path));
                let m = walked.replay(tp.partition, origin(&path), 0, how);
                view.absorb_as(&m, leaders.loads(&path));
            }
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
    /// the scan did not select, or whose records it did not keep, are read here
    /// (streaming, one batch at a time).
    pub fn load_clusters_from(
        report: &mut ScanReport,
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        let models = replay_logs(
            report,
            inv,
            opts,
            origin,
            &LeaderCopies::of_release(inv, opts),
        );
        Self::load_clusters_of(&models, inv, opts)
    }

    /// [`Self::load_clusters`] from the models of the `__transaction_state` directories of
    /// `inv` ([`replay_logs`]).
    pub(crate) fn load_clusters_of(
        logs: &[CoordModel],
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> Vec<CoordinatorView> {
        use crate::discover::identity::{ClusterKey, Identities, same_cluster};
        let by_path: BTreeMap<&str, &CoordModel> =
            logs.iter().map(|l| (l.origin.path.as_str(), l)).collect();
        // `led`: the partitions of the view whose metadata-named leader's copy is among
        // `logs`, which alone is loaded (`super::leader`). A copy not among `logs` is read
        // here, with the release `opts` gives.
        let release = LeaderCopies::of_release(inv, opts);
        let replay = |view: &mut CoordinatorView, p: &PartitionDir, n: i32, led: &BTreeSet<i32>| {
            let path = p.path.display().to_string();
            match by_path.get(path.as_str()) {
                Some(m) => view.absorb_as(m, m.leader_copy || !led.contains(&n)),
                None => {
                    let walked = Walked::Disk(p, ReadErrors::Report, opts);
                    let how = (view_only(), true, release.loaded_by_kafka_4_3(&path));
                    view.absorb(&walked.replay(n, origin(&path), 0, how))
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
                replay(&mut view, p, tp.partition, &BTreeSet::new());
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
            // Known before the replays: an id is served from the partition it maps to.
            let src = &sources[&key];
            view.partition_count = metadata
                .iter()
                .filter(|m| same_cluster(src, &m.source).is_same())
                .find_map(|m| m.partition_count(TRANSACTION_STATE_TOPIC));
            let led: BTreeSet<i32> = (parts.iter())
                .filter(|(p, _)| {
                    let path = p.path.display().to_string();
                    by_path.get(path.as_str()).is_some_and(|m| m.leader_copy)
                })
                .map(|(_, n)| *n)
                .collect();
            for (p, partition) in parts {
                replay(&mut view, p, partition, &led);
            }
            view.cluster = Some(key);
            out.push(view);
        }
        out
    }

    /// Take in the model of one `__transaction_state` partition copy: its history, and
    /// each id's latest value (later offsets replace earlier ones; across copies of the
    /// same partition, the higher offset wins; a tombstone marks the value removed).
    fn absorb(&mut self, m: &CoordModel) {
        self.absorb_as(m, true);
    }

    /// [`Self::absorb`]; unless `loaded`, the copy is one the coordinator does not load
    /// (another copy of its partition is the metadata-named leader's: `super::leader`), so
    /// only its own log's record anomalies and errors are taken: none of its values, its
    /// latest records (the time anomalies of what a coordinator holds) or what it left
    /// unread (no verdict rests on it).
    fn absorb_as(&mut self, m: &CoordModel, loaded: bool) {
        let path = &m.origin.path;
        self.partitions_read.insert(m.partition);
        for u in &m.records_not_read {
            self.errors.push((path.clone(), u.reason.clone()));
            if loaded {
                self.unread.push((path.clone(), u.reason.clone()));
            }
        }
        self.errors
            .extend(m.errors.iter().map(|e| (path.clone(), e.clone())));
        self.history
            .anomalies
            .extend(m.history.anomalies.iter().cloned());
        self.records += m.records;
        if !loaded {
            return;
        }
        if let Some(stop) = m.load_stop.filter(|&o| m.last_usable_offset > o) {
            self.load_stops.push((path.clone(), stop));
        }
        self.history
            .latest
            .extend(m.history.latest.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (id, l) in &m.ids {
            if let Some(t) = &l.first_tombstone {
                self.tombstone(id, t);
            }
            let Some(v) = &l.value else { continue };
            if !self.supersedes(id, &v.source) {
                if let Some(t) = &v.tombstoned {
                    self.tombstone(id, t);
                }
                continue;
            }
            self.ids.insert(id.clone(), v.clone());
        }
    }

    /// Whether a record at `src` replaces what the view holds of `id`: with the topic's
    /// partition count known, a record of the partition the id maps to over one of another
    /// partition, never the reverse (`TransactionStateManager.getTransactionState` reads the
    /// id's own partition only: after a partition-count change its values left in the old
    /// partition are served by nobody, `TransactionStateManagerTest.testDeletePartition`);
    /// otherwise across partitions the later read, across copies of the same partition the
    /// higher offset.
    fn supersedes(&self, id: &str, src: &Source) -> bool {
        let owner = (self.partition_count)
            .map(|n| crate::discover::identity::transaction_partition_for(id, n));
        self.ids.get(id).is_none_or(|e| {
            let newest = e.tombstoned.as_ref().unwrap_or(&e.source);
            match owner.map(|o| (newest.partition == o, src.partition == o)) {
                Some((true, false)) => false,
                Some((false, true)) => true,
                _ => newest.partition != src.partition || newest.offset < src.offset,
            }
        })
    }

    /// A tombstone of `id` at `src` removes the value the view holds.
    fn tombstone(&mut self, id: &str, src: &Source) {
        if self.supersedes(id, src)
            && let Some(e) = self.ids.get_mut(id)
        {
            e.tombstoned = Some(src.clone());
        }
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
