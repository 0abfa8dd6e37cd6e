//! `kafka-transactions.sh` (`org.apache.kafka.tools.TransactionsCommand`) as klogscan
//! models it offline: the `--format find-hanging` view (`FindHangingTransactionsCommand`)
//! and the commands a hanging transaction's incident tells the operator to run
//! (`AbortTransactionCommand`). Each case rebuilds the data of a `TransactionsCommandTest`
//! case (tools/src/test/java/org/apache/kafka/tools/) — or of the `UnifiedLogTest` case
//! whose broker state the tool would read — as bytes on disk with the testkit and asserts
//! what the tool would print or accept on a broker holding those bytes.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::report::triage;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{
    Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
};
use std::path::Path;

const MIN: i64 = 60_000;

/// `__transaction_state` partition of transactional id `bar` with the default 50
/// partitions: `abs("bar".hashCode()) % 50` = 97299 % 50 = 49.
const BAR_P: i32 = 49;

fn scan_at(dir: &Path, now: i64) -> ScanReport {
    let opts = ScanOptions::default().with_now_ms(now);
    request::run(&Request::new([dir]).with_options(opts))
        .unwrap()
        .report
}

fn txns_of<'a>(r: &'a ScanReport, topic: &str) -> Vec<&'a Finding> {
    r.findings
        .iter()
        .filter(|f| {
            f.topic == topic && matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
        })
        .collect()
}

/// The data of `TransactionsCommandTest`'s find-hanging cases on disk: partition `foo-5`,
/// producer 132 epoch 5 with coordinator epoch 19 (its last marker), a transaction open
/// since its first batch, last written 60 minutes before the reference time (returned).
/// With `coordinator`: a `__transaction_state-49` holding `bar`'s latest value.
fn find_hanging_case(dir: &Path, coordinator: Option<TxnValue>) -> i64 {
    std::fs::write(dir.join("meta.properties"), "version=0\nbroker.id=1\n").unwrap();
    let t = Producer::transactional(132, 5);
    let mut p = PartitionBuilder::new("foo", 5);
    p.append(Batch::new(t).records(2));
    p.commit(t, 19);
    p.append(Batch::new(t).records(3));
    let last_timestamp = p.now();
    p.write(dir).unwrap();
    let now = last_timestamp + 60 * MIN;
    if let Some(v) = coordinator {
        let mut c = PartitionBuilder::new("__transaction_state", BAR_P);
        c.append(Batch::new(Producer::PLAIN).record(Rec::kv(key("bar"), v.encode())));
        c.write(dir).unwrap();
    }
    now
}

/// `TransactionsCommandTest.testFindHangingFilterByTransactionInProgressWithSamePartition`:
/// the producer's open transaction is 60 minutes idle (a candidate: more than the default
/// 15-minute `--max-transaction-timeout`), but `ListTransactions` maps producer 132 to
/// `bar` and `DescribeTransactions` shows `bar` Ongoing at epoch 5 (timeout 60 s, started
/// 60 minutes ago) with `foo-5` among its partitions. `filterHangingTransactions` drops a
/// candidate whose partition the coordinator's description lists — it never looks at the
/// description's age — so the tool prints its header alone (`assertNoHangingTransactions`).
/// The same holds for `PrepareCommit`/`PrepareAbort` listing the partition (the markers
/// not yet written: "we can still expect the coordinator to write the marker").
///
/// klogscan keeps both as `hanging_transaction` (its verdicts `alive` not recent, and
/// `markers_pending`, with `evidence.coordinator.hanging` = false) and its find-hanging
/// view (`triage::hanging_rows`, what `scan --format find-hanging` prints) lists them: a
/// script written for the tool's output would abort a transaction the tool does not list.
#[test]
fn find_hanging_drops_a_transaction_whose_coordinator_lists_the_partition() {
    for status in [state::ONGOING, state::PREPARE_COMMIT, state::PREPARE_ABORT] {
        let dir = tempfile::tempdir().unwrap();
        // Learn the last timestamp first (the value is written with it).
        let probe = tempfile::tempdir().unwrap();
        let now = find_hanging_case(probe.path(), None);
        let last_timestamp = now - 60 * MIN;
        let v = TxnValue::new(132, 5, status)
            .partitions(&[("foo", &[5])])
            .times(last_timestamp, last_timestamp)
            .timeout(60_000);
        assert_eq!(find_hanging_case(dir.path(), Some(v)), now);
        let r = scan_at(dir.path(), now);
        let fs = txns_of(&r, "foo");
        assert_eq!(fs.len(), 1, "{:#?}", r.findings);
        let c = &fs[0].evidence["coordinator"];
        assert_eq!(c["transactional_id"], "bar", "{c:#}");
        assert_eq!(c["lists_partition"], true, "{c:#}");
        // klogscan's own reading of the coordinator agrees with the tool's rule...
        assert_eq!(c["hanging"], false, "{c:#}");
        // ... but the find-hanging view lists it anyway.
        let rows = triage::hanging_rows(&r.findings);
        assert!(
            rows.is_empty(),
            "state {status}: the tool lists no hanging transaction (the coordinator's \
             description lists foo-5), klogscan's find-hanging view lists {rows:?} \
             (verdict {})",
            c["verdict"]
        );
    }
}

