//! Where `serve` delivers a fired intent: stdout always, then a file (a
//! JSON line, synced) and a command (`sh -c`, the intent on its stdin) when
//! configured; whatever fails is reported with the intent, never lost
//! silently.

use crate::cli::print::due_block;
use anyhow::{bail, Context};
use memory_harness::host::wit_intents;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The longest a `--deliver-command` may take for one intent.
const DELIVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Where `serve` delivers fired intents: stdout always, then the file and
/// the command when configured.
pub struct Delivery {
    pub command: Option<String>,
    pub file: Option<PathBuf>,
    pub zone: jiff::tz::TimeZone,
    pub json: bool,
}

impl Delivery {
    /// Prints the intent, appends it to the file (synced) and hands it to
    /// the command; whatever fails is reported on stderr with the intent,
    /// so it is never lost silently.
    pub fn deliver(&self, intent: &wit_intents::Intent, fired_at: i64) {
        use memory_harness::clock::format_local;
        let block = due_block(intent);
        let record = serde_json::to_string(&Delivered {
            id: intent.id,
            text: &intent.text,
            due_at: intent.due_at_ms.map(|ms| format_local(ms, &self.zone)),
            fired_at: format_local(fired_at, &self.zone),
            block: &block,
        })
        .expect("a delivery serialises");
        // A closed stdout must not lose the delivery to the file and the
        // command (the intent has already spent its fire).
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", if self.json { &record } else { &block });
        let _ = out.flush();
        drop(out);
        let mut kept = false;
        if let Some(path) = &self.file {
            match append_synced(path, &record) {
                Ok(()) => kept = true,
                Err(error) => eprintln!(
                    "memory-harness serve: cannot append intent {} to {}: {error:#}",
                    intent.id,
                    path.display()
                ),
            }
        }
        if let Some(command) = &self.command {
            if let Err(error) = run_delivery_command(command, &record) {
                let fallback = match (&self.file, kept) {
                    (Some(path), true) => format!("it is in {}", path.display()),
                    _ => format!("the intent: {record}"),
                };
                eprintln!(
                    "memory-harness serve: delivering intent {} to {command:?} failed: {error:#}; {fallback}",
                    intent.id
                );
            }
        } else if self.file.is_some() && !kept {
            eprintln!("memory-harness serve: the intent: {record}");
        }
    }
}

/// A fired intent as `serve` hands it on: one JSON object.
#[derive(serde::Serialize)]
struct Delivered<'a> {
    id: i64,
    text: &'a str,
    /// RFC 3339 with the local offset at that time.
    due_at: Option<String>,
    fired_at: String,
    /// What `serve` printed for it.
    block: &'a str,
}

/// Appends one line to `path` and syncs it (and, for a new file, its
/// directory) to disk.
fn append_synced(path: &Path, line: &str) -> anyhow::Result<()> {
    let existed = path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())?;
    file.sync_all()?;
    if !existed {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Runs `sh -c COMMAND` with `record` and a newline on its stdin; its
/// stdout goes to serve's stderr, so serve's stdout stays the deliveries.
fn run_delivery_command(command: &str, record: &str) -> anyhow::Result<()> {
    use std::os::fd::AsFd;
    use std::process::{Command, Stdio};
    let stdout = std::io::stderr().as_fd().try_clone_to_owned()?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(stdout))
        .spawn()
        .context("cannot start sh")?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    match stdin.write_all(format!("{record}\n").as_bytes()) {
        // A command that does not read its input is its own business.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e).context("cannot write to its stdin");
        }
        _ => {}
    }
    drop(stdin);
    let deadline = std::time::Instant::now() + DELIVER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "it did not finish within {} s and was stopped",
                DELIVER_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    if !status.success() {
        bail!("{status}");
    }
    Ok(())
}
