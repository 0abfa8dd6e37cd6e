//! Requests over bundles as over directories: `--transactional-id` resolves through the
//! `__transaction_state` records the bundles carry, through the same request code as a
//! scan, and selects the same report.

use klogscan::bundle;
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request, RequestError};
use klogscan::testkit::brokers;
use std::path::{Path, PathBuf};

fn json(r: &klogscan::results::ScanReport) -> String {
    let mut out = Vec::new();
    klogscan::report::json::write_scan(r, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The brokers of `write` under `data`, and their bundles under `out`.
fn brokers_and_bundles(
    write: fn(&Path) -> std::io::Result<Vec<Vec<PathBuf>>>,
    data: &Path,
    out: &Path,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let brokers = write(data).unwrap();
    let files = brokers
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let f = out.join(format!("{i}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            bundle::collect(dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect();
    (brokers.into_iter().flatten().collect(), files)
}

fn answer(inputs: &[PathBuf], ids: &[&str], bundles: bool) -> Result<String, RequestError> {
    let req = Request::new(inputs.to_vec())
        .with_transactional_ids(ids.iter().map(|s| s.to_string()).collect())
        .with_bundles(bundles);
    request::run(&req).map(|a| json(&a.report))
}

#[test]
fn transactional_id_on_merge_selects_what_it_selects_on_scan() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (dirs, files) = brokers_and_bundles(brokers::cross_broker_txn, data.path(), out.path());
    for ids in [&["billing"][..], &["app"], &["app", "billing"]] {
        let scanned = answer(&dirs, ids, false).unwrap();
        let merged = answer(&files, ids, true).unwrap();
        if scanned != merged {
            let at = scanned.lines().zip(merged.lines()).find(|(a, b)| a != b);
            panic!("{ids:?}: merge differs from scan at {at:?}");
        }
        // The filter selected something, and not everything.
        assert!(scanned.contains("\"kind\": \""), "{ids:?}: {scanned}");
        assert_ne!(scanned, answer(&dirs, &[], false).unwrap(), "{ids:?}");
    }
    // `billing` (producer 9) is open on orders-1 and payments-0 only: orders-0 is not shown.
    let billing = answer(&files, &["billing"], true).unwrap();
    assert!(!billing.contains("orders-0"), "{billing}");
}

#[test]
fn an_unknown_or_unresolvable_transactional_id_is_the_same_error_as_on_scan() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (dirs, files) = brokers_and_bundles(brokers::cross_broker_txn, data.path(), out.path());
    let scanned = answer(&dirs, &["nobody"], false).unwrap_err();
    let merged = answer(&files, &["nobody"], true).unwrap_err();
    assert!(matches!(
        merged,
        RequestError::UnknownTransactionalId { .. }
    ));
    assert_eq!(scanned.to_string(), merged.to_string());
    // Without the coordinator's broker (broker 3) there is no log to resolve it in.
    let no_coordinator = answer(&files[..2], &["app"], true).unwrap_err();
    assert!(
        matches!(no_coordinator, RequestError::NoCoordinatorLog),
        "{no_coordinator}"
    );
    assert_eq!(
        answer(&dirs[..2], &["app"], false).unwrap_err().to_string(),
        no_coordinator.to_string()
    );
}
