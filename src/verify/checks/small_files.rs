//! The small files a broker's start reads before it serves a partition, when their
//! content is refused: the log dir's offset checkpoints and a partition's
//! `partition.metadata` (the leader-epoch checkpoint's words come from here too). What the
//! broker does next depends on the exception its reader throws ([`JavaThrows`]): an
//! `IOException` is reported to `LogDirFailureChannel` by `CheckpointFileWithFailureHandler.read`
//! and `PartitionMetadataFile.read`, and `ReplicaManager`'s `LogDirFailureHandler` takes
//! that log dir offline once it runs; any other exception passes them by and goes to
//! whoever called the read.

use super::{load_checked, mk};
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::recovery::{BrokerVersion, CheckpointError, LogDirFiles};
use crate::partition::scan::PartitionReport;
use crate::read::format::checkpoint::{JavaThrows, TextFileKind, parse_partition_metadata};
use crate::read::segment::FileClass;
use crate::verify::VerifyOptions;
use serde_json::json;

/// What `LogDirFailureChannel` leads to (`ReplicaManager.handleLogDirFailure`,
/// `LogManager.handleLogDirFailure`).
const OFFLINE: &str = "once ReplicaManager's LogDirFailureHandler takes it, the log dir goes offline: none of its partitions is served by this broker (the broker halts when it was its last live log dir or holds the KRaft metadata log)";

/// How a checkpoint file's refusal reaches a broker of `version`: before 3.1 the reader
/// (core's Scala `CheckpointReadBuffer.read`) turned every `NumberFormatException` into a
/// malformed-line `IOException` and collected entries into a growable buffer (a negative
/// count was a count that does not hold, an `IOException` too); since 3.1 (server-common's
/// `CheckpointFile`) the entry formatters' `NumberFormatException` and `new
/// ArrayList<>(count)`'s `IllegalArgumentException` pass through. `None`: the version is
/// not known (the newer reading, with the older one said in words).
pub(super) fn checkpoint_throws(
    throws: JavaThrows,
    version: Option<BrokerVersion>,
) -> (JavaThrows, &'static str) {
    let wrapped = matches!(
        throws,
        JavaThrows::NumberFormatException | JavaThrows::IllegalArgumentException
    );
    match version {
        Some(v) if wrapped && v < BrokerVersion(3, 1, 0) => (JavaThrows::IoException, ""),
        None if wrapped => (
            throws,
            " (brokers before 3.1 read it as a malformed line, an IOException, and the log dir goes offline)",
        ),
        _ => (throws, ""),
    }
}

/// What the broker does with a log dir offset checkpoint whose read throws `throws`.
fn offset_checkpoint_fate(kind: TextFileKind, throws: JavaThrows, older: &str) -> String {
    let fallback = match kind {
        TextFileKind::RecoveryPointOffsetCheckpoint => {
            "uses recovery point 0 for every partition of the directory (full recovery after an unclean shutdown)"
        }
        TextFileKind::LogStartOffsetCheckpoint => {
            "uses each partition's first segment base offset as its log start"
        }
        // `cleaner-offset-checkpoint`: read by the cleaner thread's first pass after the
        // start (`LogCleanerManager.allCleanerCheckpoints`, `log.cleaner.enable`, the
        // default), not by the load.
        TextFileKind::CleanerOffsetCheckpoint => {
            return match throws {
                JavaThrows::IoException => format!(
                    "the log cleaner's first pass after the start reads it (LogCleanerManager.allCleanerCheckpoints, with the cleaner enabled, the default): CheckpointFileWithFailureHandler.read reports the IOException to LogDirFailureChannel and the pass takes no entry from the file: {OFFLINE}"
                ),
                t => format!(
                    "the log cleaner's first pass after the start reads it (LogCleanerManager.allCleanerCheckpoints, with the cleaner enabled, the default): the {} is not an IOException, so the log dir stays online, but nothing on the way catches it — it ends the cleaner thread (ShutdownableThread), and no log of the broker is compacted or cleaned again until a restart, whose first pass throws again while the file stays{older}",
                    t.name()
                ),
            };
        }
        // `replication-offset-checkpoint`: read through `LazyOffsetCheckpoints` at the
        // first leader or follower transition of one of the directory's partitions, with
        // no fallback (`Partition.createLogIfNotExists` → `updateHighWatermark`).
        _ => {
            return match throws {
                JavaThrows::IoException => format!(
                    "the broker reads it at the first leader or follower transition of one of the directory's partitions (LazyOffsetCheckpoints), with no fallback: the IOException fails that transition (KafkaStorageException: the partition is marked offline) and CheckpointFileWithFailureHandler.read reports the log dir to LogDirFailureChannel: {OFFLINE}"
                ),
                t => format!(
                    "the broker reads it at the first leader or follower transition of one of the directory's partitions (LazyOffsetCheckpoints), with no fallback: the {} is not an IOException, so the log dir stays online, but every leader or follower transition of the directory's partitions throws it (ReplicaManager.applyLocalFollowersDelta logs it and the follower does not fetch; applyLocalLeadersDelta does not catch it, and the rest of that metadata delta is not applied){older}",
                    t.name()
                ),
            };
        }
    };
    match throws {
        JavaThrows::IoException => format!(
            "LogManager.loadLogs catches the read failure and {fallback}; the failure is an IOException, which CheckpointFileWithFailureHandler.read has reported to LogDirFailureChannel: {OFFLINE}"
        ),
        t => format!(
            "LogManager.loadLogs catches the read failure and {fallback}; it is a {}, not an IOException, so the log dir stays online{older}",
            t.name()
        ),
    }
}

