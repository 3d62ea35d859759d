//! The islands' WebAssembly, embedded at build time (`build.rs`), served under a path
//! that carries its digest, and the Content-Security-Policy that lets exactly Leptos's
//! loader run: `'self'` scripts, WebAssembly compilation, and the SHA-256 of the one
//! inline script `HydrationScripts` writes (a per-response nonce would defeat the
//! cache of pages per URL).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use leptos::prelude::*;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/pkg.rs"));
}

/// What a page needs without any script.
const BASE_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The files every page's islands and `/submit`'s worker load.
const NEEDED: [&str; 5] =
    ["rexbench.js", "rexbench_bg.wasm", "rexbench_verify.js", "rexbench_verify_bg.wasm", "verify-worker.js"];

/// The WebAssembly this server was built with.
#[derive(Debug)]
pub struct Pkg {
    /// `pkg/<digest>`: where pages load it from.
    pub dir: String,
    /// The policy pages are served with.
    pub policy: String,
    files: BTreeMap<&'static str, &'static [u8]>,
}

impl Pkg {
    /// The embedded files, if the build had them all; `None` (interactivity off) else.
    pub fn embedded() -> Option<Pkg> {
        Pkg::from_files(embedded::FILES)
    }

    fn from_files(files: &'static [(&'static str, &'static [u8])]) -> Option<Pkg> {
        let files: BTreeMap<_, _> = files.iter().copied().collect();
        if !NEEDED.iter().all(|f| files.contains_key(f)) {
            return None;
        }
        let mut digest = bundle::Hasher::default();
        for (name, bytes) in &files {
            digest.update(name.as_bytes());
            digest.update(bytes);
        }
        let dir = format!("pkg/{}", &digest.finish().to_hex()[..16]);
        let policy = policy_for(&inline_scripts(&dir));
        Some(Pkg { dir, policy, files })
    }
}

/// The policy without islands: no script at all.
pub fn base_policy() -> &'static str {
    BASE_POLICY
}

/// The text of each inline script the loader writes into a page, as a browser hashes it.
pub fn inline_scripts(dir: &str) -> Vec<String> {
    let owner = Owner::new();
    let html = owner.with(|| app::hydration_scripts(dir.to_owned()).to_html());
    let mut scripts = Vec::new();
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else { break };
        let Some(close) = after.find("</script>") else { break };
        if !after[..open_end].contains(" src=") {
            scripts.push(after[open_end + 1..close].to_owned());
        }
        rest = &after[close + "</script>".len()..];
    }
    scripts
}

/// A policy allowing this site's scripts, WebAssembly, and the given inline scripts.
pub fn policy_for(inline: &[String]) -> String {
    let hashes: String = inline
        .iter()
        .map(|s| {
            let digest = bundle::Digest::of(s.as_bytes());
            format!(" 'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest.as_bytes()))
        })
        .collect();
    format!(
        "{BASE_POLICY}; script-src 'self' 'wasm-unsafe-eval'{hashes}; connect-src 'self'; worker-src 'self'"
    )
}

const FOREVER: &str = "public, max-age=31536000, immutable";

/// `/pkg/{version}/{file}`: a file of this build's WebAssembly, precompressed where the
/// browser takes it. Another version's path is a 404: pages name the version they need.
pub(crate) async fn serve(
    State(pkg): State<Option<std::sync::Arc<Pkg>>>,
    Path((version, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let Some(pkg) = pkg.filter(|p| p.dir == format!("pkg/{version}")) else {
        return (StatusCode::NOT_FOUND, "no such file: this server serves another version of its scripts\n")
            .into_response();
    };
    let Some(body) = pkg.files.get(file.as_str()) else {
        return (StatusCode::NOT_FOUND, "no such file\n").into_response();
    };
    let kind = if file.ends_with(".wasm") { "application/wasm" } else { "text/javascript; charset=utf-8" };
    let accepts = |coding: &str| {
        headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.split(';').next().is_some_and(|t| t.trim() == coding)))
    };
    for (coding, suffix) in [("br", ".br"), ("gzip", ".gz")] {
        if accepts(coding)
            && let Some(packed) = pkg.files.get(format!("{file}{suffix}").as_str())
        {
            return (
                [
                    (header::CONTENT_TYPE, kind),
                    (header::CONTENT_ENCODING, coding),
                    (header::CACHE_CONTROL, FOREVER),
                    (header::VARY, "accept-encoding"),
                ],
                *packed,
            )
                .into_response();
        }
    }
    (
        [(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, FOREVER), (header::VARY, "accept-encoding")],
        *body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loader_is_one_inline_script_and_the_policy_names_its_hash() {
        let scripts = inline_scripts("pkg/0123456789abcdef");
        assert_eq!(scripts.len(), 1, "Leptos's islands loader: {scripts:?}");
        assert!(scripts[0].contains("pkg/0123456789abcdef"), "{}", scripts[0]);
        let policy = policy_for(&scripts);
        assert!(policy.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-"), "{policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
    }

    #[test]
    fn without_every_file_there_are_no_islands() {
        static SOME: [(&str, &[u8]); 1] = [("rexbench.js", b"x")];
        assert!(Pkg::from_files(&SOME).is_none());
    }
}
