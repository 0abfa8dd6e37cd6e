//! `klogscan groups` tables: one row per group, like `kafka-consumer-groups.sh --describe
//! --state` / `kafka-streams-groups.sh --describe`, or one per member (`--members`), fitted
//! to the width as every table ([`write_fitted`]): narrower layouts, then one block per
//! group. `--format json` holds every field.

use super::style::{Layout, Shape, Style, led_by, wrap, write_fitted};
use crate::partition::groups::model::{Group, GroupState, GroupType};
use std::io::{self, Write};

/// Text from the data (group, member, client ids, hosts, topic names), control
/// characters escaped ([`crate::escape`]): no terminal command, no forged line.
fn esc(s: &str) -> String {
    crate::escape::text(s).into_owned()
}

/// One line per group (a CLUSTER column first when the groups are of several clusters:
/// the same group id in two clusters is two groups), then how many.
pub fn write_groups_with(groups: &[Group], style: &Style, out: &mut dyn Write) -> io::Result<()> {
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
    let rows: Vec<Vec<String>> = groups.iter().map(|g| group_row(g, with_cluster)).collect();
    let skip = usize::from(with_cluster);
    // Columns of the row without the cluster: GROUP 0, TYPE 1, STATE 2, EPOCH 3, MEMBERS 5,
    // OFFSETS 6, PARTITION 9.
    let narrow: [&[(usize, &str)]; 2] = [
        &[
            (0, "GROUP"),
            (1, "TYPE"),
            (2, "STATE"),
            (3, "EPOCH"),
            (5, "MEMBERS"),
            (6, "OFFSETS"),
            (9, "PARTITION"),
        ],
        &[(0, "GROUP"), (2, "STATE"), (5, "MEMBERS"), (6, "OFFSETS")],
    ];
    let layouts = led_by(with_cluster.then_some("CLUSTER"), &narrow);
    let layouts: Vec<Layout<'_>> = layouts.iter().map(Vec::as_slice).collect();
    // A block is named by its group (and cluster).
    let shape = Shape {
        plain: true,
        lines: None,
        key: 1 + skip,
    };
    write_fitted(style, shape, &header, &rows, &layouts, out)?;
    writeln!(out, "{} group(s)", groups.len())
}

fn group_row(g: &Group, with_cluster: bool) -> Vec<String> {
    let state = match g.state {
        // A simple group (`ClassicGroup.isSimpleGroup`: no protocol type, no member) is
        // what offset commits alone create; one loaded from a group record of an empty
        // group without protocol type may hold no offset at all.
        GroupState::Live if g.simple && g.offsets.is_empty() => "live (empty)",
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
    let description = if g.group_type == GroupType::Streams {
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
    row
}

/// One line per member (`kafka-consumer-groups.sh --describe --members --verbose`):
/// group, member, instance, client, host, epoch, assigned partitions or tasks (listed
/// with spaces, so that a long list wraps).
pub fn write_group_members_with(
    groups: &[Group],
    style: &Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    let header = [
        "GROUP",
        "TYPE",
        "MEMBER",
        "INSTANCE",
        "CLIENT-ID",
        "HOST",
        "EPOCH",
        "ASSIGNMENT",
        "TARGET",
    ];
    let mut rows = Vec::new();
    for g in groups {
        for m in g.members.values() {
            let target = g
                .target_assignment
                .get(&m.member_id)
                .map_or("-".to_string(), |a| a.join(", "));
            rows.push(vec![
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
                    esc(&m.assigned.join(", "))
                },
                esc(&target),
            ]);
        }
    }
    let layouts: [Layout<'_>; 2] = [
        &[
            (0, "GROUP"),
            (2, "MEMBER"),
            (4, "CLIENT-ID"),
            (5, "HOST"),
            (7, "ASSIGNMENT"),
        ],
        &[(0, "GROUP"), (2, "MEMBER"), (7, "ASSIGNMENT")],
    ];
    let shape = Shape {
        plain: true,
        ..Shape::default()
    };
    write_fitted(style, shape, &header, &rows, &layouts, out)?;
    let line = format!("{} member(s)", rows.len());
    writeln!(out, "{}", wrap(&line, usize::from(style.width), 0, 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::walked::Committed;

    /// The state column of a live classic group: members (or a protocol type) make it a
    /// plain live group; a simple group reads "offsets only" when it holds offsets and
    /// "empty" when it holds none (never "offsets only" without an offset).
    #[test]
    fn a_simple_group_is_labelled_by_what_it_holds() {
        let state = |g: &Group| group_row(g, false)[2].clone();
        let mut g = Group::new("g", GroupType::Classic, 0);
        g.protocol_type = Some("consumer".into());
        assert_eq!(state(&g), "live");
        let mut g = Group::new("g", GroupType::Classic, 0);
        g.simple = true;
        assert_eq!(state(&g), "live (empty)");
        g.offsets.push(Committed {
            topic: "t".into(),
            partition: 0,
            offset: 5,
            leader_epoch: -1,
            metadata: String::new(),
            commit_timestamp: 0,
            record_offset: 1,
            topic_id: None,
            expire_timestamp: None,
        });
        assert_eq!(state(&g), "live (offsets only)");
        g.state = GroupState::Deleted;
        assert_eq!(state(&g), "deleted");
    }
}
