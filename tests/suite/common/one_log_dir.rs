//! One partition in broker 1's log dir, written by a case and read back by `scan`,
//! `scan --deep`, `verify` and `dump` (the record-level audits' fixture:
//! `kafka_recaudit_cases`, `kafka_fmtaudit_cases`, which add their own readings).

use super::quiet::{loud, scan_dir, verify_dir};
use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, Manifest, PartitionBuilder};
use klogscan::verify::VerifyReport;
use std::path::Path;
use tempfile::TempDir;

/// A log dir of broker 1 holding one partition, kept alive with its manifest.
pub(crate) struct Written {
    _dir: TempDir,
    pub(crate) m: Manifest,
}

impl Written {
    /// Write `p` as broker 1's only partition in a log dir built by `ld`.
    pub(crate) fn write(ld: LogDirBuilder, p: PartitionBuilder) -> Written {
        let dir = tempfile::tempdir().unwrap();
        let m = ld.partition(p).write(dir.path()).unwrap();
        let m = m.partitions.into_iter().next().unwrap();
        Written { _dir: dir, m }
    }

    pub(crate) fn log_dir(&self) -> &Path {
        self.m.dir.parent().unwrap()
    }

    /// `scan` (with `--deep` when `deep`); no input error.
    pub(crate) fn scan(&self, deep: bool) -> ScanReport {
        scan_dir(self.log_dir(), deep)
    }

    /// `verify` for a current broker; no input error.
    pub(crate) fn verify(&self) -> VerifyReport {
        verify_dir(self.log_dir())
    }

    /// The partition's scan with its replayed producers kept.
    pub(crate) fn state(&self) -> ScanReport {
        super::cases::scan_dir(self.log_dir())
    }

    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a load
    /// that neither fails nor truncates.
    pub(crate) fn assert_quiet(&self) {
        let (s, d) = (self.scan(false), self.scan(true));
        let v = self.verify();
        let (s, d, vl) = (loud(&s.findings), loud(&d.findings), loud(v.findings()));
        assert!(
            s.is_empty() && d.is_empty() && vl.is_empty(),
            "scan: {s:#?}\nscan --deep: {d:#?}\nverify: {vl:#?}"
        );
        let p = &v.partitions[0].prediction;
        assert!(
            p.load_failure.is_none() && p.truncation.is_none(),
            "{:#?}",
            (&p.load_failure, &p.truncation)
        );
    }

    /// The lines of `dump --deep-iteration` of the partition's segments that start with
    /// `prefix` (`baseOffset:` for the batches, `|` for the records).
    pub(crate) fn dump_lines(&self, prefix: &str) -> Vec<String> {
        let paths: Vec<_> = self.m.segments.iter().map(|(_, p)| p.clone()).collect();
        let opts = DumpOptions {
            deep_iteration: true,
            ..Default::default()
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        dump_paths(&paths, &opts, &mut out, &mut err).unwrap();
        let out = String::from_utf8(out).unwrap();
        (out.lines())
            .filter(|l| l.starts_with(prefix))
            .map(str::to_string)
            .collect()
    }
}
