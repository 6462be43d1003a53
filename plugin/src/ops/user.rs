//! The `user` family: `USER.md`, the user model, shown as directives and
//! changed by the owner in person (`logic::user` decides how a new
//! directive supersedes the old one); the file is replaced only if it is
//! still what was read.

use super::Memory;
use crate::contract::api::{SyncRequest, TurnContext};
use crate::contract::error::{MemoryError, Result};
use crate::logic::provenance::owner_in_person;
use crate::logic::user::{self, Directive};
use crate::storage::workspace::content_hash;
use crate::text::hash::sha256_hex;
use crate::text::layout::{self, Date};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserModel {
    pub text: String,
    pub hash: String,
    pub directives: Vec<Directive>,
    /// `user_set` only: the active directive the new one superseded.
    pub replaced: Option<Directive>,
}

impl Memory {
    /// See the WIT `user.show`.
    pub fn user_show(&self) -> Result<UserModel> {
        let path = layout::memory_path(layout::USER_FILE).expect("a fixed memory path");
        let text = match self.workspace.read(&path, 4 * 1024 * 1024) {
            Ok(content) => content.text,
            Err(MemoryError::NotFound(_)) => String::new(),
            Err(error) => return Err(error),
        };
        Ok(UserModel {
            hash: content_hash(text.as_bytes()),
            directives: user::directives(&text),
            text,
            replaced: None,
        })
    }

    /// See the WIT `user.set`.
    pub fn user_set(
        &mut self,
        directive: &str,
        replaces_line: Option<u32>,
        expected_hash: &str,
        context: &TurnContext,
    ) -> Result<UserModel> {
        self.writable("user.set")?;
        owner_in_person(context).map_err(|why| {
            MemoryError::AccessDenied(format!(
                "{why}: only the owner, in person, can change USER.md"
            ))
        })?;
        if let Some(taint) = context.tainted() {
            return Err(MemoryError::AccessDenied(format!(
                "this turn held {} content; USER.md changes only from a turn the owner's words alone shaped",
                taint.as_str()
            )));
        }
        let on_disk = self.workspace.read_root_file(layout::USER_FILE)?;
        let current = self.user_show()?;
        if current.hash != expected_hash {
            return Err(MemoryError::InvalidInput(
                "USER.md changed since it was read (stale hash); nothing was overwritten: read it again".into(),
            ));
        }
        let today = Date::of_turn(context);
        let (new_text, superseded) = user::set(&current.text, directive, replaces_line, today)
            .map_err(MemoryError::InvalidInput)?;
        // The file is replaced only if it is still what was read above.
        let expected = on_disk.as_deref().map(sha256_hex);
        let replaced = self.workspace.replace_root_file(
            layout::USER_FILE,
            expected.as_deref(),
            Some(new_text.as_bytes()),
            context.now_ms,
        )?;
        if !replaced {
            return Err(MemoryError::InvalidInput(
                "USER.md changed while the directive was being set; nothing was overwritten: read it again".into(),
            ));
        }
        self.sync(SyncRequest::default())?;
        let mut model = self.user_show()?;
        model.replaced = superseded;
        Ok(model)
    }
}
