//! The `bootstrap` family: `AGENTS.md`, `MEMORY.md` and `USER.md` read as
//! they are (superseded `USER.md` directives left out) and cut to their
//! budgets by `logic::bootstrap`; the digest tells a host whether anything
//! changed since it last asked.

use super::recall::MAX_GET_BYTES;
use super::Memory;
use crate::contract::api::{BootstrapRequest, BootstrapResult};
use crate::contract::error::Result;
use crate::logic::bootstrap::{self, Found, BOOTSTRAP_FILES};
use crate::storage::workspace::BootstrapRead;
use crate::text::hash::sha256_hex;
use crate::text::layout;

impl Memory {
    /// See the WIT `bootstrap.load`.
    pub fn bootstrap(&self, request: &BootstrapRequest) -> Result<BootstrapResult> {
        let budgets = self.settings.bootstrap;
        // Enough bytes to count every character up to the largest budget, and
        // then some: the report says how long the file really is.
        let read_limit = MAX_GET_BYTES;
        let mut contents: Vec<(&str, BootstrapRead)> = Vec::new();
        for name in BOOTSTRAP_FILES {
            let mut read = self.workspace.read_bootstrap(name, read_limit)?;
            // Superseded preferences are never injected.
            if name == layout::USER_FILE {
                if let BootstrapRead::Text(text) = &read {
                    read = BootstrapRead::Text(crate::logic::user::injectable(text));
                }
            }
            contents.push((name, read));
        }
        let borrowed: Vec<(&str, Found<'_>)> = contents
            .iter()
            .map(|(n, read)| {
                let found = match read {
                    BootstrapRead::Missing => Found::Missing,
                    BootstrapRead::Refused(why) => Found::Refused(why),
                    BootstrapRead::Text(text) => Found::Text(text),
                };
                (*n, found)
            })
            .collect();
        let plan = bootstrap::plan(&borrowed, &budgets);
        let digest = sha256_hex(plan.text.as_bytes());
        let changed = request.known_digest.as_deref() != Some(digest.as_str());
        Ok(BootstrapResult {
            total_chars: plan.files.iter().map(|f| f.injected_chars as u32).sum(),
            files: plan.files,
            text: plan.text,
            digest,
            changed,
        })
    }
}
