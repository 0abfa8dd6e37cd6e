//! The decision that ends the triage of a damage incident (`crc_mismatch`,
//! `truncated_batch`, `trailing_bytes`, `invalid_batch`, `truncation_below_high_watermark`):
//! what to do with the damaged copy, and the commands, in the order to run them.
//!
//! * **Another copy holds the range** (`truncation_below_high_watermark` names it): let the
//!   broker truncate at its next start and re-fetch from the leader — check that copy leads
//!   or is in the ISR, stop the broker, keep the damaged directory as evidence, start it,
//!   watch the partition return to the ISR.
//! * **The only copy of acknowledged data**, or whether acknowledged data is lost is not
//!   known (no `replication-offset-checkpoint`): save the damaged range first (the
//!   directory's bytes, and `klogscan dump` of the records still readable around the
//!   damage), look for a replica outside the inputs, then what `kafka-dump-log`/`verify` to
//!   run after the restart.
//! * **Truncated above the high watermark**: nothing acknowledged is removed — save, let
//!   the broker truncate, watch.
//! * **Damage recovery never looks at** (a clean shutdown, below the recovery point): the
//!   broker serves the bytes as they are, so restarting changes nothing; the replica has to
//!   be replaced (moved out of the log dir while the broker is stopped: it re-creates and
//!   re-fetches it whole from the leader), after saving it.
//!
//! Every value in a command is quoted for POSIX shells ([`crate::escape::ShellArgs`]);
//! comments after `#` say where to run it. Inputs read from archives are named as the
//! reports name them (`broker1.tgz!/…`): the commands then apply to the broker's own disk.

use crate::cluster::lost::LostRange;
use crate::escape::ShellArgs;
use crate::finding::{Finding, Kind};
use crate::partition::recovery::{DamageFate, Fate};

/// Where damaged copies are saved in the suggested commands.
const SAVE_DIR: &str = "/var/tmp/klogscan-saved";

/// The decision and its commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub decision: String,
    pub commands: Vec<String>,
}

fn is_damage(k: Kind) -> bool {
    matches!(
        k,
        Kind::CrcMismatch
            | Kind::TruncatedBatch
            | Kind::TrailingBytes
            | Kind::InvalidBatch
            | Kind::TruncationBelowHighWatermark
    )
}

/// The shell words of one damaged copy.
struct Copy {
    broker: String,
    dir: String,
    segment: Option<String>,
    topic: String,
    partition: String,
}

impl Copy {
    fn of(f: &Finding, args: &mut ShellArgs) -> Copy {
        let path = f.source.path.clone().unwrap_or_default();
        let segment = f.segment.as_ref().filter(|s| s.ends_with(".log")).map(|s| {
            let joined = if path.is_empty() {
                s.clone()
            } else {
                format!("{}/{s}", path.trim_end_matches('/'))
            };
            args.path(&joined, "segment")
        });
        Copy {
            broker: f
                .source
                .broker_id
                .map_or("the broker holding it".to_string(), |b| {
                    format!("broker {b}")
                }),
            dir: args.path(&path, "partition-dir"),
            segment,
            topic: args.topic(&f.topic),
            partition: args.partition(f.partition),
        }
    }

    fn save(&self) -> Vec<String> {
        let mut out = vec![format!(
            "mkdir -p {SAVE_DIR} && cp -a {} {SAVE_DIR}/   # on {}, before it starts: the damaged copy, byte for byte",
            self.dir, self.broker
        )];
        if let Some(seg) = &self.segment {
            out.push(format!(
                "klogscan dump --deep-iteration --print-data-log {seg} > {SAVE_DIR}/dump-{}-{}.txt   # the records still readable around the damage",
                self.topic.trim_matches(['<', '>']),
                self.partition.trim_matches(['<', '>'])
            ));
        }
        out
    }

    fn describe(&self, why: &str) -> String {
        format!(
            "kafka-topics.sh --bootstrap-server <broker> --describe --topic {}   # {why}",
            self.topic
        )
    }

    fn restart(&self, what: &str) -> Vec<String> {
        vec![
            format!("kafka-server-stop.sh   # on {}, if it runs", self.broker),
            format!(
                "kafka-server-start.sh -daemon <server.properties>   # on {}: {what}",
                self.broker
            ),
            format!(
                "kafka-topics.sh --bootstrap-server <broker> --describe --under-replicated-partitions --topic {}   # watch until partition {} leaves this list",
                self.topic, self.partition
            ),
        ]
    }

    fn after(&self, end: Option<i64>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(seg) = &self.segment {
            let ends = end.map_or(String::new(), |e| format!(" at offset {e}"));
            out.push(format!(
                "kafka-dump-log.sh --files {seg} --deep-iteration   # after the restart: the segment ends cleanly{ends}"
            ));
        }
        out.push(format!(
            "klogscan verify {}   # after the restart (broker stopped, or on a copy): no damage left",
            self.dir
        ));
        out
    }
}

