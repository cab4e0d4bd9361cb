//! A located document tree: one object of an export (a Node, a Pod, …) as nested maps,
//! sequences and scalars, each with the line and column it was written at. Both readers of
//! `import k8s` (JSON in `json.rs`, YAML in `yaml.rs`) build one tree per object, so that an
//! export of any size is held one object at a time; the tree is deserialised into the typed
//! objects coplan reads (`k8s_objects.rs`) by the serde [`Deserializer`] here, which puts the
//! place of the offending value on every error.
//!
//! Scalars keep their text and whether they were plain (a bare YAML scalar, or a JSON number,
//! `true`, `false`, `null`), and are resolved when a type asks for them: a plain `8` is an
//! integer to an integer field and the text `8` to a string field, as YAML's core schema and
//! Kubernetes' own decoder read them.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::error::ImportError;

/// Where a reader hands what it reads, document by document: the items of a document's
/// top-level `items` sequence one at a time as they are read, then the rest of the document.
pub trait Sink {
    /// Item `index` (1-based) of document `document`'s `items`.
    fn item(&mut self, document: usize, index: usize, node: Node) -> Result<(), ImportError>;
    /// The end of document `document` (1-based; documents with no content are not counted):
    /// its top-level value without the items already handed on, and how many items there
    /// were (`None` when it had no `items` sequence handed on item by item).
    fn document(
        &mut self,
        document: usize,
        rest: Node,
        items: Option<usize>,
    ) -> Result<(), ImportError>;
}

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// One value of a document with where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value starts.
    pub at: Pos,
    /// The value.
    pub value: Value,
}

/// A value: a scalar, a sequence or a map (keys in input order).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar's text; `plain` when it was not quoted (so `8` may be a number and `null`
    /// nothing).
    Scalar {
        /// The text as read (escapes resolved).
        text: String,
        /// Unquoted (YAML plain, JSON number or literal).
        plain: bool,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A map, its entries in input order.
    Map(Vec<(String, Node)>),
    /// A value the reader did not build because nothing reads it (a field counted as ignored,
    /// `fields::Scope`). A struct does not see its key; to a map it is a null.
    Skipped,
}

impl Node {
    /// A map entry by key (the first of duplicates).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Whether the value is a YAML/JSON null (a plain `null`, `~` or nothing).
    pub fn is_null(&self) -> bool {
        match &self.value {
            Value::Scalar { text, plain: true } => is_null_word(text),
            Value::Skipped => true,
            _ => false,
        }
    }
}

fn is_null_word(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// A scalar as the core schema reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Resolved<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`: the core schema's float (JSON's
/// numbers are a subset).
fn is_float_text(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    let whole = digits(&mut i);
    let mut fraction = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        fraction = digits(&mut i);
    }
    if whole == 0 && fraction == 0 {
        return false;
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn resolve(text: &str, plain: bool) -> Resolved<'_> {
    if !plain {
        return Resolved::Str(text);
    }
    if is_null_word(text) {
        return Resolved::Null;
    }
    match text {
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        _ => {}
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = text.parse::<i64>() {
            return Resolved::Int(i);
        }
        if let Ok(u) = text.trim_start_matches('+').parse::<u64>() {
            return Resolved::UInt(u);
        }
    }
    if let Some(hex) = text.strip_prefix("0x")
        && let Ok(u) = u64::from_str_radix(hex, 16)
    {
        return Resolved::UInt(u);
    }
    if let Some(oct) = text.strip_prefix("0o")
        && let Ok(u) = u64::from_str_radix(oct, 8)
    {
        return Resolved::UInt(u);
    }
    if is_float_text(text)
        && let Ok(f) = text.parse::<f64>()
    {
        return Resolved::Float(f);
    }
    Resolved::Str(text)
}

/// Why a tree does not deserialise into the type asked for, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeError {
    /// What is wrong.
    pub message: String,
    /// The value it is wrong about (set by the innermost value the error passed through).
    pub at: Option<Pos>,
}

impl TreeError {
    fn located(mut self, at: Pos) -> Self {
        self.at.get_or_insert(at);
        self
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TreeError {}

impl de::Error for TreeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TreeError {
            message: msg.to_string(),
            at: None,
        }
    }
}

/// Deserialises a tree into `T`; the error names the innermost value at fault.
pub fn from_tree<T: de::DeserializeOwned>(node: Node) -> Result<T, TreeError> {
    let at = node.at;
    T::deserialize(De(node)).map_err(|e| e.located(at))
}

