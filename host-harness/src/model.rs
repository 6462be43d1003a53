//! Language models the harness lends to the component: none; scripted
//! (replies read from a file, for tests and scenarios); and any
//! OpenAI-compatible chat-completions endpoint over HTTP (a local Ollama or
//! LM Studio). Every call runs in a worker thread under the host's own
//! deadline: an epoch deadline does not interrupt a blocking import.

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    None,
    /// Replies from a JSONL file, in order (see `Scripted`).
    Scripted(PathBuf),
    /// `POST {url}/chat/completions`.
    OpenAi {
        url: String,
        model: String,
        api_key_env: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFailure {
    Unavailable(String),
    Timeout(String),
    Failed(String),
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
    /// For `tool` messages: the call answered.
    pub tool_call_id: Option<String>,
    /// For `assistant` messages: the calls the model made.
    pub tool_calls: Vec<ToolCall>,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> ChatMessage {
        ChatMessage {
            role: role.into(),
            content: content.into(),
            tool_call_id: None,
            tool_calls: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// JSON text of the arguments object.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema text.
    pub parameters_schema: String,
}

/// A model's answer: text, tool calls, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
}

trait Backend: Send + Sync {
    fn complete(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSpec],
        max_tokens: u32,
        timeout: Duration,
    ) -> Result<Reply, ModelFailure>;
}

/// A model behind the host's deadline.
pub struct ModelLender {
    backend: Option<Arc<dyn Backend>>,
    /// Every call the component made, answered or not (tests assert that
    /// lane 1 makes none).
    calls: std::sync::atomic::AtomicU64,
    /// The longest any call may take, whatever the component asks.
    cap: Duration,
}

impl ModelLender {
    pub fn new(choice: &ModelChoice, cap: Duration) -> anyhow::Result<ModelLender> {
        let backend: Option<Arc<dyn Backend>> = match choice {
            ModelChoice::None => None,
            ModelChoice::Scripted(path) => Some(Arc::new(Scripted::load(path)?)),
            ModelChoice::OpenAi {
                url,
                model,
                api_key_env,
            } => {
                let api_key = match api_key_env {
                    Some(var) => Some(
                        std::env::var(var)
                            .with_context(|| format!("the API key variable {var} is not set"))?,
                    ),
                    None => None,
                };
                Some(Arc::new(OpenAi::new(url, model, api_key)?))
            }
        };
        Ok(ModelLender {
            backend,
            cap,
            calls: Default::default(),
        })
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn complete(
        &self,
        messages: Vec<ChatMessage>,
        tools: Vec<ToolSpec>,
        max_tokens: u32,
        timeout_ms: u32,
    ) -> Result<Reply, ModelFailure> {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(backend) = self.backend.clone() else {
            return Err(ModelFailure::Unavailable(
                "no language model is configured".into(),
            ));
        };
        let timeout = Duration::from_millis(timeout_ms.max(1) as u64).min(self.cap);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(backend.complete(&messages, &tools, max_tokens, timeout));
        });
        match rx.recv_timeout(timeout) {
            Ok(answer) => answer,
            Err(_) => Err(ModelFailure::Timeout(format!(
                "no answer within {} ms",
                timeout.as_millis()
            ))),
        }
    }
}

/// One scripted reply: `{"text": "..."}`, `{"tool_calls": [{"name": "...", "arguments": {...}}]}`
/// (with or without text), or `{"error": "timeout"|"failed"|"unavailable", "message": "..."}`;
/// optionally with `"delay_ms": N` before it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedReply {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<Value>>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// While "thinking", append `append_text` to this file: an editor saving
    /// the file during the call (for write-safety scenarios).
    #[serde(default)]
    pub append_to: Option<PathBuf>,
    #[serde(default)]
    pub append_text: Option<String>,
}

struct Scripted {
    replies: Mutex<VecDeque<ScriptedReply>>,
}

impl Scripted {
    fn load(path: &PathBuf) -> anyhow::Result<Scripted> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the model script {}", path.display()))?;
        let mut replies = VecDeque::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let reply: ScriptedReply = serde_json::from_str(line).with_context(|| {
                format!("{} line {}: not a scripted reply", path.display(), n + 1)
            })?;
            if (reply.text.is_some() || reply.tool_calls.is_some()) == reply.error.is_some() {
                bail!(
                    "{} line {}: give `text` and/or `tool_calls`, or `error`",
                    path.display(),
                    n + 1
                );
            }
            replies.push_back(reply);
        }
        Ok(Scripted {
            replies: Mutex::new(replies),
        })
    }
}

