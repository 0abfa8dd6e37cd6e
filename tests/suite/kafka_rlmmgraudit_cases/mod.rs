//! Kafka test audit: `RemoteLogManagerTest` and the `RemoteLogManager` logic it drives, the
//! test methods no klogscan test cited before (apache/kafka trunk of 2024-10,
//! core/src/test/java/kafka/log/remote/RemoteLogManagerTest.java; later trunks moved it to
//! storage/src/test/java/org/apache/kafka/server/log/remote/storage/).
//!
//! Kafka's tests drive one `RLMCopyTask`, `RLMExpirationTask` or `read` against mocked
//! managers. Each case here writes what the task leaves on disk — the `__remote_log_metadata`
//! records its manager published, the leader's local log, `log-start-offset-checkpoint` and
//! `leader-epoch-checkpoint`, the remote objects (testkit `TieredLog`, `LocalTieredStorage`'s
//! layout) — runs `scan`, `scan --remote-storage`, `verify` and `verify --remote-storage`
//! (`kafka_quiet_tiered_cases::check`; the metadata findings must agree across the four,
//! `kafka_rlmaudit_cases::metadata`) and asserts what the broker does next, with a near miss
//! that flips the answer.
//!
//! What the cases hold klogscan to (core/src/main/java/kafka/log/remote/RemoteLogManager.java):
//! * `findLogStartOffset`: a new leader's log start is the first segment listed under the
//!   earliest epoch of its cache that lists any (`listRemoteLogSegments(tp, epoch)`: copies in
//!   flight and deletions started included), else the local log start.
//! * `RLMExpirationTask.cleanupExpiredRemoteLogSegments`: the run collects the segments to
//!   delete from the per-epoch listings (the offset map's, then the unreferenced), moves the
//!   log start to the highest end of them plus one (`handleLogStartOffsetUpdate`), then deletes
//!   them one at a time, stopping when the task is cancelled (leadership moved); the next
//!   leader's run deletes the rest by the log-start rule.
//! * `read`: the batch holding the fetch offset is looked for in the object from the position
//!   the remote offset index gives (`findFirstBatch`); none found, the fetch is answered with no
//!   records.
//!
//! A test marked `#[ignore = "divergence: …"]` would assert Kafka's answer where klogscan gives
//! another; none is needed (see `docs/testing.md`).
#![cfg(feature = "testkit")]

mod copy;
mod read;
mod retention;
mod start;
