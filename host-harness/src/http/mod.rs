//! HTTP(S) to the OpenAI-compatible endpoints the harness lends from (a
//! chat model, an embedder): one ureq agent over rustls. Servers are
//! verified against the system's CA store — `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` name another, as for OpenSSL — or, where the system has
//! none, against the Mozilla roots built in. ureq tries every address a
//! name resolves to (IPv6 too), decodes chunked replies and honours
//! `HTTPS_PROXY`/`NO_PROXY`.

use serde_json::Value;
use std::time::Duration;
use ureq::tls::{Certificate, RootCerts, TlsConfig};

/// The largest reply read, in bytes.
const MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;
/// Characters of an error reply quoted in a failure.
const QUOTED_ERROR_CHARS: usize = 300;

/// Why a request got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFailure {
    /// Nothing listens there, or the name does not resolve.
    Unavailable(String),
    /// No answer within the deadline.
    Timeout(String),
    /// Anything else: TLS refused, a broken reply, an error status.
    Failed(String),
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpFailure::Unavailable(m) | HttpFailure::Timeout(m) | HttpFailure::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A reply with its status; only 200 counts as an answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    /// The body as JSON when the status is 200, else the status and the
    /// start of the body as the failure.
    pub fn json(self) -> Result<Value, HttpFailure> {
        if self.status != 200 {
            return Err(HttpFailure::Failed(format!(
                "HTTP {}: {}",
                self.status,
                self.body
                    .chars()
                    .take(QUOTED_ERROR_CHARS)
                    .collect::<String>()
            )));
        }
        serde_json::from_str(&self.body)
            .map_err(|e| HttpFailure::Failed(format!("the answer is not JSON: {e}")))
    }
}

/// One endpoint family (`{base}/chat/completions`, `{base}/embeddings`),
/// with the key it sends.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
    api_key: Option<String>,
}

impl Client {
    /// A client for the base URL (`http://127.0.0.1:11434/v1`,
    /// `https://api.openai.com/v1`), trusting the system's roots.
    pub fn new(base: &str, api_key: Option<String>) -> anyhow::Result<Client> {
        // Read (and any problem with it said) once per process.
        static ROOTS: std::sync::OnceLock<RootCerts> = std::sync::OnceLock::new();
        Client::with_roots(base, api_key, ROOTS.get_or_init(system_roots).clone())
    }

