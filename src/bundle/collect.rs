//! `collect`: discover one broker's log dirs, run the per-partition stage, write a bundle.

use super::content::{
    FileInventory, Header, LogDirIdentity, PartitionFrame, RecordedOptions, RecoveryInputs, Rest,
};
use super::file::{FrameWriter, Tag};
use super::fingerprint;
use crate::cluster::tiering::RemoteStorage;
use crate::discover::identity::Identities;
use crate::discover::layout::{self, Inventory, RecordedUnread};
use crate::partition::walked::{BatchKey, CopiedPartitions};
use crate::results::{PartitionResult, RESULT_FORMAT_VERSION, ScanOptions, ScanReport};
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a collect read and wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectSummary {
    pub log_dirs: usize,
    pub partitions: usize,
    /// Batches walked, and the fingerprints written (one per batch).
    pub batches: u64,
    /// Bytes of log data read.
    pub bytes: u64,
    /// The bundle's size in bytes.
    pub bundle_bytes: u64,
    /// The paths that could not be read (as a scan reports them).
    pub errors: Vec<(PathBuf, String)>,
    /// The messages of the files a partition's walk could not (fully) read, as a scan says
    /// them (its `unreadable_file` findings, which the bundle carries).
    pub unread_files: Vec<String>,
}

/// Counts what passes through.
struct Counted<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The fingerprint frames written while the scan runs (from its worker threads).
struct Stream<W: Write> {
    frames: Option<FrameWriter<Counted<W>>>,
    /// The partitions whose fingerprints were written.
    written: HashSet<String>,
    error: Option<io::Error>,
}

/// Collect `paths` (one broker's log dirs, or anything `scan` takes) into a bundle
/// written to `out`: discovery and the per-partition stage exactly as `scan` runs them
/// with `opts`, every partition's walk keeping its batch keys (which partitions another
/// broker also holds is not known here) and its producers' final states (a merge's
/// producer filters select partitions by them), and its timeline (what a merged HTML
/// report draws). With `--remote-storage`, each tiered partition's remote segments are
/// replayed before its local ones (`pipeline::scan_partitions`). Each partition's
/// fingerprints are written as
/// soon as its walk is finished, so memory holds the keys of the partitions being walked;
/// the partitions' results follow once the scan has concluded.
pub fn collect(
    paths: &[PathBuf],
    opts: &ScanOptions,
    out: impl Write + Send + 'static,
) -> io::Result<CollectSummary> {
    collect_with(paths, &[], opts, out)
}

/// [`collect`], the remote history (`--remote-storage`) chosen with the
/// `__remote_log_metadata` partitions under `remote_log_metadata` too
/// (`collect --remote-log-metadata`: another broker's log dirs or metadata partition
/// directories, read-only): the records naming a tiered replica's remote segments live in
/// the metadata topic's own replicas, which this broker need not hold — its
/// `TopicBasedRemoteLogMetadataManager` (`ConsumerTask.addAssignmentsForPartitions`)
/// consumes the metadata partition of every user partition it leads or follows
/// (`RemoteLogMetadataTopicPartitioner.metadataPartition`) from whichever broker leads
/// that partition, so another broker's copy is the one it read. They are read for
/// that choice only: the bundle holds none of them (their broker's bundle does). A path
/// holding no such partition is an input error of the summary.
pub fn collect_with(
    paths: &[PathBuf],
    remote_log_metadata: &[PathBuf],
    opts: &ScanOptions,
    out: impl Write + Send + 'static,
) -> io::Result<CollectSummary> {
    let (copies, copy_errors) = metadata_copies(remote_log_metadata, opts);
    let mut inv = layout::discover_with(
        paths,
        layout::DiscoverOptions {
            follow_symlinks: opts.follow_symlinks,
        },
    );
    crate::discover::identity::apply_given(&mut inv, &opts.cluster_ids);
    let ids = Identities::load(&inv);
    let inputs = paths.iter().map(|p| p.display().to_string()).collect();
    // `--remote-storage` made ready as a scan makes it (a URL fetched first); why it
    // cannot be read fails the collect (exit 2) but stays out of the bundle: the merge
    // reads the storage again and reports its own. The header records whether the remote
    // history is replayed (a storage that cannot be read is not).
    let mut remote = RemoteStorage::before_scan_with(&inv, &copies, opts);
    drop(copies);
    let files = FileInventory::of(&inv);
    let mut w = FrameWriter::new(Counted {
        inner: out,
        written: 0,
    })?;
    let recorded = remote.options(opts);
    w.frame(Tag::Header, &json(&header(inputs, &inv, &ids, &recorded))?)?;
    w.frame(Tag::Inventory, &json(&files)?)?;
    let stream = Arc::new(Mutex::new(Stream {
        frames: Some(w),
        written: HashSet::new(),
        error: None,
    }));
    let to = Arc::clone(&stream);
    let sink = move |path: &str, keys: Vec<BatchKey>| {
        let payload = fingerprint::frame(path, &keys);
        let Ok(mut s) = to.lock() else { return };
        let s = &mut *s;
        if let (None, Some(w)) = (&s.error, &mut s.frames) {
            s.error = w.frame(Tag::Fingerprints, &payload).err();
        }
        s.written.insert(path.to_string());
    };
    let scan_opts = ScanOptions {
        copied_partitions: CopiedPartitions::all_into(Arc::new(sink)),
        // `--producer-id` and `--transactional-id` on a merge show the partitions where
        // the producer appears, as a scan with those filters keeps them.
        keep_producers: true,
        // Every partition's timeline (bounded per partition by `timeline::Limits`): which
        // ones a merged HTML report draws depends on the cluster stage's findings.
        collect_timelines: true,
        // A bundle carries the coordinator's records whole: a merge reads no segment.
        keep_coordinator_bytes: u64::MAX,
        ..opts.clone()
    };
    // With `--remote-storage`, each tiered partition's remote segments are replayed
    // before its local ones, as the scan replays them.
    let mut report = crate::pipeline::scan_prepared(&inv, &scan_opts, &mut remote);
    report.errors.extend(copy_errors);
    drop(scan_opts);
    drop(remote);
    let (w, written) = {
        let mut s = stream
            .lock()
            .map_err(|_| io::Error::other("a scan thread panicked"))?;
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        let w = s
            .frames
            .take()
            .ok_or_else(|| io::Error::other("bundle written twice"))?;
        (w, std::mem::take(&mut s.written))
    };
    finish(w, &written, &inv, &ids, opts, report)
}

