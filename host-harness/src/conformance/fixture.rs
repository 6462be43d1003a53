//! The runner's own steps (`op`): what a person or the host does between
//! component calls — edit, move and read files, damage the index, restart
//! the instance, resolve a repository — and the snapshots behind the
//! "files unchanged" checks. Nothing here is the component's behaviour.

use super::Step;
use crate::driver::Run;
use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Files by workspace-relative path: sha-256 and length.
pub type Snapshot = BTreeMap<String, (String, u64)>;

/// What the runner keeps between steps: the files as `save_files` or
/// `save_state` saw them.
#[derive(Default)]
pub struct Saved {
    pub snapshot: Option<Snapshot>,
}

/// Runs a runner step; returns its result when it has one to check.
pub fn run(
    run: &mut Run,
    workspace: &Path,
    step: &Step,
    op: &str,
    saved: &mut Saved,
) -> anyhow::Result<Option<Value>> {
    let path = || -> anyhow::Result<std::path::PathBuf> {
        Ok(workspace.join(
            step.path
                .as_deref()
                .with_context(|| format!("{op} needs `path`"))?,
        ))
    };
    Ok(match op {
        "prepare_repo" => {
            // The host's side: resolve the repository's project key from its
            // git files and make it the session's most recent project.
            let key = crate::project::project_key(&path()?)?;
            if let Some(key) = &key {
                run.turn.projects.prepare(key);
            }
            Some(json!({"key": key, "active": run.turn.projects.keys()}))
        }
        "model_calls" => Some(json!({"count": run.driver.model_calls()})),
        "save_files" | "save_state" => {
            saved.snapshot = Some(snapshot(workspace, op == "save_state")?);
            None
        }
        "files_unchanged" | "state_unchanged" => {
            let (save, with_memory) = if op == "state_unchanged" {
                ("save_state", true)
            } else {
                ("save_files", false)
            };
            let before = saved
                .snapshot
                .as_ref()
                .with_context(|| format!("{op} needs an earlier {save}"))?;
            let after = snapshot(workspace, with_memory)?;
            if *before != after {
                bail!(
                    "files changed since {save}: {:?}",
                    changed_paths(before, &after)
                );
            }
            None
        }
        "read_file" => {
            // The file as a person would see it.
            let text = std::fs::read(path()?)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            Some(json!({"exists": text.is_some(), "text": text.unwrap_or_default()}))
        }
        "list_files" => Some(
            json!({ "files": list_files(workspace, step.path.as_deref().context("list_files needs `path`")?) }),
        ),
        "restart" => {
            run.driver.restart();
            None
        }
        "write" | "append" => {
            let path = path()?;
            let mut bytes = match (&step.content, &step.bytes_hex) {
                (Some(text), None) => text.as_bytes().to_vec(),
                (None, Some(hex)) => decode_hex(hex)?,
                _ => bail!("give exactly one of `content` and `bytes_hex`"),
            };
            if let Some(n) = step.repeat {
                bytes = bytes.repeat(n);
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            if op == "append" {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&path)?
                    .write_all(&bytes)?;
            } else {
                std::fs::write(&path, bytes)?;
            }
            None
        }
        "delete" => {
            std::fs::remove_file(path()?)?;
            None
        }
        "rename" => {
            // A person renaming or moving a file (`path` to `target`).
            let target = workspace.join(step.target.as_deref().context("rename needs `target`")?);
            std::fs::rename(path()?, target)?;
            None
        }
        "symlink" => {
            let target = step.target.as_deref().context("symlink needs `target`")?;
            std::os::unix::fs::symlink(target, path()?)?;
            None
        }
        "mkfifo" => {
            let status = std::process::Command::new("mkfifo").arg(path()?).status()?;
            if !status.success() {
                bail!("mkfifo failed");
            }
            None
        }
        "corrupt_index" => {
            let index = workspace.join(".memory/index.sqlite");
            let len = std::fs::metadata(&index)
                .map(|m| m.len())
                .unwrap_or(0)
                .max(4096);
            run.driver.restart();
            std::fs::write(&index, vec![0x5a; len as usize])?;
            None
        }
        "delete_index" => {
            run.driver.restart();
            let _ = std::fs::remove_file(workspace.join(".memory/index.sqlite"));
            let _ = std::fs::remove_file(workspace.join(".memory/index.sqlite-journal"));
            None
        }
        other => bail!("unknown op {other:?}"),
    })
}

