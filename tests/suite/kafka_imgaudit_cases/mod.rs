//! How KRaft metadata records and snapshots are written at each `metadata.version` and
//! loaded into the metadata image, for the Kafka tests no earlier klogscan test cited
//! (apache/kafka trunk of 2024-10): `ImageDowngradeTest`, `TopicsImageTest`,
//! `ClusterImageTest`, `FeaturesImageTest` (metadata/src/test/java/org/apache/kafka/image/),
//! `MetadataLoaderTest` (…/image/loader/), `PartitionRegistrationTest`
//! (…/org/apache/kafka/metadata/) and the record-version methods of `MetadataVersionTest`
//! (server-common/src/test/java/org/apache/kafka/server/common/).
//!
//! What the tests hold klogscan to (Kafka's load path, read before any verdict):
//! * a node decodes each record by the version in its frame, never by `metadata.version`
//!   (`MetadataRecordSerde`); the version only decides what a controller or a snapshot writer
//!   writes (`MetadataVersion.partitionRecordVersion`, `partitionChangeRecordVersion`,
//!   `registerBrokerRecordVersion`; `PartitionRegistration.toRecord`, `FeaturesImage.write`
//!   through `ImageWriterOptions`), and every `handleMetadataVersionChange` of the image's
//!   deltas is a no-op: the replay is the same at every version;
//! * a tagged field a record's version does not define is an unknown tag, kept aside and
//!   never applied (ELR in a `PartitionRecord` below v2, `Directories` in a
//!   `PartitionChangeRecord` v0, `InControlledShutdown` in a `BrokerRegistrationChangeRecord`
//!   v0);
//! * a record without `Directories` (below 3.7-IV2, or a downgrade's snapshot) reads as
//!   `DirectoryId.MIGRATING` for every replica (`PartitionRegistration`'s constructor), which
//!   no log dir's `directory.id` is: nothing is swapped in at the next start;
//! * a log or snapshot without a `metadata.version` `FeatureLevelRecord` (a downgrade below
//!   3.3-IV0 writes none) leaves the image at `MINIMUM_KRAFT_VERSION`, 3.0-IV1
//!   (`FeaturesImage.EMPTY`), before leader recovery;
//! * a record version the reader does not know is refused (`MetadataParseException`): a node
//!   of the writer's release applies it, an older one does not read past it.
//!
//! Each case writes the brokers' log dirs (`kafka_quiet_cluster_cases`' writers: KRaft
//! `meta.properties`, the metadata log beside the data) or a metadata log alone, runs `scan`,
//! `verify` and the merge of the brokers' bundles, the `history` replay and `dump
//! --cluster-metadata-decoder`, and asserts what a node of that version does with the bytes,
//! with a near miss that flips the answer. Where klogscan disagreed with Kafka the test was
//! first `#[ignore = "divergence: …"]`; the fixed ones say so in their comment.
#![cfg(feature = "testkit")]

mod directories;
mod downgrade;
mod image;
mod versions;

use crate::kafka_quiet_cluster_cases::kraft::{MetaLog, broker_epoch_at_start};
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines};
use klogscan::cluster::leadership::{self, ClusterHistory};
use klogscan::discover::layout;
use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::finding::{Finding, Kind};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::metadata::encode_at;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};
use std::path::{Path, PathBuf};

/// `r` as a writer of record version `v` writes it (the fields `v` lacks left out), carried
/// as raw bytes: the testkit's writers copy a [`MetaRecord::Unknown`]'s bytes unchanged.
pub(crate) fn at(r: &MetaRecord, v: i16) -> MetaRecord {
    MetaRecord::Unknown {
        api_key: r.api_key(),
        version: v,
        bytes: encode_at(r, v),
    }
}

/// `r`'s body at version `written` under the frame's version `label` (both below 128): the
/// tagged fields of a later version in an earlier version's record, or a version the
/// reader's table does not know.
pub(crate) fn relabel(r: &MetaRecord, written: i16, label: i16) -> MetaRecord {
    let mut bytes = encode_at(r, written);
    assert_eq!(bytes[2], written as u8, "a one-byte version in the frame");
    bytes[2] = label as u8;
    MetaRecord::Unknown {
        api_key: r.api_key(),
        version: label,
        bytes,
    }
}

/// Write each broker's log dir `data` (`replicas(id)` its partitions) with a copy of `m`.
pub(crate) fn brokers_with(
    m: &MetaLog,
    ids: &[i32],
    replicas: impl Fn(i32) -> Vec<PartitionBuilder>,
) -> Brokers {
    let mut b = Brokers::new();
    for &id in ids {
        let mut ld = LogDirBuilder::new(id);
        for p in replicas(id) {
            ld = ld.partition(p);
        }
        let dir = b.write(id, "data", ld, Some(broker_epoch_at_start(id)));
        m.write(&dir);
    }
    b
}

/// The one cluster's history of the log dirs of `b`.
pub(crate) fn history_of(b: &Brokers) -> ClusterHistory {
    let inv = layout::discover(&b.all());
    let mut h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1, "one cluster");
    h.remove(0)
}

/// The findings of `kind` of scan, verify and merge.
pub(crate) fn of_kind(v: &Verdict, kind: Kind) -> [Vec<&Finding>; 3] {
    [
        v.scan.findings.iter().filter(|f| f.kind == kind).collect(),
        v.verify.findings().filter(|f| f.kind == kind).collect(),
        v.merge.findings.iter().filter(|f| f.kind == kind).collect(),
    ]
}

/// Every finding of scan, verify and merge, one line each (for failure messages).
pub(crate) fn all_lines(v: &Verdict) -> String {
    format!(
        "scan: {:#?}\nverify: {:#?}\nmerge: {:#?}",
        lines(&v.scan.findings),
        lines(v.verify.findings()),
        lines(&v.merge.findings)
    )
}

/// `dump --cluster-metadata-decoder` of `file` (its records' lines).
pub(crate) fn dump(file: &Path) -> String {
    let opts = DumpOptions {
        cluster_metadata_decoder: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    dump_paths(&[file.to_path_buf()], &opts, &mut out, &mut err).unwrap();
    String::from_utf8(out).unwrap()
}

/// Broker `id`'s copy of the metadata log's first segment.
pub(crate) fn segment_of(b: &Brokers, id: i32, start: i64) -> PathBuf {
    b.path(id, "data")
        .join("__cluster_metadata-0")
        .join(format!("{start:020}.log"))
}

/// The `(type, version)` of each metadata record `dump` printed.
pub(crate) fn dumped_versions(text: &str) -> Vec<(String, i64)> {
    text.lines()
        .filter_map(|l| {
            let j = l.split(" payload: ").nth(1)?;
            let v: serde_json::Value = serde_json::from_str(j).ok()?;
            Some((v["type"].as_str()?.to_string(), v["version"].as_i64()?))
        })
        .collect()
}