/// The `__remote_log_metadata` partition directories under `paths` (discovered as a
/// scan discovers its inputs), and each path under which there is none, or that cannot be
/// read, as an input error.
fn metadata_copies(
    paths: &[PathBuf],
    opts: &ScanOptions,
) -> (Vec<layout::PartitionDir>, Vec<(PathBuf, String)>) {
    let (mut copies, mut errors) = (Vec::new(), Vec::new());
    for path in paths {
        let found = layout::discover_with(
            std::slice::from_ref(path),
            layout::DiscoverOptions {
                follow_symlinks: opts.follow_symlinks,
            },
        );
        errors.extend(found.input_errors.iter().cloned());
        let before = copies.len();
        copies.extend(
            found
                .partitions
                .into_iter()
                .filter(crate::cluster::tiering::is_metadata_copy),
        );
        if copies.len() == before && found.input_errors.is_empty() {
            errors.push((
                path.clone(),
                "--remote-log-metadata: no __remote_log_metadata partition under it".into(),
            ));
        }
    }
    (copies, errors)
}

/// The largest small file carried: the cluster stage's own bound on the files it reads
/// (`read::segment::FileClass::Checkpoint`, 64 MiB), so that a merge reads every file a
/// scan reads (a `leader-epoch-checkpoint` of a long leadership history passes 1 MiB,
/// the bound before, and the merge took it for an absent one); past it the read fails,
/// and the failure travels instead (`Rest::unread_small_files`).
const MAX_SMALL_FILE: u64 = 64 << 20;

/// A small file the collect could not read, by path (`Rest::unread_small_files`).
type Unread = (String, RecordedUnread);

/// The small files of `inv` the cluster stage reads, by path (see `Rest::small_files`),
/// and those of them that could not be read, with why (`Rest::unread_small_files`): a
/// merge names an unread `leader-epoch-checkpoint` as the scan does, never takes it for
/// an absent one. Each is read as the cluster stage reads it (bounded, FIFO-safe;
/// a `leader-epoch-checkpoint` through `cluster::epoch_file`, so also a directory in its
/// place). Files that do not read as UTF-8 text are left out, as malformed (no reader
/// parses them).
fn small_files(inv: &Inventory) -> (Vec<(String, String)>, Vec<Unread>) {
    use crate::cluster::epoch_file;
    let (mut read, mut unread) = (Vec::new(), Vec::new());
    let mut keep = |got: Result<Option<Vec<u8>>, epoch_file::Unread>, path: &Path| match got {
        Ok(Some(b)) if b.len() as u64 <= MAX_SMALL_FILE => {
            if let Ok(text) = String::from_utf8(b) {
                read.push((path.display().to_string(), text));
            }
        }
        Ok(_) => {}
        // Discovery named it: a merge has discovery's errors.
        Err(u) if u.said => {}
        Err(u) => unread.push((
            u.path.display().to_string(),
            RecordedUnread {
                reason: u.reason,
                error: u.error,
            },
        )),
    };
    for l in &inv.log_dirs {
        let files = [
            &l.log_start_offset_checkpoint,
            &l.replication_offset_checkpoint,
        ];
        for f in files.into_iter().flatten() {
            let at = epoch_file::Place::File(f.clone());
            keep(at.read().map(Some), f);
        }
    }
    for p in &inv.partitions {
        let path = p
            .path
            .join(crate::discover::layout::LEADER_EPOCH_CHECKPOINT);
        keep(epoch_file::read_bytes(inv, p), &path);
    }
    (read, unread)
}

