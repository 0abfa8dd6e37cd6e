//! `collect`: discover one broker's log dirs, run the per-partition stage, write a bundle.

use super::content::{
    FileInventory, Header, LogDirIdentity, PartitionFrame, RecordedOptions, Rest,
};
use super::file::{FrameWriter, Tag};
use super::fingerprint;
use crate::discover::identity::Identities;
use crate::discover::layout::{self, Inventory};
use crate::partition::walked::CopiedPartitions;
use crate::results::{PartitionResult, RESULT_FORMAT_VERSION, ScanOptions, ScanReport};
use std::io::{self, Write};
use std::path::PathBuf;

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

/// Collect `paths` (one broker's log dirs, or anything `scan` takes) into a bundle
/// written to `out`: discovery and the per-partition stage exactly as `scan` runs them
/// with `opts`, every partition's walk keeping its batch keys (which partitions another
/// broker also holds is not known here).
pub fn collect(
    paths: &[PathBuf],
    opts: &ScanOptions,
    out: impl Write,
) -> io::Result<CollectSummary> {
    let inv = layout::discover_with(
        paths,
        layout::DiscoverOptions {
            follow_symlinks: opts.follow_symlinks,
        },
    );
    let opts = ScanOptions {
        copied_partitions: CopiedPartitions::all(),
        keep_producers: false,
        ..opts.clone()
    };
    let report = crate::partition::scan::scan_inventory(&inv, &opts);
    let inputs = paths.iter().map(|p| p.display().to_string()).collect();
    write(inputs, &inv, &opts, report, out)
}

fn json<T: serde::Serialize>(v: &T) -> io::Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(io::Error::other)
}

/// Write the bundle of a finished per-partition stage.
fn write(
    inputs: Vec<String>,
    inv: &Inventory,
    opts: &ScanOptions,
    mut report: ScanReport,
    out: impl Write,
) -> io::Result<CollectSummary> {
    let ids = Identities::load(inv);
    let header = Header {
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
                }
            })
            .collect(),
        options: RecordedOptions::of(opts),
    };
    let mut w = FrameWriter::new(Counted {
        inner: out,
        written: 0,
    })?;
    w.frame(Tag::Header, &json(&header)?)?;
    w.frame(Tag::Inventory, &json(&FileInventory::of(inv))?)?;
    let mut summary = CollectSummary {
        log_dirs: inv.log_dirs.len(),
        partitions: report.partitions.len(),
        batches: report.summary.batches,
        bytes: report.summary.bytes,
        errors: report.errors.clone(),
        ..Default::default()
    };
    let findings = std::mem::take(&mut report.findings);
    let mut covered = vec![false; findings.len()];
    for p in std::mem::take(&mut report.partitions) {
        let range = p.finding_range.clone();
        for c in covered.get_mut(range.clone()).into_iter().flatten() {
            *c = true;
        }
        let mut p = p;
        let mut outcome = std::mem::take(&mut p.outcome);
        let txns = std::mem::take(&mut outcome.txns);
        let mut cluster_inputs = std::mem::take(&mut p.cluster_inputs);
        let keys = cluster_inputs.batches.take();
        let frame = PartitionFrame {
            result: PartitionResult {
                format_version: RESULT_FORMAT_VERSION,
                partition: p,
                findings: findings.get(range).map(<[_]>::to_vec).unwrap_or_default(),
                txns,
                cluster_inputs,
            },
            outcome,
            fingerprints: keys.is_some(),
        };
        w.frame(Tag::Partition, &json(&frame)?)?;
        if let Some(keys) = keys {
            w.frame(Tag::Fingerprints, &fingerprint::encode(&keys))?;
        }
    }
    let metadata = crate::cluster::compaction::load_cluster_metadata(
        inv,
        &ids,
        opts.max_bytes,
        opts.max_decompressed,
    );
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
    };
    w.frame(Tag::Rest, &json(&rest)?)?;
    let mut out = w.finish()?;
    out.flush()?;
    summary.bundle_bytes = out.written;
    Ok(summary)
}