impl Backend for Scripted {
    fn complete(
        &self,
        _: &[ChatMessage],
        _: &[ToolSpec],
        _: u32,
        _: Duration,
    ) -> Result<Reply, ModelFailure> {
        let next = self
            .replies
            .lock()
            .map_err(|_| ModelFailure::Failed("script poisoned".into()))?
            .pop_front();
        let Some(reply) = next else {
            return Err(ModelFailure::Failed(
                "the model script has no more replies".into(),
            ));
        };
        if let Some(ms) = reply.delay_ms {
            std::thread::sleep(Duration::from_millis(ms));
        }
        if let Some(path) = &reply.append_to {
            let text = reply.append_text.as_deref().unwrap_or("");
            let appended = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
            if let Err(e) = appended {
                return Err(ModelFailure::Failed(format!(
                    "the script could not append to {}: {e}",
                    path.display()
                )));
            }
        }
        let message = reply
            .message
            .clone()
            .unwrap_or_else(|| "scripted failure".into());
        match reply.error.as_deref() {
            None => Ok(Reply {
                text: reply.text.unwrap_or_default(),
                tool_calls: reply
                    .tool_calls
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, call)| ToolCall {
                        id: call["id"]
                            .as_str()
                            .map_or_else(|| format!("call-{i}"), str::to_string),
                        name: call["name"].as_str().unwrap_or_default().to_string(),
                        arguments: match &call["arguments"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        },
                    })
                    .collect(),
            }),
            Some("timeout") => Err(ModelFailure::Timeout(message)),
            Some("unavailable") => Err(ModelFailure::Unavailable(message)),
            Some(_) => Err(ModelFailure::Failed(message)),
        }
    }
}

/// An OpenAI-compatible chat-completions endpoint over plain HTTP/1.1.
struct OpenAi {
    host: String,
    port: u16,
    path: String,
    model: String,
    api_key: Option<String>,
}

impl OpenAi {
    fn new(url: &str, model: &str, api_key: Option<String>) -> anyhow::Result<OpenAi> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!("only http:// endpoints are supported ({url}); put a TLS-terminating proxy on loopback in front of https ones");
        };
        let (authority, base) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse().with_context(|| format!("bad port in {url}"))?,
            ),
            None => (authority.to_string(), 80),
        };
        let base = base.trim_end_matches('/');
        let path = if base.is_empty() {
            "/chat/completions".to_string()
        } else {
            format!("/{base}/chat/completions")
        };
        Ok(OpenAi {
            host,
            port,
            path,
            model: model.to_string(),
            api_key,
        })
    }

    fn post(&self, body: &str, timeout: Duration) -> std::io::Result<(u16, String)> {
        use std::net::ToSocketAddrs;
        let address = (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other("the host name resolves to nothing"))?;
        let mut stream = std::net::TcpStream::connect_timeout(&address, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let auth = self
            .api_key
            .as_ref()
            .map(|k| format!("Authorization: Bearer {k}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n{body}",
            self.path,
            self.host,
            self.port,
            body.len()
        )?;
        let mut raw = Vec::new();
        stream.take(16 * 1024 * 1024).read_to_end(&mut raw)?;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, payload) = text
            .split_once("\r\n\r\n")
            .ok_or_else(|| std::io::Error::other("no HTTP header"))?;
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other("no HTTP status"))?;
        let chunked = head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked");
        Ok((
            status,
            if chunked {
                dechunk(payload)
            } else {
                payload.to_string()
            },
        ))
    }
}