fn json<T: serde::Serialize>(v: &T) -> io::Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(io::Error::other)
}

fn header(inputs: Vec<String>, inv: &Inventory, ids: &Identities, opts: &ScanOptions) -> Header {
    Header {
        tool: "klogscan".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        result_format_version: RESULT_FORMAT_VERSION,
        cluster_inputs_version: crate::partition::walked::FORMAT_VERSION,
        inputs,
        log_dirs: inv
            .log_dirs
            .iter()
            .map(|ld| {
                let id = ids.log_dir(Some(&ld.path));
                LogDirIdentity {
                    path: ld.path.display().to_string(),
                    cluster_id: id.cluster_id,
                    node_id: id.broker_id,
                    cluster_id_given: ids.cluster_id_given(&ld.path),
                    directory_id: id.directory_id,
                    meta_version: id.meta_version,
                }
            })
            .collect(),
        options: RecordedOptions::of(opts),
    }
}

/// Write the partitions' results (`written`: those whose fingerprints are in the bundle),
/// the rest and the end.
fn finish<W: Write>(
    mut w: FrameWriter<Counted<W>>,
    written: &HashSet<String>,
    inv: &Inventory,
    ids: &Identities,
    opts: &ScanOptions,
    mut report: ScanReport,
) -> io::Result<CollectSummary> {
    let mut summary = CollectSummary {
        log_dirs: inv.log_dirs.len(),
        partitions: report.partitions.len(),
        batches: report.summary.batches,
        bytes: report.summary.bytes,
        errors: report.errors.clone(),
        ..Default::default()
    };
    let findings = std::mem::take(&mut report.findings);
    summary.unread_files = findings
        .iter()
        .filter(|f| f.is_unread_file(&report.errors))
        .map(|f| f.message.clone())
        .collect();
    let mut covered = vec![false; findings.len()];
    for mut p in std::mem::take(&mut report.partitions) {
        let range = p.carried.finding_range.clone();
        for c in covered.get_mut(range.clone()).into_iter().flatten() {
            *c = true;
        }
        let mut outcome = p.carried.outcome.take();
        let txns = std::mem::take(&mut outcome.txns);
        let cluster_inputs = p.carried.cluster_inputs.take();
        let segment_names = std::mem::take(&mut p.carried.segment_names);
        let timeline = p.carried.take_timeline().map(|t| *t);
        let fingerprints = written.contains(&p.path);
        let leader_epochs = std::mem::take(&mut p.carried.leader_epochs);
        let log_dir = p.carried.log_dir.as_ref().map(|d| d.display().to_string());
        let recovery = RecoveryInputs::take(&mut p);
        let damaged = p.carried.take_damaged();
        let frame = PartitionFrame {
            result: PartitionResult {
                format_version: RESULT_FORMAT_VERSION,
                partition: p,
                findings: findings.get(range).map(<[_]>::to_vec).unwrap_or_default(),
                txns,
                cluster_inputs,
                segment_names,
                timeline,
            },
            outcome,
            fingerprints,
            leader_epochs: leader_epochs.into(),
            log_dir,
            recovery,
            damaged,
        };
        w.frame(Tag::Partition, &json(&frame)?)?;
    }
    let metadata = crate::discover::compaction::load_cluster_metadata(
        inv,
        ids,
        opts.max_bytes,
        opts.max_decompressed,
    );
    let (small_files, unread_small_files) = small_files(inv);
    let rest = Rest {
        findings: findings
            .into_iter()
            .zip(covered)
            .filter(|(_, c)| !c)
            .map(|(f, _)| f)
            .collect(),
        cluster_metadata: metadata
            .into_iter()
            .map(|m| (m.source.path.clone().unwrap_or_default(), m))
            .collect(),
        small_files,
        unread_small_files,
        metadata_logs: inv
            .partitions
            .iter()
            .filter(|p| p.is_kraft_metadata() && ids.source(p).copy.is_live())
            .map(|p| {
                let log = crate::cluster::leadership::read_copy(
                    inv,
                    p,
                    opts.max_bytes,
                    opts.max_decompressed,
                );
                (p.path.display().to_string(), log)
            })
            .collect(),
    };
    w.frame(Tag::Rest, &json(&rest)?)?;
    let mut out = w.finish()?;
    out.flush()?;
    summary.bundle_bytes = out.written;
    Ok(summary)
}
