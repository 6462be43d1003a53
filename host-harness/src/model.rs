//! Language models the harness lends to the component: none; scripted
//! (replies read from a file, for tests and scenarios); and any
//! OpenAI-compatible chat-completions endpoint over HTTP or HTTPS (a local
//! Ollama or LM Studio, a cloud API). Every call runs in a worker thread under the host's own
//! deadline: an epoch deadline does not interrupt a blocking import.

use crate::http::{Client, HttpFailure};
use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
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
                let api_key = crate::http::api_key(api_key_env.as_deref())?;
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

/// An OpenAI-compatible chat-completions endpoint (`crate::http`).
struct OpenAi {
    client: Client,
    model: String,
    /// Whether the endpoint takes `max_completion_tokens` (OpenAI's newer
    /// models refuse `max_tokens`) rather than `max_tokens` (most local
    /// servers); learnt from a refusal, then kept.
    completion_tokens: AtomicBool,
}

impl OpenAi {
    fn new(url: &str, model: &str, api_key: Option<String>) -> anyhow::Result<OpenAi> {
        let client = Client::new(url, api_key)?;
        // OpenAI's own API takes `max_completion_tokens` for every model.
        let openai = client.base().contains("://api.openai.com");
        Ok(OpenAi {
            client,
            model: model.to_string(),
            completion_tokens: AtomicBool::new(openai),
        })
    }

    /// Posts the request, and once more with the other token-limit
    /// parameter when the endpoint refuses the one sent by name.
    fn post(
        &self,
        body: &mut Value,
        max_tokens: u32,
        timeout: Duration,
    ) -> Result<Value, ModelFailure> {
        let started = std::time::Instant::now();
        let mut switched = false;
        loop {
            let (sent, other) = token_limit_names(self.completion_tokens.load(Ordering::Relaxed));
            if let Some(map) = body.as_object_mut() {
                map.remove(other);
                map.insert(sent.into(), json!(max_tokens));
            }
            let left = timeout.saturating_sub(started.elapsed());
            let reply = self
                .client
                .post_json("chat/completions", body, left)
                .map_err(model_failure)?;
            if !switched && reply.status == 400 && refuses_parameter(&reply.body, sent, other) {
                // The other one from now on (set, not toggled: a late
                // refusal of an abandoned call must not switch it back).
                self.completion_tokens
                    .store(sent == "max_tokens", Ordering::Relaxed);
                switched = true;
                continue;
            }
            return reply.json().map_err(model_failure);
        }
    }
}

/// The token-limit parameter to send and the one to leave out.
fn token_limit_names(completion_tokens: bool) -> (&'static str, &'static str) {
    if completion_tokens {
        ("max_completion_tokens", "max_tokens")
    } else {
        ("max_tokens", "max_completion_tokens")
    }
}

/// Whether an error reply says the endpoint does not take the parameter
/// sent and names the other (OpenAI: "Unsupported parameter: 'max_tokens'
/// is not supported with this model. Use 'max_completion_tokens' instead.").
fn refuses_parameter(body: &str, sent: &str, other: &str) -> bool {
    body.contains(sent) && body.contains(other)
        || body.contains(sent) && body.to_ascii_lowercase().contains("unsupported")
}

