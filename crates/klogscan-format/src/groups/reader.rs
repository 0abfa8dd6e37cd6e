//! The generic reader of the schema tables: a zero-copy value tree (strings, bytes and
//! uuids borrow the record's bytes) or, for validation, a walk that builds nothing.
//!
//! Errors name the schema, the field and the byte position inside the key or value, and
//! can be rendered as the message Kafka's generated readers throw
//! ([`DecodeError::kafka_message`]), which is what `kafka-dump-log` prints after
//! `Error at offset N, skipping.`.

use super::schema::{Dft, Field, Schema, Ty};
use crate::bytes::{UvarintEnd, uvarint_at};
use std::fmt;

/// Key or value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Key,
    Value,
}

impl Part {
    fn as_str(self) -> &'static str {
        match self {
            Part::Key => "key",
            Part::Value => "value",
        }
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The key or value is shorter than its int16 type/version.
    NoVersion,
    /// A value version the schema does not define.
    UnsupportedVersion,
    /// A record's value version outside its type's supported range, checked before the
    /// value is read (`CoordinatorRecordSerde.deserialize` since KAFKA-18672, 4.0:
    /// `UnknownRecordVersionException`).
    UnknownRecordVersion { record_type: i16 },
    /// A fixed-width field runs past the end (Java: `BufferUnderflowException`).
    Underflow,
    /// A string longer than the bytes left.
    ShortString { len: u64, available: u64 },
    /// A string length above 0x7fff.
    StringTooLong { len: u64 },
    /// A byte array (or a tagged field) longer than the bytes left.
    ShortBytes { len: u64, available: u64 },
    /// A null where the schema does not allow one.
    NullNonNullable,
    /// An array count larger than the bytes left.
    CollectionTooLarge { len: u64, available: u64 },
    /// A varint of more than 5 bytes.
    VarintTooLong,
    /// A record with a null key.
    MissingKey,
}

