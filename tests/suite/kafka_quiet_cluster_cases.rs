//! False alarms at the cluster level: the log dirs a healthy multi-broker Kafka cluster
//! leaves (several brokers side by side, each holding replicas of the same partitions, the
//! KRaft metadata log, the coordinators' partitions on brokers other than the data's) must
//! draw nothing at warning or error level from `scan` (`request::run`) and `verify`
//! (`request::verify`) over all of them, nor from `merge` of the brokers' `collect`
//! bundles (`request::run` with bundles). `verify` must also predict a clean start of every
//! live replica.
//!
//! Each case cites the Kafka class and method whose behaviour makes the shape healthy
//! (apache/kafka trunk of 2024-10; the 2025-10 tree where it says so). Where klogscan raises
//! a warning or an error on such data, the test is `#[ignore = "divergence: …"]` and fails
//! when run with `--ignored`. The single-partition shapes are in
//! `kafka_valid_data_quiet_cases` and are not repeated.
//!
//! Brokers are written as `<root>/broker-<id>/data` with the testkit's `LogDirBuilder`
//! (clean shutdown, a producer snapshot at each roll and at the log end, the offset
//! checkpoints); a KRaft broker's `meta.properties` (version 1: `node.id`, `directory.id`)
//! and clean-shutdown file (its broker epoch as JSON) are rewritten by [`kraft_broker`], as
//! `MetaPropertiesEnsemble` and `CleanShutdownFileHandler` write them.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use klogscan::verify::VerifyReport;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod coordinators;
pub(crate) mod kraft;
mod reassignment;
mod replication;
mod tiered;

/// The cluster id every broker's `meta.properties` names.
pub(crate) const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";
/// The clock of the data.
pub(crate) const T0: i64 = 1_700_000_000_000;

/// Several brokers' log dirs under one temporary root.
pub(crate) struct Brokers {
    pub root: TempDir,
    /// Each broker's log dirs, in broker order.
    pub dirs: Vec<Vec<PathBuf>>,
}

impl Brokers {
    pub(crate) fn new() -> Brokers {
        Brokers {
            root: tempfile::tempdir().unwrap(),
            dirs: Vec::new(),
        }
    }

    /// The log dir `data` of broker `id` (`<root>/broker-<id>/<data>`), not yet written.
    pub(crate) fn path(&self, id: i32, data: &str) -> PathBuf {
        self.root.path().join(format!("broker-{id}")).join(data)
    }

    /// Write `ld` as broker `id`'s log dir `data`; `kraft`: a KRaft broker's files, with
    /// this broker epoch.
    pub(crate) fn write(
        &mut self,
        id: i32,
        data: &str,
        ld: LogDirBuilder,
        kraft: Option<i64>,
    ) -> PathBuf {
        let dir = self.path(id, data);
        ld.cluster_id(CLUSTER).write(&dir).unwrap();
        if let Some(epoch) = kraft {
            kraft_broker(&dir, id, data, epoch);
        }
        self.add(dir.clone());
        dir
    }

