//! The insta settings of every snapshot: files in the top-level `snapshots/` folder, named by
//! the test and not by its module, without the asserted expression.

use super::process::root;

/// Compares `text` with the snapshot `snapshots/{name}.snap`, after replacing each regex of
/// `filters` (pattern, replacement) in it.
pub fn assert_snapshot(name: &str, text: &str, filters: &[(&str, &str)]) {
    insta::with_settings!({
        snapshot_path => root().join("snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        filters => filters.to_vec(),
    }, {
        insta::assert_snapshot!(name, text);
    });
}
