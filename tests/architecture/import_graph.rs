//! The import graph of `src/`, read from the source text: comments and strings stripped,
//! `use` trees and paths resolved to the modules they name.

use super::*;

pub fn folder(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

pub fn child(module: &str, seg: &str) -> String {
    if module == ROOT {
        seg.to_string()
    } else {
        format!("{module}::{seg}")
    }
}

pub fn parent(module: &str) -> Option<String> {
    match module.rsplit_once("::") {
        Some((p, _)) => Some(p.to_string()),
        None => (module != ROOT).then(|| ROOT.to_string()),
    }
}

pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub fn at(c: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, ch)| c.get(i + k) == Some(&ch))
}

/// Index of the first `s` in `c` at or after `i`, else the end.
pub fn find(c: &[char], i: usize, s: &str) -> usize {
    (i..c.len()).find(|&j| at(c, j, s)).unwrap_or(c.len())
}

/// Blanks comments, and string and char literals too when `strings`, keeping every line
/// break so that line numbers in reports still point at the real file.
pub fn strip(src: &str, strings: bool) -> String {
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
pub fn raw_string_hashes(c: &[char], i: usize) -> Option<usize> {
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
pub fn code_of(text: &str) -> String {
    let mut code = strip(text, true);
    code.truncate(code.find("#[cfg(test)]").unwrap_or(code.len()));
    code
}

pub fn tokenize(code: &str) -> Vec<Tok> {
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

pub fn is_ident(toks: &[Tok], i: usize) -> bool {
    let first = toks.get(i).and_then(|t| t.0.chars().next());
    first.is_some_and(|ch| ch.is_alphabetic() || ch == '_')
}

pub fn tok_is(toks: &[Tok], i: usize, text: &str) -> bool {
    toks.get(i).is_some_and(|t| t.0 == text)
}

/// Expands the use tree at `i` (`a::{b, c::{d, e as f}, self}`) into full paths.
pub fn use_tree(toks: &[Tok], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
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
pub fn raw_paths(code: &str) -> Vec<(Vec<String>, usize)> {
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
pub fn resolve(from: &str, segs: &[String], paths: &Names, macros: &Names) -> Option<String> {
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
pub fn exported_macros(sources: &[Source]) -> Names {
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
    pub fn build(sources: &[Source]) -> Graph {
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
    pub fn adjacency(&self, key: fn(&str) -> &str) -> Adjacency {
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

    pub fn describe(&self, e: &Edge) -> String {
        let file = self.paths.get(&e.from).unwrap_or(&e.from);
        format!("{} -> {}  ({file}:{} `{}`)", e.from, e.to, e.line, e.via)
    }

    /// Edges from the folders `from` into the folders `to`, except into `allowed` files.
    pub fn violations(&self, from: &[&str], to: &[&str], allowed: &[&str]) -> Vec<String> {
        let exempt = |m: &String| self.paths.get(m).is_some_and(|p| allowed.contains(&&**p));
        let hit = |e: &&Edge| from.contains(&folder(&e.from)) && to.contains(&folder(&e.to));
        let hits = self.edges.iter().filter(hit).filter(|e| !exempt(&e.to));
        hits.map(|e| self.describe(e)).collect()
    }

    /// One block per cycle: its members, concrete loops, and every import between members,
    /// since breaking the cycle means removing some of those.
    pub fn cycle_report(&self, key: fn(&str) -> &str) -> Vec<String> {
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
pub fn reach<'a>(adj: &'a Adjacency, start: &'a str) -> BTreeMap<&'a str, &'a str> {
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
pub fn cycles(adj: &Adjacency) -> Vec<(BTreeSet<String>, Vec<String>)> {
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
pub fn loop_through<'a>(prev: &BTreeMap<&'a str, &'a str>, v: &'a str) -> Vec<&'a str> {
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
pub fn printer_findings(text: &str) -> BTreeSet<(usize, &'static str)> {
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

pub fn load_sources() -> Vec<Source> {
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
