//! # klogscan
//!
//! An offline forensic analyzer for Apache Kafka broker data directories.
//!
//! The folders are the stages of the data's path, and a stage imports only the stages before
//! it (docs/architecture.md):
//!
//! ```text
//! discover ──► read ──────────► partition ──────────────► cluster ──────────► report
//! inputs,      format (own       walk once, replay          coordinator, txns,   table, JSON,
//! archives,    crate), segment   producers, recovery        replicas, groups     JSONL, HTML
//! identity     files             model, verify
//! ```
//!
//! # The library's surface
//!
//! Supported (documented in `docs/library.md`, "Public surface and stability"):
//!
//! * [`request`] is the front door: [`request::run`] answers a [`request::Request`] exactly as
//!   the CLI does (archives, filters, client errors, `--transactional-id`), before rendering.
//! * [`pipeline`] runs the whole analysis: [`pipeline::scan`], [`pipeline::analyse`] over an
//!   inventory from [`discover::layout::discover`], [`pipeline::run_cluster_checks`].
//! * [`partition::scan`] is the per-partition stage ([`partition::scan::scan_inventory`],
//!   [`partition::scan::ScanOptions`]); [`results`] holds the report types
//!   ([`results::ScanReport`], [`results::PartitionResult`], …) and re-exports every type
//!   they contain; [`partition::walked`] the data a partition's walk keeps for the cluster
//!   checks.
//! * [`finding`]: [`Finding`], [`Kind`], [`Severity`].
//! * [`verify`] cross-examines a partition's other files (indexes, transaction
//!   indexes, producer snapshots, checkpoints) and predicts what a broker's log loader does on
//!   restart.
//! * [`read::format`] is the zero-copy format layer (no I/O, no per-batch allocation; the
//!   `klogscan-format` crate); [`read::segment`] reads files read-only under a read policy
//!   ([`read::segment::load`], [`read::segment::read_file`]); [`discover::layout`] finds
//!   partition directories and their files, [`discover::archive`] reads broker archives.
//! * [`report`] renders reports as the CLI does (table, JSON, JSON Lines, HTML);
//!   [`escape`] makes untrusted text safe for a terminal or JSON; [`dump`] prints files as
//!   `kafka-dump-log.sh` does; [`partition::groups`] replays `__consumer_offsets` as the group
//!   coordinator loads it; [`cluster::coordinator`] the transaction coordinator's view of
//!   `__transaction_state`.
//!
//! Everything else (the event and producer-state layers, the recovery model, the cluster
//! checks' internals) is `pub(crate)`. The `testkit` feature exposes those internals
//! (`#[doc(hidden)]`) for klogscan's own tests, benches and examples: what it exposes is not
//! a stable API.
//!
//! ```
//! use klogscan::pipeline::scan;
//! use klogscan::partition::scan::ScanOptions;
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

// A type the public API hands out must be nameable: re-export it (see `results`).
#![warn(unnameable_types)]
// Functions stay under 150 lines (clippy.toml); an exception is an `allow` with its reason.
#![warn(clippy::too_many_lines)]

/// Declares internal modules: `pub(crate)` in a normal build, `#[doc(hidden)] pub` with the
/// `testkit` feature so that klogscan's own tests, benches and examples can reach them. What
/// `testkit` exposes is not part of the supported surface and changes without notice.
macro_rules! internal_mod {
    ($($(#[$attr:meta])* mod $name:ident;)*) => {$(
        $(#[$attr])*
        #[cfg(feature = "testkit")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "testkit"))]
        pub(crate) mod $name;
    )*};
}
pub(crate) use internal_mod;

/// Re-exports internal items into a public module: `pub(crate)` in a normal build,
/// `#[doc(hidden)] pub` with `testkit` (see [`internal_mod!`]).
macro_rules! internal_use {
    ($($path:tt)*) => {
        #[cfg(feature = "testkit")]
        #[doc(hidden)]
        pub use $($path)*;
        #[cfg(not(feature = "testkit"))]
        #[allow(unused_imports)]
        pub(crate) use $($path)*;
    };
}
pub(crate) use internal_use;

pub mod bundle;
pub mod cluster;
pub mod discover;
pub mod dump;
pub mod escape;
pub mod finding;
#[doc(hidden)]
pub mod fuzzing;
pub mod partition;
pub mod pipeline;
pub mod read;
pub mod report;
pub mod request;
pub mod results;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod verify;

pub use finding::{CopyKind, Finding, Kind, Severity, Source};

/// The examples of `docs/library.md`, compiled as doctests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDocs;
