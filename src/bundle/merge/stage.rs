//! A merge in two steps: the bundles made one report and one inventory, as a scan's walk
//! leaves them ([`stage`]), then the cluster stage over them ([`Staged::merge`]). Between
//! the two, `--transactional-id` resolves through the coordinator's log the bundles carry
//! with the copy choice of the replay of the metadata logs that the cluster stage then
//! reads (`request`): the metadata logs are replayed once.

use super::{
    Bundles, Merged, check_overlap, check_remote_history, content, discovery_order, report,
    unreplayed_warnings,
};
use crate::bundle::BundleError;
use crate::cluster::coordinator::{CoordinatorView, LeaderCopies};
use crate::cluster::tiering::{MetadataReplay, RemoteStorage};
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use crate::pipeline::Leadership;
use crate::results::{PartitionReport, ScanOptions, ScanReport};
use std::path::{Path, PathBuf};

/// Bundles made one report and one inventory, before the cluster stage.
#[derive(Debug)]
pub(crate) struct Staged {
    report: ScanReport,
    inventory: Inventory,
    options: ScanOptions,
    /// The first bundle, and whether its collect replayed the remote history.
    first_path: PathBuf,
    collected: bool,
}

/// Check that `bundles` can be merged (collected with the same options, no directory in
/// two of them) and make their report and inventory, in discovery's order; with `base`'s
/// threads and what-to-keep settings, the per-partition options being the bundles' own.
pub(crate) fn stage(bundles: Bundles, base: &ScanOptions) -> Result<Staged, BundleError> {
    let Bundles { list, parts, dirs } = bundles;
    let (first_path, first) = list
        .first()
        .ok_or_else(|| content(Path::new(""), "merge", "no bundle given"))?;
    for (path, b) in &list[1..] {
        if b.header.options != first.header.options {
            return Err(BundleError::Options {
                path: path.clone(),
                first: first_path.clone(),
            });
        }
    }
    let (first_path, collected) = (first_path.clone(), first.header.options.remote_history);
    let options = first.header.options.apply(base);
    check_overlap(&list, &dirs)?;
    let order = discovery_order(&list, &parts, &dirs);
    let inventory = dirs.finish();
    let mut report = report(list, parts, order);
    if !options.keep_producers {
        // As a scan seals each replay: only the producers' number stays.
        for p in &mut report.partitions {
            if let Some(o) = p.carried.outcome.get_mut() {
                o.producers = Vec::new();
            }
        }
    }
    Ok(Staged {
        report,
        inventory,
        options,
        first_path,
        collected,
    })
}

impl Staged {
    /// The inventory rebuilt from the bundles.
    pub(crate) fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The merge's options: the bundles' per-partition ones over the base.
    pub(crate) fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// The paths the bundles' collects were given, in order: the merged report's `inputs`.
    pub(crate) fn inputs(&self) -> &[String] {
        &self.report.inputs
    }

    /// The coordinator's view of every `__transaction_state` directory the bundles hold,
    /// from the records their collects kept, replayed as a scan's `--transactional-id`
    /// replays the directories (`CoordinatorView::load_as`, with the copy choice
    /// `leaders`).
    pub(crate) fn coordinator_view(&self, leaders: &LeaderCopies) -> CoordinatorView {
        use crate::cluster::coordinator::TRANSACTION_STATE_TOPIC;
        let kept: std::collections::HashMap<&str, &PartitionReport> = (self.report.partitions)
            .iter()
            .filter(|r| r.topic == TRANSACTION_STATE_TOPIC)
            .map(|r| (r.path.as_str(), r))
            .collect();
        CoordinatorView::load_kept_as(&self.inventory, leaders, |path| {
            let r = kept.get(path)?;
            Some((&r.carried.cluster_inputs, &r.carried.segment_names))
        })
    }

    /// The cluster stage over the staged report, each partition handed to `on_partition`
    /// before it runs (as `pipeline::analyse_streaming` does); `leadership`: the replay of
    /// the inventory's metadata logs when the caller made it (else made here).
    pub(crate) fn merge(
        self,
        on_partition: &mut dyn FnMut(&PartitionReport, &[Finding]),
        leadership: Option<Leadership>,
    ) -> Result<Merged, BundleError> {
        let Staged {
            mut report,
            inventory,
            options,
            first_path,
            collected,
        } = self;
        // The remote log metadata the bundles carry, replayed once: an object-store
        // `--remote-storage` is fetched (as a scan fetches it) for the objects it names, what
        // the collects could not replay is said, and the tiering check reads it.
        let replayed = MetadataReplay::of(&report, &inventory, &options);
        let remote = RemoteStorage::after_scan(&options, &replayed);
        check_remote_history(&first_path, collected, &remote)?;
        remote.record(&mut report);
        for (i, p) in report.partitions.iter().enumerate() {
            on_partition(p, report.partition_findings(i));
        }
        let run = remote.options(&options);
        let warnings = unreplayed_warnings(&report, &inventory, &run, &replayed);
        let leadership = leadership.unwrap_or_else(|| Leadership::replay(&inventory, &run));
        crate::pipeline::run_cluster_checks_with(
            &mut report,
            &inventory,
            &run,
            &replayed,
            &leadership,
        );
        drop(run);
        drop(remote);
        Ok(Merged {
            report,
            options,
            inventory,
            warnings,
        })
    }
}