    /// A client trusting exactly these roots (tests: a self-signed CA).
    pub fn with_roots(
        base: &str,
        api_key: Option<String>,
        roots: RootCerts,
    ) -> anyhow::Result<Client> {
        let base = base_url(base)?;
        // A proxy from the environment is for the outside world: a local
        // Ollama or llama.cpp on loopback is reached directly.
        let proxy = if is_loopback(&base) {
            None
        } else {
            ureq::Proxy::try_from_env()
        };
        let config = ureq::Agent::config_builder()
            .proxy(proxy)
            .http_status_as_error(false)
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .user_agent(concat!("memory-harness/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Client {
            agent: config.into(),
            base,
            api_key,
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `POST {base}/{path}` with a JSON body, within `timeout` in all.
    pub fn post_json(
        &self,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Reply, HttpFailure> {
        let url = format!("{}/{}", self.base, path.trim_start_matches('/'));
        let mut request = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Content-Type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string().as_bytes())
            .map_err(|e| failure(&url, e))?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_vec()
            .map_err(|e| failure(&url, e))?;
        // Decoded as a whole: a character split between chunks is whole here.
        let body = String::from_utf8(bytes).map_err(|_| {
            HttpFailure::Failed(format!("{url} answered with text that is not UTF-8"))
        })?;
        Ok(Reply { status, body })
    }
}

/// The API key in the environment variable `var` names, if it names one.
pub fn api_key(var: Option<&str>) -> anyhow::Result<Option<String>> {
    var.map(|var| {
        std::env::var(var).map_err(|_| anyhow::anyhow!("the API key variable {var} is not set"))
    })
    .transpose()
}

/// The base URL checked: `http://` or `https://` with a host, no query.
pub fn base_url(base: &str) -> anyhow::Result<String> {
    let trimmed = base.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| anyhow::anyhow!("{base:?} is not an http:// or https:// URL"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        // Never echoed: the part before `@` may be a key.
        anyhow::bail!(
            "the endpoint URL holds credentials (user:key@…); name the key's variable (apiKeyEnv) instead"
        );
    }
    if authority.is_empty() || rest.contains(['?', '#']) {
        anyhow::bail!(
            "{base:?} needs a host and no query or fragment (e.g. https://api.openai.com/v1)"
        );
    }
    trimmed
        .parse::<ureq::http::Uri>()
        .map_err(|e| anyhow::anyhow!("{base:?} is not a valid URL: {e}"))?;
    Ok(trimmed.to_string())
}

/// Whether the base URL's host is this machine (127.0.0.0/8, ::1,
/// localhost).
fn is_loopback(base: &str) -> bool {
    let Ok(uri) = base.parse::<ureq::http::Uri>() else {
        return false;
    };
    let host = uri
        .host()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The roots servers are checked against: the system's store (or the file
/// and directory `SSL_CERT_FILE`/`SSL_CERT_DIR` name), else the Mozilla
/// roots compiled in.
fn system_roots() -> RootCerts {
    let found = rustls_native_certs::load_native_certs();
    // A file or directory the user named that could not be read is said,
    // not passed over for the built-in roots in silence.
    let named =
        std::env::var_os("SSL_CERT_FILE").is_some() || std::env::var_os("SSL_CERT_DIR").is_some();
    if named {
        for error in &found.errors {
            crate::notes::note(format!("the CA store: {error}"));
        }
    }
    if found.certs.is_empty() {
        return RootCerts::WebPki;
    }
    RootCerts::new_with_certs(
        &found
            .certs
            .iter()
            .map(|c| Certificate::from_der(c.as_ref()).to_owned())
            .collect::<Vec<_>>(),
    )
}

/// A ureq error as a failure the lenders report.
fn failure(url: &str, error: ureq::Error) -> HttpFailure {
    use std::io::ErrorKind;
    match &error {
        ureq::Error::Timeout(_) => HttpFailure::Timeout(format!("{url}: no answer in time")),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
            HttpFailure::Unavailable(format!("{url}: {error}"))
        }
        ureq::Error::Io(io) => match io.kind() {
            ErrorKind::TimedOut | ErrorKind::WouldBlock => {
                HttpFailure::Timeout(format!("{url}: {error}"))
            }
            ErrorKind::ConnectionRefused | ErrorKind::NotFound | ErrorKind::AddrNotAvailable => {
                HttpFailure::Unavailable(format!("{url}: {error}"))
            }
            _ => HttpFailure::Failed(format!("{url}: {error}")),
        },
        ureq::Error::BodyExceedsLimit(limit) => {
            HttpFailure::Failed(format!("{url}: the answer is over {limit} bytes"))
        }
        _ => HttpFailure::Failed(format!("{url}: {error}")),
    }
}

#[cfg(test)]
pub mod fake;

#[cfg(test)]
mod tests {
    use super::fake::{self, Answer};
    use super::*;
    use serde_json::json;

    fn trusting(ca: &[u8]) -> RootCerts {
        RootCerts::new_with_certs(&[Certificate::from_der(ca).to_owned()])
    }

    #[test]
    fn base_urls_are_checked() {
        assert_eq!(
            base_url("http://127.0.0.1:11434/v1/").unwrap(),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(
            base_url("https://[::1]:8443/v1").unwrap(),
            "https://[::1]:8443/v1"
        );
        for bad in [
            "ftp://host/v1",
            "127.0.0.1:11434",
            "https://",
            "http:///v1",
            "https://h/v1?x=1",
            "https://user:sk-secret@h/v1",
        ] {
            assert!(base_url(bad).is_err(), "{bad} accepted");
        }
        let refused = base_url("https://user:sk-secret@h/v1")
            .unwrap_err()
            .to_string();
        assert!(!refused.contains("sk-secret"), "{refused}");
    }

    #[test]
    fn loopback_endpoints_are_told_apart() {
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "http://[::1]:1/v1",
            "https://127.3.2.1/v1",
        ] {
            assert!(is_loopback(local), "{local}");
        }
        for remote in [
            "https://api.openai.com/v1",
            "http://10.0.0.5:11434/v1",
            "http://[2001:db8::1]/v1",
        ] {
            assert!(!is_loopback(remote), "{remote}");
        }
    }

    #[test]
    fn a_json_answer_comes_back_with_the_key_sent() {
        let server = fake::http("127.0.0.1:0", vec![Answer::json(200, r#"{"ok":true}"#)]);
        let client = Client::new(&server.url, Some("sk-test".into())).unwrap();
        let reply = client
            .post_json("chat/completions", &json!({"q": 1}), Duration::from_secs(5))
            .unwrap();
        assert_eq!(reply.json().unwrap(), json!({"ok": true}));
        let request = server.requests.recv().unwrap();
        assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1"));
        assert!(
            request.contains("authorization: Bearer sk-test")
                || request.contains("Authorization: Bearer sk-test")
        );
        assert!(request.ends_with(r#"{"q":1}"#));
    }

    #[test]
    fn ipv6_endpoints_answer() {
        if std::net::TcpListener::bind("[::1]:0").is_err() {
            eprintln!("no IPv6 loopback here; skipped");
            return;
        }
        let server = fake::http("[::1]:0", vec![Answer::json(200, "{}")]);
        assert!(server.url.starts_with("http://[::1]:"));
        let client = Client::new(&server.url, None).unwrap();
        assert_eq!(
            client
                .post_json("embeddings", &json!({}), Duration::from_secs(5))
                .unwrap()
                .status,
            200
        );
    }

    #[test]
    fn a_chunked_reply_split_inside_a_character_is_decoded_whole() {
        let body = r#"{"text":"Grüße — naïve café ✓ 日本語"}"#;
        let server = fake::http("127.0.0.1:0", vec![Answer::chunked(body, 3)]);
        let client = Client::new(&server.url, None).unwrap();
        let reply = client
            .post_json("x", &json!({}), Duration::from_secs(5))
            .unwrap();
        assert_eq!(reply.body, body);
    }

    #[test]
    fn https_with_a_trusted_ca_answers_and_an_unknown_ca_is_refused() {
        let (server, ca) = fake::https(vec![Answer::json(200, r#"{"tls":1}"#)]);
        let client = Client::with_roots(&server.url, None, trusting(&ca.der)).unwrap();
        let reply = client
            .post_json("embeddings", &json!({}), Duration::from_secs(5))
            .unwrap();
        assert_eq!(reply.json().unwrap(), json!({"tls": 1}));

        let (server, _) = fake::https(vec![Answer::json(200, "{}")]);
        let (_, other_ca) = fake::https(vec![]);
        let client = Client::with_roots(&server.url, None, trusting(&other_ca.der)).unwrap();
        match client.post_json("embeddings", &json!({}), Duration::from_secs(5)) {
            Err(HttpFailure::Failed(m)) => assert!(m.to_lowercase().contains("cert"), "{m}"),
            other => panic!("an unknown CA was accepted: {other:?}"),
        }
    }

    #[test]
    fn failures_are_told_apart() {
        let refused = Client::new(
            &format!("http://127.0.0.1:{}/v1", fake::closed_port()),
            None,
        )
        .unwrap()
        .post_json("x", &json!({}), Duration::from_secs(5));
        assert!(
            matches!(refused, Err(HttpFailure::Unavailable(_))),
            "{refused:?}"
        );

        let server = fake::http(
            "127.0.0.1:0",
            vec![Answer::json(200, "{}").after(Duration::from_millis(800))],
        );
        let slow = Client::new(&server.url, None).unwrap().post_json(
            "x",
            &json!({}),
            Duration::from_millis(200),
        );
        assert!(matches!(slow, Err(HttpFailure::Timeout(_))), "{slow:?}");

        let server = fake::http("127.0.0.1:0", vec![Answer::json(500, "overloaded")]);
        let status = Client::new(&server.url, None)
            .unwrap()
            .post_json("x", &json!({}), Duration::from_secs(5))
            .unwrap()
            .json();
        assert_eq!(
            status,
            Err(HttpFailure::Failed("HTTP 500: overloaded".into()))
        );

        let server = fake::http("127.0.0.1:0", vec![Answer::json(200, "<html>")]);
        let nonsense = Client::new(&server.url, None)
            .unwrap()
            .post_json("x", &json!({}), Duration::from_secs(5))
            .unwrap()
            .json();
        assert!(matches!(nonsense, Err(HttpFailure::Failed(m)) if m.contains("not JSON")));
    }
}
