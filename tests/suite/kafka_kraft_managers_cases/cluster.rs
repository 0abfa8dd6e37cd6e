//! `ClusterControlManagerTest`: the broker registration records and how the controller
//! (`ClusterControlManager.replay`) and a broker (`ClusterDelta`) apply them. A
//! `RegisterBrokerRecord` replaces the broker's registration whole (fenced and in controlled
//! shutdown as the record says); a `BrokerRegistrationChangeRecord` fences (1), unfences
//! (-1) or leaves (0) it, and puts it in controlled shutdown (1); the legacy
//! `FenceBrokerRecord` / `UnfenceBrokerRecord` do the same; `UnregisterBrokerRecord` removes
//! it. klogscan lists them as the history's broker events (the `history` command) and does
//! not judge leadership from them: an election is judged from the partition's ISR, ELR and
//! recovery state, which is what the controller wrote after consulting fencing.

use super::*;
use crate::common::kraft::history;
use klogscan::cluster::leadership::ClusterHistory;
use klogscan::cluster::leadership::replay::BrokerChange;
use klogscan::read::format::metadata::{BrokerRegistrationChange, RegisterBroker};

fn register(id: i32, epoch: i64, fenced: bool, shutdown: bool) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8 + 1; 16],
        broker_epoch: epoch,
        fenced,
        in_controlled_shutdown: shutdown,
        ..Default::default()
    })
}

fn change(id: i32, epoch: i64, fenced: i8, shutdown: i8) -> MetaRecord {
    MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
        broker_id: id,
        broker_epoch: epoch,
        fenced,
        in_controlled_shutdown: shutdown,
        ..Default::default()
    })
}

fn replayed(m: &MetadataLogBuilder) -> (tempfile::TempDir, ClusterHistory) {
    let d = tempfile::tempdir().unwrap();
    log_dir(d.path(), "b1", 1, None, m);
    let h = history(d.path());
    (d, h)
}

fn events(h: &ClusterHistory) -> Vec<(i64, i32, BrokerChange)> {
    (h.history.brokers.iter())
        .map(|b| (b.offset, b.broker, b.change.clone()))
        .collect()
}

/// `ClusterControlManagerTest.testReplay`: broker 1 registers (fenced: the record's
/// default), a change record unfences it, another fences it. `testReplayRegisterBroker
/// Record`: broker 0 registers fenced and in controlled shutdown, registers again without
/// the shutdown flag, then unfenced. `testUnregister`: an `UnregisterBrokerRecord` removes
/// the registration. Each is one event of the history, at its offset, in order; a change
/// record that changes nothing (0, 0) is no event.
#[test]
fn registration_fencing_and_unregistration_events() {
    let (_d, h) = replayed(&meta_log(&[
        vec![register(1, 100, true, false)],
        vec![change(1, 100, -1, 0)],
        vec![change(1, 100, 1, 0)],
        vec![register(0, 100, true, true)],
        vec![register(0, 100, true, false)],
        vec![register(0, 100, false, false)],
        vec![change(0, 100, 0, 1)],
        vec![change(0, 100, 0, 0)],
        vec![MetaRecord::UnregisterBroker {
            broker_id: 1,
            broker_epoch: 100,
        }],
    ]));
    use BrokerChange::*;
    let reg = |fenced| Registered { fenced, epoch: 100 };
    assert_eq!(
        events(&h),
        vec![
            (0, 1, reg(true)),
            (1, 1, Unfenced),
            (2, 1, Fenced),
            (3, 0, reg(true)),
            (3, 0, ControlledShutdown),
            (4, 0, reg(true)),
            (5, 0, reg(false)),
            (6, 0, ControlledShutdown),
            (8, 1, Unregistered),
        ]
    );
    assert!(h.log.unknown.is_empty() && h.log.undecodable.is_empty());
}

/// The legacy `FenceBrokerRecord` / `UnfenceBrokerRecord` (written before
/// 3.3-IV2, `isBrokerRegistrationChangeRecordSupported`; replayed by `ClusterControlManager.replay` as the change record's fence and
/// unfence), and a registration held by a snapshot (`BrokerRegistration.toRecord`, carrying
/// its fenced and controlled-shutdown state) followed by deltas.
#[test]
fn legacy_fence_records_and_a_snapshots_registrations() {
    let mut m = MetadataLogBuilder::new(T0).start_offset(3).snapshot(
        3,
        1,
        vec![register(1, 7, false, false), register(2, 8, true, true)],
    );
    m.batch(&[MetaRecord::FenceBroker { id: 1, epoch: 7 }]);
    m.batch(&[MetaRecord::UnfenceBroker { id: 2, epoch: 8 }]);
    let (_d, h) = replayed(&m);
    use BrokerChange::*;
    assert_eq!(
        events(&h),
        vec![
            (
                2,
                1,
                Registered {
                    fenced: false,
                    epoch: 7
                }
            ),
            (
                2,
                2,
                Registered {
                    fenced: true,
                    epoch: 8
                }
            ),
            (2, 2, ControlledShutdown),
            (3, 1, Fenced),
            (4, 2, Unfenced),
        ]
    );
}

/// How the `history` command names the events: `broker <id> registered (broker epoch <e>,
/// fenced)`, `unfenced`, `fenced`, `in controlled shutdown`, `unregistered`.
#[test]
fn the_history_command_names_broker_events() {
    let d = tempfile::tempdir().unwrap();
    let ld = log_dir(
        d.path(),
        "b1",
        1,
        None,
        &meta_log(&[
            vec![register(1, 100, true, false)],
            vec![change(1, 100, -1, 0)],
            vec![change(1, 100, 0, 1)],
            vec![MetaRecord::UnregisterBroker {
                broker_id: 1,
                broker_epoch: 100,
            }],
        ]),
    );
    let out = assert_cmd::Command::cargo_bin("klogscan")
        .unwrap()
        .arg("history")
        .arg(&ld)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "broker 1 registered (broker epoch 100, fenced)",
        "broker 1 unfenced",
        "broker 1 in controlled shutdown",
        "broker 1 unregistered",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(!text.contains("broker 1 fenced"), "{text}");
}