/// `TransactionsCommand.FindHangingTransactionsCommand.filterHangingTransactions` (as
/// above): the coordinator still owns a transaction whose description lists the
/// partition — `PrepareCommit` means it is committing it everywhere. klogscan's own
/// remediation for such a finding says "the coordinator still owns this transaction: do
/// not abort it by hand", yet the incident's `commands` (`triage::hanging_commands`, fed
/// by every live `hanging_transaction`) tell the operator to run
/// `kafka-transactions.sh … abort --start-offset N` (and the pre-3.0 form): an ABORT in
/// `foo-5` while the other partitions get COMMIT breaks the transaction's atomicity.
#[test]
fn no_abort_command_for_a_transaction_the_coordinator_is_committing() {
    let probe = tempfile::tempdir().unwrap();
    let now = find_hanging_case(probe.path(), None);
    let last_timestamp = now - 60 * MIN;
    let dir = tempfile::tempdir().unwrap();
    let v = TxnValue::new(132, 5, state::PREPARE_COMMIT)
        .partitions(&[("foo", &[5]), ("foo", &[10])])
        .times(last_timestamp, last_timestamp)
        .timeout(60_000);
    find_hanging_case(dir.path(), Some(v));
    let r = scan_at(dir.path(), now);
    let fs = txns_of(&r, "foo");
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert_eq!(fs[0].evidence["coordinator"]["verdict"], "markers_pending");
    let remediation = fs[0].remediation.clone().unwrap_or_default();
    assert!(remediation.contains("do not abort"), "{remediation}");
    let incidents = triage::incidents_in(&r);
    let aborts: Vec<&String> = incidents
        .iter()
        .flat_map(|i| &i.commands)
        .filter(|c| c.contains(" abort "))
        .collect();
    assert!(
        aborts.is_empty(),
        "the finding says not to abort (the coordinator is committing it), the incident's commands abort it: {aborts:#?}"
    );
}

