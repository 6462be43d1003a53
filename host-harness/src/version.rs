//! What `memory-harness --version` says: the harness's version, the
//! version of the component it would load (read from the component's
//! `memory-core-version` custom section, so a `.wasm` from another build
//! or a release says its own), and the WIT package both speak.

use std::path::Path;

/// The custom section a memory-core component carries its version in
/// (`memory_core::COMPONENT_VERSION`).
pub const VERSION_SECTION: &str = "memory-core-version";

/// The WIT package the harness was built against (`wit/world.wit`).
pub fn wit_package() -> &'static str {
    package_of(include_str!("../../wit/world.wit")).unwrap_or("unknown")
}

fn package_of(wit: &str) -> Option<&str> {
    wit.lines()
        .find_map(|line| line.trim().strip_prefix("package "))
        .map(|rest| rest.trim().trim_end_matches(';').trim())
}

/// A component's version from its custom section; `None` when the bytes
/// are not a component that carries one.
pub fn component_version(bytes: &[u8]) -> Option<String> {
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        if let wasmparser::Payload::CustomSection(section) = payload.ok()? {
            if section.name() == VERSION_SECTION {
                return String::from_utf8(section.data().to_vec()).ok();
            }
        }
    }
    None
}

/// The lines after `memory-harness ` in `--version`.
pub fn describe(component: &Path) -> String {
    let component_line = match std::fs::read(component) {
        Ok(bytes) => match component_version(&bytes) {
            Some(v) => format!("component {v} ({})", component.display()),
            None => format!(
                "component of unknown version ({}: no {VERSION_SECTION} section)",
                component.display()
            ),
        },
        Err(e) => format!("component not found ({}: {e})", component.display()),
    };
    format!(
        "{}\n{component_line}\nWIT {}",
        env!("CARGO_PKG_VERSION"),
        wit_package()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wit_package_is_read_from_the_world() {
        assert_eq!(
            package_of("// x\npackage openclaw:memory@0.1.0;\n\nworld w {}"),
            Some("openclaw:memory@0.1.0")
        );
        assert!(wit_package().starts_with("openclaw:memory@"));
    }

    #[test]
    fn a_component_s_version_comes_from_its_section_and_others_have_none() {
        // A core module with the section, as the component embeds it.
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        let name = VERSION_SECTION.as_bytes();
        let payload = b"9.8.7";
        module.push(0);
        module.push((1 + name.len() + payload.len()) as u8);
        module.push(name.len() as u8);
        module.extend_from_slice(name);
        module.extend_from_slice(payload);
        assert_eq!(component_version(&module).as_deref(), Some("9.8.7"));
        assert_eq!(component_version(b"\0asm\x01\0\0\0"), None);
        assert_eq!(component_version(b"not wasm"), None);
    }
}
