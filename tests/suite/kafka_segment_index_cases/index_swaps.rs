//! An index's `.swap` file of a segment the load keeps, by broker version: since 3.0
//! (`LogLoader.load`'s third pass) it is renamed over the segment's index, which the load
//! then reads; before 3.0 (`Log.removeTempFilesAndCollectSwapFiles`) the segment's index
//! files are deleted instead — the swap file is left — so the segment is recovered and its
//! indexes rebuilt (`loadSegmentFiles`: no offset index).

use super::{file, recovered_names, verify_as, write};
use klogscan::testkit::{Batch, LogDirBuilder, Manifest, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, PartitionVerification};

/// Segments 0, 2, 4, 6 of two batches each, after a clean shutdown, segment 2's `.index`
/// found as `2.index.swap`.
fn index_swapped() -> (tempfile::TempDir, Manifest) {
    let mut p = PartitionBuilder::new("sw", 0);
    for i in 0..8 {
        if i > 0 && i % 2 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let (d, m) = write(LogDirBuilder::new(1), p);
    let from = m.dir.join(file(2, "index"));
    std::fs::rename(&from, m.dir.join(format!("{}.swap", file(2, "index")))).unwrap();
    (d, m)
}

fn swap_action(v: &PartitionVerification) -> String {
    let l = v.prediction.leftovers.iter();
    l.filter(|l| l.file.ends_with(".index.swap"))
        .map(|l| l.action.clone())
        .next()
        .unwrap()
}

#[test]
fn an_index_swap_is_renamed_since_3_0_and_deletes_the_indexes_before() {
    for (version, recovered) in [
        (None, false),
        (Some(BrokerVersion(3, 0, 0)), false),
        (Some(BrokerVersion(2, 8, 1)), true),
        (Some(BrokerVersion(2, 2, 0)), true),
    ] {
        let (_d, m) = index_swapped();
        let v = verify_as(&m, version);
        assert_eq!(
            recovered_names(&v).contains(&file(2, "log")),
            recovered,
            "{version:?}: {:?}",
            recovered_names(&v)
        );
        let action = swap_action(&v);
        let said = match recovered {
            true => "index files of segment",
            false => "renamed to",
        };
        assert!(action.contains(said), "{version:?}: {action}");
    }
}