/// A record that does not deserialize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    pub part: Part,
    /// The key type or value version being read.
    pub version: i16,
    pub schema: &'static str,
    pub field: &'static str,
    /// Byte position inside the key or value.
    pub position: usize,
    pub why: Why,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} (version {}) field {} at byte {}: ",
            self.schema,
            self.part.as_str(),
            self.version,
            self.field,
            self.position
        )?;
        match self.why {
            Why::NoVersion => f.write_str("no room for the int16 version"),
            Why::UnsupportedVersion | Why::UnknownRecordVersion { .. } => {
                write!(f, "version {} is not defined", self.version)
            }
            Why::Underflow => f.write_str("runs past the end"),
            Why::ShortString { len, available } => {
                write!(f, "string of {len} bytes but only {available} remain")
            }
            Why::StringTooLong { len } => write!(f, "string length {len} above 32767"),
            Why::ShortBytes { len, available } => {
                write!(f, "{len} bytes but only {available} remain")
            }
            Why::NullNonNullable => f.write_str("null in a non-nullable field"),
            Why::CollectionTooLarge { len, available } => {
                write!(f, "{len} elements but only {available} bytes remain")
            }
            Why::VarintTooLong => f.write_str("varint is too long"),
            Why::MissingKey => f.write_str("the record has no key"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<DecodeError> for crate::error::FormatError {
    fn from(e: DecodeError) -> Self {
        use crate::error::Problem;
        let problem = match e.why {
            Why::NoVersion | Why::Underflow => Problem::Truncated {
                needed: 1,
                available: 0,
            },
            Why::ShortString { len, available }
            | Why::ShortBytes { len, available }
            | Why::CollectionTooLarge { len, available } => Problem::Truncated {
                needed: len,
                available,
            },
            Why::UnsupportedVersion | Why::UnknownRecordVersion { .. } => Problem::OutOfRange {
                value: e.version as i64,
            },
            Why::StringTooLong { len } => Problem::OutOfRange { value: len as i64 },
            Why::NullNonNullable => Problem::Invalid("null in a non-nullable field"),
            Why::VarintTooLong => Problem::VarintTooLong,
            Why::MissingKey => Problem::Invalid("record has a null key"),
        };
        crate::error::FormatError::new(e.schema, e.field, e.position as u64, problem)
    }
}

impl DecodeError {
    /// The message Kafka's `CoordinatorRecordSerde` throws for this error (the generated
    /// readers' texts wrapped in `Could not read record with version V from value's
    /// buffer due to: …`).
    pub fn kafka_message(&self) -> String {
        let part = self.part.as_str();
        let inner = match self.why {
            Why::NoVersion => return format!("Could not read version from {part}'s buffer."),
            Why::UnknownRecordVersion { record_type } => {
                return format!(
                    "Found an unknown record version {} for {record_type} type",
                    self.version
                );
            }
            Why::MissingKey => return "message had a missing key".into(),
            Why::UnsupportedVersion => {
                format!("Can't read version {} of {}", self.version, self.schema)
            }
            Why::Underflow => "null".into(),
            Why::ShortString { len, available } => {
                format!("Error reading string of length {len}, only {available} bytes available")
            }
            Why::StringTooLong { len } => {
                format!(
                    "string field {} had invalid length {len}",
                    camel(self.field)
                )
            }
            Why::ShortBytes { len, available } => format!(
                "Error reading byte array of {len} byte(s): only {available} byte(s) available"
            ),
            Why::NullNonNullable => format!(
                "non-nullable field {} was serialized as null",
                camel(self.field)
            ),
            Why::CollectionTooLarge { len, available } => format!(
                "Tried to allocate a collection of size {len}, but there are only {available} bytes remaining."
            ),
            Why::VarintTooLong => {
                "Varint is too long, the most significant bit in the 5th byte is set".into()
            }
        };
        let inner = inner.strip_suffix('.').unwrap_or(&inner).to_string();
        format!(
            "Could not read record with version {} from {part}'s buffer due to: {inner}.",
            self.version
        )
    }
}

/// The JSON name of a schema field: its first letter in lower case.
pub fn camel(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A decoded field value. Strings, bytes and uuids borrow the record's bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Uuid(&'a [u8]),
    /// `None`: null.
    Str(Option<&'a [u8]>),
    Bytes(Option<&'a [u8]>),
    Array(Option<Vec<Val<'a>>>),
    Struct(Option<Box<StructVal<'a>>>),
    /// A field the validating walk read but did not build.
    Skipped,
}

impl<'a> Val<'a> {
    /// The integer (0 for anything else).
    pub fn int(&self) -> i64 {
        match self {
            Val::Int(i) => *i,
            Val::Bool(b) => *b as i64,
            _ => 0,
        }
    }
    /// The string, lossily decoded (`None` for null or not a string).
    pub fn string(&self) -> Option<String> {
        match self {
            Val::Str(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
    /// The elements (empty for null or not an array).
    pub fn items(&self) -> &[Val<'a>] {
        match self {
            Val::Array(Some(v)) => v,
            _ => &[],
        }
    }
    /// The struct (`None` for null).
    pub fn as_struct(&self) -> Option<&StructVal<'a>> {
        match self {
            Val::Struct(Some(s)) => Some(s),
            _ => None,
        }
    }
    /// True when the value equals the field's default (tagged fields at their default
    /// are not written and not printed).
    pub fn is_default(&self, d: Dft) -> bool {
        match (self, d) {
            (Val::Int(i), Dft::Int(x)) => *i == x,
            (Val::Int(i), Dft::Zero) => *i == 0,
            (Val::Float(x), Dft::Zero) => *x == 0.0,
            (Val::Bool(b), Dft::Zero) => !*b,
            (Val::Uuid(u), Dft::Zero) => u.iter().all(|b| *b == 0),
            (
                Val::Str(None) | Val::Bytes(None) | Val::Array(None) | Val::Struct(None),
                Dft::Null,
            ) => true,
            (Val::Str(Some(s)) | Val::Bytes(Some(s)), Dft::Zero) => s.is_empty(),
            (Val::Array(Some(v)), Dft::Zero) => v.is_empty(),
            _ => false,
        }
    }
}

/// The fields of a struct, in schema order; `None` for a field absent at the version.
#[derive(Debug, Clone)]
pub struct StructVal<'a> {
    pub fields: &'static [Field],
    pub vals: Vec<Option<Val<'a>>>,
}

impl PartialEq for StructVal<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.fields, other.fields) && self.vals == other.vals
    }
}

impl<'a> StructVal<'a> {
    /// The value of field `name`, when present at the version.
    pub fn get(&self, name: &str) -> Option<&Val<'a>> {
        let i = self.fields.iter().position(|f| f.name == name)?;
        self.vals.get(i)?.as_ref()
    }
    /// An integer field (its default when absent).
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Some(v) => v.int(),
            None => match self
                .fields
                .iter()
                .find(|f| f.name == name)
                .map(|f| f.default)
            {
                Some(Dft::Int(i)) => i,
                _ => 0,
            },
        }
    }
    /// A string field (`None` when null or absent).
    pub fn str(&self, name: &str) -> Option<String> {
        self.get(name).and_then(Val::string)
    }
    /// An array field's elements.
    pub fn items(&self, name: &str) -> &[Val<'a>] {
        self.get(name).map(Val::items).unwrap_or(&[])
    }
    /// An array of strings.
    pub fn strings(&self, name: &str) -> Vec<String> {
        self.items(name).iter().filter_map(Val::string).collect()
    }
    /// An array of integers.
    pub fn ints(&self, name: &str) -> Vec<i64> {
        self.items(name).iter().map(Val::int).collect()
    }
}

