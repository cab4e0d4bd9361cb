//! The Kubernetes importer's tests of the import as a whole.

use super::importer::import;
use crate::import::error::ImportError;

#[test]
fn a_snapshot_whose_nodes_are_all_left_out_is_an_input_error() {
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\nstatus:\n  cpu: \"8\"\n";
    match import(&[("snapshot.yaml".into(), text.into())]) {
        Err(ImportError::Input { message, help }) => {
            assert!(message.contains("snapshot.yaml"), "{message}");
            assert!(help.is_some_and(|h| h.contains("allocatable")));
        }
        other => panic!("{other:?}"),
    }
}