/// `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion`
/// with the transaction left hanging: producer 1's transaction opens at 0, plain data
/// 5–7, a roll (the broker writes `…08.snapshot`: producer 1, `currentTxnFirstOffset` 0),
/// producer 1 again at 8–12; DeleteRecords to 8 and retention delete the first segment.
/// Kafka's producer state keeps the transaction's first offset (0): only the LSO is bounded
/// by the log start (`firstUnstableOffset` = 8); `onLogStartOffsetIncremented` removes no
/// ongoing transaction, and a restart loads `…08.snapshot` (0 again). So
/// `DescribeProducers` reports `currentTransactionStartOffset` 0, find-hanging's
/// `StartOffset` column is 0, and `TransactionsCommand.AbortTransactionCommand.buildAbortSpec`
/// finds the producer only with `--start-offset 0`: `--start-offset 8` fails with "Could not
/// find any open transactions starting at offset 8 on partition ul-0"
/// (`TransactionsCommandTest.testNewBrokerAbortTransaction`: the start offset must equal
/// the producer state's `currentTransactionStartOffset`).
///
/// klogscan replays the held segments only and opens the transaction at its first held
/// batch (8): its find-hanging row says 8 and its abort command uses 8.
#[test]
fn abort_start_offset_is_the_brokers_when_retention_deleted_the_transactions_start() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(5));
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.roll();
    p.append(Batch::new(t).records(5));
    let now = p.now() + 60 * MIN;
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, 8)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let pdir = &m.partitions[0].dir;
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = pdir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    // The broker's producer state on disk: the snapshot at the roll keeps offset 0.
    let snap = std::fs::read(pdir.join(format!("{:020}.snapshot", 8))).unwrap();
    assert!(snap.len() >= 10 + 46, "one producer entry");
    assert_eq!(&snap[10..18], &1i64.to_be_bytes(), "producer 1");
    assert_eq!(
        &snap[10 + 38..10 + 46],
        &0i64.to_be_bytes(),
        "currentTxnFirstOffset 0"
    );

    let r = scan_at(dir.path(), now);
    assert_eq!(r.partitions[0].log_start_offset, Some(8));
    let fs = txns_of(&r, "ul");
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert_eq!(fs[0].kind, Kind::HangingTransaction);
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(
        rows.iter().map(|r| r.start_offset).collect::<Vec<_>>(),
        vec![0],
        "find-hanging prints DescribeProducers' currentTransactionStartOffset (0, from the broker's producer state)"
    );
    let commands: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .filter(|c| c.contains("--start-offset"))
        .collect();
    assert_eq!(commands.len(), 1, "{commands:#?}");
    assert!(
        commands[0].ends_with("--start-offset 0"),
        "the tool finds no open transaction starting at the first held offset: {}",
        commands[0]
    );
}

/// Write `p` (with broker files) into a log dir with log start `start`, delete the first
/// segment's files (retention), return the dir and the partition dir.
fn retention_deleted_head(
    p: PartitionBuilder,
    start: i64,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .log_start_offset("ul", 0, start)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let pdir = m.partitions[0].dir.clone();
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = pdir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    (dir, pdir)
}

/// `ProducerAppendInfo.appendEndTxnMarker` → `checkCoordinatorEpoch`: an ABORT whose
/// coordinator epoch is below the producer entry's (`coordinatorEpoch` of its last marker,
/// kept in the producer snapshot) is refused with `TransactionCoordinatorFencedException`
/// (COORDINATOR origin, what `Admin.abortTransaction`'s WriteTxnMarkers is);
/// `TransactionsCommandTest.testOldBrokerAbortTransactionWithUnknownCoordinatorEpoch`: the
/// tool passes the given coordinator epoch through (-1 becomes 0).
///
/// Producer 1 commits a transaction with coordinator epoch 7 (offsets 0–2), a roll at 3
/// (the broker's `…03.snapshot`: producer 1, coordinatorEpoch 7), then opens a transaction
/// at 3 that hangs; retention deletes the first segment (log start 3). The broker still
/// holds coordinatorEpoch 7: find-hanging's `CoordinatorEpoch` column is 7 and a pre-3.0
/// abort needs `--coordinator-epoch` ≥ 7. klogscan, replaying the held segment only, has no
/// marker: its row says -1 and its pre-3.0 command `--coordinator-epoch 0`, which the
/// broker refuses (TRANSACTION_COORDINATOR_FENCED).
#[test]
fn pre_3_0_abort_coordinator_epoch_is_the_brokers_when_retention_deleted_the_last_marker() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(2));
    p.commit(t, 7);
    p.roll();
    p.append(Batch::new(t).records(5));
    let now = p.now() + 60 * MIN;
    let (dir, pdir) = retention_deleted_head(p, 3);
    let snap = std::fs::read(pdir.join(format!("{:020}.snapshot", 3))).unwrap();
    assert_eq!(&snap[10..18], &1i64.to_be_bytes(), "producer 1");
    assert_eq!(
        &snap[10 + 34..10 + 38],
        &7i32.to_be_bytes(),
        "coordinatorEpoch 7"
    );

    let r = scan_at(dir.path(), now);
    let fs = txns_of(&r, "ul");
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].start_offset, 3);
    assert_eq!(
        rows[0].coordinator_epoch, 7,
        "find-hanging prints the producer state's coordinator epoch (7, in the broker's snapshot)"
    );
    let pre: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .filter(|c| c.contains("--coordinator-epoch"))
        .collect();
    assert_eq!(pre.len(), 1, "{pre:#?}");
    assert!(
        pre[0].contains("--coordinator-epoch 7"),
        "a coordinator epoch below the partition's 7 is fenced: {}",
        pre[0]
    );
}

