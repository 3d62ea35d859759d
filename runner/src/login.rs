//! `rexbench login` and `rexbench runs download`: signing in to a leaderboard with the
//! key that signs your bundles, and fetching a run's private outputs with the session.
//!
//! The server issues a challenge for the key; the key signs `rexbench-login/v1`, the
//! challenge and the key id, a line each; the server answers with a token for the API
//! (an hour) and a one-time link that signs a browser in. The token is saved (mode
//! 0600) with the server it is for, and commands that talk to that server use it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use bundle::{Digest, SecretKey};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Error;

/// A session as saved: the server it is for, its token and when it expires.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Saved {
    pub server: String,
    pub token: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// The one-time link for a browser (a whole URL).
    pub browser_link: String,
    pub reads_as: String,
}

/// Where a session is saved: `$XDG_CONFIG_HOME/rexbench/session.json`, else
/// `~/.config/rexbench/session.json`.
pub fn default_path() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("rexbench").join("session.json"))
}

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .build()
        .into()
}

/// POSTs `body` to `url`: the answer's JSON, or the server's refusal in its words.
pub(crate) fn post(url: &str, body: &Value) -> Result<Value, Error> {
    let mut response = agent()
        .post(url)
        .content_type("application/json")
        .send(serde_json::to_vec(body).expect("serializes").as_slice())
        .map_err(|e| Error::Reach { url: url.to_owned(), source: e.into() })?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .map_err(|e| Error::Fetch { url: url.to_owned(), reason: format!("reading the answer: {e}") })?;
    let answer: Value = serde_json::from_str(&text)
        .map_err(|e| Error::Answer { url: url.to_owned(), reason: format!("{e}: {text:.200}") })?;
    if (200..300).contains(&status) {
        return Ok(answer);
    }
    let error = &answer["error"];
    Err(Error::Fetch {
        url: url.to_owned(),
        reason: format!(
            "answered {status} {}: {}",
            error["code"].as_str().unwrap_or("error"),
            error["message"].as_str().unwrap_or(&text)
        ),
    })
}

pub(crate) fn field<'a>(url: &str, v: &'a Value, name: &str) -> Result<&'a Value, Error> {
    v.get(name)
        .filter(|f| !f.is_null())
        .ok_or_else(|| Error::Answer { url: url.to_owned(), reason: format!("no `{name}`") })
}

/// Signs in to `server` with `key`: the session, not yet saved.
pub fn login(server: &str, key: &SecretKey) -> Result<Saved, Error> {
    let server = server.trim_end_matches('/');
    let keyid = key.public_key().keyid().to_string();
    let url = format!("{server}/api/v1/login/challenge");
    let challenge = post(&url, &json!({ "keyid": keyid }))?;
    let (message, nonce) = (field(&url, &challenge, "message")?, field(&url, &challenge, "challenge")?);
    let (Some(message), Some(nonce)) = (message.as_str(), nonce.as_str()) else {
        return Err(Error::Answer { url, reason: "`message` and `challenge` are not text".into() });
    };
    // Sign only what this side would have written itself: a server cannot make the key
    // sign anything but a sign-in to it.
    let expected = format!("rexbench-login/v1\n{nonce}\n{keyid}\n");
    if message != expected {
        return Err(Error::Answer {
            url,
            reason: "the message to sign is not a sign-in challenge for this key".into(),
        });
    }
    let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(expected.as_bytes()));
    let url = format!("{server}/api/v1/login");
    let session = post(&url, &json!({ "keyid": keyid, "challenge": nonce, "signature": signature }))?;
    let text = |name: &str| -> Result<String, Error> {
        field(&url, &session, name)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| Error::Answer { url: url.clone(), reason: format!("`{name}` is not text") })
    };
    Ok(Saved {
        server: server.to_owned(),
        token: text("token")?,
        expires_at: field(&url, &session, "expires_at")?.as_i64().unwrap_or_default(),
        browser_link: format!("{server}{}", text("browser_link")?),
        reads_as: text("reads_as")?,
    })
}

/// Writes the session to `path`, readable by its owner only.
pub fn save(saved: &Saved, path: &Path) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(Error::io_at(dir))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|source| Error::Write { path: path.to_owned(), source })?;
    let text = serde_json::to_vec_pretty(saved).expect("serializes");
    file.write_all(&text).map_err(|source| Error::Write { path: path.to_owned(), source })
}

/// The saved session's token for `server`, if one is saved for it and has not expired.
pub fn saved_token(server: &str, path: &Path) -> Option<String> {
    let saved: Saved = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    (saved.server == server.trim_end_matches('/') && saved.expires_at > now).then_some(saved.token)
}

/// Writes each artifact of run `run` into `out/<role>` (a new folder), each checked
/// against the SHA-256 the server lists (the signed manifest's): the files written.
pub fn download(server: &str, token: Option<&str>, run: i64, out: &Path) -> Result<Vec<PathBuf>, Error> {
    let server = server.trim_end_matches('/');
    let get = |url: &str| {
        let request = agent().get(url);
        let request = match token {
            Some(t) => request.header("authorization", &format!("Bearer {t}")),
            None => request,
        };
        request.call().map_err(|e| Error::Reach { url: url.to_owned(), source: e.into() })
    };
    let refusal = |url: &str, status: u16, body: &[u8]| {
        let v: Value = serde_json::from_slice(body).unwrap_or_default();
        Error::Fetch {
            url: url.to_owned(),
            reason: format!(
                "answered {status} {}: {}",
                v["error"]["code"].as_str().unwrap_or("error"),
                v["error"]["message"].as_str().unwrap_or("")
            ),
        }
    };
    let url = format!("{server}/api/v1/runs/{run}");
    let mut answer = get(&url)?;
    let status = answer.status().as_u16();
    let body = answer
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_vec()
        .map_err(|e| Error::Fetch { url: url.clone(), reason: e.to_string() })?;
    if status != 200 {
        return Err(refusal(&url, status, &body));
    }
    let detail: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::Answer { url: url.clone(), reason: e.to_string() })?;
    let artifacts = detail["artifacts"]
        .as_array()
        .ok_or_else(|| Error::Answer { url: url.clone(), reason: "no `artifacts`".into() })?;
    std::fs::create_dir(out).map_err(|source| Error::Write { path: out.to_owned(), source })?;
    let mut written = Vec::new();
    for a in artifacts {
        let (Some(role), Some(digest)) = (a["role"].as_str(), a["digest"].as_str()) else {
            return Err(Error::Answer { url, reason: "an artifact without `role` or `digest`".into() });
        };
        if !bundle::is_slug(role) {
            return Err(Error::Answer { url, reason: format!("artifact role `{role}` is not a name") });
        }
        let artifact_url = format!("{server}/artifacts/{digest}");
        let mut response = get(&artifact_url)?;
        let status = response.status().as_u16();
        let limit = bundle::Limits::default().uncompressed;
        let bytes = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| Error::Fetch { url: artifact_url.clone(), reason: e.to_string() })?;
        if status != 200 {
            return Err(refusal(&artifact_url, status, &bytes));
        }
        let got = Digest::of(&bytes).to_hex();
        if got != digest {
            return Err(Error::Fetch {
                url: artifact_url,
                reason: format!("the bytes hash to {got}, not the signed {digest}"),
            });
        }
        let path = out.join(role);
        std::fs::write(&path, &bytes).map_err(|source| Error::Write { path: path.clone(), source })?;
        written.push(path);
    }
    Ok(written)
}
