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
//! * **Truncated above the checkpointed high watermark**: nothing below the checkpoint is
//!   removed, but the checkpoint is a lower bound — check a leader holds the rest, save,
//!   let the broker truncate, watch.
//! * **Damage recovery never looks at** (a clean shutdown, below the recovery point), or
//!   looks at and keeps (a batch whose size, CRC and offsets pass): the
//!   broker serves the bytes as they are, so restarting changes nothing; the replica has to
//!   be replaced (moved out of the log dir while the broker is stopped: it re-creates and
//!   re-fetches it whole from the leader), after saving it.
//!
//! * **A copy no client reads** (`-delete`, `-stray`, `-future`): no restart and no move —
//!   what the live directory serves is judged by its own findings; a `-future` copy
//!   becomes live when its move completes, so the move is to be cancelled or redone.
//!
//! Every value in a command is quoted for POSIX shells ([`crate::escape::ShellArgs`]);
//! comments after `#` say where to run it. The commands run on the broker (`cp`, `mv`,
//! `kafka-dump-log.sh`) name the broker's own path; a copy read from an archive
//! (`broker1.tgz!/…`) or through a relative path gives `<log-dir>/<topic>-<partition>` and a
//! note instead, while `klogscan` commands keep the analysis path they can read.

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

pub(super) fn is_damage(k: Kind) -> bool {
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
    /// The broker's node id, when known and its log dir is a KRaft node's
    /// (`kafka-server-stop.sh --node-id`).
    node_id: Option<i32>,
    /// The directory and segment as the analysis reads them (for `klogscan`, which runs
    /// where the copy is).
    dir: String,
    segment: Option<String>,
    /// The same on the broker's disk, for the commands run there (`cp`, `mv`,
    /// `kafka-dump-log.sh`): the path itself when it is the broker's (absolute, not an
    /// archive member), else `<log-dir>/…` and a note; the segment (for
    /// `kafka-dump-log.sh --files` only) is `<segment>` when its path holds a comma.
    broker_dir: String,
    broker_segment: Option<String>,
    topic: String,
    partition: String,
}

/// The path on the broker's own disk of `path` as a report names it: itself when
/// absolute; without its label when a merge labelled it with its broker (`node-1:/data/…`,
/// `c1/node-1:/data/…`: paths several bundles share); `None` for a member of an archive
/// (`broker1.tgz!/…`) or a relative path, which name the analysis copy only.
fn broker_path(path: &str) -> Option<String> {
    if path.contains("!/") {
        return None;
    }
    if path.starts_with('/') {
        return Some(path.to_string());
    }
    match path.split_once(":/") {
        Some((label, rest)) if !label.is_empty() => Some(format!("/{rest}")),
        _ => None,
    }
}

/// The `.log` file of finding `f` in directory `dir`; `None` when the finding names no
/// segment.
fn segment_in(f: &Finding, dir: &str) -> Option<String> {
    f.segment.as_ref().filter(|s| s.ends_with(".log")).map(|s| {
        if dir.is_empty() {
            s.clone()
        } else {
            format!("{}/{s}", dir.trim_end_matches('/'))
        }
    })
}

