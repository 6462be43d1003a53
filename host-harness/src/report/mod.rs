//! `memory-harness report`: the review page of a workspace — what entered
//! long-term memory, from where and why — as one self-contained HTML file
//! (`--out`) or live on a loopback port (`--serve`).
//!
//! Everything on the page comes from the component's read-only exports
//! (`report.gather`, `bootstrap.load`, `intents.list`) and, for the text a
//! budget cut off, from the curated file itself. The session is read-only
//! twice over: the sandbox is granted the workspace read-only, and the
//! memory is opened with `open-read-only`, which creates, rebuilds and
//! migrates nothing (an index or ledger that is not current is refused,
//! with what to run). Nothing syncs, records a recall or calls a model; the
//! only file the report touches is the workspace lock
//! (`.memory/workspace.lock`), and it leaves a workspace the JavaScript host
//! serves alone. The page is rendered by `html`, its plots by `svg`;
//! neither runs a line of JavaScript.

pub mod html;
pub mod serve;
pub mod svg;

use crate::config::Resolved;
use crate::embed::EmbedderChoice;
use crate::host::{wit, wit_bootstrap, wit_intents, wit_report};
use crate::model::ModelChoice;
use crate::session::Session;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// How much of each list the page shows.
pub const MAX_SWEEPS: u32 = 30;
pub const MAX_CANDIDATES: u32 = 200;
pub const MAX_PROMOTED: u32 = 100;
pub const MAX_RECALLED: u32 = 20;
/// Characters of a budget's cut-off tail shown.
const TAIL_PREVIEW_CHARS: usize = 600;

/// The budgets the bootstrap was planned with, for the budget bars.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    pub max_file_chars: u32,
    pub max_user_file_chars: u32,
    pub max_total_chars: u32,
}

/// What a budget cut off one curated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutTail {
    /// 1-based line the cut-off part starts on.
    pub from_line: usize,
    pub chars: usize,
    /// Its first characters.
    pub preview: String,
}

/// Everything the page shows, gathered in one session.
pub struct Gathered {
    pub workspace: PathBuf,
    pub now_ms: i64,
    pub report: wit_report::WorkspaceReport,
    pub bootstrap: wit_bootstrap::BootstrapResult,
    /// One per bootstrap file, in the same order (`None`: not cut).
    pub cut: Vec<Option<CutTail>>,
    pub budgets: Budgets,
    pub intents: Vec<wit_intents::Intent>,
    pub gates: crate::host::wit_dream::DreamGates,
}

/// Gathers the page's data from `resolved.workspace` at `now_ms`. A
/// workspace without a ledger and an index has nothing to review: it is
/// refused here, before the workspace lock would create `.memory/` (the
/// component's read-only open refuses an index or ledger that is not
/// current, saying why).
pub fn gather(resolved: &Resolved, now_ms: i64) -> anyhow::Result<Gathered> {
    let workspace = &resolved.workspace;
    for file in [".memory/provenance.sqlite", ".memory/index.sqlite"] {
        if !workspace.join(file).is_file() {
            bail!(
                "{} has no {file}: there is no memory to review yet (`memory-harness --workspace {} index` creates it)",
                workspace.display(),
                workspace.display()
            );
        }
    }
    // The report needs neither: no weights are loaded, no model is reached.
    let mut resolved = resolved.clone();
    resolved.embedder = EmbedderChoice::None;
    resolved.model = ModelChoice::None;
    let mut session = Session::open_read_only(&resolved, now_ms)?;
    let context = session.context();
    let report = session
        .host
        .report(&wit_report::ReportRequest {
            now_ms,
            gates: session.dream_gates,
            max_sweeps: MAX_SWEEPS,
            max_candidates: MAX_CANDIDATES,
            max_promoted: MAX_PROMOTED,
            max_recalled: MAX_RECALLED,
        })
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot gather the report")?;
    let bootstrap = session
        .host
        .bootstrap(&wit_bootstrap::BootstrapRequest {
            purpose: wit_bootstrap::BootstrapPurpose::SessionStart,
            context: context.clone(),
            known_digest: None,
        })
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot read the curated files")?;
    let intents = session
        .host
        .intent_list(&context)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot list the standing intents")?;
    let cut = bootstrap
        .files
        .iter()
        .map(|f| {
            f.truncated.as_ref()?;
            cut_tail(&read_lossy(&workspace.join(&f.path))?, &f.text)
        })
        .collect();
    let settings = &resolved.settings.bootstrap;
    Ok(Gathered {
        workspace: workspace.clone(),
        now_ms,
        report,
        bootstrap,
        cut,
        budgets: Budgets {
            max_file_chars: settings.max_file_chars,
            max_user_file_chars: settings.max_user_file_chars,
            max_total_chars: settings.max_total_chars,
        },
        intents,
        gates: session.dream_gates,
    })
}

