//! [`SegmentNames`]: the file names of a partition's segments with a `.log`, in walk
//! order — what a [`super::BatchKey`]'s or a kept record's segment number indexes.
//!
//! Every partition keeps them until the cluster stage (the replica comparison, the
//! coordinators' and the tiering checks name the segment of what they cite), so they are
//! kept small: a name of the form the broker writes (`LogFileUtils.logFile`: the base
//! offset as 20 decimal digits, then `.log`) is kept as its base offset and written out
//! again when read; any other name (a file given on its own, a longer offset) is kept as
//! found. A one-segment partition pays 24 bytes inline and 24 on the heap, where a list
//! of `String`s paid ≈ 90.

use crate::discover::layout::{FileKind, parse_segment_file_name};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// One segment's file name: of the broker's form, its base offset (no heap); any other,
/// as found. Serialised as the name. Also what a segment's walk is named by
/// ([`crate::partition::recovery::SegmentWalk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Name {
    /// `{offset:020}.log`.
    Base(i64),
    /// Any other name, as found.
    Other(Box<str>),
}

impl Name {
    /// A name discovery reads as a `.log` of offset N (`parse_segment_file_name`) that is
    /// also exactly what the broker writes for N: kept as N; any other as found.
    pub(crate) fn of(name: &str) -> Name {
        match base_of(name) {
            Some(offset) => Name::Base(offset),
            None => Name::Other(name.into()),
        }
    }

    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Name::Base(offset) => Cow::Owned(format!("{offset:020}.log")),
            Name::Other(name) => Cow::Borrowed(name),
        }
    }
}

/// The base offset of a name of the broker's form (see [`Name::of`]).
fn base_of(name: &str) -> Option<i64> {
    match parse_segment_file_name(name) {
        Some((offset, FileKind::Log)) if name.len() == 24 && offset >= 0 => Some(offset),
        _ => None,
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        match self {
            Name::Base(offset) => base_of(other) == Some(*offset),
            Name::Other(name) => **name == *other,
        }
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl Serialize for Name {
    fn serialize<Se: Serializer>(&self, s: Se) -> Result<Se::Ok, Se::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Name::of(&String::deserialize(d)?))
    }
}

/// The file names of a partition's segments with a `.log`, in order (see the module
/// documentation). Serialised as a list of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SegmentNames(Vec<Name>);

impl SegmentNames {
    /// Append the next segment's name.
    pub fn push(&mut self, name: &str) {
        self.0.push(Name::of(name));
    }

    /// The name of segment number `segment` (`None`: no such segment).
    pub fn get(&self, segment: u32) -> Option<Cow<'_, str>> {
        self.0.get(segment as usize).map(Name::text)
    }

    /// The name of segment number `segment`, empty when there is no such segment.
    pub fn name(&self, segment: u32) -> Cow<'_, str> {
        self.get(segment).unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names, in order.
    pub fn iter(&self) -> impl Iterator<Item = Cow<'_, str>> {
        self.0.iter().map(Name::text)
    }

    /// Give back the room the list grew with.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
}

impl<S: AsRef<str>> FromIterator<S> for SegmentNames {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        SegmentNames(iter.into_iter().map(|n| Name::of(n.as_ref())).collect())
    }
}

impl Serialize for SegmentNames {
    fn serialize<Se: Serializer>(&self, s: Se) -> Result<Se::Ok, Se::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for SegmentNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let mut out: SegmentNames = names.iter().collect();
        out.shrink_to_fit();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_brokers_form_are_kept_as_offsets_and_read_back_the_same() {
        let given = [
            "00000000000000000000.log",
            "00000000000000012345.log",
            "09223372036854775807.log",
            // Not the broker's form: kept as found.
            "99999999999999999999.log",
            "18446744073709551615.log",
            "0000000000000000001.log",
            "000000000000000000001.log",
            "00000000000000000000.log.deleted",
            "0000000000000000000a.log",
            "+0000000000000000001.log",
            "segment.log",
            "",
        ];
        let names: SegmentNames = given.iter().collect();
        assert_eq!(names.len(), given.len());
        for (i, g) in given.iter().enumerate() {
            assert_eq!(names.get(i as u32).as_deref(), Some(*g));
        }
        assert_eq!(names.0[1], Name::Base(12345));
        assert_eq!(names.0[3], Name::Other("99999999999999999999.log".into()));
        assert_eq!(names.get(given.len() as u32), None);
        assert_eq!(names.name(given.len() as u32), "");
        let json = serde_json::to_string(&names).unwrap();
        assert_eq!(json, serde_json::to_string(&given).unwrap());
        let back: SegmentNames = serde_json::from_str(&json).unwrap();
        assert_eq!(back, names);
    }

    #[test]
    fn a_name_equals_its_text_only() {
        let base = Name::of("00000000000000012345.log");
        assert_eq!(base, Name::Base(12345));
        assert!(base == *"00000000000000012345.log");
        // The same offset written another way is another name.
        assert!(base != *"0000000000000012345.log");
        assert!(base != *"00000000000000012346.log");
        let text = String::from("00000000000000012345.log");
        assert!(base == text);
        let other = Name::of("segment.log");
        assert!(other == *"segment.log");
        assert!(other != *"00000000000000000000.log");
        let json = serde_json::to_string(&base).unwrap();
        assert_eq!(json, "\"00000000000000012345.log\"");
        assert_eq!(serde_json::from_str::<Name>(&json).unwrap(), base);
        assert_eq!(
            serde_json::from_str::<Name>("\"segment.log\"").unwrap(),
            other
        );
    }
}
