//! Architecture rules for the library in `src/`, checked on its module import graph.
//!
//! The graph is read from the source text itself (no compiler, no crates), so a rule fails on
//! the commit that breaks it, and the report names the file, line and path to change.
//! `cargo test --test architecture -- --ignored print_import_graph --nocapture` shows it all.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic: that is its failure

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::Path;

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

fn folder(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

fn child(module: &str, seg: &str) -> String {
    if module == ROOT {
        seg.to_string()
    } else {
        format!("{module}::{seg}")
    }
}

fn parent(module: &str) -> Option<String> {
    match module.rsplit_once("::") {
        Some((p, _)) => Some(p.to_string()),
        None => (module != ROOT).then(|| ROOT.to_string()),
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn at(c: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, ch)| c.get(i + k) == Some(&ch))
}

/// Index of the first `s` in `c` at or after `i`, else the end.
fn find(c: &[char], i: usize, s: &str) -> usize {
    (i..c.len()).find(|&j| at(c, j, s)).unwrap_or(c.len())
}

/// Blanks comments, and string and char literals too when `strings`, keeping every line
/// break so that line numbers in reports still point at the real file.
fn strip(src: &str, strings: bool) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let raw_hashes = raw_string_hashes(&c, i);
        let (end, literal) = if at(&c, i, "//") {
            (find(&c, i, "\n"), false)
        } else if at(&c, i, "/*") {
            // Block comments nest, so count depth rather than stop at the first `*/`.
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                let open = at(&c, j, "/*");
                if open || at(&c, j, "*/") {
                    depth += if open { 1 } else { -1 };
                    j += 1;
                }
                j += 1;
            }
            (j, false)
        } else if let Some(hashes) = raw_hashes {
            let closing = format!("\"{}", "#".repeat(hashes));
            (find(&c, i + hashes + 2, &closing) + hashes + 1, true)
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            (j + 1, true)
        } else if at(&c, i, "'\\") {
            (find(&c, i + 3, "'") + 1, true) // '\n', '\'', '\u{..}'
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            (i + 3, true)
        } else {
            // Everything else, lifetimes and labels ('a) included, is code.
            out.push(c[i]);
            i += 1;
            continue;
        };
        let end = end.min(c.len());
        let keep = literal && !strings;
        let blank = |&ch: &char| if keep || ch == '\n' { ch } else { ' ' };
        out.extend(c[i..end].iter().map(blank));
        i = end;
    }
    out
}

