//! Fake HTTP and HTTPS servers on loopback for the lenders' tests: each
//! answers requests with the replies it is given, in order, and hands
//! back what it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// One scripted answer: raw bytes after the request is read, possibly
/// in several writes with a pause between them.
#[derive(Clone)]
pub struct Answer {
    pub parts: Vec<Vec<u8>>,
    pub delay: Duration,
}

impl Answer {
    /// `200` (or another status) with a JSON body, in one piece.
    pub fn json(status: u16, body: &str) -> Answer {
        Answer {
            parts: vec![format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()],
            delay: Duration::ZERO,
        }
    }

    /// A chunked 200 reply cut into `chunk`-byte chunks, each written
    /// apart (a chunk boundary may fall inside a UTF-8 character).
    pub fn chunked(body: &str, chunk: usize) -> Answer {
        let mut parts = vec![b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec()];
        for piece in body.as_bytes().chunks(chunk) {
            let mut part = format!("{:x}\r\n", piece.len()).into_bytes();
            part.extend_from_slice(piece);
            part.extend_from_slice(b"\r\n");
            parts.push(part);
        }
        parts.push(b"0\r\n\r\n".to_vec());
        Answer {
            parts,
            delay: Duration::ZERO,
        }
    }

    pub fn after(mut self, delay: Duration) -> Answer {
        self.delay = delay;
        self
    }
}

/// A running fake server: its base URL and the requests' bodies (with
/// their request line and headers) as they arrive.
pub struct Server {
    pub url: String,
    pub requests: mpsc::Receiver<String>,
}

/// A plain HTTP server on `address` (`127.0.0.1:0`, `[::1]:0`) answering
/// these, one connection each, then no more.
pub fn http(address: &str, answers: Vec<Answer>) -> Server {
    serve(address, None, scripted(answers))
}

/// A plain HTTP server answering every request with `respond(body)`.
pub fn http_with(address: &str, respond: impl FnMut(&str) -> Answer + Send + 'static) -> Server {
    serve(address, None, always(respond))
}

/// An HTTPS server for `localhost` with a certificate from a fresh CA,
/// answering these; returns the server and the CA to trust.
pub fn https(answers: Vec<Answer>) -> (Server, Ca) {
    let (config, ca) = tls_config();
    (serve_tls(config, scripted(answers)), ca)
}

/// An HTTPS server answering every request with `respond(body)`.
pub fn https_with(respond: impl FnMut(&str) -> Answer + Send + 'static) -> (Server, Ca) {
    let (config, ca) = tls_config();
    (serve_tls(config, always(respond)), ca)
}

/// The CA a fake HTTPS server's certificate is signed by.
pub struct Ca {
    pub der: Vec<u8>,
    /// For `SSL_CERT_FILE`.
    pub pem: String,
}

type Respond = Box<dyn FnMut(&str) -> Option<Answer> + Send>;

fn scripted(answers: Vec<Answer>) -> Respond {
    let mut answers = answers.into_iter();
    Box::new(move |_| answers.next())
}

fn always(mut respond: impl FnMut(&str) -> Answer + Send + 'static) -> Respond {
    Box::new(move |body| Some(respond(body)))
}

/// A server config for `localhost`, signed by a fresh CA, and the CA.
fn tls_config() -> (Arc<rustls::ServerConfig>, Ca) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "memory-harness test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    // Ring, as ureq's client uses; post-quantum key exchange is not what
    // these tests are about.
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    (
        Arc::new(config),
        Ca {
            der: ca.der().to_vec(),
            pem: ca.pem(),
        },
    )
}

fn serve_tls(config: Arc<rustls::ServerConfig>, respond: Respond) -> Server {
    let mut server = serve("127.0.0.1:0", Some(config), respond);
    server.url = server.url.replace("http://127.0.0.1", "https://localhost");
    server
}

fn serve(address: &str, tls: Option<Arc<rustls::ServerConfig>>, mut respond: Respond) -> Server {
    let listener = TcpListener::bind(address).unwrap();
    let local = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || loop {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let received = match &tls {
            None => exchange(stream, &mut respond),
            Some(config) => {
                let connection = rustls::ServerConnection::new(config.clone()).unwrap();
                exchange(rustls::StreamOwned::new(connection, stream), &mut respond)
            }
        };
        match received {
            Some(Some(request)) => {
                let _ = tx.send(request);
            }
            Some(None) => return,
            None => {}
        }
    });
    Server {
        url: format!("http://{local}/v1"),
        requests: rx,
    }
}

/// Reads one request and writes the answer: `Some(Some(request))` when
/// answered, `Some(None)` when there was no answer left to give, `None`
/// when the client went away first.
fn exchange<S: Read + Write>(stream: S, respond: &mut Respond) -> Option<Option<String>> {
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    let body = String::from_utf8_lossy(&body).into_owned();
    let Some(answer) = respond(&body) else {
        return Some(None);
    };
    std::thread::sleep(answer.delay);
    let stream = reader.get_mut();
    for (i, part) in answer.parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        if stream.write_all(part).and_then(|_| stream.flush()).is_err() {
            break;
        }
    }
    Some(Some(head + &body))
}

/// A port nothing listens on.
pub fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
