//! False alarms on data written by non-Java clients: batches a broker accepted from
//! librdkafka, franz-go, sarama, kafka-python or kafka-go that differ from what the Java
//! producer writes, rebuilt as they end up on disk — after the leader's
//! `LogValidator.validateMessagesAndAssignOffsets` (apache/kafka trunk of 2024-10,
//! `storage/src/main/java/org/apache/kafka/storage/internals/log/LogValidator.java`; the
//! 0.10.0 broker's `ByteBufferMessageSet.validateMessagesAndAssignOffsets` where it says so)
//! assigned the offsets, rewrote maxTimestamp and the leader epoch, and kept or rebuilt the
//! records.
//!
//! `scan` (`request::run`, plain and `--deep`) and `verify` (`request::verify`) must report
//! nothing at warning or above, and `verify` must predict a clean start. Each case cites the
//! client source it rebuilds (repository, file, function; the snapshot read is named in the
//! case) and, where the layout differs from the Java producer's, what `kafka-dump-log`
//! (`DumpLogSegments.printBatchLevel` and its deep-iteration record lines) prints of it,
//! compared with `klogscan dump`. A case where klogscan raises a warning or an error is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Modules: `producers` (ids, epochs, sequences), `records` (v2 record timestamps), `legacy`
//! (magic-1 wrappers kept in place), `timestamps` (application-chosen CreateTime against the
//! broker's clock: the two divergences of this audit).
//!
//! Not repeated here: the Java-client shapes of `kafka_valid_data_quiet_cases` (epoch bumps by
//! one through InitProducerId, every codec as the Java producer frames it, LogAppendTime
//! topics, the magic-1 → v2 upgrade) and the codec framings of other writers already read by
//! `kafka_codec_framing_cases` (raw snappy, LZ4 frames with content size, checksums and 4 MiB
//! blocks, zstd frames with a checksum).
#![cfg(feature = "testkit")]

use crate::common::quiet::{assert_clean_start, assert_silent, scan_dir, verify_dir};
pub(crate) use crate::common::quiet::{lines, loud};
use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, LogDirManifest};
use klogscan::verify::VerifyReport;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod legacy;
mod producers;
mod records;
mod timestamps;

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Quiet {
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` into a new temporary directory, then scan (plain and deep) and verify it.
pub(crate) fn write_and_check(ld: LogDirBuilder) -> Quiet {
    write_and_check_with(ld, |_| {})
}

/// [`write_and_check`], letting `extra` rewrite files (what the testkit does not write as the
/// broker does) before the scans.
pub(crate) fn write_and_check_with(ld: LogDirBuilder, extra: impl FnOnce(&Path)) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    extra(dir.path());
    Quiet {
        scan: scan_dir(dir.path(), false),
        deep: scan_dir(dir.path(), true),
        verify: verify_dir(dir.path()),
        dir,
        manifest,
    }
}

impl Quiet {
    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a clean start
    /// predicted for every partition.
    pub(crate) fn assert_quiet(&self) {
        assert_silent(&self.scan, &self.deep, &self.verify);
        self.assert_clean_start();
    }

    /// `verify` predicts the start after a clean shutdown (`common::quiet`).
    pub(crate) fn assert_clean_start(&self) {
        assert_clean_start(&self.verify, &self.manifest);
    }

    /// The `.log` files of partition `i`, in order.
    pub(crate) fn segments(&self, i: usize) -> Vec<PathBuf> {
        let m = &self.manifest.partitions[i];
        m.segments.iter().map(|(_, f)| f.clone()).collect()
    }
}

/// `klogscan dump --deep-iteration` of `files`: the batch and record lines
/// (`baseOffset: …`, `offset: …` of a legacy entry, `| offset: …`), nothing on stderr.
pub(crate) fn dump_lines(files: &[PathBuf]) -> Vec<String> {
    let opts = DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    dump_paths(files, &opts, &mut out, &mut err).unwrap();
    let err = String::from_utf8(err).unwrap();
    assert_eq!(err, "", "dump wrote to stderr");
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| {
            l.starts_with("baseOffset: ") || l.starts_with("offset: ") || l.starts_with("| ")
        })
        .map(str::to_string)
        .collect()
}

/// The part of a dump line before ` crc: ` (the CRC values are the encoder's; the rest is
/// what `DumpLogSegments` prints field by field).
pub(crate) fn before_crc(line: &str) -> &str {
    line.split(" crc: ").next().unwrap()
}