/// A cursor over one key or value.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    part: Part,
    version: i16,
    schema: &'static str,
    /// Build the value tree (false: validate only, allocate nothing).
    build: bool,
}

type R<T> = Result<T, DecodeError>;

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], part: Part, build: bool) -> Self {
        Reader {
            buf,
            pos: 0,
            part,
            version: 0,
            schema: "",
            build,
        }
    }

    pub fn err(&self, field: &'static str, why: Why) -> DecodeError {
        DecodeError {
            part: self.part,
            version: self.version,
            schema: self.schema,
            field,
            position: self.pos,
            why,
        }
    }

    pub fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn fixed(&mut self, n: usize, field: &'static str) -> R<&'a [u8]> {
        if self.left() < n {
            return Err(self.err(field, Why::Underflow));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The leading int16 (key type or value version).
    pub fn version(&mut self, schema: &'static str) -> R<i16> {
        self.schema = schema;
        if self.left() < 2 {
            return Err(self.err("version", Why::NoVersion));
        }
        let b = self.fixed(2, "version")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn uvarint(&mut self, field: &'static str) -> R<u32> {
        // Java's readUnsignedVarint consumes every byte it reads, so the error position is
        // after them.
        match uvarint_at(self.buf, self.pos) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(UvarintEnd::Truncated { read }) => {
                self.pos += read;
                Err(self.err(field, Why::Underflow))
            }
            Err(UvarintEnd::TooLong) => {
                self.pos += 5;
                Err(self.err(field, Why::VarintTooLong))
            }
        }
    }

    /// A length: compact (uvarint − 1) or int16/int32; `None` for null (-1).
    fn length(&mut self, flexible: bool, wide: bool, field: &'static str) -> R<Option<u64>> {
        let n: i64 = if flexible {
            self.uvarint(field)? as i64 - 1
        } else if wide {
            let b = self.fixed(4, field)?;
            i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64
        } else {
            let b = self.fixed(2, field)?;
            i16::from_be_bytes([b[0], b[1]]) as i64
        };
        Ok(if n < 0 { None } else { Some(n as u64) })
    }

    fn null_or(&self, nullable: bool, field: &'static str) -> R<()> {
        if nullable {
            Ok(())
        } else {
            Err(self.err(field, Why::NullNonNullable))
        }
    }

    /// Read one value of type `ty`.
    fn value(&mut self, ty: &Ty, fl: bool, nullable: bool, field: &'static str) -> R<Val<'a>> {
        let be = |b: &[u8]| b.iter().fold(0i64, |a, x| (a << 8) | *x as i64);
        Ok(match *ty {
            Ty::Bool => Val::Bool(self.fixed(1, field)?[0] != 0),
            Ty::I8 => Val::Int(self.fixed(1, field)?[0] as i8 as i64),
            Ty::I16 => Val::Int(be(self.fixed(2, field)?) as i16 as i64),
            Ty::U16 => Val::Int(be(self.fixed(2, field)?) as u16 as i64),
            Ty::I32 => Val::Int(be(self.fixed(4, field)?) as i32 as i64),
            Ty::I64 => Val::Int(be(self.fixed(8, field)?)),
            Ty::F64 => Val::Float(f64::from_bits(be(self.fixed(8, field)?) as u64)),
            Ty::Uuid => Val::Uuid(self.fixed(16, field)?),
            Ty::Str => match self.length(fl, false, field)? {
                None => {
                    self.null_or(nullable, field)?;
                    Val::Str(None)
                }
                Some(n) if n > 0x7fff => return Err(self.err(field, Why::StringTooLong { len: n })),
                Some(n) => {
                    let available = self.left() as u64;
                    if n > available {
                        return Err(self.err(field, Why::ShortString { len: n, available }));
                    }
                    Val::Str(Some(self.fixed(n as usize, field)?))
                }
            },
            Ty::Bytes => match self.length(fl, true, field)? {
                None => {
                    self.null_or(nullable, field)?;
                    Val::Bytes(None)
                }
                Some(n) => {
                    let available = self.left() as u64;
                    if n > available {
                        return Err(self.err(field, Why::ShortBytes { len: n, available }));
                    }
                    Val::Bytes(Some(self.fixed(n as usize, field)?))
                }
            },
            Ty::Array(elem) => match self.length(fl, true, field)? {
                None => {
                    self.null_or(nullable, field)?;
                    Val::Array(None)
                }
                Some(n) => {
                    let available = self.left() as u64;
                    if n > available {
                        return Err(self.err(field, Why::CollectionTooLarge { len: n, available }));
                    }
                    let mut items = Vec::with_capacity(if self.build { n as usize } else { 0 });
                    for _ in 0..n {
                        let v = self.value(elem, fl, false, field)?;
                        if self.build {
                            items.push(v);
                        }
                    }
                    if self.build {
                        Val::Array(Some(items))
                    } else {
                        Val::Skipped
                    }
                }
            },
            Ty::Struct(fields) => {
                if nullable {
                    let b = self.fixed(1, field)?[0] as i8;
                    if b < 0 {
                        return Ok(Val::Struct(None));
                    }
                }
                let s = self.fields(fields, fl)?;
                if self.build {
                    Val::Struct(Some(Box::new(s)))
                } else {
                    Val::Skipped
                }
            }
        })
    }

    /// Read the fields of a struct at the reader's version (`fl`: flexible encoding).
    pub fn fields(&mut self, fields: &'static [Field], fl: bool) -> R<StructVal<'a>> {
        let version = self.version;
        let mut vals: Vec<Option<Val<'a>>> =
            Vec::with_capacity(if self.build { fields.len() } else { 0 });
        for f in fields {
            let v = if !f.in_version(version) || (f.tag.is_some() && !fl) {
                None
            } else if f.tag.is_some() {
                // Filled from the tagged section below, default until then.
                Some(default_val(f))
            } else {
                Some(self.value(&f.ty, fl, f.nullable, f.name)?)
            };
            if self.build {
                vals.push(v);
            }
        }
        if fl {
            let count = self.uvarint("_tagged_fields")?;
            for _ in 0..count {
                let tag = self.uvarint("_tag")?;
                let size = self.uvarint("_tag_size")? as u64;
                let available = self.left() as u64;
                let known = fields
                    .iter()
                    .position(|f| f.tag == Some(tag) && f.in_version(version));
                match known {
                    Some(i) if size <= available => {
                        let f = &fields[i];
                        let end = self.pos + size as usize;
                        let v = self.value(&f.ty, true, f.nullable, f.name)?;
                        if self.pos > end {
                            return Err(self.err(f.name, Why::Underflow));
                        }
                        self.pos = end;
                        if self.build {
                            vals[i] = Some(v);
                        }
                    }
                    _ => {
                        if size > available {
                            return Err(self.err(
                                "_tagged_fields",
                                Why::ShortBytes {
                                    len: size,
                                    available,
                                },
                            ));
                        }
                        self.pos += size as usize;
                    }
                }
            }
        }
        Ok(StructVal { fields, vals })
    }

    /// Read a whole message of `schema` at `version` (the int16 already read).
    pub fn message(&mut self, schema: &'static Schema, version: i16) -> R<StructVal<'a>> {
        self.schema = schema.name;
        self.version = version;
        if version < 0 || version > schema.max_version {
            return Err(self.err("version", Why::UnsupportedVersion));
        }
        self.fields(schema.fields, schema.flexible(version))
    }
}

/// The value of a field that is not in the bytes.
fn default_val(f: &Field) -> Val<'static> {
    match (f.default, f.ty) {
        (Dft::Null, Ty::Str) => Val::Str(None),
        (Dft::Null, Ty::Bytes) => Val::Bytes(None),
        (Dft::Null, Ty::Array(_)) => Val::Array(None),
        (Dft::Null, Ty::Struct(_)) => Val::Struct(None),
        (Dft::Int(i), _) => Val::Int(i),
        (_, Ty::Str) => Val::Str(Some(&[])),
        (_, Ty::Bytes) => Val::Bytes(Some(&[])),
        (_, Ty::Array(_)) => Val::Array(Some(Vec::new())),
        (_, Ty::Uuid) => Val::Uuid(&[0; 16]),
        (_, Ty::Bool) => Val::Bool(false),
        _ => Val::Int(0),
    }
}
