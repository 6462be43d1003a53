//! The plugin's layers, checked from its source (`plugin/src`).
//!
//! Each file belongs to the layer of its top folder; lowest first:
//!
//! | layer      | holds                                                        |
//! |------------|--------------------------------------------------------------|
//! | `contract` | the WIT boundary's records, settings and error (`contract/`) |
//! | `text`     | pure text handling (`text/`)                                 |
//! | `host`     | the traits of what the host lends (`host/`)                  |
//! | `logic`    | pure decisions (`logic/`)                                    |
//! | `storage`  | the index, the ledger, SQLite, the workspace files           |
//! | `ops`      | `Memory` and the operations (`ops/`)                         |
//! | `adapter`  | `contract/adapter.rs` and `component.rs` (WIT ↔ crate), `fuzzing.rs` |
//!
//! The rule: a file may import from its own layer and the layers before it,
//! never from a later one (so logic never reads storage or calls an
//! operation, storage never calls an operation, and only the adapters see
//! `ops`). And no files import each other in a cycle, whatever their layer
//! (files of one folder included: a `mod.rs` that uses its children does
//! not get used by them). There are no exceptions.
//!
//! `contract` comes first because its types are the vocabulary every layer
//! speaks (a memory path is refused with a `MemoryError`, a framed block
//! carries a `SourceClass`); it imports nothing else of the crate. Storage
//! may keep logic's types (the ledger stores `logic::intents::Intent` and
//! `logic::provenance::Segment`), never call an operation.
//!
//! An import is any path naming a module of the crate: `use crate::…`,
//! `use super::…`, `crate::x::y` and `super::x` in code, and a child
//! module's name (`ffi::f` in `sqlite/mod.rs`). A path through a `pub use`
//! (a facade such as `ledger::Segment`, or the crate root's re-exports)
//! counts as an import of the module that defines the item. `lib.rs` only
//! declares and re-exports, and is not checked. Comments and strings do not
//! count. Method calls are not paths and are not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: &[&str] = &[
    "contract", "text", "host", "logic", "storage", "ops", "adapter",
];

/// A module path below the crate root (`["ops", "dream", "sweep"]`).
type ModPath = Vec<String>;

fn layer_of(module: &[String]) -> Option<usize> {
    let name = match module {
        [c, f] if c == "contract" && (f == "adapter" || f == "component") => "adapter",
        [f] if f == "fuzzing" => "adapter",
        [top, ..] => top.as_str(),
        [] => return None,
    };
    LAYERS.iter().position(|l| *l == name)
}

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

// ------------------------------------------------------------------ lexing