/// The log dir's offset checkpoints that klogscan could not read, or whose content does
/// not parse, with what a broker of `version` does next.
pub(super) fn offset_checkpoints(
    dir: &str,
    files: &LogDirFiles,
    version: Option<BrokerVersion>,
    out: &mut Vec<Finding>,
) {
    for (c, kind) in [
        (
            &files.recovery_points,
            TextFileKind::RecoveryPointOffsetCheckpoint,
        ),
        (&files.log_starts, TextFileKind::LogStartOffsetCheckpoint),
        (
            &files.high_watermarks,
            TextFileKind::ReplicationOffsetCheckpoint,
        ),
        (
            &files.cleaner_offsets,
            TextFileKind::CleanerOffsetCheckpoint,
        ),
    ] {
        let Some(Err(e)) = c else { continue };
        let (consequence, severity, mut evidence) = match e {
            // klogscan's read failed, not necessarily the broker's: what the file holds,
            // and so what the broker starts from, is not known here.
            CheckpointError::Unreadable(_) => (
                format!(
                    "klogscan could not read the file, so what the broker starts the directory's partitions from is not known here; if the broker cannot read it either (an IOException): {}",
                    offset_checkpoint_fate(kind, JavaThrows::IoException, "")
                ),
                Severity::Warning,
                json!({"read_by_klogscan": false}),
            ),
            CheckpointError::Invalid { throws, .. } => {
                let (throws, older) = checkpoint_throws(*throws, version);
                // The log dir goes offline, or its partitions' transitions fail (the high
                // watermark file), or the cleaner thread ends (the cleaner's file); only a
                // recovery point or log start reset leaves it served.
                let served = throws != JavaThrows::IoException
                    && !matches!(
                        kind,
                        TextFileKind::ReplicationOffsetCheckpoint
                            | TextFileKind::CleanerOffsetCheckpoint
                    );
                (
                    offset_checkpoint_fate(kind, throws, older),
                    if served {
                        Severity::Warning
                    } else {
                        Severity::Error
                    },
                    json!({"read_by_klogscan": true, "java_exception": throws.name()}),
                )
            }
        };
        evidence["file"] = json!(kind.file_name());
        evidence["error"] = json!(e.to_string());
        out.push(
            Finding::new(
                Kind::CheckpointInconsistent,
                "",
                -1,
                format!("{dir}: {kind} cannot be read: {e}"),
            )
            .severity(severity)
            .segment(kind.file_name())
            .evidence(evidence)
            .broker(consequence),
        );
    }
}

/// The first release whose `LogManager.loadLogs` skips a `KafkaStorageException` caused by
/// an `IOException` (KAFKA-13773, in 3.3.0 and backported to 3.2.1): before it the loading
/// thread caught `IOException` only.
const SKIPS_STORAGE_EXCEPTION: BrokerVersion = BrokerVersion(3, 2, 1);

