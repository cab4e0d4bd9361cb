//! The JSON reader's tests.

use super::*;

use crate::import::tree::collected::Collect;

fn collect(text: &str) -> Result<Collect, ImportError> {
    Collect::from(read, text)
}

#[test]
fn lists_stream_their_items_and_keep_the_rest() {
    let c = collect(
        "{\"kind\": \"List\",\n \"items\": [\n  {\"a\": 1},\n  {\"b\": \"x\\ny\\u00e9\"}\n]}\n",
    )
    .expect("valid");
    assert_eq!(c.items.len(), 2);
    assert_eq!(c.items[1].2.at, Pos { line: 4, column: 3 });
    assert_eq!(c.items[1].2.get("b").and_then(Node::as_str), Some("x\nyé"));
    assert_eq!(c.documents.len(), 1);
    assert_eq!(c.documents[0].2, Some(2));
    assert_eq!(
        c.documents[0].1.get("kind").and_then(Node::as_str),
        Some("List")
    );
}

#[test]
fn json_lines_and_concatenated_objects_are_documents() {
    let c = collect("{\"a\":1}\n{\"a\":2}{\"a\":3}\n\n  {\"a\":[1,2.5e3,-0,true,null]}")
        .expect("valid");
    assert_eq!(c.documents.len(), 4);
    assert_eq!(c.documents[2].1.at, Pos { line: 2, column: 8 });
}

#[test]
fn columns_count_characters_on_long_lines() {
    let c = collect("{\"é\": \"ü\", \"x\": {\"y\": 1}}").expect("valid");
    let x = c.documents[0].1.get("x").expect("x");
    assert_eq!(
        x.at,
        Pos {
            line: 1,
            column: 17
        }
    );
}

#[test]
fn malformed_json_is_located() {
    for (text, line, column) in [
        ("{\"a\": }", 1, 7),
        ("{\"a\": 1,\n \"b\" 2}", 2, 6),
        ("{\"a\": \"x", 1, 9),
        ("{\"a\": 01}", 1, 7),
        ("{\"a\": [1 2]}", 1, 10),
        ("5", 1, 1),
        ("{\"a\": 1}\n]", 2, 1),
    ] {
        match collect(text) {
            Err(ImportError::At {
                line: l, column: c, ..
            }) => assert_eq!((l, c), (line, Some(column)), "{text}"),
            Err(other) => panic!("{text}: {other:?}"),
            Ok(_) => panic!("{text}: accepted"),
        }
    }
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{{\"a\": {}{}}}", "[".repeat(500), "]".repeat(500));
    match collect(&deep) {
        Err(ImportError::At { message, .. }) => assert!(message.contains("128"), "{message}"),
        other => panic!("{other:?}"),
    }
}