/// The decision for the incident `g` (indexes into `findings`), when it holds damage.
pub(crate) fn damage(findings: &[Finding], g: &[usize], args: &mut ShellArgs) -> Option<Decision> {
    let members: Vec<&Finding> = g.iter().map(|&i| &findings[i]).collect();
    let first = members.iter().find(|f| is_damage(f.kind))?;
    let lost = members
        .iter()
        .find_map(|f| LostRange::of(f).map(|l| (*f, l)));
    if let Some((f, l)) = lost {
        return Some(from_loss(f, &l, args));
    }
    let c = Copy::of(first, args);
    let fate = DamageFate::of(first);
    let at = first
        .offset
        .map_or(String::new(), |o| format!(" at offset {o}"));
    let d = match fate {
        Some(DamageFate {
            fate: Fate::NotRecovered,
            ..
        }) => {
            let mut commands = vec![c.describe(
                "another replica in the ISR? then this copy can be replaced by a re-fetch",
            )];
            commands.extend(c.save());
            commands.push(format!("kafka-server-stop.sh   # on {}", c.broker));
            commands.push(format!(
                "mv {} {SAVE_DIR}/{}-{}.replaced   # on {}, only when another replica holds the data: out of the log dir, the broker re-creates the replica and re-fetches it whole",
                c.dir,
                c.topic.trim_matches(['<', '>']),
                c.partition.trim_matches(['<', '>']),
                c.broker
            ));
            commands.extend(
                c.restart("it re-fetches the partition from the leader")
                    .into_iter()
                    .skip(1),
            );
            Decision {
                decision: format!(
                    "replace this replica: recovery does not look at the damaged bytes{at}, so {} serves them as they are after any restart; with another replica in the ISR, move this copy out and let it re-fetch; as the only copy, keep it and save what is readable",
                    c.broker
                ),
                commands,
            }
        }
        Some(DamageFate {
            log_end_offset_after: end,
            high_watermark: Some(hw),
            fate,
        }) if fate != Fate::Recovered && end.is_some_and(|e| e >= hw) => {
            let end = end.unwrap_or(hw);
            let mut commands = c.save();
            commands.extend(c.restart(&format!(
                "recovery truncates the log to offset {end} and the replica re-fetches from the leader"
            )));
            commands.extend(c.after(Some(end)));
            Decision {
                decision: format!(
                    "let {} truncate: recovery cuts the log at offset {end}, at or above the checkpointed high watermark {hw}, so nothing acknowledged to acks=all producers is removed; the replica re-fetches the rest from the leader",
                    c.broker
                ),
                commands,
            }
        }
        _ => {
            let mut commands = c.save();
            commands.push(c.describe(
                "another replica in the ISR? then restart this broker as a follower: it truncates and re-fetches",
            ));
            commands.extend(c.restart("recovery truncates at the damage"));
            commands.extend(c.after(fate.and_then(|f| f.log_end_offset_after)));
            Decision {
                decision: format!(
                    "save the damaged range first{at}: whether acknowledged data lies past it is not known (no high watermark checkpoint for this copy); then let {} truncate and re-fetch from a replica that holds the range",
                    c.broker
                ),
                commands,
            }
        }
    };
    Some(d)
}

/// The decision when recovery truncates below the checkpointed high watermark.
fn from_loss(f: &Finding, l: &LostRange, args: &mut ShellArgs) -> Decision {
    let c = Copy::of(f, args);
    let range = format!("{}..{}", l.first_lost_offset, l.high_watermark - 1);
    match l.intact() {
        Some(copy) => {
            let who = copy
                .broker_id
                .map_or("the intact copy's broker".to_string(), |b| {
                    format!("broker {b}")
                });
            let epoch = if copy.at_latest_epoch {
                "it holds the latest leader epoch in the inputs"
            } else {
                "it does not hold the latest leader epoch in the inputs: check it has caught up"
            };
            let mut commands = vec![c.describe(&format!(
                "{who} must lead partition {} or be in its ISR before {} starts",
                c.partition, c.broker
            ))];
            commands.extend(c.save());
            commands.extend(c.restart(&format!(
                "recovery truncates to offset {} and the replica re-fetches {range} from the leader",
                l.first_lost_offset
            )));
            commands.extend(c.after(None));
            Decision {
                decision: format!(
                    "let {} truncate and re-fetch: {who} holds offsets {range} intact ({epoch})",
                    c.broker
                ),
                commands,
            }
        }
        None => {
            let mut commands = c.save();
            commands.push(c.describe(
                "a replica outside these inputs in the ISR? only then restart this broker as a follower: it truncates and re-fetches",
            ));
            commands.extend(c.after(Some(l.first_lost_offset)));
            Decision {
                decision: format!(
                    "this is the only copy of offsets {range} in the inputs: save the damaged range before {} starts (recovery removes it); restart only as a follower of a replica that holds it",
                    c.broker
                ),
                commands,
            }
        }
    }
}