fn dechunk(payload: &str) -> String {
    let mut out = String::new();
    let mut rest = payload;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

impl Backend for OpenAi {
    fn complete(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSpec],
        max_tokens: u32,
        timeout: Duration,
    ) -> Result<Reply, ModelFailure> {
        let messages: Vec<Value> = messages
            .iter()
            .map(|m| {
                let mut v = json!({"role": m.role, "content": m.content});
                if let Some(id) = &m.tool_call_id {
                    v["tool_call_id"] = json!(id);
                }
                if !m.tool_calls.is_empty() {
                    v["tool_calls"] = m
                        .tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                        .collect();
                }
                v
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages, "max_tokens": max_tokens, "stream": false});
        if !tools.is_empty() {
            body["tools"] = tools
                .iter()
                .map(|t| {
                    let schema: Value = serde_json::from_str(&t.parameters_schema).unwrap_or(json!({"type": "object"}));
                    json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": schema}})
                })
                .collect();
        }
        let (status, payload) =
            self.post(&body.to_string(), timeout)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                        ModelFailure::Timeout(e.to_string())
                    }
                    std::io::ErrorKind::ConnectionRefused => {
                        ModelFailure::Unavailable(e.to_string())
                    }
                    _ => ModelFailure::Failed(e.to_string()),
                })?;
        if status != 200 {
            return Err(ModelFailure::Failed(format!(
                "HTTP {status}: {}",
                payload.chars().take(300).collect::<String>()
            )));
        }
        let value: Value = serde_json::from_str(&payload)
            .map_err(|e| ModelFailure::Failed(format!("not JSON: {e}")))?;
        let message = &value["choices"][0]["message"];
        let tool_calls: Vec<ToolCall> = message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c["id"].as_str().unwrap_or_default().to_string(),
                        name: c["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        arguments: c["function"]["arguments"]
                            .as_str()
                            .unwrap_or("{}")
                            .to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        match message["content"].as_str() {
            Some(text) => Ok(Reply {
                text: text.to_string(),
                tool_calls,
            }),
            None if !tool_calls.is_empty() => Ok(Reply {
                text: String::new(),
                tool_calls,
            }),
            None => Err(ModelFailure::Failed(
                "no choices[0].message.content in the answer".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-request fake OpenAI server on loopback; returns its URL and the
    /// request it received.
    fn fake_server(response: &'static str, delay: Duration) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            // Read the whole request (headers, then Content-Length bytes):
            // TCP may deliver it in several pieces.
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().to_string())
                        })
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break;
                    }
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&request).into_owned());
            std::thread::sleep(delay);
            let _ = stream.write_all(response.as_bytes());
        });
        (url, rx)
    }

    fn lender(url: String) -> ModelLender {
        ModelLender::new(
            &ModelChoice::OpenAi {
                url,
                model: "tiny".into(),
                api_key_env: None,
            },
            Duration::from_secs(10),
        )
        .unwrap()
    }

    #[test]
    fn openai_compatible_endpoint_answers() {
        let (url, request) = fake_server(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
             30\r\n{\"choices\":[{\"message\":{\"content\":\"- a fact\"}}]}\r\n0\r\n\r\n",
            Duration::ZERO,
        );
        let reply = lender(url)
            .complete(vec![ChatMessage::new("user", "hi")], Vec::new(), 64, 5_000)
            .unwrap();
        assert_eq!(reply.text, "- a fact");
        let seen = request.recv().unwrap();
        assert!(
            seen.starts_with("POST /v1/chat/completions HTTP/1.1"),
            "{seen}"
        );
        assert!(seen.contains("\"model\":\"tiny\""));
    }

    #[test]
    fn a_slow_endpoint_times_out_on_the_host_deadline() {
        let (url, _) = fake_server("HTTP/1.1 200 OK\r\n\r\n{}", Duration::from_secs(3));
        let started = std::time::Instant::now();
        let error = lender(url)
            .complete(vec![ChatMessage::new("user", "hi")], Vec::new(), 64, 200)
            .unwrap_err();
        assert!(matches!(error, ModelFailure::Timeout(_)), "{error:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn http_errors_and_nonsense_are_failures() {
        let (url, _) = fake_server(
            "HTTP/1.1 500 Internal Server Error\r\n\r\noops",
            Duration::ZERO,
        );
        assert!(matches!(
            lender(url).complete(vec![], Vec::new(), 8, 2_000),
            Err(ModelFailure::Failed(_))
        ));
        let (url, _) = fake_server("HTTP/1.1 200 OK\r\n\r\nnot json", Duration::ZERO);
        assert!(matches!(
            lender(url).complete(vec![], Vec::new(), 8, 2_000),
            Err(ModelFailure::Failed(_))
        ));
        assert!(ModelLender::new(
            &ModelChoice::OpenAi {
                url: "https://api.example/v1".into(),
                model: "m".into(),
                api_key_env: None
            },
            Duration::from_secs(1)
        )
        .is_err());
    }

    #[test]
    fn tool_calls_go_out_and_come_back() {
        let (url, request) = fake_server(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n\
             {\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\
             \"function\":{\"name\":\"memory_search\",\"arguments\":\"{\\\"query\\\":\\\"x\\\"}\"}}]}}]}",
            Duration::ZERO,
        );
        let tools = vec![ToolSpec {
            name: "memory_search".into(),
            description: "search".into(),
            parameters_schema: r#"{"type":"object"}"#.into(),
        }];
        let reply = lender(url)
            .complete(vec![ChatMessage::new("user", "hi")], tools, 64, 5_000)
            .unwrap();
        assert_eq!(
            reply.tool_calls,
            vec![ToolCall {
                id: "c1".into(),
                name: "memory_search".into(),
                arguments: r#"{"query":"x"}"#.into()
            }]
        );
        let seen = request.recv().unwrap();
        assert!(seen.contains("\"tools\":[{\"function\""), "{seen}");
    }

    #[test]
    fn scripted_replies_come_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.jsonl");
        std::fs::write(&path, "{\"text\":\"NO_REPLY\"}\n{\"error\":\"timeout\"}\n{\"delay_ms\":500,\"text\":\"late\"}\n").unwrap();
        let lender =
            ModelLender::new(&ModelChoice::Scripted(path), Duration::from_secs(10)).unwrap();
        assert_eq!(
            lender.complete(vec![], Vec::new(), 8, 1_000).unwrap().text,
            "NO_REPLY"
        );
        assert!(matches!(
            lender.complete(vec![], Vec::new(), 8, 1_000),
            Err(ModelFailure::Timeout(_))
        ));
        assert!(
            matches!(
                lender.complete(vec![], Vec::new(), 8, 100),
                Err(ModelFailure::Timeout(_))
            ),
            "the host deadline cuts the delay"
        );
        assert!(
            matches!(
                lender.complete(vec![], Vec::new(), 8, 100),
                Err(ModelFailure::Failed(_))
            ),
            "the script is exhausted"
        );
    }
}
