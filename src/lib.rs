//! # klogscan
//!
//! An offline forensic analyzer for Apache Kafka broker data directories.
//!
//! The data's path through the crate:
//!
//! ```text
//! bytes ──► views ──► events ──► state ──► findings ──► reports
//! segment   format    event      state     finding      report
//! layout
//! ```
//!
//! * [`layout`] finds partition directories and their files; [`segment`] reads files
//!   read-only (mmap for sealed segments, `read()` for live ones).
//! * [`format`](mod@format) is the zero-copy format layer: entry framing, the v2 header view, records,
//!   control records, legacy messages, codecs. No I/O, no per-batch allocation.
//! * [`event`] turns each batch into a compact [`event::BatchEvent`].
//! * [`state`] replays events through a broker-like producer-state machine and emits
//!   [`finding::Finding`]s.
//! * [`scan`] drives it all per partition (in parallel), [`report`] renders the results.
//! * [`verify`] cross-examines the partition's other files (indexes, transaction indexes,
//!   producer snapshots, checkpoints) and predicts what a broker's log loader does on restart.
//! * [`dump`] prints files as `kafka-dump-log.sh` does.
//! * [`groups`] replays `__consumer_offsets` as the group coordinator loads it.
//!
//! ```
//! use klogscan::pipeline::scan;
//! use klogscan::scan::ScanOptions;
//! use klogscan::Kind;
//!
//! // The sample data: payments-3 holds the KAFKA-9144 zombie write.
//! let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
//! let report = scan(&[dir], &ScanOptions::default());
//! let zombie = report.findings.iter().find(|f| f.kind == Kind::ZombieWrite).unwrap();
//! assert_eq!((zombie.topic.as_str(), zombie.partition, zombie.offset), ("payments", 3, Some(21)));
//! let p = report.partitions.iter().find(|p| p.topic == "payments").unwrap();
//! assert_eq!(p.last_stable_offset, Some(21)); // read_committed consumers are stuck here
//! ```

pub mod archive;
pub(crate) mod causes;
pub(crate) mod compaction;
pub mod coordinator;
pub mod dump;
pub mod escape;
pub mod event;
pub mod finding;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;
pub mod groups;
pub mod identity;
pub mod layout;
pub mod pipeline;
pub mod recovery;
pub mod replicas;
pub mod report;
pub mod results;
pub mod scan;
pub mod segment;
pub mod state;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod txns;
pub mod verify;
pub mod walked;

pub use finding::{CopyKind, Finding, Kind, Severity, Source};

/// The examples of `docs/library.md`, compiled as doctests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDocs;
