//! The replay: the month through the real command line, one process per
//! call, as a host would drive the memory — `inject` on every incoming
//! message, the agent's `search`es, `user set`, `bootstrap` at session start,
//! `flush` before compaction (with the scripted model), `ingest` at session
//! end, the nightly `dream` — each call with `--now` at its moment and, in a
//! repository, `--repo` so writes and lane 1 carry its project key.
//!
//! Everything lane 1, bootstrap and search returned is recorded for the
//! scorer. A call that fails is recorded and the month goes on; only a
//! failure of the replay itself (no binary, no git, no disk) stops it.

use super::generate::{rfc3339, Background, Event, Month, Msg, Session, Step, MINUTE};
use super::score::{
    Block, BootstrapObs, InjectObs, Observations, SearchObs, SweepObs, UserSetObs, WriteObs,
};
use anyhow::{bail, Context};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub command: String,
    pub at: String,
    pub status: Option<i32>,
    pub stderr: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    pub wall_seconds: f64,
    pub calls: usize,
    pub calls_by_command: BTreeMap<String, usize>,
    pub seconds_by_command: BTreeMap<String, f64>,
    pub failures: Vec<Failure>,
}

struct Outcome {
    ok: bool,
    stdout: String,
    stderr: String,
}

struct Runner<'a> {
    exe: PathBuf,
    workspace: PathBuf,
    transcripts: PathBuf,
    repos: Vec<PathBuf>,
    forward: &'a [String],
    stats: Stats,
}

