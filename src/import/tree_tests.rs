//! The located tree's tests: scalars resolved, typed values located.

use super::*;
use serde::Deserialize;

fn scalar(text: &str, plain: bool, line: usize) -> Node {
    Node {
        at: Pos { line, column: 3 },
        value: Value::Scalar {
            text: text.into(),
            plain,
        },
    }
}

fn map(entries: Vec<(&str, Node)>) -> Node {
    Node {
        at: Pos { line: 1, column: 1 },
        value: Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect()),
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct T {
    name: Option<String>,
    count: Option<i64>,
    items: Vec<String>,
    at: Option<serde_saphyr::Spanned<String>>,
}

#[test]
fn plain_scalars_resolve_as_the_core_schema_says() {
    assert_eq!(resolve("8", true), Resolved::Int(8));
    assert_eq!(resolve("8", false), Resolved::Str("8"));
    assert_eq!(resolve("1e30", true), Resolved::Float(1e30));
    assert_eq!(resolve("~", true), Resolved::Null);
    assert_eq!(resolve("True", true), Resolved::Bool(true));
    assert_eq!(resolve("0x10", true), Resolved::UInt(16));
    assert_eq!(resolve("63500m", true), Resolved::Str("63500m"));
    assert_eq!(resolve("1.", true), Resolved::Float(1.0));
    assert_eq!(resolve("e3", true), Resolved::Str("e3"));
}

#[test]
fn typed_values_carry_their_place_and_errors_name_the_value_at_fault() {
    let t: T = from_tree(map(vec![
        ("name", scalar("123", true, 2)),
        ("count", scalar("5", true, 3)),
        ("items", scalar("null", true, 4)),
        ("at", scalar("x", false, 7)),
        ("unknown", scalar("y", false, 8)),
    ]))
    .expect("valid");
    assert_eq!(t.name.as_deref(), Some("123"));
    assert_eq!(t.count, Some(5));
    assert!(t.items.is_empty());
    let at = t.at.expect("spanned");
    assert_eq!((at.referenced.line(), at.referenced.column()), (7, 3));
    let e = from_tree::<T>(map(vec![("count", scalar("high", true, 9))])).expect_err("bad");
    assert_eq!(e.at, Some(Pos { line: 9, column: 3 }));
    assert!(e.message.contains("high"), "{}", e.message);
}
