//! The library's front door: one request, one answer — exactly what the `klogscan` CLI
//! shows, before rendering. A program that embeds klogscan to validate a recovery calls
//! [`run`] (or [`verify`]) and gets the report the CLI renders: archives among the inputs
//! are unpacked and their members named by archive path, `--transactional-id` is resolved
//! through the coordinator's log, every finding carries its client error class, and the
//! filters are applied (they select what is shown; every partition is still analysed).
//!
//! The CLI is this module plus flag parsing, rendering and the exit code
//! (`tests/suite/library_cli.rs` holds the two byte-equal).

mod paths;
mod timelines;

pub use timelines::timelines;

use crate::discover::archive::{self, Prepared};
use crate::finding::Finding;
use crate::partition::results::{PartitionReport, ScanOptions};
use crate::partition::timeline::{ProducerTimeline, Timeline};
use crate::pipeline::Leadership;
use crate::report::filter::Filter;
use crate::results::ScanReport;
use crate::verify::{VerifyOptions, VerifyReport};
use std::path::PathBuf;

/// What to analyse and what to show.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Request {
    /// Broker log dirs, partition dirs, files and archives (`.tar`, `.tgz`, `.tar.zst`,
    /// `.zip`), in any mix.
    pub inputs: Vec<PathBuf>,
    /// How to analyse.
    pub options: ScanOptions,
    /// What to show (`--topic`, `--producer-id`, `--since`, …).
    pub filter: Filter,
    /// `--transactional-id`: shows the producers these ids map to in the
    /// `__transaction_state` partitions among the inputs (an input error when absent).
    pub transactional_ids: Vec<String>,
    /// Collect, during the walk, the timelines the HTML report draws (the partitions with
    /// findings, most severe first, at most [`crate::report::html::MAX_TIMELINES`]).
    pub timelines: bool,
    /// `--timeline`: with `timelines`, also draw these partitions' timelines, findings or
    /// not (`topic-N`, a topic glob, or a partition directory's path).
    pub timeline_partitions: Vec<String>,
    /// Bounds on archive extraction.
    pub archive_limits: archive::Limits,
    /// The inputs are evidence bundles (`klogscan merge`, [`crate::bundle`]): their merge
    /// replaces the scan (timelines are those the bundles carry).
    pub bundles: bool,
}

impl Request {
    /// A request over `inputs` with default options and no filter.
    pub fn new(inputs: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        Request {
            inputs: inputs.into_iter().map(Into::into).collect(),
            ..Default::default()
        }
    }
    /// With these scan options.
    pub fn with_options(mut self, options: ScanOptions) -> Self {
        self.options = options;
        self
    }
    /// With this filter.
    pub fn with_filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }
    /// Also show the producers of these transactional ids.
    pub fn with_transactional_ids(mut self, ids: Vec<String>) -> Self {
        self.transactional_ids = ids;
        self
    }
    /// Collect the HTML report's timelines.
    pub fn with_timelines(mut self, on: bool) -> Self {
        self.timelines = on;
        self
    }
    /// Also draw these partitions' timelines (`--timeline`; with [`Self::with_timelines`]).
    pub fn with_timeline_partitions(mut self, partitions: Vec<String>) -> Self {
        self.timeline_partitions = partitions;
        self
    }
    /// The inputs are evidence bundles: merge them.
    pub fn with_bundles(mut self, on: bool) -> Self {
        self.bundles = on;
        self
    }
}

/// The answer to a [`Request`]: the report as the CLI renders it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Answer {
    pub report: ScanReport,
    /// Aligned with `report.partitions` when [`Request::timelines`] was set, else empty:
    /// the timelines the HTML report draws (partitions with findings, and those of
    /// [`Request::timeline_partitions`]).
    pub timelines: Vec<Option<Timeline>>,
    /// With [`Request::timelines`] and a producer filter: each producer's lane in every
    /// partition shown where it wrote (the HTML report's per-producer view).
    pub producer_timelines: Vec<ProducerTimeline>,
    /// What the CLI prints on stderr before the report (refused archive entries, caps).
    pub warnings: Vec<String>,
}

/// A request that could not be answered at all (the CLI's exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    #[error(transparent)]
    Archive(#[from] archive::TempError),
    /// A bundle that cannot be read or merged (named in the message).
    #[error(transparent)]
    Bundle(#[from] crate::bundle::BundleError),
    #[error(
        "--transactional-id needs the coordinator's log: add the __transaction_state-N directories to the inputs"
    )]
    NoCoordinatorLog,
    #[error("transactional id {id:?} is not in the __transaction_state partitions read ({read:?})")]
    UnknownTransactionalId {
        id: String,
        read: std::collections::BTreeSet<i32>,
    },
    /// A `--cluster-id` that cannot be used (a conflict with a `meta.properties`, a path
    /// that is not an input directory).
    #[error(transparent)]
    ClusterId(#[from] crate::discover::identity::GivenClusterIdError),
}

