//! `klogscan groups --format json`: every field of every group. (The tables, fitted to
//! the terminal's width, are `report::table::write_groups_with` and
//! `report::table::write_group_members_with`.)

use super::model::Group;
use std::io::{self, Write};

/// `{"klogscan_groups": 1, "groups":[…]}` with every field of every group.
pub fn write_json(groups: &[Group], out: &mut dyn Write) -> io::Result<()> {
    let v = serde_json::json!({ "klogscan_groups": 1, "groups": groups });
    crate::escape::write_pretty_json(&mut *out, &v)?;
    writeln!(out)
}
