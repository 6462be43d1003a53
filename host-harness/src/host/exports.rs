//! The component's exported functions as data: each one a caller can name
//! `<interface>.<function>` (`recall.search`, `store.sync` for the method
//! `[method]memory.sync`), with its parameter and result types, found in the
//! component's own type information rather than written out here. The
//! conformance runner calls through this, and `calls.json` is drawn from it.

use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Type};
use wasmtime::Engine;

/// One exported function.
#[derive(Clone)]
pub struct Export {
    /// `<interface>.<function>`, the name a scenario calls it by.
    pub call: String,
    /// The interface's export name (`openclaw:memory/recall@0.1.0`).
    pub interface: String,
    /// The function's name inside it (`search`, `[method]memory.sync`).
    pub function: String,
    pub params: Vec<(String, Type)>,
    pub result: Option<Type>,
}

/// Every exported function of the component, in export order.
pub fn exported_functions(engine: &Engine, component: &Component) -> Vec<Export> {
    let mut out = Vec::new();
    for (interface, item) in component.component_type().exports(engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        let short = short_interface(interface);
        for (function, item) in instance.exports(engine) {
            let ComponentItem::ComponentFunc(func) = item.ty else {
                continue;
            };
            let Some(name) = call_name(function) else {
                continue;
            };
            out.push(Export {
                call: format!("{short}.{name}"),
                interface: interface.to_string(),
                function: function.to_string(),
                params: func
                    .params()
                    .map(|(name, ty)| (name.to_string(), ty))
                    .collect(),
                result: func.results().next(),
            });
        }
    }
    out
}

/// `openclaw:memory/recall@0.1.0` → `recall`.
fn short_interface(name: &str) -> &str {
    let tail = name.rsplit('/').next().unwrap_or(name);
    tail.split('@').next().unwrap_or(tail)
}

/// A function's name as a scenario writes it: `[method]memory.sync` → `sync`,
/// `[static]memory.open` → `memory.open`; constructors are not called by name.
fn call_name(function: &str) -> Option<String> {
    if let Some(rest) = function.strip_prefix("[method]") {
        return rest.split_once('.').map(|(_, f)| f.to_string());
    }
    if let Some(rest) = function.strip_prefix("[static]") {
        return Some(rest.to_string());
    }
    if function.starts_with('[') {
        return None;
    }
    Some(function.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_scenarios_write_them() {
        assert_eq!(short_interface("openclaw:memory/recall@0.1.0"), "recall");
        assert_eq!(short_interface("store"), "store");
        assert_eq!(call_name("search").as_deref(), Some("search"));
        assert_eq!(call_name("[method]memory.sync").as_deref(), Some("sync"));
        assert_eq!(
            call_name("[static]memory.open").as_deref(),
            Some("memory.open")
        );
        assert_eq!(call_name("[constructor]memory"), None);
    }
}
