//! An OpenAI-compatible embedder over HTTPS, set up as a user would: a
//! configuration file naming the endpoint, its CA in `SSL_CERT_FILE`, the
//! dimensions learnt from the endpoint; and what happens when the CA is not
//! trusted (search goes on, FTS-only, and says why).

#[path = "../src/http/fake.rs"]
#[allow(dead_code)]
mod fake;

use serde_json::{json, Value};
use std::process::{Command, Output};

const DIMENSIONS: usize = 32;

/// Bag-of-words vectors: each word counts in one of 32 buckets.
fn embeddings(body: &str) -> fake::Answer {
    let request: Value = serde_json::from_str(body).unwrap();
    let data: Vec<Value> = request["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let mut vector = vec![0.0f32; DIMENSIONS];
            for word in text
                .as_str()
                .unwrap()
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
            {
                if word.len() > 2 {
                    let bucket = word
                        .bytes()
                        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
                    vector[bucket as usize % DIMENSIONS] += 1.0;
                }
            }
            vector[0] += 0.01;
            json!({"index": index, "embedding": vector})
        })
        .collect();
    fake::Answer::json(200, &json!({"object": "list", "data": data}).to_string())
}

struct Setup {
    dir: tempfile::TempDir,
    server: fake::Server,
    ca_file: std::path::PathBuf,
}

fn setup() -> Setup {
    let (server, ca) = fake::https_with(embeddings);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).unwrap();
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- Dana owns the billing service.\n- The gateway stays on loopback.\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("memory/2026-12-01.md"),
        "- Lunch was pasta.\n- The invoices go out on Fridays.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("memory-harness.toml"),
        format!(
            "[memory.search]\nprovider = \"openai\"\nmodel = \"bucket-embed\"\n\n[memory.search.remote]\nbaseUrl = \"{}\"\napiKeyEnv = \"TEST_EMBED_KEY\"\n",
            server.url
        ),
    )
    .unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem).unwrap();
    Setup {
        dir,
        server,
        ca_file,
    }
}

fn harness(setup: &Setup, trust: bool, args: &[&str]) -> Output {
    harness_with(setup, trust, args, None)
}

/// The harness, with `HTTPS_PROXY` set when `proxy` is given.
fn harness_with(setup: &Setup, trust: bool, args: &[&str], proxy: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memory-harness"));
    command
        .env("TZ", "UTC")
        .env("XDG_CONFIG_HOME", setup.dir.path().join("config"))
        .env("XDG_CACHE_HOME", setup.dir.path().join("cache"))
        .env("TEST_EMBED_KEY", "sk-local")
        .env_remove("SSL_CERT_DIR")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .arg("--config")
        .arg(setup.dir.path().join("memory-harness.toml"))
        .arg("--workspace")
        .arg(setup.dir.path().join("ws"))
        .args(["--now", "2026-12-02"])
        .args(args);
    if let Some(proxy) = proxy {
        command.env("HTTPS_PROXY", proxy);
    }
    if trust {
        command.env("SSL_CERT_FILE", &setup.ca_file);
    } else {
        // A CA file that does not hold the server's: nothing vouches for it.
        command.env("SSL_CERT_FILE", setup.dir.path().join("no-such-ca.pem"));
    }
    command.output().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_https_embedder_trusted_through_ssl_cert_file_makes_search_hybrid() {
    let setup = setup();
    let index = harness(&setup, true, &["index"]);
    assert!(
        index.status.success(),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );
    let first = setup.server.requests.recv().unwrap();
    assert!(
        first
            .to_lowercase()
            .contains("authorization: bearer sk-local"),
        "{first}"
    );
    assert!(first.contains("bucket-embed"), "{first}");
    let result = json_of(&harness(
        &setup,
        true,
        &["--json", "search", "who owns billing?"],
    ));
    assert_eq!(result["mode"], "hybrid", "{result}");
    assert!(result["degraded"].is_null(), "{result}");
    assert_eq!(result["hits"][0]["citation"], "MEMORY.md#L3-L3", "{result}");
    // The dimensions were learnt once and kept.
    let kept = std::fs::read_to_string(
        setup
            .dir
            .path()
            .join("cache/memory-core/embedder-dimensions.json"),
    )
    .unwrap();
    assert!(
        kept.contains(&format!("{} bucket-embed", setup.server.url)),
        "{kept}"
    );
    assert!(kept.contains(&DIMENSIONS.to_string()), "{kept}");
}

#[test]
fn an_untrusted_certificate_leaves_search_lexical_and_says_why() {
    let setup = setup();
    let out = harness(&setup, false, &["--json", "search", "who owns billing?"]);
    let result = json_of(&out);
    assert_eq!(result["mode"], "fts-only", "{result}");
    assert_eq!(result["hits"][0]["citation"], "MEMORY.md#L3-L3", "{result}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("FTS-only") && stderr.to_lowercase().contains("cert"),
        "{stderr}"
    );
}

#[test]
fn an_unset_key_variable_is_refused_by_name() {
    let setup = setup();
    let out = Command::new(env!("CARGO_BIN_EXE_memory-harness"))
        .env_remove("TEST_EMBED_KEY")
        .env("XDG_CONFIG_HOME", setup.dir.path().join("config"))
        .arg("--config")
        .arg(setup.dir.path().join("memory-harness.toml"))
        .arg("--workspace")
        .arg(setup.dir.path().join("ws"))
        .args(["search", "billing"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("TEST_EMBED_KEY"), "{stderr}");
}

#[test]
fn an_endpoint_on_loopback_is_reached_past_the_environment_s_proxy() {
    let setup = setup();
    // A proxy nothing listens on: a request sent through it would fail.
    let proxy = format!("http://127.0.0.1:{}", fake::closed_port());
    let result = json_of(&harness_with(
        &setup,
        true,
        &["--json", "search", "who owns billing?"],
        Some(&proxy),
    ));
    assert_eq!(result["mode"], "hybrid", "{result}");
}
