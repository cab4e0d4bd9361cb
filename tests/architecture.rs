//! Architecture rules for the library in `src/`, checked on its module import graph.
//!
//! The graph is read from the source text itself (no compiler, no crates), so a rule fails on
//! the commit that breaks it, and the report names the file, line and path to change.
//! `cargo test --test architecture -- --ignored print_import_graph --nocapture` shows it all.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::Path;

#[path = "architecture/import_graph.rs"]
mod import_graph;

use import_graph::*;

/// The pure core: it computes, and leaves presenting results to `report` and the shell.
const CORE: &[&str] = &[
    "spec", "topology", "preempt", "colocate", "sim", "solver", "verify", "plan", "import",
];
const SHELL: &[&str] = &["report", "session"];
/// `spec` is the bottom layer: everything reads specs, so specs may read nothing above them.
const PLANNER_SIDE: &[&str] = &[
    "topology", "preempt", "colocate", "sim", "verify", "plan", "session", "report",
];
/// Files (e.g. "src/preempt/problem.rs") under `preempt`/`colocate` that `verify` may still
/// import, say for shared plain data. A verifier that runs the planner it checks proves nothing.
const ALLOWED_VERIFY_IMPORTS: &[&str] = &[];
/// Calls that build text for the user. `format!` stays allowed: errors need messages.
const PRINTERS: &[&str] = &[
    "println!",
    "print!",
    "eprintln!",
    "eprint!",
    "fmt::Write",
    "serde_json::to_string",
    "serde_json::to_string_pretty",
    "toml::to_string",
    "toml::to_string_pretty",
];
/// What each folder may import (besides itself and external crates): the table of
/// `docs/architecture.md`, layer by layer from the bottom. A folder missing here may import
/// nothing of the crate.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    ("spec", &[]),
    ("rng", &[]),
    ("calendar", &[]),
    ("solver", &["spec"]),
    ("topology", &["spec"]),
    ("plan", &["spec", "topology"]),
    ("verify", &["plan", "spec", "topology"]),
    ("import", &["calendar", "spec", "topology"]),
    (
        "preempt",
        &["plan", "verify", "solver", "rng", "spec", "topology"],
    ),
    (
        "colocate",
        &[
            "plan", "verify", "solver", "rng", "calendar", "spec", "topology",
        ],
    ),
    (
        "sim",
        &["preempt", "colocate", "plan", "rng", "spec", "topology"],
    ),
    (
        "session",
        &[
            "sim", "preempt", "colocate", "import", "plan", "spec", "topology",
        ],
    ),
    (
        "report",
        &[
            "session", "sim", "colocate", "import", "plan", "spec", "topology",
        ],
    ),
];
/// The binary's own files: they sit in `src/` but are not part of the library.
const BINARY_FILES: &[&str] = &["main.rs"];
const ROOT: &str = "crate";

/// A module: its name (`a::b`, or `crate` for lib.rs), file path and source text.
type Source = (String, String, String);
/// A token and its line.
type Tok = (String, usize);

/// Module name -> file path, or exported macro name -> defining module.
type Names = BTreeMap<String, String>;

/// One path in module `from` that names something in module `to`.
struct Edge {
    from: String,
    to: String,
    via: String,
    line: usize,
}

struct Graph {
    /// Module name -> file path, for every module in the tree.
    paths: Names,
    edges: Vec<Edge>,
}

type Adjacency = BTreeMap<String, BTreeSet<String>>;

fn graph() -> Graph {
    Graph::build(&load_sources())
}

fn import_graph_report() -> String {
    let graph = graph();
    let mut out = String::from("== module edges ==\n");
    for (module, path) in &graph.paths {
        out += &format!("{module} ({path})\n");
        for e in graph.edges.iter().filter(|e| &e.from == module) {
            out += &format!("    -> {:<24} {:>4}: {}\n", e.to, e.line, e.via);
        }
    }
    out += "== folder edges ==\n";
    for (from, tos) in graph.adjacency(folder) {
        for to in tos {
            out += &format!("{from} -> {to}\n");
        }
    }
    out
}

fn assert_none(rule: &str, found: Vec<String>) {
    let list = found.join("\n");
    assert!(
        found.is_empty(),
        "{rule}: {} violation(s)\n{list}\n",
        found.len()
    );
}

#[test]
fn no_import_cycles_between_files() {
    assert_none("file import cycles", graph().cycle_report(|m| m));
}

#[test]
fn no_import_cycles_between_folders() {
    assert_none("folder import cycles", graph().cycle_report(folder));
}

#[test]
fn core_renders_nothing_and_knows_no_shell() {
    assert_none("core imports shell", graph().violations(CORE, SHELL, &[]));
}

#[test]
fn spec_imports_no_planner_side() {
    let found = graph().violations(&["spec"], PLANNER_SIDE, &[]);
    assert_none("spec imports upward", found);
}