/// `UnifiedLogTest.testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion`,
/// the whole transaction deleted: producer 1's transaction at 0 (never closed), plain data,
/// a roll at 3 (`…03.snapshot`: producer 1, currentTxnFirstOffset 0), more plain data;
/// retention deletes the first segment (log start 3). Kafka keeps the ongoing transaction
/// (`onLogStartOffsetIncremented` removes none; a producer with an open transaction never
/// expires, `isProducerExpired`), its first unstable offset is bounded at the log start (3):
/// the LSO is stuck at 3 and `find-hanging` lists producer 1 with StartOffset 0.
/// klogscan, replaying the held segment only, sees no transaction at all: no finding, and
/// its last stable offset is the log end.
#[test]
fn a_hanging_transaction_wholly_below_the_log_start_is_still_hanging() {
    let t = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ul", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(t).records(1));
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(4));
    let now = p.now() + 60 * MIN;
    let (dir, pdir) = retention_deleted_head(p, 3);
    let snap = std::fs::read(pdir.join(format!("{:020}.snapshot", 3))).unwrap();
    assert_eq!(&snap[10..18], &1i64.to_be_bytes(), "producer 1");
    assert_eq!(
        &snap[10 + 38..10 + 46],
        &0i64.to_be_bytes(),
        "currentTxnFirstOffset 0"
    );

    let r = scan_at(dir.path(), now);
    assert_eq!(r.partitions[0].log_start_offset, Some(3));
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(
        rows.iter()
            .map(|r| (r.producer_id, r.start_offset))
            .collect::<Vec<_>>(),
        vec![(1, 0)],
        "the broker's producer state holds producer 1's open transaction from 0: {:#?}",
        r.findings
    );
}

// ---------------------------------------------------------------------------------------
// Second audit (txncmd): the commands' arguments as the tool parses them, the find-hanging
// bytes, the candidate threshold, one row per partition, the epochs an abort needs.
// ---------------------------------------------------------------------------------------

/// The `klogscan` binary (assert_cmd).
fn klogscan_cmd() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("klogscan").unwrap();
    c.env_remove("NO_COLOR");
    c
}