impl Copy {
    fn of(f: &Finding, args: &mut ShellArgs) -> Copy {
        let path = f.source.path.clone().unwrap_or_default();
        let segment = segment_in(f, &path).map(|s| args.path(&s, "segment"));
        let on_broker = broker_path(&path);
        let (broker_dir, broker_segment) = if on_broker.is_none() && !path.is_empty() {
            let note = "<log-dir>: the damaged copy was read from an archive or a relative path, not from the broker's disk; on the broker, the partition directory is under the log.dirs entry holding it".to_string();
            args.note_once(note);
            let tp = path.rsplit('/').next().unwrap_or_default();
            let dir = match crate::escape::shell_quote(tp) {
                // `.` and `..` (a segment named alone in the working directory) name no
                // partition directory on the broker.
                Some(q) if !tp.is_empty() && tp != "." && tp != ".." => format!("<log-dir>/{q}"),
                _ => "<log-dir>/<partition-dir>".to_string(),
            };
            let seg = f.segment.as_ref().filter(|s| s.ends_with(".log")).map(|s| {
                match crate::escape::shell_quote(s) {
                    Some(q) => format!("{dir}/{q}"),
                    None => format!("{dir}/<segment>"),
                }
            });
            (dir, seg)
        } else {
            let bare = on_broker.unwrap_or_default();
            // For `kafka-dump-log.sh --files` only.
            let seg = segment_in(f, &bare).map(|s| args.dump_log_file(&s));
            (args.path(&bare, "partition-dir"), seg)
        };
        Copy {
            // `--node-id` matches `node.id` in the process's properties file: a KRaft
            // node's; a ZooKeeper-mode broker's names it `broker.id` and is never matched.
            node_id: f.source.broker_id.filter(|_| f.source.kraft),
            broker: f
                .source
                .broker_id
                .map_or("the broker holding it".to_string(), |b| {
                    format!("broker {b}")
                }),
            dir: args.path(&path, "partition-dir"),
            segment,
            broker_dir,
            broker_segment,
            topic: args.topic(&f.topic),
            partition: args.partition(f.partition),
        }
    }

