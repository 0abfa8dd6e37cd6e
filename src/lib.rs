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
//! * [`format`] is the zero-copy format layer: entry framing, the v2 header view, records,
//!   control records, legacy messages, codecs. No I/O, no per-batch allocation.
//! * [`event`] turns each batch into a compact [`event::BatchEvent`].
//! * [`state`] replays events through a broker-like producer-state machine and emits
//!   [`finding::Finding`]s.
//! * [`scan`] drives it all per partition (in parallel), [`report`] renders the results.

pub mod dump;
pub mod event;
pub mod finding;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;
pub mod layout;
pub mod report;
pub mod scan;
pub mod segment;
pub mod state;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod verify;

pub use finding::{Finding, Kind, Severity};
