//! The YAML readers' tests.

use super::*;

use crate::import::tree::collected::Collect;

fn collect(text: &str) -> Result<Collect, ImportError> {
    Collect::from(read, text)
}

#[test]
fn documents_and_list_items_keep_their_places() {
    let text = "# header\n---\nkind: List\nitems:\n- kind: Node\n  metadata:\n    name: a\n- kind: Pod\n---\n# only a comment\n---\nkind: Pod\nspec:\n  priority: 5\n...\n";
    let c = collect(text).expect("valid");
    assert_eq!(c.items.len(), 2);
    assert_eq!(c.items[0].2.at, Pos { line: 5, column: 3 });
    let name = c.items[0]
        .2
        .get("metadata")
        .and_then(|m| m.get("name"))
        .expect("name");
    assert_eq!(
        name.at,
        Pos {
            line: 7,
            column: 11
        }
    );
    assert_eq!(c.documents.len(), 2);
    assert_eq!(c.documents[0].2, Some(2));
    assert_eq!(c.documents[1].0, 2);
    assert_eq!(
        c.documents[1].1.at,
        Pos {
            line: 12,
            column: 1
        }
    );
}

#[test]
fn aliases_and_merges_expand() {
    let c = collect("base: &b {cpu: \"8\", gpu: 1}\nnode:\n  <<: *b\n  gpu: 2\ncopy: *b\n")
        .expect("valid");
    let doc = &c.documents[0].1;
    let node = doc.get("node").expect("node");
    assert_eq!(node.get("cpu").and_then(Node::as_str), Some("8"));
    assert_eq!(node.get("gpu").and_then(Node::as_str), Some("2"));
    assert_eq!(
        doc.get("copy")
            .and_then(|c| c.get("cpu"))
            .map(|n| n.at.line),
        Some(1)
    );
}

