//! The pipeline every command runs: discover inputs → one walk per segment and the
//! per-partition analysis ([`crate::partition::scan`]: producer-state replay, integrity rules, the
//! recovery model) → cluster checks over the per-partition results (coordinator
//! confirmation, replica comparison) → the report.
//!
//! Cluster checks consume the typed per-partition results ([`crate::results`]) and return
//! findings per partition; nothing below this module imports them, so the stages form a
//! line, not a web. `scan` and `verify` both run [`analyse`].

use crate::cluster::leadership::ClusterHistory;
use crate::cluster::tiering::{MetadataReplay, RemoteStorage};
use crate::discover::layout::{self, Inventory};
use crate::results::{ScanOptions, ScanReport};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A cluster check: reads the finished per-partition results (and the inventory, for the
/// files only it decodes, and the run's one replay of each cluster's KRaft metadata log)
/// and returns findings keyed by partition index.
pub(crate) type ClusterCheck = fn(
    &ScanReport,
    &Inventory,
    &ScanOptions,
    &[ClusterHistory],
) -> BTreeMap<usize, Vec<crate::Finding>>;

/// The cluster checks, in the order they run. Each sees the findings of the ones before
/// it (the coordinator's confirmation changes `hanging_transaction` in place). The
/// tiering check runs after them over the run's one replay of the remote log metadata
/// (`run_cluster_checks_with`).
pub fn cluster_checks() -> &'static [(&'static str, ClusterCheck)] {
    &[
        ("replicas", crate::cluster::replicas::check),
        // One broker's two log dirs holding one partition: its start fails.
        ("duplicates", crate::cluster::duplicates::check),
        // Acknowledged data a copy loses at its next start, and which copy holds it.
        ("lost", crate::cluster::lost::check),
        // The group coordinator's load of __consumer_offsets.
        ("groups", crate::cluster::groups::cluster_check),
        // Committed offsets held against their partitions.
        ("consumers", crate::cluster::consumers::cluster_check),
    ]
}

/// Called once per partition, in report order, with the partition and its own findings as
/// soon as its per-partition analysis is final: after every partition is walked (a
/// partition's hanging verdicts rest on the newest timestamp of its whole log dir) and
/// before the cluster checks, which may still add findings to it and annotate its
/// `hanging_transaction`/`open_transaction` findings (`scan --format jsonl` streams with it).
pub(crate) type OnPartition<'a> =
    &'a mut dyn FnMut(&crate::results::PartitionReport, &[crate::Finding]);

/// Per-partition analysis of an inventory, then every cluster check.
pub fn analyse(inv: &Inventory, opts: &ScanOptions) -> ScanReport {
    analyse_streaming(inv, opts, &mut |_, _| {})
}

/// The per-partition stage alone ([`crate::partition::scan::scan_inventory`]) as a report
/// without the cluster checks: what [`run_cluster_checks`] takes.
///
/// With `--remote-storage`, each tiered partition's remote segments are replayed before
/// its local ones (`cluster::tiering::history`), so the analysis covers the
/// whole history; a remote storage that cannot be read is an input error of the report.
pub fn scan_partitions(inv: &Inventory, opts: &ScanOptions) -> ScanReport {
    scan_prepared(inv, opts, &mut RemoteStorage::before_scan(inv, opts))
}

/// [`scan_partitions`] with the remote storage `remote` made ready from `opts` (which
/// `collect` adds what to keep to): run with the storage it reads, its error recorded.
pub(crate) fn scan_prepared(
    inv: &Inventory,
    opts: &ScanOptions,
    remote: &mut RemoteStorage,
) -> ScanReport {
    let run = remote.options(opts);
    let history = remote.history(inv, &run);
    let mut report: ScanReport =
        crate::partition::scan::scan_inventory_with(inv, &run, &history).into();
    remote.record(&mut report);
    report
}

/// [`analyse`], handing each partition to `on_partition` before the cluster checks run.
pub fn analyse_streaming(
    inv: &Inventory,
    opts: &ScanOptions,
    on_partition: OnPartition<'_>,
) -> ScanReport {
    analyse_streaming_with(inv, opts, on_partition, None)
}