/// One partition of a streamed run ([`run_streaming`]), as the finished report will show it:
/// filtered, with client errors, paths named by archive.
#[non_exhaustive]
pub enum Streamed<'a> {
    /// Before the first partition: the inputs as given.
    Begin(&'a [String]),
    /// A partition whose own analysis is final (the cluster checks come later).
    Partition {
        report: &'a PartitionReport,
        /// `report` as JSON, paths mapped to the archives.
        value: &'a serde_json::Value,
        /// The partition's path as shown.
        path: &'a str,
        /// Its findings that the filter shows.
        findings: &'a [Finding],
        /// Whether the filter shows the partition.
        shown: bool,
    },
}

/// Analyse and answer as the CLI does.
pub fn run(req: &Request) -> Result<Answer, RequestError> {
    run_inner(req, None)
}

/// [`run`], handing each partition to `sink` as soon as its own analysis is final (what
/// `scan --format jsonl` streams). The first error `sink` returns is kept and returned once
/// the run ends.
pub fn run_streaming(
    req: &Request,
    sink: &mut dyn FnMut(Streamed<'_>) -> std::io::Result<()>,
) -> Result<(Answer, std::io::Result<()>), RequestError> {
    let mut status = Ok(());
    let answer = run_inner(req, Some((sink, &mut status)))?;
    Ok((answer, status))
}

type Sink<'a> = (
    &'a mut dyn FnMut(Streamed<'_>) -> std::io::Result<()>,
    &'a mut std::io::Result<()>,
);

fn run_inner(req: &Request, sink: Option<Sink<'_>>) -> Result<Answer, RequestError> {
    let inputs = archive::prepare(&req.inputs, &req.archive_limits)?;
    check_cluster_ids(req, &inputs)?;
    let mut opts = req.options.clone();
    if !req.filter.producer_ids.is_empty() || !req.transactional_ids.is_empty() {
        // A producer filter shows the partitions where the producer appears.
        opts.keep_producers = true;
    }
    // Drawn from what the walk collects (or the bundles carry): no file is read again.
    if req.timelines {
        opts.collect_timelines = true;
    }
    let analysed = match req.bundles {
        true => {
            let bundles = crate::bundle::read_bundles_for(&inputs.paths, &opts)?;
            Analysed::Bundles(Box::new(crate::bundle::stage(bundles, &opts)?))
        }
        false => Analysed::Dirs(crate::pipeline::discover(&inputs.paths, &opts)),
    };
    // The metadata logs' replay that chooses the coordinator's copies for
    // `--transactional-id` is the run's one: the cluster stage takes it over.
    let mut leadership = None;
    let flt = resolved_filter(req, || {
        let (view, replayed) = match &analysed {
            Analysed::Dirs(inv) => {
                let replayed = Leadership::replay(inv, &opts);
                (dirs_view(inv, &opts, &replayed), replayed)
            }
            Analysed::Bundles(staged) => {
                let inv = staged.inventory();
                let replayed = Leadership::replay(inv, staged.options());
                let copies = replayed.coordinator_copies(inv, staged.options());
                let view = staged.coordinator_view(&copies);
                (view, replayed)
            }
        };
        leadership = Some(replayed);
        view
    })?;
    if req.timelines {
        opts.timeline_producers = flt.producer_ids.clone();
    }
    let mut merge_warnings = Vec::new();
    let mut report = match (sink, analysed) {
        (None, Analysed::Bundles(staged)) => {
            let merged = staged.merge(&mut |_, _| {}, leadership)?;
            merge_warnings = merged.warnings;
            merged.report
        }
        (None, Analysed::Dirs(inv)) => {
            let paths = &inputs.paths;
            crate::pipeline::scan_discovered(paths, &inv, &opts, &mut |_, _| {}, leadership)
        }
        (Some((sink, status)), Analysed::Bundles(staged)) => {
            *status = sink(Streamed::Begin(staged.inputs()));
            let merged = staged.merge(
                &mut |p, fs| stream_partition(sink, status, &flt, &inputs, p, fs),
                leadership,
            )?;
            merge_warnings = merged.warnings;
            merged.report
        }
        (Some((sink, status)), Analysed::Dirs(inv)) => {
            let given: Vec<String> = inputs
                .paths
                .iter()
                .map(|p| inputs.display(&p.display().to_string()))
                .collect();
            *status = sink(Streamed::Begin(&given));
            crate::pipeline::scan_discovered(
                &inputs.paths,
                &inv,
                &opts,
                &mut |p, fs| stream_partition(sink, status, &flt, &inputs, p, fs),
                leadership,
            )
        }
    };
    crate::report::client::fill(&mut report.findings);
    flt.apply(&mut report);
    let chosen = if req.timelines {
        timelines::choose(
            &mut report,
            &req.timeline_partitions,
            &flt.producer_ids,
            &inputs,
        )
    } else {
        timelines::Chosen::default()
    };
    paths::fix_report(&inputs, &mut report);
    report.errors.extend(inputs.failed.iter().cloned());
    let mut warnings = inputs.warnings.clone();
    warnings.extend(chosen.warnings);
    warnings.extend(merge_warnings);
    Ok(Answer {
        report,
        timelines: chosen.timelines,
        producer_timelines: chosen.producers,
        warnings,
    })
}