/// `scan DIR… --now NOW --format FORMAT` on the CLI: stdout.
fn cli_scan(dirs: &[&Path], now: i64, format: &str) -> String {
    let mut c = klogscan_cmd();
    c.arg("scan");
    for d in dirs {
        c.arg(d);
    }
    let out = c
        .args(["--now", &now.to_string(), "--format", format])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// One partition `topic-part` on broker `broker` of cluster `c1`: producer 132 epoch 5
/// commits a transaction with coordinator epoch 19 (offsets 0–2), then opens one at 3
/// (offsets 3–5) that no marker closes. Returns the manifest's last batch max timestamp.
fn hanging_copy(dir: &Path, broker: i32, topic: &str, part: i32) -> i64 {
    let m = LogDirBuilder::new(broker)
        .cluster_id("c1")
        .partition(hanging_partition(topic, part))
        .write(dir)
        .unwrap();
    m.partitions[0].batches.last().unwrap().max_timestamp
}

/// The partition of [`hanging_copy`].
fn hanging_partition(topic: &str, part: i32) -> PartitionBuilder {
    let t = Producer::transactional(132, 5);
    let mut p = PartitionBuilder::new(topic, part);
    p.append(Batch::new(t).records(2));
    p.commit(t, 19);
    p.append(Batch::new(t).records(3));
    p
}

/// `ToolsUtils.prettyPrintTable` (through `printRow`): every cell padded with spaces to the
/// widest of its column (header included), each followed by a tab, one line per row.
fn tool_table(rows: &[Vec<String>]) -> String {
    let header: Vec<String> = [
        "Topic",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
        "LastTimestamp",
        "Duration(min)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let all: Vec<&Vec<String>> = std::iter::once(&header).chain(rows).collect();
    let mut out = String::new();
    for r in &all {
        for (i, v) in r.iter().enumerate() {
            let w = all.iter().map(|r| r[i].len()).max().unwrap();
            out.push_str(&format!("{v:<w$}\t"));
        }
        out.push('\n');
    }
    out
}

/// `TransactionsCommandTest.testFindHangingNoMappedTransactionalId`: `foo-5`, producer 132
/// epoch 5, coordinator epoch 19, last written 60 minutes ago, no transactional id maps to
/// it: the tool prints its header and one row (`assertHangingTransaction`), laid out by
/// `ToolsUtils.prettyPrintTable`. `scan --format find-hanging` prints the same bytes.
#[test]
fn find_hanging_view_is_the_tools_table_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let last = hanging_copy(dir.path(), 1, "foo", 5);
    let now = last + 60 * MIN + 59_999;
    let out = cli_scan(&[dir.path()], now, "find-hanging");
    let row: Vec<String> = ["foo", "5", "132", "5", "19", "3"]
        .iter()
        .map(|s| s.to_string())
        .chain([last.to_string(), "60".to_string()])
        .collect();
    assert_eq!(out, tool_table(&[row]));
}

/// `FindHangingTransactionsCommand.collectCandidateOpenTransactions`: a producer with an
/// open transaction is a candidate only when `now - lastTimestamp` is strictly more than
/// `--max-transaction-timeout` (15 minutes by default). Idle exactly 15 minutes: no row,
/// only the header; one millisecond more: one row with `Duration(min)` 15.
#[test]
fn find_hanging_candidate_needs_strictly_more_than_fifteen_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let last = hanging_copy(dir.path(), 1, "foo", 5);
    let at = cli_scan(&[dir.path()], last + 15 * MIN, "find-hanging");
    assert_eq!(
        at,
        tool_table(&[]),
        "idle exactly 15 minutes is not a candidate"
    );
    let past = cli_scan(&[dir.path()], last + 15 * MIN + 1, "find-hanging");
    assert_eq!(past.lines().count(), 2, "{past}");
    assert!(
        past.lines().nth(1).unwrap().trim_end().ends_with("15"),
        "{past}"
    );
}

/// `FindHangingTransactionsCommand.execute` without `--broker-id` describes the producers of
/// each partition once, on its leader (`DescribeProducersOptions` without a broker id:
/// `DescribeProducersHandler` looks the leader up); with `--broker-id B`, on that replica
/// only. Either way a partition's hanging transaction is one row
/// (`testFindHangingSpecifiedTopicPartition` / `testFindHangingLookupTopicAndBrokerId`:
/// one `DescribeProducers` per partition). A script reading the rows runs one abort per
/// row; the second abort of the same transaction finds none open ("Could not find any open
/// transactions starting at offset …", exit 1).
///
/// Two brokers of cluster c1 each hold a copy of `foo-5` with the same hanging transaction:
/// klogscan's triage gives one incident and one abort (its note: the abort runs once), and
/// `--format find-hanging` one row. (Was a divergence: one row per live copy.)
#[test]
fn find_hanging_lists_a_partition_once_whatever_the_number_of_copies() {
    let b1 = tempfile::tempdir().unwrap();
    let b2 = tempfile::tempdir().unwrap();
    let last = hanging_copy(b1.path(), 1, "foo", 5);
    assert_eq!(hanging_copy(b2.path(), 2, "foo", 5), last);
    let now = last + 60 * MIN;
    let r = {
        let opts = ScanOptions::default().with_now_ms(now);
        request::run(&Request::new([b1.path(), b2.path()]).with_options(opts))
            .unwrap()
            .report
    };
    let aborts: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .filter(|c| c.contains("--start-offset"))
        .collect();
    assert_eq!(aborts.len(), 1, "the triage aborts once: {aborts:#?}");
    let out = cli_scan(&[b1.path(), b2.path()], now, "find-hanging");
    assert_eq!(
        out.lines().count(),
        2,
        "one header and one row for foo-5, as the tool prints:\n{out}"
    );
}