#[test]
fn a_billion_laughs_is_refused_and_honest_values_are_not_counted() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut prev = 'a';
    for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
        text.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
        prev = name;
    }
    match collect(&text) {
        Err(ImportError::At { message, .. }) => {
            assert!(message.contains("1000000"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    let honest: String = (0..300_000).map(|i| format!("- {i}\n")).collect();
    let c = collect(&format!("items:\n{honest}")).expect("honest values");
    assert_eq!(c.items.len(), 300_000);
}

/// What the block reader and the fallback hand on, against the general reader alone:
/// the same items, documents and errors.
fn same_as_general(text: &str) -> bool {
    let general = Collect::from(|file, text, sink| read_events(file, text, sink, 0), text);
    let both = collect(text);
    match (&general, &both) {
        (Ok(g), Ok(b)) => {
            assert_eq!(g.items, b.items, "{text}");
            assert_eq!(g.documents, b.documents, "{text}");
        }
        (Err(g), Err(b)) => assert_eq!(format!("{g:?}"), format!("{b:?}"), "{text}"),
        _ => panic!("{text}: {general:?} against {both:?}"),
    }
    struct Nothing;
    impl Sink for Nothing {
        fn item(&mut self, _: usize, _: usize, _: Node) -> Result<(), ImportError> {
            Ok(())
        }
        fn document(&mut self, _: usize, _: Node, _: Option<usize>) -> Result<(), ImportError> {
            Ok(())
        }
    }
    matches!(block::read(text, &mut Nothing), Ok(block::Outcome::Done))
}

const KUBECTL: &str = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    annotations:\n      a: \"0\"\n    labels:\n      nvidia.com/gpu.product: H100\n      empty: \"\"\n    name: n1\n    managedFields:\n    - apiVersion: v1\n      fieldsV1:\n        f:metadata:\n          .: {}\n          \"k:{\\\"name\\\":\\\"0\\\"}\":\n            .: {}\n      manager: kubelet\n  spec:\n    taints:\n    - effect: NoSchedule\n      key: k\n    podCIDRs: []\n  status:\n    allocatable:\n      cpu: \"64\"\n      nvidia.com/gpu: \"8\"\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    namespace: default\n    labels:\n      app: x\n  spec:\n    containers:\n    - args:\n      - --port=80\n      - -v\n      image: 'repo/img:1.0'\n      name: c\n      resources:\n        requests:\n          cpu: 500m\n          nvidia.com/gpu: 1\n    nodeName: n1\n    priority: -5\n  status:\n    phase: Running\n    qosClass: Burstable\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";

#[test]
fn the_block_reader_reads_kubectl_style_as_the_general_reader_does() {
    assert!(same_as_general(KUBECTL));
    for text in [
        "a: 1\nitems: []\nkind: List\n",
        "kind: Pod\nspec:\n  containers:\n  - name: c\n    args:\n    - - x\n      - y\n    - {}\n    - []\n    - 'it''s'\n",
        "items:\n  - kind: Pod\n    metadata:\n      name: a\n  - kind: Pod\nkind: List",
        "kind: Node\nmetadata:\n  labels:\n    a: \"x\\ty\\\\z\\\"\"\n    b: http://x:80/y\n    c: a#b\n",
        "kind: Pod\nspec:\n  list:\n    - a\n    - b\n  next: 1\n",
    ] {
        assert!(same_as_general(text), "{text}");
    }
}

#[test]
fn anything_else_is_read_by_the_general_reader_with_the_same_result() {
    let lines: Vec<&str> = KUBECTL.lines().collect();
    // Each line of a kubectl export changed into something the block reader does not
    // read, or into an error, at every place.
    let changes: [fn(&str) -> String; 14] = [
        |l| format!("{l} # comment"),
        |l| format!("{l}\n"),
        |l| l.replacen(": ", ":  ", 1),
        |l| l.replacen(": ", ": &a ", 1),
        |l| l.replacen(": ", ": !!str ", 1),
        |l| l.replacen("- ", "-\t", 1),
        |l| l.replacen(' ', "\t", 1),
        |l| format!("{l} é"),
        |l| format!("{l}\n  continued"),
        |l| format!("{l}\n---\nkind: Pod"),
        |l| l.replacen(": ", ": [1, 2]", 1),
        |l| l.replacen(": ", ": |\n  text", 1),
        |l| l.replacen(':', "", 1),
        |l| format!(" {l}"),
    ];
    let mut fast = 0;
    for (i, _) in lines.iter().enumerate() {
        for change in changes {
            let mut changed = lines.clone();
            let new = change(lines[i]);
            changed[i] = &new;
            let text = changed.join("\n");
            fast += usize::from(same_as_general(&text));
        }
    }
    // Some changes leave text the block reader reads (a trailing comment-free blank line
    // is not among them); most do not.
    assert!(fast < lines.len() * 14 / 2, "{fast}");
}

#[test]
fn scalars_and_keys_at_the_edge_of_the_subset_read_as_the_general_reader_reads_them() {
    for text in [
        "a: x]\n",
        "a: x{y}\n",
        "a: x,y\n",
        "a: 'x'\n",
        "a: \"\"\n",
        "a: ''\n",
        "a: x:y\n",
        "a: x #y\n",
        "a: x#y\n",
        "'a': 1\n",
        "\"a\": 1\n",
        "a: -1\n",
        "a: -\n",
        "a: --x\n",
        "a: ~\n",
        "a: null\n",
        "a: \"\\x41\"\n",
        "a: \"x\\\"y\"\n",
        "f:metadata: {}\n",
        "a:b: c\n",
        "a: b: c\n",
        "a: @x\n",
        "a: %x\n",
        "a: `x\n",
        "a: ?x\n",
        "a: :x\n",
        "a: !x\n",
        "a: *x\n",
        "a: &x y\n",
        "a: |\n  x\n",
        "a: {}\nb: []\n",
        "a: {b: 1}\n",
        "a: [1]\n",
        "- a\n",
        "a: 1",
        "a:\n- 1\n- 2",
        "a:\n  - 1\n  - 2\nb: 3\n",
        "a:\n  - 1\n b: 3\n",
        "a:\n  b: 1\n c: 2\n",
        "a: 1\n  b: 2\n",
        "a: \"x\" y\n",
        "a: 'x' : y\n",
        "a:  x\n",
        "items:\n- kind: Pod\n-\n",
        "items:\n- - 1\n  - 2\n- 3\n",
        "items:\n- a: 1\n  b:\n  - c\n  - d\n",
        "items: []\n",
        "items: [1]\n",
        "kind: List\nitems:\n- kind: Pod\nitems:\n- kind: Node\n",
        "<<: {}\n",
        "a:\n  <<: {}\n",
        "---\na: 1\n",
        "a: 1\n...\n",
        "a: 1\n# end\n",
    ] {
        same_as_general(text);
    }
}

/// Compares the block reader with the general one on a large export:
/// `COPLAN_YAML_DIFF=FILE cargo test --release --lib yaml -- --ignored`.
#[test]
#[ignore]
fn the_block_reader_matches_the_general_reader_on_a_file() {
    use std::hash::{Hash, Hasher};
    let Ok(path) = std::env::var("COPLAN_YAML_DIFF") else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("readable");
    struct Hashes(Vec<u64>);
    impl Sink for Hashes {
        fn item(&mut self, d: usize, i: usize, node: Node) -> Result<(), ImportError> {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            format!("{d} {i} {node:?}").hash(&mut h);
            self.0.push(h.finish());
            Ok(())
        }
        fn document(&mut self, d: usize, node: Node, n: Option<usize>) -> Result<(), ImportError> {
            self.item(d, n.unwrap_or(0), node)
        }
    }
    let mut fast = Hashes(Vec::new());
    assert!(matches!(
        block::read(&text, &mut fast),
        Ok(block::Outcome::Done)
    ));
    let mut general = Hashes(Vec::new());
    read_events(0, &text, &mut general, 0).expect("valid");
    assert_eq!(fast.0.len(), general.0.len());
    assert!(fast.0 == general.0);
}

#[test]
fn malformed_yaml_is_located() {
    match collect("a: 1\nb: [1, 2\nc: 3\n") {
        Err(ImportError::At { line, .. }) => assert!(line >= 2, "{line}"),
        other => panic!("{other:?}"),
    }
}
