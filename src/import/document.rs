//! The top-level map of a document as every reader reads it: the items of its `items`
//! sequence handed on one at a time, its other entries kept for the end of the document.

use super::error::ImportError;
use super::fields::{MapWant, Want};
use super::tree::{Node, Pos, Sink, Value};

/// A document's top-level map being read.
pub(crate) struct DocumentMap {
    /// The entries other than the streamed `items`.
    rest: Vec<(String, Node)>,
    /// How many items were handed on, once the `items` sequence has been.
    items: Option<usize>,
    /// What of the object is built, once its `kind` is read.
    pub(crate) want: MapWant,
}

impl DocumentMap {
    /// A map of which nothing is read yet.
    pub(crate) fn new() -> Self {
        DocumentMap {
            rest: Vec::new(),
            items: None,
            want: MapWant::new(Want::Object),
        }
    }

    /// Whether the value of `key` is to be handed on item by item, when it is a sequence:
    /// the first `items` only.
    pub(crate) fn streams(&self, key: &str) -> bool {
        key == "items" && self.items.is_none()
    }

    /// The `items` sequence was handed on: `count` items.
    pub(crate) fn streamed(&mut self, count: usize) {
        self.items = Some(count);
    }

    /// Keeps an entry for the end of the document.
    pub(crate) fn keep(&mut self, key: String, value: Node) {
        self.rest.push((key, value));
    }

    /// Hands document `document` (its map starting at `at`) on to `sink`.
    pub(crate) fn end(
        self,
        document: usize,
        at: Pos,
        sink: &mut dyn Sink,
    ) -> Result<(), ImportError> {
        let rest = Node {
            at,
            value: Value::Map(self.rest),
        };
        sink.document(document, rest, self.items)
    }
}