    /// A dedicated controller's metadata log dir: `meta.properties` alone (no `LogManager`
    /// runs there: no offset checkpoints, no clean-shutdown file).
    pub(crate) fn controller(&mut self, id: i32) -> PathBuf {
        let dir = self.path(id, "metadata");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("meta.properties"), meta_v1(id, "metadata")).unwrap();
        self.add(dir.clone());
        dir
    }

    /// Count `dir` among its broker's log dirs.
    pub(crate) fn add(&mut self, dir: PathBuf) {
        match self.dirs.iter_mut().find(|d| d[0].parent() == dir.parent()) {
            Some(d) => d.push(dir.clone()),
            None => self.dirs.push(vec![dir]),
        }
    }

    /// Every log dir.
    pub(crate) fn all(&self) -> Vec<PathBuf> {
        self.dirs.iter().flatten().cloned().collect()
    }

    /// `c` written as broker 1's log dir `data`, then [`Brokers::check_with`] `opts`.
    pub(crate) fn of_cluster(
        c: &klogscan::testkit::txns::Cluster,
        opts: ScanOptions,
    ) -> (Brokers, Verdict) {
        let mut b = Brokers::new();
        let dir = b.path(1, "data");
        c.write(&dir, 1).unwrap();
        b.add(dir);
        let v = b.check_with(opts);
        (b, v)
    }

    /// `scan`, `verify` and the merge of the brokers' bundles.
    pub(crate) fn check(&self) -> Verdict {
        self.check_with(ScanOptions::default())
    }

    /// [`Brokers::check`] with these scan options (`collect`'s too).
    pub(crate) fn check_with(&self, opts: ScanOptions) -> Verdict {
        let all = self.all();
        let req = |inputs: Vec<PathBuf>| Request::new(inputs).with_options(opts.clone());
        let scan = request::run(&req(all.clone())).unwrap().report;
        assert!(scan.errors.is_empty(), "{:?}", scan.errors);
        // The release the options state is verify's too (the CLI's `verify --broker-version`).
        let verify = request::verify(&req(all), opts.broker_version)
            .unwrap()
            .report;
        assert!(verify.errors.is_empty(), "{:?}", verify.errors);
        let bundles = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (self.dirs.iter().enumerate())
            .map(|(i, dirs)| {
                let f = bundles.path().join(format!("{i}.klb"));
                let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
                klogscan::bundle::collect(dirs, &opts, w).unwrap();
                f
            })
            .collect();
        let merge = request::run(&req(files).with_bundles(true)).unwrap().report;
        Verdict {
            scan,
            verify,
            merge,
        }
    }
}

/// A KRaft broker's log-dir files: `meta.properties` version 1 (`node.id`, `directory.id`
/// derived from the broker and log dir names) and `.kafka_cleanshutdown` with the broker
/// epoch (`CleanShutdownFileHandler.write`, 3.7+).
pub(crate) fn kraft_broker(dir: &Path, id: i32, data: &str, broker_epoch: i64) {
    std::fs::write(dir.join("meta.properties"), meta_v1(id, data)).unwrap();
    std::fs::write(
        dir.join(".kafka_cleanshutdown"),
        format!("{{\"version\":0,\"brokerEpoch\":{broker_epoch}}}"),
    )
    .unwrap();
}

/// `meta.properties` version 1 of node `id`'s log dir `data` (`MetaProperties`).
pub(crate) fn meta_v1(id: i32, data: &str) -> String {
    format!(
        "#\n#Tue Mar 04 10:00:00 UTC 2025\nnode.id={id}\ndirectory.id={}\nversion=1\n\
         cluster.id={CLUSTER}\n",
        directory_id(id, data)
    )
}

/// The `directory.id` of broker `id`'s log dir `data`, as text.
pub(crate) fn directory_id(id: i32, data: &str) -> String {
    uuid_text(&directory_uuid(id, data))
}

/// The `directory.id` of broker `id`'s log dir `data`.
pub(crate) fn directory_uuid(id: i32, data: &str) -> [u8; 16] {
    topic_id_for(&format!("dir {id} {data}"))
}

/// `n` batches of 5 records of `topic`-`partition` at leader epoch `epoch` (plain and
/// idempotent ones by turns, by offset), 1 s apart; the partition rolls every `every`
/// offsets. Replicas built alike are byte-identical, as a follower's copy is
/// (`UnifiedLog.appendAsFollower` keeps the leader's batches), whatever their rolls.
pub(crate) fn traffic(p: &mut PartitionBuilder, epoch: i32, n: usize, every: i64) {
    p.set_leader_epoch(epoch);
    for _ in 0..n {
        let next = p.next_offset();
        if next > 0 && next % every == 0 {
            p.roll();
        }
        let b = if (next / 5) % 2 == 0 {
            Batch::new(Producer::PLAIN)
        } else {
            // the producer's batches before this one, 5 records each
            let seq = (next / 10) as i32 * 5;
            Batch::new(Producer::idempotent(300, 0)).sequence(seq)
        };
        p.append(b.records(5));
    }
}