/// [`analyse_streaming`] with `leadership`, the replay of `inv`'s metadata logs when the
/// caller made it before the walk (`--transactional-id` reads it first: `request`);
/// `None`: made here, after the walk.
pub(crate) fn analyse_streaming_with(
    inv: &Inventory,
    opts: &ScanOptions,
    on_partition: OnPartition<'_>,
    leadership: Option<Leadership>,
) -> ScanReport {
    analyse_over(inv, opts, on_partition, leadership.as_ref()).0
}

/// [`analyse_streaming_with`] over `leadership` when given (else replayed after the walk,
/// so that its histories are not held while the partitions are walked), returning the
/// replay it used with the report.
fn analyse_over<'l>(
    inv: &Inventory,
    opts: &ScanOptions,
    on_partition: OnPartition<'_>,
    leadership: Option<&'l Leadership>,
) -> (ScanReport, std::borrow::Cow<'l, Leadership>) {
    // An object-store `--remote-storage` is fetched first (kept until the report is made).
    let mut remote = RemoteStorage::before_scan(inv, opts);
    let mut report = scan_prepared(inv, opts, &mut remote);
    release_freed_memory();
    for (i, p) in report.partitions.iter().enumerate() {
        on_partition(p, report.partition_findings(i));
    }
    let run = remote.options(opts);
    let replayed = MetadataReplay::of(&report, inv, &run);
    let leadership = match leadership {
        Some(l) => std::borrow::Cow::Borrowed(l),
        None => std::borrow::Cow::Owned(Leadership::replay(inv, &run)),
    };
    run_cluster_checks_with(&mut report, inv, &run, &replayed, &leadership);
    (report, leadership)
}

/// [`analyse`], then the consumers' view of its report
/// ([`crate::cluster::consumers::build`]) over the same one replay of the KRaft metadata
/// logs (the leader-epoch lineage reads it; `build` alone replays them again).
pub fn analyse_consumers(
    inv: &Inventory,
    opts: &ScanOptions,
    keep: &crate::cluster::consumers::ConsumersOptions,
) -> (ScanReport, crate::cluster::consumers::ConsumerView) {
    let (report, leadership) = analyse_over(inv, opts, &mut |_, _| {}, None);
    let view =
        crate::cluster::consumers::build_over(&report, inv, opts, keep, &leadership.histories);
    (report, view)
}

/// The cluster checks over finished per-partition results. They read what each
/// partition's walk kept ([`crate::results::PartitionReport::cluster_inputs`]), never the
/// partitions' segments again; only `__transaction_state` partitions outside the scan's
/// selection (`--topic`, `--partition`), or larger than the walk keeps
/// ([`ScanOptions::keep_coordinator_bytes`]), are read here, once, streaming.
pub fn run_cluster_checks(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) {
    let replayed = MetadataReplay::of(report, inv, opts);
    run_cluster_checks_with(report, inv, opts, &replayed, &Leadership::replay(inv, opts));
}

