//! Where a turn runs: the project key of a git repository, resolved by the
//! host (the component is granted only the workspace, never the repository).
//! The key is the normalised `origin` remote — clones and linked worktrees of
//! one repository share it, forks do not — or, with no origin, the
//! repository's absolute root path. Read from git's own files (a worktree's
//! `.git` file is followed to the common directory), never by starting git;
//! resolved once per directory and cached.

use anyhow::{bail, Context};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The project key of the repository containing `dir`, or `None` outside
/// any repository.
pub fn project_key(dir: &Path) -> anyhow::Result<Option<String>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Option<String>>>> = OnceLock::new();
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open {}", dir.display()))?;
    let cache = CACHE.get_or_init(Default::default);
    if let Some(key) = cache.lock().expect("cache lock").get(&dir) {
        return Ok(key.clone());
    }
    let key = resolve(&dir)?;
    cache.lock().expect("cache lock").insert(dir, key.clone());
    Ok(key)
}

fn resolve(dir: &Path) -> anyhow::Result<Option<String>> {
    let Some(root) = dir.ancestors().find(|d| d.join(".git").exists()) else {
        return Ok(None);
    };
    let dot_git = root.join(".git");
    let common = if dot_git.is_dir() {
        dot_git
    } else {
        // A linked worktree: `.git` is a file naming its git directory, whose
        // `commondir` names the repository's shared directory.
        let text = std::fs::read_to_string(&dot_git)?;
        let Some(gitdir) = text
            .lines()
            .find_map(|l| l.strip_prefix("gitdir:"))
            .map(str::trim)
        else {
            bail!("{} is not a git directory pointer", dot_git.display());
        };
        let gitdir = root.join(gitdir);
        match std::fs::read_to_string(gitdir.join("commondir")) {
            Ok(common) => gitdir.join(common.trim()),
            Err(_) => gitdir,
        }
    };
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    let key = match origin_url(&config) {
        Some(url) => normalise_remote(&url),
        None => root.to_string_lossy().into_owned(),
    };
    Ok(Some(escape_key(&key)))
}

/// A session's active projects: at most four keys, most recent first.
/// Preparing a repository moves its key to the front and evicts the least
/// recently used beyond four. Ephemeral: never persisted, so a new session or
/// process starts empty; a sub-agent starts its own (empty) set; leaving a
/// repository clears nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActiveProjects {
    keys: Vec<String>,
}

impl ActiveProjects {
    pub const CAPACITY: usize = 4;

    pub fn prepare(&mut self, key: &str) {
        self.keys.retain(|k| k != key);
        self.keys.insert(0, key.to_string());
        self.keys.truncate(Self::CAPACITY);
    }

    /// Most recent first: the first is the current key writes are tagged with.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }
}

/// The `url` of `[remote "origin"]` in a git config file.
pub fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            let section: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            in_origin = section == "[remote\"origin\"]";
            continue;
        }
        if in_origin {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == "url" {
                    return Some(value.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    None
}

/// `https://user:token@GitHub.com:443/Owner/Repo.git`, `ssh://git@github.com:22/Owner/Repo`,
/// `git@github.com:Owner/Repo.git` → `github.com/Owner/Repo`.
pub fn normalise_remote(url: &str) -> String {
    let url = url.trim();
    let (rest, scp) = match url.split_once("://") {
        Some((_, rest)) => (rest, false),
        None => (url, true),
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    let (host, path) = if scp {
        rest.split_once(':').unwrap_or((rest, ""))
    } else {
        rest.split_once('/').unwrap_or((rest, ""))
    };
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let path = path.trim_start_matches('/').trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if path.is_empty() {
        host
    } else {
        format!("{host}/{path}")
    }
}

/// Semicolons separate keys in an annotation: escape them so one key can
/// never become two.
pub fn escape_key(key: &str) -> String {
    key.replace(';', "\\;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_in_every_form_meet() {
        for url in [
            "https://github.com/acme/api.git",
            "https://user:secret@GitHub.com/acme/api",
            "https://github.com:443/acme/api.git/",
            "ssh://git@github.com:22/acme/api.git",
            "git@github.com:acme/api.git",
            "git://github.com/acme/api",
        ] {
            assert_eq!(normalise_remote(url), "github.com/acme/api", "{url}");
        }
        assert_ne!(
            normalise_remote("git@github.com:fork/api.git"),
            "github.com/acme/api"
        );
    }

    #[test]
    fn the_active_set_keeps_four_most_recent_first() {
        let mut active = ActiveProjects::default();
        for key in ["a", "b", "c", "d"] {
            active.prepare(key);
        }
        assert_eq!(active.keys(), ["d", "c", "b", "a"]);
        active.prepare("b");
        assert_eq!(
            active.keys(),
            ["b", "d", "c", "a"],
            "preparing moves to the front"
        );
        active.prepare("e");
        assert_eq!(
            active.keys(),
            ["e", "b", "d", "c"],
            "the least recently used is evicted at the fifth"
        );
        assert_eq!(
            ActiveProjects::default().keys(),
            [] as [String; 0],
            "a sub-agent starts its own set"
        );
    }

    #[test]
    fn reads_the_origin_url() {
        let config = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/y\n[remote \"origin\"]\n\turl = git@github.com:acme/api.git\n\tfetch = +refs/heads/*\n";
        assert_eq!(
            origin_url(config).as_deref(),
            Some("git@github.com:acme/api.git")
        );
        assert_eq!(origin_url("[core]\n"), None);
    }

    #[test]
    fn clones_and_worktrees_share_a_key_forks_and_plain_repos_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("clone");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::write(
            repo.join(".git/config"),
            "[remote \"origin\"]\n url = https://github.com/acme/api.git\n",
        )
        .unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        let key = project_key(&repo.join("src/deep")).unwrap();
        assert_eq!(key.as_deref(), Some("github.com/acme/api"));
        assert_eq!(
            project_key(&wt).unwrap(),
            key,
            "a linked worktree shares the key"
        );
        let plain = dir.path().join("plain;repo");
        std::fs::create_dir_all(plain.join(".git")).unwrap();
        let plain_key = project_key(&plain).unwrap().unwrap();
        assert!(
            plain_key.ends_with("plain\\;repo"),
            "no origin: the root path, semicolons escaped: {plain_key}"
        );
        assert_eq!(
            project_key(dir.path()).unwrap(),
            None,
            "outside any repository"
        );
    }
}