/// What the broker does when a file its load of one partition reads (`partition.metadata`,
/// `leader-epoch-checkpoint`) throws `throws`: `CheckpointFileWithFailureHandler.read` (and
/// `PartitionMetadataFile.read`) report an `IOException` to `LogDirFailureChannel` and throw
/// it as a `KafkaStorageException`. Since 3.2.1 `LogManager.loadLogs`' loading thread skips
/// that one (the partition is not loaded, the log dir was reported offline); before 3.2.1 it
/// caught `IOException` only, so the `KafkaStorageException` reached `loadLogs`' rethrow
/// like every other exception does in every version: the start stops. The KRaft metadata
/// log's `KafkaMetadataLog.apply` catches nothing. `older` is appended to the words of an
/// exception older brokers met as another ([`checkpoint_throws`]); `version` is the
/// broker's (`--broker-version`; `None`: not known, both readings said).
pub(super) fn partition_load_fate(
    r: &PartitionReport,
    file: &str,
    reader: &str,
    throws: JavaThrows,
    older: &str,
    version: Option<BrokerVersion>,
) -> String {
    if crate::discover::layout::is_kraft_metadata(&r.topic) {
        return format!(
            "KafkaMetadataLog.apply reads {file} ({reader}) while it opens the metadata log and catches nothing: the {} stops the node's start",
            throws.name()
        );
    }
    let before_skip = version.map(|v| v < SKIPS_STORAGE_EXCEPTION);
    match (throws, before_skip) {
        (JavaThrows::IoException, Some(true)) => format!(
            "the broker's load of the partition reads {file} ({reader}); the IOException is reported to LogDirFailureChannel and thrown as a KafkaStorageException, which LogManager.loadLogs before 3.2.1 does not catch (its loading thread caught IOException only until KAFKA-13773): it rethrows it and the broker does not start"
        ),
        (JavaThrows::IoException, Some(false)) => format!(
            "the broker's load of the partition reads {file} ({reader}); the IOException is reported to LogDirFailureChannel and thrown as a KafkaStorageException, which LogManager.loadLogs skips: the partition is not loaded, and {OFFLINE}"
        ),
        (JavaThrows::IoException, None) => format!(
            "the broker's load of the partition reads {file} ({reader}); the IOException is reported to LogDirFailureChannel and thrown as a KafkaStorageException, which LogManager.loadLogs skips since 3.2.1: the partition is not loaded, and {OFFLINE} (a broker before 3.2.1 does not catch it: LogManager.loadLogs rethrows it and the broker does not start)"
        ),
        (t, _) => format!(
            "the broker's load of the partition reads {file} ({reader}); the {} is not an IOException: LogManager.loadLogs rethrows it and the broker does not start{older}",
            t.name()
        ),
    }
}

/// `partition.metadata` whose content the broker's reader refuses
/// (`PartitionMetadataReadBuffer.read`, called by `UnifiedLog.initializeTopicId` on every
/// load by a broker that keeps the file: KRaft, or inter-broker protocol 2.8 and later).
pub(super) fn check_partition_metadata(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    out: &mut Vec<Finding>,
) {
    let Some(path) = &p.partition_metadata else {
        return;
    };
    let Some(bytes) = load_checked(path, FileClass::Checkpoint, opts, r, out) else {
        return;
    };
    let e = match parse_partition_metadata(&bytes) {
        Ok(pm) if pm.version != 0 => {
            // Before 3.7 (core's Scala `PartitionMetadataReadBuffer`) the version had to be
            // 0, else an `IOException`; since, any version from 0 up is read.
            let before = opts.broker_version.map(|v| v < BrokerVersion(3, 7, 0));
            if before == Some(false) {
                return;
            }
            let fate = partition_load_fate(
                r,
                "partition.metadata",
                "UnifiedLog.initializeTopicId",
                JavaThrows::IoException,
                "",
                opts.broker_version,
            );
            out.push(
                mk(
                    r,
                    Kind::CheckpointInconsistent,
                    "partition.metadata",
                    format!("partition.metadata: version {} is not 0", pm.version),
                )
                .severity(if before == Some(true) { Severity::Error } else { Severity::Warning })
                .evidence(json!({"file": "partition.metadata", "version": pm.version, "java_exception": "IOException"}))
                .broker(match before {
                    Some(_) => fate,
                    None => format!("a broker since 3.7 reads any version from 0 up; one before 3.7 refuses every version but 0: {fate}"),
                }),
            );
            return;
        }
        Ok(_) => return,
        Err(e) => e,
    };
    out.push(
        mk(
            r,
            Kind::CheckpointInconsistent,
            "partition.metadata",
            format!("partition.metadata cannot be read: {e}"),
        )
        .severity(Severity::Error)
        .evidence(json!({"file": "partition.metadata", "error": e.to_string(), "line": e.line, "java_exception": e.throws.name()}))
        .broker(partition_load_fate(
            r,
            "partition.metadata",
            "UnifiedLog.initializeTopicId",
            e.throws,
            "",
            opts.broker_version,
        )),
    );
}
