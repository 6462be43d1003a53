//! WIT enum cases by the names the CLI's flags write them with (the WIT's
//! own kebab-case names).

use crate::host::{wit, wit_dream, wit_inject, wit_write};
use anyhow::bail;

pub fn parse_origin(origin: &str) -> anyhow::Result<wit_write::ContentOrigin> {
    use wit_write::ContentOrigin as O;
    Ok(match origin {
        "sender-message" => O::SenderMessage,
        "agent-derived" => O::AgentDerived,
        "web-page" => O::WebPage,
        "tool-output" => O::ToolOutput,
        "participant" => O::Participant,
        "scaffolding" => O::Scaffolding,
        "unknown-external" => O::UnknownExternal,
        other => bail!("unknown origin {other:?}"),
    })
}

pub fn parse_session_kind(kind: &str) -> anyhow::Result<wit::SessionKind> {
    Ok(match kind {
        "interactive" => wit::SessionKind::Interactive,
        "cron" => wit::SessionKind::Cron,
        "heartbeat" => wit::SessionKind::Heartbeat,
        "subagent" => wit::SessionKind::Subagent,
        other => {
            bail!("unknown session kind {other:?}; use interactive, cron, heartbeat or subagent")
        }
    })
}

pub fn parse_mode(mode: &str) -> anyhow::Result<wit_inject::EscalationMode> {
    Ok(match mode {
        "escalate" => wit_inject::EscalationMode::Escalate,
        "always" => wit_inject::EscalationMode::Always,
        "off" => wit_inject::EscalationMode::Off,
        other => bail!("unknown escalation mode {other:?}; use escalate, always or off"),
    })
}

pub fn parse_source_class(class: &str) -> anyhow::Result<wit::SourceClass> {
    Ok(match class {
        "owner" => wit::SourceClass::Owner,
        "agent" => wit::SourceClass::Agent,
        "untrusted" => wit::SourceClass::Untrusted,
        "system" => wit::SourceClass::System,
        other => bail!("unknown source class {other:?}"),
    })
}

pub fn parse_phase(text: &str) -> anyhow::Result<wit_dream::Phase> {
    Ok(match text {
        "light" => wit_dream::Phase::Light,
        "rem" => wit_dream::Phase::Rem,
        "deep" => wit_dream::Phase::Deep,
        other => bail!("unknown phase {other:?} (light, rem or deep)"),
    })
}