/// Workspace-relative paths of the files whose path starts with `prefix`,
/// sorted.
fn list_files(workspace: &Path, prefix: &str) -> Vec<String> {
    let (dir, start) = match prefix.rfind('/') {
        Some(i) => (&prefix[..i], &prefix[i + 1..]),
        None => ("", prefix),
    };
    let mut files: Vec<String> = std::fs::read_dir(workspace.join(dir))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(start))
        .map(|name| {
            if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            }
        })
        .collect();
    files.sort();
    files
}

/// The length recorded for a link or FIFO in a snapshot.
const SPECIAL_FILE: u64 = u64::MAX;

/// Every file that existed before still starts with exactly its old bytes.
pub fn check_append_only(root: &Path, before: &Snapshot) -> anyhow::Result<()> {
    for (path, (hash, len)) in before.iter().filter(|(_, (_, len))| *len != SPECIAL_FILE) {
        let bytes = std::fs::read(root.join(path))
            .with_context(|| format!("{path} disappeared during a write"))?;
        if (bytes.len() as u64) < *len || hex(&Sha256::digest(&bytes[..*len as usize])) != *hash {
            bail!("{path} was rewritten, not appended to");
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha-256 and length of every file outside `.memory/` (with
/// `with_memory`, inside it too: the databases, but no host's lock file), by
/// relative path.
pub fn snapshot(root: &Path, with_memory: bool) -> anyhow::Result<Snapshot> {
    let mut out = BTreeMap::new();
    fn visit(root: &Path, dir: &Path, with_memory: bool, out: &mut Snapshot) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let relative = path.strip_prefix(root)?.to_string_lossy().to_string();
            if (relative == ".memory" && !with_memory)
                || (relative.starts_with(".memory/") && relative.ends_with(".lock"))
            {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                visit(root, &path, with_memory, out)?;
            } else if kind.is_file() {
                let bytes = std::fs::read(&path)?;
                out.insert(relative, (hex(&Sha256::digest(&bytes)), bytes.len() as u64));
            } else {
                // Links and FIFOs are compared by kind only, never opened.
                out.insert(relative, (format!("{kind:?}"), SPECIAL_FILE));
            }
        }
        Ok(())
    }
    visit(root, root, with_memory, &mut out)?;
    Ok(out)
}

pub fn changed_paths(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn decode_hex(hex: &str) -> anyhow::Result<Vec<u8>> {
    let clean: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
    if !clean.len().is_multiple_of(2) {
        bail!("odd number of hex digits");
    }
    (0..clean.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).map_err(|e| anyhow!("bad hex: {e}")))
        .collect()
}

/// One `<memory-recall>` block: it starts and ends the text, and no other
/// opening or closing tag is in it, however disguised.
pub fn check_framing(framed: &str, citation: &str) -> anyhow::Result<()> {
    let plain: String = framed
        .chars()
        .filter(|c| !matches!(*c as u32, 0x200B..=0x200F | 0x2060..=0x2064 | 0xFEFF))
        .map(|c| match c as u32 {
            0xFF1C | 0x2039 | 0x2329 | 0x27E8 | 0x3008 | 0xFE64 | 0x02C2 => '<',
            0xFF1E | 0x203A | 0x232A | 0x27E9 | 0x3009 | 0xFE65 | 0x02C3 => '>',
            0x2010..=0x2015 | 0x2212 | 0xFE63 | 0xFF0D => '-',
            _ => c,
        })
        .collect::<String>()
        .to_lowercase();
    let opens = plain.matches("<memory-").count();
    let closes = plain.matches("</memory-").count();
    if !(plain.starts_with("<memory-recall ") && plain.ends_with("</memory-recall>"))
        || opens != 1
        || closes != 1
    {
        bail!("the framing of {citation} is not one intact block ({opens} openings, {closes} closings):\n{framed}");
    }
    Ok(())
}
