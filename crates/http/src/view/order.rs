//! The order of keys in a view file's objects, which `serde_json::Value` does not keep: method
//! objects' `columns` are kept in file order.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;

/// The keys of every object of a JSON document in file order, by the object's JSON path (`$`,
/// `$.sql[0].PUT.columns`, paths as the loader writes them).
#[derive(Debug, Default)]
pub struct KeyOrder {
    objects: HashMap<String, Vec<String>>,
}

impl KeyOrder {
    /// Reads the key order of `text` (already known to be valid JSON; on any error the order is
    /// empty and callers keep their own).
    pub fn of(text: &[u8]) -> KeyOrder {
        let mut order = KeyOrder::default();
        let mut deserializer = serde_json::Deserializer::from_slice(text);
        let walk = Walk {
            order: &mut order,
            path: "$".to_owned(),
        };
        if walk.deserialize(&mut deserializer).is_err() {
            order.objects.clear();
        }
        order
    }

    /// The keys of the object at `path`, in file order.
    pub fn keys(&self, path: &str) -> Option<&[String]> {
        self.objects.get(path).map(Vec::as_slice)
    }
}

/// The JSON path of key `key` under `parent`, written as the loader writes it.
pub fn key_path(parent: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", serde_json::Value::String(key.to_owned()))
    }
}

struct Walk<'o> {
    order: &'o mut KeyOrder,
    path: String,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            let walk = Walk {
                order: &mut *self.order,
                path: format!("{}[{index}]", self.path),
            };
            if seq.next_element_seed(walk)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let walk = Walk {
                order: &mut *self.order,
                path: key_path(&self.path, &key),
            };
            map.next_value_seed(walk)?;
            keys.push(key);
        }
        self.order.objects.insert(self.path, keys);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_file_order_at_every_depth() {
        let order = KeyOrder::of(
            br#"{"sql": [{"path": [], "PUT": {"columns": {"z": {}, "a": {"b": 1, "odd key": 2}}}}]}"#,
        );
        assert_eq!(
            order.keys("$.sql[0].PUT.columns"),
            Some(&["z".to_owned(), "a".to_owned()][..])
        );
        assert_eq!(
            order.keys("$.sql[0].PUT.columns.a"),
            Some(&["b".to_owned(), "odd key".to_owned()][..])
        );
        assert_eq!(order.keys("$"), Some(&["sql".to_owned()][..]));
        assert_eq!(key_path("$.x", "odd key"), "$.x[\"odd key\"]");
    }
}