/// A replica of `topic`-`partition` whose batches are `epochs`' `(epoch, batches)`, from
/// `T0`, rolling every 20 offsets.
pub(crate) fn replica(topic: &str, partition: i32, epochs: &[(i32, usize)]) -> PartitionBuilder {
    rolling(topic, partition, epochs, 20)
}

/// [`replica`] rolling every `every` offsets (each replica rolls on its own segment size
/// and age: `UnifiedLog.maybeRoll`).
pub(crate) fn rolling(
    topic: &str,
    partition: i32,
    epochs: &[(i32, usize)],
    every: i64,
) -> PartitionBuilder {
    from(topic, partition, 0, epochs, every)
}

/// [`rolling`] of a replica whose log starts at `start` (a multiple of 5): the same batches
/// from there.
pub(crate) fn from(
    topic: &str,
    partition: i32,
    start: i64,
    epochs: &[(i32, usize)],
    every: i64,
) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition)
        .start_offset(start)
        // each batch of 5 takes 1 s and its records' 4 ms
        .start_time(T0 + start / 5 * 1004)
        .time_step(1000);
    for (e, n) in epochs {
        traffic(&mut p, *e, *n, every);
    }
    p
}

/// What `scan`, `verify` and `merge` say.
pub(crate) struct Verdict {
    pub scan: ScanReport,
    pub verify: VerifyReport,
    pub merge: ScanReport,
}

/// One line per finding: severity, kind, broker, partition, copy, offset, message.
pub(crate) fn lines<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    fs.into_iter()
        .map(|f| {
            format!(
                "{} {} b{:?} {}-{} {:?} @{:?}: {}",
                f.severity.as_str(),
                f.kind,
                f.source.broker_id,
                f.topic,
                f.partition,
                f.source.copy,
                f.offset,
                f.message
            )
        })
        .collect()
}

/// The findings at warning or above, one line each.
pub(crate) fn loud<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    lines(fs.into_iter().filter(|f| f.severity >= Severity::Warning))
}

impl Verdict {
    /// Nothing at warning or above from `scan`, `verify` or the merge, and a clean start
    /// predicted for every live replica.
    pub(crate) fn assert_quiet(&self) {
        self.assert_no_alarm();
        self.assert_clean_start();
    }

    /// Nothing at warning or above from `scan`, `verify` or the merge.
    pub(crate) fn assert_no_alarm(&self) {
        let s = loud(&self.scan.findings);
        let v = loud(self.verify.findings());
        let m = loud(&self.merge.findings);
        assert!(
            s.is_empty() && v.is_empty() && m.is_empty(),
            "scan: {s:#?}\nverify: {v:#?}\nmerge: {m:#?}\n(all verify findings: {:#?})",
            lines(self.verify.findings())
        );
    }

    /// `verify` predicts, for every live replica, the start a broker makes after a clean
    /// shutdown (`LogLoader.load` with `hadCleanShutdown`); the metadata log, which
    /// `KafkaMetadataLog.apply` always opens as after an unclean shutdown from recovery point
    /// 0, recovers its segments and loses nothing.
    pub(crate) fn assert_clean_start(&self) {
        for p in &self.verify.partitions {
            let pr = &p.prediction;
            let name = format!("{}-{} in {}", p.topic, p.partition, p.path());
            if ["-delete", "-future", "-stray"]
                .iter()
                .any(|s| p.path().ends_with(s))
            {
                continue;
            }
            if p.topic != "__cluster_metadata" {
                assert_eq!(pr.clean_shutdown, Some(true), "{name}");
                assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
            }
            assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
            assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
        }
    }
}