/// [`run_cluster_checks`] over `replayed`, the run's one replay of the remote log
/// metadata ([`MetadataReplay::of`] over `report`), which the caller may have read
/// before (a merge's mirror of an object store, what it cannot replay), and over
/// `leadership`, the run's one replay of the KRaft metadata logs of `inv`.
pub(crate) fn run_cluster_checks_with(
    report: &mut ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    replayed: &MetadataReplay,
    leadership: &Leadership,
) {
    // Confirm (or refute) hanging transactions with the coordinator's log, when present:
    // this one rewrites existing findings, so it runs first and in place.
    // The coordinator's log is evidence for every data partition: its partitions outside
    // the selection, and those whose walk kept none of their records (more than
    // `ScanOptions::keep_coordinator_bytes`), are read here, streaming.
    // Its records are decoded once, for the confirmation, the coordinator's history rules
    // and the join (the walked bytes are dropped as they are decoded).
    // A copy's open transaction whose marker another copy holds is a follower behind, not
    // a hanging transaction: said before any check reads it.
    crate::cluster::replicas::demote_unreplicated_markers(report, inv);
    // An open transaction whose producer's earlier markers elsewhere in its log dir show
    // its records stamped with older (event) times is not idle that long.
    crate::cluster::txns::clock::floor_from_earlier_markers(report);
    // The run's one replay of each cluster's KRaft metadata log (`leadership`, pure): the
    // coordinator's copy choice reads its current leaders now, the leadership findings
    // come last.
    let copies = leadership.coordinator_copies(inv, opts);
    let mut models = crate::cluster::coordinator::cluster::replay_logs(report, inv, opts, &copies);
    drop(copies);
    leadership.scope_coordinator_loads(report, opts, &mut models);
    release_freed_memory();
    crate::cluster::coordinator::annotate_models(report, &models, inv, opts);
    // Join each transaction's partitions and its coordinator record; it links
    // hanging transactions to their root cause in place and keeps the joined transactions.
    // The join works per producer id and per transaction in parallel: on the
    // scan's own number of threads.
    crate::partition::scan::with_threads(opts.threads, || {
        crate::cluster::coordinator::cluster::check_models(report, models, inv, opts)
    });
    release_freed_memory();
    // Tiered partitions' ranges first: the consumers' check reads a tiered log's start.
    crate::cluster::tiering::ranges(report, inv, opts, replayed);
    for (_, check) in cluster_checks() {
        let extra = check(report, inv, opts, &leadership.histories);
        report.add_partition_findings(extra);
    }
    // Tiered storage: the __remote_log_metadata replay against each replica.
    crate::cluster::tiering::check(report, inv, opts, replayed);
    // What the replay derived from damaged remote batches follows from the remote copy's
    // finding (made by the tiering check above).
    crate::cluster::tiering::corrupt::link_remote_damage(report);
    // The leadership history of the KRaft metadata log: its findings, then the
    // links of the replica divergences and hanging transactions above to the unclean
    // election they follow from, in place — so it runs last.
    let Leadership { histories, unread } = leadership;
    crate::cluster::leadership::run_over(report, inv, opts, histories, unread);
    // Logs of two topic ids of one topic in one broker log dir, where the leadership
    // history judged none of them stray.
    crate::cluster::topic_ids::check(report, inv);
}

/// The run's one replay of each cluster's KRaft metadata log
/// ([`crate::cluster::leadership::load_all_read`]: the histories, and the files of the
/// live copies that could not be read). The coordinator's copy choice reads its current
/// leaders ([`Self::coordinator_copies`]), the registered checks and the leadership
/// history's findings read it too;
/// `--transactional-id` reads the same replay before the walk, so that its producer ids
/// come from the copy the scan's findings follow (`request`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Leadership {
    histories: Vec<ClusterHistory>,
    unread: Vec<(PathBuf, String)>,
}

impl Leadership {
    /// Replay the metadata logs of `inv` (read within `opts`' bounds, or from the
    /// bundles' record of them).
    pub(crate) fn replay(inv: &Inventory, opts: &ScanOptions) -> Leadership {
        let (histories, unread) =
            crate::cluster::leadership::load_all_read(inv, opts.max_bytes, opts.max_decompressed);
        Leadership { histories, unread }
    }

