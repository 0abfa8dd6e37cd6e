//! `klogscan groups` output: a table like `kafka-consumer-groups.sh --describe --state`
//! / `kafka-streams-groups.sh --describe`, or JSON.

use super::model::{Group, GroupState};
use std::io::{self, Write};

/// Text from the data (group, member, client ids, hosts, topic names), control
/// characters escaped ([`crate::escape`]): no terminal command, no forged line.
fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

/// One line per group.
pub fn write_table(groups: &[Group], out: &mut dyn Write) -> io::Result<()> {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    // Groups of several clusters: a CLUSTER column first (the same group id in two
    // clusters is two groups).
    let clusters: std::collections::BTreeSet<&Option<String>> =
        groups.iter().map(|g| &g.cluster_id).collect();
    let with_cluster = clusters.len() > 1;
    let mut header = vec![
        "GROUP",
        "TYPE",
        "STATE",
        "EPOCH",
        "ASSIGNMENT-EPOCH",
        "MEMBERS",
        "OFFSETS",
        "TOPOLOGY",
        "DESCRIPTION(STORED/FAILED)",
        "PARTITION",
    ];
    if with_cluster {
        header.insert(0, "CLUSTER");
    }
    t.set_header(header);
    for g in groups {
        let state = match g.state {
            GroupState::Live if g.simple => "live (offsets only)",
            GroupState::Live => "live",
            GroupState::DeletionUnfinished => "deletion unfinished",
            GroupState::Deleted => "deleted",
        };
        let topology = g.topology.as_ref().map_or("-".to_string(), |t| {
            format!(
                "epoch {} ({} subtopologies)",
                t.epoch,
                t.subtopologies.len()
            )
        });
        let description = if g.group_type == super::model::GroupType::Streams {
            format!("{}/{}", g.description.stored, g.description.failed)
        } else {
            "-".into()
        };
        let mut row = vec![
            esc(&g.group_id),
            g.group_type.as_str().to_string(),
            state.to_string(),
            g.epoch.to_string(),
            if g.assignment_epoch < 0 {
                "-".into()
            } else {
                g.assignment_epoch.to_string()
            },
            g.members.len().to_string(),
            g.offsets.len().to_string(),
            topology,
            description,
            g.partition.to_string(),
        ];
        if with_cluster {
            row.insert(0, g.cluster_id.as_deref().map_or_else(|| "?".into(), esc));
        }
        t.add_row(row);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "{} group(s)", groups.len())
}

/// `{"klogscan_groups": 1, "groups":[…]}` with every field of every group.
pub fn write_json(groups: &[Group], out: &mut dyn Write) -> io::Result<()> {
    let v = serde_json::json!({ "klogscan_groups": 1, "groups": groups });
    crate::escape::write_pretty_json(&mut *out, &v)?;
    writeln!(out)
}

/// One line per member (`kafka-consumer-groups.sh --describe --members --verbose`):
/// group, member, instance, client, host, epoch, assigned partitions or tasks.
pub fn write_members_table(groups: &[Group], out: &mut dyn Write) -> io::Result<()> {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "GROUP",
        "TYPE",
        "MEMBER",
        "INSTANCE",
        "CLIENT-ID",
        "HOST",
        "EPOCH",
        "ASSIGNMENT",
        "TARGET",
    ]);
    let mut n = 0;
    for g in groups {
        for m in g.members.values() {
            n += 1;
            let target = g
                .target_assignment
                .get(&m.member_id)
                .map_or("-".to_string(), |a| a.join(","));
            t.add_row(vec![
                esc(&g.group_id),
                g.group_type.as_str().to_string(),
                esc(&m.member_id),
                m.instance_id.as_deref().map_or_else(|| "-".into(), esc),
                esc(&m.client_id),
                esc(&m.client_host),
                m.member_epoch.to_string(),
                if m.assigned.is_empty() {
                    "-".into()
                } else {
                    esc(&m.assigned.join(","))
                },
                esc(&target),
            ]);
        }
    }
    writeln!(out, "{t}")?;
    writeln!(out, "{n} member(s)")
}
