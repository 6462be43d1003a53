//! `report --serve`: the review page live on a loopback port. Each request
//! gathers the page afresh (opening the workspace only for that moment, so
//! sweeps and other commands run in between) and the page reloads itself.
//!
//! Memory is private: the server binds loopback addresses only, answers only
//! `GET /`, and refuses a request whose `Host` is not the loopback address
//! it listens on — a web page elsewhere cannot read it by pointing a DNS name
//! at 127.0.0.1 (DNS rebinding).

use super::html::CONTENT_SECURITY_POLICY;
use anyhow::{bail, Context};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The address `--serve` listens on when given none.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";
/// Longest request head read.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a connection may take to send its request head: one at a time
/// is served, so a silent or trickling client must not hold the page up.
const HEAD_DEADLINE: Duration = Duration::from_secs(2);
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves `--serve`'s address, refusing anything but loopback.
pub fn loopback_addr(text: &str) -> anyhow::Result<SocketAddr> {
    let text = text.trim();
    let with_host = if text.parse::<u16>().is_ok() {
        format!("127.0.0.1:{text}")
    } else {
        text.to_string()
    };
    let addrs: Vec<SocketAddr> = with_host
        .to_socket_addrs()
        .with_context(|| format!("{text:?} is not an address (try 127.0.0.1:8765)"))?
        .collect();
    match addrs.iter().find(|a| a.ip().is_loopback()) {
        Some(addr) if addrs.iter().all(|a| a.ip().is_loopback()) => Ok(*addr),
        _ => bail!(
            "{text:?} is not a loopback address: the review page shows private memory and is served on 127.0.0.1 or [::1] only"
        ),
    }
}

/// What a request gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Page,
    NotFound,
    MethodNotAllowed,
    /// The `Host` header names something other than this loopback server.
    WrongHost,
    BadRequest,
}

/// Routes a request head (request line and headers) for a server listening
/// on loopback port `port`.
pub fn route(head: &str, port: u16) -> Route {
    let mut lines = head.split("\r\n");
    let mut request = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version)) =
        (request.next(), request.next(), request.next())
    else {
        return Route::BadRequest;
    };
    if !version.starts_with("HTTP/1.") {
        return Route::BadRequest;
    }
    let hosts: Vec<&str> = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim())
        .collect();
    let allowed = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    if hosts.len() != 1 || !allowed.iter().any(|a| a.eq_ignore_ascii_case(hosts[0])) {
        return Route::WrongHost;
    }
    if method != "GET" {
        return Route::MethodNotAllowed;
    }
    match target.split(['?', '#']).next() {
        Some("/") | Some("/index.html") => Route::Page,
        _ => Route::NotFound,
    }
}