/// The source without comments, strings and character literals (each
/// replaced by a space), so that only code is left.
fn strip(source: &str) -> String {
    let c: Vec<char> = source.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
            && matches!(c.get(i + 1), Some('"') | Some('#'))
            && {
                let mut k = i + 1;
                while c.get(k) == Some(&'#') {
                    k += 1;
                }
                c.get(k) == Some(&'"')
            }
        {
            let mut k = i + 1;
            let mut hashes = 0;
            while c[k] == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1;
            loop {
                if c[k] == '"' && (0..hashes).all(|h| c.get(k + 1 + h) == Some(&'#')) {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            i = k;
            out.push(' ');
        } else if c[i] == '"' {
            i += 1;
            while c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c[i] == '\'' {
            // A character literal, or a lifetime (kept: it is harmless).
            if c.get(i + 1) == Some(&'\\') {
                let mut k = i + 2;
                while c[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
                out.push(' ');
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push(' ');
            } else {
                out.push(c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::PathSep);
            i += 2;
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn ident(tok: Option<&Tok>) -> Option<&str> {
    match tok {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

// ------------------------------------------------------------------ files

struct File {
    rel: PathBuf,
    toks: Vec<Tok>,
    /// For each token, the inline modules (`mod tests { … }`) it sits in.
    inline: Vec<Vec<String>>,
    /// The `use` declarations: (token index, paths, names they bind).
    uses: Vec<Use>,
}

struct Use {
    at: usize,
    /// The index of its closing `;`.
    end: usize,
    /// Each leaf of the tree: its path, the name it binds (`None` for a
    /// glob).
    leaves: Vec<(Vec<String>, Option<String>)>,
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

fn read_files(root: &Path) -> BTreeMap<ModPath, File> {
    let mut stack = vec![root.to_path_buf()];
    let mut files = BTreeMap::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("below src").to_path_buf();
                let source = std::fs::read_to_string(&path).expect("a readable file");
                let toks = tokens(&strip(&source));
                let inline = inline_modules(&toks);
                let uses = use_declarations(&toks);
                files.insert(
                    module_of(&rel),
                    File {
                        rel,
                        toks,
                        inline,
                        uses,
                    },
                );
            }
        }
    }
    files
}

fn inline_modules(toks: &[Tok]) -> Vec<Vec<String>> {
    let mut out = Vec::with_capacity(toks.len());
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<String> = None;
    for (i, tok) in toks.iter().enumerate() {
        match tok {
            Tok::Ident(m) if m == "mod" => {
                if let (Some(name), Some(Tok::Punct('{'))) =
                    (ident(toks.get(i + 1)), toks.get(i + 2))
                {
                    pending = Some(name.to_string());
                }
            }
            Tok::Punct('{') => {
                depth += 1;
                if let Some(name) = pending.take() {
                    stack.push((name, depth));
                }
            }
            Tok::Punct('}') => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        out.push(stack.iter().map(|(n, _)| n.clone()).collect());
    }
    out
}

fn use_declarations(toks: &[Tok]) -> Vec<Use> {
    let mut uses = Vec::new();
    for (i, tok) in toks.iter().enumerate() {
        if *tok != Tok::Ident("use".into()) {
            continue;
        }
        let end = (i..toks.len())
            .find(|&k| toks[k] == Tok::Punct(';'))
            .expect("a use declaration ends with ;");
        let mut leaves = Vec::new();
        let mut k = i + 1;
        use_tree(toks, &mut k, end, Vec::new(), &mut leaves);
        uses.push(Use { at: i, end, leaves });
    }
    uses
}

/// Parses one use tree from `toks[*k..end]` under `prefix`.
fn use_tree(
    toks: &[Tok],
    k: &mut usize,
    end: usize,
    prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix;
    while *k < end {
        match &toks[*k] {
            Tok::Ident(s) if s == "as" => {
                let alias = ident(toks.get(*k + 1)).unwrap_or("_").to_string();
                *k += 2;
                leaves.push((path, Some(alias)));
                return;
            }
            Tok::Ident(s) => {
                path.push(s.clone());
                *k += 1;
            }
            Tok::PathSep => *k += 1,
            Tok::Punct('*') => {
                *k += 1;
                leaves.push((path, None));
                return;
            }
            Tok::Punct('{') => {
                *k += 1;
                loop {
                    use_tree(toks, k, end, path.clone(), leaves);
                    match toks.get(*k) {
                        Some(Tok::Punct(',')) => *k += 1,
                        _ => break,
                    }
                    if toks.get(*k) == Some(&Tok::Punct('}')) {
                        break;
                    }
                }
                *k += 1; // the closing brace
                return;
            }
            _ => break,
        }
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let name = path.last().cloned();
    if !path.is_empty() {
        leaves.push((path, name));
    }
}

// -------------------------------------------------------------- resolving

struct Crate {
    files: BTreeMap<ModPath, File>,
}

impl Crate {
    /// Where `path` (as written in `module`, inside its inline modules
    /// `inline`) leads: the file module that defines what it names. `None`
    /// for a path outside the crate.
    fn resolve(&self, module: &[String], inline: &[String], path: &[String]) -> Option<ModPath> {
        let (first, rest) = path.split_first()?;
        let mut here: Vec<String> = module.iter().chain(inline).cloned().collect();
        let mut segs: &[String] = rest;
        match first.as_str() {
            "crate" => here.clear(),
            "self" => {}
            "super" => {
                here.pop();
                while segs.first().is_some_and(|s| s == "super") {
                    here.pop();
                    segs = &segs[1..];
                }
            }
            child => {
                let mut m = module.to_vec();
                m.push(child.to_string());
                if inline.is_empty() && self.files.contains_key(&m) {
                    segs = path;
                    here = module.to_vec();
                } else {
                    return None;
                }
            }
        }
        // Inside this file (an inline module of it): no import.
        if here.len() >= module.len()
            && here[..module.len()] == *module
            && here.len() > module.len()
        {
            return Some(module.to_vec());
        }
        self.walk(here, segs, 0)
    }

    fn walk(&self, mut here: ModPath, segs: &[String], depth: usize) -> Option<ModPath> {
        assert!(depth < 16, "re-exports loop at {}", show(&here));
        for (i, seg) in segs.iter().enumerate() {
            let mut next = here.clone();
            next.push(seg.clone());
            if self.files.contains_key(&next) {
                here = next;
                continue;
            }
            // An item of `here`: defined there, or brought in by a `use`.
            let Some(file) = self.files.get(&here) else {
                return Some(here);
            };
            for u in file.uses.iter().filter(|u| file.inline[u.at].is_empty()) {
                for (target, name) in &u.leaves {
                    if name.as_deref() == Some(seg.as_str()) {
                        let to = self.resolve(&here, &[], target)?;
                        return self.walk(to, &segs[i + 1..], depth + 1);
                    }
                }
            }
            if !self.defines(&here, seg) {
                for u in file.uses.iter().filter(|u| file.inline[u.at].is_empty()) {
                    for (target, name) in &u.leaves {
                        if name.is_none() {
                            if let Some(to) = self.resolve(&here, &[], target) {
                                if self.defines(&to, seg) {
                                    return Some(to);
                                }
                            }
                        }
                    }
                }
            }
            return Some(here);
        }
        Some(here)
    }

    /// Whether the file of `module` defines an item named `name` (directly,
    /// or through a macro that takes the name first, as `closed_set!`).
    fn defines(&self, module: &[String], name: &str) -> bool {
        let Some(file) = self.files.get(module) else {
            return false;
        };
        let t = &file.toks;
        (1..t.len()).any(|i| {
            ident(t.get(i)) == Some(name)
                && (matches!(
                    ident(t.get(i - 1)),
                    Some(
                        "struct"
                            | "enum"
                            | "fn"
                            | "const"
                            | "static"
                            | "type"
                            | "trait"
                            | "union"
                            | "mod"
                    )
                ) || (t[i - 1] == Tok::Punct('(')
                    && i >= 2
                    && t[i - 2] == Tok::Punct('!')
                    && t.get(i + 1) == Some(&Tok::Punct('{'))))
        })
    }

    /// Every import of each file: (importer, imported) -> where (line-less:
    /// the path as written).
    fn imports(&self) -> BTreeMap<(ModPath, ModPath), String> {
        let mut edges = BTreeMap::new();
        for (module, file) in &self.files {
            if module.is_empty() {
                continue; // lib.rs: declarations and re-exports only
            }
            let mut add = |to: Option<ModPath>, written: String| {
                if let Some(to) = to {
                    if to != *module {
                        edges.entry((module.clone(), to)).or_insert(written);
                    }
                }
            };
            for u in &file.uses {
                for (path, _) in &u.leaves {
                    add(
                        self.resolve(module, &file.inline[u.at], path),
                        format!("use {}", path.join("::")),
                    );
                }
            }
            let t = &file.toks;
            let mut in_use = vec![false; t.len()];
            for u in &file.uses {
                in_use[u.at..=u.end].iter_mut().for_each(|x| *x = true);
            }
            let mut i = 0;
            while i < t.len() {
                // A visibility (`pub(in crate::ops)`) names no import.
                let starts = ident(t.get(i)).is_some()
                    && t.get(i + 1) == Some(&Tok::PathSep)
                    && (i == 0 || (t[i - 1] != Tok::PathSep && ident(t.get(i - 1)) != Some("in")));
                if !starts || in_use[i] {
                    i += 1;
                    continue;
                }
                let mut path = vec![ident(t.get(i)).unwrap().to_string()];
                let mut k = i + 1;
                while t.get(k) == Some(&Tok::PathSep) {
                    match ident(t.get(k + 1)) {
                        Some(s) => path.push(s.to_string()),
                        None => break,
                    }
                    k += 2;
                }
                add(
                    self.resolve(module, &file.inline[i], &path),
                    path.join("::"),
                );
                i = k;
            }
        }
        edges
    }
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The strongly connected components of more than one module.
fn cycles(
    nodes: &BTreeSet<ModPath>,
    edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
) -> Vec<Vec<ModPath>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<ModPath, usize>,
        low: BTreeMap<ModPath, usize>,
        stack: Vec<ModPath>,
        on: BTreeSet<ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: &ModPath) {
            let n = self.index.len();
            self.index.insert(v.clone(), n);
            self.low.insert(v.clone(), n);
            self.stack.push(v.clone());
            self.on.insert(v.clone());
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v.clone(), low);
                } else if self.on.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v.clone(), low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("on the stack");
                    self.on.remove(&w);
                    let done = w == *v;
                    component.push(w);
                    if done {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn every_file_belongs_to_a_layer() {
    let krate = Crate {
        files: read_files(&source_root()),
    };
    let strays: Vec<String> = krate
        .files
        .iter()
        .filter(|(m, _)| !m.is_empty() && layer_of(m).is_none())
        .map(|(_, f)| f.rel.display().to_string())
        .collect();
    assert!(strays.is_empty(), "files outside every layer: {strays:?}");
}

#[test]
fn no_file_imports_from_a_later_layer() {
    let krate = Crate {
        files: read_files(&source_root()),
    };
    let imports = krate.imports();
    // `LAYERS_GRAPH=1 cargo test --test layers -- --nocapture` prints it.
    if std::env::var_os("LAYERS_GRAPH").is_some() {
        for (from, to) in imports.keys() {
            println!("{} -> {}", show(from), show(to));
        }
    }
    let mut wrong = Vec::new();
    for ((from, to), written) in imports {
        let (Some(a), Some(b)) = (layer_of(&from), layer_of(&to)) else {
            if !to.is_empty() {
                continue;
            }
            wrong.push(format!("{} names the crate root ({written})", show(&from)));
            continue;
        };
        if b > a {
            wrong.push(format!(
                "{} ({}) imports {} ({}): {written}",
                krate.files[&from].rel.display(),
                LAYERS[a],
                show(&to),
                LAYERS[b]
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layer order {LAYERS:?}:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn no_files_import_each_other_in_a_cycle() {
    let krate = Crate {
        files: read_files(&source_root()),
    };
    let imports = krate.imports();
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (from, to) in imports.keys() {
        edges.entry(from.clone()).or_default().insert(to.clone());
    }
    let nodes: BTreeSet<ModPath> = krate.files.keys().cloned().collect();
    let found = cycles(&nodes, &edges);
    let described: Vec<String> = found
        .iter()
        .map(|component| {
            let members: BTreeSet<&ModPath> = component.iter().collect();
            let inner: Vec<String> = imports
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), w)| format!("    {} -> {} ({w})", show(a), show(b)))
                .collect();
            format!(
                "{}:\n{}",
                component
                    .iter()
                    .map(|m| show(m))
                    .collect::<Vec<_>>()
                    .join(", "),
                inner.join("\n")
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "import cycles:\n  {}",
        described.join("\n  ")
    );
}

#[test]
fn the_checker_sees_imports_of_every_kind() {
    let code = r#"
        use crate::a::{self, b::C as D, e::*};
        use super::f;
        // use crate::not_this;
        fn g() { crate::h::i(); let s = "crate::not_this_either"; child::j(); }
        pub(in crate::z) fn visible_in_z() {}
        #[cfg(test)] mod tests { use super::*; use crate::k; }
    "#;
    let toks = tokens(&strip(code));
    let inline = inline_modules(&toks);
    let uses = use_declarations(&toks);
    let leaves: Vec<String> = uses
        .iter()
        .flat_map(|u| u.leaves.iter().map(|(p, _)| p.join("::")))
        .collect();
    assert_eq!(
        leaves,
        [
            "crate::a",
            "crate::a::b::C",
            "crate::a::e",
            "super::f",
            "super",
            "crate::k"
        ]
    );
    let last = uses.last().expect("a use in tests");
    assert_eq!(inline[last.at], ["tests"]);
    assert!(!toks.contains(&Tok::Ident("not_this".into())));
    assert!(!toks.contains(&Tok::Ident("not_this_either".into())));
    let files = [
        "x.rs",
        "a.rs",
        "a/b.rs",
        "a/e.rs",
        "f.rs",
        "h.rs",
        "k.rs",
        "x/child.rs",
    ];
    let krate = Crate {
        files: files
            .iter()
            .map(|f| {
                let rel = PathBuf::from(f);
                let toks = if *f == "x.rs" {
                    toks.clone()
                } else {
                    Vec::new()
                };
                let file = File {
                    inline: if *f == "x.rs" {
                        inline.clone()
                    } else {
                        Vec::new()
                    },
                    uses: if *f == "x.rs" {
                        use_declarations(&toks)
                    } else {
                        Vec::new()
                    },
                    toks,
                    rel: rel.clone(),
                };
                (module_of(&rel), file)
            })
            .collect(),
    };
    let found: Vec<String> = krate
        .imports()
        .keys()
        .map(|(from, to)| format!("{} -> {}", show(from), show(to)))
        .collect();
    assert_eq!(
        found,
        [
            "x -> a",
            "x -> a::b",
            "x -> a::e",
            "x -> f",
            "x -> h",
            "x -> k",
            "x -> x::child"
        ]
    );
}