    fn save(&self) -> Vec<String> {
        let mut out = vec![format!(
            "mkdir -p {SAVE_DIR} && cp -a {} {SAVE_DIR}/   # on {}, before it starts: the damaged copy, byte for byte",
            self.broker_dir, self.broker
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

    /// Stop the broker: only its own process where the node id is known (`--node-id`, Kafka
    /// 3.7+; without it the script signals every Kafka process of the host, controllers
    /// and co-located brokers included), and wait for it to exit before touching its files
    /// (the script returns once the signal is sent).
    fn stop(&self, when: &str) -> String {
        match self.node_id {
            Some(id) => format!(
                "kafka-server-stop.sh --node-id={id}   # on {}{when}; wait until its process has exited (3.7+; older scripts stop every Kafka process of the host)",
                self.broker
            ),
            None => format!(
                "kafka-server-stop.sh   # on {}{when}: it stops every Kafka process of the host (--node-id picks one process by the node.id of its properties file, which a ZooKeeper-mode broker does not have); wait until they have exited",
                self.broker
            ),
        }
    }

    fn describe(&self, why: &str) -> String {
        format!(
            "kafka-topics.sh --bootstrap-server <broker> --describe {}   # {why}",
            crate::escape::topic_regex_flag(&self.topic)
        )
    }

    fn restart(&self, what: &str) -> Vec<String> {
        vec![
            self.stop(", if it runs"),
            format!(
                "kafka-server-start.sh -daemon <server.properties>   # on {}: {what}",
                self.broker
            ),
            format!(
                "kafka-topics.sh --bootstrap-server <broker> --describe --under-replicated-partitions {}   # watch until partition {} leaves this list",
                crate::escape::topic_regex_flag(&self.topic),
                self.partition
            ),
        ]
    }

    fn after(&self, end: Option<i64>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(seg) = &self.broker_segment {
            let ends = end.map_or(" the truncation point".to_string(), |e| {
                format!(" offset {e}")
            });
            out.push(format!(
                "kafka-dump-log.sh --files {seg} --deep-iteration   # after the restart: no invalid batch up to{ends} (the follower appends after it again)"
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
    if !first.source.copy.is_live() {
        return Some(non_live(first, &c));
    }
    let fate = DamageFate::of(first);
    let at = first
        .offset
        .map_or(String::new(), |o| format!(" at offset {o}"));
    let d = match fate {
        // Recovery never looks at the batch, or looks and keeps it (`LogSegment.recover`
        // checks a batch's size, CRC and offsets only; a replica never re-fetches below
        // its log end): either way a restart serves the same bytes.
        Some(DamageFate {
            fate: Fate::NotRecovered | Fate::Recovered,
            ..
        }) => {
            let mut commands = vec![c.describe(
                "another replica in the ISR? then this copy can be replaced by a re-fetch",
            )];
            commands.extend(c.save());
            commands.push(c.stop(""));
            commands.push(format!(
                "mv {} {SAVE_DIR}/{}-{}.replaced   # on {}, only when another replica holds the data: out of the log dir, the broker re-creates the replica and re-fetches it whole",
                c.broker_dir,
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
                    "replace this replica: recovery {} the damaged bytes{at}, so {} serves them as they are after any restart; with another replica in the ISR, move this copy out and let it re-fetch; as the only copy, keep it and save what is readable",
                    match fate.map(|f| f.fate) {
                        Some(Fate::Recovered) =>
                            "checks and keeps (their size, CRC and offsets pass)",
                        _ => "does not look at",
                    },
                    c.broker
                ),
                commands,
            }
        }
        Some(DamageFate {
            log_end_offset_after: end,
            high_watermark: Some(hw),
            ..
        }) if end.is_some_and(|e| e >= hw) => {
            let end = end.unwrap_or(hw);
            let mut commands = vec![c.describe(
                "another replica in the ISR holding the records past the checkpoint? this broker re-fetches them only from a leader that holds them",
            )];
            commands.extend(c.save());
            commands.extend(c.restart(&format!(
                "recovery truncates the log to offset {end} and the replica re-fetches from the leader"
            )));
            commands.extend(c.after(Some(end)));
            Decision {
                decision: format!(
                    "let {} truncate: recovery cuts the log at offset {end}, at or above the checkpointed high watermark {hw}, so nothing below {hw} is removed; records between {hw} and {end} may still have been acknowledged (the checkpoint is written periodically, a lower bound of the high watermark), so save them and let the broker re-fetch from a leader that holds them",
                    c.broker
                ),
                commands,
            }
        }
        _ => {
            let hw = fate.and_then(|f| f.high_watermark);
            let mut commands = c.save();
            commands.push(c.describe(
                "another replica in the ISR? then restart this broker as a follower: it truncates and re-fetches",
            ));
            commands.extend(c.restart("recovery truncates at the damage"));
            commands.extend(c.after(fate.and_then(|f| f.log_end_offset_after)));
            Decision {
                decision: format!(
                    "save the damaged range first{at}: whether acknowledged data lies past it is not known ({}); then let {} truncate and re-fetch from a replica that holds the range",
                    match hw {
                        Some(hw) => format!(
                            "the checkpointed high watermark {hw} lies above where recovery ends"
                        ),
                        None => "no high watermark checkpoint for this copy".to_string(),
                    },
                    c.broker
                ),
                commands,
            }
        }
    };
    Some(d)
}

/// The decision for damage in a copy no client reads (`-delete`, `-stray`, `-future`):
/// never a restart or a move, which would not change what the live copy serves.
fn non_live(f: &Finding, c: &Copy) -> Decision {
    use crate::finding::CopyKind;
    let phrase = crate::discover::identity::copy_phrase(f.source.copy);
    let (decision, mut commands) = match f.source.copy {
        CopyKind::Future => (
            format!(
                "the damage is {phrase}: when the move completes this copy replaces the live directory and its damage is served; cancel the move, or let it finish only after re-creating this future copy (move the partition to another log dir again) — the live directory is judged by its own findings"
            ),
            vec![format!(
                "kafka-log-dirs.sh --bootstrap-server <broker> --describe {}   # the future replica of partition {} and its log dir",
                crate::escape::flag("topic-list", &c.topic),
                c.partition
            )],
        ),
        CopyKind::Stray => (
            format!(
                "nothing to restart: the damage is {phrase}; no client reads that copy — keep it as evidence if needed, and remove it once the live replicas are confirmed healthy"
            ),
            vec![c.describe("the live replicas of this partition, before this copy is removed")],
        ),
        _ => (
            format!(
                "nothing to do on this copy: the damage is {phrase}; the broker deletes the directory after file.delete.delay.ms and no client reads it — the live directory is judged by its own findings"
            ),
            Vec::new(),
        ),
    };
    commands.extend(c.save());
    Decision { decision, commands }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::CopyKind;

    /// A CRC finding at offset 5 of `orders-0` on broker 1 whose next start has `fate`.
    fn damaged(fate: &str, end: Option<i64>, hw: Option<i64>, copy: CopyKind) -> Finding {
        let mut f = Finding::new(Kind::CrcMismatch, "orders", 0, "crc")
            .offset(5)
            .segment("00000000000000000000.log")
            .evidence(serde_json::json!({
                "recovery": {"fate": fate, "log_end_offset_after": end, "high_watermark": hw}
            }));
        f.source.broker_id = Some(1);
        f.source.kraft = true;
        f.source.path = Some("/data/kafka/orders-0".into());
        f.source.copy = copy;
        f
    }

    fn decide(f: Finding) -> Decision {
        damage(&[f], &[0], &mut ShellArgs::default()).expect("a decision")
    }

    /// A batch recovery checks and keeps (size, CRC and offsets pass: an invalid record
    /// count, say) is served after any restart like one it never reads: replace the
    /// replica — not "recovery truncates at the damage", and no claim that the high
    /// watermark checkpoint is missing when it is there.
    #[test]
    fn damage_recovery_keeps_gets_the_replacement_decision() {
        let d = decide(damaged("recovered", None, Some(10), CopyKind::Live));
        assert!(
            d.decision
                .starts_with("replace this replica: recovery checks and keeps"),
            "{}",
            d.decision
        );
        assert!(
            d.commands.iter().any(|c| c.starts_with("mv ")),
            "{:?}",
            d.commands
        );
        // Only this broker's process is stopped, and its exit awaited.
        let stop = d
            .commands
            .iter()
            .find(|c| c.starts_with("kafka-server-stop.sh"))
            .unwrap();
        assert!(
            stop.starts_with("kafka-server-stop.sh --node-id=1 "),
            "{stop}"
        );
        assert!(stop.contains("wait until its process has exited"), "{stop}");
        assert!(
            !d.commands
                .iter()
                .any(|c| c.contains("truncates at the damage"))
        );
        let d = decide(damaged("not_recovered", None, Some(10), CopyKind::Live));
        assert!(
            d.decision
                .starts_with("replace this replica: recovery does not look at"),
            "{}",
            d.decision
        );
    }

    /// Truncation above the checkpointed high watermark: nothing below the checkpoint is
    /// removed, but the checkpoint is a lower bound — never "nothing acknowledged".
    #[test]
    fn truncation_above_the_checkpoint_does_not_claim_nothing_acknowledged() {
        let d = decide(damaged("truncated_here", Some(5), Some(3), CopyKind::Live));
        assert!(
            d.decision.contains("nothing below 3 is removed"),
            "{}",
            d.decision
        );
        assert!(
            d.decision.contains("may still have been acknowledged"),
            "{}",
            d.decision
        );
        assert!(
            !d.decision.contains("nothing acknowledged"),
            "{}",
            d.decision
        );
        assert!(
            d.commands[0].contains("--describe --topic orders"),
            "{:?}",
            d.commands
        );
        // Below it: the checkpoint is named, not said to be missing.
        let d = decide(damaged("truncated_here", Some(5), Some(9), CopyKind::Live));
        assert!(
            d.decision.contains("high watermark 9 lies above"),
            "{}",
            d.decision
        );
        let d = decide(damaged("truncated_here", Some(5), None, CopyKind::Live));
        assert!(
            d.decision.contains("no high watermark checkpoint"),
            "{}",
            d.decision
        );
    }

    /// Damage in a copy no client reads gets no stop, start or move of the broker's
    /// directory: a -delete copy needs nothing, a -stray one is removed once the live
    /// replicas are checked, a -future one is about its move.
    #[test]
    fn damage_in_a_copy_no_client_reads_gets_no_restart() {
        for (copy, want) in [
            (CopyKind::Delete, "nothing to do on this copy"),
            (CopyKind::Stray, "nothing to restart"),
            (CopyKind::Future, "cancel the move"),
        ] {
            let d = decide(damaged("not_recovered", None, Some(10), copy));
            assert!(d.decision.contains(want), "{copy:?}: {}", d.decision);
            assert!(
                !d.commands
                    .iter()
                    .any(|c| c.starts_with("mv ") || c.starts_with("kafka-server-")),
                "{copy:?}: {:?}",
                d.commands
            );
        }
        let d = decide(damaged("not_recovered", None, Some(10), CopyKind::Future));
        assert!(
            d.commands
                .iter()
                .any(|c| c.starts_with("kafka-log-dirs.sh")),
            "{:?}",
            d.commands
        );
    }

    /// A copy read from an archive (or a relative path) is not the broker's path: the
    /// commands run on the broker name `<log-dir>/…` with a note; `klogscan verify` keeps
    /// the path it can read.
    #[test]
    fn archive_paths_are_not_pasted_into_broker_commands() {
        let mut f = damaged("not_recovered", None, Some(10), CopyKind::Live);
        f.source.path = Some("c1.tgz!/C1/codec-none-0".into());
        let mut args = ShellArgs::default();
        let d = damage(&[f], &[0], &mut args).unwrap();
        let on_broker: Vec<&String> = d
            .commands
            .iter()
            .filter(|c| {
                c.starts_with("mkdir") || c.starts_with("mv ") || c.starts_with("kafka-dump-log")
            })
            .collect();
        assert!(!on_broker.is_empty(), "{:?}", d.commands);
        for c in on_broker {
            assert!(!c.contains("c1.tgz!"), "{c}");
            assert!(c.contains("<log-dir>/codec-none-0"), "{c}");
        }
        assert!(
            args.notes().iter().any(|n| n.starts_with("<log-dir>")),
            "{:?}",
            args.notes()
        );
        // An absolute path of the broker's own is used as it is.
        let mut args = ShellArgs::default();
        let d = damage(
            &[damaged("not_recovered", None, Some(10), CopyKind::Live)],
            &[0],
            &mut args,
        )
        .unwrap();
        assert!(
            d.commands
                .iter()
                .any(|c| c.contains("cp -a /data/kafka/orders-0 ")),
            "{:?}",
            d.commands
        );
        assert!(args.notes().is_empty(), "{:?}", args.notes());
        // A merge's broker label on an absolute path is dropped on the broker.
        assert_eq!(
            broker_path("node-1:/data/kafka/orders-0").as_deref(),
            Some("/data/kafka/orders-0")
        );
        assert_eq!(
            broker_path("c1/node-1:/data/kafka/orders-0").as_deref(),
            Some("/data/kafka/orders-0")
        );
        assert_eq!(broker_path("C1/orders-0"), None);
        assert_eq!(broker_path("/tmp/c1.tgz!/C1/orders-0"), None);
    }

    /// A segment named alone in the working directory (its directory `.` or `..`) names
    /// no partition directory: the broker's commands say `<partition-dir>`, never
    /// `<log-dir>/.`.
    #[test]
    fn a_dot_directory_is_no_partition_directory_on_the_broker() {
        for dir in [".", ".."] {
            let mut f = damaged("not_recovered", None, Some(10), CopyKind::Live);
            f.source.path = Some(dir.into());
            let mut args = ShellArgs::default();
            let d = damage(&[f], &[0], &mut args).unwrap();
            let all = d.commands.join("\n");
            assert!(all.contains("<log-dir>/<partition-dir>"), "{all}");
            assert!(!all.contains(&format!("<log-dir>/{dir}")), "{all}");
        }
    }
}
