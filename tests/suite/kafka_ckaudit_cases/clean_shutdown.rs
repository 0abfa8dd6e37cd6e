//! `.kafka_cleanshutdown`: `LogManager.loadLogs` asks `CleanShutdownFileHandler.exists` per
//! log dir (and deletes the file before loading, so a start interrupted during the load is
//! unclean the next time: KAFKA-10471); the content — `{"version":0,"brokerEpoch":N}` since
//! 3.7, read with unknown fields ignored — only gives a KRaft broker's registration its
//! previous epoch (`CleanShutdownFileHandler.read`, any failure an empty epoch), and never
//! decides whether the log dir is recovered.

use super::{Dir, TOPIC, assert_quiet, log_of, part, recovered};
use klogscan::finding::Kind;
use klogscan::request::{self, Request};
use klogscan::testkit::LogDirBuilder;

/// `ck-0`, three segments of ten, recovery point at the log end (30).
fn ck0(clean: bool) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(clean)
        .partition(log_of(TOPIC, 0, 3, 10))
}

/// `CleanShutdownFileHandlerTest.testCleanShutdownFileBasic` (`write(10)`:
/// `{"version":0,"brokerEpoch":10}`), `CleanShutdownFileHandlerTest.testCleanShutdownFileCanParseWithUnknownFields`
/// (an unknown field beside them), the empty file of brokers before 3.7, and bytes that are
/// no JSON at all (`read` gives no epoch; `exists` still holds): each a clean shutdown —
/// nothing recovered, no `unclean_shutdown`. Near miss `CleanShutdownFileHandlerTest.testCleanShutdownFileNonExist`
/// (the file deleted): unclean — the last segment (holding the recovery point 30) recovered,
/// and the `unclean_shutdown` info.
#[test]
fn any_clean_shutdown_file_is_a_clean_shutdown() {
    let d = Dir::write(ck0(true));
    for text in [
        r#"{"version":0,"brokerEpoch":10}"#,
        r#"{"version":0,"brokerEpoch":10,"unknown":123}"#,
        "",
        "garbage{",
    ] {
        d.put(".kafka_cleanshutdown", text);
        let v = d.verify();
        assert!(recovered(part(&v, TOPIC, 0)).is_empty(), "{text:?}");
        assert_eq!(part(&v, TOPIC, 0).prediction.clean_shutdown, Some(true));
        assert!(
            v.findings().all(|f| f.kind != Kind::UncleanShutdown),
            "{text:?}"
        );
        assert_quiet(&d, &v);
    }
    std::fs::remove_file(d.root.join(".kafka_cleanshutdown")).unwrap();
    let v = d.verify();
    assert_eq!(recovered(part(&v, TOPIC, 0)), vec![20]);
    assert_eq!(
        v.findings()
            .filter(|f| f.kind == Kind::UncleanShutdown)
            .count(),
        1
    );
}

/// `LogManagerTest.testCleanShutdownFileWithBrokerEpoch` (both log dirs shut down with the
/// file, broker epoch 3), `LogManagerTest.testHandlingExceptionsDuringShutdown` (the first
/// log dir's log failed to close — its partition directory was deleted — so only the second
/// gets the file) and `LogManagerTest.testCleanShutdownFileWhenShutdownCalledBeforeStartupComplete`
/// (a start stopped during the load: `loadLogs` had deleted the file, and the shutdown writes
/// none for a log dir not fully loaded): each log dir is judged by its own file. The second
/// log dir, with the file, recovers nothing; the first, without, recovers its partition from
/// its recovery point and alone says `unclean_shutdown`. Near miss: both with the file,
/// nothing recovered anywhere.
#[test]
fn each_log_dir_is_clean_by_its_own_file() {
    for first_clean in [false, true] {
        let a = Dir::write(
            LogDirBuilder::new(1)
                .clean_shutdown(first_clean)
                .partition(log_of(TOPIC, 0, 3, 10)),
        );
        let b = Dir::write(LogDirBuilder::new(1).partition(log_of(TOPIC, 1, 3, 10)));
        b.put(".kafka_cleanshutdown", r#"{"version":0,"brokerEpoch":3}"#);
        let v = request::verify(&Request::new([&a.root, &b.root]), None)
            .unwrap()
            .report;
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        let want = if first_clean { vec![] } else { vec![20] };
        assert_eq!(recovered(part(&v, TOPIC, 0)), want);
        assert!(recovered(part(&v, TOPIC, 1)).is_empty());
        let unclean: Vec<_> = (v.findings())
            .filter(|f| f.kind == Kind::UncleanShutdown)
            .map(|f| f.segment.clone().unwrap_or_default())
            .collect();
        let want: Vec<String> = match first_clean {
            true => vec![],
            false => vec![a.root.display().to_string()],
        };
        assert_eq!(unclean, want);
    }
}