fn model_failure(failure: HttpFailure) -> ModelFailure {
    match failure {
        HttpFailure::Unavailable(m) => ModelFailure::Unavailable(m),
        HttpFailure::Timeout(m) => ModelFailure::Timeout(m),
        HttpFailure::Failed(m) => ModelFailure::Failed(m),
    }
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
        let mut body = json!({"model": self.model, "messages": messages, "stream": false});
        if !tools.is_empty() {
            body["tools"] = tools
                .iter()
                .map(|t| {
                    let schema: Value = serde_json::from_str(&t.parameters_schema).unwrap_or(json!({"type": "object"}));
                    json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": schema}})
                })
                .collect();
        }
        let value = self.post(&mut body, max_tokens, timeout)?;
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
    use crate::http::fake::{self, Answer};

    /// A fake endpoint answering `answers` in order.
    fn fake_server(answers: Vec<Answer>) -> (String, mpsc::Receiver<String>) {
        let server = fake::http("127.0.0.1:0", answers);
        (server.url, server.requests)
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
        let (url, request) = fake_server(vec![Answer::chunked(
            r#"{"choices":[{"message":{"content":"- a fact"}}]}"#,
            16,
        )]);
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
        let (url, _) = fake_server(vec![Answer::json(200, "{}").after(Duration::from_secs(3))]);
        let started = std::time::Instant::now();
        let error = lender(url)
            .complete(vec![ChatMessage::new("user", "hi")], Vec::new(), 64, 200)
            .unwrap_err();
        assert!(matches!(error, ModelFailure::Timeout(_)), "{error:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn http_errors_and_nonsense_are_failures() {
        let (url, _) = fake_server(vec![Answer::json(500, "oops")]);
        assert!(matches!(
            lender(url).complete(vec![], Vec::new(), 8, 2_000),
            Err(ModelFailure::Failed(_))
        ));
        let (url, _) = fake_server(vec![Answer::json(200, "not json")]);
        assert!(matches!(
            lender(url).complete(vec![], Vec::new(), 8, 2_000),
            Err(ModelFailure::Failed(_))
        ));
        assert!(ModelLender::new(
            &ModelChoice::OpenAi {
                url: "ftp://api.example/v1".into(),
                model: "m".into(),
                api_key_env: None
            },
            Duration::from_secs(1)
        )
        .is_err());
    }

    #[test]
    fn tool_calls_go_out_and_come_back() {
        let (url, request) = fake_server(vec![Answer::json(
            200,
            r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"memory_search","arguments":"{\"query\":\"x\"}"}}]}}]}"#,
        )]);
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

    const REFUSAL: &str = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens"}}"#;
    const OK: &str = r#"{"choices":[{"message":{"content":"ok"}}]}"#;

    #[test]
    fn a_refused_max_tokens_goes_again_as_max_completion_tokens_and_stays() {
        let (url, requests) = fake_server(vec![
            Answer::json(400, REFUSAL),
            Answer::json(200, OK),
            Answer::json(200, OK),
        ]);
        let lender = lender(url);
        for _ in 0..2 {
            let reply =
                lender.complete(vec![ChatMessage::new("user", "hi")], Vec::new(), 64, 5_000);
            assert_eq!(reply.unwrap().text, "ok");
        }
        let sent: Vec<String> = (0..3).map(|_| requests.recv().unwrap()).collect();
        assert!(sent[0].contains(r#""max_tokens":64"#), "{}", sent[0]);
        assert!(!sent[0].contains("max_completion_tokens"));
        for later in &sent[1..] {
            assert!(later.contains(r#""max_completion_tokens":64"#), "{later}");
            assert!(!later.contains(r#""max_tokens""#), "{later}");
        }
    }

    #[test]
    fn another_bad_request_is_not_sent_again() {
        let (url, requests) = fake_server(vec![
            Answer::json(400, r#"{"error":{"message":"model 'tiny' not found"}}"#),
            Answer::json(200, OK),
        ]);
        let error = lender(url)
            .complete(vec![ChatMessage::new("user", "hi")], Vec::new(), 64, 5_000)
            .unwrap_err();
        assert!(
            matches!(&error, ModelFailure::Failed(m) if m.contains("not found")),
            "{error:?}"
        );
        requests.recv().unwrap();
        assert!(requests.recv_timeout(Duration::from_millis(300)).is_err());
    }

    #[test]
    fn openai_itself_is_sent_max_completion_tokens_first() {
        let (parameter, _) = token_limit_names(true);
        assert_eq!(parameter, "max_completion_tokens");
        let openai = OpenAi::new("https://api.openai.com/v1", "gpt-5-mini", None).unwrap();
        assert!(openai.completion_tokens.load(Ordering::Relaxed));
        let local = OpenAi::new("http://127.0.0.1:11434/v1", "llama3", None).unwrap();
        assert!(!local.completion_tokens.load(Ordering::Relaxed));
    }

    #[test]
    fn a_model_over_https_answers() {
        let (server, ca) = fake::https(vec![Answer::json(200, OK)]);
        let roots =
            ureq::tls::RootCerts::new_with_certs(&[
                ureq::tls::Certificate::from_der(&ca.der).to_owned()
            ]);
        let openai = OpenAi {
            client: Client::with_roots(&server.url, None, roots).unwrap(),
            model: "tiny".into(),
            completion_tokens: AtomicBool::new(false),
        };
        let reply = openai
            .complete(
                &[ChatMessage::new("user", "hi")],
                &[],
                16,
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!(reply.text, "ok");
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