impl Runner<'_> {
    /// One CLI call; `model` is a scripted model's reply file.
    fn call(
        &mut self,
        command: &str,
        at: i64,
        repo: Option<usize>,
        model: Option<&Path>,
        args: &[&str],
    ) -> anyhow::Result<Outcome> {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("--workspace")
            .arg(&self.workspace)
            .arg("--now")
            .arg(rfc3339(at))
            .arg("--json")
            .args(self.forward);
        if let Some(r) = repo {
            cmd.arg("--repo").arg(&self.repos[r]);
        }
        if let Some(script) = model {
            cmd.arg("--model")
                .arg(format!("scripted:{}", script.display()));
        }
        cmd.args(args);
        let started = Instant::now();
        let output = cmd
            .output()
            .with_context(|| format!("cannot run {}", self.exe.display()))?;
        let seconds = started.elapsed().as_secs_f64();
        self.stats.calls += 1;
        *self
            .stats
            .calls_by_command
            .entry(command.into())
            .or_default() += 1;
        *self
            .stats
            .seconds_by_command
            .entry(command.into())
            .or_default() += seconds;
        let outcome = Outcome {
            ok: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        // A refused directive is the memory's answer, scored as such.
        if !outcome.ok && command != "user set" {
            self.fail(command, at, output.status.code(), &outcome.stderr);
        }
        Ok(outcome)
    }

    fn fail(&mut self, command: &str, at: i64, status: Option<i32>, stderr: &str) {
        self.stats.failures.push(Failure {
            command: command.into(),
            at: rfc3339(at),
            status,
            stderr: stderr.trim().chars().take(600).collect(),
        });
    }

    /// The JSON a successful call printed (its last line); a call that
    /// printed none is a failure.
    fn json(&mut self, command: &str, at: i64, outcome: &Outcome) -> Option<Value> {
        if !outcome.ok {
            return None;
        }
        let parsed = outcome
            .stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str(l).ok());
        if parsed.is_none() {
            self.fail(
                command,
                at,
                Some(0),
                &format!("no JSON in the output: {}", outcome.stdout.trim()),
            );
        }
        parsed
    }

    #[allow(clippy::too_many_arguments)]
    fn inject(
        &mut self,
        message: &str,
        at: i64,
        session: &Session,
        sender: Option<&str>,
        owner: bool,
        probe: Option<super::score::Probe>,
        obs: &mut Observations,
    ) -> anyhow::Result<()> {
        let mut args = vec!["inject", message, "--channel", &session.channel];
        if let Some(sender) = sender {
            args.extend(["--sender", sender]);
        }
        if owner {
            args.push("--owner");
        }
        let outcome = self.call("inject", at, session.repo, None, &args)?;
        let blocks = self
            .json("inject", at, &outcome)
            .and_then(|v| v["blocks"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .map(|b| Block {
                kind: b["kind"].as_str().unwrap_or_default().into(),
                text: b["text"].as_str().unwrap_or_default().into(),
            })
            .collect();
        obs.injects.push(InjectObs {
            at,
            session: session.id.clone(),
            repo: session.repo,
            probe,
            blocks,
        });
        Ok(())
    }

    fn bootstrap(
        &mut self,
        at: i64,
        repo: Option<usize>,
        obs: &mut Observations,
    ) -> anyhow::Result<()> {
        let outcome = self.call("bootstrap", at, repo, None, &["bootstrap"])?;
        if let Some(v) = self.json("bootstrap", at, &outcome) {
            obs.bootstraps.push(BootstrapObs {
                at,
                text: v["text"].as_str().unwrap_or_default().into(),
            });
        }
        Ok(())
    }

    fn session(&mut self, s: &Session, obs: &mut Observations) -> anyhow::Result<()> {
        let mut lines: Vec<String> = Vec::new();
        for step in &s.steps {
            match step {
                Step::Say(m) => {
                    // Lane 1 runs on every incoming message before the reply.
                    if m.role == "user" {
                        self.inject(&m.text, m.at, s, m.sender.as_deref(), m.owner, m.probe, obs)?;
                    }
                    lines.push(transcript_line(m));
                }
                Step::Search { at, query, probe } => {
                    let outcome = self.call("search", *at, s.repo, None, &["search", query])?;
                    let snippets = self
                        .json("search", *at, &outcome)
                        .and_then(|v| v["hits"].as_array().cloned())
                        .unwrap_or_default()
                        .iter()
                        .map(|h| h["snippet"].as_str().unwrap_or_default().to_string())
                        .collect();
                    obs.searches.push(SearchObs {
                        at: *at,
                        query: query.clone(),
                        probe: *probe,
                        snippets,
                    });
                }
                Step::UserSet {
                    at,
                    directive,
                    pref,
                    step,
                } => {
                    let outcome =
                        self.call("user set", *at, s.repo, None, &["user", "set", directive])?;
                    let refused = if outcome.ok {
                        None
                    } else if outcome.stderr.contains("invalid-input") {
                        Some(outcome.stderr.trim().to_string())
                    } else {
                        self.fail("user set", *at, None, &outcome.stderr);
                        Some(outcome.stderr.trim().to_string())
                    };
                    obs.user_sets.push(UserSetObs {
                        at: *at,
                        pref: *pref,
                        step: *step,
                        directive: directive.clone(),
                        refused,
                    });
                }
                Step::Bootstrap { at } => self.bootstrap(*at, s.repo, obs)?,
                Step::Flush { at, notes } => {
                    let transcript = self.transcripts.join(format!("{}.flush.jsonl", s.id));
                    std::fs::write(&transcript, lines.join("\n") + "\n")?;
                    let script = self.transcripts.join(format!("{}.model.jsonl", s.id));
                    let reply: Vec<String> = notes.iter().map(|n| format!("- {n}")).collect();
                    std::fs::write(
                        &script,
                        json!({ "text": reply.join("\n") }).to_string() + "\n",
                    )?;
                    let path = transcript.display().to_string();
                    let outcome = self.call(
                        "flush",
                        *at,
                        s.repo,
                        Some(&script),
                        &[
                            "flush",
                            "--transcript",
                            &path,
                            "--session",
                            &s.id,
                            "--tokens",
                            "190000",
                        ],
                    )?;
                    if let Some(v) = self.json("flush", *at, &outcome) {
                        obs.writes.push(WriteObs {
                            at: *at,
                            session: s.id.clone(),
                            kind: "flush".into(),
                            written: v["written"]["lines"]
                                .as_array()
                                .map_or(0, |l| l.len() as u64),
                            class: v["written"]["source_class"].as_str().map(String::from),
                            skipped: (!v["written"].is_object())
                                .then(|| v["reason"].as_str().unwrap_or_default().to_string()),
                        });
                    }
                }
            }
        }
        let transcript = self.transcripts.join(format!("{}.jsonl", s.id));
        std::fs::write(&transcript, lines.join("\n") + "\n")?;
        let path = transcript.display().to_string();
        let mut args = vec!["ingest", "--transcript", &path, "--session", &s.id];
        // A group chat the owner took no part in is nobody's the agent answers to.
        if !s.owner_present {
            args.push("--not-owner");
        }
        let outcome = self.call("ingest", s.end, s.repo, None, &args)?;
        self.ingested(&outcome, s.end, &s.id, "interactive", obs);
        Ok(())
    }

    fn ingested(
        &mut self,
        outcome: &Outcome,
        at: i64,
        session: &str,
        kind: &str,
        obs: &mut Observations,
    ) {
        if let Some(v) = self.json("ingest", at, outcome) {
            obs.writes.push(WriteObs {
                at,
                session: session.into(),
                kind: kind.into(),
                written: v["messages_written"].as_u64().unwrap_or(0),
                class: None,
                skipped: v["skipped"].as_str().map(String::from),
            });
        }
    }

    fn background(&mut self, b: &Background, obs: &mut Observations) -> anyhow::Result<()> {
        let lines: Vec<String> = b.messages.iter().map(transcript_line).collect();
        let transcript = self.transcripts.join(format!("{}.jsonl", b.id));
        std::fs::write(&transcript, lines.join("\n") + "\n")?;
        let path = transcript.display().to_string();
        let at = b.at + MINUTE;
        let outcome = self.call(
            "ingest",
            at,
            None,
            None,
            &[
                "ingest",
                "--transcript",
                &path,
                "--session",
                &b.id,
                "--session-kind",
                b.kind,
                "--not-owner",
            ],
        )?;
        self.ingested(&outcome, at, &b.id, b.kind, obs);
        Ok(())
    }
}

fn transcript_line(m: &Msg) -> String {
    let mut line = json!({
        "role": m.role,
        "text": m.text,
        "owner": m.owner,
        "timestamp": rfc3339(m.at),
    });
    if let Some(sender) = &m.sender {
        line["sender"] = json!(sender);
    }
    if let Some(channel) = &m.channel {
        line["channel"] = json!(channel);
    }
    if let Some(origin) = m.origin {
        line["origin"] = json!(origin);
    }
    line.to_string()
}

fn git(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git")
        .args(args)
        .status()
        .context("cannot run git (needed to make the month's repositories)")?;
    if !status.success() {
        bail!("git {} failed", args.join(" "));
    }
    Ok(())
}

/// Replays `month` in `dir` (which must not hold a workspace yet), calling
/// `progress` at the start of each day with (day, calls so far).
pub fn replay(
    month: &Month,
    dir: &Path,
    forward: &[String],
    mut progress: impl FnMut(usize, &Stats),
) -> anyhow::Result<(Observations, Stats)> {
    let started = Instant::now();
    let workspace = dir.join("workspace");
    if workspace.exists() {
        bail!(
            "{} already holds a workspace; give a new directory",
            dir.display()
        );
    }
    std::fs::create_dir_all(&workspace)?;
    std::fs::write(workspace.join("AGENTS.md"), &month.fixture.agents_md)?;
    std::fs::write(workspace.join("MEMORY.md"), &month.fixture.memory_md)?;
    let transcripts = dir.join("transcripts");
    std::fs::create_dir_all(&transcripts)?;
    let mut repos = Vec::new();
    for repo in &month.persona.repos {
        let path = dir.join("repos").join(&repo.name);
        std::fs::create_dir_all(&path)?;
        let p = path.display().to_string();
        git(&["init", "-q", &p])?;
        git(&["-C", &p, "remote", "add", "origin", &repo.url()])?;
        repos.push(path);
    }
    let mut runner = Runner {
        exe: std::env::current_exe().context("cannot find this program's path")?,
        workspace: workspace.clone(),
        transcripts,
        repos,
        forward,
        stats: Stats::default(),
    };
    let mut obs = Observations {
        fixture_memory_md: month.fixture.memory_md.clone(),
        ..Default::default()
    };
    let mut day_seen = None;
    for event in &month.events {
        let day = match event {
            Event::Session(s) => Some(s.day),
            Event::Background(b) => Some(b.day),
            Event::Sweep { day, .. } => Some(*day),
            Event::Final { .. } => None,
        };
        if day.is_some() && day != day_seen {
            day_seen = day;
            runner.stats.wall_seconds = started.elapsed().as_secs_f64();
            progress(day.unwrap_or_default(), &runner.stats);
        }
        match event {
            Event::Session(s) => runner.session(s, &mut obs)?,
            Event::Background(b) => runner.background(b, &mut obs)?,
            Event::Sweep { day, at } => {
                let outcome = runner.call("dream", *at, None, None, &["dream"])?;
                let added = runner
                    .json("dream", *at, &outcome)
                    .and_then(|v| v["added"].as_array().map(Vec::len))
                    .unwrap_or(0);
                obs.sweeps.push(SweepObs { day: *day, added });
            }
            Event::Final { at, probes } => {
                runner.bootstrap(*at, None, &mut obs)?;
                let outcome = runner.call("user show", *at, None, None, &["user", "show"])?;
                if let Some(v) = runner.json("user show", *at, &outcome) {
                    obs.final_directives = v["directives"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .iter()
                        .map(|d| {
                            (
                                d["text"].as_str().unwrap_or_default().to_string(),
                                d["status"].as_str().unwrap_or_default().to_string(),
                            )
                        })
                        .collect();
                }
                let owner = month.persona.owner.clone();
                let channel = month.persona.chat_channel.clone();
                for (i, (pref, message)) in probes.iter().enumerate() {
                    let session = Session {
                        id: "final".into(),
                        day: month.days,
                        kind: "chat",
                        repo: None,
                        channel: channel.clone(),
                        owner_present: true,
                        start: *at,
                        end: *at,
                        steps: Vec::new(),
                    };
                    let step = month.preferences[*pref].steps.len().saturating_sub(1);
                    runner.inject(
                        message,
                        at + (i as i64 + 1) * MINUTE,
                        &session,
                        Some(&owner),
                        true,
                        Some(super::score::Probe::Preference { pref: *pref, step }),
                        &mut obs,
                    )?;
                }
            }
        }
    }
    obs.memory_md = std::fs::read_to_string(workspace.join("MEMORY.md")).unwrap_or_default();
    runner.stats.wall_seconds = started.elapsed().as_secs_f64();
    Ok((obs, runner.stats))
}