/// The value of `flag` in `command` as argparse4j reads it: `--flag=VALUE`, or the next
/// word when that word is not itself flag-like (`ArgumentParserImpl.processArg` →
/// `flagFound`: a word starting with `-` that is not a negative number is an option, and
/// the option before it fails with "expected one argument"). Words split on spaces with
/// POSIX single quotes removed (enough for klogscan's quoting).
fn argparse_value(command: &str, flag: &str) -> Result<String, String> {
    let mut words = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    let eq = format!("{flag}=");
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = w.strip_prefix(&eq) {
            return Ok(v.to_string());
        }
        if w == flag {
            let next = words.get(i + 1).ok_or("expected one argument")?;
            let negative_number = next
                .strip_prefix('-')
                .is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok());
            if next.starts_with('-') && !negative_number {
                return Err(format!(
                    "argument {flag}: expected one argument (next word {next:?} is read as an option)"
                ));
            }
            return Ok(next.clone());
        }
    }
    Err(format!("{flag} missing"))
}

/// `TransactionsCommand.DescribeTransactionsCommand` (`--transactional-id`, required,
/// `store()`): argparse4j reads the word after the flag as its value only when it does not
/// look like an option, so `--transactional-id -orders` fails before any request
/// ("expected one argument"); `--transactional-id=-orders` works. Kafka accepts any string
/// as a transactional id, `-orders` included. Single quotes do not help (the shell removes
/// them). (Was a divergence: klogscan's `describe` command put the id as the next word; it
/// writes `--transactional-id=-orders` now.)
#[test]
fn describe_command_takes_a_transactional_id_that_starts_with_a_dash() {
    let id = "-orders";
    // abs("-orders".hashCode()) % 50
    let h = id
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32));
    let part = if h == i32::MIN { 0 } else { h.abs() } % 50;
    let dir = tempfile::tempdir().unwrap();
    // The coordinator moved the id on to producer 200 (previous producer 132): the
    // transaction in foo-5 hangs.
    let v = TxnValue::new(200, 0, state::EMPTY).v1(132, -1, 2);
    let mut c = PartitionBuilder::new("__transaction_state", part);
    c.append(Batch::new(Producer::PLAIN).record(Rec::kv(key(id), v.encode())));
    let m = LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(hanging_partition("foo", 5))
        .partition(c)
        .write(dir.path())
        .unwrap();
    let last = m.partitions[0].batches.last().unwrap().max_timestamp;
    let r = scan_at(dir.path(), last + 60 * MIN);
    let commands: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .filter(|c| c.contains(" describe "))
        .collect();
    assert_eq!(commands.len(), 1, "{commands:#?} {:#?}", r.findings);
    assert_eq!(
        argparse_value(&commands[0], "--transactional-id"),
        Ok(id.to_string()),
        "{}",
        commands[0]
    );
}

/// `TransactionsCommand.AbortTransactionCommand` and `FindHangingTransactionsCommand`
/// (`--topic`, `store()`): the same argparse4j rule for a topic. `Topic.validate` accepts a
/// name starting with `-` (`-foo`: only `A-Z a-z 0-9 . _ -`, 1–249 characters), so a broker
/// holds `-foo-5`; `--topic -foo` fails with "expected one argument", `--topic=-foo` works.
/// (Was a divergence: klogscan's commands put `-foo` as the next word; `--topic=-foo` now.)
#[test]
fn abort_and_find_hanging_commands_take_a_topic_that_starts_with_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let last = hanging_copy(dir.path(), 1, "-foo", 5);
    let r = scan_at(dir.path(), last + 60 * MIN);
    let commands: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .collect();
    assert!(
        commands.iter().any(|c| c.contains("--start-offset")),
        "{commands:#?} {:#?}",
        r.findings
    );
    for c in commands.iter().filter(|c| c.contains("--topic")) {
        assert_eq!(argparse_value(c, "--topic"), Ok("-foo".to_string()), "{c}");
    }
}

