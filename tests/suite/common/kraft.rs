//! What the KRaft metadata-log test files share: one topic (`orders`) on brokers 1 and 2,
//! the state a log or snapshot holds, and what `scan`, `verify` and the leadership replay
//! say of a directory.

use klogscan::cluster::leadership;
use klogscan::discover::layout;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, RegisterBroker};
use klogscan::testkit::brokers::orders_partition;
use klogscan::testkit::files::topic_id_for;
use std::path::Path;

/// The time the logs are written at.
pub const T0: i64 = 1_700_000_000_000;

/// `orders`' TopicRecord.
pub fn topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: topic_id_for("orders"),
    }
}

/// Broker `id`'s registration.
pub fn broker(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + i64::from(id),
        ..Default::default()
    })
}

/// The state a log or snapshot holds: `orders-0` on brokers 1 and 2, led by `leader` at
/// leader epoch `epoch`.
pub fn state(leader: i32, epoch: i32) -> Vec<MetaRecord> {
    vec![
        topic(),
        broker(1),
        broker(2),
        orders_partition(&[1, 2], &[1, 2], leader, epoch),
    ]
}

/// `scan`'s and `verify`'s findings of `kind` under `root` (verify's report carries the
/// scan's; its log directories' findings are included).
pub fn findings(root: &Path, kind: Kind) -> (Vec<Finding>, Vec<Finding>) {
    let scanned = klogscan::pipeline::scan(&[root.to_path_buf()], &ScanOptions::default());
    let verified =
        klogscan::request::verify(&klogscan::request::Request::new([root]), None).unwrap();
    let s = (scanned.findings.iter())
        .filter(|f| f.kind == kind)
        .cloned()
        .collect();
    let v = (verified.report.partitions.iter())
        .flat_map(|p| p.findings.iter())
        .chain(verified.report.log_dir_findings.iter())
        .filter(|f| f.kind == kind)
        .cloned()
        .collect();
    (s, v)
}

/// The leadership history of the one cluster under `root`.
pub fn history(root: &Path) -> leadership::ClusterHistory {
    let inv = layout::discover(&[root.to_path_buf()]);
    let mut h = leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(h.len(), 1, "one cluster");
    h.remove(0)
}

/// `orders-0`'s (leader, leader epoch) now, in `h`.
pub fn orders_in(h: &leadership::ClusterHistory) -> Option<(i32, i32)> {
    let s = h.timeline("orders", 0)?.current()?.clone();
    Some((s.leader, s.leader_epoch))
}

/// `orders-0`'s (leader, leader epoch) in the history of the one cluster under `root`.
pub fn orders_now(root: &Path) -> Option<(i32, i32)> {
    orders_in(&history(root))
}