#[test]
fn verifiers_import_no_planner() {
    let planners = &["preempt", "colocate"];
    let found = graph().violations(&["verify"], planners, ALLOWED_VERIFY_IMPORTS);
    assert_none("a verifier imports a planner", found);
}

#[test]
fn folders_import_only_the_layers_below_them() {
    let g = graph();
    let mut found = Vec::new();
    for e in &g.edges {
        let (from, to) = (folder(&e.from), folder(&e.to));
        if from == to || from == ROOT || to == ROOT {
            continue;
        }
        let allowed = MAY_IMPORT
            .iter()
            .find(|(f, _)| *f == from)
            .is_some_and(|(_, may)| may.contains(&to));
        if !allowed {
            found.push(g.describe(e));
        }
    }
    assert_none("import not in the layer table", found);
}

#[test]
fn report_is_the_only_printer() {
    let mut found = Vec::new();
    for (module, path, text) in load_sources() {
        if CORE.contains(&folder(&module)) {
            let hits = printer_findings(&text).into_iter();
            found.extend(hits.map(|(line, pat)| format!("{path}:{line}: `{pat}`")));
        }
    }
    assert_none("user output built outside report/", found);
}

#[test]
#[ignore = "prints the import graph for humans"]
fn print_import_graph() {
    println!("{}", import_graph_report());
}

/// In-memory modules: a `--- module` line starts each one, and its source follows.
fn mem(fixture: &str) -> Vec<Source> {
    let mut sources: Vec<Source> = Vec::new();
    for line in fixture.lines() {
        match (line.strip_prefix("--- "), sources.last_mut()) {
            (Some(m), _) => sources.push((m.into(), format!("<{m}>"), String::new())),
            (None, Some(src)) => src.2 += &format!("{line}\n"),
            (None, None) => {}
        }
    }
    sources
}

fn edge_list(graph: &Graph) -> String {
    let edges = graph.edges.iter();
    let edges: BTreeSet<_> = edges
        .map(|e| format!("{} -> {} @{}", e.from, e.to, e.line))
        .collect();
    edges.into_iter().collect::<Vec<_>>().join("\n")
}

#[test]
fn parser_resolves_paths_and_ignores_noise() {
    let graph = Graph::build(&mem(r##"
--- crate
pub mod a; pub mod b; pub mod spec;
--- spec
mod validate;
use validate::check;
pub use self::validate::X;
use crate::m;
--- spec::validate
use super::Spec; // use crate::b::Nope;
const S: &str = "crate::b::Fake \" crate::b"; const R: &str = r#"crate::b " crate::b"#;
const C: char = '"'; const E: char = '\''; /* crate::b /* nested */ crate::b */
fn f<'a>(x: &'a str) -> Thing { crate::a::deep::Thing::new() }
#[cfg(test)]
mod tests { use crate::b::X; }
--- a
pub(crate) use crate::{b::{self, inner::{Y, Z as W}}, spec};
use std::fmt;
--- a::deep
use super::super::b::{
    inner::Q,
};
fn g() { super::sib(); }
--- b
use serde::Serialize; use b::Nothing;
--- b::inner
#[macro_export]
macro_rules! m { () => {} }
use self::*;
"##));
    let expected = "a -> b @1\na -> b::inner @1\na -> spec @1\na::deep -> a @4\n\
                    a::deep -> b::inner @1\nspec -> b::inner @4\nspec -> spec::validate @2\n\
                    spec -> spec::validate @3\nspec::validate -> a::deep @4\n\
                    spec::validate -> spec @1";
    assert_eq!(edge_list(&graph), expected);
}

#[test]
fn cycles_are_found_and_printed_as_loops() {
    let graph = Graph::build(&mem(r"
--- x
--- x::a
use crate::x::b;
--- x::b
use super::c::Thing;
--- x::c
fn f() { crate::x::a::go(); crate::y::z(); }
--- y
use crate::x::a;
"));
    let files = graph.cycle_report(|m| m);
    let loop_abc = "x::a -> x::b -> x::c -> x::a";
    assert!(files.len() == 1 && files[0].contains(loop_abc), "{files:?}");
    let folders = graph.cycle_report(folder);
    assert!(
        folders.len() == 1 && folders[0].contains("x -> y -> x"),
        "{folders:?}"
    );
}

#[test]
fn printers_are_found_outside_comments_and_tests() {
    let found = printer_findings(
        r#"fn f() {
    eprint!("x"); // println!("no")
    let s = serde_json::to_string_pretty(&v);
}
use std::fmt::{self, Write};
#[cfg(test)]
mod tests { fn t() { println!(); } }"#,
    );
    let found: Vec<_> = found.into_iter().collect();
    let pretty = "serde_json::to_string_pretty";
    assert_eq!(found, [(2, "eprint!"), (3, pretty), (5, "fmt::Write")]);
}