/// Serves the page from `listener` until `max_requests` requests were
/// answered (forever without): a connection that sends no request head in
/// time (a browser's spare socket, say) is closed and not counted. `page`
/// renders the page for one request.
pub fn serve(
    listener: TcpListener,
    max_requests: Option<u32>,
    mut page: impl FnMut() -> anyhow::Result<String>,
) -> anyhow::Result<()> {
    let port = listener.local_addr()?.port();
    let mut answered = 0u32;
    while max_requests.is_none_or(|max| answered < max) {
        let (stream, _) = match listener.accept() {
            Ok(connection) => connection,
            Err(error) => {
                // Out of descriptors, say: wait instead of spinning.
                eprintln!("memory-harness report: a connection failed: {error}");
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
        };
        match answer(stream, port, &mut page) {
            Ok(true) => answered += 1,
            Ok(false) => {}
            Err(error) => {
                eprintln!("memory-harness report: a request failed: {error:#}");
                answered += 1;
            }
        }
    }
    Ok(())
}

/// Answers one connection; `false` when it sent no request to answer.
fn answer(
    mut stream: TcpStream,
    port: u16,
    page: &mut impl FnMut() -> anyhow::Result<String>,
) -> anyhow::Result<bool> {
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let Some(head) = read_head(&mut stream)? else {
        return Ok(false);
    };
    let (status, body, extra) = match route(&head, port) {
        Route::Page => match page() {
            Ok(html) => ("200 OK", html, ""),
            Err(error) => (
                "503 Service Unavailable",
                message_page(&format!("The report could not be gathered: {error:#}")),
                "Retry-After: 5\r\n",
            ),
        },
        Route::NotFound => ("404 Not Found", message_page("Only / is served here."), ""),
        Route::MethodNotAllowed => (
            "405 Method Not Allowed",
            message_page("Only GET is answered."),
            "Allow: GET\r\n",
        ),
        Route::WrongHost => (
            "421 Misdirected Request",
            message_page(&format!(
                "This server answers only requests for 127.0.0.1:{port}, localhost:{port} or [::1]:{port}."
            )),
            "",
        ),
        Route::BadRequest => ("400 Bad Request", message_page("Not an HTTP/1 request."), ""),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Content-Security-Policy: {CONTENT_SECURITY_POLICY}; frame-ancestors 'none'\r\n\
         X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\n\
         {extra}Connection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body.as_bytes())?;
    stream.flush()?;
    Ok(true)
}

/// Reads the request head (up to the blank line) within `HEAD_DEADLINE`;
/// the body, if any, is not needed. `None` when the client sent nothing
/// before closing or the deadline.
fn read_head(stream: &mut TcpStream) -> anyhow::Result<Option<String>> {
    let deadline = std::time::Instant::now() + HEAD_DEADLINE;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD_BYTES {
            bail!("the request head is over {MAX_HEAD_BYTES} bytes");
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok((!head.is_empty()).then(|| String::from_utf8_lossy(&head).into_owned()))
}

fn message_page(message: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>memory-harness report</title></head><body><p>{}</p></body></html>\n",
        super::html::esc(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(lines: &[&str]) -> String {
        format!("{}\r\n\r\n", lines.join("\r\n"))
    }

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(loopback_addr("127.0.0.1:8765").unwrap().port(), 8765);
        assert!(loopback_addr("[::1]:0").unwrap().ip().is_loopback());
        assert_eq!(loopback_addr("9000").unwrap().to_string(), "127.0.0.1:9000");
        for bad in ["0.0.0.0:8765", "192.168.1.2:80", "[::]:8765", "nonsense"] {
            assert!(loopback_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_page_is_answered_for_its_own_host_only() {
        let ok = head(&["GET / HTTP/1.1", "Host: 127.0.0.1:8765", "Accept: */*"]);
        assert_eq!(route(&ok, 8765), Route::Page);
        assert_eq!(
            route(&head(&["GET /?x=1 HTTP/1.1", "host: localhost:8765"]), 8765),
            Route::Page
        );
        // DNS rebinding: a foreign name pointing at 127.0.0.1.
        assert_eq!(
            route(&head(&["GET / HTTP/1.1", "Host: evil.example:8765"]), 8765),
            Route::WrongHost
        );
        assert_eq!(
            route(&head(&["GET / HTTP/1.1", "Host: 127.0.0.1:9999"]), 8765),
            Route::WrongHost
        );
        assert_eq!(route(&head(&["GET / HTTP/1.1"]), 8765), Route::WrongHost);
        assert_eq!(
            route(
                &head(&[
                    "GET / HTTP/1.1",
                    "Host: 127.0.0.1:8765",
                    "Host: evil.example"
                ]),
                8765
            ),
            Route::WrongHost
        );
    }

    #[test]
    fn other_requests_are_refused() {
        let host = "Host: 127.0.0.1:1";
        assert_eq!(
            route(&head(&["POST / HTTP/1.1", host]), 1),
            Route::MethodNotAllowed
        );
        assert_eq!(
            route(&head(&["GET /../etc/passwd HTTP/1.1", host]), 1),
            Route::NotFound
        );
        assert_eq!(
            route(&head(&["GET /report.json HTTP/1.1", host]), 1),
            Route::NotFound
        );
        assert_eq!(route("garbage", 1), Route::BadRequest);
        assert_eq!(route(&head(&["GET / SPDY/3", host]), 1), Route::BadRequest);
    }
}