/// Hand one partition to a streaming run's sink, filtered, with client errors, paths named
/// by archive, as the finished report will show it; keep the sink's first error.
fn stream_partition(
    sink: &mut dyn FnMut(Streamed<'_>) -> std::io::Result<()>,
    status: &mut std::io::Result<()>,
    flt: &Filter,
    inputs: &Prepared,
    p: &PartitionReport,
    fs: &[Finding],
) {
    let mut fs = fs.to_vec();
    crate::report::client::fill(&mut fs);
    let shown = flt.partition_shown(p, &fs);
    fs.retain(|f| flt.finding_matches(f));
    fs.iter_mut().for_each(|f| inputs.fix_finding(f));
    let mut value = serde_json::to_value(p).unwrap_or_default();
    inputs.fix_value(&mut value);
    let path = inputs.display(&p.path);
    let r = sink(Streamed::Partition {
        report: p,
        value: &value,
        path: &path,
        findings: &fs,
        shown,
    });
    if status.is_ok() {
        *status = r;
    }
}

/// Refuse the request's `--cluster-id`s that cannot be used, before anything is read
/// (bundles carry the ids their `collect` resolved: none is given to a merge).
fn check_cluster_ids(req: &Request, inputs: &Prepared) -> Result<(), RequestError> {
    let given = &req.options.cluster_ids;
    if req.bundles && !given.is_empty() {
        return Err(crate::discover::identity::GivenClusterIdError::Unusable {
            id: given[0].cluster_id.clone(),
            path: given[0].path.clone(),
            why: "not a merge option: give it to `klogscan collect` (the bundle records the id)"
                .into(),
        }
        .into());
    }
    check_given_ids(&inputs.paths, &req.options)
}

/// Refuse `opts.cluster_ids` (`--cluster-id ID=PATH`) that cannot be used over `paths`: a
/// path that is not an input directory (nor under or above one), a path given two ids, a
/// `meta.properties` under a path that names another cluster.
pub fn check_given_ids(paths: &[PathBuf], opts: &ScanOptions) -> Result<(), RequestError> {
    crate::discover::identity::check_given(&opts.cluster_ids, paths, opts.follow_symlinks)?;
    Ok(())
}

/// Discover `paths` as every command does ([`crate::discover::layout::discover_with`]),
/// with the cluster ids of `opts.cluster_ids` checked ([`check_given_ids`]) and filling
/// the log dirs that have no `meta.properties`.
pub fn discover(
    paths: &[PathBuf],
    opts: &ScanOptions,
) -> Result<crate::discover::layout::Inventory, RequestError> {
    use crate::discover::layout;
    check_given_ids(paths, opts)?;
    let mut inv = layout::discover_with(
        paths,
        layout::DiscoverOptions {
            follow_symlinks: opts.follow_symlinks,
        },
    );
    crate::discover::identity::apply_given(&mut inv, &opts.cluster_ids);
    Ok(inv)
}

/// What a run analyses: the inputs' directories (discovered as the scan discovers them), or
/// bundles made one report for their merge.
enum Analysed {
    Dirs(crate::discover::layout::Inventory),
    Bundles(Box<crate::bundle::Staged>),
}

/// The request's filter with `--transactional-id` resolved through the coordinator's log,
/// the view `view` makes of it (called only when the request names transactional ids).
fn resolved_filter(
    req: &Request,
    view: impl FnOnce() -> crate::cluster::coordinator::CoordinatorView,
) -> Result<Filter, RequestError> {
    let mut f = req.filter.clone();
    if req.transactional_ids.is_empty() {
        return Ok(f);
    }
    let view = view();
    if view.is_empty() {
        return Err(RequestError::NoCoordinatorLog);
    }
    for id in &req.transactional_ids {
        let Some(t) = view.ids.get(id) else {
            return Err(RequestError::UnknownTransactionalId {
                id: id.clone(),
                read: view.partitions_read.clone(),
            });
        };
        for p in [t.producer_id, t.previous_producer_id, t.next_producer_id] {
            if p >= 0 && !f.producer_ids.contains(&p) {
                f.producer_ids.push(p);
            }
        }
    }
    Ok(f)
}

/// The coordinator's view `--transactional-id` resolves through over directories: the
/// `__transaction_state` directories of `inv`, the inventory the analysis reads (`--follow`
/// and `verify`'s widening included), each partition's values from the copy its
/// coordinator loads by `replayed`, the run's replay of the metadata logs (the copy the
/// analysis's findings follow; where it names none, each id's value comes from the copy
/// with the highest offset).
fn dirs_view(
    inv: &crate::discover::layout::Inventory,
    opts: &ScanOptions,
    replayed: &Leadership,
) -> crate::cluster::coordinator::CoordinatorView {
    let leaders = replayed.coordinator_copies(inv, opts);
    crate::cluster::coordinator::CoordinatorView::load_as(inv, opts, &leaders)
}

/// The answer to a verify request: [`crate::verify::verify`] over the request's inputs as
/// the CLI runs it (archives, `--transactional-id`, client errors, filters).
#[derive(Debug)]
#[non_exhaustive]
pub struct VerifyAnswer {
    pub report: VerifyReport,
    pub warnings: Vec<String>,
}

/// Verify as the CLI does: `req.options` are the scan's, `broker_version` the loader's.
pub fn verify(
    req: &Request,
    broker_version: Option<crate::verify::BrokerVersion>,
) -> Result<VerifyAnswer, RequestError> {
    let inputs = archive::prepare(&req.inputs, &req.archive_limits)?;
    check_cluster_ids(req, &inputs)?;
    let opts = VerifyOptions {
        scan: req.options.clone(),
        broker_version,
    };
    let (inv, notes) = crate::verify::discover_widened(&inputs.paths, &opts);
    // As a scan's: the coordinator's copies chosen by the one replay of the metadata logs
    // the verification's scan then reads.
    let mut leadership = None;
    let flt = resolved_filter(req, || {
        let replayed = Leadership::replay(&inv, &req.options);
        let view = dirs_view(&inv, &req.options, &replayed);
        leadership = Some(replayed);
        view
    })?;
    let mut report = crate::verify::verify_discovered(&inputs.paths, inv, notes, &opts, leadership);
    paths::fix_verify(&inputs, &mut report);
    report.errors.extend(inputs.failed.iter().cloned());
    crate::report::client::fill(&mut report.log_dir_findings);
    flt.retain_findings(&mut report.log_dir_findings);
    let analysed = report.partitions.len();
    report
        .partitions
        .retain(|p| flt.partition_matches(&p.topic, p.partition));
    for p in &mut report.partitions {
        crate::report::client::fill(&mut p.findings);
        flt.retain_findings(&mut p.findings);
    }
    // A stopped broker start is shown with the finding that says why (a log-dir finding,
    // none under a topic or partition filter; or a partition's, shown when it is).
    let kept: Vec<&Finding> = (report.log_dir_findings.iter())
        .chain(report.partitions.iter().flat_map(|p| p.findings.iter()))
        .collect();
    report.broker_startup.retain(|b| {
        kept.iter()
            .any(|f| f.kind.id() == b.reason && f.message == b.message)
    });
    if flt.is_active() {
        // The summary counts what is shown.
        let ps = &report.partitions;
        let s = &mut report.summary;
        s.analysed = Some(analysed);
        s.partitions = ps.len();
        s.recovered = ps
            .iter()
            .filter(|p| !p.prediction.recovered_segments.is_empty())
            .count();
        s.truncated = ps
            .iter()
            .filter(|p| p.prediction.truncation.is_some())
            .count();
        s.load_failures = ps
            .iter()
            .filter(|p| p.prediction.load_failure.is_some())
            .count();
        let counts = crate::report::filter::counts(report.findings());
        report.summary.findings = counts;
    }
    Ok(VerifyAnswer {
        report,
        warnings: inputs.warnings.clone(),
    })
}
