//! Labels as an import keeps them, and the label selectors of PodDisruptionBudgets: apart
//! from the objects that carry them (`k8s_objects.rs`), since a selector is read against the
//! labels of other objects.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A label's value as text: YAML may leave `true` or `8` unquoted.
struct LabelValue(String);

impl<'de> Deserialize<'de> for LabelValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LabelValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a label value (text)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LabelValue(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(LabelValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LabelValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LabelValue(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LabelValue(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LabelValue(String::new()))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object's labels, held as one text (a pod's few labels, 200,000 times over, would
/// otherwise be a map of strings each): `key`, NUL, `value`, NUL, … in key order, the last
/// value of a key repeated kept. Values written unquoted (`true`, `8`) keep their text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Labels(String);

impl Labels {
    /// The labels from (key, value) pairs.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map: BTreeMap<String, String> = pairs
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
            .collect();
        let mut text = String::new();
        for (k, v) in &map {
            text.push_str(k);
            text.push('\0');
            text.push_str(v);
            text.push('\0');
        }
        Labels(text)
    }

    /// Every (key, value), in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut parts = self.0.split('\0');
        std::iter::from_fn(move || {
            let k = parts.next()?;
            let v = parts.next()?;
            Some((k, v))
        })
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Labels;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of label keys to values")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Labels::default())
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut pairs: Vec<(String, String)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<LabelValue>()?;
                    pairs.push((key, value.0));
                }
                Ok(Labels::from_pairs(pairs))
            }
        }
        d.deserialize_map(V)
    }
}

/// A label selector (`matchLabels` and `matchExpressions`, all of which must hold).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    /// Labels a pod must carry with these values.
    pub match_labels: BTreeMap<String, String>,
    /// Requirements on labels: `In`, `NotIn`, `Exists`, `DoesNotExist`.
    pub match_expressions: Vec<LabelRequirement>,
}

/// One requirement of a label selector.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct LabelRequirement {
    /// Label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In` and `NotIn`.
    pub values: Vec<String>,
}