/// `TransactionsCommandTest.testOldBrokerAbortTransactionWithUnknownCoordinatorEpoch`
/// (-1): a producer whose first transaction hangs has no marker in the partition;
/// `DescribeProducers` gives no coordinator epoch (find-hanging prints -1) and the pre-3.0
/// abort is run with `--coordinator-epoch -1` or 0 (the tool turns -1 into 0). klogscan's
/// row says -1 and its command 0; the abort commands parse (topic, partition, the 3.0+
/// form's `--start-offset` and the pre-3.0 form's three flags).
#[test]
fn abort_commands_parse_and_a_first_transaction_has_coordinator_epoch_minus_one() {
    let t = Producer::transactional(12345, 15);
    let mut p = PartitionBuilder::new("foo", 5);
    p.append(Batch::new(Producer::PLAIN).records(4));
    p.append(Batch::new(t).records(2));
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let last = m.partitions[0].batches.last().unwrap().max_timestamp;
    let r = scan_at(dir.path(), last + 60 * MIN);
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (
            rows[0].producer_id,
            rows[0].producer_epoch,
            rows[0].coordinator_epoch,
            rows[0].start_offset
        ),
        (12345, 15, -1, 4)
    );
    let commands: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .collect();
    let new = commands
        .iter()
        .find(|c| c.contains("--start-offset"))
        .unwrap();
    assert_eq!(argparse_value(new, "--topic"), Ok("foo".into()));
    assert_eq!(argparse_value(new, "--partition"), Ok("5".into()));
    assert_eq!(argparse_value(new, "--start-offset"), Ok("4".into()));
    assert!(!new.contains("--producer-id"), "{new}");
    let old = commands
        .iter()
        .find(|c| c.contains("--producer-id"))
        .unwrap();
    assert_eq!(argparse_value(old, "--producer-id"), Ok("12345".into()));
    assert_eq!(argparse_value(old, "--producer-epoch"), Ok("15".into()));
    assert_eq!(argparse_value(old, "--coordinator-epoch"), Ok("0".into()));
    assert!(!old.contains("--start-offset"), "{old}");
}

/// `ProducerAppendInfo.appendDataBatch` → `ProducerStateEntry.addBatch`: a data batch at a
/// new epoch while the transaction is open sets the entry's epoch and keeps
/// `currentTxnFirstOffset` (the transaction goes on). `DescribeProducers` then reports the
/// new epoch: find-hanging's `ProducerEpoch` column is 6, the 3.0+ abort writes its ABORT at
/// 6 (`buildAbortSpec` takes `producerState.producerEpoch()`), and a pre-3.0 abort needs
/// `--producer-epoch 6`: `appendEndTxnMarker` → `checkProducerEpoch` refuses a marker below
/// the entry's epoch (INVALID_PRODUCER_EPOCH, `AbortTransactionHandler.handleError`).
#[test]
fn producer_epoch_of_a_transaction_continued_at_a_new_epoch_is_the_latest() {
    let t = Producer::transactional(7, 5);
    let mut p = PartitionBuilder::new("foo", 5);
    p.append(Batch::new(t).records(2));
    p.commit(t, 3);
    p.append(Batch::new(t).records(2));
    p.append(Batch::new(t.with_epoch(6)).records(2));
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let b = m.partitions[0].batches.last().unwrap();
    assert_eq!((b.producer_epoch, b.base_sequence), (6, 0));
    let r = scan_at(dir.path(), b.max_timestamp + 60 * MIN);
    let rows = triage::hanging_rows(&r.findings);
    assert_eq!(rows.len(), 1, "{rows:?} {:#?}", r.findings);
    assert_eq!(
        (
            rows[0].producer_epoch,
            rows[0].coordinator_epoch,
            rows[0].start_offset
        ),
        (6, 3, 3)
    );
    let old: Vec<String> = triage::incidents_in(&r)
        .into_iter()
        .flat_map(|i| i.commands)
        .filter(|c| c.contains("--producer-epoch"))
        .collect();
    assert_eq!(old.len(), 1, "{old:#?}");
    assert_eq!(argparse_value(&old[0], "--producer-epoch"), Ok("6".into()));
    assert_eq!(
        argparse_value(&old[0], "--coordinator-epoch"),
        Ok("3".into())
    );
}