    /// The copies of `models` that no release before Kafka 4.0.0 loads: with
    /// `--broker-version` 4.0.0 or later, or whose cluster's replayed metadata log finalizes
    /// `metadata.version` 4.0-IV0 (level 22) or later — `ClusterControlManager.registerBroker`
    /// refuses a broker that does not support the finalized level, and 3.9 supports up to
    /// 3.9-IV0 (21) — load past the batches that end their log, which earlier releases read
    /// forever (KAFKA-17941: `HistoryChecker::load_completes_since_4_0`).
    fn scope_coordinator_loads(
        &self,
        report: &ScanReport,
        opts: &ScanOptions,
        models: &mut [crate::cluster::coordinator::model::CoordModel],
    ) {
        const METADATA_VERSION_4_0: i16 = 22;
        let v4 = crate::partition::recovery::BrokerVersion(4, 0, 0);
        let given = opts.broker_version.is_some_and(|v| v >= v4);
        // (the lookup of each copy's cluster only for the rare copy whose load loops)
        for m in models
            .iter_mut()
            .filter(|m| m.history.load_never_completes())
        {
            let source = || {
                let r = report.partitions.iter().find(|r| r.path == m.origin.path)?;
                ClusterHistory::of_cluster(&self.histories, &r.source)?.metadata_version()
            };
            if given || source().is_some_and(|l| l >= METADATA_VERSION_4_0) {
                m.history.load_completes_since_4_0();
            }
        }
    }

    /// The copy of each `__transaction_state` partition of `inv` its coordinator loads:
    /// the one on the broker its cluster's replayed metadata log names as the partition's
    /// current leader, when one history alone speaks for the copies' cluster
    /// ([`crate::cluster::coordinator::LeaderCopies::of`] says when else none is chosen).
    pub(crate) fn coordinator_copies(
        &self,
        inv: &Inventory,
        opts: &ScanOptions,
    ) -> crate::cluster::coordinator::LeaderCopies {
        use crate::cluster::coordinator::{LeaderCopies, NamedLeader, TRANSACTION_STATE_TOPIC};
        const METADATA_VERSION_4_3: i16 = 30;
        let of =
            |source: &crate::finding::Source| ClusterHistory::of_cluster(&self.histories, source);
        LeaderCopies::of(inv, |source, partition| {
            let (t, now) = of(source)?.current_leader(TRANSACTION_STATE_TOPIC, partition)?;
            Some(NamedLeader {
                broker: now.leader,
                leader_epoch: now.leader_epoch,
                topic_id: t.topic_id,
            })
        })
        .with_release(inv, opts, |source| {
            (of(source).and_then(ClusterHistory::metadata_version))
                .is_some_and(|l| l >= METADATA_VERSION_4_3)
        })
    }
}

/// Give the heap pages freed by the stage before back to the system before the next one
/// allocates its own: glibc keeps freed pages in the arena of the thread that
/// freed them, where a worker thread's finished replay is not reused by the cluster
/// checks' threads, so the peak RSS would add the two stages.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns glibc's free heap pages; no Rust object is
    // touched and it may be called at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Scan the given paths (broker data dirs, partition dirs, single files, or dirs above them).
pub fn scan(paths: &[PathBuf], opts: &ScanOptions) -> ScanReport {
    scan_streaming(paths, opts, &mut |_, _| {})
}

/// [`scan`] with [`analyse_streaming`]'s per-partition callback.
pub fn scan_streaming(
    paths: &[PathBuf],
    opts: &ScanOptions,
    on_partition: OnPartition<'_>,
) -> ScanReport {
    scan_discovered(paths, &discover(paths, opts), opts, on_partition, None)
}

/// The inventory a scan of `paths` analyses: their discovery (symlinks inside them
/// followed with `--follow`), the given cluster ids applied.
pub(crate) fn discover(paths: &[PathBuf], opts: &ScanOptions) -> Inventory {
    let mut inv = layout::discover_with(
        paths,
        layout::DiscoverOptions {
            follow_symlinks: opts.follow_symlinks,
        },
    );
    crate::discover::identity::apply_given(&mut inv, &opts.cluster_ids);
    inv
}

/// [`scan_streaming`] over `inv`, the inventory of `paths` ([`discover`]), with
/// [`analyse_streaming_with`]'s `leadership`.
pub(crate) fn scan_discovered(
    paths: &[PathBuf],
    inv: &Inventory,
    opts: &ScanOptions,
    on_partition: OnPartition<'_>,
    leadership: Option<Leadership>,
) -> ScanReport {
    let mut report = analyse_streaming_with(inv, opts, on_partition, leadership);
    report.inputs = paths.iter().map(|p| p.display().to_string()).collect();
    report
}