/// The `#` count of a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does.
fn raw_string_hashes(c: &[char], i: usize) -> Option<usize> {
    let starts_token = |k: usize| k == 0 || !is_ident_char(c[k - 1]);
    let byte = i > 0 && c[i - 1] == 'b' && starts_token(i - 1);
    if c[i] != 'r' || !(starts_token(i) || byte) {
        return None;
    }
    let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
    // Without a quote it is a raw identifier such as r#type, or a plain `r`.
    (c.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// Comments and literals blanked, and unit-test modules cut off: what they import is not a
/// dependency of the library.
fn code_of(text: &str) -> String {
    let mut code = strip(text, true);
    code.truncate(code.find("#[cfg(test)]").unwrap_or(code.len()));
    code
}

fn tokenize(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let (mut toks, mut i, mut line) = (Vec::new(), 0, 1);
    while i < c.len() {
        let len = match c[i] {
            ch if is_ident_char(ch) => c[i..].iter().take_while(|&&ch| is_ident_char(ch)).count(),
            ':' if c.get(i + 1) == Some(&':') => 2,
            _ => 1,
        };
        if c[i] == '\n' {
            line += 1;
        } else if !c[i].is_whitespace() {
            toks.push((c[i..i + len].iter().collect(), line));
        }
        i += len;
    }
    toks
}

fn is_ident(toks: &[Tok], i: usize) -> bool {
    let first = toks.get(i).and_then(|t| t.0.chars().next());
    first.is_some_and(|ch| ch.is_alphabetic() || ch == '_')
}

fn tok_is(toks: &[Tok], i: usize, text: &str) -> bool {
    toks.get(i).is_some_and(|t| t.0 == text)
}

/// Expands the use tree at `i` (`a::{b, c::{d, e as f}, self}`) into full paths.
fn use_tree(toks: &[Tok], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
    while let Some((text, _)) = toks.get(*i) {
        match text.as_str() {
            // A glob depends on the module it globs. `{self}` needs no case: it stays in the
            // path, and since no module is named `self`, resolving stops at the prefix.
            "::" | "*" => *i += 1,
            "{" => {
                *i += 1;
                while toks.get(*i).is_some_and(|t| t.0 != "}") {
                    let before = *i;
                    if !tok_is(toks, *i, ",") {
                        use_tree(toks, i, path.clone(), out);
                    }
                    *i += usize::from(*i == before); // never stall on odd syntax
                }
                *i += 1;
                return;
            }
            _ if is_ident(toks, *i) => {
                path.push(text.clone());
                *i += if tok_is(toks, *i + 1, "as") { 3 } else { 1 };
                if tok_is(toks, *i, "::") {
                    continue;
                }
                break;
            }
            _ => break,
        }
    }
    out.push(path);
}

/// Every path in `code` that may point into the crate, with its line: the expanded `use`
/// statements, and inline `crate::…`, `super::…` and `self::…` paths.
fn raw_paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let toks = tokenize(code);
    let (mut out, mut i) = (Vec::new(), 0);
    while let Some((text, line)) = toks.get(i) {
        let anchored = tok_is(&toks, i + 1, "::") && (i == 0 || toks[i - 1].0 != "::");
        // A use tree follows; `use<'a>` (precise capturing) is not an import.
        let tree = is_ident(&toks, i + 1) || tok_is(&toks, i + 1, "{") || anchored;
        if text == "use" && tree {
            let mut trees = Vec::new();
            i += 1;
            use_tree(&toks, &mut i, Vec::new(), &mut trees);
            out.extend(trees.into_iter().map(|t| (t, *line)));
        } else if matches!(text.as_str(), "crate" | "super" | "self") && anchored {
            let mut segs = vec![text.clone()];
            i += 1;
            while tok_is(&toks, i, "::") && is_ident(&toks, i + 1) {
                segs.push(toks[i + 1].0.clone());
                i += 2;
            }
            out.push((segs, *line));
        } else {
            i += 1;
        }
    }
    out
}

/// The module a path in `from` names, or `None` for paths outside the crate (std, serde, …).
fn resolve(from: &str, segs: &[String], paths: &Names, macros: &Names) -> Option<String> {
    let (mut module, mut rest) = (from.to_string(), segs);
    match segs.first()?.as_str() {
        "crate" => (module, rest) = (ROOT.to_string(), &segs[1..]),
        "self" => rest = &segs[1..],
        "super" => {
            while rest.first().is_some_and(|s| s == "super") {
                (module, rest) = (parent(&module)?, &rest[1..]);
            }
        }
        // Rust 2018: a bare path may start with a child module of the current one.
        first if paths.contains_key(&child(from, first)) => {}
        _ => return None,
    }
    for seg in rest {
        match paths.get_key_value(&child(&module, seg)) {
            Some((name, _)) => module = name.clone(),
            None => break,
        }
    }
    // Mid-refactor a folder may lack its `mod.rs`: charge the nearest file that exists.
    while !paths.contains_key(&module) && module != ROOT {
        module = parent(&module)?;
    }
    match rest.first().and_then(|name| macros.get(name)) {
        Some(home) if module == ROOT => Some(home.clone()),
        _ => Some(module),
    }
}

/// `#[macro_export]` puts a macro at the crate root whichever file defines it; mapping
/// `crate::name` back to that file keeps the real dependency visible.
fn exported_macros(sources: &[Source]) -> Names {
    let mut macros = Names::new();
    for (module, _, text) in sources {
        let toks = tokenize(&code_of(text));
        for k in (0..toks.len()).filter(|&k| toks[k].0 == "macro_export") {
            let def = (k..toks.len()).find(|&j| toks[j].0 == "macro_rules");
            if let Some(name) = def.map(|j| j + 2).filter(|&j| is_ident(&toks, j)) {
                macros.insert(toks[name].0.clone(), module.clone());
            }
        }
    }
    macros
}

impl Graph {
    fn build(sources: &[Source]) -> Graph {
        let paths = sources.iter().map(|(m, p, _)| (m.clone(), p.clone()));
        let (paths, mut edges, mut seen) = (paths.collect(), Vec::new(), BTreeSet::new());
        let macros = exported_macros(sources);
        for (from, _, text) in sources {
            for (segs, line) in raw_paths(&code_of(text)) {
                let Some(to) = resolve(from, &segs, &paths, &macros) else {
                    continue;
                };
                let (from, via) = (from.clone(), segs.join("::"));
                if to != from && seen.insert((from.clone(), to.clone(), via.clone())) {
                    edges.push(Edge {
                        from,
                        to,
                        via,
                        line,
                    });
                }
            }
        }
        Graph { paths, edges }
    }

    /// Adjacency between `key(module)`s: the modules themselves, or their folders.
    fn adjacency(&self, key: fn(&str) -> &str) -> Adjacency {
        let mut adj = Adjacency::new();
        for m in self.paths.keys() {
            adj.entry(key(m).to_string()).or_default();
        }
        for e in self.edges.iter().filter(|e| key(&e.from) != key(&e.to)) {
            let targets = adj.entry(key(&e.from).to_string()).or_default();
            targets.insert(key(&e.to).to_string());
        }
        adj
    }

    fn describe(&self, e: &Edge) -> String {
        let file = self.paths.get(&e.from).unwrap_or(&e.from);
        format!("{} -> {}  ({file}:{} `{}`)", e.from, e.to, e.line, e.via)
    }

    /// Edges from the folders `from` into the folders `to`, except into `allowed` files.
    fn violations(&self, from: &[&str], to: &[&str], allowed: &[&str]) -> Vec<String> {
        let exempt = |m: &String| self.paths.get(m).is_some_and(|p| allowed.contains(&&**p));
        let hit = |e: &&Edge| from.contains(&folder(&e.from)) && to.contains(&folder(&e.to));
        let hits = self.edges.iter().filter(hit).filter(|e| !exempt(&e.to));
        hits.map(|e| self.describe(e)).collect()
    }

    /// One block per cycle: its members, concrete loops, and every import between members,
    /// since breaking the cycle means removing some of those.
    fn cycle_report(&self, key: fn(&str) -> &str) -> Vec<String> {
        let mut blocks = Vec::new();
        for (members, loops) in cycles(&self.adjacency(key)) {
            let list: Vec<_> = members.iter().map(String::as_str).collect();
            let mut block = format!(
                "cycle among {{{}}}:\n  {}",
                list.join(", "),
                loops.join("\n  ")
            );
            let mut pairs = BTreeSet::new();
            for e in &self.edges {
                let (from, to) = (key(&e.from), key(&e.to));
                let inside = from != to && members.contains(from) && members.contains(to);
                if inside && pairs.insert((&e.from, &e.to)) {
                    block += &format!("\n    {}", self.describe(e));
                }
            }
            blocks.push(block);
        }
        blocks
    }
}

/// Breadth-first from `start`: each node reached -> the node it was first reached from.
/// `start` itself is in the map only when some loop leads back to it.
fn reach<'a>(adj: &'a Adjacency, start: &'a str) -> BTreeMap<&'a str, &'a str> {
    let mut prev = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for m in adj.get(n).into_iter().flatten().map(String::as_str) {
            if !prev.contains_key(m) {
                prev.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    prev
}

/// The strongly connected components with more than one node, each with shortest loops
/// that together touch every member. The graphs hold a few hundred nodes at most, so one
/// search per node is cheap, and simpler to trust than Tarjan's bookkeeping.
fn cycles(adj: &Adjacency) -> Vec<(BTreeSet<String>, Vec<String>)> {
    let reached: BTreeMap<&str, _> = adj.keys().map(|v| (&**v, reach(adj, v))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for (&v, prev) in &reached {
        if done.contains(v) || !prev.contains_key(v) {
            continue; // already reported, or on no loop at all
        }
        let members = prev.keys().filter(|w| reached[*w].contains_key(v));
        let members: BTreeSet<String> = members.map(|w| w.to_string()).collect();
        let mut loops: Vec<Vec<&str>> = Vec::new();
        for w in &members {
            if !loops.iter().any(|l| l.contains(&w.as_str())) {
                loops.push(loop_through(&reached[w.as_str()], w));
            }
        }
        let loops = loops.iter().map(|l| l.join(" -> ")).collect();
        done.extend(members.iter().cloned());
        out.push((members, loops));
    }
    out
}

/// Follows `reach`'s back-pointers from `v` round to `v` again.
fn loop_through<'a>(prev: &BTreeMap<&'a str, &'a str>, v: &'a str) -> Vec<&'a str> {
    let mut path = vec![v];
    while let Some(&p) = prev.get(path[path.len() - 1]).filter(|&&p| p != v) {
        path.push(p);
    }
    path.push(v);
    path.reverse();
    path
}

/// `(line, pattern)` for each call that builds user output. Comments and unit tests do not
/// count; strings do, since a format string is where such a call would hide its text.
fn printer_findings(text: &str) -> BTreeSet<(usize, &'static str)> {
    let mut found = BTreeSet::new();
    // Cut where `code_of` cuts: a `#[cfg(test)]` inside a string does not count.
    let lines = code_of(text).lines().count();
    for (n, line) in strip(text, false).lines().take(lines).enumerate() {
        for pat in PRINTERS {
            let before = |at: usize| line[..at].ends_with(is_ident_char);
            let after = |at: usize| line[at + pat.len()..].starts_with(is_ident_char);
            if line
                .match_indices(pat)
                .any(|(at, _)| !before(at) && !after(at))
            {
                found.insert((n + 1, *pat));
            }
        }
    }
    // `use std::fmt::{self, Write}` hides the import from a substring search.
    for (segs, line) in raw_paths(&code_of(text)) {
        if segs.ends_with(&["fmt".into(), "Write".into()]) {
            found.insert((line, "fmt::Write"));
        }
    }
    found
}

fn load_sources() -> Vec<Source> {
    // A standalone `rustc --test` build has no manifest dir and runs from the repository root.
    let root = Path::new(option_env!("CARGO_MANIFEST_DIR").unwrap_or(".")).join("src");
    let (mut dirs, mut files) = (vec![root.clone()], Vec::new());
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).expect("read src/ (standalone: run from the repo root)") {
            let path = entry.expect("read a src/ entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut sources = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).expect("a file under src/");
        let rel = rel.to_string_lossy().replace('\\', "/");
        if BINARY_FILES.contains(&rel.as_str()) {
            continue;
        }
        let stem = rel.trim_end_matches(".rs");
        let stem = stem.strip_suffix("/mod").unwrap_or(stem);
        let module = if stem == "lib" {
            ROOT.into()
        } else {
            stem.replace('/', "::")
        };
        let text = fs::read_to_string(&file).expect("read a source file");
        sources.push((module, format!("src/{rel}"), text));
    }
    sources
}

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