/// The serde deserializer of one node (consumed: strings move into the typed value).
struct De(Node);

impl De {
    fn unexpected(&self) -> de::Unexpected<'_> {
        match &self.0.value {
            Value::Scalar { text, plain } => match resolve(text, *plain) {
                Resolved::Null => de::Unexpected::Unit,
                Resolved::Bool(b) => de::Unexpected::Bool(b),
                Resolved::Int(i) => de::Unexpected::Signed(i),
                Resolved::UInt(u) => de::Unexpected::Unsigned(u),
                Resolved::Float(f) => de::Unexpected::Float(f),
                Resolved::Str(s) => de::Unexpected::Str(s),
            },
            Value::Seq(_) => de::Unexpected::Seq,
            Value::Map(_) => de::Unexpected::Map,
            Value::Skipped => de::Unexpected::Unit,
        }
    }

    fn invalid<'de, V: Visitor<'de>>(&self, visitor: &V) -> TreeError {
        <TreeError as de::Error>::invalid_type(self.unexpected(), visitor).located(self.0.at)
    }
}

struct Seq(std::vec::IntoIter<Node>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = TreeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, TreeError> {
        match self.0.next() {
            Some(node) => {
                let at = node.at;
                seed.deserialize(De(node))
                    .map(Some)
                    .map_err(|e| e.located(at))
            }
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map {
    entries: std::vec::IntoIter<(String, Node)>,
    value: Option<Node>,
    /// Whether entries the reader skipped are left out (a struct's fields): a struct reads
    /// only fields it names, and a skipped one is as if not written.
    hide_skipped: bool,
}

impl<'de> MapAccess<'de> for Map {
    type Error = TreeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TreeError> {
        let mut next = self.entries.next();
        while self.hide_skipped
            && let Some((
                _,
                Node {
                    value: Value::Skipped,
                    ..
                },
            )) = next
        {
            next = self.entries.next();
        }
        match next {
            Some((key, value)) => {
                let at = value.at;
                self.value = Some(value);
                let key: de::value::StringDeserializer<TreeError> = key.into_deserializer();
                seed.deserialize(key).map(Some).map_err(|e| e.located(at))
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, TreeError> {
        match self.value.take() {
            Some(node) => {
                let at = node.at;
                seed.deserialize(De(node)).map_err(|e| e.located(at))
            }
            None => Err(de::Error::custom("a map value without its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// The name serde-saphyr's `Spanned<T>` asks for: a map of `value`, `referenced`, `defined`.
const SPANNED: &str = "__yaml_spanned";

/// `Spanned<T>` of a node: its value and its place (twice: coplan has no aliases to tell
/// apart from their anchors once a tree is built).
struct SpannedMap {
    node: Option<Node>,
    at: Pos,
    step: u8,
}

impl<'de> MapAccess<'de> for SpannedMap {
    type Error = TreeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TreeError> {
        let key = match self.step {
            0 => "value",
            1 => "referenced",
            2 => "defined",
            _ => return Ok(None),
        };
        let key: de::value::StrDeserializer<TreeError> = key.into_deserializer();
        seed.deserialize(key).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, TreeError> {
        self.step += 1;
        if self.step == 1 {
            return match self.node.take() {
                Some(node) => seed.deserialize(De(node)).map_err(|e| e.located(self.at)),
                None => Err(de::Error::custom("a spanned value read twice")),
            };
        }
        // Locations are u32 in serde-saphyr; inputs are bounded far below 4 GiB per line.
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        let location = de::value::MapDeserializer::new(
            [
                ("line", clamp(self.at.line)),
                ("column", clamp(self.at.column)),
            ]
            .into_iter(),
        );
        seed.deserialize(LocationDe(location))
    }
}

/// A `Location` (a map of `line` and `column`) whatever way it is asked for.
struct LocationDe<'de, I: Iterator<Item = (&'static str, u32)>>(
    de::value::MapDeserializer<'de, I, TreeError>,
);

impl<'de, I: Iterator<Item = (&'static str, u32)>> de::Deserializer<'de> for LocationDe<'de, I> {
    type Error = TreeError;
    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TreeError> {
        visitor.visit_map(&mut self.0)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct SpannedDe(Node);

impl<'de> de::Deserializer<'de> for SpannedDe {
    type Error = TreeError;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        let at = self.0.at;
        visitor.visit_map(SpannedMap {
            node: Some(self.0),
            at,
            step: 0,
        })
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> de::Deserializer<'de> for De {
    type Error = TreeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        let at = self.0.at;
        let result = match self.0.value {
            Value::Scalar { text, plain } => match resolve(&text, plain) {
                Resolved::Null => visitor.visit_unit(),
                Resolved::Bool(b) => visitor.visit_bool(b),
                Resolved::Int(i) => visitor.visit_i64(i),
                Resolved::UInt(u) => visitor.visit_u64(u),
                Resolved::Float(f) => visitor.visit_f64(f),
                Resolved::Str(_) => visitor.visit_string(text),
            },
            Value::Seq(items) => visitor.visit_seq(Seq(items.into_iter())),
            Value::Map(entries) => visitor.visit_map(Map {
                entries: entries.into_iter(),
                value: None,
                hide_skipped: false,
            }),
            Value::Skipped => visitor.visit_unit(),
        };
        result.map_err(|e| e.located(at))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        if self.0.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    /// Any scalar is text to a string field (a plain `8`, `true` or `2024-05-01`), as YAML
    /// writes names and versions bare.
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        let at = self.0.at;
        match self.0.value {
            Value::Scalar { text, .. } => visitor
                .visit_string(text)
                .map_err(|e: TreeError| e.located(at)),
            Value::Skipped => visitor
                .visit_string(String::new())
                .map_err(|e: TreeError| e.located(at)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        let at = self.0.at;
        // A null is an empty list, as Kubernetes reads `containers: null`.
        if self.0.is_null() {
            return visitor
                .visit_seq(Seq(Vec::new().into_iter()))
                .map_err(|e| e.located(at));
        }
        match self.0.value {
            Value::Seq(items) => visitor
                .visit_seq(Seq(items.into_iter()))
                .map_err(|e| e.located(at)),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        self.map(visitor, false)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TreeError> {
        self.map(visitor, true)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TreeError> {
        if name == SPANNED {
            visitor.visit_newtype_struct(SpannedDe(self.0))
        } else {
            visitor.visit_newtype_struct(self)
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TreeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char
        bytes byte_buf unit unit_struct tuple tuple_struct enum identifier
    }
}

impl De {
    /// A map (or a struct, `hide_skipped`); a null is an empty one.
    fn map<'de, V: Visitor<'de>>(
        self,
        visitor: V,
        hide_skipped: bool,
    ) -> Result<V::Value, TreeError> {
        let at = self.0.at;
        // A null is an empty map (`labels: null`, `status: {}` written as `status:`).
        if self.0.is_null() {
            return visitor
                .visit_map(Map {
                    entries: Vec::new().into_iter(),
                    value: None,
                    hide_skipped,
                })
                .map_err(|e| e.located(at));
        }
        match self.0.value {
            Value::Map(entries) => visitor
                .visit_map(Map {
                    entries: entries.into_iter(),
                    value: None,
                    hide_skipped,
                })
                .map_err(|e| e.located(at)),
            _ => Err(self.invalid(&visitor)),
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;

/// A sink that keeps what a reader hands on, for the readers' tests.
#[cfg(test)]
pub(crate) mod collected {
    use super::{Node, Sink};
    use crate::import::error::ImportError;

    /// Every item and document a reader handed on, in order.
    #[derive(Debug, Default)]
    pub(crate) struct Collect {
        pub(crate) items: Vec<(usize, usize, Node)>,
        pub(crate) documents: Vec<(usize, Node, Option<usize>)>,
    }

    impl Sink for Collect {
        fn item(&mut self, document: usize, index: usize, node: Node) -> Result<(), ImportError> {
            self.items.push((document, index, node));
            Ok(())
        }
        fn document(
            &mut self,
            document: usize,
            rest: Node,
            items: Option<usize>,
        ) -> Result<(), ImportError> {
            self.documents.push((document, rest, items));
            Ok(())
        }
    }

    /// Reader type of `json::read` and `yaml::read`.
    type Reader = fn(usize, &str, &mut dyn Sink) -> Result<(), ImportError>;

    impl Collect {
        /// What `read` hands on for `text` (file 0).
        pub(crate) fn from(read: Reader, text: &str) -> Result<Collect, ImportError> {
            let mut c = Collect::default();
            read(0, text, &mut c)?;
            Ok(c)
        }
    }
}