/// Bootstrap files are read up to this size (as `bootstrap.load` does).
const MAX_CURATED_BYTES: u64 = 64 * 1024 * 1024;

fn read_lossy(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_CURATED_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The part of `file` a budget left out, given the injected text (the kept
/// head followed by the truncation marker). `None` when the injected text is
/// not a head of the file: `USER.md` is injected without its superseded
/// directives, so only the counts say what was cut.
pub fn cut_tail(file: &str, injected: &str) -> Option<CutTail> {
    let head = injected
        .rfind(memory_core::logic::bootstrap::TRUNCATION_MARKER)
        .map_or("", |at| &injected[..at]);
    let tail = file.strip_prefix(head)?;
    // A tail that starts at a line break begins on the next line.
    let from_line = head.matches('\n').count() + 1 + usize::from(tail.starts_with('\n'));
    let tail = tail.strip_prefix('\n').unwrap_or(tail);
    Some(CutTail {
        from_line,
        chars: tail.chars().count(),
        preview: tail.chars().take(TAIL_PREVIEW_CHARS).collect(),
    })
}

/// Owner and agent text is shown as it is; untrusted and system text is
/// quoted and marked.
pub fn is_trusted(class: wit::SourceClass) -> bool {
    matches!(class, wit::SourceClass::Owner | wit::SourceClass::Agent)
}

/// Writes the page to `out` through a temporary file and a rename, so a
/// reader never sees half a page. Refuses a path inside the workspace: the
/// report never changes what it reports on.
pub fn write_page(out: &Path, workspace: &Path, page: &str) -> anyhow::Result<()> {
    let absolute = |p: &Path| -> anyhow::Result<PathBuf> {
        Ok(if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir()?.join(p)
        })
    };
    let dir = absolute(out)?
        .parent()
        .map(Path::to_path_buf)
        .context("the output path has no directory")?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    let root = workspace
        .canonicalize()
        .with_context(|| format!("cannot open {}", workspace.display()))?;
    if dir.starts_with(&root) {
        bail!(
            "{} is inside the workspace; the report is written elsewhere so that it changes nothing it reports on",
            out.display()
        );
    }
    let name = out
        .file_name()
        .context("the output path has no file name")?;
    let target = dir.join(name);
    let temp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temp, page).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, &target)
        .with_context(|| format!("cannot write {}", target.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_tail_is_what_the_head_left_out() {
        let file = "# Memory\n- one\n- two\n- three\n";
        let injected = "# Memory\n- one\n[… truncated: 14 of 29 characters of MEMORY.md injected; read the rest with memory_get …]";
        let tail = cut_tail(file, injected).unwrap();
        assert_eq!(tail.from_line, 3);
        assert_eq!(tail.preview, "- two\n- three\n");
        assert_eq!(tail.chars, 14);
    }

    #[test]
    fn a_budget_smaller_than_the_marker_cuts_everything() {
        let tail = cut_tail("- ünïcode\n", "[… truncated: 0 of 10").unwrap();
        assert_eq!((tail.from_line, tail.chars), (1, 10));
    }

    #[test]
    fn a_filtered_injection_has_no_tail_to_show() {
        let file = "<!-- status: superseded -->\n- Never x.\n- Always y.\n";
        let injected = format!(
            "- Always y.{}3 of 40",
            memory_core::logic::bootstrap::TRUNCATION_MARKER
        );
        assert_eq!(cut_tail(file, &injected), None);
    }

    #[test]
    fn the_marker_is_the_one_bootstrap_writes() {
        use memory_core::logic::bootstrap::{plan, Found};
        use memory_core::Budgets;
        let budgets = Budgets {
            max_file_chars: 120,
            max_user_file_chars: 120,
            max_total_chars: 1000,
        };
        let file = "- one fact\n".repeat(40);
        let injected = plan(&[("MEMORY.md", Found::Text(&file))], &budgets).files[0]
            .text
            .clone();
        let tail = cut_tail(&file, &injected).unwrap();
        assert!(
            tail.chars > 0 && tail.preview.starts_with("- one fact"),
            "{tail:?}"
        );
    }

    #[test]
    fn the_page_is_never_written_into_the_workspace() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir(workspace.path().join("memory")).unwrap();
        let inside = workspace.path().join("memory/report.html");
        let error = write_page(&inside, workspace.path(), "<p>").unwrap_err();
        assert!(
            error.to_string().contains("inside the workspace"),
            "{error}"
        );
        assert!(!inside.exists());
        let elsewhere = tempfile::tempdir().unwrap();
        let out = elsewhere.path().join("report.html");
        write_page(&out, workspace.path(), "<p>").unwrap();
        assert_eq!(std::fs::read_to_string(out).unwrap(), "<p>");
    }
}
